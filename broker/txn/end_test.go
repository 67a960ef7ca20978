package txn

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestEndTxnFullCycle(t *testing.T) {
	for _, commit := range []bool{true, false} {
		prepare, complete := PrepareAbort, CompleteAbort
		if commit {
			prepare, complete = PrepareCommit, CompleteCommit
		}
		t.Run(prepare.String(), func(t *testing.T) {
			s := newScenario(t)
			pid, epoch := s.mustInit("t")
			s.add("t", pid, epoch, tpB0, tpA1, tpA0)
			start := s.state("t").StartTimestamp

			s.now = s.now.Add(time.Second)
			expectErr(t, "end", s.end("t", pid, epoch, commit), nil)
			snap := s.expectState("t", prepare)
			if snap.PendingState != complete || len(snap.Partitions) != 3 {
				t.Fatalf("prepared: %+v", snap)
			}
			r := s.lastRecord("t")
			wantTopics := []TopicPartitions{{"a", []int32{0, 1}}, {"b", []int32{0}}}
			if r.Value.State != prepare || !reflect.DeepEqual(r.Value.Topics, wantTopics) || r.Value.StartTimestamp != start || r.Value.LastUpdateTimestamp != s.now.UnixMilli() {
				t.Fatalf("prepare record %+v", r.Value)
			}
			ms := s.takeMarkers()
			want := []Markers{{TransactionalID: "t", ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: testCoordEpoch, Partitions: []TopicPartition{tpA0, tpA1, tpB0}}}
			if !reflect.DeepEqual(ms, want) {
				t.Fatalf("markers %+v, want %+v", ms, want)
			}

			// Markers durable: complete, partitions cleared.
			s.now = s.now.Add(time.Second)
			s.markers = ms
			s.completeAll()
			snap = s.expectState("t", complete)
			if snap.PendingState != NoState || len(snap.Partitions) != 0 || snap.StartTimestamp != start {
				t.Fatalf("completed: %+v", snap)
			}
			r = s.lastRecord("t")
			if r.Value.State != complete || r.Value.Topics == nil || len(r.Value.Topics) != 0 {
				t.Fatalf("complete record %+v", r.Value)
			}
			// A duplicate completion is refused and writes nothing.
			err, eff := s.c.CompleteTxn(s.now, ms[0])
			expectErr(t, "duplicate completion", err, kerr.InvalidTxnState)
			if len(eff.Records) != 0 {
				t.Fatal("duplicate completion wrote a record")
			}
		})
	}
}

func TestEndTxnRetries(t *testing.T) {
	type step int
	const (
		prepared step = iota
		completed
	)
	cases := []struct {
		name   string
		commit bool // the first EndTxn
		at     step
		retry  bool // the retried decision
		want   *kerr.Error
	}{
		{"commit retried while PrepareCommit", true, prepared, true, kerr.ConcurrentTransactions},
		{"commit retried after CompleteCommit", true, completed, true, nil},
		{"abort while PrepareCommit", true, prepared, false, kerr.InvalidTxnState},
		{"abort after CompleteCommit", true, completed, false, kerr.InvalidTxnState},
		{"abort retried while PrepareAbort", false, prepared, false, kerr.ConcurrentTransactions},
		{"abort retried after CompleteAbort", false, completed, false, nil},
		{"commit while PrepareAbort", false, prepared, true, kerr.InvalidTxnState},
		{"commit after CompleteAbort", false, completed, true, kerr.InvalidTxnState},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScenario(t)
			pid, epoch := s.mustInit("t")
			s.add("t", pid, epoch, tpA0)
			expectErr(t, "first end", s.end("t", pid, epoch, c.commit), nil)
			if c.at == completed {
				s.completeAll()
			}
			s.takeMarkers()
			before := s.state("t")
			n := len(s.records)
			expectErr(t, "retry", s.end("t", pid, epoch, c.retry), c.want)
			if !reflect.DeepEqual(s.state("t"), before) || len(s.records) != n || len(s.markers) != 0 {
				t.Fatal("a retry changed the transaction")
			}
		})
	}
}

func TestEndTxnWithoutTransaction(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	expectErr(t, "commit in Empty", s.end("t", pid, epoch, true), kerr.InvalidTxnState)
	expectErr(t, "abort in Empty", s.end("t", pid, epoch, false), kerr.InvalidTxnState)
	expectErr(t, "unknown id", s.end("x", pid, epoch, true), kerr.InvalidProducerIDMapping)
	expectErr(t, "wrong producer id", s.end("t", pid+1, epoch, true), kerr.InvalidProducerIDMapping)
}

func TestCompleteTxnStale(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	s.add("t", pid, epoch, tpA0)
	s.end("t", pid, epoch, true)
	m := s.takeMarkers()[0]
	stale := m
	stale.ProducerEpoch++
	err, _ := s.c.CompleteTxn(s.now, stale)
	expectErr(t, "other epoch", err, kerr.ProducerFenced)
	stale = m
	stale.Commit = false
	err, _ = s.c.CompleteTxn(s.now, stale)
	expectErr(t, "other decision", err, kerr.InvalidTxnState)
	stale = m
	stale.ProducerID++
	err, _ = s.c.CompleteTxn(s.now, stale)
	expectErr(t, "other producer", err, kerr.InvalidProducerIDMapping)
	s.expectState("t", PrepareCommit)
}
