package job

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTimestampStepDrivesWindows: a timestamp step takes event time from
// the value (epoch ms, or RFC 3339), so windows follow it and not the Kafka
// timestamps (here an hour later and decreasing); a value without one goes
// to the error mode (skip here), and the outputs carry the event time.
func TestTimestampStepDrivesWindows(t *testing.T) {
	for _, form := range []string{"ms", "rfc3339"} {
		t.Run(form, func(t *testing.T) {
			d := driver(t, `name: readings
input: {topics: [readings]}
pipeline:
  - timestamp: value.at
  - window: {tumbling: 1m}
  - aggregate: {n: count}
output: {topic: per-minute}
errors: {mode: skip}
`)
			at := func(sec int) string {
				ts := minute0.Add(time.Duration(sec) * time.Second)
				if form == "ms" {
					return fmt.Sprint(ts.UnixMilli())
				}
				return fmt.Sprintf("%q", ts.Format(time.RFC3339))
			}
			kafka := time.Hour
			for _, sec := range []int{5, 30, 70, 20} { // 20 s: late (no grace, stream time 70 s)
				kafka -= time.Second
				pipeAt(t, d, "readings", kafka, "s1", fmt.Sprintf(`{"at": %s}`, at(sec)))
			}
			pipeAt(t, d, "readings", kafka, "s1", `{"at": "yesterday"}`) // skipped
			pipeAt(t, d, "readings", kafka, "s1", `{}`)                  // skipped: nil
			counts := map[float64]float64{}
			outs := d.Output("per-minute")
			for i, o := range decodeOut(t, outs) {
				counts[o["window_start"].(float64)] = o["n"].(float64)
				if ts := outs[i].Timestamp; ts.Before(minute0) || !ts.Before(minute0.Add(2*time.Minute)) {
					t.Errorf("output %d has timestamp %v, want the event time", i, ts)
				}
			}
			m0, m1 := float64(minute0.UnixMilli()), float64(minute0.Add(time.Minute).UnixMilli())
			if len(counts) != 2 || counts[m0] != 2 || counts[m1] != 1 {
				t.Fatalf("counts by window start %v, want %v → 2 and %v → 1", counts, m0, m1)
			}
			if st := d.Stats(); st.LateDropped != 1 || st.Skipped != 2 {
				t.Fatalf("late %d, skipped %d; want 1 and 2", st.LateDropped, st.Skipped)
			}
		})
	}
}

func TestEventTime(t *testing.T) {
	want := time.UnixMilli(1_700_000_000_123)
	for _, v := range []any{int64(1_700_000_000_123), 1_700_000_000_123, float64(1_700_000_000_123), "1700000000123", want.UTC().Format(time.RFC3339Nano), want} {
		if got, err := eventTime(v); err != nil || !got.Equal(want) {
			t.Errorf("eventTime(%#v) = %v, %v", v, got, err)
		}
	}
	for _, v := range []any{1.5, "soon", nil, true, []any{1}} {
		if _, err := eventTime(v); err == nil {
			t.Errorf("eventTime(%#v): no error", v)
		}
	}
}

func TestTimestampStepNeedsAnExpression(t *testing.T) {
	_, err := Parse([]byte("name: bad\ninput: {topics: [in]}\noutput: {topic: out}\npipeline:\n  - timestamp:\n"))
	if err == nil || !strings.Contains(err.Error(), "step 1 (timestamp)") || !strings.Contains(err.Error(), "timestamp needs an expression") {
		t.Fatalf("Parse: %v; want one line naming step 1 (timestamp) and the missing expression", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error of several lines: %q", err)
	}
}
