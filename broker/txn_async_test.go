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

// TestTxnMarkerBetweenVerifyAndAppend: the first transactional batch on a
// partition is verified by the coordinator, then — before it is appended —
// the producer's transaction is aborted and its marker written on that
// partition (txnVerifier holds no lock across it). The batch must be refused (INVALID_TXN_STATE) rather than open a
// transaction no marker will close: the partition's last stable offset
// stays at its high watermark. Afterwards the producer's next transaction
// produces normally.
func TestTxnMarkerBetweenVerifyAndAppend(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("verify-race", 1, nil)
	part := tb.srv.topics.partition("verify-race", 0)

	p := newRawTxnProducer(t, tb, "tx-verify-race")
	if codes := p.addPartitions(3, "verify-race", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn: %v", codeNames(codes))
	}

	verified := make(chan struct{})
	release := make(chan struct{})
	var once atomic.Bool
	hook := func() {
		if once.CompareAndSwap(false, true) {
			close(verified)
			<-release
		}
	}
	tb.srv.txns.verifiedHook.Store(&hook)
	t.Cleanup(func() { tb.srv.txns.verifiedHook.Store(nil) })

	// The produce, on its own connection, stops in the hook once verified.
	produced := make(chan kmsg.ProduceResponseTopicPartition, 1)
	producer := *p
	producer.c = tb.dialRaw()
	go func() {
		req := produceRequest(9, "verify-race", 0, txnBatch(p.pid, p.epoch, 0, "late"))
		req.TransactionID = &p.id
		produced <- roundTrip[*kmsg.ProduceResponse](producer.c, req).Topics[0].Partitions[0]
	}()
	select {
	case <-verified:
	case <-time.After(10 * time.Second):
		t.Fatal("the produce never reached verification")
	}
	// Abort meanwhile; end waits until the markers are written.
	p.end(false)
	if d := describeTxn(t, p.c, p.id); d.State != "CompleteAbort" {
		t.Fatalf("after the abort: %+v", d)
	}
	hw := part.HighWatermark()
	close(release)
	got := <-produced
	if got.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("batch verified before the marker, appended after: %v, want INVALID_TXN_STATE", kerr.ErrorForCode(got.ErrorCode))
	}
	if lso, end := part.LastStableOffset(), part.HighWatermark(); lso != end || end != hw {
		t.Fatalf("after the refused batch: last stable %d, high watermark %d (was %d)", lso, end, hw)
	}

	// The next transaction is unaffected.
	if codes := p.addPartitions(3, "verify-race", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn again: %v", codeNames(codes))
	}
	if got := p.produce("verify-race", 0, "next"); got.ErrorCode != 0 {
		t.Fatalf("produce in the next transaction: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	p.end(true)
	if lso, end := part.LastStableOffset(), part.HighWatermark(); lso != end {
		t.Fatalf("after the commit: last stable %d, high watermark %d", lso, end)
	}
}

// TestTxnEndAnsweredBeforeMarkers: EndTxn is answered once its decision is
// durable, while the markers still fail; meanwhile the producer's next
// AddPartitionsToTxn, AddOffsetsToTxn and InitProducerId get
// CONCURRENT_TRANSACTIONS (retriable), an EndTxn retry too; once the
// markers go through (the marker task retries with backoff) the
// transaction completes and the producer carries on.
func TestTxnEndAnsweredBeforeMarkers(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("async-end", 1, nil)
	p := newRawTxnProducer(t, tb, "tx-async-end")
	p.addPartitions(3, "async-end", 0)
	if got := p.produce("async-end", 0, "a"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}
	var failing atomic.Bool
	failing.Store(true)
	fault := func(txn.Markers) error {
		if failing.Load() {
			return errors.New("injected: marker failure")
		}
		return nil
	}
	tb.srv.txns.markerFault.Store(&fault)

	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 3
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = p.id, p.pid, p.epoch, true
	start := time.Now()
	if code := roundTrip[*kmsg.EndTxnResponse](p.c, end).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(code))
	}
	if d := describeTxn(t, p.c, p.id); d.State != "PrepareCommit" {
		t.Fatalf("while the markers fail: %+v", d)
	}
	if codes := p.addPartitions(3, "async-end", 0); !slices.Equal(codes, []int16{kerr.ConcurrentTransactions.Code}) {
		t.Fatalf("AddPartitionsToTxn while completing: %v", codeNames(codes))
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version = 3
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = p.id, p.pid, p.epoch, "g"
	if code := roundTrip[*kmsg.AddOffsetsToTxnResponse](p.c, ao).ErrorCode; code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("AddOffsetsToTxn while completing: %v", kerr.ErrorForCode(code))
	}
	if code := roundTrip[*kmsg.EndTxnResponse](p.c, end).ErrorCode; code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("EndTxn retry while completing: %v", kerr.ErrorForCode(code))
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	init.TransactionalID, init.TransactionTimeoutMillis, init.ProducerID, init.ProducerEpoch = &p.id, 60000, p.pid, p.epoch
	if code := roundTrip[*kmsg.InitProducerIDResponse](p.c, init).ErrorCode; code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("InitProducerId while completing: %v", kerr.ErrorForCode(code))
	}
	failing.Store(false)
	waitFor(t, 10*time.Second, "the marker task to retry", func() bool {
		return describeTxn(t, p.c, p.id).State == "CompleteCommit"
	})
	t.Logf("completed %v after EndTxn", time.Since(start).Round(time.Millisecond))
	if code := roundTrip[*kmsg.EndTxnResponse](p.c, end).ErrorCode; code != 0 {
		t.Fatalf("EndTxn retry once complete: %v", kerr.ErrorForCode(code))
	}
	if codes := p.addPartitions(3, "async-end", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn after completion: %v", codeNames(codes))
	}
	part := tb.srv.topics.partition("async-end", 0)
	if lso := part.LastStableOffset(); lso != part.HighWatermark() {
		t.Fatalf("the committed transaction left the last stable offset at %d (high watermark %d)", lso, part.HighWatermark())
	}
}
