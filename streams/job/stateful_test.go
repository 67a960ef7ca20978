package job

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/registrytest"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/streams"
)

const ordersPerMinute = `name: orders-per-customer
input: {topics: [orders]}
pipeline:
  - filter: value.amount != nil
  - group_by: value.customer
  - window: {tumbling: 1m, grace: 10s}
  - aggregate:
      orders: count
      total: {sum: value.amount}
      smallest: {min: value.amount}
      biggest: {max: value.amount}
      mean: {avg: value.amount}
      last_item: {latest: value.item}
      items: {collect: value.item}
output: {topic: orders-per-minute}
`

var minute0 = time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)

func pipeAt(t *testing.T, d *streams.TestDriver, topic string, at time.Duration, key, value string) {
	t.Helper()
	r := &kgo.Record{Topic: topic, Value: []byte(value), Timestamp: minute0.Add(at)}
	if key != "" {
		r.Key = []byte(key)
	}
	if err := d.Pipe(r); err != nil {
		t.Fatal(err)
	}
}

func decodeOut(t *testing.T, rs []*kgo.Record) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		if err := json.Unmarshal(r.Value, &out[i]); err != nil {
			t.Fatalf("output %s: %v", r.Value, err)
		}
		out[i]["_key"] = string(r.Key)
	}
	return out
}

func TestAggregateUpdatesInMemory(t *testing.T) {
	d := driver(t, ordersPerMinute)
	pipeAt(t, d, "orders", 5*time.Second, "", `{"customer": "ann", "amount": 10, "item": "tea"}`)
	pipeAt(t, d, "orders", 20*time.Second, "", `{"customer": "bob", "amount": 3, "item": "pen"}`)
	pipeAt(t, d, "orders", 30*time.Second, "", `{"customer": "ann", "amount": 4.5, "item": "cup"}`)
	pipeAt(t, d, "orders", 65*time.Second, "", `{"customer": "ann", "amount": 1, "item": "jam"}`)
	// Out of order, within grace (stream time 65s, window end 60s + 10s).
	pipeAt(t, d, "orders", 50*time.Second, "", `{"customer": "ann", "amount": 20, "item": "pot"}`)
	pipeAt(t, d, "orders", 90*time.Second, "", `{"customer": "bob"}`) // filtered: no amount
	// Late: stream time 65s is past 60s + 10s only after this record.
	pipeAt(t, d, "orders", 71*time.Second, "", `{"customer": "cyd", "amount": 1, "item": "x"}`)
	pipeAt(t, d, "orders", 59*time.Second, "", `{"customer": "ann", "amount": 99, "item": "late"}`)

	out := decodeOut(t, d.Output("orders-per-minute"))
	if len(out) != 6 {
		t.Fatalf("%d outputs, want 6 (one per accepted order): %v", len(out), out)
	}
	last := out[4] // ann's first minute after the out-of-order order
	w0 := float64(minute0.UnixMilli())
	want := map[string]any{"_key": "ann", "orders": 3.0, "total": 34.5, "smallest": 4.5, "biggest": 20.0,
		"mean": 11.5, "last_item": "pot", "items": []any{"tea", "cup", "pot"}, "window_start": w0, "window_end": w0 + 60000}
	if got, _ := json.Marshal(last); string(got) != mustJSON(want) {
		t.Errorf("ann minute 0 = %s, want %s", got, mustJSON(want))
	}
	if out[3]["_key"] != "ann" || out[3]["window_start"] != w0+60000 || out[3]["orders"] != 1.0 {
		t.Errorf("ann minute 1 = %v", out[3])
	}
	if out[1]["_key"] != "bob" || out[1]["total"] != 3.0 || out[1]["mean"] != 3.0 {
		t.Errorf("bob = %v", out[1])
	}
	if n := d.Stats().LateDropped; n != 1 {
		t.Errorf("late dropped %d, want 1", n)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAggregateFinalHoppingInMemory(t *testing.T) {
	src := `name: clicks
input: {topics: [clicks], format: string}
pipeline:
  - window: {hopping: {size: 2m, advance: 1m}, emit: final}
  - aggregate: {clicks: count, pages: {collect: value}}
  - filter: value.clicks > 1 && value.clicks == 2
  - map: '{"user": key, "clicks": value.clicks, "pages": value.pages, "from": value.window_start}'
output: {topic: busy-users}
`
	d := driver(t, src)
	pipeAt(t, d, "clicks", 10*time.Second, "u1", "/a")
	pipeAt(t, d, "clicks", 70*time.Second, "u1", "/b")
	pipeAt(t, d, "clicks", 80*time.Second, "u2", "/c")
	if out := d.Output("busy-users"); len(out) != 0 {
		t.Fatalf("final results before any window closed: %v", decodeOut(t, out))
	}
	// Stream time 2m closes [-1m, 1m) and [0, 2m); 3m closes [1m, 3m).
	pipeAt(t, d, "clicks", 180*time.Second, "u3", "/d")
	out := decodeOut(t, d.Output("busy-users"))
	// [0,2m): u1 2 clicks, u2 1 (filtered); [1m,3m): u1 1, u2 1 (filtered).
	if len(out) != 1 {
		t.Fatalf("outputs %v, want u1's [0, 2m) only", out)
	}
	want := map[string]any{"_key": "u1", "user": "u1", "clicks": 2.0, "pages": []any{"/a", "/b"}, "from": float64(minute0.UnixMilli())}
	if mustJSON(out[0]) != mustJSON(want) {
		t.Errorf("got %v, want %v", out[0], want)
	}
}

// TestAggregateSlidingInMemory: a window: {sliding} step aggregates over
// the windows the records define, Kafka's sliding windows, with the bounds
// in window_start and window_end (end inclusive).
func TestAggregateSlidingInMemory(t *testing.T) {
	src := `name: bursts
input: {topics: [clicks], format: string}
pipeline:
  - window: {sliding: 1m, grace: 10s, retention: 1h}
  - aggregate: {clicks: count, pages: {collect: value}}
output: {topic: bursts}
`
	d := driver(t, src)
	pipeAt(t, d, "clicks", 0, "u1", "/a")
	pipeAt(t, d, "clicks", 30*time.Second, "u1", "/b")
	pipeAt(t, d, "clicks", 90*time.Second, "u1", "/c")
	pipeAt(t, d, "clicks", 85*time.Second, "u1", "/d") // out of order, within grace
	type win struct{ start, end time.Duration }
	got := map[win]string{}
	for _, o := range decodeOut(t, d.Output("bursts")) {
		w := win{time.Duration(o["window_start"].(float64)-float64(minute0.UnixMilli())) * time.Millisecond,
			time.Duration(o["window_end"].(float64)-float64(minute0.UnixMilli())) * time.Millisecond}
		got[w] = mustJSON(o["pages"])
	}
	s, ms := time.Second, time.Millisecond
	want := map[win]string{
		{-60 * s, 0}:            `["/a"]`,
		{ms, 60*s + ms}:         `["/b"]`,           // right window of /a
		{-30 * s, 30 * s}:       `["/a","/b"]`,      // left window of /b
		{30*s + ms, 90*s + ms}:  `["/c","/d"]`,      // right window of /b
		{30 * s, 90 * s}:        `["/b","/c","/d"]`, // left window of /c
		{25 * s, 85 * s}:        `["/b","/d"]`,      // left window of /d
		{85*s + ms, 145*s + ms}: `["/c"]`,           // right window of /d
	}
	if mustJSON(fmt.Sprint(got)) != mustJSON(fmt.Sprint(want)) {
		t.Errorf("windows\n%v\nwant\n%v", got, want)
	}
}

func TestAggregateUnwindowedByKey(t *testing.T) {
	src := `name: totals
input: {topics: [orders]}
pipeline:
  - map: '{"amount": value.amount, "at": timestamp.Unix()}'
  - aggregate: {n: {count: value.amount}, first_seen: {min: value.at}, total: {sum: value.amount}}
output: {topic: totals}
errors: {mode: dead_letter, topic: orders-dlq}
`
	d := driver(t, src)
	pipeAt(t, d, "orders", time.Second, "k1", `{"amount": 2}`)
	pipeAt(t, d, "orders", 2*time.Second, "k1", `{"note": "no amount"}`)
	pipeAt(t, d, "orders", 3*time.Second, "", `{"amount": 5}`)      // no key: dead letter
	pipeAt(t, d, "orders", 4*time.Second, "k1", `{"amount": "7"}`)  // not a number: dead letter
	pipeAt(t, d, "orders", 5*time.Second, "k2", `{"amount": 1.25}`) // second group
	out := decodeOut(t, d.Output("totals"))
	if len(out) != 3 {
		t.Fatalf("outputs %v, want 3", out)
	}
	want := map[string]any{"_key": "k1", "n": 1.0, "first_seen": float64(minute0.Add(time.Second).Unix()), "total": 2.0}
	if mustJSON(out[1]) != mustJSON(want) {
		t.Errorf("k1 after a record without amount = %v, want %v", out[1], want)
	}
	if out[2]["_key"] != "k2" || out[2]["total"] != 1.25 {
		t.Errorf("k2 = %v", out[2])
	}
	dlq := d.Output("orders-dlq")
	if len(dlq) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dlq))
	}
	for i, want := range []struct{ msg, value string }{
		{"group key is null", `{"amount": 5}`},
		{"aggregate total: value is a string, not a number", `{"amount": "7"}`},
	} {
		h := map[string]string{}
		for _, x := range dlq[i].Headers {
			h[x.Key] = string(x.Value)
		}
		// Both fail before grouping: the dead letter is the input record.
		if !strings.Contains(h[streams.HeaderErrorMessage], want.msg) || h[streams.HeaderErrorStage] != "step 2 (aggregate)" ||
			h[streams.HeaderErrorTopic] != "orders" || string(dlq[i].Value) != want.value {
			t.Errorf("dead letter %d: %s with headers %v, want %s failing with %q", i, dlq[i].Value, h, want.value, want.msg)
		}
	}
	// The state survives in the store: the changelog holds every update.
	if n := len(d.Output("totals-aggregate-changelog")); n != 3 {
		t.Errorf("%d changelog records, want 3", n)
	}
}

// TestAggregateAfterKeyStep: grouping by a key a key step set goes
// through the aggregate's repartition topic (looped back by the driver).
func TestAggregateAfterKeyStep(t *testing.T) {
	src := `name: by-region
input: {topics: [orders]}
pipeline:
  - key: value.region
  - aggregate: {orders: count, customers: {collect: key}}
  - map: '{"region": key, "orders": value.orders, "keys": value.customers}'
output: {topic: per-region}
`
	d := driver(t, src)
	pipeAt(t, d, "orders", 0, "ann", `{"region": "eu"}`)
	pipeAt(t, d, "orders", 0, "bob", `{"region": "us"}`)
	pipeAt(t, d, "orders", 0, "cyd", `{"region": "eu"}`)
	out := d.Output("per-region")
	if len(out) != 3 {
		t.Fatalf("%d results, want 3", len(out))
	}
	if got := string(out[2].Key) + " " + string(out[2].Value); got != `eu {"keys":["eu","eu"],"orders":2,"region":"eu"}` {
		t.Errorf("last result %s", got)
	}
}

func TestStatefulRejections(t *testing.T) {
	head := "name: bad\ninput: {topics: [in]}\noutput: {topic: out}\npipeline:\n"
	cases := []struct {
		name, pipeline string
		want           []string // substrings of the one-line error
	}{
		{"window without aggregate", "  - window: {tumbling: 1m}\n  - map: value\n",
			[]string{"step 1 (window) at line 5", "window needs an aggregate step right after it"}},
		{"window last", "  - filter: true\n  - window: {tumbling: 1m}\n",
			[]string{"step 2 (window) at line 6", "window needs an aggregate"}},
		{"unknown function", "  - aggregate: {n: count, m: {median: value.x}}\n",
			[]string{"step 1 (aggregate) at line 5, column 30", `unknown function "median"`, "count, sum, min"}},
		{"emit in aggregate", "  - aggregate: {n: count, emit: final}\n",
			[]string{"at line 5", "emit belongs in a window step"}},
		{"unknown bare function", "  - aggregate: {n: counts}\n",
			[]string{"step 1 (aggregate) at line 5, column 20", `unknown function "counts"`}},
		{"function without expression", "  - aggregate: {n: sum}\n",
			[]string{"at line 5", "sum needs an expression"}},
		{"two functions", "  - aggregate:\n      n: {sum: value.x, max: value.x}\n",
			[]string{"at line 6", "aggregate n: want one function"}},
		{"empty aggregate", "  - aggregate: {}\n",
			[]string{"step 1 (aggregate)", "aggregate needs a map of output: function"}},
		{"bad expression", "  - aggregate: {t: {sum: value.x +}}\n",
			[]string{"pipeline step 1 (aggregate) aggregate t at line 5", "expression error"}},
		{"group_by after aggregate", "  - aggregate: {n: count}\n  - group_by: value.x\n",
			[]string{"step 2 (group_by) at line 6", "group_by after aggregate: only filter and map"}},
		{"key after aggregate", "  - aggregate: {n: count}\n  - key: value.x\n",
			[]string{"step 2 (key) at line 6", "key after aggregate"}},
		{"second aggregate", "  - aggregate: {n: count}\n  - aggregate: {m: count}\n",
			[]string{"step 2 (aggregate)", "aggregate after aggregate"}},
		{"group_by alone", "  - group_by: value.x\n  - map: value\n",
			[]string{"step 1 (group_by) at line 5", "group_by needs a window or aggregate step right after it"}},
		{"window before group_by", "  - window: {tumbling: 1m}\n  - group_by: value.x\n  - aggregate: {n: count}\n",
			[]string{"step 1 (window)", "window needs an aggregate step right after it"}},
		{"hopping advance > size", "  - window: {hopping: {size: 1m, advance: 5m}}\n  - aggregate: {n: count}\n",
			[]string{"step 1 (window) at line 5", "hopping advance 5m0s is longer than size 1m0s"}},
		{"hopping missing advance", "  - window: {hopping: {size: 1m}}\n  - aggregate: {n: count}\n",
			[]string{"at line 5", "hopping needs {size: DURATION, advance: DURATION}"}},
		{"bad duration", "  - window:\n      tumbling: 1 minute\n  - aggregate: {n: count}\n",
			[]string{"step 1 (window) at line 6, column 17", `tumbling 1 minute: want a duration such as 1m`}},
		{"number duration", "  - window: {tumbling: 60}\n  - aggregate: {n: count}\n",
			[]string{"at line 5", "tumbling 60: want a duration"}},
		{"zero size", "  - window: {tumbling: 0s}\n  - aggregate: {n: count}\n",
			[]string{"tumbling 0s: must be positive"}},
		{"negative grace", "  - window: {tumbling: 1m, grace: -1s}\n  - aggregate: {n: count}\n",
			[]string{"grace -1s: must not be negative"}},
		{"zero grace is fine, zero advance is not", "  - window: {hopping: {size: 1m, advance: 0s}, grace: 0s}\n  - aggregate: {n: count}\n",
			[]string{"at line 5", "hopping advance 0s: must be positive"}},
		{"sub-millisecond", "  - window: {tumbling: 1500us}\n  - aggregate: {n: count}\n",
			[]string{"whole milliseconds"}},
		{"two kinds", "  - window: {tumbling: 1m, hopping: {size: 2m, advance: 1m}}\n  - aggregate: {n: count}\n",
			[]string{"window needs exactly one of tumbling, hopping, sliding or session"}},
		{"sliding and tumbling", "  - window: {sliding: 1m, tumbling: 1m}\n  - aggregate: {n: count}\n",
			[]string{"window needs exactly one of tumbling, hopping, sliding or session"}},
		{"sliding zero", "  - window: {sliding: 0s, grace: 10s}\n  - aggregate: {n: count}\n",
			[]string{"step 1 (window) at line 5", "sliding 0s: must be positive"}},
		{"sliding map", "  - window: {sliding: {size: 1m}}\n  - aggregate: {n: count}\n",
			[]string{"sliding map[size:1m]: want a duration such as 1m"}},
		{"retention too short", "  - window: {tumbling: 1m, grace: 10s, retention: 1m}\n  - aggregate: {n: count}\n",
			[]string{"at line 5", "retention 1m0s is shorter than the windows need", "1m10s"}},
		{"sliding retention too short", "  - window: {sliding: 1m, grace: 10s, retention: 2m}\n  - aggregate: {n: count}\n",
			[]string{"retention 2m0s is shorter than the windows need", "2m10s"}},
		{"session retention", "  - window: {session: {gap: 1m}, retention: 1h}\n  - aggregate: {n: count}\n",
			[]string{"retention applies to tumbling, hopping and sliding windows, not sessions"}},
		{"zero retention", "  - window: {tumbling: 1m, retention: 0s}\n  - aggregate: {n: count}\n",
			[]string{"retention 0s: must be positive"}},
		{"no kind", "  - window: {grace: 1m}\n  - aggregate: {n: count}\n",
			[]string{"window needs exactly one of"}},
		{"unknown window key", "  - window: {tumbling: 1m, size: 2m}\n  - aggregate: {n: count}\n",
			[]string{`window: unknown key "size"`}},
		{"bad emit", "  - window: {tumbling: 1m, emit: always}\n  - aggregate: {n: count}\n",
			[]string{"emit always: want updates"}},
		{"session without gap", "  - window: {session: 30m}\n  - aggregate: {n: count}\n",
			[]string{"step 1 (window) at line 5", "session needs {gap: DURATION}"}},
		{"session zero gap", "  - window: {session: {gap: 0s}}\n  - aggregate: {n: count}\n",
			[]string{"at line 5", "session gap 0s: must be positive"}},
		{"session and tumbling", "  - window: {session: {gap: 1m}, tumbling: 1m}\n  - aggregate: {n: count}\n",
			[]string{"window needs exactly one of tumbling, hopping, sliding or session"}},
		{"join unknown key", "  - join: {table: customers, on: key}\n",
			[]string{"step 1 (join) at line 5", `join: unknown key "on" (want table or stream`}},
		{"join unknown type", "  - join:\n      table: customers\n      type: outer\n",
			[]string{"step 1 (join) at line 7, column 13", "join type outer: want inner", "or left"}},
		{"join without table", "  - join: {type: left, as: c}\n",
			[]string{"step 1 (join) at line 5", "join needs a table, {table: TOPIC}, or a stream"}},
		{"join table not a topic", "  - join: {table: [a, b]}\n",
			[]string{"step 1 (join) at line 5", "join table [a b]: want a topic name"}},
		{"join after aggregate", "  - aggregate: {n: count}\n  - join: {table: customers}\n",
			[]string{"step 2 (join) at line 6", "join after aggregate: only filter and map may follow an aggregate"}},
		{"join stream without within", "  - join: {stream: payments, as: p}\n",
			[]string{"step 1 (join) at line 5", "join stream payments needs within: DURATION"}},
		{"join stream bad within", "  - join: {stream: payments, within: soon}\n",
			[]string{"step 1 (join) at line 5, column 38", "within soon: want a duration"}},
		{"join table and stream", "  - join: {stream: payments, table: customers, within: 1m}\n",
			[]string{"step 1 (join) at line 5", "join takes a table or a stream, not both"}},
		{"join table with window", "  - join: {table: customers, within: 1m}\n",
			[]string{"step 1 (join) at line 5", "a table join has no window"}},
		{"join stream with itself", "  - join: {stream: in, within: 1m}\n",
			[]string{"step 1 (join) at line 5", "join stream in is an input topic"}},
		{"join bad key expression", "  - join: {table: customers, key: value.x +}\n",
			[]string{"pipeline step 1 (join) join key at line 5", "expression error"}},
		{"two joins, one name", "  - join: {table: customers}\n  - join: {table: sellers}\n",
			[]string{"step 2 (join) at line 6", `name "join" is taken by step 1`}},
		{"join name not a topic name", "  - name: with customer\n    join: {table: customers}\n",
			[]string{`name "with customer": the join step's name is part of its topics' names`}},
		{"window bound as output name", "  - window: {tumbling: 1m}\n  - aggregate: {window_start: count}\n",
			[]string{"step 2 (aggregate) at line 6", "aggregate output window_start: the name is taken"}},
		{"name not a topic name", "  - name: per customer\n    aggregate: {n: count}\n",
			[]string{`step 1 (per customer)`, `name "per customer": the aggregate step's name is part of its topics' names`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(head + c.pipeline))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestAggregateAvroOutput: results written with an Avro schema — counts
// are longs, sums doubles, the window bounds longs.
func TestAggregateAvroOutput(t *testing.T) {
	url := registrytest.Start(t)
	const avsc = `{"type": "record", "name": "PerMinute", "fields": [
  {"name": "orders", "type": "long"}, {"name": "total", "type": "double"},
  {"name": "window_start", "type": "long"}, {"name": "window_end", "type": "long"}]}`
	j, err := Parse([]byte(`name: per-minute
schema_registry: {url: '` + url + `'}
input: {topics: [orders]}
pipeline:
  - group_by: value.customer
  - window: {tumbling: 1m}
  - aggregate: {orders: count, total: {sum: value.amount}}
output: {topic: per-minute, format: avro, schema: '` + avsc + `'}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if err := j.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	pipeAt(t, d, "orders", time.Second, "", `{"customer": "ann", "amount": 2.5}`)
	pipeAt(t, d, "orders", 2*time.Second, "", `{"customer": "ann", "amount": 4}`)
	out := d.Output("per-minute")
	if len(out) != 2 {
		t.Fatalf("%d results, want 2", len(out))
	}
	got, _, err := serde.Decode(ctx, newRegistryClient(t, url), out[1].Value)
	if err != nil {
		t.Fatal(err)
	}
	start := minute0.UnixMilli()
	want := map[string]any{"orders": int64(2), "total": 6.5, "window_start": start, "window_end": start + 60_000}
	if !reflect.DeepEqual(got, want) || string(out[1].Key) != "ann" {
		t.Fatalf("result %s=%#v, want ann=%#v", out[1].Key, got, want)
	}
}

// TestSessionizedClicksInMemory is the sessionized-clicks job:
// clicks keyed by user cut into sessions of inactivity 30s (grace 20s,
// every fourth click 15s out of order), one final result per session,
// checked against sessions computed from the sorted clicks.
func TestSessionizedClicksInMemory(t *testing.T) {
	src := `name: sessions
input: {topics: [clicks]}
pipeline:
  - window: {session: {gap: 30s}, grace: 20s, emit: final}
  - aggregate: {clicks: count, pages: {collect: value.page}, first_ms: {min: timestamp.UnixMilli()}}
  - map: '{"user": key, "clicks": value.clicks, "pages": len(value.pages), "start": value.window_start, "end": value.window_end, "first": value.first_ms}'
output: {topic: user-sessions}
`
	d := driver(t, src)
	type click struct {
		user string
		at   time.Duration
	}
	var clicks []click
	users := []string{"ann", "bob", "cyd"}
	at := time.Duration(0)
	for i := range 600 {
		// Mostly 1–10s apart per user, with a 40–70s pause every 17th click.
		at += time.Duration(1+i%7) * time.Second / 3
		if i%17 == 16 {
			at += time.Duration(40+i%31) * time.Second
		}
		clicks = append(clicks, click{users[i*5%len(users)], at})
	}
	arrival := slices.Clone(clicks)
	for i := 3; i < len(arrival); i += 4 {
		arrival[i].at -= 15 * time.Second // out of order, within grace
	}
	for i, c := range arrival {
		pipeAt(t, d, "clicks", c.at, c.user, fmt.Sprintf(`{"page": "/p%d"}`, i))
	}
	// The closer moves stream time past every session's close.
	pipeAt(t, d, "clicks", at+10*time.Minute, "closer", `{"page": "/"}`)

	type session struct {
		user       string
		start, end int64
		clicks     int
	}
	var want []session
	byUser := map[string][]int64{}
	for _, c := range arrival {
		byUser[c.user] = append(byUser[c.user], minute0.Add(c.at).UnixMilli())
	}
	for _, u := range users {
		ts := byUser[u]
		slices.Sort(ts)
		cur := session{user: u, start: ts[0], end: ts[0], clicks: 1}
		for _, x := range ts[1:] {
			if x-cur.end > 30_000 {
				want = append(want, cur)
				cur = session{user: u, start: x, end: x}
			}
			cur.end = x
			cur.clicks++
		}
		want = append(want, cur)
	}
	var got []session
	for _, o := range decodeOut(t, d.Output("user-sessions")) {
		s := session{user: o["user"].(string), start: int64(o["start"].(float64)), end: int64(o["end"].(float64)), clicks: int(o["clicks"].(float64))}
		if int(o["pages"].(float64)) != s.clicks || int64(o["first"].(float64)) != s.start {
			t.Errorf("session %+v: %v pages, first click %v", s, o["pages"], o["first"])
		}
		got = append(got, s)
	}
	order := func(a, b session) int {
		return cmp.Or(strings.Compare(a.user, b.user), cmp.Compare(a.start, b.start))
	}
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if len(want) < 20 || !slices.Equal(got, want) {
		t.Fatalf("sessions:\n got %v\nwant %v", got, want)
	}
	if n := d.Stats().LateDropped; n != 0 {
		t.Errorf("%d clicks dropped late, want none", n)
	}
}
