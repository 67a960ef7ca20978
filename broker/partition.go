package broker

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// partition is one partition this node hosts, as leader or follower: its
// log, leader epoch, idempotent-producer table, last stable offset and
// long-poll waiters. Its replication state (role, high watermark,
// followers' progress, ISR changes) lives in replica.go: the leader appends
// produced records (appendRecords) and moves the high watermark to the
// smallest log end offset in the ISR, the log end offset itself while the
// ISR is this node alone (solo; always, on a single node); a follower
// appends what it fetches from the leader (appendReplica).
type partition struct {
	topic  *topicState
	index  int32
	log    *storage.Log
	remote *remoteLog // tiered storage state (tiered.go); never nil

	// mu serialises appends with the idempotent-producer table, so a
	// sequence check and its append are one step.
	mu struct {
		sync.Mutex
		producers *producerTable
	}

	// epoch is the partition's leader epoch, read lock-free by fetches so
	// they never wait behind an append's fsync.
	epoch atomic.Int32

	// firstUnstable is the first offset of the oldest open transaction, -1
	// if none: the last stable offset is min(it, high watermark). Written
	// under mu after each append and marker, read lock-free by fetches.
	firstUnstable atomic.Int64

	// Replication (replica.go). self is this node; role the applied
	// assignment; solo is set while this node leads with an ISR of
	// itself alone (the high watermark is then the log end offset);
	// otherwise hw is the high watermark.
	self int32
	role atomic.Pointer[replicaRole]
	solo atomic.Bool
	hw   atomic.Int64
	rep  struct {
		sync.Mutex
		followers     map[int32]*followerProgress // leader only
		isrPending    bool                        // an AlterPartition is in flight
		isrRetryAtMs  int64                       // leader: no new ISR proposal before this time (after a failed one)
		isrBackoffMs  int64                       // leader: the last wait after a failed proposal, doubled per failure
		needsTruncate bool                        // follower: reconcile with the new leader first
		epochStart    int64                       // leader: where its leader epoch began
		pendingAdd    int32                       // leader: follower being added to the ISR, -1 none
	}

	waitersMu struct {
		sync.Mutex
		waiters []chan struct{}
	}
}

func partitionDirName(topic string, index int32) string {
	return topic + "-" + strconv.Itoa(int(index))
}

func openPartition(s *Server, t *topicState, index int32, leaderEpoch int32) (*partition, error) {
	dir := filepath.Join(s.cfg.DataDir, partitionDirName(t.name, index))
	if err := checkPartitionTopicID(dir, t); err != nil {
		return nil, err
	}
	l, err := storage.Open(dir, t.config.storageConfig(), storage.Options{Logger: s.logger.With("partition", partitionDirName(t.name, index))})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	producers, err := loadProducerTable(l, time.Now().UnixMilli())
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	p := &partition{topic: t, index: index, log: l, self: s.cfg.NodeID}
	p.hw.Store(l.LogStartOffset())
	p.rep.pendingAdd = -1
	p.mu.producers = producers
	p.noteUnstableLocked()
	p.epoch.Store(leaderEpoch)
	p.remote = newRemoteLog(s.tiered, p)
	return p, nil
}

// partitionMetadataFile records which topic ID a partition directory
// belongs to, so a directory left behind by a deleted topic is never
// mistaken for a new topic of the same name.
const partitionMetadataFile = "partition.metadata"

func checkPartitionTopicID(dir string, t *topicState) error {
	want := "topic_id: " + t.id.String() + "\n"
	raw, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
	switch {
	case err == nil && string(raw) == want:
		return nil
	case err == nil:
		// A stale directory of an earlier topic with this name.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return storage.WriteFileAtomic(dir, partitionMetadataFile, []byte(want))
}

// highWatermark is the offset below which records are committed and
// visible to consumers: the log end offset while this node leads with an
// ISR of itself (always, on a single node), else the smallest log end
// offset in the ISR (replica.go).
func (p *partition) highWatermark() int64 {
	if p.solo.Load() {
		return p.log.LogEndOffset()
	}
	return p.hw.Load()
}

func (p *partition) leaderEpoch() int32 { return p.epoch.Load() }

// lastStableOffset is the offset below which every transaction is decided:
// read_committed consumers read up to it (the high watermark when no
// transaction is open).
func (p *partition) lastStableOffset() int64 {
	hw := p.highWatermark()
	if first := p.firstUnstable.Load(); first >= 0 && first < hw {
		return first
	}
	return hw
}

// noteUnstableLocked publishes the producer table's first unstable offset.
// Needs mu.
func (p *partition) noteUnstableLocked() {
	first, ok := p.mu.producers.firstUnstableOffset()
	if !ok {
		first = -1
	}
	p.firstUnstable.Store(first)
}

// writeTxnMarker appends a transaction marker (a COMMIT or ABORT control
// batch) for the producer, as WriteTxnMarkers does: the producer's open
// transaction ends, an abort is entered in the aborted-transaction index,
// and the last stable offset moves. It returns the marker's offset.
func (p *partition) writeTxnMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, error) {
	offset, _, err := p.writeTxnMarkerEpoch(producerID, epoch, commit, coordinatorEpoch)
	return offset, err
}

// writeTxnMarkerEpoch is writeTxnMarker that also returns the leader epoch
// the marker was written under.
func (p *partition) writeTxnMarkerEpoch(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, int32, error) {
	batch := storage.EncodeControlBatch(producerID, epoch, commit, coordinatorEpoch, time.Now().UnixMilli())
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		return -1, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isLeader() {
		return -1, 0, errNotLeaderForPartition
	}
	if err := p.mu.producers.checkMarker(producerID, epoch); err != nil {
		return -1, 0, err
	}
	res, err := p.log.Append(batch, headers, storage.AppendOptions{LeaderEpoch: p.epoch.Load()})
	if err != nil {
		return -1, 0, err
	}
	lso := p.mu.producers.lastStableOffsetAfterTxn(producerID, res.FirstOffset)
	aborted, err := p.mu.producers.completeTxn(producerID, epoch, res.FirstOffset, commit, lso)
	if err == nil && aborted != nil {
		err = p.log.RecordAbortedTxn(*aborted)
	}
	p.noteUnstableLocked()
	p.wakeWaiters()
	return res.FirstOffset, res.LeaderEpoch, err
}

// appendResult is the outcome of one produce to one partition.
type appendResult struct {
	code          int16
	message       string
	recordErrors  []storage.RecordViolation // the records that broke a topic rule (KIP-467); nothing was appended
	baseOffset    int64
	lastOffset    int64
	logAppendTime int64
	duplicate     bool  // an idempotent retry, acknowledged without appending
	leaderEpoch   int32 // the epoch the records were appended (or found) under
	// needsTxnVerify: nothing was appended; the batch opens a transaction
	// on this partition and the coordinator must confirm it first.
	needsTxnVerify bool
}

// recordRules are the per-record rules of a topic at time now: a key on
// compacted topics, and for CreateTime topics the timestamp bounds of
// message.timestamp.before.max.ms / after.max.ms (KIP-937).
func recordRules(cfg effectiveTopicConfig, compacted bool, now int64) storage.RecordRules {
	rules := storage.RecordRules{RequireKey: compacted, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64,
		MaxDecompressedBytes: storage.InflationLimit(cfg.maxMessageBytes())}
	if cfg.logAppendTime() {
		return rules // the broker's clock replaces the producer's timestamps
	}
	if before := cfg.int64("message.timestamp.before.max.ms"); before >= 0 && before < now {
		rules.MinTimestamp = now - before
	}
	if after := cfg.int64("message.timestamp.after.max.ms"); after >= 0 && after <= math.MaxInt64-now {
		rules.MaxTimestamp = now + after
	}
	return rules
}

// checkRecordRules refuses a produce whose records break the topic's
// per-record rules, as Kafka does: the whole batch fails, the answer names
// each offending record by index (KIP-467 record_errors) so the client
// fails only those and retries or reports the others, and the error is
// INVALID_TIMESTAMP if a timestamp was out of bounds, else INVALID_RECORD.
func checkRecordRules(records []byte, rules storage.RecordRules) (appendResult, bool) {
	violations, err := storage.CheckRecords(records, rules)
	if err != nil {
		return inflationFailure(err, rules.MaxDecompressedBytes), false
	}
	if len(violations) == 0 {
		return appendResult{}, true
	}
	res := appendResult{code: kerr.InvalidRecord.Code, recordErrors: violations}
	for _, v := range violations {
		if v.Timestamp {
			res.code = kerr.InvalidTimestamp.Code
			break
		}
	}
	first := violations[0].Message
	if len(violations) > 1 {
		first = fmt.Sprintf("%s (and %d more records)", first, len(violations)-1)
	}
	res.message = first
	return res, false
}

// preparedAppend is a produce's records once validated, checked against
// the topic's per-record rules and recompressed for its compression.type:
// what is appended, under the partition lock, by appendPrepared.
type preparedAppend struct {
	records       []byte
	headers       []storage.BatchHeader
	now           int64 // ms: the producer-state time, and LogAppendTime's
	logAppendTime bool
}

// appendRecords validates a produce's record bytes and appends them
// (prepareAppend, then appendPrepared).
func (p *partition) appendRecords(records []byte, cfg effectiveTopicConfig, txnVerified bool) appendResult {
	prep, res := p.prepareAppend(records, cfg)
	if res.code != 0 {
		return res
	}
	return p.appendPrepared(prep, txnVerified)
}

// prepareAppend does the work of an append that needs no lock: the bytes
// are kept as they came, with only baseOffset and partitionLeaderEpoch to
// be rewritten, unless the topic's compression.type names another codec
// than a batch's (recompressForTopic). A non-zero code in the result
// refuses the produce.
func (p *partition) prepareAppend(records []byte, cfg effectiveTopicConfig) (preparedAppend, appendResult) {
	maxMessageBytes := cfg.maxMessageBytes()
	now := time.Now().UnixMilli()
	headers, err := storage.ValidateBatches(records)
	if err != nil {
		if errors.Is(err, storage.ErrUnsupportedMagic) {
			return preparedAppend{}, appendResult{code: kerr.UnsupportedForMessageFormat.Code, message: err.Error()}
		}
		return preparedAppend{}, appendResult{code: kerr.CorruptMessage.Code, message: err.Error()}
	}
	for i := range headers {
		h := &headers[i]
		if int64(h.Size()) > maxMessageBytes {
			return preparedAppend{}, appendResult{code: kerr.MessageTooLarge.Code, message: fmt.Sprintf("batch of %d bytes exceeds max.message.bytes %d", h.Size(), maxMessageBytes)}
		}
		if h.IsControl() {
			// Markers are written by the transaction coordinator alone.
			return preparedAppend{}, appendResult{code: kerr.InvalidRecord.Code, message: "control batches cannot be produced"}
		}
		if h.ProducerID >= 0 && i > 0 {
			// Kafka requires an idempotent producer's batch to travel alone.
			return preparedAppend{}, appendResult{code: kerr.InvalidRecord.Code, message: "idempotent produce must carry exactly one batch per partition"}
		}
	}
	// Per-record rules on the batches as produced, then compression.type:
	// both decompress only when they must, bounded by
	// storage.InflationLimit, and before the partition lock.
	if res, ok := checkRecordRules(records, recordRules(cfg, p.log.Compacted(), now)); !ok {
		return preparedAppend{}, res
	}
	records, headers, failed := recompressForTopic(records, headers, cfg)
	if failed.code != 0 {
		return preparedAppend{}, failed
	}
	return preparedAppend{records: records, headers: headers, now: now, logAppendTime: cfg.logAppendTime()}, appendResult{}
}

// appendPrepared appends prepared records under the partition lock, after
// the idempotence check. A transactional batch that would open its
// producer's transaction on this partition is refused with needsTxnVerify
// unless txnVerified says the coordinator has confirmed the partition is
// in the transaction (KIP-890; see produceVerified).
func (p *partition) appendPrepared(prep preparedAppend, txnVerified bool) appendResult {
	records, headers, now := prep.records, prep.headers, prep.now

	opts := storage.AppendOptions{}
	if prep.logAppendTime {
		opts.LogAppendTime = now
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isLeader() {
		// Checked under mu: a role change (setRole) takes mu too.
		return appendResult{code: kerr.NotLeaderForPartition.Code}
	}
	opts.LeaderEpoch = p.epoch.Load()
	if h := &headers[0]; h.ProducerID >= 0 {
		dup, code := p.mu.producers.check(h)
		if code != 0 {
			return appendResult{code: code}
		}
		if dup != nil {
			return appendResult{baseOffset: dup.FirstOffset, lastOffset: dup.LastOffset, logAppendTime: -1, duplicate: true, leaderEpoch: opts.LeaderEpoch}
		}
		if h.IsTransactional() && !txnVerified && !p.mu.producers.txnOngoingFor(h.ProducerID, h.ProducerEpoch) {
			return appendResult{needsTxnVerify: true}
		}
	}
	before := p.log.LogEndOffset()
	res, err := p.log.Append(records, headers, opts)
	if err != nil {
		if p.log.LogEndOffset() > before {
			// Written but not fsynced (flush.messages): the records are
			// in the log, so remember them for idempotence or a retry
			// would append them twice; the producer still sees the error.
			p.recordAppendedLocked(headers, res.FirstOffset, now)
			p.wakeWaiters()
		}
		return appendResult{code: kerr.KafkaStorageError.Code, message: err.Error()}
	}
	p.recordAppendedLocked(headers, res.FirstOffset, now)
	p.wakeWaiters()
	return appendResult{baseOffset: res.FirstOffset, lastOffset: res.LastOffset, logAppendTime: res.LogAppendTime, leaderEpoch: opts.LeaderEpoch}
}

// appendUnchecked appends batches the broker itself wrote (TxnOffsetCommit's
// transactional batch) without the produce checks: no idempotent sequence,
// no size or key rules. The producer table still records them.
func (p *partition) appendUnchecked(batch []byte) (storage.AppendResult, error) {
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		return storage.AppendResult{}, err
	}
	p.mu.Lock()
	if !p.isLeader() {
		p.mu.Unlock()
		return storage.AppendResult{}, errNotLeaderForPartition
	}
	res, err := p.log.Append(batch, headers, storage.AppendOptions{LeaderEpoch: p.epoch.Load()})
	if err == nil {
		p.recordAppendedLocked(headers, res.FirstOffset, time.Now().UnixMilli())
	}
	p.mu.Unlock()
	if err == nil {
		p.wakeWaiters()
	}
	return res, err
}

// recordAppendedLocked enters appended batches in the producer table. Needs p.mu.
func (p *partition) recordAppendedLocked(headers []storage.BatchHeader, firstOffset int64, nowMs int64) {
	offset := firstOffset
	for i := range headers {
		h := &headers[i]
		h.BaseOffset = offset
		offset = h.LastOffset() + 1
		p.mu.producers.record(h, nowMs)
	}
	p.noteUnstableLocked()
}

// addWaiter registers a one-shot wake-up for the next append.
func (p *partition) addWaiter(w chan struct{}) {
	p.waitersMu.Lock()
	p.waitersMu.waiters = append(p.waitersMu.waiters, w)
	p.waitersMu.Unlock()
}

func (p *partition) removeWaiter(w chan struct{}) {
	p.waitersMu.Lock()
	defer p.waitersMu.Unlock()
	for i, x := range p.waitersMu.waiters {
		if x == w {
			p.waitersMu.waiters = append(p.waitersMu.waiters[:i], p.waitersMu.waiters[i+1:]...)
			return
		}
	}
}

func (p *partition) wakeWaiters() {
	p.waitersMu.Lock()
	ws := p.waitersMu.waiters
	p.waitersMu.waiters = nil
	p.waitersMu.Unlock()
	for _, w := range ws {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// checkpoint makes the log's recovery point and the producer snapshot durable.
func (p *partition) checkpoint() error {
	p.mu.Lock()
	p.mu.producers.expire(time.Now().UnixMilli())
	next := p.log.LogEndOffset()
	snap, err := p.mu.producers.snapshot(next)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if err := p.log.Checkpoint(); err != nil {
		return err
	}
	return writeProducerSnapshot(p.log.Dir(), snap)
}

func (p *partition) close() error {
	if err := p.checkpoint(); err != nil {
		p.log.Close()
		return err
	}
	return p.log.Close()
}
