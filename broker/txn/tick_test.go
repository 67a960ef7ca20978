package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestTimeoutAbortsWithEpochBump(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	s.add("t", pid, epoch, tpA0)
	start := s.now
	if d := s.c.NextDeadline(); !d.Equal(start.Add(testTimeoutMs*time.Millisecond + time.Millisecond)) {
		t.Fatalf("deadline %v, want start+timeout+1ms", d)
	}

	// Exactly at start+timeout it is not yet expired (Kafka: start+timeout < now).
	s.advance(testTimeoutMs * time.Millisecond)
	s.expectState("t", Ongoing)
	s.advance(time.Millisecond)
	snap := s.expectState("t", PrepareAbort)
	if snap.ProducerEpoch != epoch+1 || snap.LastProducerEpoch != -1 {
		t.Fatalf("timed-out abort %+v: epoch must be bumped", snap)
	}
	ms := s.takeMarkers()
	if len(ms) != 1 || ms[0].Commit || ms[0].ProducerEpoch != epoch+1 || ms[0].Partitions[0] != tpA0 {
		t.Fatalf("markers %+v", ms)
	}
	if r := s.lastRecord("t"); r.Value.State != PrepareAbort || r.Value.ProducerEpoch != epoch+1 {
		t.Fatalf("record %+v", r.Value)
	}
	// The producer is fenced; its commit fails.
	expectErr(t, "late commit", s.end("t", pid, epoch, true), kerr.ProducerFenced)

	s.markers = ms
	s.completeAll()
	s.expectState("t", CompleteAbort)
	// It reinitialises and carries on with the next epoch.
	res := s.init("t", -1, -1)
	if res.Err != nil || res.ProducerEpoch != epoch+2 {
		t.Fatalf("reinit %+v", res)
	}
}

func TestTimeoutSkipsPrepared(t *testing.T) {
	s := newScenario(t)
	pid, epoch := s.mustInit("t")
	s.add("t", pid, epoch, tpA0)
	s.end("t", pid, epoch, true)
	s.takeMarkers()
	s.advance(2 * testTimeoutMs * time.Millisecond)
	s.expectState("t", PrepareCommit)
	if len(s.takeMarkers()) != 0 {
		t.Fatal("Tick re-requested markers of a prepared transaction")
	}
}

func TestTransactionalIDExpiry(t *testing.T) {
	s := newScenario(t)
	s.cfg.IDExpiration = time.Hour
	s.mustInit("idle")
	pid, epoch := s.mustInit("busy")
	s.add("busy", pid, epoch, tpA0)
	pid2, epoch2 := s.mustInit("done")
	s.add("done", pid2, epoch2, tpA0)
	s.end("done", pid2, epoch2, true)
	s.completeAll()

	// Keep "busy" alive past the expiry by committing and starting over.
	s.advance(30 * time.Second)
	s.end("busy", pid, epoch, true)
	s.completeAll()
	s.advance(time.Hour - 30*time.Second - time.Millisecond)
	if s.c.Len() != 3 {
		t.Fatalf("expired early: %v", s.c.IDs())
	}
	n := len(s.records)
	s.advance(time.Millisecond)
	if ids := s.c.IDs(); len(ids) != 1 || ids[0] != "busy" {
		t.Fatalf("left %v, want [busy]", ids)
	}
	tomb := s.records[n:]
	if len(tomb) != 2 || tomb[0].TransactionalID != "done" || tomb[0].Value != nil || tomb[1].TransactionalID != "idle" || tomb[1].Value != nil {
		t.Fatalf("tombstones %+v", tomb)
	}
	// An expired id starts afresh with a new producer id.
	res := s.init("idle", -1, -1)
	if res.Err != nil || res.ProducerEpoch != 0 {
		t.Fatalf("reinit %+v", res)
	}
}

func TestOngoingDoesNotExpire(t *testing.T) {
	s := newScenario(t)
	s.cfg.IDExpiration = time.Minute
	s.cfg.MaxTimeout = time.Hour
	res, eff := s.c.InitProducerID(s.now, InitRequest{TransactionalID: "t", TimeoutMs: int32(time.Hour.Milliseconds()), ProducerID: -1, ProducerEpoch: -1}, s.alloc)
	s.collect(eff)
	s.add("t", res.ProducerID, res.ProducerEpoch, tpA0)
	s.advance(10 * time.Minute)
	s.expectState("t", Ongoing)
	if d := s.c.NextDeadline(); !d.Equal(time.UnixMilli(s.state("t").StartTimestamp).Add(time.Hour + time.Millisecond)) {
		t.Fatalf("deadline %v", d)
	}
}

func TestNextDeadlineEmpty(t *testing.T) {
	s := newScenario(t)
	if !s.c.NextDeadline().IsZero() {
		t.Fatal("deadline without transactions")
	}
}
