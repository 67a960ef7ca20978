package job

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

// enriched is one output of the broker join job.
type enriched struct {
	ID       int    `json:"id"`
	Customer string `json:"customer"`
	Name     any    `json:"name"`
	Version  int    `json:"version"`
}

// outputReader reads a topic's committed records from the start as they
// come.
type outputReader struct {
	t   *testing.T
	cl  *kgo.Client
	out []enriched
}

func newOutputReader(t *testing.T, addr, topic string) *outputReader {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &outputReader{t: t, cl: cl}
}

// waitFor polls until done holds for the records read so far.
func (o *outputReader) waitFor(what string, timeout time.Duration, done func([]enriched) bool) {
	o.t.Helper()
	deadline := time.Now().Add(timeout)
	for !done(o.out) {
		if time.Now().After(deadline) {
			o.t.Fatalf("%s: not after %s (%d outputs)", what, timeout, len(o.out))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := o.cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			var e enriched
			if err := json.Unmarshal(r.Value, &e); err != nil {
				o.t.Fatalf("output %s: %v", r.Value, err)
			}
			o.out = append(o.out, e)
		})
	}
}

// TestEnrichOrdersBroker is a left join of orders (keyed by customer) with
// the customers table on a real broker at exactly-once, both topics with
// two partitions. The table is loaded, half the orders joined, three
// customers updated, the other half joined; one customer never exists.
// Every order must come out exactly once with the customer version the
// table held when it was produced. Probe orders (negative ids) show when
// the job has read the table up to a version.
func TestEnrichOrdersBroker(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 2, "customers", "orders")
	createTopics(t, b.Addr, 1, "enriched")
	known := customers[:len(customers)-1] // the last customer has no row
	produceCustomers := func(names []string, version int) {
		produceRecords(t, b.Addr, "customers", len(names), func(i int) *kgo.Record {
			return &kgo.Record{Key: []byte(names[i]), Value: fmt.Appendf(nil, `{"name": "%s v%d", "version": %d}`, names[i], version, version)}
		})
	}
	produceCustomers(known, 1)

	j, err := Parse([]byte(`name: enrich-orders
input: {topics: [orders]}
pipeline:
  - join: {table: customers, type: left, as: customer}
  - map: '{"id": value.id, "customer": key, "name": value.customer?.name, "version": value.customer == nil ? 0 : value.customer.version}'
output: {topic: enriched}
guarantee: exactly_once
commit_interval: 100ms
`))
	if err != nil {
		t.Fatal(err)
	}
	runJob(t, j, b.Addr, streams.StateDir(t.TempDir()))
	out := newOutputReader(t, b.Addr, "enriched")

	probeID := 0
	// sync sends probes until each known customer's latest probe shows
	// version(customer).
	sync := func(version func(string) int) {
		t.Helper()
		for round := 0; ; round++ {
			produceRecords(t, b.Addr, "orders", len(known), func(i int) *kgo.Record {
				probeID--
				return &kgo.Record{Key: []byte(known[i]), Value: fmt.Appendf(nil, `{"id": %d}`, probeID)}
			})
			first := probeID + len(known) - 1
			inRound := func(e enriched) bool { return e.ID <= first && e.ID >= probeID }
			out.waitFor("probes", 60*time.Second, func(es []enriched) bool {
				n := 0
				for _, e := range es {
					if inRound(e) {
						n++
					}
				}
				return n == len(known)
			})
			var behind []enriched
			for _, e := range out.out {
				if inRound(e) && e.Version != version(e.Customer) {
					behind = append(behind, e)
				}
			}
			if len(behind) == 0 {
				return
			}
			if round == 100 {
				t.Fatalf("the job never read the customers table: probes %+v", behind)
			}
		}
	}
	const n = 2000
	updated := map[string]bool{known[0]: true, known[2]: true, known[4]: true}
	want := func(i int) (customer string, version int) {
		c := customers[i%len(customers)]
		switch {
		case c == customers[len(customers)-1]:
			return c, 0
		case i >= n && updated[c]:
			return c, 2
		}
		return c, 1
	}
	orders := func(from int) {
		produceRecords(t, b.Addr, "orders", n, func(i int) *kgo.Record {
			c, _ := want(from + i)
			return &kgo.Record{Key: []byte(c), Value: fmt.Appendf(nil, `{"id": %d}`, from+i)}
		})
	}
	ordersOut := func(upto int) func([]enriched) bool {
		return func(es []enriched) bool {
			k := 0
			for _, e := range es {
				if e.ID >= 0 && e.ID < upto {
					k++
				}
			}
			return k >= upto
		}
	}

	start := time.Now()
	sync(func(string) int { return 1 })
	orders(0)
	out.waitFor("first half", 90*time.Second, ordersOut(n))
	for c := range updated {
		produceCustomers([]string{c}, 2)
	}
	sync(func(c string) int {
		if updated[c] {
			return 2
		}
		return 1
	})
	orders(n)
	out.waitFor("second half", 90*time.Second, ordersOut(2*n))
	sync(func(c string) int { // the last probes follow every order
		if updated[c] {
			return 2
		}
		return 1
	})
	t.Logf("%d orders, %d probes, %s", 2*n, -probeID, time.Since(start).Round(time.Millisecond))

	seen := map[int]bool{}
	for _, e := range out.out {
		if e.ID < 0 {
			continue
		}
		if seen[e.ID] {
			t.Fatalf("order %d twice", e.ID)
		}
		seen[e.ID] = true
		c, v := want(e.ID)
		wantName := any(nil)
		if v > 0 {
			wantName = fmt.Sprintf("%s v%d", c, v)
		}
		if e.Customer != c || e.Version != v || e.Name != wantName {
			t.Errorf("order %d = %+v, want customer %s version %d name %v", e.ID, e, c, v, wantName)
		}
	}
	if len(seen) != 2*n {
		t.Errorf("%d orders out, want %d", len(seen), 2*n)
	}
}

// TestPaidOrdersBroker is a windowed stream-stream join on a real broker
// at exactly-once: orders and payments (two partitions each, keyed by
// customer), joined within 1m, grace 1h so that no record is late however
// the two topics interleave. A key's orders come 14s apart and payments
// 30s or 2m after their order, so each order pairs with several payments;
// the output must hold every pair of one key at most a minute apart, as
// the reference computes them, each exactly once.
func TestPaidOrdersBroker(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 2, "orders", "payments")
	createTopics(t, b.Addr, 1, "paid")
	const n = 1500
	at := func(i int) time.Time { return eventStart.Add(time.Duration(i) * 2 * time.Second) }
	payAt := func(i int) time.Time {
		if i%3 == 0 {
			return at(i).Add(2 * time.Minute)
		}
		return at(i).Add(30 * time.Second)
	}
	// Keys repeat every 7 orders; each payment carries its order's id.
	key := func(i int) []byte { return []byte(customers[i%len(customers)]) }
	produceRecords(t, b.Addr, "orders", n, func(i int) *kgo.Record {
		return &kgo.Record{Key: key(i), Timestamp: at(i), Value: fmt.Appendf(nil, `{"id": %d}`, i)}
	})
	produceRecords(t, b.Addr, "payments", n, func(i int) *kgo.Record {
		return &kgo.Record{Key: key(i), Timestamp: payAt(i), Value: fmt.Appendf(nil, `{"order": %d}`, i)}
	})
	// The reference: every pair of one key at most a minute apart.
	want := map[[2]int]bool{}
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			d := payAt(k).Sub(at(i))
			if i%len(customers) == k%len(customers) && d <= time.Minute && d >= -time.Minute {
				want[[2]int{i, k}] = true
			}
		}
	}
	j, err := Parse([]byte(`name: paid-orders
input: {topics: [orders]}
pipeline:
  - join: {stream: payments, within: 1m, grace: 1h, as: payment}
  - map: '{"id": value.id, "order": value.payment.order}'
output: {topic: paid}
guarantee: exactly_once
commit_interval: 100ms
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runJob(t, j, b.Addr, streams.StateDir(t.TempDir()))
	out := consumeN(t, b.Addr, "paid", len(want), 90*time.Second)
	t.Logf("%d orders, %d pairs, %s", n, len(out), time.Since(start).Round(time.Millisecond))
	got := map[[2]int]bool{}
	for _, r := range out {
		var v struct{ ID, Order int }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("output %s: %v", r.Value, err)
		}
		p := [2]int{v.ID, v.Order}
		if got[p] || !want[p] {
			t.Fatalf("pair %v: twice (%v) or not in the window", p, got[p])
		}
		got[p] = true
	}
	if len(got) != len(want) {
		t.Errorf("%d pairs, want %d", len(got), len(want))
	}
}
