package streams_test

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// fkReference is the reference computation of a foreign-key join: the
// tables as produced so far and the joined table they give.
type fkReference struct {
	orders    map[string]string // order id → "<customer>|<customer>:<order>.<version>"
	customers map[string]string // customer id → "<customer>.<version>"
}

// want returns the inner or left join of the tables, "<item>@<name>" by
// order id (fkTopology's joiners).
func (ref *fkReference) want(left bool) map[string]string {
	out := map[string]string{}
	for o, v := range ref.orders {
		c, item, _ := strings.Cut(v, "|")
		switch name, ok := ref.customers[c]; {
		case ok:
			out[o] = item + "@" + name
		case left:
			out[o] = item + "@nil"
		}
	}
	return out
}

// joinedTable follows a table topic written with ToTopic: the last value
// of each key, tombstones deleting.
type joinedTable struct {
	reader *committedReader
	name   string
	table  map[string]string
	seen   int
}

// converge reads until the table equals want, failing after timeout with
// the differences. Every record must join an order with its own
// customer's row ("c5:o3.2@c5.1"), never another one's.
func (j *joinedTable) converge(t *testing.T, want map[string]string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !maps.Equal(j.table, want) {
		if time.Now().After(deadline) {
			var diffs []string
			for k := range want {
				if j.table[k] != want[k] {
					diffs = append(diffs, fmt.Sprintf("%s: got %q want %q", k, j.table[k], want[k]))
				}
			}
			for k, v := range j.table {
				if _, ok := want[k]; !ok {
					diffs = append(diffs, fmt.Sprintf("%s: got %q, want none", k, v))
				}
			}
			sort.Strings(diffs)
			t.Fatalf("%s after %v (%d records): %d keys differ from the reference, e.g. %v", j.name, timeout, j.seen, len(diffs), diffs[:min(5, len(diffs))])
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		j.reader.cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			j.seen++
			if r.Value == nil {
				delete(j.table, string(r.Key))
				return
			}
			item, name, _ := strings.Cut(string(r.Value), "@")
			ic, _, _ := strings.Cut(item, ":")
			nc, _, _ := strings.Cut(name, ".")
			if name != "nil" && ic != nc {
				t.Errorf("%s: %s joined with another customer's row: %q", j.name, r.Key, r.Value)
			}
			j.table[string(r.Key)] = string(r.Value)
		})
		cancel()
	}
}

// TestForeignKeyJoinOverBroker: orders (3 partitions) joined by customer
// id with customers (2 partitions, so not co-partitioned) by two
// instances, exactly-once and at-least-once, inner and left: after each
// phase, the joined tables (last value per order in the output topics)
// equal the reference computation. Mid-stream customers are updated,
// deleted and created, orders change customer, change otherwise and are
// deleted, produced without waiting for the App in between; then a new
// instance without state takes over from restored stores.
func TestForeignKeyJoinOverBroker(t *testing.T) {
	t.Run("exactly-once", func(t *testing.T) { testForeignKeyJoinOverBroker(t, streams.ExactlyOnceV2) })
	t.Run("at-least-once", func(t *testing.T) { testForeignKeyJoinOverBroker(t, streams.AtLeastOnce) })
}

func testForeignKeyJoinOverBroker(t *testing.T, guarantee streams.Guarantee) {
	b := startBroker(t)
	createTopic(t, b.Addr, "orders", 3)
	createTopic(t, b.Addr, "customers", 2)
	createTopic(t, b.Addr, "inner", 3)
	createTopic(t, b.Addr, "left", 3)
	top := fkTopology()
	opts := []streams.Opt{streams.Brokers(b.Addr), streams.ApplicationID("shop"),
		streams.WithGuarantee(guarantee), streams.CommitInterval(100 * time.Millisecond)}
	apps, stop := runInstances(t, 2, top, opts...)
	waitMembers(t, b.Addr, "shop", 2)
	inner := &joinedTable{reader: newCommittedReader(t, b.Addr, "inner"), name: "inner", table: map[string]string{}}
	left := &joinedTable{reader: newCommittedReader(t, b.Addr, "left"), name: "left", table: map[string]string{}}

	ref := &fkReference{orders: map[string]string{}, customers: map[string]string{}}
	produce := func(topic string, m map[string]string, from, to int, kv func(i int) (string, []byte)) {
		t.Helper()
		if err := produceEach(b.Addr, from, to, func(i int) *kgo.Record {
			k, v := kv(i)
			if v == nil {
				delete(m, k)
			} else {
				m[k] = string(v)
			}
			return &kgo.Record{Topic: topic, Key: []byte(k), Value: v}
		}); err != nil {
			t.Fatal(err)
		}
	}
	customer := func(version int) func(i int) (string, []byte) {
		return func(i int) (string, []byte) { return fmt.Sprintf("c%d", i), fmt.Appendf(nil, "c%d.%d", i, version) }
	}
	deleted := func(prefix string) func(i int) (string, []byte) {
		return func(i int) (string, []byte) { return fmt.Sprintf("%s%d", prefix, i), nil }
	}
	order := func(version int, cust func(i int) int) func(i int) (string, []byte) {
		return func(i int) (string, []byte) {
			c := cust(i)
			return fmt.Sprintf("o%d", i), fmt.Appendf(nil, "c%d|c%d:o%d.%d", c, c, i, version)
		}
	}

	t0 := time.Now()
	// Phase 1: 30 customers, 300 orders of 40 customers (c30..c39 missing).
	produce("customers", ref.customers, 0, 30, customer(1))
	produce("orders", ref.orders, 0, 300, order(1, func(i int) int { return i % 40 }))
	inner.converge(t, ref.want(false), 60*time.Second)
	left.converge(t, ref.want(true), 60*time.Second)
	t.Logf("phase 1 joined in %v (%d inner, %d left records)", time.Since(t0), inner.seen, left.seen)

	// Phase 2, mid-stream: customers change, go and come; orders change
	// customer, change otherwise, go.
	t1 := time.Now()
	produce("customers", ref.customers, 0, 10, customer(2))
	produce("orders", ref.orders, 0, 100, order(2, func(i int) int { return (i*7 + 3) % 40 }))
	produce("customers", ref.customers, 20, 25, deleted("c"))
	produce("orders", ref.orders, 100, 120, deleted("o"))
	produce("customers", ref.customers, 30, 35, customer(1))
	produce("orders", ref.orders, 120, 140, order(2, func(i int) int { return i % 40 }))
	produce("customers", ref.customers, 5, 15, customer(3))
	produce("orders", ref.orders, 0, 20, order(3, func(i int) int { return i * 3 % 40 }))
	produce("customers", ref.customers, 0, 3, deleted("c"))
	produce("orders", ref.orders, 300, 320, order(1, func(i int) int { return i % 7 }))
	inner.converge(t, ref.want(false), 60*time.Second)
	left.converge(t, ref.want(true), 60*time.Second)
	t.Logf("phase 2 joined in %v (%d inner, %d left records in all)", time.Since(t1), inner.seen, left.seen)

	// The internal topics have the partition counts of the tables' topics.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "shop-fk-subscription-registration", "shop-fk-subscription-response",
		"shop-fk-subscription-store-changelog", "shop-fk-response-store-changelog")
	if err != nil {
		t.Fatal(err)
	}
	for tp, want := range map[string]int{"shop-fk-subscription-registration": 2, "shop-fk-subscription-response": 3,
		"shop-fk-subscription-store-changelog": 2, "shop-fk-response-store-changelog": 3} {
		if got := len(topics[tp].Partitions); got != want {
			t.Errorf("%s has %d partitions, want %d", tp, got, want)
		}
	}
	checkAllProcessed(t, apps)

	// Phase 3: both instances stop; a new one without state restores the
	// join's stores from their changelogs, so customer updates still
	// reach their orders (from the restored subscription store) and
	// answers to older order values are still told apart (the restored
	// response store).
	stop()
	t2 := time.Now()
	fresh, _ := runInstances(t, 1, top, opts...)
	produce("customers", ref.customers, 10, 20, customer(4))
	produce("orders", ref.orders, 200, 230, order(3, func(i int) int { return (i + 5) % 40 }))
	produce("customers", ref.customers, 25, 28, deleted("c"))
	produce("orders", ref.orders, 230, 240, deleted("o"))
	inner.converge(t, ref.want(false), 60*time.Second)
	left.converge(t, ref.want(true), 60*time.Second)
	t.Logf("phase 3 (restored) joined in %v (%d inner, %d left records in all)", time.Since(t2), inner.seen, left.seen)
	if st := fresh[0].Stats(); st.RestoredRecords == 0 {
		t.Error("the new instance restored nothing")
	}
}

// runInstances runs n instances of top, each with a new state directory
// and the test's logger, until stop or the test's end. All are created
// before any runs: NewApp binds the topology, which running Apps read.
func runInstances(t *testing.T, n int, top *streams.Topology, opts ...streams.Opt) (apps []*streams.App, stop func()) {
	t.Helper()
	for range n {
		app, err := streams.NewApp(top, append([]streams.Opt{streams.StateDir(t.TempDir()), streams.Logger(testLogger(t))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		apps = append(apps, app)
	}
	var stops []func()
	for _, app := range apps {
		stops = append(stops, runApp(t, app))
	}
	return apps, func() {
		for _, s := range stops {
			s()
		}
	}
}

// checkAllProcessed fails the test if an instance processed no record.
func checkAllProcessed(t *testing.T, apps []*streams.App) {
	t.Helper()
	for i, app := range apps {
		if app.Stats().RecordsIn == 0 {
			t.Errorf("instance %d processed nothing", i)
		}
	}
}
