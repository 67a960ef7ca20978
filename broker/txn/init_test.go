package txn

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestInitNewIDAndBump(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t1")
	if pid != 1001 || epoch != 0 {
		t.Fatalf("new id: pid %d epoch %d, want 1001/0", pid, epoch)
	}
	snap := s.expectState("t1", Empty)
	if snap.TimeoutMs != testTimeoutMs || snap.StartTimestamp != -1 || snap.LastUpdate != s.now.UnixMilli() {
		t.Fatalf("snapshot %+v", snap)
	}
	if r := s.lastRecord("t1"); r.Value == nil || r.Value.State != Empty || r.Value.Topics != nil || r.Value.ProducerEpoch != 0 {
		t.Fatalf("record %+v", r.Value)
	}

	// A second producer with the same id bumps the epoch and fences the first.
	pid2, epoch2 := s.mustInit("t1")
	if pid2 != pid || epoch2 != 1 {
		t.Fatalf("bump: pid %d epoch %d, want %d/1", pid2, epoch2, pid)
	}
	expectErr(t, "old producer adds", s.add("t1", pid, 0, tpA0), kerr.ProducerFenced)
	expectErr(t, "old producer ends", s.end("t1", pid, 0, true), kerr.ProducerFenced)
	expectErr(t, "new producer adds", s.add("t1", pid, 1, tpA0), nil)
}

func TestInitValidation(t *testing.T) {
	s := newScenario(t)
	cases := []struct {
		name string
		req  InitRequest
		want *kerr.Error
	}{
		{"empty id", InitRequest{TransactionalID: "", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, kerr.InvalidRequest},
		{"zero timeout", InitRequest{TransactionalID: "x", TimeoutMs: 0, ProducerID: -1, ProducerEpoch: -1}, kerr.InvalidTransactionTimeout},
		{"timeout above max", InitRequest{TransactionalID: "x", TimeoutMs: int32((15*time.Minute + time.Millisecond).Milliseconds()), ProducerID: -1, ProducerEpoch: -1}, kerr.InvalidTransactionTimeout},
		{"half of KIP-360 pair", InitRequest{TransactionalID: "x", TimeoutMs: 1000, ProducerID: 5, ProducerEpoch: -1}, kerr.InvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, eff := s.c.InitProducerID(s.now, c.req, s.alloc)
			expectErr(t, c.name, res.Err, c.want)
			if res.ProducerID != -1 || res.ProducerEpoch != -1 || len(eff.Records) != 0 {
				t.Fatalf("error answer %+v with effects %+v", res, eff)
			}
		})
	}
	res, _ := s.c.InitProducerID(s.now, InitRequest{TransactionalID: "x", TimeoutMs: int32((15 * time.Minute).Milliseconds()), ProducerID: -1, ProducerEpoch: -1}, s.alloc)
	expectErr(t, "timeout at max", res.Err, nil)

	// Allocation failures are answered, and leave nothing behind.
	res, eff := s.c.InitProducerID(s.now, InitRequest{TransactionalID: "y", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, func() (int64, error) { return 0, errors.New("quorum down") })
	expectErr(t, "alloc failure", res.Err, kerr.CoordinatorNotAvailable)
	if _, ok := s.c.State("y"); ok || len(eff.Records) != 0 {
		t.Fatal("failed init left state behind")
	}
}

func TestInitOngoingAbortsFirst(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t1")
	expectErr(t, "add", s.add("t1", pid, epoch, tpA0, tpB0), nil)

	res := s.init("t1", -1, -1)
	expectErr(t, "init during ongoing", res.Err, kerr.ConcurrentTransactions)
	snap := s.expectState("t1", PrepareAbort)
	if snap.ProducerEpoch != 1 || snap.PendingState != CompleteAbort {
		t.Fatalf("fenced abort: %+v", snap)
	}
	ms := s.takeMarkers()
	if len(ms) != 1 || ms[0].Commit || ms[0].ProducerEpoch != 1 || ms[0].CoordinatorEpoch != testCoordEpoch || len(ms[0].Partitions) != 2 {
		t.Fatalf("markers %+v", ms)
	}
	if r := s.lastRecord("t1"); r.Value.State != PrepareAbort || r.Value.ProducerEpoch != 1 {
		t.Fatalf("record %+v", r.Value)
	}
	// The old producer is fenced; retries wait for the abort.
	expectErr(t, "old producer commits", s.end("t1", pid, epoch, true), kerr.ProducerFenced)
	expectErr(t, "retry while aborting", s.init("t1", -1, -1).Err, kerr.ConcurrentTransactions)

	s.markers = ms
	s.completeAll()
	s.expectState("t1", CompleteAbort)
	res = s.init("t1", -1, -1)
	if res.Err != nil || res.ProducerID != pid || res.ProducerEpoch != 2 {
		t.Fatalf("retry: %+v, want epoch 2", res)
	}
	s.expectState("t1", Empty)
}

func TestInitKIP360(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the producer id and epoch the request names.
		setup     func(s *scenario) (int64, int16)
		wantErr   *kerr.Error
		wantEpoch int16
		wantNewID bool
	}{
		{
			name:      "current id and epoch: bump",
			setup:     func(s *scenario) (int64, int16) { return s.mustInit("t") },
			wantEpoch: 1,
		},
		{
			name: "previous epoch: retry of a lost answer",
			setup: func(s *scenario) (int64, int16) {
				pid, epoch := s.mustInit("t")
				if r := s.init("t", pid, epoch); r.Err != nil || r.ProducerEpoch != 1 {
					s.t.Fatalf("bump: %+v", r)
				}
				return pid, epoch
			},
			wantEpoch: 1,
		},
		{
			name: "epoch fenced by another producer",
			setup: func(s *scenario) (int64, int16) {
				pid, epoch := s.mustInit("t")
				s.mustInit("t") // another producer: last epoch reset to -1
				return pid, epoch
			},
			wantErr: kerr.ProducerFenced,
		},
		{
			name:    "unknown producer id",
			setup:   func(s *scenario) (int64, int16) { s.mustInit("t"); return 42, 0 },
			wantErr: kerr.ProducerFenced,
		},
		{
			name:      "exhausted epoch: new producer id",
			setup:     func(s *scenario) (int64, int16) { return exhaust(s, "t"), math.MaxInt16 - 1 },
			wantEpoch: 0, wantNewID: true,
		},
		{
			name: "previous id with exhausted epoch: retry of a rotation",
			setup: func(s *scenario) (int64, int16) {
				old := exhaust(s, "t")
				if r := s.init("t", old, math.MaxInt16-1); r.Err != nil || r.ProducerEpoch != 0 {
					s.t.Fatalf("rotate: %+v", r)
				}
				return old, math.MaxInt16 - 1
			},
			// The rotation's answer again: the new id at epoch 0 (the
			// request's epoch is the recorded last epoch).
			wantEpoch: 0,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScenario(t)
			pid, epoch := c.setup(s)
			before := s.state("t")
			res := s.init("t", pid, epoch)
			expectErr(t, "init", res.Err, c.wantErr)
			if c.wantErr != nil {
				return
			}
			if res.ProducerEpoch != c.wantEpoch || (res.ProducerID != before.ProducerID) != c.wantNewID {
				t.Fatalf("got %+v (before %+v), want epoch %d new id %v", res, before, c.wantEpoch, c.wantNewID)
			}
		})
	}
}

// exhaust gives id an exhausted epoch and returns its producer id.
func exhaust(s *scenario, id string) int64 {
	pid, _ := s.mustInit(id)
	s.c.txns[id].producerEpoch = math.MaxInt16 - 1
	return pid
}

func TestInitRotatesWithoutKIP360(t *testing.T) {
	s := newScenario(t)
	old := exhaust(s, "t")
	pid, epoch := s.mustInit("t")
	if pid == old || epoch != 0 {
		t.Fatalf("rotation: pid %d epoch %d", pid, epoch)
	}
	snap := s.state("t")
	if snap.LastProducerID != old || snap.LastProducerEpoch != -1 {
		t.Fatalf("after rotation %+v", snap)
	}
}

func TestFencedErrorByVersion(t *testing.T) {
	s := newScenario(t)
	pid, _ := s.mustInit("t")
	s.mustInit("t") // epoch 1
	for _, c := range []struct {
		version int16
		want    *kerr.Error
	}{{0, kerr.InvalidProducerEpoch}, {1, kerr.InvalidProducerEpoch}, {2, kerr.ProducerFenced}, {5, kerr.ProducerFenced}} {
		res, _ := s.c.AddPartitions(s.now, AddPartitionsRequest{TransactionalID: "t", ProducerID: pid, ProducerEpoch: 0, Partitions: []TopicPartition{tpA0}, Version: c.version})
		expectErr(t, "add", res[0].Err, c.want)
		err, _ := s.c.AddOffsets(s.now, AddOffsetsRequest{TransactionalID: "t", ProducerID: pid, ProducerEpoch: 0, GroupID: "g", OffsetsPartition: 7, Version: c.version})
		expectErr(t, "add offsets", err, c.want)
		err, _ = s.c.EndTxn(s.now, EndTxnRequest{TransactionalID: "t", ProducerID: pid, ProducerEpoch: 0, Commit: true, Version: c.version})
		expectErr(t, "end", err, c.want)
	}
	for _, c := range []struct {
		version int16
		want    *kerr.Error
	}{{3, kerr.InvalidProducerEpoch}, {4, kerr.ProducerFenced}} {
		res, _ := s.c.InitProducerID(s.now, InitRequest{TransactionalID: "t", TimeoutMs: 1000, ProducerID: 999, ProducerEpoch: 0, Version: c.version}, s.alloc)
		expectErr(t, "init", res.Err, c.want)
	}
}
