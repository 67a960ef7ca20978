package broker

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/broker/txn"
)

// transactionStateTopic holds the transaction coordinator's state (Kafka's
// name), compacted, one txn.Coordinator per partition.
const transactionStateTopic = "__transaction_state"

// txnCoordinator runs broker/txn's state machine on this node: a shard per
// __transaction_state partition this node leads, created on first use and
// replayed from the log, on the coordinator runtime
// (coordinator_runtime.go):
//
//   - a call is applied to the state machine under the shard's mu (CPU
//     only) and its records queued, in the order the state changed; the
//     runtime appends the queue in that order with no lock held and
//     completes each write, in log order, once it is below the high
//     watermark; the answer waits for that, holding no lock (a call
//     without records waits for everything queued before it);
//   - markers of a decided transaction (PrepareCommit/PrepareAbort
//     durable) are written by a marker task (finishTxn) that the
//     coordinator owns, to the local partitions and through
//     WriteTxnMarkers to the other leaders, in parallel, retried with
//     backoff; it then applies CompleteTxn under mu and persists its
//     record the same way. EndTxn is answered once the Prepare record is
//     durable, as in Kafka; the producer's next InitProducerId,
//     AddPartitionsToTxn or AddOffsetsToTxn gets CONCURRENT_TRANSACTIONS
//     (retriable) until the markers are written;
//   - every load of a shard has its own coordinator epoch, higher than
//     every earlier load's (coordinatorEpochFor), carried by its markers.
//     A marker task belongs to the load that started it: it stops once
//     that load is gone and never completes a later load's transaction,
//     and a partition refuses a marker of an older coordinator epoch than
//     the last it wrote for the producer (TRANSACTION_COORDINATOR_FENCED,
//     27_write_txn_markers.go), so a marker still in flight from an older
//     load cannot end the producer's next transaction.
//
// Locks: the shards' mu (the runtime's), txnCoordinator.mu (the shard
// list) and taskGroup's are leaves, held for CPU work only. A first
// transactional batch and a marker of the same producer are ordered by the
// data partition itself (replica.Append's KIP-890 window, txnVerifier).
type txnCoordinator struct {
	s   *Server
	cfg txn.Config

	creating creation // of __transaction_state
	mu       struct {
		sync.Mutex
		shards []*txnShard // nil until the topic exists
	}
	// tasks runs the shards' loads, writers, committers and marker
	// tasks; run closes it (waiting for them) when the server stops.
	tasks taskGroup

	// markerFault, set by tests before the coordinator is used, fails
	// marker writes as a crash or a disk error between the decision and
	// the markers would.
	markerFault atomic.Pointer[func(txn.Markers) error]
	// markerSendHook, set by tests, wraps each marker write (send: to the
	// local partitions one at a time, or one WriteTxnMarkers to another
	// leader) once the task has checked that its load still serves: what
	// a marker in flight looks like.
	markerSendHook atomic.Pointer[func(m txn.Markers, send func() error) error]
	// verifiedHook, set by tests, runs in txnVerifier between the
	// coordinator's check and the append (the window a marker may hit).
	verifiedHook atomic.Pointer[func()]
}

// Marker retries back off from markerRetryMin, doubling to markerRetryMax.
const (
	markerRetryMin = 100 * time.Millisecond
	markerRetryMax = 5 * time.Second
)

// txnShard is one __transaction_state partition's coordinator: the
// runtime's shard with a txn.Coordinator as its state (sh.coord, nil while
// not serving: another node leads, or loading).
type txnShard struct {
	*coordinatorShard[*txn.Coordinator]
	c *txnCoordinator
	// firstLoad is closed once ensureTopic has loaded the shard (or
	// found it led elsewhere); requests wait for it rather than get
	// NOT_COORDINATOR while the node's shards load at start.
	firstLoad chan struct{}

	// marking holds the transactional ids whose marker task of the
	// current load runs, each with a channel closed when the task ends
	// (txnCall waits on it). Guarded by mu (the runtime's); every load
	// starts a new one, and an unload closes its channels.
	marking map[string]chan struct{}
}

func newTxnCoordinator(s *Server) *txnCoordinator {
	cfg := txn.DefaultConfig()
	cfg.MaxTimeout = time.Duration(s.cfg.TransactionMaxTimeoutMs) * time.Millisecond
	cfg.IDExpiration = time.Duration(s.cfg.TransactionalIDExpirationMs) * time.Millisecond
	c := &txnCoordinator{s: s, cfg: cfg}
	c.tasks.ctx = s.ctx
	return c
}

func newTxnShard(c *txnCoordinator, index int32, p *partition) *txnShard {
	sh := &txnShard{c: c, firstLoad: make(chan struct{})}
	sh.coordinatorShard = newCoordinatorShard[*txn.Coordinator](c.s.ctx, c.s.logger, &c.tasks, "transaction coordinator", transactionStateTopic, index, logOf(c.s, p), sh)
	return sh
}

func (c *txnCoordinator) shards() []*txnShard {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.shards
}

// ensureTopic creates __transaction_state on first use and loads its shards.
func (c *txnCoordinator) ensureTopic() []*txnShard {
	if shards := c.shards(); shards != nil {
		return shards
	}
	c.creating.do(c.s.ctx.Done(), func() {
		if c.shards() != nil {
			return
		}
		t := c.s.internalTopic(transactionStateTopic, c.s.cfg.TransactionStateLogNumPartitions, c.s.cfg.TransactionStateLogReplicationFactor,
			map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"})
		if t == nil {
			return
		}
		parts, _, _ := c.s.topics.snapshot(t)
		shards := make([]*txnShard, len(parts))
		for i, p := range parts {
			shards[i] = newTxnShard(c, int32(i), p)
			if log := logOf(c.s, p); log == nil || !log.isLeader() {
				shards[i].unload(shardUnloaded) // another node coordinates these ids
			}
		}
		// Published before loading, so a leadership change meanwhile
		// (onLeadership) finds its shard; a load does not serve a
		// partition that is not led here by the time it finishes.
		c.mu.Lock()
		c.mu.shards = shards
		c.mu.Unlock()
		for i, sh := range shards {
			sh.mu.Lock()
			loading := sh.mu.state == shardLoading
			sh.mu.Unlock()
			if loading {
				if err := sh.load(); err != nil {
					c.s.logger.Error("transaction coordinator partition failed to load", "partition", i, "err", err)
				}
			}
			close(sh.firstLoad)
		}
	})
	return c.shards()
}

// shardFor returns the shard of a transactional id (Kafka's partitionFor).
func (c *txnCoordinator) shardFor(transactionalID string) (*txnShard, *kerr.Error) {
	shards := c.ensureTopic()
	if len(shards) == 0 {
		return nil, kerr.CoordinatorNotAvailable
	}
	sh := shards[groupPartition(transactionalID, len(shards))]
	select {
	case <-sh.firstLoad: // shards load one by one when the topic is found
	case <-c.s.ctx.Done():
		return nil, kerr.CoordinatorNotAvailable
	}
	sh.mu.Lock()
	loaded := sh.coord != nil
	sh.mu.Unlock()
	if !loaded {
		return nil, kerr.NotCoordinator
	}
	return sh, nil
}

// onLeadership loads a shard when this node becomes its partition's
// leader and drops it when leadership moves away.
func (c *txnCoordinator) onLeadership(p *partition, leader bool) {
	shards := c.shards()
	if int(p.index) >= len(shards) {
		return // not in use yet: ensureTopic finds the leadership
	}
	shards[p.index].moveTo(logOf(c.s, p), leader)
}

// run ticks every loaded shard once a second: transaction timeouts,
// transactional-id expiry and markers of decided transactions without a
// marker task. When the server stops it waits for the coordinator's tasks.
func (c *txnCoordinator) run() {
	defer c.tasks.close()
	if c.s.topics.get(transactionStateTopic) != nil {
		// Load at start, as Kafka does when it becomes the partitions'
		// leader: a transaction a previous run left open must time out
		// (and its partitions' last stable offset move) even if no
		// transactional client comes back.
		c.ensureTopic()
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-c.s.ctx.Done():
			return
		case <-ticker.C:
		}
		for _, sh := range c.shards() {
			if err := sh.tick(); err != nil {
				c.s.logger.Warn("transaction coordinator tick", "partition", sh.index, "err", err)
			}
		}
	}
}

// tick applies Tick (timeouts, expiry) and starts markers for decided
// transactions without a marker task — their Prepare record was not
// confirmed durable when written, or a task stopped — once everything
// queued so far is durable. A shard with nothing to do returns at once.
func (sh *txnShard) tick() error {
	sh.mu.Lock()
	coord := sh.coord
	if coord == nil {
		sh.mu.Unlock()
		return nil // led by another node, or loading
	}
	now := time.Now()
	pending := sh.unmarkedLocked(coord.PendingMarkers()) // before Tick adds new ones
	eff := coord.Tick(now)
	eff.Markers = append(pending, eff.Markers...)
	if len(eff.Records) == 0 && len(eff.Markers) == 0 {
		sh.mu.Unlock()
		return nil
	}
	w := sh.queueRecordsLocked(eff.Records, now)
	sh.mu.Unlock()
	if err := sh.await(w); err != nil {
		return err
	}
	sh.startMarkers(coord, eff.Markers)
	return nil
}

// do applies fn to the shard's coordinator under mu, queues the records
// of its effects, waits (no lock held) until they — and everything queued
// before — are durable, then hands the effects' markers to marker tasks.
// It returns NOT_COORDINATOR if the shard is not loaded, or the write's
// error.
func (sh *txnShard) do(fn func(coord *txn.Coordinator, now time.Time) txn.Effects) error {
	sh.mu.Lock()
	coord := sh.coord
	if coord == nil {
		sh.mu.Unlock()
		return kerr.NotCoordinator // leadership moved since shardFor
	}
	now := time.Now()
	eff := fn(coord, now)
	w := sh.queueRecordsLocked(eff.Records, now)
	sh.mu.Unlock()
	if err := sh.await(w); err != nil {
		return err
	}
	// The decisions are durable: their markers may go out. (If the write
	// failed, the shard reloads and the load starts them.)
	sh.startMarkers(coord, eff.Markers)
	return nil
}

// queueRecordsLocked queues records as one batch, in the order the state
// changed, and returns the write to await: this one, or the latest queued
// if there are no records (nil if there is none). Needs mu.
func (sh *txnShard) queueRecordsLocked(records []txn.Record, now time.Time) *shardWrite {
	if len(records) == 0 {
		return sh.lastLocked()
	}
	keys, values := make([][]byte, len(records)), make([][]byte, len(records))
	for i, r := range records {
		keys[i], values[i] = txn.EncodeRecord(r)
	}
	return sh.queueLocked(storage.EncodeKVBatch(keys, values, -1, -1, false, now.UnixMilli()), false)
}

// serves reports whether coord is still the shard's state (its load has
// not been replaced).
func (sh *txnShard) serves(coord *txn.Coordinator) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.coord == coord
}

// unmarkedLocked keeps the markers of transactions without a marker task.
func (sh *txnShard) unmarkedLocked(ms []txn.Markers) []txn.Markers {
	out := ms[:0]
	for _, m := range ms {
		if sh.marking[m.TransactionalID] == nil {
			out = append(out, m)
		}
	}
	return out
}

// startMarkers starts a marker task for each transaction decided by coord
// that has none yet.
func (sh *txnShard) startMarkers(coord *txn.Coordinator, markers []txn.Markers) {
	for _, m := range markers {
		sh.mu.Lock()
		if sh.coord != coord || sh.marking[m.TransactionalID] != nil {
			sh.mu.Unlock()
			continue
		}
		sh.marking[m.TransactionalID] = make(chan struct{})
		sh.mu.Unlock()
		if !sh.c.tasks.goTask(func() { sh.finishTxn(coord, m) }) {
			return // stopping: the next load resends them
		}
	}
}

// errStaleMarkerTask stops a marker task whose load no longer serves: the
// load that replaced it resends the markers under its own epoch.
var errStaleMarkerTask = errors.New("broker: the coordinator load that decided the transaction was replaced")

// finishTxn is a marker task: it writes one decided transaction's markers,
// retrying with backoff until they are all written (or coord is no longer
// the shard's, or the transaction no longer waits for them), then applies
// CompleteTxn and persists its record.
func (sh *txnShard) finishTxn(coord *txn.Coordinator, m txn.Markers) {
	backoff := markerRetryMin
	for {
		err := sh.c.writeMarkers(m, func() bool { return sh.serves(coord) })
		if err == nil {
			break
		}
		if errors.Is(err, errStaleMarkerTask) {
			return
		}
		sh.c.s.logger.Warn("writing transaction markers; retrying", "transactional_id", m.TransactionalID, "in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-sh.c.s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, markerRetryMax)
		if !sh.awaitsMarkers(coord, m) {
			return
		}
	}
	sh.mu.Lock()
	if sh.coord != coord {
		sh.mu.Unlock()
		return // reloaded meanwhile: the new load resends the markers
	}
	sh.markedLocked(m.TransactionalID)
	now := time.Now()
	code, eff := coord.CompleteTxn(now, m)
	w := sh.queueRecordsLocked(eff.Records, now)
	sh.mu.Unlock()
	if code != nil {
		sh.c.s.logger.Warn("completing a transaction", "transactional_id", m.TransactionalID, "err", code)
	}
	if len(eff.Records) == 0 {
		return
	}
	if err := sh.await(w); err != nil {
		// The tick's PendingMarkers finds the transaction still in
		// Prepare after the reload (or a new leader's load does).
		sh.c.s.logger.Warn("persisting a completed transaction", "transactional_id", m.TransactionalID, "err", err)
	}
}

// awaitsMarkers reports whether coord is still the shard's and m's
// transaction still waits for m's markers; if not it drops the marking.
func (sh *txnShard) awaitsMarkers(coord *txn.Coordinator, m txn.Markers) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.coord != coord {
		return false
	}
	st, ok := coord.State(m.TransactionalID)
	want := txn.PrepareAbort
	if m.Commit {
		want = txn.PrepareCommit
	}
	if ok && st.State == want && st.ProducerID == m.ProducerID && st.ProducerEpoch == m.ProducerEpoch {
		return true
	}
	sh.markedLocked(m.TransactionalID)
	return false
}

// markedLocked ends id's marking, waking the calls waiting for it.
func (sh *txnShard) markedLocked(id string) {
	if done := sh.marking[id]; done != nil {
		close(done)
		delete(sh.marking, id)
	}
}

// markingDone returns the channel closed when id's marker task ends; nil
// if none runs.
func (sh *txnShard) markingDone(id string) <-chan struct{} {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.marking[id]
}

// writeMarkers writes one transaction's marker to each of its partitions;
// on a __consumer_offsets partition the groups then settle the
// transaction's offsets. current reports whether the task's load still
// serves; it is checked before each write goes out, so a task whose load
// was replaced sends nothing more (errStaleMarkerTask). What it sent
// before that is fenced at the partitions by the coordinator epoch.
func (c *txnCoordinator) writeMarkers(m txn.Markers, current func() bool) error {
	if fault := c.markerFault.Load(); fault != nil {
		if err := (*fault)(m); err != nil {
			return err
		}
	}
	// Partitions this node leads are marked here; the others through
	// WriteTxnMarkers to their leaders, one request per leader, in
	// parallel (a slow node delays only its own).
	st := c.s.clusterState()
	remote := map[int32][]txn.TopicPartition{}
	for _, tp := range m.Partitions {
		leader := c.s.cfg.NodeID
		if t, ok := st.Topic(tp.Topic); ok && int(tp.Partition) < len(t.Partitions) {
			leader = t.Partitions[tp.Partition].Leader
		}
		if leader != c.s.cfg.NodeID {
			remote[leader] = append(remote[leader], tp)
			continue
		}
		if !current() {
			return errStaleMarkerTask
		}
		err := c.sendMarker(m, func() error {
			if code := c.s.writeMarkerReplicated(tp.Topic, tp.Partition, m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch); code != 0 {
				return fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, kerr.ErrorForCode(code))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(remote) == 0 {
		return nil
	}
	if !current() {
		return errStaleMarkerTask
	}
	if len(remote) == 1 {
		for leader, tps := range remote {
			return c.sendMarker(m, func() error { return c.s.sendMarkers(leader, m, tps) })
		}
	}
	errs := make(chan error, len(remote))
	for leader, tps := range remote {
		// Bounded by sendMarkers' timeout; the task waits for them all.
		go func() { errs <- c.sendMarker(m, func() error { return c.s.sendMarkers(leader, m, tps) }) }()
	}
	var first error
	for range remote {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sendMarker runs one marker write, through the test hook if one is set.
func (c *txnCoordinator) sendMarker(m txn.Markers, send func() error) error {
	if hook := c.markerSendHook.Load(); hook != nil {
		return (*hook)(m, send)
	}
	return send()
}

// ---- the runtime's state machine hooks ----

// newState is a coordinator for a load with its coordinator epoch.
func (sh *txnShard) newState(coordinatorEpoch int32) *txn.Coordinator {
	return txn.New(&sh.c.cfg, coordinatorEpoch)
}

// replay applies one batch of __transaction_state (markers do not occur
// there; a batch of unknown keys is skipped).
func (sh *txnShard) replay(coord *txn.Coordinator, batch []byte, h storage.BatchHeader) error {
	if h.IsControl() {
		return nil
	}
	recs, err := storage.DecodeRecords(batch)
	if err != nil {
		return err
	}
	for _, r := range recs {
		rec, err := txn.DecodeRecord(r.Key, r.Value)
		if errors.Is(err, txn.ErrUnknownKey) {
			continue
		}
		if err != nil {
			return err
		}
		if err := coord.Replay(rec); err != nil {
			return err
		}
	}
	return nil
}

// startedLocked starts, once the load serves, the markers of the
// transactions a previous coordinator had decided but not completed.
func (sh *txnShard) startedLocked(coord *txn.Coordinator) func() {
	sh.marking = map[string]chan struct{}{}
	pending := coord.PendingMarkers()
	if len(pending) == 0 {
		return nil
	}
	return func() { sh.startMarkers(coord, pending) }
}

// stoppedLocked ends the load's markings: its marker tasks stop at their
// next check, and calls waiting for them go on.
func (sh *txnShard) stoppedLocked(*txn.Coordinator) func() {
	for _, done := range sh.marking {
		close(done)
	}
	sh.marking = nil
	return nil
}

// txnConcurrentWait bounds how long a call that finds the id's previous
// transaction still completing waits for its markers before it answers
// CONCURRENT_TRANSACTIONS. Markers usually take a few milliseconds, so the
// producer's next transaction starts without a retry round trip (and its
// backoff, 20 ms or more in clients); a slow partition leader costs the
// caller this much and then the usual retry. Short, because a connection's
// requests are answered in order.
const txnConcurrentWait = 200 * time.Millisecond

// txnCall runs fn on the shard of a transactional id and turns a failed
// write into COORDINATOR_NOT_AVAILABLE (the client retries). An answer of
// CONCURRENT_TRANSACTIONS while the id's marker task runs is retried once
// it ends, within txnConcurrentWait (holding no lock).
func (rc *requestContext) txnCall(id string, fn func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects)) *kerr.Error {
	sh, code := rc.s.txns.shardFor(id)
	if code != nil {
		return code
	}
	deadline := time.Now().Add(txnConcurrentWait)
	for {
		var answer *kerr.Error
		err := sh.do(func(coord *txn.Coordinator, now time.Time) txn.Effects {
			var eff txn.Effects
			answer, eff = fn(coord, now)
			return eff
		})
		if errors.Is(err, kerr.NotCoordinator) {
			return kerr.NotCoordinator
		}
		if err != nil {
			rc.logError("transaction coordinator write failed", "transactional_id", id, "err", err)
			return kerr.CoordinatorNotAvailable
		}
		done := sh.markingDone(id)
		wait := time.Until(deadline)
		if answer != kerr.ConcurrentTransactions || done == nil || wait <= 0 {
			return answer
		}
		t := time.NewTimer(wait)
		select {
		case <-done:
			t.Stop()
		case <-t.C:
			return answer
		case <-rc.s.ctx.Done():
			t.Stop()
			return answer
		}
	}
}

// initTransactionalProducer answers InitProducerId with a transactional id
// (22_init_producer_id.go calls in here). An Ongoing transaction is
// aborted and answered CONCURRENT_TRANSACTIONS, as one still being
// completed is: the producer retries until the markers are written.
//
// A new producer id comes from the metadata quorum now and then (a block
// at a time), so it is never allocated under the shard's lock: a call that
// needs one gives up without a change (errNeedProducerID), the id is
// allocated with no lock held, and the call runs again with it.
func (rc *requestContext) initTransactionalProducer(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) kmsg.Response {
	var res txn.InitResult
	spare := int64(-1) // a producer id allocated outside the lock
	for attempt := 0; ; attempt++ {
		needed := false
		code := rc.txnCall(*req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
			var eff txn.Effects
			res, eff = coord.InitProducerID(now, txn.InitRequest{
				TransactionalID: *req.TransactionalID, TimeoutMs: req.TransactionTimeoutMillis,
				ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Version: req.Version,
			}, func() (int64, error) {
				if spare >= 0 {
					pid := spare
					spare = -1
					return pid, nil
				}
				needed = true
				return 0, errNeedProducerID
			})
			return res.Err, eff
		})
		if needed && attempt < 3 {
			// InitProducerID changed nothing (it allocates before any
			// change): allocate, holding no lock, and run it again.
			pid, err := rc.s.pids.allocate()
			if err != nil {
				rc.logError("allocating producer id", "err", err)
				resp.ErrorCode = rc.countError(kerr.CoordinatorNotAvailable.Code)
				return resp
			}
			spare = pid
			continue
		}
		if code != nil {
			resp.ErrorCode = rc.countError(code.Code)
			return resp
		}
		resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
		return resp
	}
}

// errNeedProducerID: the call needs a fresh producer id, which is
// allocated outside the shard's lock.
var errNeedProducerID = errors.New("broker: a producer id must be allocated first")
