package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
)

const streamsTestJob = `name: cli-orders
input: {topics: [cli-orders]}
pipeline:
  - filter: value.amount > 100
  - map: '{"id": value.id, "customer": upper(value.customer)}'
  - key: value.customer
output: {topic: cli-big-orders}
guarantee: %s
commit_interval: 200ms
`

func writeStreamsJob(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// streamsBinary runs the strata binary and returns stdout, stderr and the
// exit code.
func streamsBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(brokertest.Binary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestStreamsValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeStreamsJob(t, dir, "good.yaml", fmt.Sprintf(streamsTestJob, "exactly_once"))
	bad := writeStreamsJob(t, dir, "bad.yaml", strings.Replace(fmt.Sprintf(streamsTestJob, "at_least_once"), "value.amount > 100", "value.amount >", 1))

	out, errOut, code := streamsBinary(t, "streams", "validate", good)
	if code != 0 || !strings.Contains(out, "ok (job cli-orders, 3 steps, exactly_once_v2)") {
		t.Fatalf("validate good: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = streamsBinary(t, "streams", "validate", bad)
	if code == 0 {
		t.Fatalf("validate bad: exit 0, stdout %q", out)
	}
	line := strings.TrimSpace(errOut)
	if strings.Count(line, "\n") != 0 || !strings.HasPrefix(line, "strata: ") ||
		!strings.Contains(line, "pipeline step 1 (filter)") || !strings.Contains(line, "line 4") {
		t.Fatalf("validate bad: stderr %q, want one line naming step 1 (filter) and line 4", errOut)
	}
}

func streamsProduceOrders(t *testing.T, addr string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("cli-orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		v := fmt.Appendf(nil, `{"id": %d, "amount": %d, "customer": "c%d"}`, i, i%200, i%3)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// streamsAwaitOutput reads cli-big-orders (read_committed) until want
// records arrived.
func streamsAwaitOutput(t *testing.T, addr string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("cli-big-orders"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	deadline := time.Now().Add(45 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
		cancel()
	}
	if len(out) != want {
		t.Fatalf("output: %d records, want %d", len(out), want)
	}
	return out
}

func createStreamsTopics(t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resps, err := kadm.NewClient(cl).CreateTopics(ctx, 2, 1, nil, "cli-orders", "cli-big-orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resps {
		// A job already running may have had the brokers auto-create
		// its topics (auto.create.topics.enable).
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			t.Fatal(r.Err)
		}
	}
}

// TestServerRunsJobsDir: `strata server --jobs-dir` runs the directory's
// jobs inside the node; `strata streams status` lists them with the group
// state and lag from the broker and the counters from the jobs' metrics.
func TestServerRunsJobsDir(t *testing.T) {
	dir := t.TempDir()
	writeStreamsJob(t, dir, "orders.yaml", fmt.Sprintf(streamsTestJob, "exactly_once"))
	metricsAddr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--jobs-dir", dir, "--jobs-metrics-listen", metricsAddr,
		"--set", "group.initial.rebalance.delay.ms=0")
	createStreamsTopics(t, b.Addr)
	streamsProduceOrders(t, b.Addr, 400)
	out := streamsAwaitOutput(t, b.Addr, 198) // amounts 101..199 twice
	for _, r := range out {
		if !strings.HasPrefix(string(r.Key), "C") || !strings.Contains(string(r.Value), `"customer":"`+string(r.Key)+`"`) {
			t.Fatalf("record %s=%s", r.Key, r.Value)
		}
	}
	var status string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		stdout, stderr, code := streamsBinary(t, "streams", "status", "--brokers", b.Addr, "--jobs-dir", dir,
			"--metrics", "http://"+metricsAddr+"/metrics")
		if code != 0 {
			t.Fatalf("status: exit %d: %s", code, stderr)
		}
		status = stdout
		fields := strings.Fields(strings.Split(strings.TrimSpace(stdout), "\n")[1])
		// JOB GROUP STATE MEMBERS LAG IN OUT ERRORS
		if len(fields) == 8 && fields[0] == "cli-orders" && fields[2] == "Stable" && fields[3] == "1" &&
			fields[4] == "0" && fields[5] == "400" && fields[6] == "198" && fields[7] == "0" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("status never showed the finished job:\n%s", status)
}

func TestServerRejectsBadJob(t *testing.T) {
	dir := t.TempDir()
	writeStreamsJob(t, dir, "bad.yml", strings.Replace(fmt.Sprintf(streamsTestJob, "exactly_once"), "upper(", "nosuch(", 1))
	_, stderr, code := streamsBinary(t, "server", "--jobs-dir", dir, "--data-dir", t.TempDir(),
		"--listen", brokertest.FreeAddr(t), "--http-listen", brokertest.FreeAddr(t))
	if code == 0 || !strings.Contains(stderr, "bad.yml") || !strings.Contains(stderr, "pipeline step 2 (map)") {
		t.Fatalf("server with a bad job: exit %d, stderr %q", code, stderr)
	}
}

// TestStreamsRunUntilSIGTERM runs `strata streams run` as its own process
// and stops it with SIGTERM: it exits 0 after processing the input.
func TestStreamsRunUntilSIGTERM(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createStreamsTopics(t, b.Addr)
	job := writeStreamsJob(t, t.TempDir(), "job.yaml", fmt.Sprintf(streamsTestJob, "at_least_once"))
	cmd := exec.Command(brokertest.Binary(t), "streams", "run", job, "--brokers", b.Addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		}
	})
	streamsProduceOrders(t, b.Addr, 200)
	streamsAwaitOutput(t, b.Addr, 99)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("streams run: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("streams run did not exit after SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "stream job stopped") {
		t.Errorf("stderr lacks the stop line:\n%s", stderr.String())
	}
}
