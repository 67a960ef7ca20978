package broker

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/txn"
)

// TestTxnMarkerOfReplacedLoadFenced: a __transaction_state shard reloads
// under the same leader epoch (as after a failed append) while a marker of
// its previous load is on its way to the partition. The new load resends
// the markers and completes the transaction; the producer (same producer
// id and epoch: transaction version 1) starts its next transaction on that
// partition; then the old marker arrives. It must be refused with
// TRANSACTION_COORDINATOR_FENCED — the new load has a higher coordinator
// epoch — rather than end the new transaction early: that would make its
// record visible to read_committed consumers at once and keep it visible
// after the abort.
func TestTxnMarkerOfReplacedLoadFenced(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("fence", 1, nil)
	part := tb.srv.topics.partition("fence", 0)

	p := newRawTxnProducer(t, tb, "tx-fence")
	if codes := p.addPartitions(3, "fence", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn: %v", codeNames(codes))
	}
	if got := p.produce("fence", 0, "first"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}

	// The first load's marker is held in flight (its load still served
	// when it went out); every later one goes through.
	release, stale := commitHoldingMarker(t, tb, p, 1)

	sh, code := tb.srv.txns.shardFor(p.id)
	if code != nil {
		t.Fatal(code)
	}
	coordinatorEpoch := func() int32 {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		if sh.coord == nil {
			return -1
		}
		return sh.coord.CoordinatorEpoch()
	}
	before := coordinatorEpoch()
	sh.reload() // what a failed append does; the leader epoch stays
	waitFor(t, 10*time.Second, "the reloaded shard to complete the commit", func() bool {
		return describeTxn(t, p.c, p.id).State == "CompleteCommit"
	})
	if after := coordinatorEpoch(); after <= before {
		t.Fatalf("coordinator epoch %d after the reload, %d before: must grow", after, before)
	}

	// The producer's next transaction opens on the same partition.
	if codes := p.addPartitions(3, "fence", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn of the next transaction: %v", codeNames(codes))
	}
	second := p.produce("fence", 0, "second")
	if second.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(second.ErrorCode))
	}
	if lso := part.LastStableOffset(); lso != second.BaseOffset {
		t.Fatalf("next transaction open at %d, last stable offset %d", second.BaseOffset, lso)
	}

	// The old load's marker arrives now.
	close(release)
	if err := <-stale; !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("the replaced load's marker: %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
	if lso := part.LastStableOffset(); lso != second.BaseOffset {
		t.Fatalf("the replaced load's marker ended the next transaction: last stable offset %d, want %d", lso, second.BaseOffset)
	}
	if got := readValues(t, tb, "fence", true, part.HighWatermark()); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("read_committed while the next transaction is open: %v", got)
	}

	p.end(false)
	hw := part.HighWatermark()
	if lso := part.LastStableOffset(); lso != hw {
		t.Fatalf("after the abort: last stable offset %d, high watermark %d", lso, hw)
	}
	if got := readValues(t, tb, "fence", true, hw); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("read_committed after the abort: %v, want [first]", got)
	}
	if got := readValues(t, tb, "fence", false, hw); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("read_uncommitted: %v", got)
	}
}

// TestCoordinatorEpochOrder: coordinator epochs grow with every reload
// under one leader epoch and with every leader epoch, and a later leader
// epoch's first load is above every reload of an earlier one.
func TestCoordinatorEpochOrder(t *testing.T) {
	cases := []struct {
		leaderEpoch, reloads int32
	}{
		{0, 0}, {0, 1}, {0, maxLoadsPerLeaderEpoch}, {1, 0}, {1, 7}, {2, 0}, {1000, 0}, {maxPackedLeaderEpoch - 1, maxLoadsPerLeaderEpoch}, {maxPackedLeaderEpoch, 0},
	}
	prev := int32(-1)
	for _, c := range cases {
		got := coordinatorEpochFor(c.leaderEpoch, c.reloads)
		if got <= prev {
			t.Fatalf("coordinatorEpochFor(%d, %d) = %d, not above the previous %d", c.leaderEpoch, c.reloads, got, prev)
		}
		prev = got
	}
	if got := coordinatorEpochFor(-1, 0); got != 0 {
		t.Fatalf("no leader epoch: %d", got)
	}
	if got := coordinatorEpochFor(maxPackedLeaderEpoch+5, 3); got != coordinatorEpochFor(maxPackedLeaderEpoch, 3) || got < 0 {
		t.Fatalf("beyond the packable leader epochs: %d", got)
	}
}

// TestTxnMarkerOfReplacedLoadFencedUnknownProducer: as
// TestTxnMarkerOfReplacedLoadFenced, on a partition the transaction added
// but never produced to, so the partition did not know the producer when
// the new load's marker came: the stale marker must still be refused once
// the producer's next transaction opens there. Kafka enters the producer
// on a marker (ProducerStateManager: the marker's coordinator epoch is
// kept even without a transaction), and so does the replica.
func TestTxnMarkerOfReplacedLoadFencedUnknownProducer(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("fence-unknown", 2, nil)
	part1 := tb.srv.topics.partition("fence-unknown", 1)

	p := newRawTxnProducer(t, tb, "tx-fence-unknown")
	if codes := p.addPartitions(3, "fence-unknown", 0, 1); !slices.Equal(codes, []int16{0, 0}) {
		t.Fatalf("AddPartitionsToTxn: %v", codeNames(codes))
	}
	if got := p.produce("fence-unknown", 0, "first"); got.ErrorCode != 0 { // nothing on partition 1
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}

	// The first load's marker for partition 1 (its second local write)
	// is held in flight.
	release, stale := commitHoldingMarker(t, tb, p, 2)
	sh, code := tb.srv.txns.shardFor(p.id)
	if code != nil {
		t.Fatal(code)
	}
	sh.reload()
	waitFor(t, 10*time.Second, "the reloaded shard to complete the commit", func() bool {
		return describeTxn(t, p.c, p.id).State == "CompleteCommit"
	})

	if codes := p.addPartitions(3, "fence-unknown", 1); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn of the next transaction: %v", codeNames(codes))
	}
	second := p.produce("fence-unknown", 1, "second")
	if second.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(second.ErrorCode))
	}
	close(release)
	if err := <-stale; !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("the replaced load's marker on partition 1: %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
	if lso := part1.LastStableOffset(); lso != second.BaseOffset {
		t.Fatalf("the replaced load's marker ended the next transaction: last stable offset %d, want %d", lso, second.BaseOffset)
	}
	p.end(false)
}

// commitHoldingMarker commits p's transaction (EndTxn, without waiting for
// the markers) while holding the nth marker write of its transactional id
// in flight, and returns once that write is held: closing release lets it
// go, and its outcome then arrives on stale.
func commitHoldingMarker(t *testing.T, tb *testBroker, p *rawTxnProducer, nth int32) (release chan struct{}, stale chan error) {
	t.Helper()
	inFlight := make(chan struct{})
	release, stale = make(chan struct{}), make(chan error, 1)
	var calls atomic.Int32
	hook := func(m txn.Markers, send func() error) error {
		if m.TransactionalID != p.id || calls.Add(1) != nth {
			return send()
		}
		close(inFlight)
		<-release
		err := send()
		stale <- err
		return err
	}
	tb.srv.txns.markerSendHook.Store(&hook)
	t.Cleanup(func() { tb.srv.txns.markerSendHook.Store(nil) })

	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 3
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = p.id, p.pid, p.epoch, true
	if code := roundTrip[*kmsg.EndTxnResponse](p.c, end).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(code))
	}
	select {
	case <-inFlight:
	case <-time.After(10 * time.Second):
		t.Fatalf("the marker task never sent marker write %d", nth)
	}
	return release, stale
}
