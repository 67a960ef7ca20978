package streams_test

import (
	"errors"
	"hash/fnv"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// orderCustomer is the foreign key of an order "<customer>|<item>".
func orderCustomer(_ string, order string) (string, error) {
	c, _, ok := strings.Cut(order, "|")
	if !ok {
		return "", errors.New("order without a customer")
	}
	return c, nil
}

var fkSerdes = streams.ForeignKeyJoined[string, string, string, string]{
	Keys: streams.String, Values: streams.String, ForeignKeys: streams.String, ForeignValues: streams.String}

// fkTopology joins orders (order id → "<customer>|<item>") with customers
// (customer id → name), inner into "inner" and left into "left" (both
// with ToTopic, deletions as tombstones); results read "<item>@<name>".
func fkTopology() *streams.Topology {
	top := streams.NewTopology()
	orders := streams.TableFrom(top, streams.String, streams.String, "orders", streams.Named("orders"))
	customers := streams.TableFrom(top, streams.String, streams.String, "customers", streams.Named("customers"))
	item := func(order string) string { _, it, _ := strings.Cut(order, "|"); return it }
	streams.JoinTablesByForeignKey(orders, customers, orderCustomer,
		func(_ string, order, customer string) (string, error) { return item(order) + "@" + customer, nil },
		fkSerdes, streams.Named("fk")).ToTopic("inner", streams.String, streams.String)
	streams.LeftJoinTablesByForeignKey(orders, customers, orderCustomer,
		func(_ string, order string, customer *string) (string, error) {
			if customer == nil {
				return item(order) + "@nil", nil
			}
			return item(order) + "@" + *customer, nil
		}, fkSerdes, streams.Named("fk-left")).ToTopic("left", streams.String, streams.String)
	return top
}

// changes renders a table topic's records as "key=value", "key=<del>" for
// tombstones.
func changes(d *streams.TestDriver, topic string) []string {
	var out []string
	for _, r := range d.Output(topic) {
		if r.Value == nil {
			out = append(out, string(r.Key)+"=<del>")
		} else {
			out = append(out, string(r.Key)+"="+string(r.Value))
		}
	}
	return out
}

func wantChanges(t *testing.T, d *streams.TestDriver, step, topic string, want ...string) {
	t.Helper()
	if got := changes(d, topic); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %s: got %v, want %v", step, topic, got, want)
	}
}

// TestForeignKeyJoin walks every case of a foreign-key join in order: the
// right row arriving after the left, a right update fanning out to every
// order of the customer, an order changing customer (the old result is
// replaced, never joined with the old customer), a right deletion, a left
// deletion (after which the customer's updates no longer reach the order).
func TestForeignKeyJoin(t *testing.T) {
	d := newDriver(t, fkTopology())

	pipeAt(t, d, "orders", "o1", "c1|book", 1)
	wantChanges(t, d, "left before right", "inner", "o1=<del>")
	wantChanges(t, d, "left before right", "left", "o1=book@nil")

	pipeAt(t, d, "customers", "c1", "ann", 2)
	wantChanges(t, d, "right after left", "inner", "o1=book@ann")
	wantChanges(t, d, "right after left", "left", "o1=book@ann")

	pipeAt(t, d, "orders", "o2", "c1|pen", 3)
	pipeAt(t, d, "customers", "c1", "ann2", 4)
	inner := changes(d, "inner")
	// The fan-out answers o1 and o2 in the subscription store's key order.
	if want := []string{"o2=pen@ann", "o1=book@ann2", "o2=pen@ann2"}; !reflect.DeepEqual(inner, want) {
		t.Fatalf("fan-out: inner: got %v, want %v", inner, want)
	}
	wantChanges(t, d, "fan-out", "left", "o2=pen@ann", "o1=book@ann2", "o2=pen@ann2")

	pipeAt(t, d, "orders", "o1", "c2|book", 5) // c2 unknown
	wantChanges(t, d, "fk change to a missing row", "inner", "o1=<del>")
	wantChanges(t, d, "fk change to a missing row", "left", "o1=book@nil")
	pipeAt(t, d, "customers", "c2", "bob", 6)
	wantChanges(t, d, "new fk's row arrives", "inner", "o1=book@bob")
	wantChanges(t, d, "new fk's row arrives", "left", "o1=book@bob")
	pipeAt(t, d, "customers", "c1", "ann3", 7) // o1 no longer follows c1
	wantChanges(t, d, "old fk updated", "inner", "o2=pen@ann3")
	wantChanges(t, d, "old fk updated", "left", "o2=pen@ann3")

	pipeAt(t, d, "orders", "o1", "c1|book2", 8) // an fk change to an existing row
	wantChanges(t, d, "fk change to an existing row", "inner", "o1=book2@ann3")
	wantChanges(t, d, "fk change to an existing row", "left", "o1=book2@ann3")
	pipeAt(t, d, "customers", "c2", "bob2", 9) // nobody follows c2 now
	wantChanges(t, d, "unsubscribed", "inner")
	wantChanges(t, d, "unsubscribed", "left")

	pipeTombstone(t, d, "customers", "c1", 10)
	wantChanges(t, d, "right delete", "inner", "o1=<del>", "o2=<del>")
	wantChanges(t, d, "right delete", "left", "o1=book2@nil", "o2=pen@nil")

	pipeTombstone(t, d, "orders", "o2", 11)
	wantChanges(t, d, "left delete", "inner", "o2=<del>")
	wantChanges(t, d, "left delete", "left", "o2=<del>")
	pipeAt(t, d, "customers", "c1", "ann4", 12)
	wantChanges(t, d, "after left delete", "inner", "o1=book2@ann4")
	wantChanges(t, d, "after left delete", "left", "o1=book2@ann4")

	// The stores are changelogged: the subscription store holds (c1, o1),
	// (c1, o2) was deleted.
	subs := d.Output("test-driver-fk-subscription-store-changelog")
	last := map[string][]byte{}
	for _, r := range subs {
		last[string(r.Key)] = r.Value
	}
	if len(last) != 3 || last["\x02c1o1"] == nil || last["\x02c1o2"] != nil || last["\x02c2o1"] != nil {
		t.Fatalf("subscription store changelog ends with %q", last)
	}
	if len(d.Output("test-driver-fk-response-store-changelog")) == 0 {
		t.Fatal("the response store wrote no changelog")
	}
}

// fkResponse is a subscription response as the right side writes it:
// format 0, the FNV-1a 128 hash of the left value it answers, and the
// right value (nil: none).
func fkResponse(leftValue string, right []byte) []byte {
	h := fnv.New128a()
	h.Write([]byte(leftValue))
	v := append([]byte{0}, h.Sum(nil)...)
	if right == nil {
		return append(v, 0)
	}
	return append(append(v, 1), right...)
}

// TestForeignKeyJoinDropsStaleAnswers: an answer to an older value of the
// left row (in flight while the row changed) is dropped; an answer to the
// current value is joined; a malformed answer is a deserialization error.
func TestForeignKeyJoinDropsStaleAnswers(t *testing.T) {
	d := newDriver(t, fkTopology())
	pipeAt(t, d, "customers", "c1", "ann", 1)
	pipeAt(t, d, "customers", "c2", "bob", 1)
	pipeAt(t, d, "orders", "o1", "c1|book", 2)
	pipeAt(t, d, "orders", "o1", "c2|book", 3)
	wantChanges(t, d, "setup", "inner", "o1=book@ann", "o1=book@bob")
	d.Output("left")

	const responses = "test-driver-fk-subscription-response"
	pipeAt(t, d, responses, "o1", string(fkResponse("c1|book", []byte("ann"))), 4) // stale
	wantChanges(t, d, "stale answer", "inner")
	pipeAt(t, d, responses, "o1", string(fkResponse("c2|book", []byte("eve"))), 5) // current
	wantChanges(t, d, "current answer", "inner", "o1=book@eve")
	pipeAt(t, d, responses, "o9", string(fkResponse("c2|book", []byte("eve"))), 5) // no such row
	wantChanges(t, d, "unknown row", "inner")

	err := d.Pipe(&kgo.Record{Topic: responses, Key: []byte("o1"), Value: []byte{0, 1, 2}})
	var se *streams.StageError
	if !errors.As(err, &se) || se.Kind != streams.KindDeserialize || se.Stage != "fk" {
		t.Fatalf("malformed answer: %v", err)
	}
}

// TestForeignKeyJoinResultIsJoinable: the result table can be read by a
// later join (a stream of lookups by order id sees the current result),
// and the extractor's error is the join's error.
func TestForeignKeyJoinResultIsJoinable(t *testing.T) {
	top := streams.NewTopology()
	orders := streams.TableFrom(top, streams.String, streams.String, "orders")
	customers := streams.TableFrom(top, streams.String, streams.String, "customers")
	res := streams.JoinTablesByForeignKey(orders, customers, orderCustomer,
		func(_ string, order, customer string) (string, error) { return order + "/" + customer, nil },
		fkSerdes, streams.Named("enrich"))
	lookups := streams.From(top, streams.String, streams.String, []string{"lookups"})
	streams.LeftJoinTable(lookups, res, func(_ string, q string, r *string) (string, error) {
		if r == nil {
			return q + ":-", nil
		}
		return q + ":" + *r, nil
	}).To("answers", streams.String, streams.String)
	d := newDriver(t, top, streams.OnError(streams.ErrorSkip))

	pipeAt(t, d, "orders", "o1", "c1|book", 1)
	pipeAt(t, d, "lookups", "o1", "q1", 2) // c1 unknown: no result
	pipeAt(t, d, "customers", "c1", "ann", 3)
	pipeAt(t, d, "lookups", "o1", "q2", 4)
	pipeAt(t, d, "orders", "o1", "c2|pen", 5) // c2 unknown: the result is gone
	pipeAt(t, d, "lookups", "o1", "q3", 6)
	pipeAt(t, d, "orders", "o2", "no customer", 7) // the extractor fails: skipped
	pipeAt(t, d, "lookups", "o2", "q4", 8)
	wantKV(t, d, "answers", kvs("o1", "q1:-", "o1", "q2:c1|book/ann", "o1", "q3:-", "o2", "q4:-"))
	if st := d.Stats(); st.Skipped != 1 {
		t.Fatalf("skipped %d records, want the one the extractor failed", st.Skipped)
	}
}

// TestForeignKeyJoinNeedsSerdes: a missing serde is a topology error.
func TestForeignKeyJoinNeedsSerdes(t *testing.T) {
	top := streams.NewTopology()
	orders := streams.TableFrom(top, streams.String, streams.String, "orders")
	customers := streams.TableFrom(top, streams.String, streams.String, "customers")
	streams.JoinTablesByForeignKey(orders, customers, orderCustomer,
		func(_ string, o, c string) (string, error) { return o + c, nil },
		streams.ForeignKeyJoined[string, string, string, string]{Keys: streams.String})
	if _, err := streams.NewTestDriver(top); !errors.Is(err, streams.ErrTopology) {
		t.Fatalf("NewTestDriver: %v", err)
	}
}
