package replica

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// The producer-state side of transactions, against a real storage.Log: the
// helpers below append as Replica.Append does (check, append,
// record) and append markers as the transaction path will (checkMarker,
// append, completeTxn, RecordAbortedTxn).

const txnTestNowMs = 1_000_000

type txnTestLog struct {
	t         *testing.T
	dir       string
	log       *storage.Log
	producers *producerTable
	nextSeq   map[int64]int32
}

func newTxnTestLog(t *testing.T) *txnTestLog {
	t.Helper()
	l := &txnTestLog{t: t, dir: t.TempDir(), producers: newProducerTable(), nextSeq: map[int64]int32{}}
	l.log = openTxnTestStorage(t, l.dir)
	return l
}

func openTxnTestStorage(t *testing.T, dir string) *storage.Log {
	t.Helper()
	log, err := storage.Open(dir, storage.DefaultConfig(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}

// txnDataBatch is a v2 batch of n records from producer pid at epoch,
// starting at sequence seq, with the transactional attribute if asked.
func txnDataBatch(t *testing.T, pid int64, epoch int16, seq int32, n int, transactional bool) []byte {
	return dataBatch(t, pid, epoch, seq, n, transactional)
}

// produce appends n records of pid, continuing its sequence, and returns
// the batch's base offset.
func (l *txnTestLog) produce(pid int64, epoch int16, n int, transactional bool) int64 {
	l.t.Helper()
	batch := txnDataBatch(l.t, pid, epoch, l.nextSeq[pid], n, transactional)
	if code := l.tryProduce(batch); code != 0 {
		l.t.Fatalf("produce pid %d epoch %d: %v", pid, epoch, kerr.ErrorForCode(code))
	}
	l.nextSeq[pid] += int32(n)
	return l.log.LogEndOffset() - int64(n)
}

func (l *txnTestLog) tryProduce(batch []byte) int16 {
	l.t.Helper()
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		l.t.Fatal(err)
	}
	if dup, code := l.producers.check(&headers[0]); code != 0 || dup != nil {
		if dup != nil {
			l.t.Fatalf("unexpected duplicate of offsets %d-%d", dup.FirstOffset, dup.LastOffset)
		}
		return code
	}
	res, err := l.log.Append(batch, headers, storage.AppendOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	headers[0].BaseOffset = res.FirstOffset
	l.producers.record(&headers[0], txnTestNowMs)
	return 0
}

// marker appends a COMMIT or ABORT marker of pid at epoch and completes the
// transaction, recording an abort in the log's index.
func (l *txnTestLog) marker(pid int64, epoch int16, commit bool) (offset int64, aborted *storage.AbortedTxn, err error) {
	l.t.Helper()
	if err := l.producers.checkMarker(pid, epoch, 0); err != nil {
		return -1, nil, err
	}
	batch := storage.EncodeControlBatch(pid, epoch, commit, 0, time.Now().UnixMilli())
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		l.t.Fatal(err)
	}
	res, err := l.log.Append(batch, headers, storage.AppendOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	lso := l.producers.lastStableOffsetAfterTxn(pid, res.FirstOffset)
	aborted, err = l.producers.completeTxn(pid, epoch, 0, res.FirstOffset, commit, lso, txnTestNowMs)
	if err != nil {
		l.t.Fatalf("completeTxn after checkMarker passed: %v", err)
	}
	if aborted != nil {
		if err := l.log.RecordAbortedTxn(*aborted); err != nil {
			l.t.Fatal(err)
		}
	}
	return res.FirstOffset, aborted, nil
}

func (l *txnTestLog) mustMarker(pid int64, epoch int16, commit bool) (int64, *storage.AbortedTxn) {
	l.t.Helper()
	offset, aborted, err := l.marker(pid, epoch, commit)
	if err != nil {
		l.t.Fatal(err)
	}
	return offset, aborted
}

func (l *txnTestLog) wantUnstable(want int64) {
	l.t.Helper()
	got, ok := l.producers.firstUnstableOffset()
	if want < 0 {
		if ok {
			l.t.Fatalf("firstUnstableOffset = %d, want none", got)
		}
		if lso, hw := lastStableOffset(l.producers, l.log.LogEndOffset()), l.log.LogEndOffset(); lso != hw {
			l.t.Fatalf("lastStableOffset = %d without a transaction, want the high watermark %d", lso, hw)
		}
		return
	}
	if !ok || got != want {
		l.t.Fatalf("firstUnstableOffset = %d, %v; want %d", got, ok, want)
	}
	if lso := lastStableOffset(l.producers, l.log.LogEndOffset()); lso != want {
		l.t.Fatalf("lastStableOffset = %d, want %d", lso, want)
	}
}

func (l *txnTestLog) txnFirstOffset(pid int64) int64 {
	l.t.Helper()
	e := l.producers.entries[pid]
	if e == nil {
		l.t.Fatalf("producer %d unknown", pid)
	}
	return e.CurrentTxnFirstOffset
}

func TestProducerTxnOngoingSetsFirstUnstableOffset(t *testing.T) {
	l := newTxnTestLog(t)
	l.produce(1, 0, 3, false) // 0-2, idempotent only
	l.wantUnstable(-1)
	if got := l.txnFirstOffset(1); got != -1 {
		t.Fatalf("idempotent producer's CurrentTxnFirstOffset = %d, want -1", got)
	}

	first := l.produce(2, 0, 2, true) // 3-4
	l.wantUnstable(first)
	l.produce(2, 0, 2, true) // 5-6: same transaction
	l.wantUnstable(first)
	l.produce(1, 0, 1, false) // others keep appending
	l.wantUnstable(first)

	// The high watermark bounds the last stable offset.
	if lso := lastStableOffset(l.producers, first-1); lso != first-1 {
		t.Fatalf("lastStableOffset below the transaction = %d, want the high watermark %d", lso, first-1)
	}
}

func TestProducerTxnInterleavedProducers(t *testing.T) {
	l := newTxnTestLog(t)
	firstA := l.produce(10, 0, 2, true) // 0-1
	firstB := l.produce(20, 0, 2, true) // 2-3
	l.produce(10, 0, 2, true)           // 4-5
	l.wantUnstable(firstA)

	// B aborts first: its entry's LSO is A's first offset, still open.
	markerB, aborted := l.mustMarker(20, 0, false)
	want := storage.AbortedTxn{ProducerID: 20, FirstOffset: firstB, LastOffset: markerB, LastStableOffset: firstA}
	if aborted == nil || *aborted != want {
		t.Fatalf("abort of B = %+v, want %+v", aborted, want)
	}
	l.wantUnstable(firstA)

	// B starts again after A; A commits; B's new transaction is the bound.
	firstB2 := l.produce(20, 0, 1, true)
	if _, aborted := l.mustMarker(10, 0, true); aborted != nil {
		t.Fatalf("commit returned an aborted transaction %+v", aborted)
	}
	l.wantUnstable(firstB2)
	markerB2, aborted := l.mustMarker(20, 0, false)
	want = storage.AbortedTxn{ProducerID: 20, FirstOffset: firstB2, LastOffset: markerB2, LastStableOffset: markerB2 + 1}
	if aborted == nil || *aborted != want {
		t.Fatalf("second abort of B = %+v, want %+v", aborted, want)
	}
	l.wantUnstable(-1)

	got, err := l.log.AbortedTxns(0, l.log.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := []storage.AbortedTxn{
		{ProducerID: 20, FirstOffset: firstB, LastOffset: markerB, LastStableOffset: firstA},
		want,
	}
	if !reflect.DeepEqual(got, wantIndex) {
		t.Fatalf("aborted index = %+v, want %+v", got, wantIndex)
	}
}

func TestProducerTxnCommitAndAbort(t *testing.T) {
	l := newTxnTestLog(t)
	first := l.produce(1, 0, 3, true)
	if offset, aborted := l.mustMarker(1, 0, true); aborted != nil || l.txnFirstOffset(1) != -1 {
		t.Fatalf("commit at %d: aborted %+v, CurrentTxnFirstOffset %d; want nil, -1", offset, aborted, l.txnFirstOffset(1))
	}
	l.wantUnstable(-1)

	// A marker for a partition the producer wrote nothing to in this
	// transaction (Kafka writes one to every partition) ends nothing.
	if _, aborted := l.mustMarker(1, 0, false); aborted != nil {
		t.Fatalf("abort without an ongoing transaction = %+v, want nil", aborted)
	}
	// Nor does a marker of a producer the partition never saw; it enters
	// the producer (as Kafka does) with no transaction, so that its
	// coordinator epoch fences a later stale marker.
	if _, aborted := l.mustMarker(99, 0, false); aborted != nil {
		t.Fatalf("abort of an unknown producer = %+v, want nil", aborted)
	}
	if e := l.producers.entries[99]; e == nil || e.txnOngoing() || e.CoordinatorEpoch != 0 || e.LastUpdate != txnTestNowMs {
		t.Fatalf("a marker of an unknown producer entered %+v, want no transaction, coordinator epoch 0, last update now", e)
	}

	second := l.produce(1, 0, 2, true)
	if second <= first {
		t.Fatalf("second transaction at %d, not after %d", second, first)
	}
	l.wantUnstable(second)
	marker, aborted := l.mustMarker(1, 0, false)
	want := storage.AbortedTxn{ProducerID: 1, FirstOffset: second, LastOffset: marker, LastStableOffset: marker + 1}
	if aborted == nil || *aborted != want {
		t.Fatalf("abort = %+v, want %+v", aborted, want)
	}
	l.wantUnstable(-1)
}

func TestProducerTxnCheck(t *testing.T) {
	l := newTxnTestLog(t)
	txn := txnDataBatch(t, 1, 0, 0, 2, true)
	if code := l.tryProduce(txn); code != 0 {
		t.Fatalf("transactional batch: %v", kerr.ErrorForCode(code))
	}
	l.nextSeq[1] = 2

	headers, err := storage.ValidateBatches(txn)
	if err != nil {
		t.Fatal(err)
	}
	if dup, code := l.producers.check(&headers[0]); code != 0 || dup == nil || dup.FirstOffset != 0 {
		t.Fatalf("retry of the transactional batch: duplicate %+v, %v; want the batch at 0", dup, kerr.ErrorForCode(code))
	}
	for _, tc := range []struct {
		name  string
		batch []byte
		code  int16
	}{
		{"non-transactional batch during the transaction", txnDataBatch(t, 1, 0, 2, 1, false), kerr.InvalidTxnState.Code},
		{"non-transactional batch at a new epoch", txnDataBatch(t, 1, 1, 0, 1, false), kerr.InvalidTxnState.Code},
		{"client control batch", storage.EncodeControlBatch(1, 0, true, 0, 0), kerr.InvalidRecord.Code},
		{"transactional batch, next sequence", txnDataBatch(t, 1, 0, 2, 1, true), 0},
	} {
		headers, err := storage.ValidateBatches(tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		if _, code := l.producers.check(&headers[0]); code != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.code))
		}
	}

	l.mustMarker(1, 0, true)
	if code := l.tryProduce(txnDataBatch(t, 1, 0, 2, 1, false)); code != 0 {
		t.Fatalf("non-transactional batch after the commit: %v", kerr.ErrorForCode(code))
	}
}

func TestProducerTxnMarkerEpoch(t *testing.T) {
	l := newTxnTestLog(t)
	first := l.produce(1, 3, 2, true)

	// An older epoch is fenced and changes nothing.
	end := l.log.LogEndOffset()
	if _, _, err := l.marker(1, 2, false); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker at an older epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if _, err := l.producers.completeTxn(1, 2, 0, end, false, end+1, txnTestNowMs); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("completeTxn at an older epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if got := l.txnFirstOffset(1); got != first {
		t.Fatalf("fenced marker changed CurrentTxnFirstOffset to %d, want %d", got, first)
	}

	// The coordinator aborts a fenced producer's transaction with a bumped
	// epoch: the transaction ends and the epoch moves on.
	marker, aborted := l.mustMarker(1, 4, false)
	want := storage.AbortedTxn{ProducerID: 1, FirstOffset: first, LastOffset: marker, LastStableOffset: marker + 1}
	if aborted == nil || *aborted != want {
		t.Fatalf("abort at a bumped epoch = %+v, want %+v", aborted, want)
	}
	if e := l.producers.entries[1]; e.Epoch != 4 || len(e.Batches) != 0 {
		t.Fatalf("after the bumped marker: epoch %d, %d batches; want 4, 0", e.Epoch, len(e.Batches))
	}
	if code := l.tryProduce(txnDataBatch(t, 1, 3, 2, 1, true)); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("batch of the fenced epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
	if code := l.tryProduce(txnDataBatch(t, 1, 4, 0, 1, true)); code != 0 {
		t.Fatalf("batch of the new epoch from sequence 0: %v", kerr.ErrorForCode(code))
	}
	l.wantUnstable(marker + 1)
}

// TestProducerTxnEpochBumpKeepsTransaction: a data batch at a new epoch
// forgets sequences but not the ongoing transaction (only a marker ends it).
func TestProducerTxnEpochBumpKeepsTransaction(t *testing.T) {
	l := newTxnTestLog(t)
	first := l.produce(1, 0, 2, true)
	l.nextSeq[1] = 0
	l.produce(1, 1, 1, true)
	if got := l.txnFirstOffset(1); got != first {
		t.Fatalf("CurrentTxnFirstOffset after an epoch bump = %d, want %d", got, first)
	}
	l.wantUnstable(first)
}

func TestProducerTxnExpiryKeepsOngoing(t *testing.T) {
	l := newTxnTestLog(t)
	l.produce(1, 0, 1, true)
	l.produce(2, 0, 1, false)
	later := txnTestNowMs + producerIDExpiration.Milliseconds() + 1
	l.producers.expire(later)
	if _, ok := l.producers.entries[2]; ok {
		t.Fatal("idle idempotent producer not expired")
	}
	if _, ok := l.producers.entries[1]; !ok {
		t.Fatal("producer with an ongoing transaction expired")
	}
	l.wantUnstable(0)

	l.mustMarker(1, 0, true)
	l.producers.expire(later)
	if _, ok := l.producers.entries[1]; ok {
		t.Fatal("idle producer not expired once its transaction committed")
	}
}

// txnScenario appends, for the snapshot and replay tests: a transaction of
// producer 1 committed, one of producer 2 ongoing, producer 3 idempotent,
// producer 4's transaction aborted after an epoch bump. It returns the log
// end offset after the first half, where a snapshot goes.
func txnScenario(l *txnTestLog, afterFirstHalf func()) {
	l.produce(1, 0, 2, true)
	l.produce(2, 0, 1, true)
	l.produce(3, 0, 3, false)
	l.produce(4, 0, 1, true)
	afterFirstHalf()
	l.produce(1, 0, 1, true)
	l.mustMarker(1, 0, true)  // ends a transaction begun before the snapshot
	l.mustMarker(4, 1, false) // likewise, bumping the epoch
	l.produce(2, 0, 2, true)
	l.produce(3, 0, 1, false)
	l.produce(1, 0, 1, true) // a new transaction after the snapshot
	l.produce(5, 0, 1, true)
	l.mustMarker(5, 0, false) // begun and aborted after the snapshot
}

func (l *txnTestLog) reload() *producerTable {
	l.t.Helper()
	if err := l.log.Close(); err != nil {
		l.t.Fatal(err)
	}
	l.log = openTxnTestStorage(l.t, l.dir)
	loaded, _, err := loadProducerTable(l.log, txnTestNowMs, slog.New(slog.DiscardHandler))
	if err != nil {
		l.t.Fatal(err)
	}
	return loaded
}

func sameProducerTables(t *testing.T, what string, got, want *producerTable) {
	t.Helper()
	if !reflect.DeepEqual(got.entries, want.entries) {
		for id, e := range want.entries {
			t.Logf("want producer %d: %+v; got %+v", id, *e, got.entries[id])
		}
		t.Fatalf("%s: producer entries differ", what)
	}
	if !reflect.DeepEqual(got.ongoingTxns, want.ongoingTxns) {
		t.Fatalf("%s: ongoing transactions %v, want %v", what, got.ongoingTxns, want.ongoingTxns)
	}
}

func TestProducerTxnSnapshotRoundTrip(t *testing.T) {
	l := newTxnTestLog(t)
	txnScenario(l, func() {})
	if len(l.producers.ongoingTxns) != 2 {
		t.Fatalf("scenario left %v ongoing, want producers 1 and 2", l.producers.ongoingTxns)
	}
	snap, err := l.producers.encodeSnapshot(l.log.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	if err := writeProducerSnapshot(l.dir, snap); err != nil {
		t.Fatal(err)
	}
	sameProducerTables(t, "snapshot round trip", l.reload(), l.producers)
}

func TestProducerTxnSnapshotWithoutTxnField(t *testing.T) {
	l := newTxnTestLog(t)
	l.produce(1, 0, 2, false)
	old := `{"next_offset":2,"producers":{"1":{"epoch":0,"batches":[{"first_seq":0,"last_seq":1,"first_offset":0,"last_offset":1}],"last_update_ms":1000000}}}`
	if err := os.WriteFile(filepath.Join(l.dir, ProducerSnapshotFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := l.reload()
	if e := loaded.entries[1]; e == nil || e.CurrentTxnFirstOffset != -1 {
		t.Fatalf("producer from a snapshot without the field: %+v, want CurrentTxnFirstOffset -1", e)
	}
	sameProducerTables(t, "pre-transaction snapshot", loaded, l.producers)
}

// TestProducerTxnReplayAfterSnapshot: transactions begun before the
// snapshot and ended after it, and those begun after it, are rebuilt from
// the log; the aborted index is the storage's and replay adds nothing.
func TestProducerTxnReplayAfterSnapshot(t *testing.T) {
	l := newTxnTestLog(t)
	txnScenario(l, func() {
		snap, err := l.producers.encodeSnapshot(l.log.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		if err := writeProducerSnapshot(l.dir, snap); err != nil {
			t.Fatal(err)
		}
	})
	indexBefore, err := l.log.AbortedTxns(0, l.log.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	if len(indexBefore) != 2 {
		t.Fatalf("scenario recorded %d aborts, want 2", len(indexBefore))
	}

	sameProducerTables(t, "replay after the snapshot", l.reload(), l.producers)
	if err := os.Remove(filepath.Join(l.dir, ProducerSnapshotFile)); err != nil {
		t.Fatal(err)
	}
	sameProducerTables(t, "replay of the whole log", l.reload(), l.producers)

	indexAfter, err := l.log.AbortedTxns(0, l.log.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(indexAfter, indexBefore) {
		t.Fatalf("aborted index after replay = %+v, want %+v", indexAfter, indexBefore)
	}
}
