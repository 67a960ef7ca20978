package broker

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/share"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// The share coordinator: the broker side of broker/share (KIP-932).
//
//   - Membership: a share group is coordinated, like any group, by the
//     leader of its __consumer_offsets partition (FindCoordinator key type
//     0); ShareGroupHeartbeat and ShareGroupDescribe are answered there,
//     and a group id a classic or consumer group already holds is
//     refused. Every member is assigned every partition of its topics.
//   - Share-partitions live with the partition leader: ShareFetch and
//     ShareAcknowledge go to it, and it keeps each group's state of the
//     partition (share.Partition) and the share sessions of the members
//     that fetch from it (share.Sessions).
//   - Locks end lazily: every call first expires the locks due, and a
//     share fetch that parks wakes at the next lock end, on appends to its
//     partitions and when records are released (changed), so no timer
//     goroutine is needed.
//   - Persistence: each share-partition's snapshot (start offset, states
//     and delivery counts of the records in flight) goes to its share
//     coordinator (the leader of its __share_group_state partition,
//     share_state.go) after every change an acknowledgement or a lock's
//     end makes, through the persister (share_persister.go). A
//     share-partition is held in memory for one leader epoch of its data
//     partition: a leadership change drops it (dropPartition), and the
//     next leader reads it back from the share coordinator, which fences
//     the writes of older leaders.
//
// Locks: mu guards groups, partitions and sessions, and is held for CPU
// only; log reads, persistence writes and waits happen without it.
type shareCoordinator struct {
	s   *Server
	now func() time.Time
	mu  struct {
		sync.Mutex
		groups     map[string]*share.Group
		partitions map[sharePartitionKey]*heldSharePartition
		sessions   *share.Sessions
		// changed is closed (and replaced) when records become
		// available again, waking parked share fetches.
		changed chan struct{}
	}
	state     *shareStateStore
	persister *sharePersister
}

// heldSharePartition is a share-partition in memory, for the leader epoch
// of its data partition it was loaded in.
type heldSharePartition struct {
	*share.Partition
	leaderEpoch int32
}

// sharePartitionKey names a share-partition: a group on a topic partition.
type sharePartitionKey struct {
	group     string
	topic     metadata.TopicID
	partition int32
}

func newShareCoordinator(s *Server) *shareCoordinator {
	c := &shareCoordinator{s: s, now: time.Now}
	c.mu.groups = map[string]*share.Group{}
	c.mu.partitions = map[sharePartitionKey]*heldSharePartition{}
	c.mu.sessions = share.NewSessions(0, time.Duration(s.conf().GroupShareSessionTimeoutMs)*time.Millisecond)
	c.mu.changed = make(chan struct{})
	c.state = newShareStateStore(s)
	c.persister = newSharePersister(s, c.state)
	return c
}

// shareGroupSettings are a group's effective share configs.
type shareGroupSettings struct {
	partition     share.PartitionConfig
	resetEarliest bool
	readCommitted bool
}

// settings reads group's configs (GROUP resource) over the broker's.
func (c *shareCoordinator) settings(group string) shareGroupSettings {
	cfg := c.s.conf()
	out := shareGroupSettings{partition: share.PartitionConfig{
		LockDuration:  time.Duration(cfg.GroupShareRecordLockDurationMs) * time.Millisecond,
		DeliveryLimit: int(cfg.GroupShareDeliveryCountLimit),
		MaxInFlight:   int(cfg.GroupSharePartitionMaxRecordLocks),
	}}
	own := c.s.clusterState().ResourceConfig(cluster.ConfigGroup, group)
	if v, err := strconv.ParseInt(own["share.record.lock.duration.ms"], 10, 64); err == nil && v > 0 {
		out.partition.LockDuration = time.Duration(v) * time.Millisecond
	}
	if v, err := strconv.Atoi(own["share.delivery.count.limit"]); err == nil && v > 0 {
		out.partition.DeliveryLimit = v
	}
	out.resetEarliest = own["share.auto.offset.reset"] == "earliest"
	out.readCommitted = own["share.isolation.level"] == "read_committed"
	return out
}

func (c *shareCoordinator) groupConfig() share.GroupConfig {
	cfg := c.s.conf()
	return share.GroupConfig{
		SessionTimeout:    time.Duration(cfg.GroupShareSessionTimeoutMs) * time.Millisecond,
		HeartbeatInterval: time.Duration(cfg.GroupShareHeartbeatIntervalMs) * time.Millisecond,
	}
}

// catalog resolves subscribed topic names for the assignor.
func (c *shareCoordinator) catalog(name string) (share.Topic, bool) {
	t := c.s.topics.get(name)
	if t == nil || isInternalTopic(name) {
		return share.Topic{}, false
	}
	parts, _, _ := c.s.topics.snapshot(t)
	return share.Topic{ID: [16]byte(t.id), Partitions: int32(len(parts))}, true
}

// coordinates checks that this node coordinates group and that no
// classic or consumer group holds its id.
func (c *shareCoordinator) coordinates(group string) *kerr.Error {
	sh, code := c.s.groups.shardFor(group)
	if code != nil {
		return code
	}
	taken := false
	if code := sh.read(func(gs map[string]*groups.Group) { _, taken = gs[group] }); code != nil {
		return code
	}
	if taken {
		return kerr.GroupIDNotFound // as Kafka: the id is a group of another type
	}
	return nil
}

// heartbeat runs a ShareGroupHeartbeat.
func (c *shareCoordinator) heartbeat(group string, req share.HeartbeatRequest) (share.HeartbeatResult, time.Duration) {
	cfg := c.groupConfig()
	if code := c.coordinates(group); code != nil {
		return share.HeartbeatResult{Err: code}, cfg.HeartbeatInterval
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.mu.groups[group]
	if g == nil {
		if req.MemberEpoch != share.JoinEpoch {
			return share.HeartbeatResult{Err: kerr.UnknownMemberID}, cfg.HeartbeatInterval
		}
		g = share.NewGroup(group)
		c.mu.groups[group] = g
	}
	res := g.Heartbeat(req, cfg, c.catalog, now)
	return res, cfg.HeartbeatInterval
}

// shareGroupView is a share group as ShareGroupDescribe and ListGroups
// show it.
type shareGroupView struct {
	id      string
	epoch   int32
	state   string
	members []share.Member
}

// describe returns the group, false if this node has no such share group.
func (c *shareCoordinator) describe(group string) (shareGroupView, bool, *kerr.Error) {
	if code := c.coordinates(group); code != nil {
		return shareGroupView{}, false, code
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.mu.groups[group]
	if g == nil {
		return shareGroupView{}, false, nil
	}
	g.Expire(c.groupConfig(), c.now())
	return shareGroupView{id: group, epoch: g.Epoch, state: g.StateName(), members: g.Members()}, true, nil
}

// list returns the share groups this node coordinates.
func (c *shareCoordinator) list() []listedGroup {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]listedGroup, 0, len(c.mu.groups))
	for id, g := range c.mu.groups {
		g.Expire(c.groupConfig(), now)
		out = append(out, listedGroup{id: id, protocolType: "share", stateName: g.StateName(), groupType: "share"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// deleteGroup deletes an empty share group and the state of its
// share-partitions held here (live and persisted); found is false if
// group is neither a share group here nor has share-partition state.
func (c *shareCoordinator) deleteGroup(group string) (found bool, code *kerr.Error) {
	persisted := c.state.snapshotsOf(group)
	c.mu.Lock()
	g := c.mu.groups[group]
	if g == nil && len(persisted) == 0 {
		c.mu.Unlock()
		return false, nil
	}
	if g != nil {
		g.Expire(c.groupConfig(), c.now())
		if !g.Empty() {
			c.mu.Unlock()
			return true, kerr.NonEmptyGroup
		}
	}
	delete(c.mu.groups, group)
	var gone []sharePartitionKey
	for k := range c.mu.partitions {
		if k.group == group {
			delete(c.mu.partitions, k)
			gone = append(gone, k)
		}
	}
	for k := range persisted {
		if !slices.Contains(gone, k) {
			gone = append(gone, k)
		}
	}
	c.mu.Unlock()
	c.persister.forget(gone)
	return true, nil
}

// wakeLocked wakes the parked share fetches. Needs mu.
func (c *shareCoordinator) wakeLocked() {
	close(c.mu.changed)
	c.mu.changed = make(chan struct{})
}

// ensurePartition makes sure the share-partition of key is in memory for
// leaderEpoch, the current leader epoch of its data partition, reading
// its state from the share coordinator (no lock held) if it is not; the
// read fences the writes of older leaders. NOT_LEADER_OR_FOLLOWER if a
// newer leader read it, COORDINATOR_NOT_AVAILABLE if the share
// coordinator cannot be reached.
func (c *shareCoordinator) ensurePartition(key sharePartitionKey, settings shareGroupSettings, leaderEpoch int32) *kerr.Error {
	c.mu.Lock()
	held := c.mu.partitions[key]
	c.mu.Unlock()
	if held != nil && held.leaderEpoch == leaderEpoch {
		return nil
	}
	snap, ok, err := c.persister.read(key, leaderEpoch)
	if err != nil {
		c.s.logger.Warn("share-partition state not read", "group", key.group, "topic_id", key.topic.String(), "partition", key.partition, "err", err)
		return shareStateCode(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if held := c.mu.partitions[key]; held == nil || held.leaderEpoch < leaderEpoch {
		sp := share.NewPartition(settings.partition)
		if ok {
			sp.Restore(snap)
		}
		c.mu.partitions[key] = &heldSharePartition{Partition: sp, leaderEpoch: leaderEpoch}
	}
	return nil
}

// shareStateCode is the error a share request answers for a failed
// persister call: a fenced leader epoch means another node leads now.
func shareStateCode(err error) *kerr.Error {
	if errors.Is(err, kerr.FencedLeaderEpoch) {
		return kerr.NotLeaderForPartition
	}
	return kerr.CoordinatorNotAvailable
}

// partitionLocked returns the share-partition of key that ensurePartition
// loaded for leaderEpoch, with the locks due expired; saves collects the
// persistence writes that expiry makes. NOT_LEADER_OR_FOLLOWER if it was
// dropped since (leadership moved). Needs mu.
func (c *shareCoordinator) partitionLocked(key sharePartitionKey, settings shareGroupSettings, leaderEpoch int32, now time.Time, saves *shareSaves) (*share.Partition, *kerr.Error) {
	held := c.mu.partitions[key]
	if held == nil || held.leaderEpoch != leaderEpoch {
		return nil, kerr.NotLeaderForPartition
	}
	sp := held.Partition
	sp.SetConfig(settings.partition)
	ended, released := sp.Expire(now)
	if released > 0 {
		c.wakeLocked()
	}
	if ended > 0 {
		saves.add(c.queueLocked(key, held))
	}
	return sp, nil
}

// queueLocked queues held's snapshot for its share coordinator. Needs mu
// (snapshots queue in the order of the changes).
func (c *shareCoordinator) queueLocked(key sharePartitionKey, held *heldSharePartition) func() error {
	return c.persister.queue(key, held.leaderEpoch, held.Snapshot())
}

// dropPartition forgets the share-partitions of a topic partition whose
// leadership changed: a deposed leader must not serve or persist stale
// state, and a new one reads the state from the share coordinator.
// Parked share fetches wake and find they no longer lead it.
func (c *shareCoordinator) dropPartition(topic metadata.TopicID, partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dropped := false
	for key := range c.mu.partitions {
		if key.topic == topic && key.partition == partition {
			delete(c.mu.partitions, key)
			dropped = true
		}
	}
	if dropped {
		c.wakeLocked()
	}
}

// shareSaves are persistence writes queued under mu, awaited after it.
type shareSaves struct{ waits []func() error }

func (s *shareSaves) add(wait func() error) {
	if wait != nil {
		s.waits = append(s.waits, wait)
	}
}

// await waits for every write queued so far (no lock held) and forgets
// them; the first error. A write queued in an idle shard is sent only by
// the one who waits for it, so every queued write must be awaited.
func (s *shareSaves) await() error {
	var first error
	for _, w := range s.waits {
		if err := w(); err != nil && first == nil {
			first = err
		}
	}
	s.waits = nil
	return first
}

// shareOffset is one share-partition as the share-group offset admin
// APIs show it.
type shareOffset struct {
	key   sharePartitionKey
	topic string
	start int64 // -1: not initialized
	lag   int64 // records up to the high watermark not acknowledged or archived; -1 unknown
}

// offsets lists group's share-partitions here (live or persisted), sorted
// by topic and partition. found is false if group is neither a share
// group here nor has share-partition state.
func (c *shareCoordinator) offsets(group string) (out []shareOffset, found bool, code *kerr.Error) {
	if code := c.coordinates(group); code != nil {
		return nil, false, code
	}
	c.state.ready()
	persisted := c.state.snapshotsOf(group)
	remote := c.remoteSummaries(group, persisted)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, found = c.mu.groups[group]
	seen := map[sharePartitionKey]bool{}
	add := func(key sharePartitionKey, start int64, lag func(hw int64) int64) {
		seen[key] = true
		o := shareOffset{key: key, start: start, lag: -1}
		if ts := c.s.topics.getByID(key.topic); ts != nil {
			o.topic = ts.name
			if p := c.s.topics.partition(ts.name, key.partition); p != nil && start >= 0 {
				o.lag = lag(p.HighWatermark())
			}
		}
		out = append(out, o)
	}
	for key, sp := range c.mu.partitions {
		if key.group != group {
			continue
		}
		start := sp.Start()
		if !sp.Initialized() {
			start = -1
		}
		add(key, start, sp.Lag)
	}
	for key, snap := range persisted {
		if seen[key] {
			continue
		}
		sp := share.NewPartition(share.PartitionConfig{})
		sp.Restore(snap)
		add(key, snap.Start, sp.Lag)
	}
	for key, sum := range remote {
		if seen[key] {
			continue
		}
		add(key, sum.start, func(hw int64) int64 {
			if sum.done < 0 {
				return -1
			}
			return max(hw-sum.start-sum.done, 0)
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].key.partition < out[j].key.partition
	})
	return out, found || len(out) > 0, nil
}

// shareSummary is a share-partition's state as its share coordinator
// summarizes it: start offset and the records from it on that are done
// (-1: not told).
type shareSummary struct{ start, done int64 }

// remoteSummaries asks the share coordinators of the partitions of the
// topics group's members subscribe to for the state this node does not
// hold or store (ReadShareGroupStateSummary), with no lock held; the
// partitions without state, and those whose coordinator cannot be
// reached, are left out.
func (c *shareCoordinator) remoteSummaries(group string, stored map[sharePartitionKey]share.Snapshot) map[sharePartitionKey]shareSummary {
	c.mu.Lock()
	var topics []string
	if g := c.mu.groups[group]; g != nil {
		topics = g.Subscribed()
	}
	var keys []sharePartitionKey
	for _, name := range topics {
		ts := c.s.topics.get(name)
		if ts == nil {
			continue
		}
		parts, _, _ := c.s.topics.snapshot(ts)
		for i := range parts {
			key := sharePartitionKey{group: group, topic: ts.id, partition: int32(i)}
			if _, held := c.mu.partitions[key]; !held {
				if _, ok := stored[key]; !ok {
					keys = append(keys, key)
				}
			}
		}
	}
	c.mu.Unlock()
	out := map[sharePartitionKey]shareSummary{}
	for _, key := range keys {
		start, done, ok, err := c.persister.summary(key)
		if err != nil {
			c.s.logger.Warn("share-partition state summary not read", "group", group, "partition", key.partition, "err", err)
			continue
		}
		if ok {
			out[key] = shareSummary{start: start, done: done}
		}
	}
	return out
}

// alterOffsets sets the start offset of group's share-partitions
// (AlterShareGroupOffsets); the group must have no members. Records in
// flight are forgotten. A share-partition led here is reset in memory
// and persisted; one led elsewhere is written at its share coordinator
// (its leader's memory, if it holds it, is not reached: see
// ARCHITECTURE.md).
func (c *shareCoordinator) alterOffsets(group string, starts map[sharePartitionKey]int64) *kerr.Error {
	if code := c.coordinates(group); code != nil {
		return code
	}
	c.state.ready()
	settings := c.settings(group)
	c.mu.Lock()
	if g := c.mu.groups[group]; g != nil {
		g.Expire(c.groupConfig(), c.now())
		if !g.Empty() {
			c.mu.Unlock()
			return kerr.NonEmptyGroup
		}
	}
	c.mu.Unlock()
	saves := &shareSaves{}
	for key, start := range starts {
		leaderEpoch, led := c.leaderEpochOf(key)
		if !led {
			c.mu.Lock()
			delete(c.mu.partitions, key)
			c.mu.Unlock()
			saves.add(func() error { return c.persister.write(key, -1, &share.Snapshot{Start: start}) })
			continue
		}
		code := c.ensurePartition(key, settings, leaderEpoch)
		if code == nil {
			c.mu.Lock()
			var sp *share.Partition
			if sp, code = c.partitionLocked(key, settings, leaderEpoch, c.now(), saves); code == nil {
				sp.Reset(start)
				saves.add(c.queueLocked(key, c.mu.partitions[key]))
			}
			c.mu.Unlock()
		}
		if code != nil {
			_ = saves.await() // what earlier partitions queued; the error is code's
			return code
		}
	}
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share offsets not persisted", "group", group, "err", err)
		return shareStateCode(err)
	}
	return nil
}

// leaderEpochOf is the leader epoch of key's data partition if this node
// leads it.
func (c *shareCoordinator) leaderEpochOf(key sharePartitionKey) (int32, bool) {
	ts := c.s.topics.getByID(key.topic)
	if ts == nil {
		return 0, false
	}
	p, _ := c.s.topics.leaderPartition(ts.name, key.partition)
	if p == nil {
		return 0, false
	}
	return p.LeaderEpoch(), true
}

// deleteOffsets forgets group's share-partitions of topics
// (DeleteShareGroupOffsets); the group must have no members.
func (c *shareCoordinator) deleteOffsets(group string, topics map[metadata.TopicID]bool) *kerr.Error {
	if code := c.coordinates(group); code != nil {
		return code
	}
	c.state.ready()
	persisted := c.state.snapshotsOf(group)
	c.mu.Lock()
	if g := c.mu.groups[group]; g != nil {
		g.Expire(c.groupConfig(), c.now())
		if !g.Empty() {
			c.mu.Unlock()
			return kerr.NonEmptyGroup
		}
	}
	var gone []sharePartitionKey
	for key := range c.mu.partitions {
		if key.group == group && topics[key.topic] {
			delete(c.mu.partitions, key)
			gone = append(gone, key)
		}
	}
	for key := range persisted {
		if topics[key.topic] && !slices.Contains(gone, key) {
			gone = append(gone, key)
		}
	}
	c.mu.Unlock()
	// The topics' other partitions: their state may be stored by other
	// nodes' share coordinators.
	for id := range topics {
		ts := c.s.topics.getByID(id)
		if ts == nil {
			continue
		}
		parts, _, _ := c.s.topics.snapshot(ts)
		for i := range parts {
			if key := (sharePartitionKey{group: group, topic: id, partition: int32(i)}); !slices.Contains(gone, key) {
				gone = append(gone, key)
			}
		}
	}
	c.persister.forget(gone)
	return nil
}
