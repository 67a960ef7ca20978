package job

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// event is one input of a join test: an order (a stream record) or a
// customer update (a table record, value "" for a tombstone).
type event struct {
	topic, key, value string
}

// referenceJoin computes a join's outputs from the events in order: each
// order gets the customer's latest value under "customer", or null (left)
// or nothing (inner) when there is none. keyOf gives the join key of an
// order.
func referenceJoin(t *testing.T, events []event, left bool, keyOf func(order map[string]any, key string) string) []map[string]any {
	t.Helper()
	table := map[string]any{}
	var out []map[string]any
	for _, e := range events {
		if e.topic == "customers" {
			if e.value == "" {
				delete(table, e.key)
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(e.value), &v); err != nil {
				t.Fatal(err)
			}
			table[e.key] = v
			continue
		}
		var order map[string]any
		if err := json.Unmarshal([]byte(e.value), &order); err != nil {
			t.Fatal(err)
		}
		k := keyOf(order, e.key)
		c, ok := table[k]
		if !ok && !left {
			continue
		}
		order["customer"] = c
		order["_key"] = k
		out = append(out, order)
	}
	return out
}

func pipeEvents(t *testing.T, src string, events []event) []map[string]any {
	t.Helper()
	d := driver(t, src)
	for i, e := range events {
		if e.value == "" {
			pipeTombstone(t, d, e.topic, e.key)
			continue
		}
		pipeAt(t, d, e.topic, time.Duration(i)*time.Second, e.key, e.value)
	}
	return decodeOut(t, d.Output("enriched"))
}

func TestJoinTableUpdatesMidStreamInMemory(t *testing.T) {
	src := `name: enrich
input: {topics: [orders]}
pipeline:
  - join: {table: customers, type: inner, as: customer}
output: {topic: enriched}
`
	events := []event{
		{"orders", "c1", `{"id": 1, "amount": 5}`}, // before any customer: dropped
		{"customers", "c1", `{"name": "Ann", "tier": "gold"}`},
		{"customers", "c2", `{"name": "Bob"}`},
		{"orders", "c1", `{"id": 2, "amount": 7}`},
		{"orders", "c2", `{"id": 3}`},
		{"customers", "c1", `{"name": "Ann B.", "tier": "platinum"}`}, // update mid-stream
		{"orders", "c1", `{"id": 4}`},
		{"customers", "c2", ""}, // deleted
		{"orders", "c2", `{"id": 5}`},
		{"orders", "c3", `{"id": 6}`},
	}
	got := pipeEvents(t, src, events)
	want := referenceJoin(t, events, false, func(_ map[string]any, key string) string { return key })
	if len(want) != 3 {
		t.Fatalf("reference has %d outputs, want 3 (orders 2, 3, 4)", len(want))
	}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("outputs\n%s\nwant\n%s", mustJSON(got), mustJSON(want))
	}
	if c := got[2]["customer"].(map[string]any); c["tier"] != "platinum" {
		t.Errorf("order 4 joined %v, want the updated customer", c)
	}
}

// TestLeftJoinRekeyedInMemory: a left join on a key expression (through
// the repartition topic), a map reading the joined field, and orders whose
// customer the table lacks keeping a null customer.
func TestLeftJoinRekeyedInMemory(t *testing.T) {
	src := `name: enrich
input: {topics: [orders]}
pipeline:
  - filter: value.customer_id != nil
  - name: by-customer
    join: {table: customers, type: left, as: customer, key: value.customer_id}
  - map: '{"id": value.id, "customer": value.customer, "name": value.customer == nil ? "unknown" : value.customer.name}'
output: {topic: enriched}
`
	events := []event{
		{"customers", "c1", `{"name": "Ann"}`},
		{"orders", "o1", `{"id": 1, "customer_id": "c1"}`},
		{"orders", "o2", `{"id": 2, "customer_id": "c9"}`}, // missing row
		{"customers", "c9", `{"name": "Cyd"}`},
		{"orders", "o3", `{"id": 3, "customer_id": "c9"}`},
		{"customers", "c1", ""},
		{"orders", "o4", `{"id": 4, "customer_id": "c1"}`},
	}
	got := pipeEvents(t, src, events)
	ref := referenceJoin(t, events, true, func(order map[string]any, _ string) string { return order["customer_id"].(string) })
	var want []map[string]any
	for _, r := range ref {
		name := "unknown"
		if c, ok := r["customer"].(map[string]any); ok {
			name = c["name"].(string)
		}
		want = append(want, map[string]any{"id": r["id"], "customer": r["customer"], "name": name, "_key": r["_key"]})
	}
	if len(want) != 4 || want[1]["name"] != "unknown" || want[2]["name"] != "Cyd" {
		t.Fatalf("reference = %s", mustJSON(want))
	}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("outputs\n%s\nwant\n%s", mustJSON(got), mustJSON(want))
	}
}

// TestJoinNonObjectValue: a record whose value is not an object fails the
// join step (here skipped by the error mode), the others pass.
func TestJoinNonObjectValue(t *testing.T) {
	src := `name: enrich
input: {topics: [orders]}
pipeline:
  - join: {table: customers, type: left}
output: {topic: enriched}
errors: {mode: skip}
`
	got := pipeEvents(t, src, []event{
		{"orders", "c1", `[1, 2]`},
		{"orders", "c1", `{"id": 2}`},
	})
	if len(got) != 1 || got[0]["id"] != 2.0 || got[0]["customers"] != nil {
		t.Errorf("outputs %s, want only order 2 with customers null", mustJSON(got))
	}
	if _, ok := got[0]["customers"]; !ok {
		t.Errorf("output %s lacks the field customers (as defaults to the table)", mustJSON(got[0]))
	}
}

func pipeTombstone(t *testing.T, d *streams.TestDriver, topic, key string) {
	t.Helper()
	if err := d.Pipe(&kgo.Record{Topic: topic, Key: []byte(key), Timestamp: minute0}); err != nil {
		t.Fatal(err)
	}
}

// timedEvent is an input of a stream-stream join test at an event time.
type timedEvent struct {
	topic, key string
	at         time.Duration
	value      string
}

// TestJoinStreamsInMemory: orders joined with payments of the same key
// within 5 minutes either way (grace 1h, so none is late), inner and left,
// against a reference that pairs every order with every payment in the
// window; the left join also emits each order that no payment matched
// once its window has closed.
func TestJoinStreamsInMemory(t *testing.T) {
	events := []timedEvent{
		{"orders", "c1", 0, `{"id": 1}`},
		{"payments", "c1", 2 * time.Minute, `{"pay": "a"}`},    // matches order 1
		{"payments", "c2", 3 * time.Minute, `{"pay": "b"}`},    // matches order 2, which comes later
		{"orders", "c2", 7 * time.Minute, `{"id": 2}`},         // payment b is 4m before
		{"orders", "c1", 7 * time.Minute, `{"id": 3}`},         // payment a is 5m before: in
		{"orders", "c1", 8 * time.Minute, `{"id": 4}`},         // 6m after a: out
		{"payments", "c1", 9 * time.Minute, `{"pay": "c"}`},    // matches orders 3 and 4 (3 also matched a)
		{"orders", "c3", 10 * time.Minute, `{"id": 5}`},        // no payment ever
		{"payments", "c9", 3 * time.Hour, `{"pay": "closer"}`}, // closes every window
	}
	const within = 5 * time.Minute
	// reference pairs each record with the earlier records of the other
	// topic within the window, in input order (every pair once, when its
	// second record arrives).
	var pairs []string
	matched := map[int]bool{}
	for i, e := range events {
		for k, o := range events[:i] {
			if o.topic == e.topic || o.key != e.key || (o.at-e.at > within || e.at-o.at > within) {
				continue
			}
			order, payment := e, o
			if e.topic == "payments" {
				order, payment = o, e
				matched[k] = true
			} else {
				matched[i] = true
			}
			pairs = append(pairs, order.key+" "+order.value+" "+payment.value)
		}
	}
	var unmatched []string
	for i, e := range events {
		if e.topic == "orders" && !matched[i] {
			unmatched = append(unmatched, e.key+" "+e.value+" null")
		}
	}
	if len(pairs) != 5 || len(unmatched) != 1 {
		t.Fatalf("reference: pairs %q, unmatched %q", pairs, unmatched)
	}
	for _, typ := range []string{"inner", "left"} {
		t.Run(typ, func(t *testing.T) {
			d := driver(t, `name: paid
input: {topics: [orders]}
pipeline:
  - join: {stream: payments, within: 5m, grace: 1h, type: `+typ+`, as: payment}
  - map: '{"id": value.id, "payment": value.payment}'
output: {topic: enriched}
`)
			for _, e := range events {
				pipeAt(t, d, e.topic, e.at, e.key, e.value)
			}
			var got []string
			for _, r := range d.Output("enriched") {
				var v struct {
					ID      int
					Payment json.RawMessage
				}
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf(`%s {"id": %d} %s`, r.Key, v.ID, compactJSON(t, v.Payment)))
			}
			want := pairs
			if typ == "left" {
				want = append(append([]string(nil), pairs...), unmatched...)
			}
			for i := range want {
				w := strings.SplitN(want[i], " ", 2)
				rest := strings.SplitN(w[1], "} ", 2)
				want[i] = w[0] + " " + rest[0] + "} " + compactJSON(t, []byte(rest[1]))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("outputs\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return mustJSON(v)
}

// TestTwoJoinsAfterSetHeader: two joins of one table from a pattern input
// after set_header (so the stream repartitions before the first join);
// both fields are set from the one table.
func TestTwoJoinsAfterSetHeader(t *testing.T) {
	d := driver(t, `name: twice
input: {pattern: "^orders"}
pipeline:
  - set_header: {seen: "true"}
  - join: {table: customers, as: buyer}
  - key: value.seller
  - name: join-seller
    join: {table: customers, type: left, as: seller}
  - map: '{"buyer": value.buyer.name, "seller": value.seller?.name, "header": headers.seen}'
output: {topic: enriched}
`)
	pipeAt(t, d, "customers", 0, "ann", `{"name": "Ann"}`)
	pipeAt(t, d, "customers", 0, "bob", `{"name": "Bob"}`)
	pipeAt(t, d, "orders-eu", time.Second, "ann", `{"seller": "bob"}`)
	pipeAt(t, d, "orders-us", time.Second, "bob", `{"seller": "zed"}`)
	pipeAt(t, d, "orders-us", time.Second, "cyd", `{"seller": "ann"}`) // no buyer: dropped
	got := mustJSON(decodeOut(t, d.Output("enriched")))
	want := `[{"_key":"bob","buyer":"Ann","header":"true","seller":"Bob"},{"_key":"zed","buyer":"Bob","header":"true","seller":null}]`
	if got != want {
		t.Errorf("outputs %s, want %s", got, want)
	}
}
