package job

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

// eventStart is where the broker tests' event time begins (a minute
// boundary, so windows are easy to read in failures).
var eventStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type windowResult struct {
	Key         string
	WindowStart int64 `json:"window_start"`
	WindowEnd   int64 `json:"window_end"`
	Orders      int64 `json:"orders"`
	Total       float64
	Clicks      int64  `json:"clicks"`
	LastPage    string `json:"last_page"`
}

func decodeResults(t *testing.T, rs []*kgo.Record) []windowResult {
	t.Helper()
	out := make([]windowResult, len(rs))
	for i, r := range rs {
		if err := json.Unmarshal(r.Value, &out[i]); err != nil {
			t.Fatalf("result %s: %v", r.Value, err)
		}
		out[i].Key = string(r.Key)
		if out[i].WindowEnd-out[i].WindowStart != time.Minute.Milliseconds() {
			t.Fatalf("result %s: not a one-minute window", r.Value)
		}
	}
	return out
}

type groupWindow struct {
	key   string
	start int64
}

// TestOrdersPerCustomerPerMinute is the orders job: orders
// re-keyed by customer (through a repartition topic), counted and summed
// per customer and tumbling minute, with every ninth order 6s out of order
// (grace 10s, so none is late). Each guarantee runs its own instance of
// the job over the same orders; each must emit one update per order whose
// last value for each customer and minute is the reference's, and
// exactly-once exactly one.
func TestOrdersPerCustomerPerMinute(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 1, "orders")
	createTopics(t, b.Addr, 1, "orders-per-minute-at_least_once", "orders-per-minute-exactly_once")

	const n = 3000
	type order struct {
		customer string
		amount   float64
		ts       time.Time
	}
	orders := make([]order, n)
	want := map[groupWindow]windowResult{}
	for i := range orders {
		o := order{customer: customers[i%len(customers)], amount: float64(i%40) + 0.25, ts: eventStart.Add(time.Duration(i) * 150 * time.Millisecond)}
		if i%9 == 4 {
			o.ts = o.ts.Add(-6 * time.Second)
		}
		orders[i] = o
		start := o.ts.UnixMilli() - o.ts.UnixMilli()%60_000
		w := want[groupWindow{o.customer, start}]
		w.Orders++
		w.Total += o.amount
		want[groupWindow{o.customer, start}] = w
	}
	produceRecords(t, b.Addr, "orders", n, func(i int) *kgo.Record {
		o := orders[i]
		return &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Timestamp: o.ts,
			Value: fmt.Appendf(nil, `{"id": %d, "customer": %q, "amount": %g}`, i, o.customer, o.amount)}
	})

	// Both jobs run at once; their outputs are checked one after the other.
	guarantees := []string{"at_least_once", "exactly_once"}
	for _, g := range guarantees {
		src := fmt.Sprintf(`name: orders-per-customer-%s
input: {topics: [orders]}
pipeline:
  - group_by: value.customer
  - window: {tumbling: 1m, grace: 10s}
  - aggregate: {orders: count, total: {sum: value.amount}}
output: {topic: orders-per-minute-%s}
guarantee: %s
commit_interval: 100ms
`, g, g, g)
		j, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		runJob(t, j, b.Addr, streams.StateDir(t.TempDir()))
	}
	start := time.Now()
	for _, g := range guarantees {
		out := decodeResults(t, consumeN(t, b.Addr, "orders-per-minute-"+g, n, 90*time.Second))
		t.Logf("%s: %d orders, %d updates, %d customer-minutes, %s", g, n, len(out), len(want), time.Since(start).Round(time.Millisecond))
		if len(out) < n || (g == "exactly_once" && len(out) != n) {
			t.Errorf("%s: %d updates for %d orders", g, len(out), n)
		}
		last := map[groupWindow]windowResult{}
		for _, r := range out {
			last[groupWindow{r.Key, r.WindowStart}] = r
		}
		if len(last) != len(want) {
			t.Errorf("%s: %d customer-minutes, want %d", g, len(last), len(want))
		}
		for k, w := range want {
			got := last[k]
			if got.Orders != w.Orders || math.Abs(got.Total-w.Total) > 1e-9 {
				t.Errorf("%s: %s at %d: orders %d total %g, want %d %g", g, k.key, k.start, got.Orders, got.Total, w.Orders, w.Total)
			}
		}
	}
}

// TestClicksPerUserPerMinuteFinal is a clicks job with tumbling windows
// (sessions: TestSessionizedClicksInMemory): clicks keyed by user,
// counted per user and minute with emit: final, at exactly-once. The job
// is stopped after the first half of the clicks and restarted on an empty
// state directory, so its open windows are restored from the changelog;
// the output must hold each closed window exactly once, as the reference
// computes it.
func TestClicksPerUserPerMinuteFinal(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 1, "clicks", "clicks-per-minute")
	src := `name: clicks-per-user
input: {topics: [clicks]}
pipeline:
  - window: {tumbling: 1m, grace: 5s, emit: final}
  - aggregate: {clicks: count, last_page: {latest: value.page}}
output: {topic: clicks-per-minute}
guarantee: exactly_once
commit_interval: 100ms
`
	j, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"u1", "u2", "u3", "u4", "u5"}
	type click struct {
		user, page string
		ts         time.Time
	}
	const n = 2000
	clicks := make([]click, n+1)
	for i := 0; i < n; i++ {
		c := click{user: users[(i*7/3)%len(users)], page: fmt.Sprintf("/p%d", i%13), ts: eventStart.Add(time.Duration(i) * 400 * time.Millisecond)}
		if i%5 == 2 {
			c.ts = c.ts.Add(-3 * time.Second)
		}
		clicks[i] = c
	}
	// The last click moves stream time past every earlier window's close.
	clicks[n] = click{user: "closer", page: "/", ts: clicks[n-1].ts.Add(2 * time.Minute)}

	// reference: the final results of the windows closed once clicks[:upto]
	// are processed.
	reference := func(upto int) map[groupWindow]windowResult {
		all, closed := map[groupWindow]windowResult{}, int64(0)
		for _, c := range clicks[:upto] {
			ts := c.ts.UnixMilli()
			k := groupWindow{c.user, ts - ts%60_000}
			r := all[k]
			r.Clicks++
			r.LastPage = c.page
			all[k] = r
			closed = max(closed, ts-5_000)
		}
		for k := range all {
			if k.start+60_000 > closed {
				delete(all, k)
			}
		}
		return all
	}
	record := func(i int) *kgo.Record {
		c := clicks[i]
		return &kgo.Record{Key: []byte(c.user), Timestamp: c.ts, Value: fmt.Appendf(nil, `{"page": %q}`, c.page)}
	}
	check := func(out []windowResult, want map[groupWindow]windowResult) {
		t.Helper()
		seen := map[groupWindow]bool{}
		for _, r := range out {
			k := groupWindow{r.Key, r.WindowStart}
			w, ok := want[k]
			if !ok || seen[k] {
				t.Fatalf("result %+v: not expected or twice (seen %v)", r, seen[k])
			}
			seen[k] = true
			if r.Clicks != w.Clicks || r.LastPage != w.LastPage {
				t.Errorf("%s at %d: clicks %d last page %s, want %d %s", k.key, k.start, r.Clicks, r.LastPage, w.Clicks, w.LastPage)
			}
		}
		if len(out) != len(want) {
			t.Fatalf("%d results, want %d", len(out), len(want))
		}
	}

	half := n / 2
	produceRecords(t, b.Addr, "clicks", half, record)
	stop := runJob(t, j, b.Addr, streams.StateDir(t.TempDir()))
	want := reference(half)
	check(decodeResults(t, consumeN(t, b.Addr, "clicks-per-minute", len(want), 60*time.Second)), want)
	stop()

	produceRecords(t, b.Addr, "clicks", n+1-half, func(i int) *kgo.Record { return record(half + i) })
	runJob(t, j, b.Addr, streams.StateDir(t.TempDir()))
	want = reference(n + 1)
	check(decodeResults(t, consumeN(t, b.Addr, "clicks-per-minute", len(want), 60*time.Second)), want)
}
