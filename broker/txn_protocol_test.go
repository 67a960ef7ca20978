package broker

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/txn"
)

// rawTxnProducer is a transactional producer spoken by hand, so a test can
// send what a buggy or late client would.
type rawTxnProducer struct {
	t     *testing.T
	c     *rawConn
	id    string
	pid   int64
	epoch int16
	seq   map[int32]int32
}

func newRawTxnProducer(t *testing.T, tb *testBroker, id string) *rawTxnProducer {
	t.Helper()
	c := tb.dialRaw()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp := roundTrip[*kmsg.InitProducerIDResponse](c, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	return &rawTxnProducer{t: t, c: c, id: id, pid: resp.ProducerID, epoch: resp.ProducerEpoch, seq: map[int32]int32{}}
}

func (p *rawTxnProducer) produce(topic string, partition int32, values ...string) kmsg.ProduceResponseTopicPartition {
	p.t.Helper()
	req := produceRequest(9, topic, partition, txnBatch(p.pid, p.epoch, p.seq[partition], values...))
	req.TransactionID = &p.id
	resp := roundTrip[*kmsg.ProduceResponse](p.c, req)
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode == 0 {
		p.seq[partition] += int32(len(values))
	}
	return got
}

func (p *rawTxnProducer) addPartitions(version int16, topic string, partitions ...int32) []int16 {
	p.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.id, p.pid, p.epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, partitions
	req.Topics = append(req.Topics, rt)
	resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, req)
	var codes []int16
	for _, rp := range resp.Topics[0].Partitions {
		codes = append(codes, rp.ErrorCode)
	}
	return codes
}

// verify sends a verify-only AddPartitionsToTxn (v4+, as a partition
// leader does) and returns each partition's code.
func (p *rawTxnProducer) verify(version int16, topic string, partitions ...int32) []int16 {
	p.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = version
	tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = p.id, p.pid, p.epoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = topic, partitions
	tr.Topics = append(tr.Topics, tt)
	req.Transactions = append(req.Transactions, tr)
	resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, req)
	if len(resp.Transactions) != 1 || resp.Transactions[0].TransactionalID != p.id {
		p.t.Fatalf("verify answered %d transactions", len(resp.Transactions))
	}
	var codes []int16
	for _, rp := range resp.Transactions[0].Topics[0].Partitions {
		codes = append(codes, rp.ErrorCode)
	}
	return codes
}

func (p *rawTxnProducer) end(commit bool) {
	p.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.id, p.pid, p.epoch, commit
	if err := kerr.ErrorForCode(roundTrip[*kmsg.EndTxnResponse](p.c, req).ErrorCode); err != nil {
		p.t.Fatalf("EndTxn: %v", err)
	}
	// EndTxn is answered once the decision is durable; the markers follow
	// asynchronously, as in Kafka. A client's next call would get
	// CONCURRENT_TRANSACTIONS until then and retry: wait as it would.
	waitFor(p.t, 10*time.Second, "the transaction's markers", func() bool {
		st := describeTxn(p.t, p.c, p.id).State
		return st != "PrepareCommit" && st != "PrepareAbort"
	})
}

func describeTxn(t *testing.T, c *rawConn, id string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := roundTrip[*kmsg.DescribeTransactionsResponse](c, req)
	if len(resp.TransactionStates) != 1 {
		t.Fatalf("DescribeTransactions answered %d ids", len(resp.TransactionStates))
	}
	return resp.TransactionStates[0]
}

func listTxns(t *testing.T, c *rawConn, version int16, states []string, pattern *string) *kmsg.ListTransactionsResponse {
	t.Helper()
	req := kmsg.NewPtrListTransactionsRequest()
	req.Version = version
	req.StateFilters = states
	req.TransactionalIDPattern = pattern
	return roundTrip[*kmsg.ListTransactionsResponse](c, req)
}

func codeNames(codes []int16) []string {
	var out []string
	for _, c := range codes {
		if err := kerr.ErrorForCode(c); err != nil {
			out = append(out, err.(*kerr.Error).Message)
		} else {
			out = append(out, "NONE")
		}
	}
	return out
}

// TestTxnProduceVerification: KIP-890 part 1. A transactional batch for a
// partition that is not in the producer's transaction is refused and
// leaves nothing behind — neither before AddPartitionsToTxn nor after the
// transaction was aborted (a late batch), so no transaction can hang and
// hold back read_committed consumers. Also the verify-only form of
// AddPartitionsToTxn, DescribeTransactions and ListTransactions.
func TestTxnProduceVerification(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("kip890", 2, nil)
	p := newRawTxnProducer(t, tb, "tx-verify")
	part := tb.srv.topics.partition("kip890", 0)

	got := p.produce("kip890", 0, "early")
	if got.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("produce before AddPartitionsToTxn: %v, want INVALID_TXN_STATE", kerr.ErrorForCode(got.ErrorCode))
	}
	if end := tb.logEnd("kip890", 0); end != 0 {
		t.Fatalf("a refused produce appended: log end %d", end)
	}

	if codes := p.addPartitions(3, "kip890", 0); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("AddPartitionsToTxn: %v", codeNames(codes))
	}
	if got := p.produce("kip890", 0, "a", "b"); got.ErrorCode != 0 {
		t.Fatalf("produce after AddPartitionsToTxn: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := p.produce("kip890", 0, "c"); got.ErrorCode != 0 {
		t.Fatalf("second produce in the transaction: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if lso := part.LastStableOffset(); lso != 0 {
		t.Fatalf("last stable offset %d with the transaction open, want 0", lso)
	}

	// Verify-only: partition 0 is in the transaction, 1 is not; v4 has no
	// TRANSACTION_ABORTABLE yet.
	if codes := p.verify(4, "kip890", 0, 1); !slices.Equal(codes, []int16{0, kerr.InvalidTxnState.Code}) {
		t.Fatalf("verify v4: %v", codeNames(codes))
	}
	if codes := p.verify(5, "kip890", 0, 1); !slices.Equal(codes, []int16{0, kerr.TransactionAbortable.Code}) {
		t.Fatalf("verify v5: %v", codeNames(codes))
	}
	if codes := p.verify(5, "no-such-topic", 0); !slices.Equal(codes, []int16{kerr.UnknownTopicOrPartition.Code}) {
		t.Fatalf("verify of an unknown topic: %v", codeNames(codes))
	}
	// Verifying added nothing.
	d := describeTxn(t, p.c, "tx-verify")
	if d.ErrorCode != 0 || d.State != "Ongoing" || d.ProducerID != p.pid || d.ProducerEpoch != p.epoch || d.TimeoutMillis != 60000 || d.StartTimestamp <= 0 {
		t.Fatalf("describe ongoing: %+v", d)
	}
	if len(d.Topics) != 1 || d.Topics[0].Topic != "kip890" || !slices.Equal(d.Topics[0].Partitions, []int32{0}) {
		t.Fatalf("describe partitions: %+v", d.Topics)
	}
	if d := describeTxn(t, p.c, "nobody"); d.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("describe unknown id: %v", kerr.ErrorForCode(d.ErrorCode))
	}

	other := newRawTxnProducer(t, tb, "other-id")
	lr := listTxns(t, p.c, 1, []string{"Ongoing", "Bogus"}, nil)
	if lr.ErrorCode != 0 || len(lr.TransactionStates) != 1 || lr.TransactionStates[0].TransactionalID != "tx-verify" || lr.TransactionStates[0].ProducerID != p.pid {
		t.Fatalf("list Ongoing: %+v", lr)
	}
	if !slices.Equal(lr.UnknownStateFilters, []string{"Bogus"}) {
		t.Fatalf("unknown state filters: %v", lr.UnknownStateFilters)
	}
	if lr := listTxns(t, p.c, 0, nil, nil); len(lr.TransactionStates) != 2 {
		t.Fatalf("list all: %+v", lr.TransactionStates)
	}
	pattern := "other-.*"
	if lr := listTxns(t, p.c, 2, nil, &pattern); len(lr.TransactionStates) != 1 || lr.TransactionStates[0].TransactionalID != "other-id" || lr.TransactionStates[0].TransactionState != "Empty" {
		t.Fatalf("list by pattern: %+v", lr.TransactionStates)
	}
	bad := "(["
	if lr := listTxns(t, p.c, 2, nil, &bad); lr.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("bad pattern: %v", kerr.ErrorForCode(lr.ErrorCode))
	}
	_ = other

	p.end(false)
	if d := describeTxn(t, p.c, "tx-verify"); d.State != "CompleteAbort" || len(d.Topics) != 0 {
		t.Fatalf("describe after abort: %+v", d)
	}
	hw := part.HighWatermark()
	// A late batch of the aborted transaction (same epoch) must not open a
	// new transaction no marker would close.
	if got := p.produce("kip890", 0, "late"); got.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("late produce after abort: %v, want INVALID_TXN_STATE", kerr.ErrorForCode(got.ErrorCode))
	}
	if lso, end := part.LastStableOffset(), part.HighWatermark(); lso != end || end != hw {
		t.Fatalf("after the late batch: last stable %d, high watermark %d (was %d)", lso, end, hw)
	}
}

// TestOffsetFetchRequireStable: while a transaction's offset commit is
// undecided, OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT
// for that partition (the client retries) and without it the last decided
// offset; after the commit marker both see the new offset.
func TestOffsetFetchRequireStable(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("stable", 1, nil)
	const group = "stable-group"
	c := tb.dialRaw()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version = 8
	commit.Group, commit.Generation = group, -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "stable"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = 0, 5
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	if code := roundTrip[*kmsg.OffsetCommitResponse](c, commit).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("plain commit: %v", kerr.ErrorForCode(code))
	}

	p := newRawTxnProducer(t, tb, "tx-stable")
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version = 3
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = p.id, p.pid, p.epoch, group
	if code := roundTrip[*kmsg.AddOffsetsToTxnResponse](p.c, ao).ErrorCode; code != 0 {
		t.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(code))
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version = 3
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = p.id, group, p.pid, p.epoch, -1
	tt := kmsg.NewTxnOffsetCommitRequestTopic()
	tt.Topic = "stable"
	tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	tp.Partition, tp.Offset = 0, 9
	tt.Partitions = append(tt.Partitions, tp)
	tc.Topics = append(tc.Topics, tt)
	if code := roundTrip[*kmsg.TxnOffsetCommitResponse](p.c, tc).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}

	fetch := func(version int16, requireStable bool) (int64, int16) {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = version
		req.RequireStable = requireStable
		if version >= 8 {
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = group
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic, gt.Partitions = "stable", []int32{0}
			g.Topics = append(g.Topics, gt)
			req.Groups = append(req.Groups, g)
			resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
			rp := resp.Groups[0].Topics[0].Partitions[0]
			return rp.Offset, rp.ErrorCode
		}
		req.Group = group
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "stable", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
		rp := resp.Topics[0].Partitions[0]
		return rp.Offset, rp.ErrorCode
	}
	for _, v := range []int16{7, 8} {
		if off, code := fetch(v, true); code != kerr.UnstableOffsetCommit.Code || off != -1 {
			t.Fatalf("v%d require_stable with a pending commit: offset %d, %v; want -1, UNSTABLE_OFFSET_COMMIT", v, off, kerr.ErrorForCode(code))
		}
		if off, code := fetch(v, false); code != 0 || off != 5 {
			t.Fatalf("v%d without require_stable: offset %d, %v; want the decided 5", v, off, kerr.ErrorForCode(code))
		}
	}
	p.end(true)
	for _, v := range []int16{7, 8} {
		if off, code := fetch(v, true); code != 0 || off != 9 {
			t.Fatalf("v%d require_stable after commit: offset %d, %v; want 9", v, off, kerr.ErrorForCode(code))
		}
	}
}

// TestTxnCoordinatorRestartMidTransaction: the broker (and with it the
// transaction coordinator) restarts (1) while a transaction is ongoing: the
// producer commits it afterwards; (2) after a commit was decided but before
// its markers were written: the reloaded coordinator finishes the commit
// by itself; (3) while an abandoned transaction is ongoing: it is aborted
// at its timeout after the restart, with no client involved. In every case
// read_committed consumers end up with exactly the committed records and
// no partition's last stable offset is left behind.
func TestTxnCoordinatorRestartMidTransaction(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("restart-txn", 1, nil)
	part := func() *partition { return tb.srv.topics.partition("restart-txn", 0) }

	// (1) ongoing across a restart, then committed.
	p1 := newRawTxnProducer(t, tb, "tx-ongoing")
	p1.addPartitions(3, "restart-txn", 0)
	if got := p1.produce("restart-txn", 0, "one-a", "one-b"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}
	tb.restart()
	if lso := part().LastStableOffset(); lso != 0 {
		t.Fatalf("after restart the open transaction's last stable offset is %d, want 0", lso)
	}
	p1.c = tb.dialRaw()
	if d := describeTxn(t, p1.c, "tx-ongoing"); d.State != "Ongoing" {
		t.Fatalf("after restart: %+v", d)
	}
	p1.end(true)

	// (2) decided, markers not written, broker restarted.
	p2 := newRawTxnProducer(t, tb, "tx-decided")
	p2.addPartitions(3, "restart-txn", 0)
	if got := p2.produce("restart-txn", 0, "two-a"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}
	crash := func(txn.Markers) error { return errors.New("injected: crash before markers") }
	tb.srv.txns.markerFault.Store(&crash)
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p2.id, p2.pid, p2.epoch, true
	// EndTxn is answered once the decision is durable, before the
	// markers (Kafka's behaviour): it succeeds although they fail.
	if code := roundTrip[*kmsg.EndTxnResponse](p2.c, req).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(code))
	}
	if d := describeTxn(t, p2.c, "tx-decided"); d.State != "PrepareCommit" {
		t.Fatalf("after the failed markers: %+v", d)
	}
	tb.restart() // a fresh coordinator without the fault
	waitFor(t, 10*time.Second, "the decided commit to complete after the restart", func() bool {
		return describeTxn(t, tb.dialRaw(), "tx-decided").State == "CompleteCommit"
	})

	// (2b) the same with a transient fault and no restart: the
	// coordinator's tick retries the markers.
	p2b := newRawTxnProducer(t, tb, "tx-retried")
	p2b.addPartitions(3, "restart-txn", 0)
	if got := p2b.produce("restart-txn", 0, "retry-a"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}
	var faultMu sync.Mutex
	faults := 1
	transient := func(txn.Markers) error {
		faultMu.Lock()
		defer faultMu.Unlock()
		if faults > 0 {
			faults--
			return errors.New("injected: transient marker failure")
		}
		return nil
	}
	tb.srv.txns.markerFault.Store(&transient)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p2b.id, p2b.pid, p2b.epoch
	if code := roundTrip[*kmsg.EndTxnResponse](p2b.c, req).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(code))
	}
	waitFor(t, 10*time.Second, "the tick to retry the markers", func() bool {
		return describeTxn(t, p2b.c, "tx-retried").State == "CompleteCommit"
	})

	// (3) abandoned: a short timeout, the broker restarts, nobody returns.
	c := tb.dialRaw()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	id := "tx-abandoned"
	init.TransactionalID, init.TransactionTimeoutMillis, init.ProducerID, init.ProducerEpoch = &id, 1500, -1, -1
	ir := roundTrip[*kmsg.InitProducerIDResponse](c, init)
	p3 := &rawTxnProducer{t: t, c: c, id: id, pid: ir.ProducerID, epoch: ir.ProducerEpoch, seq: map[int32]int32{}}
	p3.addPartitions(3, "restart-txn", 0)
	if got := p3.produce("restart-txn", 0, "three-a", "three-b"); got.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(got.ErrorCode))
	}
	tb.restart()
	waitFor(t, 15*time.Second, "the abandoned transaction to time out after the restart", func() bool {
		p := part()
		// The markers (LSO back at the HW) come before the coordinator
		// records CompleteAbort: wait for both.
		return p.LastStableOffset() == p.HighWatermark() && describeTxn(t, tb.dialRaw(), id).State == "CompleteAbort"
	})
	if d := describeTxn(t, tb.dialRaw(), id); d.State != "CompleteAbort" || d.ProducerEpoch <= p3.epoch {
		t.Fatalf("abandoned transaction: %+v (epoch must be bumped past %d)", d, p3.epoch)
	}

	got := readValues(t, tb, "restart-txn", true, part().HighWatermark())
	if want := []string{"one-a", "one-b", "two-a", "retry-a"}; !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	all := readValues(t, tb, "restart-txn", false, part().HighWatermark())
	if want := []string{"one-a", "one-b", "two-a", "retry-a", "three-a", "three-b"}; !slices.Equal(all, want) {
		t.Fatalf("read_uncommitted: %v, want %v", all, want)
	}
}
