package replica

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Replica is one partition replica this node hosts (doc.go).
type Replica struct {
	// log is the local log. ResetTo empties it in place; only MoveLog
	// (move.go) replaces it, under mu, with the same log in another
	// directory. Read it through storage().
	log     atomic.Pointer[storage.Log]
	self    int32 // this node
	logger  *slog.Logger
	created bool // Open wrote partition.metadata without an fsync (claimDir)

	// mu serialises appends with the producer table, so that an
	// idempotence or transaction check and its append are one step, and
	// orders role changes against appends. Never held across an fsync
	// (appends defer theirs past it), a wait or a call out.
	mu struct {
		sync.Mutex
		producers *producerTable
		verifying map[int64]*verification // KIP-890 checks in flight, by producer id (append.go)
		// truncating: a rewrite (TruncateTo, ResetTo) is cutting the log
		// with mu released; appends are refused until it ends.
		truncating bool
	}

	// rewrites counts truncations (rewrite), for a move between
	// directories to know its copy of the .log files went stale.
	rewrites atomic.Int64

	// snapshotOnDisk is what the producer snapshot file of the current
	// log holds (snapshot.go): Checkpoint skips the write when the
	// encoding it would write is the same, so an idle partition costs no
	// file write per checkpoint round or at Close.
	snapshotOnDisk struct {
		sync.Mutex
		log    *storage.Log // the log (directory) the digest is about
		digest [sha256.Size]byte
	}

	// epoch is the leader epoch, read lock-free by fetches so they never
	// wait behind an append.
	epoch atomic.Int32
	// firstUnstable is the first offset of the oldest open transaction, -1
	// if none: the last stable offset is min(it, high watermark). Written
	// under mu, read lock-free.
	firstUnstable atomic.Int64

	// role is the applied assignment (nil until SetRole); solo is set
	// while this node leads with an ISR of itself alone (the high
	// watermark is then the log end offset); otherwise hw is the high
	// watermark.
	role atomic.Pointer[Role]
	solo atomic.Bool
	hw   atomic.Int64

	// rep guards the replication bookkeeping. Lock order: mu, then rep.
	rep struct {
		sync.Mutex
		followers     map[int32]follower // leader only
		isrPending    bool               // an ISR change is being proposed
		isrRetryAtMs  int64              // leader: no new ISR proposal before this time (after a failed one)
		isrBackoffMs  int64              // leader: the last wait after a failed proposal
		needsTruncate bool               // follower: reconcile with the new leader first
		epochStart    int64              // leader: where its leader epoch began
		pendingAdd    int32              // leader: follower being added to the ISR, -1 none
	}

	// waiters and watchers are one-shot wake-ups for the next change
	// (append, high watermark, log start, role). Taken last, alone;
	// watchers are called after it is released.
	waitersMu struct {
		sync.Mutex
		waiters  []chan struct{}
		watchers []Watcher
	}
}

// Options configure Open.
type Options struct {
	NodeID      int32
	TopicID     [16]byte // written to partition.metadata; a directory of another topic ID is replaced
	LeaderEpoch int32    // the epoch until the first SetRole
	Storage     storage.Config
	Logger      *slog.Logger
}

// Errors of the replica's API.
var (
	// ErrNotLeader: this node does not lead the partition (any more), or
	// the leader epoch moved on.
	ErrNotLeader = errors.New("replica: not the leader of this partition (any more)")
	// ErrReplicationTimeout: the in-sync replicas did not acknowledge
	// before the context's deadline.
	ErrReplicationTimeout = errors.New("replica: the in-sync replicas did not acknowledge in time")
)

// Open opens (or creates) the replica in dir and rebuilds its producer
// state. A directory left by an earlier topic of another ID is replaced.
func Open(dir string, opts Options) (*Replica, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	created, fresh, err := claimDir(dir, opts.TopicID, logger, true)
	if err != nil {
		return nil, err
	}
	sopts := storage.Options{Logger: logger, Fresh: fresh}
	if fresh {
		sopts.Materialize = func() error { return makePartitionDir(dir, opts.TopicID) }
	}
	l, err := storage.Open(dir, opts.Storage, sopts)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	producers, onDisk, err := loadProducerTable(l, time.Now().UnixMilli(), logger)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	r := &Replica{self: opts.NodeID, logger: logger, created: created}
	r.log.Store(l)
	if onDisk != nil {
		r.snapshotOnDisk.log, r.snapshotOnDisk.digest = l, sha256.Sum256(onDisk)
	}
	r.hw.Store(l.LogStartOffset())
	r.rep.pendingAdd = -1
	r.mu.producers = producers
	r.noteUnstableLocked()
	r.epoch.Store(opts.LeaderEpoch)
	return r, nil
}

// CreateAt prepares a new replica directory whose empty log starts at
// offset (a topic recovered from the object store), for Open to open.
func CreateAt(dir string, offset int64, opts Options) error {
	created, _, err := claimDir(dir, opts.TopicID, opts.Logger, false)
	if err != nil {
		return err
	}
	if created {
		// Rare (a topic recovered from the bucket), and its start offset
		// is not in the quorum: durable at once.
		if err := storage.SyncCreatedDir(dir); err != nil {
			return err
		}
	}
	l, err := storage.CreateAt(dir, offset, opts.Storage, storage.Options{Logger: opts.Logger})
	if err != nil {
		return fmt.Errorf("create %s at offset %d: %w", dir, offset, err)
	}
	return l.Close()
}

// PartitionMetadataFile records which topic ID a partition directory
// belongs to (doc.go, "Files").
const PartitionMetadataFile = "partition.metadata"

// claimDir makes dir the directory of topic id: a directory of another
// topic ID (a deleted topic's of the same name) is removed first. created
// reports that it wrote partition.metadata, without an fsync: the log's
// first flush with records makes the directory durable, partition.metadata
// included (storage.SyncCreatedDir), so creating a partition costs no
// fsync.
//
// A partition.metadata that is missing or not one "topic_id: <id>" line
// (empty or cut short) is a creation's that a power loss caught before any flush
// completed: nothing in the directory was durable, and which topic its
// records (if any reached the disk) belong to is unknown — a topic deleted
// and created again under the same name has a new ID. The directory is
// removed and created afresh for id (the metadata quorum's), as a replica
// that lost its unflushed records; it catches up from the leader.
//
// fresh reports that dir holds no log: the log has nothing to recover
// (storage.Options.Fresh). With lazy, a directory that does not exist (a
// new partition) is left unmade: the log makes it, with
// partition.metadata, before it writes its first file
// (makePartitionDir), so a partition that is never written costs no
// file-system call beyond this lookup (about twenty before).
func claimDir(dir string, id [16]byte, logger *slog.Logger, lazy bool) (created, fresh bool, err error) {
	want := partitionMetadata(id)
	path := filepath.Join(dir, PartitionMetadataFile)
	raw, err := os.ReadFile(path)
	switch {
	case err == nil && string(raw) == want:
		return false, false, nil
	case err == nil && validPartitionMetadata(raw):
		if err := os.RemoveAll(dir); err != nil {
			return false, false, err
		}
	case err == nil:
		if logger != nil {
			logger.Warn("partition.metadata torn (a power loss before the partition's first flush); starting the partition afresh",
				"dir", dir, "bytes", len(raw))
		}
		if err := os.RemoveAll(dir); err != nil {
			return false, false, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return false, false, err
	default:
		// The common case, a new partition: no directory yet.
		if _, err := os.Lstat(dir); lazy && errors.Is(err, os.ErrNotExist) {
			return true, true, nil
		}
		// No file in a directory that exists: the same as a torn one.
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			if logger != nil {
				logger.Warn("partition.metadata missing (a power loss before the partition's first flush); starting the partition afresh", "dir", dir)
			}
			if err := os.RemoveAll(dir); err != nil {
				return false, false, err
			}
		}
	}
	if err := makePartitionDir(dir, id); err != nil {
		return false, false, err
	}
	return true, false, nil
}

// partitionMetadata is the content of partition.metadata for topic id.
func partitionMetadata(id [16]byte) string {
	return "topic_id: " + cluster.TopicID(id).String() + "\n"
}

// makePartitionDir makes dir with its partition.metadata, without an
// fsync (see claimDir).
func makePartitionDir(dir string, id [16]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PartitionMetadataFile), []byte(partitionMetadata(id)), 0o644)
}

// validPartitionMetadata reports whether raw is a whole partition.metadata:
// one "topic_id: <id>" line.
func validPartitionMetadata(raw []byte) bool {
	line, ok := strings.CutPrefix(string(raw), "topic_id: ")
	if !ok {
		return false
	}
	text, ok := strings.CutSuffix(line, "\n")
	if !ok {
		return false
	}
	var id cluster.TopicID
	return id.UnmarshalText([]byte(text)) == nil
}

// Created reports whether Open created the replica's directory (or
// rewrote its partition.metadata); it becomes durable with the log's first
// flushed records.
func (r *Replica) Created() bool { return r.created }

// LocalLog is what callers may read of the replica's local log without
// its locks (storage.Log synchronises itself). Changes go through the
// Replica's methods.
type LocalLog interface {
	Dir() string
	LogStartOffset() int64
	LogEndOffset() int64
	Size() int64
	NumSegments() int
	Compacted() bool
	LatestEpoch() int32
	EndOffsetForEpoch(epoch int32) (int32, int64)
	Epochs() []storage.EpochEntry
	Read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (storage.FileChunk, error)
	ForEachBatch(from int64, fn func(storage.BatchHeader) error) error
	AbortedTxns(from, upTo int64) ([]storage.AbortedTxn, error)
	OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error)
	MaxTimestamp() (offset, timestamp int64, ok bool, err error)
	SealedSegments(after int64) ([]storage.SealedSegment, error)
	RemoteOffset() int64
	RecoveryStats() storage.RecoveryStats
}

// storage is the current local log.
func (r *Replica) storage() *storage.Log { return r.log.Load() }

// Log is the local log, for reading.
func (r *Replica) Log() LocalLog { return r.storage() }

// LogEndOffset is the offset the next append gets.
func (r *Replica) LogEndOffset() int64 { return r.storage().LogEndOffset() }

// LeaderEpoch is the current leader epoch.
func (r *Replica) LeaderEpoch() int32 { return r.epoch.Load() }

// HighWatermark is the offset below which records are committed and
// visible to consumers: the log end offset while this node leads with an
// ISR of itself (always, on a single node), else the smallest log end
// offset in the ISR.
func (r *Replica) HighWatermark() int64 {
	if r.solo.Load() {
		return r.storage().LogEndOffset()
	}
	return r.hw.Load()
}

// LastStableOffset is the offset below which every transaction is
// decided: read_committed consumers read up to it (the high watermark
// when no transaction is open).
func (r *Replica) LastStableOffset() int64 {
	hw := r.HighWatermark()
	if first := r.firstUnstable.Load(); first >= 0 && first < hw {
		return first
	}
	return hw
}

// noteUnstableLocked publishes the producer table's first unstable offset.
// Needs mu.
func (r *Replica) noteUnstableLocked() {
	first, ok := r.mu.producers.firstUnstableOffset()
	if !ok {
		first = -1
	}
	r.firstUnstable.Store(first)
}

// UpdateConfig applies a topic config change to the log.
func (r *Replica) UpdateConfig(cfg storage.Config) { r.storage().UpdateConfig(cfg) }

// SetRemoteOffset tells the log how far its tiered copy reaches (local
// retention deletes only below it).
func (r *Replica) SetRemoteOffset(next int64) { r.storage().SetRemoteOffset(next) }

// DeleteRecordsBefore moves the log start offset up to offset (never past
// the high watermark: the caller checks) and wakes waiters.
func (r *Replica) DeleteRecordsBefore(offset int64) error {
	if offset <= r.storage().LogStartOffset() {
		return nil
	}
	err := r.storage().DeleteRecordsBefore(offset)
	r.wakeWaiters()
	return err
}

// ApplyRetention deletes segments retention.ms / retention.bytes allow
// and returns how many went.
// Waiters wake when segments went: the log start offset moved.
func (r *Replica) ApplyRetention() (int, error) {
	n, err := r.storage().ApplyRetention()
	if n > 0 {
		r.wakeWaiters()
	}
	return n, err
}

// NotifyChanged wakes waiters and watchers for a change made outside the
// replica that a fetch answers (the remote log's start offset).
func (r *Replica) NotifyChanged() { r.wakeWaiters() }

// Clean runs the log cleaner once if the compacted log needs it. The
// producer state is snapshotted first and only the log below that
// snapshot is cleaned, so a restart rebuilds the producer state from the
// snapshot plus batches the cleaner has not touched. Housekeeping calls it
// from one goroutine.
func (r *Replica) Clean(now time.Time) (storage.CleanResult, error) {
	if !r.storage().Compacted() || !r.storage().NeedsClean(now) {
		return storage.CleanResult{}, nil
	}
	limit := r.storage().LogEndOffset()
	if err := r.Checkpoint(); err != nil {
		return storage.CleanResult{}, fmt.Errorf("checkpoint before cleaning: %w", err)
	}
	return r.storage().CleanBelow(now, limit)
}

// RollAndFlush rolls the active segment when segment.ms says so, moves the
// recovery point into the active segment once a segment was sealed (a
// Checkpoint: the sealed segments are fsynced in the background of
// produce, so a restart rescans only the active segment), and fsyncs when
// flush.ms is due. Housekeeping calls it about every second.
func (r *Replica) RollAndFlush() error {
	if err := r.storage().MaybeRoll(); err != nil {
		return err
	}
	if r.storage().RecoveryPointBehind() {
		if err := r.Checkpoint(); err != nil {
			return err
		}
	}
	return r.storage().FlushIfDue()
}

// Flush fsyncs everything appended so far.
func (r *Replica) Flush() error { return r.storage().Flush() }

// Checkpoint makes the log's recovery point and the producer snapshot
// durable. The snapshot is encoded under mu and written after it, unless
// the file already holds those bytes (an idle partition writes nothing).
func (r *Replica) Checkpoint() error {
	r.mu.Lock()
	if r.mu.truncating {
		// The log is being cut and the table not yet rebuilt: a snapshot
		// now could remember batches the log no longer holds. The next
		// checkpoint writes it.
		r.mu.Unlock()
		return r.storage().Checkpoint()
	}
	r.mu.producers.expire(time.Now().UnixMilli())
	next := r.storage().LogEndOffset()
	snap, err := r.mu.producers.encodeSnapshot(next)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	l := r.storage()
	if err := l.Checkpoint(); err != nil {
		return err
	}
	return r.writeSnapshotIfChanged(l, snap)
}

// writeSnapshotIfChanged writes snap as l's producer snapshot unless the
// file holds it already. The lock orders concurrent checkpoints (the
// housekeeping round and Close) so that the digest always names what the
// file holds; it is this replica's alone and guards no other state.
func (r *Replica) writeSnapshotIfChanged(l *storage.Log, snap []byte) error {
	digest := sha256.Sum256(snap)
	r.snapshotOnDisk.Lock()
	defer r.snapshotOnDisk.Unlock()
	if r.snapshotOnDisk.log == l && r.snapshotOnDisk.digest == digest {
		return nil
	}
	r.snapshotOnDisk.log = nil // unknown until the write succeeds
	if err := l.EnsureDir(); err != nil {
		return err
	}
	if err := writeProducerSnapshot(l.Dir(), snap); err != nil {
		return err
	}
	r.snapshotOnDisk.log, r.snapshotOnDisk.digest = l, digest
	return nil
}

// Close checkpoints and closes the log.
func (r *Replica) Close() error {
	if err := r.Checkpoint(); err != nil {
		r.storage().Close()
		return err
	}
	return r.storage().Close()
}

// Remove retires the replica (moved away or deleted): it leads nothing
// any more, waiters wake to find so, and its directory is deleted.
func (r *Replica) Remove() error {
	r.mu.Lock()
	r.role.Store(&Role{Leader: cluster.NoLeader, LeaderEpoch: r.epoch.Load()})
	r.solo.Store(false)
	r.mu.Unlock()
	r.wakeWaiters()
	return r.storage().Delete()
}

// ResetTo empties the log to start (and end) at offset with a fresh
// producer table: a tiered partition whose local log lost its tail starts
// again at the remote log's end, and a follower whose log ends below its
// leader's log start restarts there. Like TruncateTo it holds no lock
// across the disk (rewrite).
func (r *Replica) ResetTo(offset int64) error {
	return r.rewrite(func() (bool, error) {
		return true, r.storage().TruncateFully(offset)
	}, func(_, leo int64) int64 { return leo })
}

// AddWaiter registers a one-shot wake-up for the next change of the log,
// the high watermark or the role.
func (r *Replica) AddWaiter(w chan struct{}) {
	r.waitersMu.Lock()
	r.waitersMu.waiters = append(r.waitersMu.waiters, w)
	r.waitersMu.Unlock()
}

// RemoveWaiter withdraws a wake-up that did not fire.
func (r *Replica) RemoveWaiter(w chan struct{}) {
	r.waitersMu.Lock()
	defer r.waitersMu.Unlock()
	for i, x := range r.waitersMu.waiters {
		if x == w {
			r.waitersMu.waiters = append(r.waitersMu.waiters[:i], r.waitersMu.waiters[i+1:]...)
			return
		}
	}
}

// Watcher is told once of the partition's next change; it registers
// again (Watch) to hear of the one after. Fetch sessions (broker) keep
// their dirty partitions with it.
type Watcher interface {
	// PartitionChanged runs on the goroutine that made the change, with
	// no replica lock held; it must not block.
	PartitionChanged()
}

// Watch registers w for the next change of the log, the high watermark,
// the log start offset or the role.
func (r *Replica) Watch(w Watcher) {
	r.waitersMu.Lock()
	r.waitersMu.watchers = append(r.waitersMu.watchers, w)
	r.waitersMu.Unlock()
}

// Unwatch withdraws a Watch that did not fire.
func (r *Replica) Unwatch(w Watcher) {
	r.waitersMu.Lock()
	defer r.waitersMu.Unlock()
	for i, x := range r.waitersMu.watchers {
		if x == w {
			r.waitersMu.watchers = slices.Delete(r.waitersMu.watchers, i, i+1)
			return
		}
	}
}

// Waiting is how many wake-ups are registered (a parked fetch, an
// acks=all produce).
func (r *Replica) Waiting() int {
	r.waitersMu.Lock()
	defer r.waitersMu.Unlock()
	return len(r.waitersMu.waiters)
}

func (r *Replica) wakeWaiters() {
	r.waitersMu.Lock()
	ws, watchers := r.waitersMu.waiters, r.waitersMu.watchers
	r.waitersMu.waiters, r.waitersMu.watchers = nil, nil
	r.waitersMu.Unlock()
	for _, w := range ws {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	for _, w := range watchers {
		w.PartitionChanged()
	}
}

// Replicated reports whether the high watermark has passed offset,
// appended under leader epoch epoch; ErrNotLeader when leadership was lost
// or the epoch moved on. It is AwaitReplicated's check, for a caller that
// wants to skip setting up a wait.
func (r *Replica) Replicated(offset int64, epoch int32) (bool, error) {
	// The high watermark is read before the epoch is checked: epochs
	// never come back, so an unchanged epoch after the read means the
	// watermark was this leadership's (not one reached after a truncation).
	hw := r.HighWatermark()
	if !r.IsLeader() || r.LeaderEpoch() != epoch {
		return false, ErrNotLeader
	}
	return hw > offset, nil
}

// AwaitReplicated waits until the high watermark passes offset, appended
// under leader epoch epoch (acks=all). It returns ErrReplicationTimeout
// when ctx's deadline passes first, and ErrNotLeader when leadership is
// lost or moved away and back (the epoch differs) or ctx is cancelled.
func (r *Replica) AwaitReplicated(ctx context.Context, offset int64, epoch int32) error {
	committed := func() (bool, error) { return r.Replicated(offset, epoch) }
	if ok, err := committed(); ok || err != nil {
		return err
	}
	wake := make(chan struct{}, 1)
	for {
		r.AddWaiter(wake)
		if ok, err := committed(); ok || err != nil {
			r.RemoveWaiter(wake)
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			r.RemoveWaiter(wake)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ErrReplicationTimeout
			}
			return ErrNotLeader
		}
	}
}
