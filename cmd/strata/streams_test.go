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

	"github.com/spf13/pflag"
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
		// JOB GROUP STATE MEMBERS LAG IN OUT ERRORS RESTARTS
		if len(fields) == 9 && fields[0] == "cli-orders" && fields[2] == "Stable" && fields[3] == "1" &&
			fields[4] == "0" && fields[5] == "400" && fields[6] == "198" && fields[7] == "0" && fields[8] == "0" {
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

// TestStreamsInstanceIDUniquePerNode: nodes sharing a listen address (and
// so a transactional id prefix) get distinct instance ids from their node
// ids and advertised addresses; one node's id is stable.
func TestStreamsInstanceIDUniquePerNode(t *testing.T) {
	flags := func(args ...string) *pflag.FlagSet {
		f := pflag.NewFlagSet("server", pflag.ContinueOnError)
		f.Int32("node-id", 1, "")
		f.String("listen", "127.0.0.1:9092", "")
		f.String("advertise", "", "")
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := streamsInstanceID(flags("--node-id", "1", "--listen", "0.0.0.0:9092"))
	b := streamsInstanceID(flags("--node-id", "2", "--listen", "0.0.0.0:9092"))
	if a == b {
		t.Fatalf("nodes 1 and 2 with one listen address share instance id %q", a)
	}
	if again := streamsInstanceID(flags("--node-id", "1", "--listen", "0.0.0.0:9092")); again != a {
		t.Fatalf("instance id not stable: %q then %q", a, again)
	}
	c := streamsInstanceID(flags("--listen", "0.0.0.0:9092", "--advertise", "host-a.example:9092"))
	d := streamsInstanceID(flags("--listen", "0.0.0.0:9092", "--advertise", "host-b.example:9092"))
	if c == d || c != "node-1-host-a.example_9092" {
		t.Fatalf("advertised addresses: %q and %q, want node-1-host-a.example_9092 and a different one", c, d)
	}
	if host, _ := os.Hostname(); host != "" && !strings.Contains(a, "-"+strings.Map(func(r rune) rune {
		if r == ':' {
			return '_'
		}
		return r
	}, host)) {
		t.Fatalf("unspecified listen host: id %q lacks host name %q", a, host)
	}
	if v6 := streamsInstanceID(flags("--node-id", "7", "--listen", "[::1]:9092")); v6 != "node-7-__1_9092" {
		t.Fatalf("IPv6 listen: %q", v6)
	}
}

// TestStreamsMetricsParserOddLines: malformed exposition lines are
// skipped, never a panic.
func TestStreamsMetricsParserOddLines(t *testing.T) {
	in := strings.Join([]string{
		`strata_stream_records_in_total{job="a"} `,
		`strata_stream_records_in_total{job="a"}`,
		`strata_stream_records_in_total{job="a"} x`,
		`strata_stream_records_in_total{job=a} 3`,
		`strata_stream_records_in_total{`,
		`strata_stream_records_in_total{} 4`,
		`strata_stream_records_in_total{job="a"} 5 1700000000000`,
		`strata_stream_records_in_total{job="a"} 2`,
		`strata_stream_`,
	}, "\n")
	counts := map[string]map[string]float64{}
	if err := parseStreamMetrics(strings.NewReader(in), counts); err != nil {
		t.Fatal(err)
	}
	if got := counts["a"]["strata_stream_records_in_total"]; got != 7 || len(counts) != 1 {
		t.Fatalf("counts %v, want a: 7", counts)
	}
}

// TestStreamsServerRestartsFailedJob: a server job stopped by an error (a
// bad record in fail mode) is run again after a delay, and the restarts
// show in its metrics.
func TestStreamsServerRestartsFailedJob(t *testing.T) {
	dir := t.TempDir()
	writeStreamsJob(t, dir, "fail.yaml", `name: cli-fail
input: {topics: [cli-fail-in]}
pipeline:
  - filter: value.amount > 1
output: {topic: cli-fail-out}
`)
	metricsAddr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--jobs-dir", dir, "--jobs-metrics-listen", metricsAddr,
		"--set", "group.initial.rebalance.delay.ms=0")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.DefaultProduceTopic("cli-fail-in"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var counts map[string]map[string]float64
	for ctx.Err() == nil {
		counts = map[string]map[string]float64{}
		err := scrapeStreamMetrics(ctx, "http://"+metricsAddr+"/metrics", counts)
		if err == nil && counts["cli-fail"]["strata_stream_restarts_total"] >= 2 {
			if f := counts["cli-fail"]["strata_stream_records_in_total"]; f < 1 {
				t.Fatalf("restarted without processing: %v", counts)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no restarts after 30s: %v", counts)
}

const streamsStatefulJob = `name: cli-counts
input: {topics: [cli-orders]}
pipeline:
  - group_by: value.customer
  - aggregate: {orders: count, total: {sum: value.amount}}
output: {topic: cli-big-orders}
guarantee: exactly_once
commit_interval: 200ms
`

// checkStatefulRun checks the counts per customer of streamsStatefulJob
// over streamsProduceOrders(60) and that its store lives under stateDir.
func checkStatefulRun(t *testing.T, addr, stateDir string) {
	t.Helper()
	out := streamsAwaitOutput(t, addr, 60) // one update per order
	last := map[string]string{}
	for _, r := range out {
		last[string(r.Key)] = string(r.Value)
	}
	want := map[string]string{"c0": `{"orders":20,"total":570}`, "c1": `{"orders":20,"total":590}`, "c2": `{"orders":20,"total":610}`}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("customer %s: last update %s, want %s", k, last[k], v)
		}
	}
	if stores, _ := filepath.Glob(filepath.Join(stateDir, "cli-counts", "aggregate-*")); len(stores) == 0 {
		t.Errorf("no aggregate store under %s", stateDir)
	}
}

// TestServerRunsStatefulJob: a --jobs-dir job with group_by and aggregate
// keeps its stores under --jobs-state-dir.
func TestServerRunsStatefulJob(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	writeStreamsJob(t, dir, "counts.yaml", streamsStatefulJob)
	b := brokertest.Start(t, "--jobs-dir", dir, "--jobs-state-dir", stateDir, "--set", "group.initial.rebalance.delay.ms=0")
	createStreamsTopics(t, b.Addr)
	streamsProduceOrders(t, b.Addr, 60)
	checkStatefulRun(t, b.Addr, stateDir)
}

// TestStreamsRunStatefulJob: `strata streams run --state-dir` keeps the
// job's stores there.
func TestStreamsRunStatefulJob(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createStreamsTopics(t, b.Addr)
	stateDir := t.TempDir()
	job := writeStreamsJob(t, t.TempDir(), "job.yaml", streamsStatefulJob)
	cmd := exec.Command(brokertest.Binary(t), "streams", "run", job, "--brokers", b.Addr, "--state-dir", stateDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("streams run stderr:\n%s", stderr.String())
		}
	})
	streamsProduceOrders(t, b.Addr, 60)
	checkStatefulRun(t, b.Addr, stateDir)
}

// TestStreamsStateDirPerNode: without --jobs-state-dir, each node's jobs
// keep their stores in a directory of their own.
func TestStreamsStateDirPerNode(t *testing.T) {
	f := pflag.NewFlagSet("server", pflag.ContinueOnError)
	streamsAddonFlags(f)
	a, b := streamsStateDir(f, "node-1-h_9092"), streamsStateDir(f, "node-2-h_9092")
	if a == b || filepath.Base(a) != "node-1-h_9092" {
		t.Fatalf("nodes 1 and 2 share state directory %q, %q", a, b)
	}
	if err := f.Parse([]string{"--jobs-state-dir", "/var/lib/strata/jobs"}); err != nil {
		t.Fatal(err)
	}
	if got := streamsStateDir(f, "node-1-h_9092"); got != "/var/lib/strata/jobs" {
		t.Fatalf("--jobs-state-dir: %q", got)
	}
}
