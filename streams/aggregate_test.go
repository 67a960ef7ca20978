package streams_test

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

func newDriver(t *testing.T, top *streams.Topology, opts ...streams.Opt) *streams.TestDriver {
	t.Helper()
	d, err := streams.NewTestDriver(top, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func pipeAt(t *testing.T, d *streams.TestDriver, topic, key, value string, ms int64) {
	t.Helper()
	if err := d.Pipe(&kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value), Timestamp: time.UnixMilli(ms)}); err != nil {
		t.Fatal(err)
	}
}

func readKV[K, V any](t *testing.T, d *streams.TestDriver, topic string, keys streams.Serde[K], values streams.Serde[V]) []streams.KeyValue[K, V] {
	t.Helper()
	out, err := streams.ReadOutput(d, topic, keys, values)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCountReduceAggregate: the three aggregations over one grouped stream
// emit every update, and the failed record of a skipped operator leaves no
// trace in the stores.
func TestCountReduceAggregate(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"words"})
	nums := streams.MapValues(in, func(_ string, v string) (int64, error) {
		return strconv.ParseInt(v, 10, 64)
	})
	g := nums.GroupByKey(streams.String, streams.Int64)
	g.Count(streams.Named("counts")).ToStream().To("counts", streams.String, streams.Int64)
	g.Reduce(func(a, v int64) (int64, error) { return max(a, v), nil }, streams.Named("maxes")).
		ToStream().To("maxes", streams.String, streams.Int64)
	streams.Aggregate(g, func() string { return "" }, func(_ string, v int64, agg string) (string, error) {
		return agg + strconv.FormatInt(v, 10), nil
	}, streams.String, streams.Named("concat")).ToStream().To("concat", streams.String, streams.String)
	d := newDriver(t, top, streams.OnError(streams.ErrorSkip))
	for i, kv := range [][2]string{{"a", "3"}, {"b", "1"}, {"a", "x"}, {"a", "2"}, {"b", "5"}, {"a", "7"}} {
		pipeAt(t, d, "words", kv[0], kv[1], int64(i))
	}
	want := func(topic string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", topic, got, want)
		}
	}
	kv := streams.KV[string, int64]
	want("counts", readKV(t, d, "counts", streams.String, streams.Int64),
		[]streams.KeyValue[string, int64]{kv("a", 1), kv("b", 1), kv("a", 2), kv("b", 2), kv("a", 3)})
	want("maxes", readKV(t, d, "maxes", streams.String, streams.Int64),
		[]streams.KeyValue[string, int64]{kv("a", 3), kv("b", 1), kv("a", 3), kv("b", 5), kv("a", 7)})
	want("concat", readKV(t, d, "concat", streams.String, streams.String),
		[]streams.KeyValue[string, string]{streams.KV("a", "3"), streams.KV("b", "1"), streams.KV("a", "32"), streams.KV("b", "15"), streams.KV("a", "327")})
	// Every update went to the store's changelog too, keyed like the store.
	changes := readKV(t, d, "test-driver-counts-changelog", streams.String, streams.Int64)
	if len(changes) != 5 || changes[4] != kv("a", 3) {
		t.Errorf("changelog %v", changes)
	}
	if s := d.Stats(); s.Skipped != 1 {
		t.Errorf("skipped %d, want the one bad number", s.Skipped)
	}
}

// TestAggregateErrorLeavesNoTrace: an operator error after the aggregate
// (dead-lettered) discards the record's store writes with its outputs.
func TestAggregateErrorLeavesNoTrace(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"in"})
	counts := in.GroupByKey(streams.String, streams.String).Count(streams.Named("n")).ToStream()
	counts.Filter(func(_ string, n int64) (bool, error) {
		if n == 2 {
			return false, errors.New("two is bad luck")
		}
		return true, nil
	}).To("out", streams.String, streams.Int64)
	d := newDriver(t, top, streams.OnError(streams.ErrorDeadLetter), streams.DeadLetterTopic("dlq"))
	for i := 0; i < 3; i++ {
		pipeAt(t, d, "in", "k", "v", int64(i))
	}
	got := readKV(t, d, "out", streams.String, streams.Int64)
	// The second record failed at count 2 and was not counted, so the
	// third is again count 2 and fails too.
	if want := []streams.KeyValue[string, int64]{streams.KV("k", int64(1))}; !reflect.DeepEqual(got, want) {
		t.Fatalf("out %v, want %v", got, want)
	}
	if n := len(d.Output("dlq")); n != 2 {
		t.Fatalf("%d dead letters, want 2", n)
	}
	if n := len(d.Output("test-driver-n-changelog")); n != 1 {
		t.Fatalf("%d changelog records, want 1 (failed records write nothing)", n)
	}
}

// TestGroupByRepartitions: GroupBy re-keys through a repartition topic.
func TestGroupByRepartitions(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"clicks"})
	streams.GroupBy(in, func(_ string, v string) (string, error) { return v[:1], nil },
		streams.String, streams.String, streams.Named("by-letter")).
		Count(streams.Named("letters")).ToStream().To("letters", streams.String, streams.Int64)
	d := newDriver(t, top, streams.ApplicationID("app"))
	for i, v := range []string{"apple", "avocado", "banana", "apricot"} {
		pipeAt(t, d, "clicks", fmt.Sprint(i), v, int64(i))
	}
	got := readKV(t, d, "letters", streams.String, streams.Int64)
	want := []streams.KeyValue[string, int64]{streams.KV("a", int64(1)), streams.KV("a", int64(2)), streams.KV("b", int64(1)), streams.KV("a", int64(3))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// countDriver drives a windowed count of topic "ev" built by count,
// writing its updates to "updates" and its suppressed final results to
// "finals".
func countDriver(t *testing.T, count func(streams.Grouped[string, string]) streams.Table[streams.Windowed[string], int64]) (*streams.TestDriver, streams.Serde[streams.Windowed[string]]) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"ev"})
	counts := count(in.GroupByKey(streams.String, streams.String))
	wk := streams.WindowedSerde(streams.String)
	counts.ToStream().To("updates", wk, streams.Int64)
	counts.Suppress(streams.UntilWindowCloses()).ToStream().To("finals", wk, streams.Int64)
	return newDriver(t, top), wk
}

type windowCount = streams.KeyValue[streams.Windowed[string], int64]

func wc(key string, start, end, n int64) windowCount {
	return streams.KV(streams.Windowed[string]{Key: key, Start: time.UnixMilli(start), End: time.UnixMilli(end)}, n)
}

// TestTumblingWindowsGraceAndLateness: out-of-order records within grace
// count in their window; later ones are dropped and counted; suppressed
// output has one final result per window once stream time passes end +
// grace.
func TestTumblingWindowsGraceAndLateness(t *testing.T) {
	d, wk := countDriver(t, func(g streams.Grouped[string, string]) streams.Table[streams.Windowed[string], int64] {
		return streams.WindowedBy(g, streams.TumblingWindows(10*time.Millisecond).Grace(5*time.Millisecond)).Count()
	})
	for _, r := range []struct {
		key string
		ms  int64
	}{
		{"a", 1}, {"a", 12}, {"b", 3}, // b at 3: stream time 12 < 10+5, in grace
		{"a", 16},            // stream time 16: window [0,10) closes (16 >= 15)
		{"a", 9},             // late for [0,10): dropped
		{"b", 14}, {"a", 31}, // 31 closes [10,20)
	} {
		pipeAt(t, d, "ev", r.key, "x", r.ms)
	}
	updates := readKV(t, d, "updates", wk, streams.Int64)
	wantUpdates := []windowCount{wc("a", 0, 10, 1), wc("a", 10, 20, 1), wc("b", 0, 10, 1), wc("a", 10, 20, 2), wc("b", 10, 20, 1), wc("a", 30, 40, 1)}
	if !reflect.DeepEqual(updates, wantUpdates) {
		t.Errorf("updates\n got %v\nwant %v", updates, wantUpdates)
	}
	finals := readKV(t, d, "finals", wk, streams.Int64)
	wantFinals := []windowCount{wc("a", 0, 10, 1), wc("b", 0, 10, 1), wc("a", 10, 20, 2), wc("b", 10, 20, 1)}
	if !reflect.DeepEqual(finals, wantFinals) {
		t.Errorf("finals\n got %v\nwant %v", finals, wantFinals)
	}
	if s := d.Stats(); s.LateDropped != 1 {
		t.Errorf("late dropped %d, want 1", s.LateDropped)
	}
}

// TestHoppingWindowsSum: a record falls into size/advance windows; a
// windowed aggregate sums per window.
func TestHoppingWindowsSum(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.Int64, []string{"amounts"})
	sums := streams.AggregateWindows(streams.WindowedBy(in.GroupByKey(streams.String, streams.Int64),
		streams.HoppingWindows(10*time.Millisecond, 5*time.Millisecond)),
		func() int64 { return 0 }, func(_ string, v, sum int64) (int64, error) { return sum + v, nil }, streams.Int64)
	wk := streams.WindowedSerde(streams.String)
	sums.Suppress(streams.UntilWindowCloses()).ToStream().To("sums", wk, streams.Int64)
	d := newDriver(t, top)
	for i, ms := range []int64{2, 7, 12, 40} {
		v, _ := streams.Int64.Encode(int64(i + 1))
		if err := d.Pipe(&kgo.Record{Topic: "amounts", Key: []byte("k"), Value: v, Timestamp: time.UnixMilli(ms)}); err != nil {
			t.Fatal(err)
		}
	}
	got := readKV(t, d, "sums", wk, streams.Int64)
	// 2 → [0,10); 7 → [0,10),[5,15); 12 → [5,15),[10,20); 40 closes them all.
	want := []windowCount{wc("k", 0, 10, 3), wc("k", 5, 15, 5), wc("k", 10, 20, 3)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestStatefulTopologyErrors: bad windows and suppressing a table that is
// not windowed are build errors NewApp reports.
func TestStatefulTopologyErrors(t *testing.T) {
	for name, build := range map[string]func(*streams.Topology){
		"advance > size": func(top *streams.Topology) {
			in := streams.From(top, streams.String, streams.String, []string{"in"})
			streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.HoppingWindows(time.Second, 2*time.Second))
		},
		"session gap 0": func(top *streams.Topology) {
			in := streams.From(top, streams.String, streams.String, []string{"in"})
			streams.SessionWindowedBy(in.GroupByKey(streams.String, streams.String), streams.SessionWindows(0))
		},
		"suppress unwindowed": func(top *streams.Topology) {
			in := streams.From(top, streams.String, streams.String, []string{"in"})
			in.GroupByKey(streams.String, streams.String).Count().Suppress(streams.UntilWindowCloses())
		},
	} {
		top := streams.NewTopology()
		build(top)
		if _, err := streams.NewApp(top, streams.Brokers("x:1"), streams.ApplicationID("x")); !errors.Is(err, streams.ErrTopology) {
			t.Errorf("%s: NewApp = %v, want ErrTopology", name, err)
		}
	}
}

// TestSessionWindows: records within the gap join a session, a record
// bridging two sessions merges them, suppressed output has each final
// session once it can no longer grow, and a record that could only join a
// closed session is dropped.
func TestSessionWindows(t *testing.T) {
	d, wk := countDriver(t, func(g streams.Grouped[string, string]) streams.Table[streams.Windowed[string], int64] {
		return streams.SessionWindowedBy(g, streams.SessionWindows(10*time.Millisecond).Grace(20*time.Millisecond)).Count()
	})
	for _, r := range []struct {
		key string
		ms  int64
	}{
		{"u", 0}, {"u", 5}, {"u", 30}, {"u", 15}, // 15 joins [0,5] (in grace); 30 stays apart
		{"u", 22},  // bridges [0,15] and [30,30]
		{"u", 100}, // 100 >= 30+10+20: [0,30] can no longer grow, final
		{"v", 200}, // so is [100,100]
		{"u", 50},  // 50+10+20 < 200: late
	} {
		pipeAt(t, d, "ev", r.key, "x", r.ms)
	}
	wantUpdates := []windowCount{wc("u", 0, 0, 1), wc("u", 0, 5, 2), wc("u", 30, 30, 1), wc("u", 0, 15, 3),
		wc("u", 0, 30, 5), wc("u", 100, 100, 1), wc("v", 200, 200, 1)}
	if got := readKV(t, d, "updates", wk, streams.Int64); !reflect.DeepEqual(got, wantUpdates) {
		t.Errorf("updates\n got %v\nwant %v", got, wantUpdates)
	}
	wantFinals := []windowCount{wc("u", 0, 30, 5), wc("u", 100, 100, 1)}
	if got := readKV(t, d, "finals", wk, streams.Int64); !reflect.DeepEqual(got, wantFinals) {
		t.Errorf("finals\n got %v\nwant %v", got, wantFinals)
	}
	if s := d.Stats(); s.LateDropped != 1 {
		t.Errorf("late dropped %d, want 1", s.LateDropped)
	}
}
