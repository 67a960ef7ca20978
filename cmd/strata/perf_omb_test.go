package main

// strata perf omb against a real in-process broker.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runOMB writes workload to a file and runs perf omb on it against addr
// (through --bootstrap-server; -b points at a dead port to prove the
// override), failing the test unless it succeeds.
func runOMB(t *testing.T, addr, workload string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "workload.yaml")
	if err := os.WriteFile(path, []byte(workload), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, time.Minute, "", append([]string{"-b", "127.0.0.1:1", "--timeout", "10s",
		"perf", "omb", path, "--bootstrap-server", addr}, args...)...)
	if res.err != nil {
		t.Fatalf("perf omb: %v\nstdout:\n%s\nstderr:\n%s", res.err, res.stdout, res.stderr)
	}
	return res.stdout
}

// waitForNoTopics waits until no topic named with prefix is listed.
func waitForNoTopics(t *testing.T, addr, prefix string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := cli(t, addr, "", "topic", "list")
		if !strings.Contains(list, prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topics %s* still listed after the run:\n%s", prefix, list)
		}
		time.Sleep(50 * time.Millisecond) // polling the broker's metadata
	}
}

var (
	ombThroughput = regexp.MustCompile(`(?m)^----- Aggregated Pub rate ([\d.]+) msg/s / [\d.]+ MB/s \| Cons rate ([\d.]+) msg/s / [\d.]+ MB/s \| ` +
		`Pub err (\d+) \| Published (\d+) \| Consumed (\d+)$`)
	ombTotals   = regexp.MustCompile(`(?m)^----- Run totals: (\d+) messages published, (\d+) consumed$`)
	ombPeriodRe = regexp.MustCompile(`(?m)^Pub rate [\d.]+ msg/s / [\d.]+ MB/s \| Pub err [\d.]+ err/s \| Cons rate [\d.]+ msg/s / [\d.]+ MB/s \| Backlog: [\d.]+ K \| ` +
		`Pub Latency \(ms\) avg: [\d.]+ - 50%: [\d.]+ - 99%: [\d.]+ - 99\.9%: [\d.]+ - Max: [\d.]+ \| Pub Delay Latency \(us\) avg: [\d.]+ - 50%: \d+ - 99%: \d+ - 99\.9%: \d+ - Max: \d+$`)
	ombAggregated = regexp.MustCompile(`(?m)^----- Aggregated (Pub|E2E) Latency \(ms\) avg: ([\d.]+) - 50%: ([\d.]+) - 95%: ([\d.]+) - ` +
		`99%: ([\d.]+) - 99\.9%: ([\d.]+) - 99\.99%: ([\d.]+) - Max: ([\d.]+)$`)
)

// readOMBResult decodes --output's JSON.
func readOMBResult(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	if err := json.Unmarshal(data, &result); err != nil {
		t.Fatalf("--output is not JSON: %v", err)
	}
	return result
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPerfOMBRun(t *testing.T) {
	addr := startBroker(t, nil)
	dir := t.TempDir()
	output, hgrmDir := filepath.Join(dir, "result.json"), filepath.Join(dir, "hgrm")
	out := runOMB(t, addr, `
name: tiny
topics: 2
partitionsPerTopic: 3
messageSize: 256
keyDistributor: KEY_ROUND_ROBIN
subscriptionsPerTopic: 1
consumerPerSubscription: 2
producersPerTopic: 2
producerRate: 2000
testDurationMinutes: 10
warmupDurationMinutes: 10
`, "--warmup-duration", "1s", "--test-duration", "3s", "--output", output, "--histogram-dir", hgrmDir,
		"--topic-prefix", "omb-run")

	if n := len(ombPeriodRe.FindAllString(out, -1)); n < 2 {
		t.Errorf("%d period lines (want one per phase at least):\n%s", n, out)
	}
	m := ombThroughput.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no aggregated throughput line:\n%s", out)
	}
	pubRate, _ := strconv.ParseFloat(m[1], 64)
	if pubRate < 1000 || pubRate > 3000 {
		t.Errorf("publish rate %v msg/s, asked 2000:\n%s", pubRate, out)
	}
	if published, consumed := atoi(t, m[4]), atoi(t, m[5]); atoi(t, m[3]) != 0 || consumed < published*9/10 || consumed > published*11/10 {
		t.Errorf("test phase published %d, consumed %d, errors %s", published, consumed, m[3])
	}
	if tm := ombTotals.FindStringSubmatch(out); tm == nil || atoi(t, tm[2]) < atoi(t, tm[1]) || atoi(t, tm[1]) == 0 {
		t.Errorf("run totals: consumers did not catch up with the producers:\n%s", out)
	}
	aggregated := ombAggregated.FindAllStringSubmatch(out, -1)
	if len(aggregated) != 2 {
		t.Fatalf("aggregated latency lines:\n%s", out)
	}
	for _, line := range aggregated {
		prev := 0.0
		for _, s := range line[3:] { // 50% .. Max
			v, _ := strconv.ParseFloat(s, 64)
			if v <= 0 || v < prev {
				t.Errorf("%s latency percentiles not positive and monotonic: %s", line[1], line[0])
			}
			prev = v
		}
	}

	result := readOMBResult(t, output)
	if result["workload"] != "tiny" || result["driver"] != "strata-perf" || result["topics"] != 2.0 ||
		result["partitions"] != 3.0 || result["consumersPerTopic"] != 2.0 || result["messageSize"] != 256.0 {
		t.Errorf("result header: %v", result)
	}
	for _, family := range []string{"aggregatedPublishLatency", "aggregatedEndToEndLatency"} {
		prev := 0.0
		for _, suffix := range []string{"50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max"} {
			v, _ := result[family+suffix].(float64)
			if v <= 0 || v < prev {
				t.Errorf("%s%s = %v after %v", family, suffix, v, prev)
			}
			prev = v
		}
	}
	if rates, _ := result["publishRate"].([]any); len(rates) != 1 {
		t.Errorf("publishRate = %v, want the one period of a 3 s test", result["publishRate"])
	}

	for _, name := range []string{"publish-latency.hgrm", "end-to-end-latency.hgrm"} {
		text, err := os.ReadFile(filepath.Join(hgrmDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if count, maxMs, _ := parseHgrm(t, string(text)); count == 0 || maxMs <= 0 {
			t.Errorf("%s: count %d, max %v", name, count, maxMs)
		}
	}
	waitForNoTopics(t, addr, "omb-run")
}

func TestPerfOMBBacklogMode(t *testing.T) {
	addr := startBroker(t, nil)
	output := filepath.Join(t.TempDir(), "result.json")
	// 0.002 GB of 1 KiB messages is 2098 messages: about a second at 2000/s.
	out := runOMB(t, addr, `
name: backlog
topics: 1
partitionsPerTopic: 2
messageSize: 1024
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 2000
consumerBacklogSizeGB: 0.002
testDurationMinutes: 1
`, "--warmup-duration", "0s", "--test-duration", "500ms", "--output", output, "--topic-prefix", "omb-backlog",
		"--acks", "1", "--topic-config", "retention.bytes=1073741824", "-c", "segment.bytes=16777216", "--keep-topics")
	// Uncompressed by default, as OMB's Kafka driver (franz-go's own
	// default would be snappy).
	if codec := ombStoredCodec(t, addr, out); codec != 0 {
		t.Errorf("stored batches' compression type %d, want 0 (none)", codec)
	}

	drain := regexp.MustCompile(`(?m)^----- Backlog drained: (\d+) messages \([\d.]+ MB\) in [\d.]+ s \| Drain rate ([\d.]+) msg/s`).FindStringSubmatch(out)
	if drain == nil {
		t.Fatalf("no drain line:\n%s", out)
	}
	if n := atoi(t, drain[1]); n < 2098 {
		t.Errorf("drained %d messages, want the backlog of >= 2098", n)
	}
	if rate, _ := strconv.ParseFloat(drain[2], 64); rate <= 0 {
		t.Errorf("drain rate %v", rate)
	}
	result := readOMBResult(t, output)
	if r, _ := result["backlogDrainRate"].(float64); r <= 0 {
		t.Errorf("backlogDrainRate = %v", result["backlogDrainRate"])
	}
	if s, _ := result["backlogDrainSeconds"].(float64); s <= 0 {
		t.Errorf("backlogDrainSeconds = %v", result["backlogDrainSeconds"])
	}
}

func TestPerfOMBCompression(t *testing.T) {
	addr := startBroker(t, nil)
	out := runOMB(t, addr, `
name: lz4
topics: 1
partitionsPerTopic: 1
messageSize: 512
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 1000
testDurationMinutes: 1
`, "--warmup-duration", "0s", "--test-duration", "300ms", "--topic-prefix", "omb-lz4", "--compression", "lz4", "--keep-topics")
	if codec := ombStoredCodec(t, addr, out); codec != 3 {
		t.Errorf("stored batches' compression type %d, want 3 (lz4)", codec)
	}
}

// ombStoredCodec reads the first record of the topic perf omb created
// (named in its output) and returns its batch's compression type.
func ombStoredCodec(t *testing.T, addr, out string) uint8 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Created 1 topics with \d+ partitions each: \[(\S+)\]$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no created-topic line:\n%s", out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(m[1]), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fetches := cl.PollRecords(ctx, 1)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record read back from %s: %v", m[1], err)
		}
		if recs := fetches.Records(); len(recs) > 0 {
			return recs[0].Attrs.CompressionType()
		}
	}
}

func TestPerfOMBBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("topics: 1\npartitionsPerTopic: 1\nmessageSize: 1\nproducersPerTopic: 1\nmesageSize: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, 20*time.Second, "", "-b", "127.0.0.1:1", "--timeout", "2s", "perf", "omb", path)
	if res.err == nil || !strings.Contains(res.err.Error(), `unknown field "mesageSize"`) || strings.Contains(res.err.Error(), "\n") {
		t.Errorf("bad workload: %v", res.err)
	}
	good, err := filepath.Abs("../../deploy/perf/1-topic-16-partitions-1kb-50mb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, 20*time.Second, "", "-b", "127.0.0.1:1", "--timeout", "2s", "perf", "omb", good)
	if res.err == nil || !strings.Contains(res.err.Error(), "cannot reach brokers 127.0.0.1:1") {
		t.Errorf("unreachable endpoint: %v", res.err)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--acks", "2", `invalid --acks "2": want all, 1 or 0`},
		{"--topic-config", "retention.bytes", `invalid topic-config "retention.bytes": want key=value`},
		{"--compression", "brotli", `--compression: unknown compression "brotli": want none, gzip, snappy, lz4 or zstd`},
	} {
		res = runCLI(t, 20*time.Second, "", "-b", "127.0.0.1:1", "--timeout", "2s", "perf", "omb", good, tc.flag, tc.value)
		if res.err == nil || res.err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %q", tc.flag, tc.value, res.err, tc.want)
		}
	}
	// A topic config the broker refuses fails the run before any traffic.
	addr := startBroker(t, nil)
	res = runCLI(t, 30*time.Second, "", "-b", addr, "--timeout", "5s", "perf", "omb", good, "--topic-prefix", "omb-bad",
		"-c", "retention.bytes=lots")
	if res.err == nil || !strings.Contains(res.err.Error(), "INVALID_CONFIG") || !strings.Contains(res.err.Error(), "retention.bytes") {
		t.Errorf("refused topic config: %v", res.err)
	}
}

// TestPerfOMBBrokerDiesMidRun kills the broker under a run: perf omb must
// end by itself soon after its test phase (not wait forever for
// acknowledgements that cannot come), fail, and say how many messages
// were never acknowledged.
func TestPerfOMBBrokerDiesMidRun(t *testing.T) {
	srv := startBrokerServer(t, nil)
	addr := srv.Addr()
	path := filepath.Join(t.TempDir(), "workload.yaml")
	if err := os.WriteFile(path, []byte(`
name: dies
topics: 1
partitionsPerTopic: 2
messageSize: 512
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 2000
testDurationMinutes: 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan cliResult, 1)
	go func() {
		done <- runCLI(t, 3*time.Minute, "", "-b", addr, "--timeout", "5s", "perf", "omb", path,
			"--warmup-duration", "0s", "--test-duration", "3s", "--topic-prefix", "omb-dies")
	}()

	// Kill the broker once records are flowing. (franz-go answers a
	// request for all topics from a cache younger than the metadata min
	// age, hence the short one.)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(30 * time.Second)
	for written := int64(0); written == 0; {
		select {
		case res := <-done:
			t.Fatalf("perf omb ended before the broker died: %v\n%s", res.err, res.stdout)
		default:
		}
		if time.Now().After(deadline) {
			cl.Close()
			t.Fatal("perf omb wrote nothing within 30s")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		topics, err := adm.ListTopicsWithInternal(ctx)
		if err == nil {
			for _, name := range topics.Names() {
				if !strings.HasPrefix(name, "omb-dies") {
					continue
				}
				ends, err := adm.ListEndOffsets(ctx, name)
				if err == nil {
					ends.Each(func(o kadm.ListedOffset) { written += o.Offset })
				}
			}
		}
		cancel()
		if written == 0 {
			time.Sleep(20 * time.Millisecond) // polling the broker
		}
	}
	cl.Close()
	killed := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("stop broker: %v", err)
	}

	var res cliResult
	select {
	case res = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("perf omb still running 90s after its broker died")
	}
	t.Logf("perf omb ended %s after the broker died: %v", time.Since(killed).Round(time.Millisecond), res.err)
	if res.err == nil {
		t.Fatalf("perf omb succeeded without its broker:\n%s", res.stdout)
	}
	if !regexp.MustCompile(`^\d+ messages not acknowledged within \S+ after the run \(is the broker up\?\)$`).MatchString(res.err.Error()) {
		t.Errorf("error = %q", res.err)
	}
}
