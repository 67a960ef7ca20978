package connect

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// workerProcess is a `strata connect worker` subprocess.
type workerProcess struct {
	cmd  *exec.Cmd
	url  string
	id   string
	done chan struct{}
	log  string
}

// startWorkerProcess runs `strata connect worker` (the binary brokertest
// builds) and waits until its REST API answers. The properties go on the
// command line as --set, or with asFile in a --config file.
func startWorkerProcess(t *testing.T, brokers string, props map[string]string, asFile bool) *workerProcess {
	t.Helper()
	addr := brokertest.FreeAddr(t)
	args := []string{"connect", "worker", "--brokers", brokers, "--rest-listen", addr}
	var file strings.Builder
	for k, v := range props {
		if k == "bootstrap.servers" || k == "rest.listen" {
			continue
		}
		if asFile {
			fmt.Fprintf(&file, "%s=%s\n", k, v)
		} else {
			args = append(args, "--set", k+"="+v)
		}
	}
	if asFile {
		path := filepath.Join(t.TempDir(), "worker.properties")
		if err := os.WriteFile(path, []byte("# connect-distributed.properties style\n"+file.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(brokertest.Binary(t), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProcess{cmd: cmd, url: "http://" + addr, id: addr, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			s := string(data)
			if len(s) > 6000 {
				s = s[len(s)-6000:]
			}
			t.Logf("worker %s log:\n%s", addr, s)
		}
	})
	client := &http.Client{Timeout: time.Second}
	waitFor(t, 60*time.Second, "worker "+addr+" REST", func() (bool, string) {
		select {
		case <-p.done:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("worker exited during startup:\n%s", data)
		default:
		}
		resp, err := client.Get(p.url + "/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return p
}

// kill ends the process with SIGKILL, as a crash would: no LeaveGroup, no
// final offset flush.
func (p *workerProcess) kill(t *testing.T) {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("SIGKILL pid %d: %v", p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("worker pid %d alive after SIGKILL", p.cmd.Process.Pid)
	}
}

// TestWorkerKilledTasksMoveToSurvivor runs two worker processes sharing a
// file-source and a file-sink, SIGKILLs the one running the source task,
// and checks that the survivor takes every unit over within the session
// timeout and continues from the stored offsets: no line is produced twice
// (the offsets were flushed before the kill) and no line is lost.
func TestWorkerKilledTasksMoveToSurvivor(t *testing.T) {
	b := startBroker(t)
	props := testWorkerProps(b.Addr)
	w1 := startWorkerProcess(t, b.Addr, props, false)
	w2 := startWorkerProcess(t, b.Addr, props, true)
	workers := map[string]*workerProcess{w1.id: w1, w2.id: w2}

	dir := t.TempDir()
	input, output := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	appendLines(t, input, 1, 50)
	restJSON(t, "POST", w1.url+"/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": input, "topic": "lines",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter"}}, 201, nil)
	// Created through the other worker: any worker accepts writes.
	restJSON(t, "POST", w2.url+"/connectors", map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": output, "topics": "lines",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter"}}, 201, nil)

	started := time.Now()
	// Four units over two workers: each ends up running two. (A unit that
	// moved shows its previous owner until the new one reports, so wait.)
	var src, sink connectorStatus
	waitFor(t, 30*time.Second, "units shared evenly", func() (bool, string) {
		src = waitState(t, w1.url, "src", StateRunning, 1)
		sink = waitState(t, w2.url, "sink", StateRunning, 1)
		owners := map[string]int{}
		for _, id := range []string{src.Connector.WorkerID, src.Tasks[0].WorkerID, sink.Connector.WorkerID, sink.Tasks[0].WorkerID} {
			if workers[id] == nil {
				t.Fatalf("unknown worker id %q", id)
			}
			owners[id]++
		}
		return owners[w1.id] == 2 && owners[w2.id] == 2, fmt.Sprint(owners)
	})
	t.Logf("units shared evenly %s after start", time.Since(started).Round(100*time.Millisecond))
	// The sink is at-least-once: a sink task that moved while the units
	// were being shared may write a line again, so wait for the set.
	waitFor(t, 30*time.Second, "first 50 lines in the sink", func() (bool, string) {
		return linesUpTo(fileLines(t, output), 50)
	})
	t.Logf("first 50 lines in the sink %s after start", time.Since(started).Round(100*time.Millisecond))
	var offs offsetsBody
	waitFor(t, 20*time.Second, "source offset flushed", func() (bool, string) {
		restJSON(t, "GET", w1.url+"/connectors/src/offsets", nil, 200, &offs)
		size, _ := os.Stat(input)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["position"] == float64(size.Size()), string(mustJSON(offs))
	})

	victim := workers[src.Tasks[0].WorkerID]
	survivor := w1
	if victim == w1 {
		survivor = w2
	}
	killedAt := time.Now()
	victim.kill(t)
	appendLines(t, input, 51, 100)

	moved := waitState(t, survivor.url, "src", StateRunning, 1)
	for moved.Tasks[0].WorkerID != survivor.id || moved.Connector.WorkerID != survivor.id {
		moved = waitState(t, survivor.url, "src", StateRunning, 1)
		if time.Since(killedAt) > 30*time.Second {
			t.Fatalf("src not on the survivor: %+v", moved)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("source task moved to the survivor %s after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	waitFor(t, 30*time.Second, "sink on the survivor", func() (bool, string) {
		var s connectorStatus
		restJSON(t, "GET", survivor.url+"/connectors/sink/status", nil, 200, &s)
		return s.Connector.WorkerID == survivor.id && len(s.Tasks) == 1 && s.Tasks[0].WorkerID == survivor.id && s.Tasks[0].State == StateRunning, string(mustJSON(s))
	})

	// The topic has every line exactly once: the survivor resumed at the
	// stored byte position, not at the start of the file.
	recs := readTopic(t, b.Addr, "lines", 100)
	if len(recs) != 100 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if want := "line-" + strconv.Itoa(i+1); string(r.Value) != want {
			t.Fatalf("record %d is %q, want %q", i, r.Value, want)
		}
	}
	waitFor(t, 30*time.Second, "all 100 lines in the sink", func() (bool, string) {
		return linesUpTo(fileLines(t, output), 100)
	})
	lines := fileLines(t, output)
	if lines[len(lines)-1] != "line-100" || !strings.HasPrefix(lines[0], "line-1") {
		t.Fatalf("sink order: first %q last %q", lines[0], lines[len(lines)-1])
	}
}

// linesUpTo reports whether lines holds exactly line-1 … line-n, each at
// least once (the sink is at-least-once), and what is missing if not.
func linesUpTo(lines []string, n int) (bool, string) {
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for i := 1; i <= n; i++ {
		if !seen["line-"+strconv.Itoa(i)] {
			return false, strconv.Itoa(len(lines)) + " lines, missing line-" + strconv.Itoa(i)
		}
	}
	return len(seen) == n, strconv.Itoa(len(seen)) + " distinct lines"
}
