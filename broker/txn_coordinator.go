package broker

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/broker/txn"
)

// transactionStateTopic holds the transaction coordinator's state (Kafka's
// name), compacted, one txn.Coordinator per partition.
const transactionStateTopic = "__transaction_state"

// txnCoordinator runs broker/txn's state machine on this node: a shard per
// __transaction_state partition, created on first use, its state replayed
// from the log, every change appended (and durable) before the answer, and
// transaction markers written to the data partitions (all local on one
// node) before the transaction is completed.
type txnCoordinator struct {
	s   *Server
	cfg txn.Config

	createMu sync.Mutex
	mu       sync.Mutex
	shards   []*txnShard // nil until the topic exists

	// markerFault, set by tests before the coordinator is used, fails
	// marker writes as a crash or a disk error between the decision and
	// the markers would.
	markerFault atomic.Pointer[func(txn.Markers) error]
}

// txnShard is one __transaction_state partition's coordinator. mu is held
// for a whole operation, writes included: simple, and transactions of one
// shard are serialised as in Kafka's coordinator.
type txnShard struct {
	c     *txnCoordinator
	index int32
	part  *partition

	mu    sync.Mutex
	coord *txn.Coordinator
}

func newTxnCoordinator(s *Server) *txnCoordinator {
	cfg := txn.DefaultConfig()
	cfg.MaxTimeout = time.Duration(s.cfg.TransactionMaxTimeoutMs) * time.Millisecond
	cfg.IDExpiration = time.Duration(s.cfg.TransactionalIDExpirationMs) * time.Millisecond
	return &txnCoordinator{s: s, cfg: cfg}
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
		shards[i] = &txnShard{c: c, index: int32(i), part: p}
	}
	// Published before loading, so a leadership change meanwhile
	// (onLeadership) finds its shard; load skips a shard whose partition
	// is not led here by the time it finishes.
	c.mu.Lock()
	c.shards = shards
	c.mu.Unlock()
	for i, sh := range shards {
		if sh.part == nil || !sh.part.isLeader() {
			continue // another node coordinates these transactional ids
		}
		if err := sh.load(); err != nil {
			c.s.logger.Error("transaction coordinator partition failed to load", "partition", i, "err", err)
		}
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
	// Off the metadata goroutine: an operation in flight holds the shard
	// lock while it waits for replication.
	c.s.goRoleTask(func() {
		sh.mu.Lock()
		if p.isLeader() != leader {
			sh.mu.Unlock()
			return // changed again meanwhile; that change has its own call
		}
		sh.coord = nil
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

// run ticks every loaded shard once a second: transaction timeouts and
// transactional-id expiry.
func (c *txnCoordinator) run() {
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
			sh.mu.Lock()
			loaded := sh.coord != nil
			sh.mu.Unlock()
			if !loaded {
				continue // led by another node
			}
			// Tick, and retry the markers of transactions decided
			// earlier whose marker writes failed (Kafka's marker
			// channel retries the same way until they land).
			err := sh.do(func(coord *txn.Coordinator, now time.Time) txn.Effects {
				pending := coord.PendingMarkers() // before Tick adds new ones
				eff := coord.Tick(now)
				eff.Markers = append(pending, eff.Markers...)
				return eff
			})
			if err != nil {
				c.s.logger.Warn("transaction coordinator tick", "partition", sh.index, "err", err)
			}
		}
	}
}

// do runs fn on the shard's coordinator and carries out its effects:
// records appended, then markers written and their transactions completed
// (whose records are appended too). It returns the first error.
func (sh *txnShard) do(fn func(coord *txn.Coordinator, now time.Time) txn.Effects) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.coord == nil {
		return kerr.NotCoordinator // leadership moved since shardFor
	}
	now := time.Now()
	eff := fn(sh.coord, now)
	return sh.applyLocked(eff, now)
}

func (sh *txnShard) applyLocked(eff txn.Effects, now time.Time) error {
	if err := sh.persistLocked(eff.Records, now); err != nil {
		return err
	}
	for _, m := range eff.Markers {
		if err := sh.c.writeMarkers(m); err != nil {
			sh.c.s.logger.Error("writing transaction markers", "transactional_id", m.TransactionalID, "err", err)
			return err
		}
		code, done := sh.coord.CompleteTxn(now, m)
		if code != nil {
			sh.c.s.logger.Warn("completing a transaction", "transactional_id", m.TransactionalID, "err", code)
		}
		if err := sh.applyLocked(done, now); err != nil {
			return err
		}
	}
	return nil
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
	// WriteTxnMarkers to their leaders, one request per leader.
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
	for leader, tps := range remote {
		if err := c.s.sendMarkers(leader, m, tps); err != nil {
			return err
		}
	}
	return nil
}

// persistLocked appends records as one batch and waits until committed.
func (sh *txnShard) persistLocked(records []txn.Record, now time.Time) error {
	if len(records) == 0 {
		return nil
	}
	keys, values := make([][]byte, len(records)), make([][]byte, len(records))
	for i, r := range records {
		keys[i], values[i] = txn.EncodeRecord(r)
	}
	raw := encodeKVBatch(keys, values, now)
	cfg := sh.c.s.topics.topicConfig(sh.part.topic)
	res := sh.part.appendRecords(raw, cfg, true)
	if res.code != 0 {
		return fmt.Errorf("broker: append to %s-%d: %s %s", transactionStateTopic, sh.index, kerr.ErrorForCode(res.code), res.message)
	}
	// The decision counts once the ISR has it: a new leader replays it.
	if err := sh.part.awaitReplicated(res.lastOffset, res.leaderEpoch, 30*time.Second, sh.c.s.ctx.Done()); err != nil {
		return fmt.Errorf("broker: %s-%d offset %d not committed: %w", transactionStateTopic, sh.index, res.lastOffset, err)
	}
	return nil
}

// load replays the partition into a fresh coordinator, then finishes the
// transactions a previous run had decided but not completed.
func (sh *txnShard) load() error {
	coord := txn.New(&sh.c.cfg, sh.part.leaderEpoch())
	err := replayLog(sh.c.s, sh.part, transactionStateTopic, sh.index, func(batch []byte, h storage.BatchHeader) error {
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
	if err != nil {
		return err
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.part.isLeader() {
		return nil // leadership moved while loading: stay unloaded
	}
	sh.coord = coord
	return sh.applyLocked(txn.Effects{Markers: coord.PendingMarkers()}, time.Now())
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
