package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// The coordinator runtime: a state machine over one partition of an
// internal, compacted topic, while this node leads that partition. The
// group coordinator (broker/groups over __consumer_offsets,
// group_shard.go) and the transaction coordinator (broker/txn over
// __transaction_state, txn_coordinator.go) both run on it.
//
// A coordinatorShard[S] holds the state S of one partition. Its life:
//
//   - load: the partition's log is replayed into a fresh S (the machine's
//     replay, no lock held); the shard then serves. A load gets a
//     coordinator epoch that is higher than every earlier load's of the
//     partition, on any node (coordinatorEpochFor).
//   - a call: the caller takes mu, applies its request to S (CPU only),
//     queues the resulting records, encoded as one batch (queueLocked), in
//     the order the state changed, and releases mu. It then waits (await),
//     holding no lock, until its batch — and every batch queued before it —
//     is below the high watermark, and answers.
//   - the writer appends the queued batches to the partition in queue
//     order, holding no lock while it appends (an append may fsync). There
//     is one at a time per shard (mu.writing): the call that queues into
//     an idle shard appends, in its await, its own batch and those queued
//     behind it until the queue is empty (after a bound, a writer
//     goroutine takes over). A single owner, so the log has the queue's
//     order without a lock held across the append.
//   - completion: each call waits, holding no lock, until its appended
//     batch is below the high watermark (concurrently with the others),
//     then completes its write (closing its done channel) only after the
//     write appended before it: answers go out in the order of the log,
//     and no answer precedes a record it depends on. A lone call thus
//     appends and waits on its own goroutine, as if it were alone.
//   - a failed append leaves the state ahead of the log: the write and
//     every write queued after it fail, the state is dropped and the shard
//     loads again from its log (reload). A replication wait that fails
//     (timeout, leadership lost) fails only its write: the record is in
//     the local log, which the state matches; a lost leadership unloads
//     the shard through the coordinator's onLeadership.
//   - unload: when leadership moves, the state is dropped (it lives on in
//     the log), queued writes fail, the machine releases what waits on it.
//
// Locks. mu is the only lock of the runtime. It guards the fields in it
// and coord, and is held only for CPU work: applying a call, queueing or
// taking a write, state changes, the machine's *Locked hooks. It is never
// held across an append, a replication wait, a replay, a peer RPC, a
// channel wait, or a call into another coordinator. Taken under it: the
// task group's mu (handing the writer on) and the leaves of the partition
// the log reads atomically (log end offset, leader epoch).
//
// Ordering. Calls are applied in mu order; their batches are queued in
// that order, appended in it (one writer), completed in it (each write
// after the one before). A load waits for the writer of the previous load
// to finish the append it has in hand, so the replay sees every batch of
// the previous state that reached the log.
type coordinatorShard[S any] struct {
	name    string // for logs: "group coordinator", "transaction coordinator"
	topic   string
	index   int32
	ctx     context.Context
	logger  *slog.Logger
	tasks   *taskGroup
	machine shardMachine[S]

	mu struct {
		sync.Mutex
		state shardState
		log   shardLog // the partition; nil while this node hosts none
		// generation changes with every unload: a load that started in
		// an earlier generation does not serve, and the writes still
		// queued fail.
		generation uint64
		queue      []*shardWrite // queued, not yet appended, in order
		last       *shardWrite   // the latest write queued in this generation
		writing    bool          // the writer runs
		writerIdle chan struct{} // closed when the running writer stops
		// lastAppended is the write last appended (or failed): the next
		// completes after it.
		lastAppended *shardWrite
		// The coordinator epoch of the last load (coordinatorEpochFor).
		loadLeaderEpoch int32
		loadsInEpoch    int32
	}
	// coord is the state while the shard serves (the zero S otherwise).
	// Guarded by mu; outside mu's struct only because txnVerifier
	// (00_produce.go) reads a transaction shard's as sh.coord.
	coord S
}

// shardMachine is what the runtime needs from a state machine beyond the
// calls its coordinator makes on S under mu.
type shardMachine[S any] interface {
	// newState is the empty state a load replays the log into.
	newState(coordinatorEpoch int32) S
	// replay applies one batch of the partition's log to a state being
	// loaded (batches come in log order; no lock is held).
	replay(s S, batch []byte, h storage.BatchHeader) error
	// startedLocked runs under mu once s serves (it may finish s: the
	// replay is complete); the function it returns (nil: none) runs
	// after mu is released.
	startedLocked(s S) func()
	// stoppedLocked runs under mu when s stops serving (unload, reload);
	// the function it returns (nil: none) runs after mu is released.
	stoppedLocked(s S) func()
}

// shardLog is the runtime's view of its partition (partitionLog
// implements it; the runtime's tests use a fake).
type shardLog interface {
	// append writes one batch the coordinator encoded (transactional: a
	// TxnOffsetCommit's batch, which opens the producer's transaction on
	// the partition) and returns its last offset and leader epoch.
	append(batch []byte, transactional bool) (lastOffset int64, leaderEpoch int32, err error)
	// awaitReplicated waits until offset, appended under leaderEpoch, is
	// below the high watermark.
	awaitReplicated(offset int64, leaderEpoch int32) error
	isLeader() bool
	leaderEpoch() int32
	// replay calls fn with every batch from offset to the log end, in
	// order, and returns the offset after the last one.
	replay(from int64, fn func(batch []byte, h storage.BatchHeader) error) (next int64, err error)
	logStartOffset() int64
	logEndOffset() int64
}

type shardState int8

const (
	shardLoading  shardState = iota // replaying the log: COORDINATOR_LOAD_IN_PROGRESS
	shardActive                     // serving
	shardUnloaded                   // no longer coordinator: NOT_COORDINATOR
)

// shardWrite is one call's records, encoded as a batch, on its way to the
// log.
type shardWrite struct {
	batch         []byte
	transactional bool
	generation    uint64
	log           shardLog      // set by the writer: where it was appended
	offset        int64         // set by the writer: its last offset
	leaderEpoch   int32         // set by the writer
	err           error         // set before appended is closed, and by the completer before done is
	prev          *shardWrite   // completes before this one (set with appended)
	appended      chan struct{} // closed by the writer once appended or failed
	done          chan struct{} // closed once durable or failed, after prev's

	// writerRole: the first to await the write runs the shard's writer
	// (set under mu as the write is queued into an idle shard);
	// completerTaken: set by the first to await it once appended, which
	// waits for its replication and completes it. Both change with a
	// CompareAndSwap: other calls await the write too (lastLocked).
	writerRole, completerTaken atomic.Bool
}

var (
	errShardMoved        = errors.New("broker: coordinator partition unloaded before the write was appended")
	errCoordinatorClosed = errors.New("broker: shutting down")
)

func newCoordinatorShard[S any](ctx context.Context, logger *slog.Logger, tasks *taskGroup, name, topic string, index int32, log shardLog, machine shardMachine[S]) *coordinatorShard[S] {
	sh := &coordinatorShard[S]{name: name, topic: topic, index: index, ctx: ctx, logger: logger, tasks: tasks, machine: machine}
	sh.mu.state = shardLoading
	sh.mu.log = log
	sh.mu.loadLeaderEpoch = -1
	return sh
}

// stateErrLocked is the error for a request while the shard is not
// serving, nil while it is.
func (sh *coordinatorShard[S]) stateErrLocked() *kerr.Error {
	switch sh.mu.state {
	case shardLoading:
		return kerr.CoordinatorLoadInProgress
	case shardUnloaded:
		return kerr.NotCoordinator
	}
	return nil
}

// queueLocked queues batch to be appended after everything queued before
// and returns its write. The shard must be serving. The caller must await
// the write once mu is released: if the shard's writer was idle, the
// first to await it is the writer (see await). Needs mu.
func (sh *coordinatorShard[S]) queueLocked(batch []byte, transactional bool) *shardWrite {
	w := &shardWrite{batch: batch, transactional: transactional, generation: sh.mu.generation, appended: make(chan struct{}), done: make(chan struct{})}
	sh.mu.queue = append(sh.mu.queue, w)
	sh.mu.last = w
	if !sh.mu.writing {
		sh.mu.writing = true
		sh.mu.writerIdle = make(chan struct{})
		w.writerRole.Store(true)
	}
	return w
}

// lastLocked is the latest write queued while serving: a call without
// records of its own awaits it, so its answer does not precede the records
// it may depend on. Nil if there is none. Needs mu.
func (sh *coordinatorShard[S]) lastLocked() *shardWrite { return sh.mu.last }

// await waits, holding no lock, until w and everything queued before it
// are durable (below the high watermark) or failed. A nil w is done.
//
// A call that queued into an idle shard is its writer (or whoever awaits
// that write first): here, on its own goroutine and holding no lock, it
// appends its write (the head of the queue) and what is queued behind it
// until the queue is empty, handing the role to a writer goroutine if that
// takes long (writeLoop). So a lone call appends as if it were alone,
// without a goroutine switch, and calls that arrive while one appends have
// their batches appended by it; at every moment there is at most one
// writer. Then the first to await w waits for its replication, holding no
// lock (as every call does for its own write, concurrently), and
// completes it only after the write before it: completions, and so
// answers, follow the log.
func (sh *coordinatorShard[S]) await(w *shardWrite) error {
	if w == nil {
		return nil
	}
	if w.writerRole.CompareAndSwap(true, false) {
		sh.writeLoop(w)
	}
	select {
	case <-w.appended:
	case <-sh.ctx.Done():
		return sh.doneOrClosed(w)
	}
	if w.completerTaken.CompareAndSwap(false, true) {
		if w.err == nil {
			if err := w.log.awaitReplicated(w.offset, w.leaderEpoch); err != nil {
				// A decision counts once the ISR has it: a new leader
				// replays it. Until then the caller hears of a failure.
				w.err = fmt.Errorf("broker: %s-%d offset %d not committed: %w", sh.topic, sh.index, w.offset, err)
			}
		}
		if prev := w.prev; prev != nil {
			select {
			case <-prev.done:
			case <-sh.ctx.Done():
				return errCoordinatorClosed
			}
			w.prev = nil
		}
		close(w.done)
	}
	select {
	case <-w.done:
		return w.err
	case <-sh.ctx.Done():
		return sh.doneOrClosed(w)
	}
}

// doneOrClosed is w's outcome if it is complete, else that the server is
// stopping.
func (sh *coordinatorShard[S]) doneOrClosed(w *shardWrite) error {
	select {
	case <-w.done:
		return w.err
	default:
		return errCoordinatorClosed
	}
}

// writeLoop is the writer: it appends the queued writes in order, holding
// no lock while it appends, and hands them on to completion. It runs
// until the queue is empty. Run by the call awaiting owner (await), it
// hands the role to a writer goroutine (writeLoop(nil)) once it has
// appended owner and callerAppends more, so a call does not append for
// others indefinitely.
func (sh *coordinatorShard[S]) writeLoop(owner *shardWrite) {
	ownerDone, appended := false, 0
	for {
		sh.mu.Lock()
		if len(sh.mu.queue) == 0 || sh.ctx.Err() != nil {
			sh.failQueueLocked(errCoordinatorClosed) // stopping: nothing more is appended
			sh.stopWriterLocked()
			sh.mu.Unlock()
			return
		}
		if ownerDone && appended > callerAppends {
			// The rest is another writer's: the role passes on.
			if !sh.tasks.goTask(func() { sh.writeLoop(nil) }) {
				sh.failQueueLocked(errCoordinatorClosed)
				sh.stopWriterLocked()
			}
			sh.mu.Unlock()
			return
		}
		w := sh.mu.queue[0]
		sh.mu.queue[0] = nil
		sh.mu.queue = sh.mu.queue[1:]
		log := sh.mu.log
		sh.mu.Unlock()

		w.log = log
		w.offset, w.leaderEpoch, w.err = log.append(w.batch, w.transactional)
		if w.err != nil {
			w.err = fmt.Errorf("broker: append to %s-%d: %w", sh.topic, sh.index, w.err)
			sh.logger.Error(sh.name+" write failed", "partition", sh.index, "err", w.err)
		}

		sh.mu.Lock()
		ownerDone = ownerDone || w == owner
		appended++
		sh.appendedLocked(w)
		reload := w.err != nil && w.generation == sh.mu.generation && sh.mu.state == shardActive
		var after func()
		if reload {
			// The state is ahead of the log: what was queued after w
			// fails too, and the shard loads again from its log.
			after = sh.unloadLocked(shardLoading, w.err)
		}
		sh.mu.Unlock()
		if after != nil {
			after()
		}
		if reload {
			sh.startLoad()
		}
	}
}

// callerAppends bounds the writes a call appends for others after its own
// before a writer goroutine takes over (each append is a write(2), rarely
// an fsync).
const callerAppends = 16

// stopWriterLocked marks the writer idle. Needs mu.
func (sh *coordinatorShard[S]) stopWriterLocked() {
	sh.mu.writing = false
	close(sh.mu.writerIdle)
}

// failQueueLocked fails the writes still queued (they complete after
// those appended, in order). Needs mu.
func (sh *coordinatorShard[S]) failQueueLocked(err error) {
	for _, w := range sh.mu.queue {
		w.err = err
		sh.appendedLocked(w)
	}
	sh.mu.queue = nil
}

// appendedLocked hands w, appended (or failed), on to completion, after
// the write handed on before it. Needs mu.
func (sh *coordinatorShard[S]) appendedLocked(w *shardWrite) {
	w.prev = sh.mu.lastAppended
	sh.mu.lastAppended = w
	close(w.appended)
}

// unloadLocked stops serving: the state is dropped (it lives on in the
// log), writes still queued fail with err, and the machine's stop hook
// runs; next is the state the shard moves to (loading or unloaded). Run
// the returned function (nil: none) once mu is released. Needs mu.
func (sh *coordinatorShard[S]) unloadLocked(next shardState, err error) func() {
	sh.mu.generation++
	sh.failQueueLocked(err)
	sh.mu.last = nil
	var after func()
	if sh.mu.state == shardActive {
		after = sh.machine.stoppedLocked(sh.coord)
	}
	var zero S
	sh.coord = zero
	sh.mu.state = next
	return after
}

// unload stops serving, moving to next (loading or unloaded).
func (sh *coordinatorShard[S]) unload(next shardState) {
	sh.mu.Lock()
	after := sh.unloadLocked(next, errShardMoved)
	sh.mu.Unlock()
	if after != nil {
		after()
	}
}

// moveTo follows a leadership change of the shard's partition: it gives
// the shard up, and if this node now leads log, loads it from there in
// the background.
func (sh *coordinatorShard[S]) moveTo(log shardLog, leader bool) {
	next := shardUnloaded
	if leader {
		next = shardLoading
	}
	sh.mu.Lock()
	after := sh.unloadLocked(next, errShardMoved)
	if leader {
		sh.mu.log = log
	}
	sh.mu.Unlock()
	if after != nil {
		after()
	}
	if leader {
		sh.startLoad()
	}
}

// reload gives the shard up and loads it again from its log, as a failed
// append does.
func (sh *coordinatorShard[S]) reload() {
	sh.unload(shardLoading)
	sh.startLoad()
}

// startLoad loads the shard in the background (a task of the shard's
// coordinator).
func (sh *coordinatorShard[S]) startLoad() {
	sh.tasks.goTask(func() {
		if err := sh.load(); err != nil && sh.ctx.Err() == nil {
			sh.logger.Error(sh.name+" partition failed to load; it stays unavailable", "partition", sh.index, "err", err)
		}
	})
}

// load replays the partition's log into a fresh state and makes the shard
// serve it, unless the shard was unloaded meanwhile or this node no
// longer leads the partition. It returns once the shard serves (or will
// not). The shard must be loading.
func (sh *coordinatorShard[S]) load() error {
	sh.mu.Lock()
	generation, log := sh.mu.generation, sh.mu.log
	var idle chan struct{}
	if sh.mu.writing {
		idle = sh.mu.writerIdle
	}
	sh.mu.Unlock()
	if log == nil || !log.isLeader() {
		sh.mu.Lock()
		if sh.mu.generation == generation && sh.mu.state == shardLoading && sh.mu.log == log {
			sh.mu.state = shardUnloaded // another node coordinates this partition
		}
		sh.mu.Unlock()
		return nil
	}
	// The previous state's writer may have an append in hand: the replay
	// must see it.
	if idle != nil {
		select {
		case <-idle:
		case <-sh.ctx.Done():
			return sh.ctx.Err()
		}
	}
	sh.mu.Lock()
	epoch, saturated := sh.coordinatorEpochLocked(log.leaderEpoch())
	sh.mu.Unlock()
	if saturated {
		sh.logger.Warn(sh.name+": too many reloads in one leader epoch; markers of older loads are no longer fenced", "partition", sh.index, "leader_epoch", log.leaderEpoch())
	}

	s := sh.machine.newState(epoch)
	next := log.logStartOffset()
	for {
		n, err := log.replay(next, func(batch []byte, h storage.BatchHeader) error {
			return sh.machine.replay(s, batch, h)
		})
		if err != nil {
			return err
		}
		next = n
		sh.mu.Lock()
		if sh.mu.generation != generation || sh.mu.state != shardLoading || sh.mu.log != log {
			sh.mu.Unlock()
			return nil // unloaded or moved meanwhile
		}
		if log.logEndOffset() > next {
			// Appended meanwhile outside the runtime (transaction
			// markers on __consumer_offsets): replay that too. A marker
			// appended after this check finds the shard serving.
			sh.mu.Unlock()
			continue
		}
		if !log.isLeader() {
			// Leadership moved while loading (or a failed write's
			// reload raced the move): another node coordinates it.
			sh.mu.state = shardUnloaded
			sh.mu.Unlock()
			return nil
		}
		sh.coord = s
		sh.mu.state = shardActive
		after := sh.machine.startedLocked(s)
		sh.mu.Unlock()
		if after != nil {
			after()
		}
		return nil
	}
}

// coordinatorEpochLocked returns the coordinator epoch of a load under
// the partition's leaderEpoch: higher than every earlier load's of this
// partition. Loads under a higher leader epoch (on any node) count from a
// higher base; reloads under the same one (after a failed write) count up
// from it, so a marker task of an older load is fenced at the partitions
// (27_write_txn_markers.go) by a newer load's markers. saturated reports
// that the reloads ran out (the epoch repeats). Needs mu.
func (sh *coordinatorShard[S]) coordinatorEpochLocked(leaderEpoch int32) (epoch int32, saturated bool) {
	switch {
	case leaderEpoch != sh.mu.loadLeaderEpoch:
		sh.mu.loadLeaderEpoch, sh.mu.loadsInEpoch = leaderEpoch, 0
	case sh.mu.loadsInEpoch < maxLoadsPerLeaderEpoch:
		sh.mu.loadsInEpoch++
	default:
		saturated = true
	}
	return coordinatorEpochFor(leaderEpoch, sh.mu.loadsInEpoch), saturated
}

// A coordinator epoch is the partition's leader epoch times
// loadsPerLeaderEpoch plus the number of reloads under it (markers carry
// it as an int32: leader epochs up to 2^23-1 keep their order).
const (
	loadsPerLeaderEpoch    = 1 << 8
	maxLoadsPerLeaderEpoch = loadsPerLeaderEpoch - 1
	maxPackedLeaderEpoch   = math.MaxInt32 / loadsPerLeaderEpoch
)

func coordinatorEpochFor(leaderEpoch, reloads int32) int32 {
	leaderEpoch = max(0, min(leaderEpoch, maxPackedLeaderEpoch))
	return leaderEpoch*loadsPerLeaderEpoch + min(reloads, maxLoadsPerLeaderEpoch)
}

// ---- the partition behind a shard ----

// partitionLog is a hosted partition as a coordinator shard's log. Every
// partition method the coordinators call — the shards' appends, waits and
// replays, and the markers they write (writeMarker) — is called here, so
// the partition's API can change in one place.
type partitionLog struct {
	s *Server
	p *partition
}

// logOf returns p as a shard's log; nil if p is nil (not hosted here).
func logOf(s *Server, p *partition) shardLog {
	if p == nil {
		return nil
	}
	return &partitionLog{s: s, p: p}
}

func (l *partitionLog) append(batch []byte, transactional bool) (int64, int32, error) {
	if transactional {
		// A TxnOffsetCommit's batch opens the producer's transaction on
		// the partition like a produce would, without the idempotent
		// sequence check: the broker writes these, with no sequence, in
		// the group's order.
		res, err := l.p.AppendUnchecked(batch)
		return res.LastOffset, res.LeaderEpoch, err
	}
	res := l.p.appendRecords(batch, l.s.topics.topicConfig(l.p.topic))
	if res.Code != 0 {
		err := kerr.ErrorForCode(res.Code)
		if res.Message != "" {
			err = fmt.Errorf("%w: %s", err, res.Message)
		}
		return 0, 0, err
	}
	return res.LastOffset, res.LeaderEpoch, nil
}

// coordinatorReplicationTimeout bounds how long a coordinator write (a
// group or transaction record, a marker) waits for the ISR.
const coordinatorReplicationTimeout = 30 * time.Second

// awaitReplicated waits, up to coordinatorReplicationTimeout or until the
// server stops, until the ISR has the record at offset, appended under
// leaderEpoch.
func (l *partitionLog) awaitReplicated(offset int64, leaderEpoch int32) error {
	ctx, cancel := context.WithTimeout(l.s.ctx, coordinatorReplicationTimeout)
	defer cancel()
	return l.p.AwaitReplicated(ctx, offset, leaderEpoch)
}

// writeMarker appends a transaction marker for the producer (a data
// partition's side of WriteTxnMarkers) and returns its offset and the
// leader epoch it was written under.
func (l *partitionLog) writeMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, int32, error) {
	return l.p.WriteTxnMarker(producerID, epoch, commit, coordinatorEpoch)
}

func (l *partitionLog) isLeader() bool        { return l.p.IsLeader() }
func (l *partitionLog) leaderEpoch() int32    { return l.p.LeaderEpoch() }
func (l *partitionLog) logStartOffset() int64 { return l.p.Log().LogStartOffset() }
func (l *partitionLog) logEndOffset() int64   { return l.p.LogEndOffset() }

// replay calls fn with every batch from offset from to the log end, in
// order. A coordinator loads when its node becomes the partition's
// leader, whose whole log is the partition's from then on: its high
// watermark may still trail records the previous leader had committed.
func (l *partitionLog) replay(from int64, fn func(batch []byte, h storage.BatchHeader) error) (int64, error) {
	log, topic, index := l.p.Log(), l.p.topic.name, l.p.index
	offset := max(from, log.LogStartOffset())
	for {
		if err := l.s.ctx.Err(); err != nil {
			return offset, err
		}
		end := log.LogEndOffset()
		if offset >= end {
			return offset, nil
		}
		chunk, err := log.Read(offset, 1<<20, end, true)
		if errors.Is(err, storage.ErrOffsetOutOfRange) && offset < log.LogStartOffset() {
			offset = log.LogStartOffset() // retention moved the start meanwhile
			continue
		}
		if err != nil {
			return offset, fmt.Errorf("broker: reading %s-%d at %d: %w", topic, index, offset, err)
		}
		data, err := chunk.ReadAll()
		if err != nil {
			return offset, err
		}
		progressed := false
		for pos := 0; len(data)-pos >= storage.BatchHeaderSize; {
			h, err := storage.ParseBatchHeader(data[pos:])
			if err != nil {
				return offset, fmt.Errorf("broker: %s-%d at %d: %w", topic, index, offset, err)
			}
			if h.Size() > len(data)-pos {
				break // cut at the read limit: read it again from its start
			}
			batch := data[pos : pos+h.Size()]
			pos += h.Size()
			if h.LastOffset() < offset {
				continue
			}
			offset = h.LastOffset() + 1
			progressed = true
			if err := fn(batch, h); err != nil {
				return offset, fmt.Errorf("broker: %s-%d batch at %d: %w", topic, index, h.BaseOffset, err)
			}
		}
		if !progressed {
			return offset, fmt.Errorf("broker: %s-%d: no complete batch at offset %d", topic, index, offset)
		}
	}
}

// ---- tasks ----

// taskGroup runs a coordinator's goroutines (shard writers handed on,
// loads, marker tasks) so that its owner can wait for them: goTask refuses
// new ones once close has begun, close waits for the running ones (which
// stop on the server's context).
type taskGroup struct {
	ctx context.Context
	mu  struct {
		sync.Mutex
		closed bool
	}
	running sync.WaitGroup
}

// goTask runs fn in a goroutine of the group; false (fn not run) once the
// group is closing or the server stopping.
func (g *taskGroup) goTask(fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.closed || g.ctx.Err() != nil {
		return false
	}
	g.running.Add(1)
	go func() {
		defer g.running.Done()
		fn()
	}()
	return true
}

// close refuses new tasks and waits for the running ones.
func (g *taskGroup) close() {
	g.mu.Lock()
	g.mu.closed = true
	g.mu.Unlock()
	g.running.Wait()
}

// internalTopic returns the internal topic name, creating it with
// partitions, replication factor rf (capped by the nodes there are) and
// configs if it does not exist; nil (logged) if it cannot be created.
// It proposes through the quorum: call it with no lock held.
func (s *Server) internalTopic(name string, partitions int32, rf int16, configs map[string]string) *topicState {
	if t := s.topics.get(name); t != nil {
		return t
	}
	t, terr := s.topics.create(name, partitions, s.internalReplicationFactor(rf), configs, false)
	if terr != nil && terr.code == kerr.TopicAlreadyExists.Code {
		t, terr = s.topics.get(name), nil
	}
	if terr != nil || t == nil {
		s.logger.Error("cannot create "+name, "err", terr)
		return nil
	}
	return t
}

// creation lets one caller create an internal topic while the others
// wait for it, with no lock held across the quorum proposal.
type creation struct {
	mu      sync.Mutex
	running chan struct{} // closed when the creation in flight ends
}

// do runs create unless another caller's runs; then it waits for that one
// (or for done).
func (c *creation) do(done <-chan struct{}, create func()) {
	c.mu.Lock()
	if running := c.running; running != nil {
		c.mu.Unlock()
		select {
		case <-running:
		case <-done:
		}
		return
	}
	running := make(chan struct{})
	c.running = running
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = nil
		c.mu.Unlock()
		close(running)
	}()
	create()
}
