package streams_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

func pipeTombstone(t *testing.T, d *streams.TestDriver, topic, key string, ms int64) {
	t.Helper()
	if err := d.Pipe(&kgo.Record{Topic: topic, Key: []byte(key), Timestamp: time.UnixMilli(ms)}); err != nil {
		t.Fatal(err)
	}
}

func kvs(pairs ...string) []streams.KeyValue[string, string] {
	var out []streams.KeyValue[string, string]
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, streams.KV(pairs[i], pairs[i+1]))
	}
	return out
}

func wantKV(t *testing.T, d *streams.TestDriver, topic string, want []streams.KeyValue[string, string]) {
	t.Helper()
	got := readKV(t, d, topic, streams.String, streams.String)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", topic, got, want)
	}
}

// TestStreamTableJoin: each stream record sees the table as updated by
// the records processed before it; a table update never re-emits earlier
// stream records; a tombstone deletes; the left join keeps records the
// table lacks.
func TestStreamTableJoin(t *testing.T) {
	top := streams.NewTopology()
	users := streams.TableFrom(top, streams.String, streams.String, "users", streams.Named("users"))
	clicks := streams.From(top, streams.String, streams.String, []string{"clicks"})
	streams.JoinTable(clicks, users, func(_ string, page, user string) (string, error) {
		return page + "@" + user, nil
	}).To("inner", streams.String, streams.String)
	streams.LeftJoinTable(clicks, users, func(_ string, page string, user *string) (string, error) {
		if user == nil {
			return page + "@?", nil
		}
		return page + "@" + *user, nil
	}).To("left", streams.String, streams.String)
	d := newDriver(t, top)

	pipeAt(t, d, "clicks", "u1", "home", 1) // before the table knows u1
	pipeAt(t, d, "users", "u1", "ann", 2)
	pipeAt(t, d, "clicks", "u1", "cart", 3)
	pipeAt(t, d, "users", "u1", "ann-v2", 4) // mid-stream update
	pipeAt(t, d, "clicks", "u1", "pay", 5)
	pipeAt(t, d, "clicks", "u2", "home", 6)
	pipeTombstone(t, d, "users", "u1", 7)
	pipeAt(t, d, "clicks", "u1", "bye", 8)

	wantKV(t, d, "inner", kvs("u1", "cart@ann", "u1", "pay@ann-v2"))
	wantKV(t, d, "left", kvs("u1", "home@?", "u1", "cart@ann", "u1", "pay@ann-v2", "u2", "home@?", "u1", "bye@?"))
	// The table's store is changelogged, the tombstone included.
	cl := d.Output("test-driver-users-changelog")
	if len(cl) != 3 || cl[2].Value != nil || string(cl[1].Value) != "ann-v2" {
		t.Fatalf("changelog: %v", cl)
	}
}

// TestJoinWithAggregateTable: a table from an aggregation is joinable.
func TestJoinWithAggregateTable(t *testing.T) {
	top := streams.NewTopology()
	counts := streams.From(top, streams.String, streams.String, []string{"views"}).
		GroupByKey(streams.String, streams.String).Count(streams.Named("views-count"))
	orders := streams.From(top, streams.String, streams.String, []string{"orders"})
	streams.JoinTable(orders, counts, func(_ string, o string, n int64) (string, error) {
		return o + "/" + time.Duration(n).String(), nil
	}).To("out", streams.String, streams.String)
	d := newDriver(t, top)
	pipeAt(t, d, "views", "a", "x", 1)
	pipeAt(t, d, "views", "a", "x", 2)
	pipeAt(t, d, "orders", "a", "o1", 3)
	pipeAt(t, d, "orders", "b", "o2", 4)
	wantKV(t, d, "out", kvs("a", "o1/2ns"))
}

// TestTableTableJoin: every update of either side emits the key's new
// joined value; deletions remove it (tombstones through ToTopic); the left
// join keeps left keys without a right value.
func TestTableTableJoin(t *testing.T) {
	top := streams.NewTopology()
	left := streams.TableFrom(top, streams.String, streams.String, "left")
	right := streams.TableFrom(top, streams.String, streams.String, "right")
	streams.JoinTables(left, right, func(_ string, l, r string) (string, error) {
		return l + "+" + r, nil
	}).ToTopic("inner", streams.String, streams.String)
	streams.LeftJoinTables(left, right, func(_ string, l string, r *string) (string, error) {
		if r == nil {
			return l + "+nil", nil
		}
		return l + "+" + *r, nil
	}).ToStream().To("left", streams.String, streams.String)
	d := newDriver(t, top)

	pipeAt(t, d, "left", "k", "a", 1)    // inner: no right yet → deletion
	pipeAt(t, d, "right", "k", "x", 2)   // a+x
	pipeAt(t, d, "left", "k", "b", 3)    // b+x
	pipeAt(t, d, "right", "k", "y", 4)   // b+y
	pipeAt(t, d, "right", "j", "z", 5)   // no left: inner deletion, left nothing
	pipeTombstone(t, d, "right", "k", 6) // inner deletion; left b+nil
	pipeTombstone(t, d, "left", "k", 7)  // both deletions

	wantChanges(t, d, "table-table", "inner", "k=<del>", "k=a+x", "k=b+x", "k=b+y", "j=<del>", "k=<del>", "k=<del>")
	wantKV(t, d, "left", kvs("k", "a+nil", "k", "a+x", "k", "b+x", "k", "b+y", "k", "b+nil"))
}

// TestJoinTopologyErrors: a rekeyed stream and a windowed table cannot be
// joined.
func TestJoinTopologyErrors(t *testing.T) {
	top := streams.NewTopology()
	tbl := streams.TableFrom(top, streams.String, streams.String, "t")
	s := streams.SelectKey(streams.From(top, streams.String, streams.String, []string{"s"}),
		func(k, v string) (string, error) { return v, nil })
	streams.JoinTable(s, tbl, func(_ string, a, b string) (string, error) { return a + b, nil })
	if _, err := streams.NewTestDriver(top); !errors.Is(err, streams.ErrTopology) {
		t.Fatalf("rekeyed stream: %v", err)
	}

	top = streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"s"})
	w := streams.WindowedBy(in.GroupByKey(streams.String, streams.String), streams.TumblingWindows(time.Second)).Count()
	streams.JoinTables(w, w, func(_ streams.Windowed[string], a, b int64) (int64, error) { return a + b, nil })
	if _, err := streams.NewTestDriver(top); !errors.Is(err, streams.ErrTopology) {
		t.Fatalf("windowed table: %v", err)
	}
}
