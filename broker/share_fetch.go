package broker

import (
	"errors"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/share"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
)

// The share-partition side of ShareFetch and ShareAcknowledge: sessions,
// acknowledgements and acquisition, on the partition leader.

// shareTarget is one partition a share request names or its session
// holds.
type shareTarget struct {
	tp    share.TopicPartition
	topic string
	p     *partition
	code  int16 // resolution error (unknown topic id, not leader, denied)
}

// resolveShareTarget finds the partition this node leads for tp.
func (rc *requestContext) resolveShareTarget(tp share.TopicPartition) shareTarget {
	t := shareTarget{tp: tp}
	ts := rc.s.topics.getByID(metadata.TopicID(tp.TopicID))
	if ts == nil {
		t.code = kerr.UnknownTopicID.Code
		return t
	}
	t.topic = ts.name
	if !rc.authorize(acl.OpRead, acl.ResourceTopic, ts.name) {
		t.code = kerr.TopicAuthorizationFailed.Code
		return t
	}
	p, code := rc.s.topics.leaderPartition(ts.name, tp.Partition)
	if code != 0 {
		t.code = code
		return t
	}
	t.p = p
	return t
}

// shareSessionStart runs the session step of a share request: it
// validates epoch, opens, continues or (final) returns the member's
// session, adds the partitions named and drops the forgotten ones, and
// returns the session's partitions. A replaced session's records are
// released.
func (c *shareCoordinator) shareSessionStart(group, member string, epoch int32, add, forget []share.TopicPartition) ([]share.TopicPartition, *share.Session, *kerr.Error) {
	released := &shareSaves{}
	defer func() { // after the unlock below: the release's writes are waited for
		if err := released.await(); err != nil {
			c.s.logger.Warn("share state not persisted", "group", group, "err", err)
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	sess, replaced, code := c.mu.sessions.Begin(group, member, epoch, c.now())
	if code != nil {
		return nil, nil, code
	}
	if replaced != nil { // the member's old session, or an idle one evicted
		released = c.releaseLocked(replaced.Group, replaced.Member)
	}
	if epoch != share.SessionFinalEpoch {
		sess.Advance()
		for _, tp := range add {
			sess.Partitions[tp] = struct{}{}
		}
		for _, tp := range forget {
			delete(sess.Partitions, tp)
		}
	}
	out := make([]share.TopicPartition, 0, len(sess.Partitions))
	for tp := range sess.Partitions {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TopicID != out[j].TopicID {
			return string(out[i].TopicID[:]) < string(out[j].TopicID[:])
		}
		return out[i].Partition < out[j].Partition
	})
	return out, sess, nil
}

// closeConnSessions ends the share sessions a closing connection opened
// that are still current, releasing what their members hold (Kafka ties a
// share session to its connection; clients count on the release).
func (c *shareCoordinator) closeConnSessions(sessions []*share.Session) {
	for _, sess := range sessions {
		c.mu.Lock()
		current := c.mu.sessions.Get(sess.Group, sess.Member) == sess
		c.mu.Unlock()
		if current {
			c.closeSession(sess.Group, sess.Member)
		}
	}
}

// closeSession ends the member's session and releases what it holds.
func (c *shareCoordinator) closeSession(group, member string) {
	c.mu.Lock()
	c.mu.sessions.Close(group, member)
	saves := c.releaseLocked(group, member)
	c.mu.Unlock()
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share state not persisted", "group", group, "err", err)
	}
}

// releaseLocked makes every record member holds in group's
// share-partitions here available again. Needs mu.
func (c *shareCoordinator) releaseLocked(group, member string) *shareSaves {
	saves := &shareSaves{}
	for key, held := range c.mu.partitions {
		if key.group != group {
			continue
		}
		if n := held.ReleaseMember(member); n > 0 {
			c.wakeLocked()
			saves.add(c.queueLocked(key, held))
		}
	}
	return saves
}

// acknowledge applies member's acknowledgements of one partition; the
// write persisting them goes into saves.
func (c *shareCoordinator) acknowledge(group, member string, t shareTarget, acks []share.AckBatch, renew bool, saves *shareSaves) int16 {
	if t.code != 0 {
		return t.code
	}
	if !t.p.IsLeader() {
		return kerr.NotLeaderForPartition.Code
	}
	leaderEpoch := t.p.LeaderEpoch()
	settings := c.settings(group)
	key := sharePartitionKey{group: group, topic: metadata.TopicID(t.tp.TopicID), partition: t.tp.Partition}
	if code := c.ensurePartition(key, settings, leaderEpoch); code != nil {
		return code.Code
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	sp, code := c.partitionLocked(key, settings, leaderEpoch, now, saves)
	if code != nil {
		return code.Code
	}
	released, code := sp.Acknowledge(member, acks, renew, now)
	if code != nil {
		return code.Code
	}
	if released > 0 {
		c.wakeLocked()
	}
	saves.add(c.queueLocked(key, c.mu.partitions[key]))
	return 0
}

// shareRead is what one partition's acquisition produced.
type shareRead struct {
	records  []byte
	acquired []share.AcquiredRange
	code     int16
}

// acquire reads t's partition from the share-partition's fetch offset
// and acquires for member up to maxRecords records of at most maxBytes
// (strict: ShareAcquireMode 1, KIP-1206, never more than maxRecords).
// notify is signalled when a background remote read started here ends.
func (c *shareCoordinator) acquire(group, member string, t shareTarget, settings shareGroupSettings, maxRecords, maxBytes int, strict bool, remote *remoteFetch) shareRead {
	now := c.now()
	key := sharePartitionKey{group: group, topic: metadata.TopicID(t.tp.TopicID), partition: t.tp.Partition}
	p := t.p
	hw := p.HighWatermark()
	upTo := hw
	if settings.readCommitted {
		upTo = p.LastStableOffset()
	}
	if !p.IsLeader() {
		return shareRead{code: kerr.NotLeaderForPartition.Code}
	}
	leaderEpoch := p.LeaderEpoch()
	if code := c.ensurePartition(key, settings, leaderEpoch); code != nil {
		return shareRead{code: code.Code}
	}
	saves := &shareSaves{}
	c.mu.Lock()
	sp, code := c.partitionLocked(key, settings, leaderEpoch, now, saves)
	if code != nil {
		c.mu.Unlock()
		_ = saves.await()
		return shareRead{code: code.Code}
	}
	if !sp.Initialized() {
		start := hw
		if settings.resetEarliest {
			start = p.logStartOffset()
		}
		sp.Initialize(start)
		saves.add(c.queueLocked(key, c.mu.partitions[key]))
	} else if logStart := p.logStartOffset(); sp.Start() < logStart {
		sp.Reset(logStart) // retention removed records not yet delivered
		saves.add(c.queueLocked(key, c.mu.partitions[key]))
	}
	offset, room := sp.FetchOffset()
	c.mu.Unlock()
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share state not persisted", "group", group, "topic", t.topic, "partition", t.tp.Partition, "err", err)
	}
	if !room || offset >= upTo {
		return shareRead{}
	}

	data, aborted, code16 := c.readShare(p, offset, upTo, maxBytes, settings.readCommitted, remote)
	if code16 != 0 || len(data) == 0 {
		return shareRead{code: code16}
	}
	batches, ends := shareBatches(data, aborted)
	if len(batches) == 0 {
		return shareRead{}
	}
	c.mu.Lock()
	sp, code = c.partitionLocked(key, settings, leaderEpoch, c.now(), saves)
	if code != nil {
		c.mu.Unlock()
		_ = saves.await()
		return shareRead{code: code.Code}
	}
	ranges, used := sp.Acquire(member, offset, batches, maxRecords, strict, c.now())
	c.mu.Unlock()
	// Locks that ended during the read were released with a write queued.
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share state not persisted", "group", group, "topic", t.topic, "partition", t.tp.Partition, "err", err)
	}
	if used == 0 {
		return shareRead{}
	}
	return shareRead{records: data[:ends[used-1]], acquired: ranges}
}

// readShare reads the log of p from offset (below upTo), from the remote
// log when offset is below the local one; aborted lists the aborted
// transactions of the range under read_committed.
func (c *shareCoordinator) readShare(p *partition, offset, upTo int64, maxBytes int, readCommitted bool, remote *remoteFetch) (data []byte, aborted []storage.AbortedTxn, code int16) {
	chunk, err := p.Log().Read(offset, maxBytes, upTo, true)
	if errors.Is(err, storage.ErrOffsetOutOfRange) && offset < p.Log().LogStartOffset() {
		chunks, ab, ready, rerr := p.remote.fetchRemote(offset, maxBytes, true, readCommitted, remote.notify, remote.started)
		switch {
		case errors.Is(rerr, errNotRemote):
			chunk, err = p.Log().Read(p.Log().LogStartOffset(), maxBytes, upTo, true)
		case rerr != nil:
			c.s.logger.Warn("share fetch: remote read failed", "topic", p.topic.name, "partition", p.index, "offset", offset, "err", rerr)
			return nil, nil, kerr.KafkaStorageError.Code
		case !ready:
			return nil, nil, 0 // the long poll wakes when the read ends
		default:
			var rerr error
			for _, ch := range chunks {
				b, err := ch.ReadAll()
				ch.File.Close() // remote chunks are the cache's open files
				if err != nil {
					rerr = err
				}
				data = append(data, b...)
			}
			if rerr != nil {
				return nil, nil, kerr.KafkaStorageError.Code
			}
			return data, ab, 0
		}
	}
	switch {
	case errors.Is(err, storage.ErrClosed):
		return nil, nil, kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return nil, nil, 0
	case err != nil:
		c.s.logger.Warn("share fetch: read failed", "topic", p.topic.name, "partition", p.index, "offset", offset, "err", err)
		return nil, nil, kerr.KafkaStorageError.Code
	}
	data, err = chunk.ReadAll()
	if err != nil {
		return nil, nil, kerr.KafkaStorageError.Code
	}
	if readCommitted && len(data) > 0 {
		if aborted, err = p.Log().AbortedTxns(offset, upTo); err != nil {
			return nil, nil, kerr.KafkaStorageError.Code
		}
	}
	return data, aborted, 0
}

// shareBatches lists the complete batches of data for acquisition (a
// control batch, or under read_committed a batch of an aborted
// transaction, is skipped: archived, never delivered) and the end of
// each in data.
func shareBatches(data []byte, aborted []storage.AbortedTxn) (batches []share.Batch, ends []int) {
	for pos := 0; len(data)-pos >= storage.BatchHeaderSize; {
		h, err := storage.ParseBatchHeader(data[pos:])
		if err != nil || h.Size() > len(data)-pos {
			break
		}
		pos += h.Size()
		skip := h.IsControl()
		if !skip && h.IsTransactional() {
			for _, a := range aborted {
				if a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.LastOffset() <= a.LastOffset {
					skip = true
					break
				}
			}
		}
		batches = append(batches, share.Batch{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Skip: skip})
		ends = append(ends, pos)
	}
	return batches, ends
}

// nextLockEnd is the earliest lock end of group's share-partitions here
// (zero: none). It first ends the locks already due, so a parked fetch
// never waits for a deadline in the past (which would spin).
func (c *shareCoordinator) nextLockEnd(group string) time.Time {
	now := c.now()
	saves := &shareSaves{}
	c.mu.Lock()
	var next time.Time
	for key, sp := range c.mu.partitions {
		if key.group != group {
			continue
		}
		ended, released := sp.Expire(now)
		if released > 0 {
			c.wakeLocked()
		}
		if ended > 0 {
			saves.add(c.queueLocked(key, sp))
		}
		if d := sp.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	c.mu.Unlock()
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share state not persisted", "group", group, "err", err)
	}
	return next
}

// changedChan is the channel closed when records are next released.
func (c *shareCoordinator) changedChan() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.changed
}

// stringOrEmpty is *s, "" for nil.
func stringOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shareRequestStart checks what ShareFetch and ShareAcknowledge share: a
// group and member id (INVALID_REQUEST) and READ on the group.
func (rc *requestContext) shareRequestStart(groupID, memberID *string) (group, member string, code int16) {
	group, member = stringOrEmpty(groupID), stringOrEmpty(memberID)
	if group == "" || member == "" {
		return group, member, rc.countError(kerr.InvalidRequest.Code)
	}
	return group, member, rc.groupDenied(acl.OpRead, group)
}
