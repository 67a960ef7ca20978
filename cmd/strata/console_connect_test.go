package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// consoleDo sends method url with a JSON body and the console's CSRF
// header, decodes the answer into out and returns the status.
func consoleDo(t *testing.T, method, url string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Strata-Console", "1")
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, data)
		}
	}
	return resp.StatusCode
}

type consoleConnectors struct {
	Configured bool
	URL        string
	Connectors []struct {
		Name, Type, Class, State string
		Tasks                    []struct {
			ID    int
			State string
		}
	}
}

// TestConsoleConnectorsAndJobs: `strata server` with its embedded Connect
// worker and --jobs-dir; the console lists a file source connector created
// through the Connect REST API with its task, pauses and resumes it (seen
// by the REST API), refuses unknown connectors and actions, and lists the
// stream job with its group state and counters.
func TestConsoleConnectorsAndJobs(t *testing.T) {
	restAddr := brokertest.FreeAddr(t)
	jobs := t.TempDir()
	writeStreamsJob(t, jobs, "orders.yaml", fmt.Sprintf(streamsTestJob, "at_least_once"))
	b := brokertest.Start(t, "--set", "connect.enable=true", "--set", "connect.rest.listen="+restAddr,
		"--set", "connect.group.id=console-test", "--set", "connect.offset.storage.partitions=3",
		"--set", "connect.heartbeat.interval.ms=300", "--set", "group.initial.rebalance.delay.ms=0",
		"--jobs-dir", jobs)
	api := "http://" + b.HTTPAddr + "/api/v1"
	rest := "http://" + restAddr

	// The embedded worker starts after the broker serves and then names
	// itself to the console: until then the page says "not configured".
	var list consoleConnectors
	brokertest.WaitFor(t, 30*time.Second, "the console naming the embedded worker", func() bool {
		list = consoleConnectors{}
		return consoleDo(t, "GET", api+"/connect", nil, &list) == 200 && list.Configured
	})
	if list.URL != rest || len(list.Connectors) != 0 {
		t.Fatalf("connectors before any: %+v (want none, at the embedded worker %s)", list, rest)
	}
	input := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(input, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := map[string]any{"name": "files", "config": map[string]string{"connector.class": "FileStreamSource", "file": input, "topic": "console-lines"}}
	if code := consoleDo(t, "POST", rest+"/connectors", def, nil); code != 201 {
		t.Fatalf("create through the REST API: %d", code)
	}
	waitConnector := func(state string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			list = consoleConnectors{}
			consoleDo(t, "GET", api+"/connect", nil, &list)
			if len(list.Connectors) == 1 && list.Connectors[0].State == state && len(list.Connectors[0].Tasks) == 1 && list.Connectors[0].Tasks[0].State == state {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("connector never %s in the console: %+v", state, list)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitConnector("RUNNING")
	if c := list.Connectors[0]; c.Name != "files" || c.Type != "source" || c.Class != "FileStreamSource" {
		t.Fatalf("connector: %+v", c)
	}
	if code := consoleDo(t, "POST", api+"/connect/files/pause", nil, nil); code != 204 {
		t.Fatalf("pause: %d", code)
	}
	waitConnector("PAUSED")
	var st struct{ Connector struct{ State string } }
	consoleDo(t, "GET", rest+"/connectors/files/status", nil, &st)
	if st.Connector.State != "PAUSED" {
		t.Fatalf("REST status after the console's pause: %+v", st)
	}
	if code := consoleDo(t, "POST", api+"/connect/files/resume", nil, nil); code != 204 {
		t.Fatalf("resume: %d", code)
	}
	waitConnector("RUNNING")
	if code := consoleDo(t, "POST", api+"/connect/files/restart?includeTasks=true", nil, nil); code != 204 {
		t.Fatalf("restart: %d", code)
	}
	if code := consoleDo(t, "POST", api+"/connect/files/tasks/0/restart", nil, nil); code != 204 {
		t.Fatalf("task restart: %d", code)
	}
	var e struct{ Error string }
	for _, c := range []struct {
		path   string
		status int
		has    string
	}{
		{"/connect/nope/pause", 404, "nope"},
		{"/connect/files/explode", 404, "no such action"},
		{"/connect/files/restart?onlyFailed=maybe", 400, "onlyFailed"},
		{"/connect/files/tasks/x/restart", 400, "task"},
		{"/connect/files/tasks/7/restart", 404, "7"},
	} {
		e.Error = ""
		if code := consoleDo(t, "POST", api+c.path, nil, &e); code != c.status || !strings.Contains(e.Error, c.has) {
			t.Fatalf("POST %s: %d %q; want %d containing %q", c.path, code, e.Error, c.status, c.has)
		}
	}

	// The stream job of --jobs-dir, with its group state and counters.
	createStreamsTopics(t, b.Addr)
	streamsProduceOrders(t, b.Addr, 40)
	var jobsOut struct {
		Source string
		Jobs   []struct {
			Name, ApplicationID, State string
			Members                    int
			Lag                        int64
			RecordsIn                  *int64
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		consoleDo(t, "GET", api+"/streams", nil, &jobsOut)
		if len(jobsOut.Jobs) == 1 && jobsOut.Jobs[0].State == "Stable" && jobsOut.Jobs[0].RecordsIn != nil && *jobsOut.Jobs[0].RecordsIn == 40 && jobsOut.Jobs[0].Lag == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream jobs in the console: %+v", jobsOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if j := jobsOut.Jobs[0]; jobsOut.Source != "jobs-dir" || j.Name != "cli-orders" || j.Members != 1 {
		t.Fatalf("stream job: %s %+v", jobsOut.Source, j)
	}
}

// TestConsoleWithoutConnect: with no worker configured the connectors
// page's API says so (not an error), and actions are 404.
func TestConsoleWithoutConnect(t *testing.T) {
	b := brokertest.Start(t)
	var list consoleConnectors
	if code := consoleDo(t, "GET", "http://"+b.HTTPAddr+"/api/v1/connect", nil, &list); code != 200 || list.Configured {
		t.Fatalf("connectors without a worker: %d %+v", code, list)
	}
	var e struct{ Error string }
	if code := consoleDo(t, "POST", "http://"+b.HTTPAddr+"/api/v1/connect/files/pause", nil, &e); code != 404 || !strings.Contains(e.Error, "console.connect.url") {
		t.Fatalf("pause without a worker: %d %q", code, e.Error)
	}
}
