package main

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestJavaFixed(t *testing.T) {
	tests := []struct {
		v    float64
		prec int
		want string
	}{
		{0, 2, "0.00"},
		{2.5, 1, "2.5"},
		{0.25, 1, "0.3"},   // Java rounds half up; Go's %.1f gives 0.2
		{0.125, 2, "0.13"}, // same
		{1.005, 2, "1.01"}, // Java rounds the shortest decimal, 1.005
		{9.995, 2, "10.00"},
		{99.96, 1, "100.0"},
		{123.456, 6, "123.456000"},
		{751992.7808694, 6, "751992.780869"},
		{2.5, 0, "3"},
		{0.04, 1, "0.0"},
		{1e-7, 4, "0.0000"},
		{1.953125, 2, "1.95"},
		{66666.666666666, 4, "66666.6667"},
		{-1.25, 1, "-1.3"},
		{math.NaN(), 2, "NaN"},
		{math.Inf(1), 6, "Infinity"},
		{math.Inf(-1), 6, "-Infinity"},
	}
	for _, tt := range tests {
		if got := javaFixed(tt.v, tt.prec); got != tt.want {
			t.Errorf("javaFixed(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestProducerLines(t *testing.T) {
	window := perfCounts{records: 1000, bytes: 100_000, latencySumMs: 2500, latencyMaxMs: 9}
	if got, want := producerWindowLine(window, 5000),
		"1000 records sent, 200.0 records/sec (0.02 MB/sec), 2.5 ms avg latency, 9.0 ms max latency."; got != want {
		t.Errorf("window line\n got %q\nwant %q", got, want)
	}
	total := perfCounts{records: 2000, bytes: 2000 * 1024, latencySumMs: 3000, latencyMaxMs: 12}
	if got, want := producerTotalLine(total, 1000, 1, 3, 7, 12),
		"2000 records sent, 2000.000000 records/sec (1.95 MB/sec), 1.50 ms avg latency, 12.00 ms max latency, "+
			"1 ms 50th, 3 ms 95th, 7 ms 99th, 12 ms 99.9th."; got != want {
		t.Errorf("total line\n got %q\nwant %q", got, want)
	}
	// Nothing delivered: Kafka prints NaN for the average.
	if got := producerTotalLine(perfCounts{}, 10, 0, 0, 0, 0); !strings.Contains(got, "NaN ms avg latency") {
		t.Errorf("empty total line = %q", got)
	}
}

func TestLatencyPercentiles(t *testing.T) {
	samples := make([]int64, 100)
	for i := range samples {
		samples[i] = int64(i + 1)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(samples), func(i, j int) { samples[i], samples[j] = samples[j], samples[i] })
	first := samples[0]
	got := latencyPercentiles(samples, 0.5, 0.95, 0.99, 0.999)
	want := []int64{51, 96, 100, 100}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("percentiles = %v, want %v", got, want)
			break
		}
	}
	if samples[0] != first {
		t.Error("latencyPercentiles modified its input")
	}
	if got := latencyPercentiles(nil, 0.5, 0.99); got[0] != 0 || got[1] != 0 {
		t.Errorf("percentiles of nothing = %v", got)
	}
	if got := latencyPercentiles([]int64{7}, 0.5, 0.999); got[0] != 7 || got[1] != 7 {
		t.Errorf("percentiles of one sample = %v", got)
	}
}

func TestProducerPerfStatsWindows(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	s := newProducerPerfStats(10, t0, 5*time.Second)
	for i := 1; i <= 4; i++ {
		if line, ok := s.record(int64(i), 100, t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("report after %ds: %q", i, line)
		}
	}
	line, ok := s.record(10, 100, t0.Add(5*time.Second))
	if !ok {
		t.Fatal("no report after 5s")
	}
	want := "5 records sent, 1.0 records/sec (0.00 MB/sec), 4.0 ms avg latency, 10.0 ms max latency."
	if line != want {
		t.Errorf("window line\n got %q\nwant %q", line, want)
	}
	// The next window starts empty.
	if _, ok := s.record(2, 100, t0.Add(6*time.Second)); ok {
		t.Error("report right after a report")
	}
	line, ok = s.record(4, 100, t0.Add(10*time.Second))
	if !ok || !strings.HasPrefix(line, "2 records sent, 0.4 records/sec") || !strings.Contains(line, "3.0 ms avg latency, 4.0 ms max") {
		t.Errorf("second window = %q, %v", line, ok)
	}
	total := s.totalLine(t0.Add(10 * time.Second))
	wantTotal := "7 records sent, 0.700000 records/sec (0.00 MB/sec), 3.71 ms avg latency, 10.00 ms max latency, " +
		"3 ms 50th, 10 ms 95th, 10 ms 99th, 10 ms 99.9th."
	if total != wantTotal {
		t.Errorf("total line\n got %q\nwant %q", total, wantTotal)
	}
}

func TestProducerPerfStatsSampling(t *testing.T) {
	s := newProducerPerfStats(2_000_000, time.Unix(0, 0), time.Hour)
	if s.sampling != 4 {
		t.Fatalf("sampling = %d, want 4", s.sampling)
	}
	for i := 0; i < 1000; i++ {
		s.record(int64(i), 1, time.Unix(1, 0))
	}
	if len(s.samples) != 250 {
		t.Errorf("kept %d samples of 1000, want 250", len(s.samples))
	}
}

func TestConsumerLines(t *testing.T) {
	if got, want := consumerPerfHeader(false),
		"start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"; got != want {
		t.Errorf("header = %q", got)
	}
	if got := consumerPerfHeader(true); !strings.HasPrefix(got, "time, threadId, data.consumed.in.MB") {
		t.Errorf("detailed header = %q", got)
	}
	start := time.Date(2024, 5, 1, 10, 0, 0, 0, time.Local)
	got := consumerSummaryLine(consumerPerfTotals{
		start: start, end: start.Add(1500 * time.Millisecond),
		bytes: 10_000_000, messages: 100_000, rebalanceMs: 300,
	})
	want := "2024-05-01 10:00:00:000, 2024-05-01 10:00:01:500, 9.5367, 6.3578, 100000, 66666.6667, 300, 1200, 7.9473, 83333.3333"
	if got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	progress := consumerProgressLine(consumerProgress{
		lastReport: start, now: start.Add(time.Second),
		bytes: 2 * bytesPerMB, lastBytes: bytesPerMB,
		messages: 2000, lastMessages: 1000,
	})
	if want := "2024-05-01 10:00:01:000, 0, 2.0000, 1.0000, 2000, 1000.0000, 0, 1000, 1.0000, 1000.0000"; progress != want {
		t.Errorf("progress\n got %q\nwant %q", progress, want)
	}
	// An interval spent entirely rebalancing reports zero fetch rates.
	progress = consumerProgressLine(consumerProgress{
		lastReport: start, now: start.Add(time.Second), rebalanceMsInThisInterval: 1000,
	})
	if !strings.HasSuffix(progress, ", 1000, 0, 0.0000, 0.0000") {
		t.Errorf("all-rebalance progress = %q", progress)
	}
}

func TestThrottleDelay(t *testing.T) {
	tests := []struct {
		sent       int64
		elapsed    time.Duration
		throughput float64
		want       time.Duration
	}{
		{sent: 1000, elapsed: 0, throughput: -1, want: 0},
		{sent: 0, elapsed: 0, throughput: 10, want: 0},
		{sent: 50, elapsed: 200 * time.Millisecond, throughput: 100, want: 300 * time.Millisecond},
		{sent: 50, elapsed: time.Second, throughput: 100, want: 0},
		{sent: 1, elapsed: 0, throughput: 0.5, want: 2 * time.Second},
	}
	for _, tt := range tests {
		if got := throttleDelay(tt.sent, tt.elapsed, tt.throughput); got != tt.want {
			t.Errorf("throttleDelay(%d, %s, %v) = %s, want %s", tt.sent, tt.elapsed, tt.throughput, got, tt.want)
		}
	}
}

func TestParseProducerProps(t *testing.T) {
	tests := []struct {
		name      string
		props     map[string]string
		check     func(t *testing.T, c perfProducerConfig)
		noteHas   string
		wantErr   string
		idempoten bool
	}{
		{name: "defaults", props: nil, idempoten: true, check: func(t *testing.T, c perfProducerConfig) {
			if c.acks != "all" || c.lingerSet || c.batchMaxBytes != 0 || c.compression != "" {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "full", props: map[string]string{
			"bootstrap.servers": "a:1, b:2", "acks": "-1", "linger.ms": "5", "batch.size": "16384",
			"compression.type": "LZ4", "client.id": "me", "request.timeout.ms": "1000",
			"delivery.timeout.ms": "2000", "retries": "3",
		}, idempoten: true, check: func(t *testing.T, c perfProducerConfig) {
			if len(c.brokers) != 2 || c.brokers[1] != "b:2" || c.acks != "all" || c.linger != 5*time.Millisecond ||
				c.batchMaxBytes != 16384 || c.compression != "lz4" || c.clientID != "me" ||
				c.requestTimeout != time.Second || c.deliveryTimeout != 2*time.Second || c.retries != 3 {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "acks=1 turns idempotence off", props: map[string]string{"acks": "1"}},
		{name: "acks=0", props: map[string]string{"acks": "0", "max.in.flight.requests.per.connection": "10"}, check: func(t *testing.T, c perfProducerConfig) {
			if c.acks != "0" || c.maxInflight != 10 {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "many in flight turns idempotence off", props: map[string]string{"max.in.flight.requests.per.connection": "6"}},
		{name: "in flight with idempotence is noted", props: map[string]string{"max.in.flight.requests.per.connection": "1"},
			idempoten: true, noteHas: "max.in.flight"},
		{name: "explicit idempotence off", props: map[string]string{"enable.idempotence": "false"}},
		{name: "buffer.memory ignored", props: map[string]string{"buffer.memory": "33554432"}, idempoten: true, noteHas: "ignoring producer property buffer.memory"},
		{name: "unknown ignored", props: map[string]string{"foo.bar": "1"}, idempoten: true, noteHas: "unsupported producer property foo.bar"},
		{name: "batch.size 0", props: map[string]string{"batch.size": "0"}, idempoten: true, noteHas: "raised", check: func(t *testing.T, c perfProducerConfig) {
			if c.batchMaxBytes != minBatchBytes {
				t.Errorf("batchMaxBytes = %d", c.batchMaxBytes)
			}
		}},
		{name: "idempotence needs acks=all", props: map[string]string{"acks": "1", "enable.idempotence": "true"}, wantErr: "requires acks=all"},
		{name: "idempotence needs <=5 in flight", props: map[string]string{"enable.idempotence": "true", "max.in.flight.requests.per.connection": "6"}, wantErr: "<= 5"},
		{name: "bad acks", props: map[string]string{"acks": "2"}, wantErr: "acks"},
		{name: "bad linger", props: map[string]string{"linger.ms": "soon"}, wantErr: "linger.ms"},
		{name: "bad compression", props: map[string]string{"compression.type": "brotli"}, wantErr: "compression.type"},
		{name: "bad bootstrap", props: map[string]string{"bootstrap.servers": " , "}, wantErr: "bootstrap.servers"},
		{name: "transactions", props: map[string]string{"transactional.id": "x"}, wantErr: "transactions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, notes, err := parseProducerProps(tt.props)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.idempotence == nil || *cfg.idempotence != tt.idempoten {
				t.Errorf("idempotence = %v, want %v", cfg.idempotence, tt.idempoten)
			}
			joined := strings.Join(notes, "\n")
			if tt.noteHas != "" && !strings.Contains(joined, tt.noteHas) {
				t.Errorf("notes %q lack %q", joined, tt.noteHas)
			}
			if tt.noteHas == "" && joined != "" {
				t.Errorf("unexpected notes %q", joined)
			}
			if tt.check != nil {
				tt.check(t, cfg)
			}
			// kgo must accept the option combination.
			cl, err := kgo.NewClient(append(cfg.kgoOpts(), kgo.SeedBrokers("127.0.0.1:1"))...)
			if err != nil {
				t.Fatalf("kgo rejects the options: %v", err)
			}
			cl.Close()
		})
	}
}

func TestParsePropertiesFile(t *testing.T) {
	props, err := parsePropertiesFile("# comment\n! also\n\nacks = 1\nlinger.ms:5\nbootstrap.servers=a:1,b:2\n")
	if err != nil {
		t.Fatal(err)
	}
	if props["acks"] != "1" || props["linger.ms"] != "5" || props["bootstrap.servers"] != "a:1,b:2" || len(props) != 3 {
		t.Errorf("props = %v", props)
	}
	if _, err := parsePropertiesFile("just-a-word\n"); err == nil {
		t.Error("no error for a line without '='")
	}
}

func TestPayloads(t *testing.T) {
	got := splitPayloads([]byte("a\nbb\n\nccc\n"), unescapeDelimiter(`\n`))
	if len(got) != 3 || string(got[2]) != "ccc" {
		t.Errorf("splitPayloads = %q", got)
	}
	if got := splitPayloads([]byte("x||y"), "||"); len(got) != 2 || string(got[1]) != "y" {
		t.Errorf("splitPayloads with || = %q", got)
	}

	b := make([]byte, 26_000)
	fillRandomLetters(b, rand.New(rand.NewPCG(0, 0)))
	var counts [26]int
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			t.Fatalf("byte %q is not an uppercase letter", c)
		}
		counts[c-'A']++
	}
	for i, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("letter %c appears %d times in 26000, want about 1000", 'A'+i, n)
		}
	}

	src := payloadSource{size: 10, rng: rand.New(rand.NewPCG(0, 0))}
	p1, p2 := src.next(), src.next()
	// As Kafka's tool: one payload of --record-size bytes, reused.
	if len(p1) != 10 || string(p1) != string(p2) {
		t.Errorf("payloads %q and %q: want the same --record-size payload", p1, p2)
	}
}

func TestPerfProduceValidation(t *testing.T) {
	base := perfProduceOptions{topic: "t", numRecords: 1, recordSize: 1, throughput: -1}
	if err := base.validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	mutations := map[string]func(o *perfProduceOptions){
		"no topic":        func(o *perfProduceOptions) { o.topic = "" },
		"zero records":    func(o *perfProduceOptions) { o.numRecords = 0 },
		"no payload":      func(o *perfProduceOptions) { o.recordSize = 0 },
		"both payloads":   func(o *perfProduceOptions) { o.payloadFile = "f" },
		"zero throughput": func(o *perfProduceOptions) { o.throughput = 0 },
	}
	for name, mutate := range mutations {
		o := base
		mutate(&o)
		if err := o.validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPerfGCPolicy(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	if got := perfGCPolicy(func(string) string { return "" }); got != perfGCPercent {
		t.Fatalf("without GOGC: policy says %d, want %d", got, perfGCPercent)
	}
	if got := debug.SetGCPercent(100); got != perfGCPercent {
		t.Fatalf("without GOGC: runtime GC percent %d, want %d", got, perfGCPercent)
	}
	// A user's GOGC wins: the runtime already applied it, the policy
	// leaves it alone.
	debug.SetGCPercent(150)
	env := func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}
	if got := perfGCPolicy(env); got != 150 {
		t.Fatalf("with GOGC=150: policy says %d", got)
	}
	if got := debug.SetGCPercent(100); got != 150 {
		t.Fatalf("with GOGC=150: runtime GC percent %d, want 150", got)
	}
}
