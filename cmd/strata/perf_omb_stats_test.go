package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseOMBWorkloadAllFields(t *testing.T) {
	w, err := parseOMBWorkload([]byte(`
name: all fields
topics: 2
partitionsPerTopic: 8
messageSize: 512
payloadFile: payload/payload-1Kb.data
useRandomizedPayloads: true
randomBytesRatio: 0.25
randomizedPayloadPoolSize: 100
keyDistributor: KEY_ROUND_ROBIN
subscriptionsPerTopic: 3
consumerPerSubscription: 4
producersPerTopic: 5
producerRate: 12345
consumerBacklogSizeGB: 0.5
testDurationMinutes: 15
warmupDurationMinutes: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "all fields" || w.Topics != 2 || w.PartitionsPerTopic != 8 || w.MessageSize != 512 ||
		w.PayloadFile != "payload/payload-1Kb.data" || !w.UseRandomizedPayloads || w.RandomBytesRatio != 0.25 ||
		w.RandomizedPayloadPoolSize != 100 || w.KeyDistributor != ombKeyRoundRobin || w.SubscriptionsPerTopic != 3 ||
		w.ConsumerPerSubscription != 4 || w.ProducersPerTopic != 5 || w.ProducerRate != 12345 ||
		w.ConsumerBacklogSizeGB != 0.5 || w.TestDurationMinutes != 15 || *w.WarmupDurationMinutes != 2 {
		t.Errorf("parsed %+v", w)
	}
	if got := w.backlogTargetBytes(); got != 512*1024*1024 {
		t.Errorf("backlog target = %d bytes, want 512 MiB", got)
	}
}

func TestParseOMBWorkloadDefaults(t *testing.T) {
	w, err := parseOMBWorkload([]byte("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\ntestDurationMinutes: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w.KeyDistributor != ombNoKey || *w.WarmupDurationMinutes != 1 || w.ProducerRate != 0 || w.ConsumerBacklogSizeGB != 0 {
		t.Errorf("defaults: %+v (warmup %v)", w, *w.WarmupDurationMinutes)
	}
	zero, err := parseOMBWorkload([]byte("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\nwarmupDurationMinutes: 0\n"))
	if err != nil || *zero.WarmupDurationMinutes != 0 {
		t.Errorf("an explicit warmupDurationMinutes: 0 = %v, %v", *zero.WarmupDurationMinutes, err)
	}
}

func TestParseOMBWorkloadErrors(t *testing.T) {
	base := "topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\n"
	cases := map[string]string{
		base + "producerRatee: 5\n":                                 "producerRatee",
		base + "keyDistributor: ZIPF\n":                             "keyDistributor",
		strings.Replace(base, "topics: 1", "topics: 0", 1):          "topics",
		base + "subscriptionsPerTopic: 1\n":                         "consumerPerSubscription",
		base + "consumerBacklogSizeGB: 1\n":                         "consumerBacklogSizeGB",
		base + "producerRate: -1\n":                                 "producerRate",
		base + "topics: [1]\n":                                      "",
		strings.Replace(base, "messageSize: 10", "", 1):             "messageSize",
		base + "useRandomizedPayloads: true\nrandomBytesRatio: 2\n": "randomBytesRatio",
	}
	for yml, want := range cases {
		_, err := parseOMBWorkload([]byte(yml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("workload\n%s\nerror = %v, want one naming %q", yml, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %q", err)
		}
	}
}

func TestShippedOMBWorkloadsParse(t *testing.T) {
	files, err := filepath.Glob("../../deploy/perf/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("deploy/perf workloads: %v, %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseOMBWorkload(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if w.Name == "" || w.TestDurationMinutes <= 0 || w.TestDurationMinutes > 2 || *w.WarmupDurationMinutes != 1 {
			t.Errorf("%s: not a short laptop workload: %+v", f, w)
		}
		if !bytes.HasPrefix(data, []byte("# ")) {
			t.Errorf("%s does not open with a comment on what it measures", f)
		}
	}
}

func TestSplitOMBProducerRate(t *testing.T) {
	rates := splitProducerRate(2000, 4)
	sum := 0.0
	for _, r := range rates {
		if r != 500 {
			t.Errorf("rates = %v, want 500 each", rates)
		}
		sum += r
	}
	if sum != 2000 || len(rates) != 4 {
		t.Errorf("rates %v sum to %v", rates, sum)
	}
	for _, r := range splitProducerRate(0, 3) {
		if r != 0 {
			t.Errorf("unlimited split gives %v", r)
		}
	}
}

func TestOMBPayloadsAndKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := ombWorkload{MessageSize: 100}
	if p := ombPayloads(w, nil, rng); len(p) != 1 || len(p[0]) != 100 || bytes.Count(p[0], []byte{0}) > 10 {
		t.Errorf("random payload: %d payloads, %v", len(p), p)
	}
	w = ombWorkload{MessageSize: 100, UseRandomizedPayloads: true, RandomBytesRatio: 0.3, RandomizedPayloadPoolSize: 5}
	pool := ombPayloads(w, nil, rng)
	if len(pool) != 5 || len(pool[0]) != 100 || !bytes.Equal(pool[0][30:], make([]byte, 70)) {
		t.Errorf("randomized pool: %d payloads, first %v", len(pool), pool[0])
	}
	if p := ombPayloads(ombWorkload{PayloadFile: "x", MessageSize: 3}, []byte("hello"), rng); string(p[0]) != "hello" {
		t.Errorf("payload file payload = %q", p[0])
	}

	if k := newOMBKeys(ombNoKey, rng).key(); k != nil {
		t.Errorf("NO_KEY gives key %q", k)
	}
	rr := newOMBKeys(ombKeyRoundRobin, rng)
	first := string(rr.key())
	for range ombUniqueKeys - 1 {
		if string(rr.key()) == first {
			t.Fatal("round robin repeats a key before using them all")
		}
	}
	if string(rr.key()) != first || len(first) != ombKeyBytes {
		t.Errorf("round robin does not wrap to %q", first)
	}
	if k := newOMBKeys(ombKeyRandomNano, rng).key(); len(k) != ombKeyBytes {
		t.Errorf("RANDOM_NANO key %q", k)
	}
}

// recordedRun is a recorder after a 10 s period: 1000 messages of 1 KiB
// published with latencies 1..1000 ms, 900 consumed with 2..1800 ms.
func recordedRun(t *testing.T) (*ombRecorder, ombPeriod) {
	t.Helper()
	start := time.Unix(1000, 0)
	rec := newOMBRecorder(start)
	for i := 1; i <= 1000; i++ {
		rec.published(1024, time.Duration(i)*time.Millisecond, time.Duration(i)*time.Microsecond)
	}
	rec.publishFailed()
	for i := 1; i <= 900; i++ {
		rec.received(1024, time.Duration(2*i)*time.Millisecond, start)
	}
	return rec, rec.endPeriod(start.Add(10*time.Second), 1)
}

func TestOMBPeriodLine(t *testing.T) {
	_, p := recordedRun(t)
	line := ombPeriodLine(p)
	want := regexp.MustCompile(`^Pub rate 100\.0 msg/s / 0\.1 MB/s \| Pub err 0\.1 err/s \| Cons rate 90\.0 msg/s / 0\.1 MB/s \| ` +
		`Backlog: 0\.1 K \| Pub Latency \(ms\) avg: 500\.\d - 50%: 500\.\d - 99%: 99\d\.\d - 99\.9%: 99\d\.\d - Max: 100\d\.\d \| ` +
		`Pub Delay Latency \(us\) avg: 500\.\d - 50%: 500 - 99%: 990 - 99\.9%: 999 - Max: 1000$`)
	if !want.MatchString(line) {
		t.Errorf("period line:\n%s", line)
	}
	if p.backlog != 100 {
		t.Errorf("backlog = %d, want 100", p.backlog)
	}
	agg := ombAggregatedLine("E2E", p.e2e)
	if !regexp.MustCompile(`^----- Aggregated E2E Latency \(ms\) avg: 90\d\.\d - 50%: 90\d\.\d - 95%: 17\d\d\.\d - 99%: 17\d\d\.\d - ` +
		`99\.9%: 1\d{3}\.\d - 99\.99%: 1\d{3}\.\d - Max: 1\d{3}\.\d$`).MatchString(agg) {
		t.Errorf("aggregated line:\n%s", agg)
	}
	drain := ombDrainLine(ombDrain{messages: 2048, bytes: 2 << 20, elapsed: 2 * time.Second})
	if drain != "----- Backlog drained: 2048 messages (2.0 MB) in 2.000 s | Drain rate 1024.0 msg/s / 1.0 MB/s" {
		t.Errorf("drain line: %s", drain)
	}
}

func TestOMBResultJSON(t *testing.T) {
	rec, p := recordedRun(t)
	w := ombWorkload{Name: "wl", Topics: 2, PartitionsPerTopic: 3, ProducersPerTopic: 2, SubscriptionsPerTopic: 1, ConsumerPerSubscription: 2}
	res := newOMBResult(w, 1024)
	res.addPeriod(p)
	res.setAggregated(rec.phaseLat)
	res.setDrain(ombDrain{messages: 100, bytes: 102400, elapsed: time.Second})
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m["workload"] != "wl" || m["driver"] != "strata-perf" || m["messageSize"] != 1024.0 || m["topics"] != 2.0 ||
		m["partitions"] != 3.0 || m["producersPerTopic"] != 2.0 || m["consumersPerTopic"] != 2.0 {
		t.Errorf("header fields: %v", m)
	}
	for _, family := range []string{"publishLatency", "endToEndLatency"} {
		var prev float64
		for _, suffix := range []string{"50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max"} {
			periods, ok := m[family+suffix].([]any)
			if !ok || len(periods) != 1 || periods[0].(float64) <= 0 {
				t.Errorf("%s%s = %v", family, suffix, m[family+suffix])
			}
			agg, ok := m["aggregated"+strings.ToUpper(family[:1])+family[1:]+suffix].(float64)
			if !ok || agg < prev {
				t.Errorf("aggregated %s%s = %v, after %v", family, suffix, m["aggregated"+family+suffix], prev)
			}
			prev = agg
		}
		quantiles, ok := m["aggregated"+strings.ToUpper(family[:1])+family[1:]+"Quantiles"].(map[string]any)
		if !ok || quantiles["50.0"] == nil || quantiles["100.0"] == nil {
			t.Errorf("%s quantiles = %v", family, quantiles)
		}
		for k := range quantiles {
			if _, err := strconv.ParseFloat(k, 64); err != nil {
				t.Errorf("quantile key %q is not a percentile", k)
			}
		}
	}
	for key, want := range map[string]float64{"publishRate": 100, "consumeRate": 90, "backlog": 100, "publishErrorRate": 0.1} {
		if v, ok := m[key].([]any); !ok || len(v) != 1 || v[0] != want {
			t.Errorf("%s = %v, want [%v]", key, m[key], want)
		}
	}
	if m["aggregatedPublishLatencyAvg"].(float64) < 499 || m["backlogDrainRate"] != 100.0 {
		t.Errorf("avg %v, drain rate %v", m["aggregatedPublishLatencyAvg"], m["backlogDrainRate"])
	}
}

func TestOMBHgrmWriter(t *testing.T) {
	rec, _ := recordedRun(t)
	var buf bytes.Buffer
	if err := writeHgrm(&buf, rec.phaseLat.publish); err != nil {
		t.Fatal(err)
	}
	count, maxMs, lastPct := parseHgrm(t, buf.String())
	if count != 1000 || maxMs < 999 || maxMs > 1001 || lastPct != 1 {
		t.Errorf("hgrm: count %d, max %v ms, last percentile %v:\n%s", count, maxMs, lastPct, buf.String())
	}
}

// parseHgrm checks an .hgrm file's layout (header, rows of value,
// percentile, count, 1/(1-p) with non-decreasing values and percentiles,
// footer) and returns its total count, max and last percentile.
func parseHgrm(t *testing.T, text string) (count int64, maxMs, lastPct float64) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 6 || strings.Fields(lines[0])[0] != "Value" || lines[1] != "" {
		t.Fatalf("hgrm header:\n%s", text)
	}
	footer := regexp.MustCompile(`^#\[Max\s+=\s+([\d.]+), Total count\s+=\s+(\d+)\]$`)
	prevValue, prevPct := 0.0, 0.0
	for _, line := range lines[2:] {
		if m := footer.FindStringSubmatch(line); m != nil {
			maxMs, _ = strconv.ParseFloat(m[1], 64)
			count, _ = strconv.ParseInt(m[2], 10, 64)
			continue
		}
		if strings.HasPrefix(line, "#[") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("hgrm row %q", line)
		}
		value, err1 := strconv.ParseFloat(f[0], 64)
		pct, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || value < prevValue || pct < prevPct {
			t.Fatalf("hgrm row %q after value %v percentile %v", line, prevValue, prevPct)
		}
		prevValue, prevPct = value, pct
	}
	return count, maxMs, prevPct
}

func TestOMBRecorderBacklogAndDrain(t *testing.T) {
	start := time.Unix(0, 0)
	rec := newOMBRecorder(start)
	for range 10 {
		rec.published(1, time.Millisecond, 0)
	}
	if b := rec.backlog(2); b != 20 {
		t.Fatalf("backlog of 10 messages for 2 subscriptions = %d", b)
	}
	rec.watchDrain(2)
	for i := range 19 {
		rec.received(1, time.Millisecond, start.Add(time.Duration(i)*time.Second))
	}
	if !rec.drainedAt.IsZero() {
		t.Fatalf("drained at %v with one message unread", rec.drainedAt)
	}
	rec.received(1, time.Millisecond, start.Add(42*time.Second))
	rec.received(1, time.Millisecond, start.Add(43*time.Second))
	if !rec.drainedAt.Equal(start.Add(42*time.Second)) || rec.backlog(2) != 0 {
		t.Errorf("drained at %v (want +42s), backlog %d", rec.drainedAt, rec.backlog(2))
	}
	counts, lat, elapsed := rec.endPhase(start.Add(time.Minute))
	if counts.received != 21 || counts.sent != 10 || lat.endToEnd.TotalCount() != 21 || elapsed != time.Minute {
		t.Errorf("endPhase: %+v, %d end-to-end latencies, %s", counts, lat.endToEnd.TotalCount(), elapsed)
	}
	rec.resetPhase(start)
	if rec.phase.received != 0 || rec.phaseLat.endToEnd.TotalCount() != 0 || rec.totalRecv != 21 {
		t.Errorf("resetPhase: phase %+v, total received %d", rec.phase, rec.totalRecv)
	}
}
