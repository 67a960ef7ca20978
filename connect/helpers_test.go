package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// startBroker runs a real strata server whose group timeouts allow the
// short sessions these tests use.
func startBroker(t testing.TB) *brokertest.Broker {
	t.Helper()
	return brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0", "--set", "group.min.session.timeout.ms=500")
}

// testWorkerProps are worker settings that make rebalances and offset
// flushes quick.
func testWorkerProps(brokers string, extra ...string) map[string]string {
	props := map[string]string{
		"bootstrap.servers":             brokers,
		"rest.listen":                   "127.0.0.1:0",
		"session.timeout.ms":            "3000",
		"heartbeat.interval.ms":         "300",
		"rebalance.timeout.ms":          "10000",
		"offset.flush.interval.ms":      "300",
		"offset.storage.partitions":     "5",
		"status.storage.partitions":     "2",
		"consumer.max.poll.interval.ms": "10000",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	return props
}

// startWorker runs an in-process worker; the test's cleanup closes it.
func startWorker(t testing.TB, props map[string]string) *Worker {
	t.Helper()
	cfg, err := NewWorkerConfig(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// rest calls the REST API and returns the status and body.
func rest(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// restJSON is rest that checks the status and decodes the body.
func restJSON(t *testing.T, method, url string, body any, wantStatus int, out any) {
	t.Helper()
	status, data := rest(t, method, url, body)
	if status != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, url, status, wantStatus, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
}

// statusOK waits until a connector and all its tasks (at least minTasks)
// are in state.
func waitState(t *testing.T, base, name, state string, minTasks int) connectorStatus {
	t.Helper()
	var s connectorStatus
	waitFor(t, 30*time.Second, name+" "+state, func() (bool, string) {
		code, data := rest(t, "GET", base+"/connectors/"+name+"/status", nil)
		if code != 200 {
			return false, string(data)
		}
		s = connectorStatus{}
		if err := json.Unmarshal(data, &s); err != nil {
			return false, err.Error()
		}
		if s.Connector.State != state || len(s.Tasks) < minTasks {
			return false, string(data)
		}
		for _, ts := range s.Tasks {
			if ts.State != state {
				return false, string(data)
			}
		}
		return true, ""
	})
	return s
}

// readTopic consumes a topic from the start until want records arrived
// (read_committed), or fails after the timeout.
func readTopic(t *testing.T, brokers, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: %d of %d records after 30s", topic, len(out), want)
		}
		out = append(out, fetches.Records()...)
	}
	return out
}

// appendLines appends line-<from>…line-<to> to a file.
func appendLines(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i <= to; i++ {
		fmt.Fprintf(f, "line-%d\n", i)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// fileLines reads a file's lines (none when missing).
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimRight(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
