package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestAddPartitionsByState(t *testing.T) {
	cases := []struct {
		name string
		// setup leaves "t" in some state and returns its id and epoch.
		setup     func(s *scenario) (int64, int16)
		want      *kerr.Error
		wantState State
		wantRec   bool
	}{
		{"Empty starts a transaction", func(s *scenario) (int64, int16) { return s.mustInit("t") }, nil, Ongoing, true},
		{"Ongoing adds", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpB0)
			return pid, e
		}, nil, Ongoing, true},
		{"Ongoing with the partition already in: no record", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpA0)
			return pid, e
		}, nil, Ongoing, false},
		{"PrepareCommit", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpB0)
			s.end("t", pid, e, true)
			return pid, e
		}, kerr.ConcurrentTransactions, PrepareCommit, false},
		{"PrepareAbort", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpB0)
			s.end("t", pid, e, false)
			return pid, e
		}, kerr.ConcurrentTransactions, PrepareAbort, false},
		{"CompleteCommit starts the next transaction", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpB0)
			s.end("t", pid, e, true)
			s.completeAll()
			return pid, e
		}, nil, Ongoing, true},
		{"CompleteAbort starts the next transaction", func(s *scenario) (int64, int16) {
			pid, e := s.mustInit("t")
			s.add("t", pid, e, tpB0)
			s.end("t", pid, e, false)
			s.completeAll()
			return pid, e
		}, nil, Ongoing, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScenario(t)
			pid, epoch := c.setup(s)
			s.now = s.now.Add(time.Second)
			before := len(s.records)
			expectErr(t, "add", s.add("t", pid, epoch, tpA0), c.want)
			snap := s.expectState("t", c.wantState)
			if wrote := len(s.records) > before; wrote != c.wantRec {
				t.Fatalf("record written %v, want %v", wrote, c.wantRec)
			}
			if c.want == nil {
				if !contains(snap.Partitions, tpA0) {
					t.Fatalf("partitions %v lack %v", snap.Partitions, tpA0)
				}
				if c.wantRec {
					r := s.lastRecord("t")
					if r.Value.State != Ongoing || len(r.Value.Partitions()) != len(snap.Partitions) {
						t.Fatalf("record %+v for %+v", r.Value, snap)
					}
				}
			}
		})
	}
}

func contains(tps []TopicPartition, tp TopicPartition) bool {
	for _, x := range tps {
		if x == tp {
			return true
		}
	}
	return false
}

func TestAddPartitionsStartTimestamp(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	start := s.now.Add(time.Second)
	s.now = start
	s.add("t", pid, epoch, tpA0)
	s.now = s.now.Add(time.Second)
	s.add("t", pid, epoch, tpA1)
	snap := s.state("t")
	if snap.StartTimestamp != start.UnixMilli() || snap.LastUpdate != s.now.UnixMilli() || len(snap.Partitions) != 2 {
		t.Fatalf("%+v: start should stay at the first add", snap)
	}
}

func TestAddPartitionsIdentity(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	expectErr(t, "unknown id", s.add("nope", pid, epoch, tpA0), kerr.InvalidProducerIDMapping)
	expectErr(t, "wrong producer id", s.add("t", pid+1, epoch, tpA0), kerr.InvalidProducerIDMapping)
	expectErr(t, "newer epoch", s.add("t", pid, epoch+1, tpA0), kerr.ProducerFenced)
	expectErr(t, "empty id", s.add("", pid, epoch, tpA0), kerr.InvalidRequest)
	if len(s.records) != 1 {
		t.Fatalf("failed adds wrote records: %+v", s.records)
	}
}

func TestAddOffsets(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	err, eff := s.c.AddOffsets(s.now, AddOffsetsRequest{TransactionalID: "t", ProducerID: pid, ProducerEpoch: epoch, GroupID: "g", OffsetsPartition: 12, Version: 3})
	expectErr(t, "add offsets", err, nil)
	s.collect(eff)
	snap := s.expectState("t", Ongoing)
	if len(snap.Partitions) != 1 || snap.Partitions[0] != (TopicPartition{"__consumer_offsets", 12}) {
		t.Fatalf("partitions %v", snap.Partitions)
	}
}

func TestVerifyPartitions(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	verify := func(pid int64, epoch int16) []*kerr.Error {
		res := s.c.VerifyPartitions(AddPartitionsRequest{TransactionalID: "t", ProducerID: pid, ProducerEpoch: epoch, Partitions: []TopicPartition{tpA0, tpB0}, Version: 4})
		return []*kerr.Error{res[0].Err, res[1].Err}
	}
	eq := func(what string, got []*kerr.Error, want ...*kerr.Error) {
		t.Helper()
		if got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	eq("empty", verify(pid, epoch), kerr.TransactionAbortable, kerr.TransactionAbortable)
	s.add("t", pid, epoch, tpA0)
	n := len(s.records)
	eq("ongoing", verify(pid, epoch), nil, kerr.TransactionAbortable)
	eq("wrong pid", verify(pid+1, epoch), kerr.InvalidProducerIDMapping, kerr.InvalidProducerIDMapping)
	eq("stale epoch", verify(pid, epoch-1), kerr.ProducerFenced, kerr.ProducerFenced)
	s.end("t", pid, epoch, true)
	eq("prepare commit", verify(pid, epoch), kerr.ConcurrentTransactions, kerr.ConcurrentTransactions)
	if len(s.records) != n+1 {
		t.Fatal("verification wrote records")
	}
}
