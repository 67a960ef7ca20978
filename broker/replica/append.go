package replica

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// Batch is a produce's records ready to append: validated
// (storage.ValidateBatches gave Headers), checked against the topic's
// rules and recompressed by the caller, which needs no lock for that.
type Batch struct {
	Records       []byte
	Headers       []storage.BatchHeader
	NowMs         int64 // the producer-state time, and LogAppendTime's
	LogAppendTime bool  // the topic's message.timestamp.type is LogAppendTime
}

// AppendResult is the outcome of one append. A non-zero Code refuses it:
// nothing was appended, except with KAFKA_STORAGE_ERROR, where records
// written but not made durable are kept (and remembered for idempotence).
type AppendResult struct {
	Code          int16
	Message       string
	RecordErrors  []storage.RecordViolation // the records that broke a topic rule (KIP-467)
	BaseOffset    int64
	LastOffset    int64
	LogAppendTime int64
	Duplicate     bool  // an idempotent retry, acknowledged without appending
	LeaderEpoch   int32 // the epoch the records were appended (or found) under
	// Err is the storage failure behind a KAFKA_STORAGE_ERROR (it matches
	// storage.ErrStorage when the disk failed).
	Err error
}

// AppendOptions are an append's choices.
type AppendOptions struct {
	// VerifyTxn is asked, with no lock of the replica held, whether a
	// transactional batch that would open its producer's transaction on
	// this partition belongs to that producer's ongoing transaction
	// (KIP-890: the coordinator's word, so that a late batch of an ended
	// transaction cannot open one nobody will close). nil confirms; an
	// error's code answers the produce. A nil VerifyTxn appends such
	// batches unasked (the broker's own transactional batches).
	VerifyTxn func(ctx context.Context, producerID int64, epoch int16) *kerr.Error
}

// verification is a KIP-890 check in flight for one producer: the
// markers written for it meanwhile (a marker that ends the transaction
// between the coordinator's answer and the append must refuse the batch).
type verification struct {
	refs    int
	markers int
}

// Append appends a produce's batch as leader: the idempotence and
// transaction checks and the append are one step under mu; a batch that
// opens its producer's transaction here is first verified (VerifyTxn)
// with mu released. An fsync the flush policy makes due runs after mu is
// released; its failure answers KAFKA_STORAGE_ERROR (the records stay).
func (r *Replica) Append(ctx context.Context, b Batch, opts AppendOptions) AppendResult {
	res, verify := r.appendBatch(b, opts.VerifyTxn == nil, nil)
	if !verify {
		return res
	}
	h := &b.Headers[0]
	v, markers := r.beginVerification(h.ProducerID)
	defer r.endVerification(h.ProducerID, v)
	if kerr := opts.VerifyTxn(ctx, h.ProducerID, h.ProducerEpoch); kerr != nil {
		return AppendResult{Code: kerr.Code, Message: "partition is not in the producer's ongoing transaction"}
	}
	res, _ = r.appendBatch(b, true, func() bool { return v.markers == markers })
	return res
}

// beginVerification registers a verification of producerID's batch and
// returns the markers counted for it so far.
func (r *Replica) beginVerification(producerID int64) (*verification, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.verifying == nil {
		r.mu.verifying = map[int64]*verification{}
	}
	v := r.mu.verifying[producerID]
	if v == nil {
		v = &verification{}
		r.mu.verifying[producerID] = v
	}
	v.refs++
	return v, v.markers
}

func (r *Replica) endVerification(producerID int64, v *verification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v.refs--; v.refs == 0 {
		delete(r.mu.verifying, producerID)
	}
}

// appendBatch is one attempt of Append under mu. verified says the batch
// may open a transaction; unchanged, when set, is checked under mu before
// appending (no marker for the producer since the verification began).
// verify reports that the batch needs verifying first (nothing appended).
func (r *Replica) appendBatch(b Batch, verified bool, unchanged func() bool) (res AppendResult, verify bool) {
	opts := storage.AppendOptions{DeferFlush: true}
	if b.LogAppendTime {
		opts.LogAppendTime = b.NowMs
	}
	r.mu.Lock()
	if !r.IsLeader() || r.mu.truncating {
		// Checked under mu: a role change (SetRole) takes mu too.
		r.mu.Unlock()
		return AppendResult{Code: kerr.NotLeaderForPartition.Code}, false
	}
	opts.LeaderEpoch = r.epoch.Load()
	if h := &b.Headers[0]; h.ProducerID >= 0 {
		dup, code := r.mu.producers.check(h)
		if code != 0 {
			r.mu.Unlock()
			return AppendResult{Code: code}, false
		}
		if dup != nil {
			r.mu.Unlock()
			return AppendResult{BaseOffset: dup.FirstOffset, LastOffset: dup.LastOffset, LogAppendTime: -1, Duplicate: true, LeaderEpoch: opts.LeaderEpoch}, false
		}
		if h.IsTransactional() && !r.mu.producers.txnOngoingFor(h.ProducerID, h.ProducerEpoch) {
			if !verified {
				r.mu.Unlock()
				return AppendResult{}, true
			}
			if unchanged != nil && !unchanged() {
				r.mu.Unlock()
				return AppendResult{Code: kerr.InvalidTxnState.Code, Message: "the transaction ended while the batch was being verified"}, false
			}
		}
	}
	before := r.storage().LogEndOffset()
	appended, err := r.storage().Append(b.Records, b.Headers, opts)
	if err != nil {
		if r.storage().LogEndOffset() > before {
			// Written but not fsynced: the records are in the log, so
			// remember them for idempotence or a retry would append them
			// twice; the producer still sees the error.
			r.recordAppendedLocked(b.Headers, appended.FirstOffset, b.NowMs)
		}
		r.mu.Unlock()
		r.wakeWaiters()
		return AppendResult{Code: kerr.KafkaStorageError.Code, Message: err.Error(), Err: err}, false
	}
	r.recordAppendedLocked(b.Headers, appended.FirstOffset, b.NowMs)
	r.mu.Unlock()
	res = AppendResult{BaseOffset: appended.FirstOffset, LastOffset: appended.LastOffset, LogAppendTime: appended.LogAppendTime, LeaderEpoch: opts.LeaderEpoch}
	if appended.FlushDue {
		if err := r.storage().Flush(); err != nil {
			res = AppendResult{Code: kerr.KafkaStorageError.Code, Message: err.Error(), Err: err}
		}
	}
	r.wakeWaiters()
	return res, false
}

// AppendUnchecked appends batches the broker itself wrote (a
// TxnOffsetCommit's transactional batch, a coordinator's records) without
// the produce checks: no idempotent sequence, no size or key rules. The
// producer table still records them.
func (r *Replica) AppendUnchecked(batch []byte) (storage.AppendResult, error) {
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		return storage.AppendResult{}, err
	}
	r.mu.Lock()
	if !r.IsLeader() || r.mu.truncating {
		r.mu.Unlock()
		return storage.AppendResult{}, ErrNotLeader
	}
	res, err := r.storage().Append(batch, headers, storage.AppendOptions{LeaderEpoch: r.epoch.Load(), DeferFlush: true})
	if err == nil {
		r.recordAppendedLocked(headers, res.FirstOffset, time.Now().UnixMilli())
	}
	r.mu.Unlock()
	if err == nil && res.FlushDue {
		err = r.storage().Flush()
	}
	r.wakeWaiters()
	return res, err
}

// recordAppendedLocked enters appended batches in the producer table. Needs mu.
func (r *Replica) recordAppendedLocked(headers []storage.BatchHeader, firstOffset int64, nowMs int64) {
	offset := firstOffset
	for i := range headers {
		h := &headers[i]
		h.BaseOffset = offset
		offset = h.LastOffset() + 1
		r.mu.producers.record(h, nowMs)
	}
	r.noteUnstableLocked()
}

// WriteTxnMarker appends a transaction marker (a COMMIT or ABORT control
// batch) for the producer, as WriteTxnMarkers does: the producer's open
// transaction ends, an abort is entered in the aborted-transaction index,
// and the last stable offset moves. It returns the marker's offset and the
// leader epoch it was written under. A marker of an older producer epoch
// than the partition knows is refused (an error wrapping
// kerr.InvalidProducerEpoch), and so is one of an older coordinator epoch
// than the producer's last marker here (kerr.TransactionCoordinatorFenced).
func (r *Replica) WriteTxnMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, int32, error) {
	batch := storage.EncodeControlBatch(producerID, epoch, commit, coordinatorEpoch, time.Now().UnixMilli())
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		return -1, 0, err
	}
	r.mu.Lock()
	if !r.IsLeader() || r.mu.truncating {
		r.mu.Unlock()
		return -1, 0, ErrNotLeader
	}
	if err := r.mu.producers.checkMarker(producerID, epoch, coordinatorEpoch); err != nil {
		r.mu.Unlock()
		return -1, 0, err
	}
	res, err := r.storage().Append(batch, headers, storage.AppendOptions{LeaderEpoch: r.epoch.Load(), DeferFlush: true})
	if err != nil {
		r.mu.Unlock()
		return -1, 0, err
	}
	if v := r.mu.verifying[producerID]; v != nil {
		v.markers++
	}
	lso := r.mu.producers.lastStableOffsetAfterTxn(producerID, res.FirstOffset)
	aborted, err := r.mu.producers.completeTxn(producerID, epoch, coordinatorEpoch, res.FirstOffset, commit, lso, time.Now().UnixMilli())
	if err == nil && aborted != nil {
		err = r.storage().RecordAbortedTxn(*aborted)
	}
	r.noteUnstableLocked()
	r.mu.Unlock()
	if err == nil && res.FlushDue {
		err = r.storage().Flush()
	}
	r.wakeWaiters()
	return res.FirstOffset, res.LeaderEpoch, err
}
