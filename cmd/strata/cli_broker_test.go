package main

// CLI tests against a real in-process Strata broker: every command runs
// in-process through cobra (newTestRoot) and talks Kafka over loopback.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker"
	"github.com/strata-streaming/strata/internal/brokertest"
)

// startBroker runs a single-node broker on a loopback port for the test and
// returns its address. mutate, if given, adjusts the config first.
func startBroker(t *testing.T, mutate func(*broker.Config)) string {
	t.Helper()
	return startBrokerServer(t, mutate).Addr()
}

// startBrokerServer is startBroker returning the server, for its other
// addresses.
func startBrokerServer(t *testing.T, mutate func(*broker.Config)) *broker.Server {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.HTTPListen = ""
	cfg.GroupInitialRebalanceDelayMs = 0 // groups form at once in tests
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := broker.NewServer(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("new broker: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// cli runs the CLI against addr and fails the test on error.
func cli(t *testing.T, addr, stdin string, args ...string) string {
	t.Helper()
	res := runCLI(t, time.Minute, stdin, append([]string{"-b", addr, "--timeout", "10s"}, args...)...)
	if res.err != nil {
		t.Fatalf("strata %s: %v\nstderr: %s", strings.Join(args, " "), res.err, res.stderr)
	}
	return res.stdout
}

// cliErr runs the CLI against addr and returns its error, failing the test
// if there is none.
func cliErr(t *testing.T, addr, stdin string, args ...string) error {
	t.Helper()
	res := runCLI(t, time.Minute, stdin, append([]string{"-b", addr, "--timeout", "10s"}, args...)...)
	if res.err == nil {
		t.Fatalf("strata %s: no error; stdout %q", strings.Join(args, " "), res.stdout)
	}
	return res.err
}

func TestTopicCommands(t *testing.T) {
	addr := startBroker(t, nil)

	out := cli(t, addr, "", "topic", "create", "orders", "--partitions", "3", "--replication-factor", "1",
		"-c", "retention.ms=3600000")
	if !strings.Contains(out, "created topic orders (partitions: 3, replication factor: 1)") {
		t.Errorf("create output = %q", out)
	}
	err := cliErr(t, addr, "", "topic", "create", "orders")
	if !strings.Contains(err.Error(), `topic "orders": TOPIC_ALREADY_EXISTS`) {
		t.Errorf("second create error = %q", err)
	}
	cli(t, addr, "", "topic", "create", "payments") // broker defaults

	out = cli(t, addr, "", "topic", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TOPIC") ||
		!regexp.MustCompile(`^orders\s+3\s+1$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^payments\s+1\s+1$`).MatchString(lines[2]) {
		t.Errorf("list output:\n%s", out)
	}

	out = cli(t, addr, "", "topic", "describe", "orders")
	for _, want := range []string{"Topic: orders\n", "Partitions: 3  Replication-factor: 1", "retention.ms=3600000"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^ID: [A-Za-z0-9_-]{22}$`).MatchString(out) {
		t.Errorf("describe shows no topic id:\n%s", out)
	}
	for p := 0; p < 3; p++ {
		row := regexp.MustCompile(`(?m)^` + string(rune('0'+p)) + `\s+\d+\s+\d+\s+\d+\s+0\s+0$`)
		if !row.MatchString(out) {
			t.Errorf("describe lacks the row of partition %d:\n%s", p, out)
		}
	}

	cli(t, addr, "", "topic", "alter-config", "orders", "-c", "retention.ms=7200000", "-c", "cleanup.policy=compact")
	out = cli(t, addr, "", "topic", "describe", "orders")
	if !strings.Contains(out, "retention.ms=7200000") || !strings.Contains(out, "cleanup.policy=compact") {
		t.Errorf("describe after alter:\n%s", out)
	}
	cli(t, addr, "", "topic", "alter-config", "orders", "--delete-config", "cleanup.policy")
	out = cli(t, addr, "", "topic", "describe", "orders")
	if strings.Contains(out, "cleanup.policy=compact") || !strings.Contains(out, "retention.ms=7200000") {
		t.Errorf("describe after delete-config:\n%s", out)
	}
	all := cli(t, addr, "", "topic", "describe", "orders", "--all-configs")
	if !strings.Contains(all, "Configs:\n") || strings.Count(all, "=") <= strings.Count(out, "=") {
		t.Errorf("--all-configs shows no more than the non-default configs:\n%s", all)
	}
	err = cliErr(t, addr, "", "topic", "alter-config", "orders", "-c", "retention.ms=soon")
	if !strings.Contains(err.Error(), `topic "orders": INVALID_CONFIG`) {
		t.Errorf("invalid config error = %q", err)
	}

	out = cli(t, addr, "", "topic", "delete", "orders")
	if !strings.Contains(out, "deleted topic orders") {
		t.Errorf("delete output = %q", out)
	}
	err = cliErr(t, addr, "", "topic", "describe", "orders")
	if !strings.Contains(err.Error(), `topic "orders": UNKNOWN_TOPIC_OR_PARTITION`) {
		t.Errorf("describe of a deleted topic: %q", err)
	}
	err = cliErr(t, addr, "", "topic", "delete", "orders")
	if !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("second delete: %q", err)
	}
}

func TestProduceConsume(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "lines", "-p", "2")

	var input strings.Builder
	var want []string
	for i := range 10 {
		k, v := "k"+string(rune('a'+i)), "value "+string(rune('a'+i))
		input.WriteString(k + ":" + v + "\n")
		want = append(want, k+"="+v+" [src=cli]")
	}
	out := cli(t, addr, input.String(), "produce", "lines", "--key-separator", ":", "-H", "src=cli")
	if out != "" {
		t.Errorf("produce printed %q on success", out)
	}

	out = cli(t, addr, "", "consume", "lines", "--from-beginning", "-n", "10", "--format", `%k=%v [%h]\n`)
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("consumed\n%q\nwant\n%q", got, want)
	}

	// Partition, acks, compression; the last line has no newline.
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		cli(t, addr, "a-"+codec+"\nb-"+codec, "produce", "lines", "--partition", "1", "--acks", "1",
			"--compression", codec, "--linger", "1ms")
	}
	out = cli(t, addr, "", "consume", "lines", "--partition", "1", "--offset", "earliest",
		"-n", "100", "--timeout-idle", "2s", "--format", `%p %v\n`)
	var onOne []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "1 ") {
			t.Fatalf("record from another partition: %q", line)
		}
		if v := strings.TrimPrefix(line, "1 "); strings.HasPrefix(v, "a-") || strings.HasPrefix(v, "b-") {
			onOne = append(onOne, v)
		}
	}
	wantOne := []string{"a-none", "b-none", "a-gzip", "b-gzip", "a-snappy", "b-snappy", "a-lz4", "b-lz4", "a-zstd", "b-zstd"}
	if !slices.Equal(onOne, wantOne) {
		t.Errorf("partition 1 holds %q, want %q", onOne, wantOne)
	}

	// Offsets: an exact start and a start relative to the end.
	out = cli(t, addr, "", "consume", "lines", "--partition", "1", "--offset", "-2", "-n", "2", "--format", `%v,`)
	if out != "a-zstd,b-zstd," {
		t.Errorf("last two records = %q", out)
	}
	first := cli(t, addr, "", "consume", "lines", "--partition", "1", "--offset", "0", "-n", "1", "--format", `%o`)
	if first != "0" {
		t.Errorf("offset 0 consume = %q", first)
	}

	// Starting at the end with nothing new: the idle timeout ends it.
	start := time.Now()
	out = cli(t, addr, "", "consume", "lines", "--timeout-idle", "500ms")
	if out != "" || time.Since(start) > 10*time.Second {
		t.Errorf("idle consume printed %q after %s", out, time.Since(start))
	}

	err := cliErr(t, addr, "", "consume", "lines", "--partition", "7", "-n", "1")
	if !strings.Contains(err.Error(), "no partition 7") {
		t.Errorf("bad partition error = %q", err)
	}
	err = cliErr(t, addr, "", "consume", "missing", "-n", "1")
	if !strings.Contains(err.Error(), `topic "missing": UNKNOWN_TOPIC_OR_PARTITION`) {
		t.Errorf("unknown topic consume error = %q", err)
	}
}

func TestProduceFailureExitsNonZero(t *testing.T) {
	addr := startBroker(t, func(c *broker.Config) { c.AutoCreateTopics = false })
	res := runCLI(t, time.Minute, "x\ny\n", "-b", addr, "--timeout", "5s", "produce", "nowhere")
	if res.err == nil {
		t.Fatal("producing to a missing topic succeeded")
	}
	if !strings.Contains(res.err.Error(), "2 of 2 records failed: UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("error = %q", res.err)
	}
}

// TestConsumeGroupResumesFromCommits: consume --group commits exactly what
// it printed, so a second run of the group starts after it.
func TestConsumeGroupResumesFromCommits(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "jobs", "-p", "2")
	cli(t, addr, "1\n2\n3\n4\n5\n6\n", "produce", "jobs")

	seen := map[string]bool{}
	collect := func(out string) {
		for _, v := range strings.Fields(out) {
			if seen[v] {
				t.Errorf("record %s delivered twice to the group", v)
			}
			seen[v] = true
		}
	}
	collect(cli(t, addr, "", "consume", "jobs", "--group", "workers", "--offset", "earliest", "-n", "4", "--format", `%v `))
	if len(seen) != 4 {
		t.Fatalf("first run printed %d records, want 4", len(seen))
	}
	// The group resumes after what it printed (--offset earliest only
	// matters for a partition the first run committed nothing on).
	// -n 2 ends the run as soon as the rest arrives; the idle bound only
	// guards a broken run (a partition newly assigned can wait for the
	// client's in-flight long poll, up to its 5 s max wait, as on Kafka).
	collect(cli(t, addr, "", "consume", "jobs", "--group", "workers", "--offset", "earliest",
		"-n", "2", "--timeout-idle", "20s", "--format", `%v `))
	if len(seen) != 6 {
		t.Errorf("group saw %d distinct records, want 6: %v", len(seen), seen)
	}
}

var (
	perfWindowLine = regexp.MustCompile(`^\d+ records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency\.$`)
	perfTotalLine  = regexp.MustCompile(`^(\d+) records sent, [0-9]+\.[0-9]{6} records/sec \([0-9]+\.[0-9]{2} MB/sec\), ` +
		`[0-9]+\.[0-9]{2} ms avg latency, [0-9]+\.[0-9]{2} ms max latency, ` +
		`(\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$`)
	kafkaTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}$`)
)

func TestPerfProduce(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "bench", "-p", "2")

	out := cli(t, addr, "", "perf", "produce", "--topic", "bench", "--num-records", "2000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "acks=1", "linger.ms=1", "batch.size=16384", "compression.type=lz4")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	m := perfTotalLine.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("summary line does not match Kafka's format:\n%s", out)
	}
	if m[1] != "2000" {
		t.Errorf("summary counts %s records, want 2000", m[1])
	}
	for _, l := range lines[:len(lines)-1] {
		if !perfWindowLine.MatchString(l) {
			t.Errorf("window line does not match Kafka's format: %q", l)
		}
	}

	// The records landed: 2000 across both partitions.
	desc := cli(t, addr, "", "topic", "describe", "bench")
	total := 0
	for _, row := range regexp.MustCompile(`(?m)^\d+\s+\d+\s+\S+\s+\S+\s+0\s+(\d+)$`).FindAllStringSubmatch(desc, -1) {
		n, _ := strconv.Atoi(row[1])
		total += n
	}
	if total != 2000 {
		t.Errorf("topic holds %d records, want 2000:\n%s", total, desc)
	}

	// --throughput paces the run: 300 records at 1000/s take >= ~0.3s.
	start := time.Now()
	cli(t, addr, "", "perf", "produce", "--topic", "bench", "--num-records", "300", "--record-size", "10", "--throughput", "1000")
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("throttled run took only %s", took)
	}
}

func TestPerfConsume(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "bench", "-p", "2")
	cli(t, addr, "", "perf", "produce", "--topic", "bench", "--num-records", "1500", "--record-size", "50", "--throughput", "-1")

	out := cli(t, addr, "", "perf", "consume", "--topic", "bench", "--messages", "1500", "--timeout", "10000")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != consumerPerfHeader(false) {
		t.Fatalf("perf consume output:\n%s", out)
	}
	// start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
	fields := strings.Split(lines[1], ", ")
	if len(fields) != 10 || !kafkaTime.MatchString(fields[0]) || !kafkaTime.MatchString(fields[1]) || fields[4] != "1500" {
		t.Fatalf("values line does not match Kafka's format or count: %q", lines[1])
	}
	// 1500 records of 50 bytes.
	if fields[2] != javaFixed(1500*50/float64(bytesPerMB), 4) {
		t.Errorf("data.consumed.in.MB = %s", fields[2])
	}
}

// cliCluster is in-process nodes sharing one metadata quorum on loopback
// ports chosen at run time: voters 1..n, then the broker-only nodes
// addBrokerOnly adds. A stopped node restarts with its data and ports.
type cliCluster struct {
	t       *testing.T
	cfgs    []broker.Config
	addrs   []string
	servers []*broker.Server
}

// startCLICluster starts n voters concurrently (each waits for a quorum
// before NewServer returns).
func startCLICluster(t *testing.T, n int) *cliCluster {
	t.Helper()
	raftAddrs := make([]string, n)
	var voters []string
	for i := range n {
		raftAddrs[i] = brokertest.FreeAddr(t)
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, raftAddrs[i]))
	}
	c := &cliCluster{t: t}
	t.Cleanup(func() {
		for i := range c.servers {
			c.stop(int32(i + 1))
		}
	})
	for i := range n {
		cfg := c.nodeConfig(int32(i+1), strings.Join(voters, ","))
		cfg.ControllerListen = raftAddrs[i]
		c.add(cfg)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.tryStart(int32(i + 1))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	return c
}

func (c *cliCluster) nodeConfig(id int32, voters string) broker.Config {
	cfg := broker.DefaultConfig()
	cfg.NodeID = id
	cfg.DataDir = c.t.TempDir()
	cfg.Listen = brokertest.FreeAddr(c.t)
	cfg.HTTPListen = ""
	cfg.ControllerQuorumVoters = voters
	return cfg
}

func (c *cliCluster) add(cfg broker.Config) {
	c.cfgs = append(c.cfgs, cfg)
	c.addrs = append(c.addrs, cfg.Listen)
	c.servers = append(c.servers, nil)
}

// addBrokerOnly starts the next node id as a --roles broker node (an
// observer of the quorum).
func (c *cliCluster) addBrokerOnly() int32 {
	c.t.Helper()
	id := int32(len(c.cfgs) + 1)
	cfg := c.nodeConfig(id, c.cfgs[0].ControllerQuorumVoters)
	cfg.ProcessRoles = "broker"
	c.add(cfg)
	c.start(id)
	return id
}

func (c *cliCluster) tryStart(id int32) error {
	srv, err := broker.NewServer(c.cfgs[id-1], slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		_ = srv.Close()
		return err
	}
	c.servers[id-1] = srv
	return nil
}

// start starts node id, stopped or new.
func (c *cliCluster) start(id int32) {
	c.t.Helper()
	if err := c.tryStart(id); err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
}

// stop closes node id if it is running.
func (c *cliCluster) stop(id int32) {
	if srv := c.servers[id-1]; srv != nil {
		_ = srv.Close()
		c.servers[id-1] = nil
	}
}

// partitionsOf asks the cluster (bypassing any client cache) for a topic's
// partitions: leader, replicas and ISR.
func (c *cliCluster) partitionsOf(t *testing.T, topic string) []kmsg.MetadataResponseTopicPartition {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("metadata of %s: %v %+v", topic, err, resp)
	}
	ps := resp.Topics[0].Partitions
	slices.SortFunc(ps, func(a, b kmsg.MetadataResponseTopicPartition) int { return int(a.Partition - b.Partition) })
	return ps
}
