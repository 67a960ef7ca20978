package streams_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// taskMetrics gathers the per-task series of job from the default
// registry: metric name → "store-or-topic/partition" → value.
func taskMetrics(t *testing.T, job string) map[string]map[string]float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			p, ok := labels["partition"]
			if labels["job"] != job || !ok {
				continue
			}
			if out[f.GetName()] == nil {
				out[f.GetName()] = map[string]float64{}
			}
			out[f.GetName()][labels["store"]+labels["topic"]+"/"+p] = metricValue(m)
		}
	}
	return out
}

func metricValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestTaskMetricsOverBroker: an App counting hour-old records per
// one-second window exposes per task (two partitions) its store's size,
// its late records (which add up to Stats.LateDropped) and a punctuation
// lag of about an hour; a second run, its state deleted, restores the
// stores and reports nothing left to restore.
func TestTaskMetricsOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "mx-in", 2)
	const n, lateEvery = 4000, 500
	hourAgo := time.Now().Add(-time.Hour)
	if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
		ts := hourAgo.Add(time.Duration(i) * time.Millisecond)
		if i > 0 && i%lateEvery == 0 {
			ts = hourAgo.Add(-time.Minute) // closed long ago
		}
		return &kgo.Record{Topic: "mx-in", Key: fmt.Appendf(nil, "k%d", i%50), Value: []byte("x"), Timestamp: ts}
	}); err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	run := func() (*streams.App, func()) {
		top := streams.NewTopology()
		in := streams.From(top, streams.String, streams.String, []string{"mx-in"})
		streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.TumblingWindows(time.Second)).
			Count(streams.Named("mx-counts")).ToStream().To("mx-out", streams.WindowedSerde(streams.String), streams.Int64)
		app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("mx"), streams.StateDir(stateDir),
			streams.CommitInterval(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return app, runApp(t, app)
	}
	first, stop := run()
	wantLate := uint64(n/lateEvery - 1)
	var got map[string]map[string]float64
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = taskMetrics(t, "mx")
		s := first.Stats()
		sizes := got["strata_stream_task_store_size_bytes"]
		// An empty store takes ~3 KB (options, manifest); ~100 windows
		// of ~30 bytes each add to it.
		if s.RecordsIn == n && len(sizes) == 2 && sizes["mx-counts/0"] > 4000 && sizes["mx-counts/1"] > 4000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: %d records in, metrics %v", s.RecordsIn, got)
		}
		time.Sleep(50 * time.Millisecond) // the next commit refreshes the sizes
	}
	var late float64
	for task, v := range got["strata_stream_task_late_dropped_total"] {
		late += v
		if task != "mx-in/0" && task != "mx-in/1" {
			t.Errorf("late dropped for task %s, want mx-in/0 or mx-in/1", task)
		}
	}
	if s := first.Stats(); late != float64(wantLate) || s.LateDropped != wantLate {
		t.Errorf("late dropped: per task %v (sum %v), App %d; want %d", got["strata_stream_task_late_dropped_total"], late, s.LateDropped, wantLate)
	}
	lags := got["strata_stream_task_punctuation_lag_seconds"]
	for _, task := range []string{"mx-in/0", "mx-in/1"} {
		// Stream time is about an hour (less the ≤ 4 s the records span)
		// behind the clock, plus the time the test took so far.
		if lag := lags[task]; lag < 3590 || lag > 3600+120 {
			t.Errorf("punctuation lag of %s = %vs, want about an hour", task, lag)
		}
	}
	for task, size := range got["strata_stream_task_store_size_bytes"] {
		if size > 64<<20 {
			t.Errorf("store %s: %v bytes for ≤ 4000 records", task, size)
		}
	}
	t.Logf("first run: %v", got)

	// Stop it, drop its stores and let a second run restore them.
	stop()
	if err := os.RemoveAll(filepath.Join(stateDir, "mx")); err != nil {
		t.Fatal(err)
	}
	if m := taskMetrics(t, "mx"); len(m) != 0 {
		t.Errorf("metrics of stopped tasks remain: %v", m)
	}
	second, _ := run()
	// The tasks open (and restore) on the first fetch holding their records.
	if err := produceEach(b.Addr, 0, 100, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "mx-in", Key: fmt.Appendf(nil, "k%d", i%50), Value: []byte("x"), Timestamp: hourAgo.Add(5 * time.Second)}
	}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		got = taskMetrics(t, "mx")
		left := got["strata_stream_task_restore_remaining_records"]
		if second.Stats().RecordsIn >= 100 && len(left) == 2 {
			for task, v := range left {
				if v != 0 {
					t.Errorf("%s: %v changelog records left to restore once processing, want 0", task, v)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second run: %d records in, metrics %v", second.Stats().RecordsIn, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := second.Stats(); s.RestoredRecords == 0 {
		t.Errorf("second run restored nothing: %+v", s)
	}
	t.Logf("second run: restored %d records; %v", second.Stats().RestoredRecords, got)
}
