package broker

import (
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
//     and delivery counts of the records in flight) goes to the compacted
//     __share_group_state topic after every change an acknowledgement or
//     a lock's end makes (share_state.go); a new leader restores it.
//
// Locks: mu guards groups, partitions and sessions, and is held for CPU
// only; log reads, persistence writes and waits happen without it.
type shareCoordinator struct {
	s   *Server
	now func() time.Time
	mu  struct {
		sync.Mutex
		groups     map[string]*share.Group
		partitions map[sharePartitionKey]*share.Partition
		sessions   *share.Sessions
		// changed is closed (and replaced) when records become
		// available again, waking parked share fetches.
		changed chan struct{}
	}
	state *shareStateStore
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
	c.mu.partitions = map[sharePartitionKey]*share.Partition{}
	c.mu.sessions = share.NewSessions(0, time.Duration(s.conf().GroupShareSessionTimeoutMs)*time.Millisecond)
	c.mu.changed = make(chan struct{})
	c.state = newShareStateStore(s)
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
	c.state.forget(gone)
	return true, nil
}

// wakeLocked wakes the parked share fetches. Needs mu.
func (c *shareCoordinator) wakeLocked() {
	close(c.mu.changed)
	c.mu.changed = make(chan struct{})
}

// partitionLocked returns the share-partition of key, created (and
// restored from its persisted snapshot, if any) on first use, with the
// locks due expired; saves collects the persistence writes that expiry
// makes. COORDINATOR_LOAD_IN_PROGRESS while the persisted state is not
// readable yet. Needs mu.
func (c *shareCoordinator) partitionLocked(key sharePartitionKey, settings shareGroupSettings, now time.Time, saves *shareSaves) (*share.Partition, *kerr.Error) {
	sp := c.mu.partitions[key]
	if sp == nil {
		snap, ok, code := c.state.load(key)
		if code != nil {
			return nil, code
		}
		sp = share.NewPartition(settings.partition)
		if ok {
			sp.Restore(snap)
		}
		c.mu.partitions[key] = sp
	} else {
		sp.SetConfig(settings.partition)
	}
	ended, released := sp.Expire(now)
	if released > 0 {
		c.wakeLocked()
	}
	if ended > 0 {
		saves.add(c.state.queueLocked(key, sp.Snapshot()))
	}
	return sp, nil
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
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].key.partition < out[j].key.partition
	})
	return out, found || len(out) > 0, nil
}

// alterOffsets sets the start offset of group's share-partitions
// (AlterShareGroupOffsets); the group must have no members. Records in
// flight are forgotten.
func (c *shareCoordinator) alterOffsets(group string, starts map[sharePartitionKey]int64) *kerr.Error {
	if code := c.coordinates(group); code != nil {
		return code
	}
	c.state.ready()
	now := c.now()
	settings := c.settings(group)
	saves := &shareSaves{}
	c.mu.Lock()
	if g := c.mu.groups[group]; g != nil {
		g.Expire(c.groupConfig(), now)
		if !g.Empty() {
			c.mu.Unlock()
			return kerr.NonEmptyGroup
		}
	}
	for key, start := range starts {
		sp, code := c.partitionLocked(key, settings, now, saves)
		if code != nil {
			c.mu.Unlock()
			_ = saves.await() // what earlier partitions queued; the error is code's
			return code
		}
		sp.Reset(start)
		saves.add(c.state.queueLocked(key, sp.Snapshot()))
	}
	c.mu.Unlock()
	if err := saves.await(); err != nil {
		c.s.logger.Warn("share offsets not persisted", "group", group, "err", err)
		return kerr.CoordinatorNotAvailable
	}
	return nil
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
	c.state.forget(gone)
	return nil
}
