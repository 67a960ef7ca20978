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
