package streams_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

type reading struct {
	Sensor string `json:"sensor"`
	At     int64  `json:"at"` // event time, Unix ms
	Value  int64  `json:"value"`
}

// TestWithTimestampsDrivesWindows: windows follow the time the extractor
// takes from the value, not the Kafka timestamps (which here run the other
// way); late records are judged by it; outputs carry it; a failing
// extraction or a negative time is an error of the stage.
func TestWithTimestampsDrivesWindows(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.JSON[reading](), []string{"readings"})
	timed := streams.WithTimestamps(in, func(r streams.Record[string, reading]) (time.Time, error) {
		if r.Value.At == 0 {
			return time.Time{}, errors.New("no event time")
		}
		return time.UnixMilli(r.Value.At), nil
	}, streams.Named("event-time"))
	timed.To("timed", streams.String, streams.JSON[reading]())
	streams.WindowedBy(timed.GroupByKey(streams.String, streams.JSON[reading]()),
		streams.TumblingWindows(time.Minute)).Count().ToStream().
		To("per-minute", streams.WindowedSerde(streams.String), streams.Int64)

	d, err := streams.NewTestDriver(top, streams.OnError(streams.ErrorSkip))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Event times 10:00:10, 10:00:50, 10:01:05, then 10:00:20 (late: no
	// grace, stream time is 10:01:05), with Kafka timestamps decreasing.
	base := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	kafkaTS := base.Add(time.Hour)
	pipe := func(at time.Time) {
		t.Helper()
		v, _ := streams.JSON[reading]().Encode(reading{Sensor: "s1", At: at.UnixMilli(), Value: 1})
		if at.IsZero() {
			v, _ = streams.JSON[reading]().Encode(reading{Sensor: "s1", Value: 1})
		}
		kafkaTS = kafkaTS.Add(-time.Second)
		if err := d.Pipe(&kgo.Record{Topic: "readings", Key: []byte("s1"), Value: v, Timestamp: kafkaTS}); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Duration{10 * time.Second, 50 * time.Second, 65 * time.Second, 20 * time.Second} {
		pipe(base.Add(at))
	}
	pipe(time.Time{})                                 // extraction fails: skipped
	pipe(time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)) // negative: skipped

	counts := map[time.Time]int64{}
	out, err := streams.ReadOutput(d, "per-minute", streams.WindowedSerde(streams.String), streams.Int64)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range out {
		counts[kv.Key.Start.UTC()] = kv.Value
	}
	if len(counts) != 2 || counts[base] != 2 || counts[base.Add(time.Minute)] != 1 {
		t.Fatalf("windows %v, want 10:00 → 2 and 10:01 → 1 (the 10:00:20 record late)", counts)
	}
	if st := d.Stats(); st.LateDropped != 1 || st.Skipped != 2 {
		t.Fatalf("late dropped %d, skipped %d; want 1 and 2", st.LateDropped, st.Skipped)
	}
	timedOut := d.Output("timed")
	if len(timedOut) != 4 {
		t.Fatalf("%d records on the pass-through output, want 4", len(timedOut))
	}
	for i, want := range []time.Duration{10 * time.Second, 50 * time.Second, 65 * time.Second, 20 * time.Second} {
		if got := timedOut[i].Timestamp; !got.Equal(base.Add(want)) {
			t.Errorf("output %d has timestamp %v, want the extracted %v", i, got, base.Add(want))
		}
	}
}
