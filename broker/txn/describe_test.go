package txn

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestDescribe(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	s.add("t", pid, epoch, tpB0, tpA0)
	d := s.c.Describe("t")
	want := Described{TransactionalID: "t", State: "Ongoing", ProducerID: pid, ProducerEpoch: epoch, TimeoutMs: testTimeoutMs, StartTimestamp: s.now.UnixMilli(), Partitions: []TopicPartition{tpA0, tpB0}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("describe %+v, want %+v", d, want)
	}
	expectErr(t, "unknown", s.c.Describe("x").Err, kerr.TransactionalIDNotFound)
	expectErr(t, "empty", s.c.Describe("").Err, kerr.InvalidRequest)
}

func TestStateNames(t *testing.T) {
	want := []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}
	for code, name := range want {
		if State(code).String() != name {
			t.Fatalf("state %d named %q, want %q", code, State(code), name)
		}
		if s, ok := ParseState(name); !ok || s != State(code) {
			t.Fatalf("ParseState(%q) = %v %v", name, s, ok)
		}
	}
}

func TestList(t *testing.T) {
	s := newScenario(t)
	pidE, _ := s.mustInit("empty")
	pidO, epochO := s.mustInit("ongoing")
	s.add("ongoing", pidO, epochO, tpA0)
	pidC, epochC := s.mustInit("committed")
	s.add("committed", pidC, epochC, tpA0)
	s.end("committed", pidC, epochC, true)
	s.completeAll()
	s.now = s.now.Add(10 * time.Second)
	pidL, epochL := s.mustInit("late")
	s.add("late", pidL, epochL, tpB0)

	names := func(r ListResult) []string {
		var out []string
		for _, l := range r.Transactions {
			out = append(out, l.TransactionalID)
		}
		return out
	}
	cases := []struct {
		name    string
		filter  ListFilter
		want    []string
		unknown []string
	}{
		{"all", ListFilter{}, []string{"committed", "empty", "late", "ongoing"}, nil},
		{"by state", ListFilter{States: []string{"Ongoing"}}, []string{"late", "ongoing"}, nil},
		{"by states", ListFilter{States: []string{"Empty", "CompleteCommit"}}, []string{"committed", "empty"}, nil},
		{"unknown state", ListFilter{States: []string{"Bogus"}}, nil, []string{"Bogus"}},
		{"by producer id", ListFilter{ProducerIDs: []int64{pidE, pidO}}, []string{"empty", "ongoing"}, nil},
		{"state and producer id", ListFilter{States: []string{"Ongoing"}, ProducerIDs: []int64{pidE, pidO}}, []string{"ongoing"}, nil},
		{"duration (v1)", ListFilter{States: []string{"Ongoing"}, MinDurationMs: 5000}, []string{"ongoing"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.c.List(s.now, c.filter)
			if got := names(r); !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(r.UnknownStateFilters, c.unknown) {
				t.Fatalf("got %v unknown %v, want %v unknown %v", got, r.UnknownStateFilters, c.want, c.unknown)
			}
		})
	}
	r := s.c.List(s.now, ListFilter{ProducerIDs: []int64{pidL}})
	if len(r.Transactions) != 1 || r.Transactions[0] != (Listed{TransactionalID: "late", ProducerID: pidL, State: "Ongoing"}) {
		t.Fatalf("listed %+v", r.Transactions)
	}
}
