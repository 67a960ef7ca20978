package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
)

// groupShard holds the groups of one __consumer_offsets partition while
// this node leads it (unloaded otherwise), on the coordinator runtime
// (coordinator_runtime.go): its state is the replay of that partition's
// log; every change is applied in memory under the runtime's mu and
// queued, in the same order, as a record batch; the runtime appends the
// queue in order with no lock held and completes each write once it is
// below the high watermark, and replies that depend on a change go out
// only then. On a failed append the shard reloads from its log.
type groupShard struct {
	*coordinatorShard[*groupShardState]
	c *groupCoordinator
}

// groupShardState is a loaded shard's groups: the runtime's state,
// guarded by the shard's mu.
type groupShardState struct {
	groups map[string]*groups.Group
	// deadline is at or before the earliest timer of any group (zero:
	// none); the coordinator's timer loop ticks the shard then.
	deadline time.Time

	// The load's clock reading (for groups the replay creates) and
	// counts, for its log line.
	loadedAt         time.Time
	loadStart        time.Time // wall clock
	records, skipped int
}

func newGroupShard(c *groupCoordinator, index int32, p *partition) *groupShard {
	sh := &groupShard{c: c}
	sh.coordinatorShard = newCoordinatorShard[*groupShardState](c.s.ctx, c.s.logger, &c.tasks, "group coordinator", consumerOffsetsTopic, index, logOf(c.s, p), sh)
	return sh
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
	st := sh.coord
	g := st.groups[id]
	if g == nil && create {
		g = groups.New(id, &sh.c.cfg, now)
		st.groups[id] = g
	}
	eff := fn(g, now)
	poke := false
	if g != nil {
		poke = st.settle(g)
	}
	w := sh.queueRecordsLocked(eff.Records, now, len(eff.Replies) > 0)
	sh.mu.Unlock()
	if poke {
		sh.c.poke()
	}
	err := sh.await(w)
	sh.c.deliver(eff.Replies, err)
	return nil, err
}

// withAllGroups runs fn on every group of the shard (for timers, offset
// expiry and markers), then persists and delivers as withGroup.
func (sh *groupShard) withAllGroups(fn func(g *groups.Group, now time.Time) groups.Effects) {
	w, replies := sh.applyAll(fn)
	sh.c.deliver(replies, sh.await(w))
}

// applyAll runs fn on every group of the shard under the shard lock and
// queues the records of its effects; it returns the write to await before
// delivering the replies.
func (sh *groupShard) applyAll(fn func(g *groups.Group, now time.Time) groups.Effects) (*shardWrite, []groups.Reply) {
	now := sh.c.now()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.stateErrLocked() != nil {
		return nil, nil
	}
	st := sh.coord
	var eff groups.Effects
	var next time.Time
	for _, g := range st.groups {
		eff.Merge(fn(g, now))
		if st.dropIfGone(g) {
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	st.deadline = next
	return sh.queueRecordsLocked(eff.Records, now, len(eff.Replies) > 0), eff.Replies
}

// read runs fn under the shard lock, for queries.
func (sh *groupShard) read(fn func(gs map[string]*groups.Group)) *kerr.Error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if code := sh.stateErrLocked(); code != nil {
		return code
	}
	fn(sh.coord.groups)
	return nil
}

// deadline is the shard's next timer (zero: none, or not serving).
func (sh *groupShard) deadline() time.Time {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.coord == nil {
		return time.Time{}
	}
	return sh.coord.deadline
}

// queueRecordsLocked queues records as one batch, in the order the
// changes were made, and returns the write to await: this one; without
// records, the latest queued if wait is set (a reply must not precede the
// records it depends on), else nil. Needs mu.
func (sh *groupShard) queueRecordsLocked(records []groups.Record, now time.Time, wait bool) *shardWrite {
	if len(records) == 0 {
		if wait {
			return sh.lastLocked()
		}
		return nil
	}
	return sh.queueLocked(encodeGroupBatch(records, now), false)
}

// settle drops a group that is gone and notes its next deadline. It
// reports whether the timer loop must wake earlier than planned.
func (st *groupShardState) settle(g *groups.Group) bool {
	if st.dropIfGone(g) {
		return false
	}
	d := g.NextDeadline()
	if d.IsZero() || (!st.deadline.IsZero() && !d.Before(st.deadline)) {
		return false
	}
	st.deadline = d
	return true
}

// dropIfGone forgets a Dead group, or one that holds nothing.
func (st *groupShardState) dropIfGone(g *groups.Group) bool {
	if g.State() != groups.Dead && !g.IsPristine() {
		return false
	}
	if st.groups[g.ID()] == g {
		delete(st.groups, g.ID())
	}
	return true
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
	st := sh.coord
	g := st.groups[id]
	if g == nil {
		g = groups.New(id, &sh.c.cfg, now)
		st.groups[id] = g
	}
	errs, txnRecords, eff := g.TxnCommit(now, req)
	poke := st.settle(g)
	w := sh.queueRecordsLocked(eff.Records, now, len(eff.Replies) > 0)
	var tw *shardWrite
	if len(txnRecords) > 0 {
		keys, values := encodeGroupRecords(txnRecords)
		tw = sh.queueLocked(storage.EncodeKVBatch(keys, values, req.ProducerID, req.ProducerEpoch, true, now.UnixMilli()), true)
	}
	sh.mu.Unlock()
	if poke {
		sh.c.poke()
	}
	err := sh.await(w)
	if terr := sh.await(tw); err == nil {
		err = terr
	}
	sh.c.deliver(eff.Replies, err)
	return errs, nil, err
}

// encodeGroupBatch builds an uncompressed v2 record batch of the records
// (producer id -1, CreateTime now), as the group coordinator writes them.
func encodeGroupBatch(records []groups.Record, now time.Time) []byte {
	keys, values := encodeGroupRecords(records)
	return storage.EncodeKVBatch(keys, values, -1, -1, false, now.UnixMilli())
}

// encodeGroupRecords is the records' keys and values in Kafka's
// __consumer_offsets layouts.
func encodeGroupRecords(records []groups.Record) (keys, values [][]byte) {
	keys, values = make([][]byte, len(records)), make([][]byte, len(records))
	for i, r := range records {
		keys[i], values[i] = groups.EncodeRecord(r)
	}
	return keys, values
}

// ---- the runtime's state machine hooks ----

// newState is the empty state a load replays __consumer_offsets into.
func (sh *groupShard) newState(int32) *groupShardState {
	return &groupShardState{groups: map[string]*groups.Group{}, loadedAt: sh.c.now(), loadStart: time.Now()}
}

// replay applies one batch of the partition's log: offset commits, group
// metadata, KIP-848 records and tombstones in Kafka's layouts, a
// TxnOffsetCommit's transactional offsets (pending until their marker) and
// the transaction markers that decide them.
func (sh *groupShard) replay(st *groupShardState, batch []byte, h storage.BatchHeader) error {
	if h.IsControl() {
		typ, ok, err := storage.ControlRecordType(batch)
		if err != nil {
			return err
		}
		if ok && (typ == storage.ControlTypeCommit || typ == storage.ControlTypeAbort) {
			// A transaction marker decides that producer's pending
			// offsets in every group of the partition.
			for _, g := range st.groups {
				g.ReplayTxnMarker(h.ProducerID, typ == storage.ControlTypeCommit)
			}
		}
		return nil
	}
	recs, err := storage.DecodeRecords(batch)
	if err != nil {
		return err
	}
	for _, r := range recs {
		rec, known, err := groups.DecodeRecord(r.Key, r.Value)
		switch {
		case err != nil:
			st.skipped++
			sh.c.s.logger.Warn("skipping undecodable __consumer_offsets record", "partition", sh.index, "err", err)
			continue
		case !known:
			st.skipped++
			continue
		}
		st.records++
		g := st.groups[rec.Group]
		if g == nil {
			g = groups.New(rec.Group, &sh.c.cfg, st.loadedAt)
			st.groups[rec.Group] = g
		}
		if h.IsTransactional() && rec.IsOffset {
			// A TxnOffsetCommit: pending until its transaction's marker.
			g.ReplayTxnOffset(h.ProducerID, rec.TopicPartition, rec.Offset)
			continue
		}
		g.Replay(st.loadedAt, rec)
	}
	return nil
}

// startedLocked finishes a loaded state (groups the replay left holding
// nothing go; the timer deadline) as it starts serving.
func (sh *groupShard) startedLocked(st *groupShardState) func() {
	var next time.Time
	for id, g := range st.groups {
		if g.IsPristine() {
			delete(st.groups, id)
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	st.deadline = next
	loaded, records, skipped, took := len(st.groups), st.records, st.skipped, time.Since(st.loadStart)
	return func() {
		sh.c.poke()
		if records > 0 {
			sh.c.s.logger.Info("group coordinator partition loaded", "partition", sh.index, "records", records, "skipped", skipped, "groups", loaded, "took", took.Round(time.Millisecond))
		}
	}
}

// stoppedLocked gives the groups up: waiting requests get
// NOT_COORDINATOR (they live on in the log).
func (sh *groupShard) stoppedLocked(st *groupShardState) func() {
	var eff groups.Effects
	for _, g := range st.groups {
		eff.Merge(g.Unload())
	}
	return func() { sh.c.deliver(eff.Replies, nil) }
}
