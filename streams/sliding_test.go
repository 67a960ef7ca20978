package streams_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/streams"
)

// slidingRecord is one input record of the sliding-window tests.
type slidingRecord struct {
	key string
	id  int
	ts  int64
}

// slidingReference computes, by brute force, every window the records
// define (each record's left window [t−size, t], and its right window
// [t+1, t+1+size] when a record falls in it) and the ids each holds,
// sorted and joined by commas: key → start → ids.
func slidingReference(recs []slidingRecord, size int64) map[string]map[int64]string {
	out := map[string]map[int64]string{}
	byKey := map[string][]slidingRecord{}
	for _, r := range recs {
		byKey[r.key] = append(byKey[r.key], r)
	}
	for key, rs := range byKey {
		holds := func(start int64) string {
			var ids []int
			for _, r := range rs {
				if r.ts >= start && r.ts <= start+size {
					ids = append(ids, r.id)
				}
			}
			return joinIDs(ids)
		}
		out[key] = map[int64]string{}
		for _, r := range rs {
			out[key][r.ts-size] = holds(r.ts - size)
			if right := holds(r.ts + 1); right != "" {
				out[key][r.ts+1] = right
			}
		}
	}
	return out
}

func joinIDs(ids []int) string {
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}

// slidingIDsTopology collects the ids (record values) of each key's records
// per sliding window of size and grace, writing every update to "ids"
// (suppressed: only final results).
func slidingIDsTopology(size, grace time.Duration, suppress bool, opts ...streams.OpOpt) *streams.Topology {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"in"})
	wg := streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.SlidingWindows(size).Grace(grace))
	tbl := streams.AggregateWindows(wg, func() string { return "" }, func(_ string, id string, agg string) (string, error) {
		if agg == "" {
			return id, nil
		}
		return agg + "," + id, nil
	}, streams.String, append(opts, streams.Named("ids"))...)
	if suppress {
		tbl = tbl.Suppress(streams.UntilWindowCloses())
	}
	tbl.ToStream().To("ids", streams.WindowedSerde(streams.String), streams.String)
	return top
}

// readWindows reads the windowed output: key → start → last value, and the
// number of updates per window.
func readWindows(t *testing.T, d *streams.TestDriver, topic string, size int64) (last map[string]map[int64]string, updates map[string]int) {
	t.Helper()
	last, updates = map[string]map[int64]string{}, map[string]int{}
	for _, kv := range readKV(t, d, topic, streams.WindowedSerde(streams.String), streams.String) {
		w := kv.Key
		if w.End.UnixMilli()-w.Start.UnixMilli() != size {
			t.Fatalf("window %v..%v is not %d ms wide", w.Start.UnixMilli(), w.End.UnixMilli(), size)
		}
		if last[w.Key] == nil {
			last[w.Key] = map[int64]string{}
		}
		ids := strings.Split(kv.Value, ",")
		n := make([]int, len(ids))
		for i, id := range ids {
			fmt.Sscan(id, &n[i])
		}
		last[w.Key][w.Start.UnixMilli()] = joinIDs(n)
		updates[fmt.Sprintf("%s@%d", w.Key, w.Start.UnixMilli())]++
	}
	return last, updates
}

// compareWindows reports the windows that differ from the reference.
func compareWindows(t *testing.T, got, want map[string]map[int64]string) {
	t.Helper()
	bad := 0
	for key, ws := range want {
		for start, ids := range ws {
			if got[key][start] != ids && bad < 10 {
				t.Errorf("key %s window [%d, %d]: got ids %q, want %q", key, start, start+10, got[key][start], ids)
				bad++
			}
		}
		for start := range got[key] {
			if _, ok := ws[start]; !ok && bad < 10 {
				t.Errorf("key %s: window starting %d should not exist (ids %q)", key, start, got[key][start])
				bad++
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d keys, want %d", len(got), len(want))
	}
}

// slidingInput is n records over keys with timestamps that advance ~3 ms a
// record, disordered by up to disorder ms (duplicates included).
func slidingInput(seed uint64, n, keys int, disorder int64) []slidingRecord {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	recs := make([]slidingRecord, n)
	for i := range recs {
		recs[i] = slidingRecord{key: fmt.Sprintf("k%d", rng.IntN(keys)), id: i,
			ts: 1000 + int64(i)*3 - rng.Int64N(disorder+1)}
	}
	return recs
}

// TestSlidingWindowsMatchBruteForce: over out-of-order input within grace,
// the last update of every window equals the brute-force reference (the
// ids each window defined by the records holds), and no other window is
// emitted; with Suppress each window is emitted once, with the same final
// content, once stream time passes its end + grace.
func TestSlidingWindowsMatchBruteForce(t *testing.T) {
	const size = 10
	for seed := range uint64(5) {
		recs := slidingInput(seed, 600, 3, 40)
		want := slidingReference(recs, size)
		for _, suppress := range []bool{false, true} {
			d := newDriver(t, slidingIDsTopology(size*time.Millisecond, 50*time.Millisecond, suppress))
			for _, r := range recs {
				pipeAt(t, d, "in", r.key, fmt.Sprint(r.id), r.ts)
			}
			if suppress {
				// Pass every window's close time with a key of its own.
				pipeAt(t, d, "in", "flush", "-1", 1_000_000)
			}
			got, updates := readWindows(t, d, "ids", size)
			delete(got, "flush")
			compareWindows(t, got, want)
			if s := d.Stats(); s.LateDropped != 0 {
				t.Errorf("seed %d suppress %v: %d late, want 0 (all within grace)", seed, suppress, s.LateDropped)
			}
			if suppress {
				for w, n := range updates {
					if n != 1 && !strings.HasPrefix(w, "flush@") {
						t.Errorf("seed %d: window %s emitted %d times under Suppress, want once", seed, w, n)
					}
				}
			}
			if t.Failed() {
				t.Fatalf("seed %d suppress %v", seed, suppress)
			}
		}
	}
}

// TestSlidingWindowsDropLateRecords: a record whose windows have all closed
// (ends are inclusive: t + 1 + size < stream time − grace) is dropped and
// counted; one whose left window closed but whose right window is open
// still counts there, matching the brute force over the records that
// arrived in time.
func TestSlidingWindowsDropLateRecords(t *testing.T) {
	d := newDriver(t, slidingIDsTopology(10*time.Millisecond, 5*time.Millisecond, false))
	pipeAt(t, d, "in", "a", "1", 100) // stream time 100, closed before 95
	pipeAt(t, d, "in", "a", "2", 83)  // 83+1+10 < 95: every window closed
	if s := d.Stats(); s.LateDropped != 1 {
		t.Fatalf("after the late record: %d late, want 1", s.LateDropped)
	}
	pipeAt(t, d, "in", "a", "3", 90) // left window [80, 90] closed; [90, 100] and [91, 101] open
	got, _ := readWindows(t, d, "ids", 10)
	want := map[string]map[int64]string{"a": {90: "1,3", 91: "1"}}
	compareWindows(t, got, want)
	if s := d.Stats(); s.LateDropped != 2 {
		t.Errorf("%d late, want 2 (the record, then the closed left window)", s.LateDropped)
	}
}

// TestSlidingWindowsWithoutGrace: with no grace, a record at stream time
// still has its left window (ends are inclusive; Kafka's KAFKA-13739), and
// the windows are those the records define.
func TestSlidingWindowsWithoutGrace(t *testing.T) {
	for _, suppress := range []bool{false, true} {
		d := newDriver(t, slidingIDsTopology(10*time.Millisecond, 0, suppress))
		pipeAt(t, d, "in", "a", "1", 100)
		pipeAt(t, d, "in", "a", "2", 105)
		if suppress {
			pipeAt(t, d, "in", "b", "x", 200) // b's record closes a's windows
		}
		got, _ := readWindows(t, d, "ids", 10)
		delete(got, "b")
		compareWindows(t, got, map[string]map[int64]string{"a": {90: "1", 95: "1,2", 101: "2"}})
		if s := d.Stats(); s.LateDropped != 0 {
			t.Errorf("suppress %v: %d late, want none", suppress, s.LateDropped)
		}
	}
}

// TestWindowRetentionPurgesOldWindows: without Suppress, a window leaves
// the store (a tombstone in its changelog) once stream time passes its end
// + retention (default size + grace), and a late record for it is dropped,
// not counted from zero in a re-created window; Retention keeps windows
// longer and must cover size + grace.
func TestWindowRetentionPurgesOldWindows(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      []streams.OpOpt
		tombstone bool
	}{
		{"default", nil, true},
		{"hour", []streams.OpOpt{streams.Retention(time.Hour)}, false},
	} {
		top := streams.NewTopology()
		in := streams.From(top, streams.String, streams.String, []string{"in"})
		streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.TumblingWindows(10*time.Millisecond).Grace(5*time.Millisecond)).
			Count(append(c.opts, streams.Named("counts"))...).ToStream().To("counts", streams.WindowedSerde(streams.String), streams.Int64)
		d := newDriver(t, top)
		pipeAt(t, d, "in", "a", "x", 3)
		pipeAt(t, d, "in", "a", "x", 4)
		pipeAt(t, d, "in", "b", "x", 100) // stream time 100: [0, 10) ended 90 ms ago > 15 ms retention
		pipeAt(t, d, "in", "a", "x", 5)   // late for the purged window
		changes := readKV(t, d, "test-driver-counts-changelog", streams.Bytes, streams.Bytes)
		var tombstones int
		for _, ch := range changes {
			if ch.Value == nil {
				tombstones++
				if !strings.HasPrefix(string(ch.Key), "a") {
					t.Errorf("%s: tombstone for %q, want the window of a", c.name, ch.Key)
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[c.tombstone]; tombstones != want {
			t.Errorf("%s: %d tombstones in the changelog %v, want %d", c.name, tombstones, changes, want)
		}
		out := readKV(t, d, "counts", streams.WindowedSerde(streams.String), streams.Int64)
		if len(out) != 3 || out[1].Value != 2 {
			t.Errorf("%s: output %v, want counts 1 and 2 for a's window and 1 for b's", c.name, out)
		}
		if s := d.Stats(); s.LateDropped != 1 {
			t.Errorf("%s: %d late, want 1", c.name, s.LateDropped)
		}
	}

	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"in"})
	streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.SlidingWindows(time.Minute).Grace(10*time.Second)).
		Count(streams.Retention(time.Minute))
	if _, err := streams.NewTestDriver(top); err == nil || !strings.Contains(err.Error(), "Retention 1m0s is shorter") {
		t.Errorf("Retention below 2 × size + grace for sliding windows: %v", err)
	}
}

// TestSlidingWindowsEmitEachWindowOnce: a record exactly size + 1 ms after
// the previous one starts its left window where the previous record's
// right window starts; that window is created and emitted once.
func TestSlidingWindowsEmitEachWindowOnce(t *testing.T) {
	d := newDriver(t, slidingIDsTopology(10*time.Millisecond, time.Second, false))
	pipeAt(t, d, "in", "a", "1", 95)
	pipeAt(t, d, "in", "a", "2", 100) // 95's right window [96, 106] tells the next record of 100
	pipeAt(t, d, "in", "a", "3", 111) // left window [101, 111] = right window of 100
	got, updates := readWindows(t, d, "ids", 10)
	compareWindows(t, got, map[string]map[int64]string{"a": {85: "1", 90: "1,2", 96: "2", 101: "3"}})
	if updates["a@101"] != 1 {
		t.Errorf("window [101, 111] emitted %d times, want once", updates["a@101"])
	}
}

// TestWindowPurgeIsBoundedPerRecord: when many windows expire at once (a
// jump in stream time), one record's purge writes at most 10,000
// tombstones and the next records delete the rest.
func TestWindowPurgeIsBoundedPerRecord(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"in"})
	streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.TumblingWindows(10*time.Millisecond)).
		Count(streams.Named("counts")).ToStream().To("counts", streams.WindowedSerde(streams.String), streams.Int64)
	d := newDriver(t, top)
	const windows = 10_050
	for i := range windows {
		pipeAt(t, d, "in", fmt.Sprintf("k%05d", i), "x", 5)
	}
	tombstones := func() int {
		n := 0
		for _, ch := range readKV(t, d, "test-driver-counts-changelog", streams.Bytes, streams.Bytes) {
			if ch.Value == nil {
				n++
			}
		}
		return n
	}
	tombstones() // forget the updates so far
	pipeAt(t, d, "in", "late-comer", "x", 1000)
	if n := tombstones(); n != 10_000 {
		t.Fatalf("the first record past the retention wrote %d tombstones, want 10000", n)
	}
	pipeAt(t, d, "in", "late-comer", "x", 1001)
	if n := tombstones(); n != windows-10_000 {
		t.Fatalf("the next record wrote %d tombstones, want the %d left", n, windows-10_000)
	}
}
