package broker

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/broker/txn"
)

// transactionStateTopic holds the transaction coordinator's state (Kafka's
// name), compacted, one txn.Coordinator per partition.
const transactionStateTopic = "__transaction_state"

// txnCoordinator runs broker/txn's state machine on this node: a shard per
// __transaction_state partition this node leads, created on first use and
// replayed from the log. Each shard follows group_shard.go's discipline:
//
//   - a call is applied to the state machine under the shard's mu (CPU
//     only) and its records queued, in the order the state changed;
//   - the queue is appended in that order under writeMu (appends only: no
//     quorum wait under any lock);
//   - the answer waits, holding no lock, until the call's records (or, for
//     a call without records, everything queued before it) are below the
//     high watermark;
//   - markers of a decided transaction (PrepareCommit/PrepareAbort durable)
//     are written by a marker task (finishTxn) that the coordinator owns,
//     to the local partitions and through WriteTxnMarkers to the other
//     leaders, retried with backoff; it then applies CompleteTxn under mu
//     and persists its record the same way. EndTxn is answered once the
//     Prepare record is durable, as in Kafka; the producer's next
//     InitProducerId, AddPartitionsToTxn or AddOffsetsToTxn gets
//     CONCURRENT_TRANSACTIONS (retriable) until the markers are written.
//
// Lock order: txnCoordinator.mu and txnShard.mu are leaves (never held
// while taking another lock, except txnCoordinator.tasksMu, a leaf);
// writeMu is taken before mu, which flush takes briefly to drain the queue.
type txnCoordinator struct {
	s   *Server
	cfg txn.Config

	createMu sync.Mutex
	mu       sync.Mutex
	shards   []*txnShard // nil until the topic exists

	// tasks tracks the marker tasks and reloads; run waits for them when
	// the server stops (it is itself a task Close waits for). tasksClosed
	// refuses new ones from then on.
	tasksMu     sync.Mutex
	tasksClosed bool
	tasks       sync.WaitGroup

	// markerFault, set by tests before the coordinator is used, fails
	// marker writes as a crash or a disk error between the decision and
	// the markers would.
	markerFault atomic.Pointer[func(txn.Markers) error]
	// verifiedHook, set by tests, runs in txnVerifier between the
	// coordinator's check and the append (the window a marker may hit).
	verifiedHook atomic.Pointer[func()]
}

// Marker retries back off from markerRetryMin, doubling to markerRetryMax.
const (
	markerRetryMin = 100 * time.Millisecond
	markerRetryMax = 5 * time.Second
)

// txnShard is one __transaction_state partition's coordinator.
type txnShard struct {
	c     *txnCoordinator
	index int32
	// firstLoad is closed once ensureTopic has loaded the shard (or
	// found it led elsewhere); requests wait for it rather than get
	// NOT_COORDINATOR while the node's shards load at start.
	firstLoad chan struct{}

	// writeMu orders appends: whoever holds it drains the queue.
	writeMu sync.Mutex

	// mu guards the fields below; it is held only to apply calls to
	// coord and to queue their records (65_describe_transactions.go and
	// 66_list_transactions.go read coord under it too).
	mu    sync.Mutex
	coord *txn.Coordinator // nil: not loaded (another node leads, or loading)
	part  *partition
	queue []*txnWrite
	// last is the latest write queued: a call without records of its own
	// waits for it, so no answer precedes the records it depends on.
	last *txnWrite
	// marking holds the transactional ids whose marker task runs, each
	// with a channel closed when the task ends (txnCall waits on it).
	marking map[string]chan struct{}
}

// txnWrite is one call's records, encoded as a batch, waiting to be
// appended; appended is closed once it is in the log (or failed).
type txnWrite struct {
	batch    []byte
	part     *partition
	appended chan struct{}
	offset   int64
	epoch    int32
	err      error
}

func newTxnCoordinator(s *Server) *txnCoordinator {
	cfg := txn.DefaultConfig()
	cfg.MaxTimeout = time.Duration(s.cfg.TransactionMaxTimeoutMs) * time.Millisecond
	cfg.IDExpiration = time.Duration(s.cfg.TransactionalIDExpirationMs) * time.Millisecond
	return &txnCoordinator{s: s, cfg: cfg}
}

// goTask runs fn as a task of the coordinator; false (fn not run) once
// the server stops.
func (c *txnCoordinator) goTask(fn func()) bool {
	c.tasksMu.Lock()
	defer c.tasksMu.Unlock()
	if c.tasksClosed || c.s.ctx.Err() != nil {
		return false
	}
	c.tasks.Add(1)
	go func() {
		defer c.tasks.Done()
		fn()
	}()
	return true
}

// closeTasks refuses new tasks and waits for the running ones (which stop
// on the server's context).
func (c *txnCoordinator) closeTasks() {
	c.tasksMu.Lock()
	c.tasksClosed = true
	c.tasksMu.Unlock()
	c.tasks.Wait()
}

// ensureTopic creates __transaction_state on first use and loads its shards.
func (c *txnCoordinator) ensureTopic() []*txnShard {
	c.mu.Lock()
	shards := c.shards
	c.mu.Unlock()
	if shards != nil {
		return shards
	}
	c.createMu.Lock()
	defer c.createMu.Unlock()
	c.mu.Lock()
	shards = c.shards
	c.mu.Unlock()
	if shards != nil {
		return shards
	}
	t := c.s.topics.get(transactionStateTopic)
	if t == nil {
		configs := map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"}
		var terr *topicError
		t, terr = c.s.topics.create(transactionStateTopic, c.s.cfg.TransactionStateLogNumPartitions, c.s.internalReplicationFactor(c.s.cfg.TransactionStateLogReplicationFactor), configs, false)
		if terr != nil && terr.code == kerr.TopicAlreadyExists.Code {
			t, terr = c.s.topics.get(transactionStateTopic), nil
		}
		if terr != nil || t == nil {
			c.s.logger.Error("cannot create "+transactionStateTopic, "err", terr)
			return nil
		}
	}
	parts, _, _ := c.s.topics.snapshot(t)
	shards = make([]*txnShard, len(parts))
	for i, p := range parts {
		shards[i] = &txnShard{c: c, index: int32(i), part: p, firstLoad: make(chan struct{})}
	}
	// Published before loading, so a leadership change meanwhile
	// (onLeadership) finds its shard; load skips a shard whose partition
	// is not led here by the time it finishes.
	c.mu.Lock()
	c.shards = shards
	c.mu.Unlock()
	for i, sh := range shards {
		if p := sh.partition(); p != nil && p.IsLeader() {
			if err := sh.load(); err != nil {
				c.s.logger.Error("transaction coordinator partition failed to load", "partition", i, "err", err)
			}
		} // else another node coordinates these transactional ids
		close(sh.firstLoad)
	}
	return shards
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
	c.mu.Lock()
	shards := c.shards
	c.mu.Unlock()
	if int(p.index) >= len(shards) {
		return
	}
	sh := shards[p.index]
	// Off the metadata goroutine: the load replays the partition.
	c.s.goRoleTask(func() {
		sh.mu.Lock()
		if p.IsLeader() != leader {
			sh.mu.Unlock()
			return // changed again meanwhile; that change has its own call
		}
		sh.unloadLocked(errors.New("broker: transaction coordinator moved"))
		if leader {
			sh.part = p
		}
		sh.mu.Unlock()
		if leader {
			if err := sh.load(); err != nil {
				c.s.logger.Error("transaction coordinator partition failed to load", "partition", p.index, "err", err)
			}
		}
	})
}

// run ticks every loaded shard once a second: transaction timeouts,
// transactional-id expiry and markers of decided transactions without a
// marker task. When the server stops it waits for the marker tasks.
func (c *txnCoordinator) run() {
	defer c.closeTasks()
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
		c.mu.Lock()
		shards := c.shards
		c.mu.Unlock()
		for _, sh := range shards {
			// Tick, and start markers for transactions decided earlier
			// that have no marker task (their Prepare record was not
			// confirmed durable when written, or a load's task stopped).
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
	w := sh.enqueueLocked(eff.Records, now)
	sh.mu.Unlock()
	if err := sh.persist(w); err != nil {
		return err
	}
	sh.startMarkers(coord, eff.Markers)
	return nil
}

// partition is the shard's current __transaction_state partition.
func (sh *txnShard) partition() *partition {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.part
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
	w := sh.enqueueLocked(eff.Records, now)
	sh.mu.Unlock()
	if err := sh.persist(w); err != nil {
		return err
	}
	// The decisions are durable: their markers may go out. (If the write
	// failed, the shard reloads and the load starts them.)
	sh.startMarkers(coord, eff.Markers)
	return nil
}

// enqueueLocked queues records as one batch, in the order the state
// changed, and returns the write to wait for: this one, or the latest
// queued if there are no records (nil if nothing was ever queued).
func (sh *txnShard) enqueueLocked(records []txn.Record, now time.Time) *txnWrite {
	if len(records) == 0 {
		return sh.last
	}
	keys, values := make([][]byte, len(records)), make([][]byte, len(records))
	for i, r := range records {
		keys[i], values[i] = txn.EncodeRecord(r)
	}
	w := &txnWrite{batch: encodeKVBatch(keys, values, now), part: sh.part, appended: make(chan struct{})}
	sh.queue = append(sh.queue, w)
	sh.last = w
	return w
}

// persist appends the queue through w and waits, holding no lock, until w
// is below the high watermark. A decision counts once the ISR has it: a
// new leader replays it.
func (sh *txnShard) persist(w *txnWrite) error {
	if w == nil {
		return nil
	}
	select {
	case <-w.appended: // appended already (or failed by an unload)
	default:
		sh.flush()
		<-w.appended
	}
	if w.err != nil {
		return w.err
	}
	if err := awaitCommitted(sh.c.s.ctx, w.part, w.offset, w.epoch); err != nil {
		return fmt.Errorf("broker: %s-%d offset %d not committed: %w", transactionStateTopic, sh.index, w.offset, err)
	}
	return nil
}

// flush appends the queued writes in order under writeMu. A failed append
// leaves memory ahead of the log: the shard is unloaded (the writes still
// queued fail too) and loaded again from its log.
func (sh *txnShard) flush() {
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	for {
		sh.mu.Lock()
		queue := sh.queue
		sh.queue = nil
		sh.mu.Unlock()
		if len(queue) == 0 {
			return
		}
		for i, w := range queue {
			cfg := sh.c.s.topics.topicConfig(w.part.topic)
			res := w.part.appendRecords(w.batch, cfg)
			if res.Code == 0 {
				w.offset, w.epoch = res.LastOffset, res.LeaderEpoch
				close(w.appended)
				continue
			}
			err := fmt.Errorf("broker: append to %s-%d: %s %s", transactionStateTopic, sh.index, kerr.ErrorForCode(res.Code), res.Message)
			sh.c.s.logger.Error("transaction coordinator write failed", "partition", sh.index, "err", err)
			for _, rest := range queue[i:] {
				rest.err = err
				close(rest.appended)
			}
			sh.mu.Lock()
			sh.unloadLocked(err)
			sh.mu.Unlock()
			sh.c.goTask(func() {
				if err := sh.load(); err != nil {
					sh.c.s.logger.Error("transaction coordinator partition failed to reload", "partition", sh.index, "err", err)
				}
			})
			return
		}
	}
}

// unloadLocked forgets the coordinator (its state lives on in the log):
// requests get NOT_COORDINATOR, marker tasks of this coordinator stop,
// writes still queued fail with err.
func (sh *txnShard) unloadLocked(err error) {
	sh.coord = nil
	for _, w := range sh.queue {
		w.err = err
		close(w.appended)
	}
	for _, done := range sh.marking {
		close(done)
	}
	sh.queue, sh.last, sh.marking = nil, nil, nil
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
		if sh.marking == nil {
			sh.marking = map[string]chan struct{}{}
		}
		sh.marking[m.TransactionalID] = make(chan struct{})
		sh.mu.Unlock()
		if !sh.c.goTask(func() { sh.finishTxn(coord, m) }) {
			return // stopping: the next load resends them
		}
	}
}

// finishTxn is a marker task: it writes one decided transaction's markers,
// retrying with backoff until they are all written (or coord is no longer
// the shard's, or the transaction no longer waits for them), then applies
// CompleteTxn and persists its record.
func (sh *txnShard) finishTxn(coord *txn.Coordinator, m txn.Markers) {
	backoff := markerRetryMin
	for {
		err := sh.c.writeMarkers(m)
		if err == nil {
			break
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
		return // reloaded meanwhile: the new coordinator resends the markers
	}
	sh.markedLocked(m.TransactionalID)
	now := time.Now()
	code, eff := coord.CompleteTxn(now, m)
	w := sh.enqueueLocked(eff.Records, now)
	sh.mu.Unlock()
	if code != nil {
		sh.c.s.logger.Warn("completing a transaction", "transactional_id", m.TransactionalID, "err", code)
	}
	if len(eff.Records) == 0 {
		return
	}
	if err := sh.persist(w); err != nil {
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
// transaction's offsets.
func (c *txnCoordinator) writeMarkers(m txn.Markers) error {
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
		if code := c.s.writeMarkerReplicated(tp.Topic, tp.Partition, m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch); code != 0 {
			return fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, kerr.ErrorForCode(code))
		}
	}
	if len(remote) == 1 {
		for leader, tps := range remote {
			return c.s.sendMarkers(leader, m, tps)
		}
	}
	errs := make(chan error, len(remote))
	for leader, tps := range remote {
		go func() { errs <- c.s.sendMarkers(leader, m, tps) }() // bounded by sendMarkers' timeout
	}
	var first error
	for range remote {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// load replays the partition into a fresh coordinator, then starts the
// markers of the transactions a previous coordinator had decided but not
// completed. Appends are held off (writeMu) while it replays.
func (sh *txnShard) load() error {
	sh.writeMu.Lock()
	part := sh.partition()
	coord := txn.New(&sh.c.cfg, part.LeaderEpoch())
	err := replayLog(sh.c.s, part, transactionStateTopic, sh.index, func(batch []byte, h storage.BatchHeader) error {
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
	})
	sh.writeMu.Unlock()
	if err != nil {
		return err
	}
	sh.mu.Lock()
	if sh.part != part || !part.IsLeader() {
		sh.mu.Unlock()
		return nil // leadership moved while loading: stay unloaded
	}
	sh.unloadLocked(errors.New("broker: transaction coordinator reloaded"))
	sh.coord = coord
	pending := coord.PendingMarkers()
	sh.mu.Unlock()
	sh.startMarkers(coord, pending)
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
func (rc *requestContext) initTransactionalProducer(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) kmsg.Response {
	var res txn.InitResult
	code := rc.txnCall(*req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
		var eff txn.Effects
		res, eff = coord.InitProducerID(now, txn.InitRequest{
			TransactionalID: *req.TransactionalID, TimeoutMs: req.TransactionTimeoutMillis,
			ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Version: req.Version,
		}, rc.s.pids.allocate)
		return res.Err, eff
	})
	if code != nil {
		resp.ErrorCode = rc.countError(code.Code)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
	return resp
}

// completeTxnOffsets settles a transaction's pending offset commits in
// the groups of a __consumer_offsets partition once its marker is written.
func (c *groupCoordinator) completeTxnOffsets(partition int32, producerID int64, commit bool) {
	shards := c.shards()
	if int(partition) >= len(shards) {
		return
	}
	shards[partition].withAllGroups(func(g *groups.Group, now time.Time) groups.Effects {
		return g.CompleteTxnOffsets(now, producerID, commit)
	})
}
