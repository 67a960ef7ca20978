package broker

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
)

// groupShard holds the groups of one __consumer_offsets partition while
// this node leads it (unloaded otherwise). Its state is the replay of that
// partition's log: every change is applied in memory under mu and queued,
// in the same order, as a record batch; the queue is appended in order
// under writeMu (never under mu), and replies that depend on a change go
// out only once it is durable. On a failed append the shard reloads from
// its log.
type groupShard struct {
	c     *groupCoordinator
	index int32
	part  *partition

	// writeMu orders appends: whoever holds it drains the queue.
	writeMu sync.Mutex

	mu struct {
		sync.Mutex
		state  shardState
		groups map[string]*groups.Group
		queue  []*groupWrite
		// deadline is at or before the earliest timer of any group
		// (zero: none); the coordinator's timer loop ticks the shard then.
		deadline time.Time
	}
}

type shardState int8

const (
	shardLoading  shardState = iota // replaying the log: COORDINATOR_LOAD_IN_PROGRESS
	shardActive                     // serving
	shardUnloaded                   // no longer coordinator: NOT_COORDINATOR
)

// groupWrite is one operation's records, encoded as a batch, waiting to be
// appended.
type groupWrite struct {
	batch []byte
	txn   bool // a TxnOffsetCommit's transactional batch (appendTxn)
	done  chan struct{}
	err   error
}

func newGroupShard(c *groupCoordinator, index int32, part *partition) *groupShard {
	sh := &groupShard{c: c, index: index, part: part}
	sh.mu.state = shardLoading
	sh.mu.groups = map[string]*groups.Group{}
	return sh
}

// stateErrLocked is the error for requests while the shard is not serving.
func (sh *groupShard) stateErrLocked() *kerr.Error {
	switch sh.mu.state {
	case shardLoading:
		return kerr.CoordinatorLoadInProgress
	case shardUnloaded:
		return kerr.NotCoordinator
	}
	return nil
}

// withGroup runs fn on a group under the shard lock — creating it first if
// create is set, else passing nil for a missing group — then persists the
// records of fn's effects and delivers their replies. It returns the
// shard's error (loading, not coordinator) or the append's.
func (sh *groupShard) withGroup(id string, create bool, fn func(g *groups.Group, now time.Time) groups.Effects) (*kerr.Error, error) {
	now := sh.c.now()
	sh.mu.Lock()
	if code := sh.stateErrLocked(); code != nil {
		sh.mu.Unlock()
		return code, nil
	}
	g := sh.mu.groups[id]
	if g == nil && create {
		g = groups.New(id, &sh.c.cfg, now)
		sh.mu.groups[id] = g
	}
	eff := fn(g, now)
	poke := false
	if g != nil {
		poke = sh.settleLocked(g)
	}
	w := sh.enqueueLocked(eff.Records, now)
	sh.mu.Unlock()
	if poke {
		sh.c.poke()
	}
	err := sh.persist(w, len(eff.Replies) > 0)
	sh.c.deliver(eff.Replies, err)
	return nil, err
}

// withAllGroups runs fn on every group of the shard (for timers, offset
// expiry and topic deletion), then persists and delivers as withGroup.
func (sh *groupShard) withAllGroups(fn func(g *groups.Group, now time.Time) groups.Effects) {
	now := sh.c.now()
	sh.mu.Lock()
	if sh.mu.state != shardActive {
		sh.mu.Unlock()
		return
	}
	var eff groups.Effects
	var next time.Time
	for _, g := range sh.mu.groups {
		eff.Merge(fn(g, now))
		if sh.dropIfGoneLocked(g) {
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	sh.mu.deadline = next
	w := sh.enqueueLocked(eff.Records, now)
	sh.mu.Unlock()
	err := sh.persist(w, len(eff.Replies) > 0)
	sh.c.deliver(eff.Replies, err)
}

// read runs fn under the shard lock, for queries.
func (sh *groupShard) read(fn func(gs map[string]*groups.Group)) *kerr.Error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if code := sh.stateErrLocked(); code != nil {
		return code
	}
	fn(sh.mu.groups)
	return nil
}

// settleLocked drops a group that is gone and notes its next deadline. It
// reports whether the timer loop must wake earlier than planned.
func (sh *groupShard) settleLocked(g *groups.Group) bool {
	if sh.dropIfGoneLocked(g) {
		return false
	}
	d := g.NextDeadline()
	if d.IsZero() || (!sh.mu.deadline.IsZero() && !d.Before(sh.mu.deadline)) {
		return false
	}
	sh.mu.deadline = d
	return true
}

// dropIfGoneLocked forgets a Dead group, or one that holds nothing.
func (sh *groupShard) dropIfGoneLocked(g *groups.Group) bool {
	if g.State() != groups.Dead && !g.IsPristine() {
		return false
	}
	if sh.mu.groups[g.ID()] == g {
		delete(sh.mu.groups, g.ID())
	}
	return true
}

// enqueueLocked queues records as one batch, in the order the changes were
// made; nil if there are none.
func (sh *groupShard) enqueueLocked(records []groups.Record, now time.Time) *groupWrite {
	if len(records) == 0 {
		return nil
	}
	w := &groupWrite{batch: encodeGroupBatch(records, now), done: make(chan struct{})}
	sh.mu.queue = append(sh.mu.queue, w)
	return w
}

// persist makes w durable, along with everything queued before it. With
// wait and no w of its own, it still waits for the earlier writes, so a
// reply never precedes the records it depends on.
func (sh *groupShard) persist(w *groupWrite, wait bool) error {
	if w == nil && !wait {
		return nil
	}
	sh.flush()
	if w == nil {
		return nil
	}
	<-w.done
	return w.err
}

// flush appends the queued writes in order. A failed append reloads the
// shard from its log (memory is ahead of it).
func (sh *groupShard) flush() { sh.flushQueue(true) }

func (sh *groupShard) flushQueue(reloadOnFailure bool) {
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	for {
		sh.mu.Lock()
		queue := sh.mu.queue
		sh.mu.queue = nil
		sh.mu.Unlock()
		if len(queue) == 0 {
			return
		}
		failed := false
		for _, w := range queue {
			if w.txn {
				w.err = sh.appendTxn(w.batch)
			} else {
				w.err = sh.append(w.batch)
			}
			failed = failed || w.err != nil
			close(w.done)
		}
		if failed && reloadOnFailure {
			sh.c.reload(sh)
		}
	}
}

// append writes one batch through the partition's append path and waits
// until the high watermark covers it (at once on a single node).
func (sh *groupShard) append(batch []byte) error {
	p := sh.part
	cfg := sh.c.s.topics.topicConfig(p.topic)
	res := p.appendRecords(batch, cfg)
	if res.Code != 0 {
		err := fmt.Errorf("broker: append to %s-%d: %s", consumerOffsetsTopic, sh.index, kerr.ErrorForCode(res.Code))
		if res.Message != "" {
			err = fmt.Errorf("%w: %s", err, res.Message)
		}
		sh.c.s.logger.Error("group coordinator write failed", "partition", sh.index, "err", err)
		return err
	}
	return sh.awaitHighWatermark(res.LastOffset, res.LeaderEpoch)
}

// appendTxn appends a TxnOffsetCommit's transactional batch. It opens the
// producer's transaction on the partition like a produce would, but skips
// the idempotent-sequence check: the broker writes these batches, with no
// sequence, in the group's order.
func (sh *groupShard) appendTxn(batch []byte) error {
	res, err := sh.part.AppendUnchecked(batch)
	if err != nil {
		return err
	}
	return sh.awaitHighWatermark(res.LastOffset, res.LeaderEpoch)
}

// txnCommit handles TxnOffsetCommit for a group (creating an offsets-only
// group if there is none): the offsets become pending for the producer,
// their records are appended as one transactional batch of its id and
// epoch after the call's other records, and the answer waits for both.
func (sh *groupShard) txnCommit(id string, req groups.TxnCommitRequest) ([]*kerr.Error, *kerr.Error, error) {
	now := sh.c.now()
	sh.mu.Lock()
	if code := sh.stateErrLocked(); code != nil {
		sh.mu.Unlock()
		return nil, code, nil
	}
	g := sh.mu.groups[id]
	if g == nil {
		g = groups.New(id, &sh.c.cfg, now)
		sh.mu.groups[id] = g
	}
	errs, txnRecords, eff := g.TxnCommit(now, req)
	poke := sh.settleLocked(g)
	w := sh.enqueueLocked(eff.Records, now)
	var tw *groupWrite
	if len(txnRecords) > 0 {
		keys, values := make([][]byte, len(txnRecords)), make([][]byte, len(txnRecords))
		for i, r := range txnRecords {
			keys[i], values[i] = groups.EncodeRecord(r)
		}
		tw = &groupWrite{batch: encodeTxnKVBatch(keys, values, req.ProducerID, req.ProducerEpoch, now), txn: true, done: make(chan struct{})}
		sh.mu.queue = append(sh.mu.queue, tw)
	}
	sh.mu.Unlock()
	if poke {
		sh.c.poke()
	}
	err := sh.persist(w, len(eff.Replies) > 0)
	if terr := sh.persist(tw, false); err == nil {
		err = terr
	}
	sh.c.deliver(eff.Replies, err)
	return errs, nil, err
}

// encodeTxnKVBatch is encodeKVBatch as a transactional batch of the
// producer (no sequence).
func encodeTxnKVBatch(keys, values [][]byte, producerID int64, epoch int16, now time.Time) []byte {
	return storage.EncodeKVBatch(keys, values, producerID, epoch, true, now.UnixMilli())
}

// awaitHighWatermark waits until the record at offset is committed: the
// ISR has it (at once on a single node). A shard whose partition lost its
// leadership meanwhile fails the write; the new leader's shard decides.
func (sh *groupShard) awaitHighWatermark(offset int64, epoch int32) error {
	err := awaitCommitted(sh.c.s.ctx, sh.part, offset, epoch)
	if err != nil {
		return fmt.Errorf("broker: group write at %s-%d offset %d not committed: %w", consumerOffsetsTopic, sh.index, offset, err)
	}
	return nil
}

// encodeGroupBatch builds an uncompressed v2 record batch of the records
// (producer id -1, CreateTime now), as the group coordinator writes them.
func encodeGroupBatch(records []groups.Record, now time.Time) []byte {
	keys, values := make([][]byte, len(records)), make([][]byte, len(records))
	for i, r := range records {
		keys[i], values[i] = groups.EncodeRecord(r)
	}
	return encodeKVBatch(keys, values, now)
}

// encodeKVBatch builds an uncompressed, non-transactional v2 record batch
// of key/value records (producer id -1, CreateTime now): what the
// coordinators write to their internal topics.
func encodeKVBatch(keys, values [][]byte, now time.Time) []byte {
	return storage.EncodeKVBatch(keys, values, -1, -1, false, now.UnixMilli())
}

// load replays the partition's log into groups and makes the shard serve.
func (sh *groupShard) load() error {
	start := time.Now()
	now := sh.c.now()
	gs := map[string]*groups.Group{}
	get := func(id string) *groups.Group {
		g := gs[id]
		if g == nil {
			g = groups.New(id, &sh.c.cfg, now)
			gs[id] = g
		}
		return g
	}
	var records, skipped int
	err := sh.replay(func(key, value []byte, producerID int64, transactional bool) {
		rec, known, err := groups.DecodeRecord(key, value)
		switch {
		case err != nil:
			skipped++
			sh.c.s.logger.Warn("skipping undecodable __consumer_offsets record", "partition", sh.index, "err", err)
			return
		case !known:
			skipped++
			return
		}
		records++
		if transactional && rec.IsOffset {
			// A TxnOffsetCommit: pending until its transaction's marker.
			get(rec.Group).ReplayTxnOffset(producerID, rec.TopicPartition, rec.Offset)
			return
		}
		get(rec.Group).Replay(now, rec)
	}, func(producerID int64, commit bool) {
		// A transaction marker decides that producer's pending offsets in
		// every group of the partition.
		for _, g := range gs {
			g.ReplayTxnMarker(producerID, commit)
		}
	})
	if err != nil {
		return err
	}
	var next time.Time
	for id, g := range gs {
		if g.IsPristine() {
			delete(gs, id)
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	sh.mu.Lock()
	if sh.mu.state != shardLoading {
		sh.mu.Unlock()
		return nil // unloaded meanwhile
	}
	loaded := len(gs) // gs is the shard's, under mu, from here on
	sh.mu.groups = gs
	sh.mu.deadline = next
	sh.mu.state = shardActive
	if !sh.part.IsLeader() {
		// Leadership moved while loading (or a failed write's reload
		// raced the move): another node coordinates these groups.
		sh.mu.groups = map[string]*groups.Group{}
		sh.mu.state = shardUnloaded
	}
	sh.mu.Unlock()
	sh.c.poke()
	if records > 0 {
		sh.c.s.logger.Info("group coordinator partition loaded", "partition", sh.index, "records", records, "skipped", skipped, "groups", loaded, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// replay calls fn with the key and value of every record of the log up to
// its end, in order, with its batch's producer id and whether
// the batch is transactional; and marker with each transaction marker.
func (sh *groupShard) replay(fn func(key, value []byte, producerID int64, transactional bool), marker func(producerID int64, commit bool)) error {
	return replayLog(sh.c.s, sh.part, consumerOffsetsTopic, sh.index, func(batch []byte, h storage.BatchHeader) error {
		if h.IsControl() {
			typ, ok, err := storage.ControlRecordType(batch)
			if err != nil {
				return err
			}
			if ok && (typ == storage.ControlTypeCommit || typ == storage.ControlTypeAbort) {
				marker(h.ProducerID, typ == storage.ControlTypeCommit)
			}
			return nil
		}
		recs, err := storage.DecodeRecords(batch)
		if err != nil {
			return err
		}
		for _, r := range recs {
			fn(r.Key, r.Value, h.ProducerID, h.IsTransactional())
		}
		return nil
	})
}

// replayLog calls fn with every batch of an internal topic's partition up
// to its log end, in order (for the coordinators' loads). A coordinator
// loads when its node becomes the partition's leader, whose whole log is
// the partition's from then on: its high watermark may still trail records
// the previous leader had committed.
func replayLog(s *Server, part *partition, topic string, index int32, fn func(batch []byte, h storage.BatchHeader) error) error {
	l := part.Log()
	offset := l.LogStartOffset()
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		end := l.LogEndOffset()
		if offset >= end {
			return nil
		}
		chunk, err := l.Read(offset, 1<<20, end, true)
		if errors.Is(err, storage.ErrOffsetOutOfRange) && offset < l.LogStartOffset() {
			offset = l.LogStartOffset() // retention moved the start meanwhile
			continue
		}
		if err != nil {
			return fmt.Errorf("broker: reading %s-%d at %d: %w", topic, index, offset, err)
		}
		data, err := chunk.ReadAll()
		if err != nil {
			return err
		}
		progressed := false
		for pos := 0; len(data)-pos >= storage.BatchHeaderSize; {
			h, err := storage.ParseBatchHeader(data[pos:])
			if err != nil {
				return fmt.Errorf("broker: %s-%d at %d: %w", topic, index, offset, err)
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
				return fmt.Errorf("broker: %s-%d batch at %d: %w", topic, index, h.BaseOffset, err)
			}
		}
		if !progressed {
			return fmt.Errorf("broker: %s-%d: no complete batch at offset %d", topic, index, offset)
		}
	}
}

// unload gives the shard up: waiting requests get NOT_COORDINATOR and the
// groups are forgotten (they live on in the log).
func (sh *groupShard) unload(next shardState) {
	sh.mu.Lock()
	var eff groups.Effects
	for _, g := range sh.mu.groups {
		eff.Merge(g.Unload())
	}
	sh.mu.groups = map[string]*groups.Group{}
	sh.mu.deadline = time.Time{}
	sh.mu.state = next
	sh.mu.Unlock()
	sh.c.deliver(eff.Replies, nil)
}
