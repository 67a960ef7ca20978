package replica

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// Idempotent producers (KIP-98). Per partition the broker remembers, for each
// producer id, its epoch and the last few batches' sequence ranges:
//
//   - a batch whose sequence range equals a remembered one is a retry: it is
//     acknowledged with the original offsets and not appended again;
//   - otherwise its first sequence must follow the last one (wrapping at
//     MaxInt32), or be 0 for a new epoch; else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - an older epoch than the remembered one gets INVALID_PRODUCER_EPOCH;
//   - a producer the partition does not know (new, or expired) may start at
//     any sequence, as in Kafka.
//
// Transactions (KIP-98, Kafka's ProducerStateManager). The table also knows,
// per producer, the first offset of its ongoing transaction in this partition:
//
//   - a transactional data batch of a producer with no ongoing transaction
//     starts one at the batch's base offset (record);
//   - while one is ongoing, a non-transactional batch of that producer gets
//     INVALID_TXN_STATE (check);
//   - a COMMIT or ABORT marker (a control batch the broker appends, never a
//     client) ends it (completeTxn); an abort yields the storage.AbortedTxn the
//     caller records with Log.RecordAbortedTxn;
//   - a marker with an older epoch than the producer's is refused
//     (INVALID_PRODUCER_EPOCH); a newer one bumps the producer's epoch;
//   - the partition's last stable offset is the first offset of the oldest
//     ongoing transaction, or the high watermark if that is lower or there is
//     none (lastStableOffset); a producer with an ongoing transaction never
//     expires.
//
// The table is snapshotted beside the log at every checkpoint and rebuilt on
// open from the snapshot plus the batches appended after it: headers for
// data batches, and for control batches their bytes, to learn the marker's
// type. The aborted-transaction index is the storage's own (it persists it),
// so the rebuild only ends transactions and records nothing.

// producerBatchesRetained is how many recent batches per producer are kept
// for duplicate detection (Kafka's max.in.flight.requests.per.connection bound).
const producerBatchesRetained = 5

// producerIDExpiration is Kafka's producer.id.expiration.ms default.
const producerIDExpiration = 24 * time.Hour

type producerBatch struct {
	FirstSeq    int32 `json:"first_seq"`
	LastSeq     int32 `json:"last_seq"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
}

type producerEntry struct {
	Epoch      int16           `json:"epoch"`
	Batches    []producerBatch `json:"batches"` // oldest first, at most producerBatchesRetained
	LastUpdate int64           `json:"last_update_ms"`
	// CurrentTxnFirstOffset is the first offset of the producer's ongoing
	// transaction in this partition, -1 when there is none. Snapshots
	// written before transactions lack it: absent reads as -1.
	CurrentTxnFirstOffset int64 `json:"current_txn_first_offset"`
	// CoordinatorEpoch is the coordinator epoch of the last marker written
	// for the producer here, -1 none (absent in older snapshots): a marker
	// with a lower one comes from a deposed coordinator load.
	CoordinatorEpoch int32 `json:"coordinator_epoch"`
}

// noTxn is CurrentTxnFirstOffset without an ongoing transaction.
const noTxn = -1

func newProducerEntry(epoch int16) *producerEntry {
	return &producerEntry{Epoch: epoch, CurrentTxnFirstOffset: noTxn, CoordinatorEpoch: -1}
}

// UnmarshalJSON defaults CurrentTxnFirstOffset to -1 for snapshots written
// before the field existed.
func (e *producerEntry) UnmarshalJSON(data []byte) error {
	type plain producerEntry // without this method
	decoded := plain{CurrentTxnFirstOffset: noTxn, CoordinatorEpoch: -1}
	if err := json.Unmarshal(data, &decoded); err != nil {
		return err
	}
	*e = producerEntry(decoded)
	return nil
}

func (e *producerEntry) txnOngoing() bool { return e.CurrentTxnFirstOffset >= 0 }

// txnOngoingFor reports whether the producer has a transaction open on this
// partition under this epoch, so its next batch needs no verification.
func (t *producerTable) txnOngoingFor(producerID int64, epoch int16) bool {
	e := t.entries[producerID]
	return e != nil && e.Epoch == epoch && e.txnOngoing()
}

func (e *producerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// producerTable is guarded by the owning partition's mutex.
type producerTable struct {
	entries map[int64]*producerEntry
	// ongoingTxns maps the id of every producer with an ongoing transaction
	// to its CurrentTxnFirstOffset, so firstUnstableOffset looks at those
	// producers only.
	ongoingTxns map[int64]int64
}

func newProducerTable() *producerTable {
	return &producerTable{entries: map[int64]*producerEntry{}, ongoingTxns: map[int64]int64{}}
}

func (t *producerTable) startTxn(producerID int64, e *producerEntry, firstOffset int64) {
	e.CurrentTxnFirstOffset = firstOffset
	t.ongoingTxns[producerID] = firstOffset
}

func (t *producerTable) endTxn(producerID int64, e *producerEntry) {
	e.CurrentTxnFirstOffset = noTxn
	delete(t.ongoingTxns, producerID)
}

func seqAdd(seq int32, delta int32) int32 {
	sum := int64(seq) + int64(delta)
	if sum > math.MaxInt32 {
		sum -= math.MaxInt32 + 1
	}
	return int32(sum)
}

// check validates one idempotent batch a client produced against the table.
// It returns the remembered batch if h is a duplicate. Control batches are
// the broker's own (completeTxn), never a client's: INVALID_RECORD.
func (t *producerTable) check(h *storage.BatchHeader) (*producerBatch, int16) {
	if h.IsControl() {
		return nil, kerr.InvalidRecord.Code
	}
	e := t.entries[h.ProducerID]
	if e == nil {
		return nil, 0
	}
	lastSeq := seqAdd(h.BaseSequence, h.LastOffsetDelta)
	if h.ProducerEpoch < e.Epoch {
		return nil, kerr.InvalidProducerEpoch.Code
	}
	if h.ProducerEpoch > e.Epoch {
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber.Code
		}
		return nil, checkTxnState(e, h)
	}
	for i := range e.Batches {
		b := &e.Batches[i]
		if b.FirstSeq == h.BaseSequence && b.LastSeq == lastSeq {
			return b, 0
		}
	}
	if len(e.Batches) > 0 && h.BaseSequence != seqAdd(e.lastSeq(), 1) {
		return nil, kerr.OutOfOrderSequenceNumber.Code
	}
	return nil, checkTxnState(e, h)
}

// checkTxnState refuses, as Kafka does, a non-transactional batch from a
// producer whose transaction is ongoing.
func checkTxnState(e *producerEntry, h *storage.BatchHeader) int16 {
	if e.txnOngoing() && !h.IsTransactional() {
		return kerr.InvalidTxnState.Code
	}
	return 0
}

// record remembers an appended data batch (h carries its assigned
// BaseOffset); a transactional one starts its producer's transaction if none
// is ongoing. Control batches are ignored: completeTxn takes them.
func (t *producerTable) record(h *storage.BatchHeader, nowMs int64) {
	if h.ProducerID < 0 || h.IsControl() {
		return
	}
	e := t.entries[h.ProducerID]
	if e == nil {
		e = newProducerEntry(h.ProducerEpoch)
		t.entries[h.ProducerID] = e
	} else if h.ProducerEpoch > e.Epoch {
		// A new epoch forgets the sequences, not the ongoing transaction
		// (Kafka's maybeUpdateProducerEpoch): only a marker ends that.
		e.Epoch, e.Batches = h.ProducerEpoch, nil
	}
	if h.IsTransactional() && !e.txnOngoing() {
		t.startTxn(h.ProducerID, e, h.BaseOffset)
	}
	e.Batches = append(e.Batches, producerBatch{
		FirstSeq:    h.BaseSequence,
		LastSeq:     seqAdd(h.BaseSequence, h.LastOffsetDelta),
		FirstOffset: h.BaseOffset,
		LastOffset:  h.LastOffset(),
	})
	if len(e.Batches) > producerBatchesRetained {
		e.Batches = append(e.Batches[:0], e.Batches[len(e.Batches)-producerBatchesRetained:]...)
	}
	e.LastUpdate = nowMs
}

// completeTxn ends producerID's ongoing transaction with the COMMIT or ABORT
// marker (control batch) appended at markerOffset, producer epoch epoch.
// For an abort of an ongoing transaction it returns the entry the caller
// passes to Log.RecordAbortedTxn: [first offset, markerOffset] with
// lastStableOffset, the partition's last stable offset once this
// transaction ended (lastStableOffsetAfterTxn computes it). A marker of a
// producer without an ongoing transaction (Kafka writes markers for every
// partition of a transaction) returns nil.
// A marker epoch older than the producer's is refused with an error
// wrapping kerr.InvalidProducerEpoch, and the table is unchanged; a newer
// one becomes the producer's epoch (the coordinator aborting a fenced
// producer's transaction), forgetting its sequences. A coordinator epoch
// older than the last marker's for the producer is refused with
// kerr.TransactionCoordinatorFenced (checkMarker).
//
// A producer the partition does not know (the transaction added the
// partition but wrote nothing to it) is entered, as Kafka's
// ProducerStateManager does, with the marker's epochs and nowMs as its last
// update, so that the coordinator epoch is known when its next transaction
// opens here and a stale marker of a replaced coordinator load is refused.
// A known producer's LastUpdate is left as its last data batch set it.
func (t *producerTable) completeTxn(producerID int64, epoch int16, coordinatorEpoch int32, markerOffset int64, commit bool, lastStableOffset int64, nowMs int64) (aborted *storage.AbortedTxn, err error) {
	if err := t.checkMarker(producerID, epoch, coordinatorEpoch); err != nil {
		return nil, fmt.Errorf("transaction marker at offset %d: %w", markerOffset, err)
	}
	e := t.markerEntry(producerID, epoch, nowMs)
	return t.endTxnAtMarker(producerID, e, epoch, coordinatorEpoch, markerOffset, commit, lastStableOffset), nil
}

// checkMarker is completeTxn's checks alone, for a caller that wants to
// refuse a marker before appending it: an error wrapping
// kerr.InvalidProducerEpoch if epoch is older than producerID's, or
// kerr.TransactionCoordinatorFenced if coordinatorEpoch is older than that
// of the producer's last marker here (Kafka's check: the marker comes from
// a coordinator load that another replaced, and may arrive after the
// producer's next transaction began, which it must not end).
func (t *producerTable) checkMarker(producerID int64, epoch int16, coordinatorEpoch int32) error {
	e := t.entries[producerID]
	switch {
	case e == nil:
		return nil
	case epoch < e.Epoch:
		return fmt.Errorf("replica: marker of producer %d has epoch %d, producer is at %d: %w",
			producerID, epoch, e.Epoch, kerr.InvalidProducerEpoch)
	case coordinatorEpoch < e.CoordinatorEpoch:
		return fmt.Errorf("replica: marker of producer %d has coordinator epoch %d, the last one here had %d: %w",
			producerID, coordinatorEpoch, e.CoordinatorEpoch, kerr.TransactionCoordinatorFenced)
	}
	return nil
}

// endTxnAtMarker applies a marker without checking its epoch; the log
// replay uses it directly, as Kafka's recovery does not validate epochs.
func (t *producerTable) endTxnAtMarker(producerID int64, e *producerEntry, epoch int16, coordinatorEpoch int32, markerOffset int64, commit bool, lastStableOffset int64) *storage.AbortedTxn {
	e.CoordinatorEpoch = max(e.CoordinatorEpoch, coordinatorEpoch)
	var aborted *storage.AbortedTxn
	if e.txnOngoing() {
		if !commit {
			aborted = &storage.AbortedTxn{
				ProducerID:       producerID,
				FirstOffset:      e.CurrentTxnFirstOffset,
				LastOffset:       markerOffset,
				LastStableOffset: lastStableOffset,
			}
		}
		t.endTxn(producerID, e)
	}
	if epoch > e.Epoch {
		e.Epoch, e.Batches = epoch, nil
	}
	return aborted
}

// firstUnstableOffset is the smallest first offset of an ongoing
// transaction; ok is false when no transaction is ongoing.
func (t *producerTable) firstUnstableOffset() (offset int64, ok bool) {
	for _, first := range t.ongoingTxns {
		if !ok || first < offset {
			offset, ok = first, true
		}
	}
	return offset, ok
}

// lastStableOffsetAfterTxn is the last stable offset once producerID's
// transaction ends at markerOffset, as Kafka's
// ProducerStateManager.lastStableOffset(CompletedTxn) computes it for the
// aborted-transaction index: the first offset of the oldest other ongoing
// transaction, or markerOffset+1. Call it before completeTxn and pass the
// result as its lastStableOffset.
func (t *producerTable) lastStableOffsetAfterTxn(producerID, markerOffset int64) int64 {
	lso := markerOffset + 1
	for id, first := range t.ongoingTxns {
		if id != producerID && first < lso {
			lso = first
		}
	}
	return lso
}

// lastStableOffset is the partition's last stable offset given its high
// watermark: READ_COMMITTED consumers read below it.
func lastStableOffset(t *producerTable, highWatermark int64) int64 {
	if first, ok := t.firstUnstableOffset(); ok && first < highWatermark {
		return first
	}
	return highWatermark
}

// expire drops producers idle for longer than producer.id.expiration.ms,
// except those with an ongoing transaction (Kafka keeps them: only a
// marker, or the coordinator's timeout abort, ends a transaction).
func (t *producerTable) expire(nowMs int64) {
	for id, e := range t.entries {
		if e.txnOngoing() {
			continue
		}
		if nowMs-e.LastUpdate > producerIDExpiration.Milliseconds() {
			delete(t.entries, id)
		}
	}
}

// replayMarker ends the transaction a control batch in the log ends. Only
// COMMIT and ABORT markers do; other control types (KRaft's) are skipped.
// A control batch the cleaner emptied still ends its producer's
// transaction: it was a marker, and leaving the transaction open would pin
// the last stable offset forever. Nothing is recorded in the
// aborted-transaction index, which the storage keeps itself.
func (t *producerTable) replayMarker(log *storage.Log, h storage.BatchHeader) error {
	if h.ProducerID < 0 {
		return nil
	}
	chunk, err := log.Read(h.BaseOffset, h.Size(), h.LastOffset()+1, true)
	if err != nil {
		return fmt.Errorf("read control batch at offset %d: %w", h.BaseOffset, err)
	}
	batch, err := chunk.ReadAll()
	if err != nil {
		return fmt.Errorf("read control batch at offset %d: %w", h.BaseOffset, err)
	}
	if got, err := storage.ParseBatchHeader(batch); err != nil || got.BaseOffset != h.BaseOffset {
		return fmt.Errorf("read control batch at offset %d: %w", h.BaseOffset, errors.Join(storage.ErrCorruptBatch, err))
	}
	typ, coordinatorEpoch, ok, err := storage.ControlRecord(batch)
	if err != nil {
		return fmt.Errorf("control batch at offset %d: %w", h.BaseOffset, err)
	}
	if ok && typ != storage.ControlTypeAbort && typ != storage.ControlTypeCommit {
		return nil
	}
	e := t.markerEntry(h.ProducerID, h.ProducerEpoch, h.MaxTimestamp)
	t.endTxnAtMarker(h.ProducerID, e, h.ProducerEpoch, coordinatorEpoch, h.BaseOffset, typ == storage.ControlTypeCommit, h.BaseOffset)
	return nil
}

// markerEntry is the producer's entry for a marker, entered (at epoch,
// last updated at nowMs) if the partition did not know it.
func (t *producerTable) markerEntry(producerID int64, epoch int16, nowMs int64) *producerEntry {
	e := t.entries[producerID]
	if e == nil {
		e = newProducerEntry(epoch)
		e.LastUpdate = nowMs
		t.entries[producerID] = e
	}
	return e
}

// ProducerInfo is one active producer of a partition, as DescribeProducers
// (KIP-664) reports it.
type ProducerInfo struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32
	LastUpdateMs     int64 // when its last batch was appended
	CoordinatorEpoch int32 // of the last marker written for it, -1 none
	// CurrentTxnStartOffset is the first offset of its open transaction
	// here, -1 for none.
	CurrentTxnStartOffset int64
}

// Producers lists the producers the partition keeps state for, by id.
func (r *Replica) Producers() []ProducerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ProducerInfo, 0, len(r.mu.producers.entries))
	for id, e := range r.mu.producers.entries {
		out = append(out, ProducerInfo{ProducerID: id, Epoch: e.Epoch, LastSequence: e.lastSeq(), LastUpdateMs: e.LastUpdate,
			CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.CurrentTxnFirstOffset})
	}
	slices.SortFunc(out, func(a, b ProducerInfo) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}
