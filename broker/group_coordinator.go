package broker

import (
	"context"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/groups"
)

// The group coordinator: the broker side of broker/groups.
//
//   - A group belongs to the __consumer_offsets partition Kafka would pick,
//     abs(javaHashCode(group)) % partitions, and is coordinated by that
//     partition's leader: each node coordinates the groups of the
//     __consumer_offsets partitions it leads.
//   - __consumer_offsets is created on first use (FindCoordinator, any group
//     request, or a Metadata request naming it) with
//     offsets.topic.num.partitions partitions and cleanup.policy=compact; it
//     is internal: clients may read it but not produce to or delete it.
//   - Each partition's groups live in a groupShard, rebuilt from the
//     partition's log when this node becomes its leader (at start or on a
//     leadership change, onLeadership; dropped when it stops leading) and
//     persisted to it as Kafka-format records, on the coordinator runtime
//     (group_shard.go, coordinator_runtime.go).
//   - One goroutine fires the groups' timeouts and, every
//     offsets.retention.check.interval.ms, expires offsets.

const consumerOffsetsTopic = "__consumer_offsets"

// isInternalTopic reports topics only the broker writes.
func isInternalTopic(name string) bool {
	return name == consumerOffsetsTopic || name == transactionStateTopic || name == shareStateTopic
}

type groupCoordinator struct {
	s    *Server
	cfg  groups.Config
	now  func() time.Time
	wake chan struct{} // pokes the timer loop to recompute its deadline

	creating creation // of __consumer_offsets
	mu       struct {
		sync.Mutex
		shards []*groupShard // one per partition; nil until the topic exists
	}
	tasks taskGroup // shard loads, writers and committers
}

func newGroupCoordinator(s *Server) *groupCoordinator {
	c := &groupCoordinator{s: s, now: time.Now, wake: make(chan struct{}, 1)}
	c.tasks.ctx = s.ctx
	c.cfg = groups.DefaultConfig()
	c.cfg.InitialRebalanceDelay = time.Duration(s.cfg.GroupInitialRebalanceDelayMs) * time.Millisecond
	c.cfg.MinSessionTimeout = time.Duration(s.cfg.GroupMinSessionTimeoutMs) * time.Millisecond
	c.cfg.MaxSessionTimeout = time.Duration(s.cfg.GroupMaxSessionTimeoutMs) * time.Millisecond
	c.cfg.MaxSize = int(s.cfg.GroupMaxSize)
	c.cfg.ConsumerSessionTimeout = time.Duration(s.cfg.GroupConsumerSessionTimeoutMs) * time.Millisecond
	c.cfg.ConsumerHeartbeatInterval = time.Duration(s.cfg.GroupConsumerHeartbeatIntervalMs) * time.Millisecond
	c.cfg.ConsumerAssignor = s.cfg.GroupConsumerAssignor
	c.cfg.ConsumerOverrides = s.groupOverrides
	if t := s.topics.get(consumerOffsetsTopic); t != nil {
		c.adopt(t) // loaded by start
	}
	return c
}

// start loads the partitions this node leads in the background (requests
// meanwhile get COORDINATOR_LOAD_IN_PROGRESS) and starts the timer loop.
func (c *groupCoordinator) start() {
	for _, sh := range c.shards() {
		sh.mu.Lock()
		loading := sh.mu.state == shardLoading
		sh.mu.Unlock()
		if loading {
			sh.startLoad()
		}
	}
	c.s.goTask(c.run)
}

// onLeadership loads a partition's groups when this node becomes its
// leader and gives them up when it stops being leader.
func (c *groupCoordinator) onLeadership(p *partition, leader bool) {
	shards := c.shards()
	if int(p.index) >= len(shards) {
		return
	}
	shards[p.index].moveTo(logOf(c.s, p), leader)
}

// close waits for the shards' loads, writes and commits in flight; the
// timer loop is a server task.
func (c *groupCoordinator) close() { c.tasks.close() }

func (c *groupCoordinator) shards() []*groupShard {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.shards
}

// adopt makes a shard for each partition of the topic: loading where this
// node leads, unloaded elsewhere (another node coordinates those groups).
func (c *groupCoordinator) adopt(t *topicState) []*groupShard {
	parts, _, _ := c.s.topics.snapshot(t)
	shards := make([]*groupShard, len(parts))
	for i, p := range parts {
		shards[i] = newGroupShard(c, int32(i), p)
		if log := logOf(c.s, p); log == nil || !log.isLeader() {
			shards[i].unload(shardUnloaded)
		}
	}
	c.mu.Lock()
	c.mu.shards = shards
	c.mu.Unlock()
	return shards
}

// ensureTopic returns the shards, creating __consumer_offsets if needed;
// nil if it cannot be created.
func (c *groupCoordinator) ensureTopic() []*groupShard {
	if shards := c.shards(); shards != nil {
		return shards
	}
	c.creating.do(c.s.ctx.Done(), func() {
		if c.shards() != nil {
			return
		}
		t := c.s.internalTopic(consumerOffsetsTopic, c.s.cfg.OffsetsTopicNumPartitions, c.s.cfg.OffsetsTopicReplicationFactor, map[string]string{
			"cleanup.policy": "compact",
			"segment.bytes":  strconv.FormatInt(c.s.cfg.OffsetsTopicSegmentBytes, 10),
		})
		if t == nil {
			return
		}
		for _, sh := range c.adopt(t) {
			sh.mu.Lock()
			loading := sh.mu.state == shardLoading
			sh.mu.Unlock()
			if !loading {
				continue
			}
			if err := sh.load(); err != nil { // a new topic: nothing to read
				c.s.logger.Error("group coordinator partition failed to load", "partition", sh.index, "err", err)
			}
		}
	})
	return c.shards()
}

// javaStringHashCode is Java's String.hashCode over UTF-16 code units.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// groupPartition is Kafka's partitionFor: Utils.abs(groupId.hashCode) %
// partitions, where Utils.abs maps MinInt32 to 0.
func groupPartition(groupID string, partitions int) int32 {
	h := javaStringHashCode(groupID)
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return h % int32(partitions)
}

// shardFor returns the shard of a group.
func (c *groupCoordinator) shardFor(groupID string) (*groupShard, *kerr.Error) {
	shards := c.ensureTopic()
	if len(shards) == 0 {
		return nil, kerr.CoordinatorNotAvailable
	}
	return shards[groupPartition(groupID, len(shards))], nil
}

// poke makes the timer loop recompute its next deadline.
func (c *groupCoordinator) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// deliver sends replies to the requests waiting for them. When the records
// they depend on could not be written (a failed append reloads the
// shard), the members must find the coordinator again.
func (c *groupCoordinator) deliver(replies []groups.Reply, writeErr error) {
	for _, r := range replies {
		if writeErr != nil {
			switch {
			case r.Join != nil:
				r.Join = &groups.JoinResult{Err: kerr.CoordinatorNotAvailable, MemberID: r.Join.MemberID, Generation: -1}
			case r.Sync != nil:
				r.Sync = &groups.SyncResult{Err: kerr.CoordinatorNotAvailable}
			}
		}
		if ch, ok := r.To.(chan groups.Reply); ok {
			select {
			case ch <- r:
			default: // answered already; the machine never does this
			}
		}
	}
}

// run fires group timeouts and expires offsets until the server stops.
func (c *groupCoordinator) run() {
	interval := time.Duration(max(c.s.cfg.OffsetsRetentionCheckIntervalMs, 10)) * time.Millisecond
	expiry := time.NewTicker(interval)
	defer expiry.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Hour
		if next := c.nextDeadline(); !next.IsZero() {
			wait = max(next.Sub(c.now()), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-c.s.ctx.Done():
			return
		case <-c.wake:
		case <-timer.C:
		case <-expiry.C:
			c.expireOffsets()
		}
		c.tick()
	}
}

func (c *groupCoordinator) nextDeadline() time.Time {
	var next time.Time
	for _, sh := range c.shards() {
		if d := sh.deadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	return next
}

// tick fires the due timeouts of every shard.
func (c *groupCoordinator) tick() {
	now := c.now()
	for _, sh := range c.shards() {
		if d := sh.deadline(); d.IsZero() || now.Before(d) {
			continue
		}
		sh.withAllGroups(func(g *groups.Group, now time.Time) groups.Effects {
			if d := g.NextDeadline(); d.IsZero() || now.Before(d) {
				return groups.Effects{}
			}
			return g.Tick(now)
		})
	}
}

// expireOffsets applies offsets.retention.minutes to every group.
func (c *groupCoordinator) expireOffsets() {
	retention := time.Duration(c.s.cfg.OffsetsRetentionMs) * time.Millisecond
	for _, sh := range c.shards() {
		sh.withAllGroups(func(g *groups.Group, now time.Time) groups.Effects {
			return g.ExpireOffsets(now, retention)
		})
	}
}

// onTopicDeleted removes the offsets of a deleted topic from every group.
// The metadata sync calls it holding the topic manager's adminMu: the
// groups change at once, and the tombstones' replication is waited for by
// a task, not here.
func (c *groupCoordinator) onTopicDeleted(topic string) {
	for _, sh := range c.shards() {
		w, replies := sh.applyAll(func(g *groups.Group, now time.Time) groups.Effects {
			return g.RemoveTopicOffsets(now, topic)
		})
		if w == nil && len(replies) == 0 {
			continue
		}
		if !c.tasks.goTask(func() { c.deliver(replies, sh.await(w)) }) {
			c.deliver(replies, sh.await(w)) // stopping: no wait left
		}
	}
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

// ---- operations used by the request handlers ----

// join runs a JoinGroup, waiting for the rebalance to complete (never under
// a lock: the reply arrives on a channel).
func (c *groupCoordinator) join(ctx context.Context, groupID string, req groups.JoinRequest) groups.JoinResult {
	fail := func(err *kerr.Error) groups.JoinResult {
		return groups.JoinResult{Err: err, MemberID: req.MemberID, Generation: -1}
	}
	sh, code := c.shardFor(groupID)
	if code != nil {
		return fail(code)
	}
	reply := make(chan groups.Reply, 1)
	// A member id for a group that does not exist is unknown; only a
	// member without one creates the group.
	code, _ = sh.withGroup(groupID, req.MemberID == "", func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			res := fail(kerr.UnknownMemberID)
			return groups.Effects{Replies: []groups.Reply{{To: reply, Join: &res}}}
		}
		return g.Join(now, req, reply)
	})
	if code != nil {
		return fail(code)
	}
	select {
	case r := <-reply:
		return *r.Join
	case <-ctx.Done():
		return fail(kerr.NotCoordinator)
	}
}

// sync runs a SyncGroup, waiting for the leader's assignment.
func (c *groupCoordinator) sync(ctx context.Context, groupID string, req groups.SyncRequest) groups.SyncResult {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return groups.SyncResult{Err: code}
	}
	reply := make(chan groups.Reply, 1)
	code, _ = sh.withGroup(groupID, false, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			return groups.Effects{Replies: []groups.Reply{{To: reply, Sync: &groups.SyncResult{Err: kerr.UnknownMemberID}}}}
		}
		return g.Sync(now, req, reply)
	})
	if code != nil {
		return groups.SyncResult{Err: code}
	}
	select {
	case r := <-reply:
		return *r.Sync
	case <-ctx.Done():
		return groups.SyncResult{Err: kerr.NotCoordinator}
	}
}

func (c *groupCoordinator) heartbeat(groupID, memberID string, instanceID *string, generation int32) *kerr.Error {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return code
	}
	var result *kerr.Error
	code, _ = sh.withGroup(groupID, false, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			result = kerr.UnknownMemberID
			return groups.Effects{}
		}
		var eff groups.Effects
		result, eff = g.Heartbeat(now, memberID, instanceID, generation)
		return eff
	})
	if code != nil {
		return code
	}
	return result
}

// consumerHeartbeat runs a ConsumerGroupHeartbeat (KIP-848); a member at
// epoch 0 may create the group.
func (c *groupCoordinator) consumerHeartbeat(groupID string, req groups.ConsumerHeartbeatRequest) groups.ConsumerHeartbeatResult {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return groups.ConsumerHeartbeatResult{Err: code, MemberID: req.MemberID, MemberEpoch: -1}
	}
	topics := c.topicCatalog()
	var res groups.ConsumerHeartbeatResult
	code, err := sh.withGroup(groupID, req.MemberEpoch == groups.JoinEpoch, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			res = groups.ConsumerHeartbeatResult{Err: kerr.UnknownMemberID, MemberID: req.MemberID, MemberEpoch: -1}
			if req.MemberEpoch < 0 {
				res.Err = kerr.GroupIDNotFound
			}
			return groups.Effects{}
		}
		var eff groups.Effects
		res, eff = g.ConsumerHeartbeat(now, req, topics)
		return eff
	})
	switch {
	case code != nil:
		return groups.ConsumerHeartbeatResult{Err: code, MemberID: req.MemberID, MemberEpoch: -1}
	case err != nil:
		return groups.ConsumerHeartbeatResult{Err: kerr.CoordinatorNotAvailable, MemberID: req.MemberID, MemberEpoch: -1}
	}
	return res
}

// topicCatalog is the cluster's topics for the consumer-group assignors.
func (c *groupCoordinator) topicCatalog() groups.TopicCatalog {
	all := c.s.topics.all()
	infos := make([]groups.TopicInfo, 0, len(all))
	for _, t := range all {
		parts, _, meta := c.s.topics.snapshot(t)
		infos = append(infos, groups.TopicInfo{ID: meta.ID, Name: meta.Name, Partitions: int32(len(parts)), Internal: isInternalTopic(meta.Name)})
	}
	return groups.NewTopicCatalog(infos)
}

// describeConsumer returns a consumer group's description; found is false
// if the group does not exist, consumer false if it is a classic group.
func (c *groupCoordinator) describeConsumer(groupID string) (d groups.ConsumerDescription, found, consumer bool, code *kerr.Error) {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return d, false, false, code
	}
	code = sh.read(func(gs map[string]*groups.Group) {
		if g := gs[groupID]; g != nil {
			found = true
			d, consumer = g.DescribeConsumer()
		}
	})
	return d, found, consumer, code
}

// leave removes members; it returns a group-level error or one per member.
func (c *groupCoordinator) leave(groupID string, members []groups.LeaveMember) (*kerr.Error, []*kerr.Error) {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return code, nil
	}
	var errs []*kerr.Error
	code, _ = sh.withGroup(groupID, false, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			errs = make([]*kerr.Error, len(members))
			for i := range errs {
				errs[i] = kerr.UnknownMemberID
			}
			return groups.Effects{}
		}
		var eff groups.Effects
		errs, eff = g.Leave(now, members)
		return eff
	})
	if code != nil {
		return code, nil
	}
	return nil, errs
}

// commit runs an OffsetCommit; it is acknowledged once the records are
// durable.
func (c *groupCoordinator) commit(groupID string, version int16, req groups.CommitRequest) *kerr.Error {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return code
	}
	var result *kerr.Error
	// Without a generation the request may create an offsets-only group.
	code, err := sh.withGroup(groupID, req.Generation < 0, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			if version >= 9 {
				result = kerr.GroupIDNotFound
			} else {
				result = kerr.IllegalGeneration
			}
			return groups.Effects{}
		}
		var eff groups.Effects
		result, eff = g.Commit(now, req)
		return eff
	})
	switch {
	case code != nil:
		return code
	case err != nil:
		return kerr.CoordinatorNotAvailable
	}
	if result == nil {
		c.s.lag.observeCommits(groupID, req.Offsets) // the lag evaluator sees every commit (lag_metrics.go)
	}
	return result
}

// fetchOffsets returns a group's committed offsets: those of tps, or all
// with tps nil. A missing group has none.
func (c *groupCoordinator) fetchOffsets(groupID string, tps []groups.TopicPartition, requireStable bool) ([]groups.FetchedOffset, *kerr.Error) {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return nil, code
	}
	var out []groups.FetchedOffset
	code = sh.read(func(gs map[string]*groups.Group) {
		if g := gs[groupID]; g != nil {
			out = g.FetchOffsets(tps, requireStable)
		}
	})
	return out, code
}

// describe returns a group's description; ok is false if it does not exist.
func (c *groupCoordinator) describe(groupID string) (d groups.Description, ok bool, code *kerr.Error) {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return d, false, code
	}
	code = sh.read(func(gs map[string]*groups.Group) {
		if g := gs[groupID]; g != nil {
			d, ok = g.Describe(), true
		}
	})
	return d, ok, code
}

// listedGroup is one group in ListGroups.
type listedGroup struct {
	id           string
	protocolType string
	state        groups.State
	stateName    string // Kafka's state name for the group's type
	groupType    string // "classic" or "consumer"
}

// list returns every group of the loaded shards, sorted, and an error if
// some shard is still loading.
func (c *groupCoordinator) list() ([]listedGroup, *kerr.Error) {
	var out []listedGroup
	var code *kerr.Error
	for _, sh := range c.shards() {
		if err := sh.read(func(gs map[string]*groups.Group) {
			for id, g := range gs {
				out = append(out, listedGroup{id: id, protocolType: g.ProtocolType(), state: g.State(), stateName: g.StateName(), groupType: g.GroupType()})
			}
		}); err != nil && err != kerr.NotCoordinator && code == nil {
			code = err // a shard another node coordinates has nothing to list
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, code
}

// deleteGroup runs DeleteGroups for one group.
func (c *groupCoordinator) deleteGroup(groupID string) *kerr.Error {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return code
	}
	var result *kerr.Error
	code, err := sh.withGroup(groupID, false, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			result = kerr.GroupIDNotFound
			return groups.Effects{}
		}
		var eff groups.Effects
		result, eff = g.Delete(now)
		return eff
	})
	switch {
	case code != nil:
		return code
	case err != nil:
		return kerr.CoordinatorNotAvailable
	}
	return result
}

// deleteOffsets runs OffsetDelete; it returns a group-level error or one
// per partition.
func (c *groupCoordinator) deleteOffsets(groupID string, tps []groups.TopicPartition) (*kerr.Error, []*kerr.Error) {
	sh, code := c.shardFor(groupID)
	if code != nil {
		return code, nil
	}
	var top *kerr.Error
	var errs []*kerr.Error
	code, err := sh.withGroup(groupID, false, func(g *groups.Group, now time.Time) groups.Effects {
		if g == nil {
			top = kerr.GroupIDNotFound
			return groups.Effects{}
		}
		var eff groups.Effects
		top, errs, eff = g.DeleteOffsets(now, tps)
		return eff
	})
	switch {
	case code != nil:
		return code, nil
	case err != nil:
		return kerr.CoordinatorNotAvailable, nil
	}
	return top, errs
}

// ---- monitoring ----

// groupSnapshot is one group as monitoring sees it (the `strata group`
// CLI, lag metrics and lag evaluation build on it).
type groupSnapshot struct {
	Group        string
	Partition    int32 // its __consumer_offsets partition
	State        string
	ProtocolType string
	Protocol     string
	Generation   int32
	Leader       string
	Members      []groupMemberSnapshot
	Offsets      []committedOffset
}

type groupMemberSnapshot struct {
	MemberID   string
	InstanceID string // "" for a dynamic member
	ClientID   string
	ClientHost string
	// Assigned lists the partitions assigned to the member, by topic, when
	// the group uses the consumer protocol.
	Assigned map[string][]int32
}

type committedOffset struct {
	Topic           string
	Partition       int32
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp time.Time
	ExpireTimestamp time.Time // zero unless set by an old client
}

// snapshot lists every group of the loaded shards with its members and
// committed offsets, sorted by group.
func (c *groupCoordinator) snapshot() []groupSnapshot {
	var out []groupSnapshot
	for _, sh := range c.shards() {
		var snaps []groups.Snapshot
		_ = sh.read(func(gs map[string]*groups.Group) {
			for _, g := range gs {
				snaps = append(snaps, g.Snapshot())
			}
		})
		for _, s := range snaps {
			out = append(out, toGroupSnapshot(s, sh.index))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

func toGroupSnapshot(s groups.Snapshot, partition int32) groupSnapshot {
	gs := groupSnapshot{
		Group:        s.Group,
		Partition:    partition,
		State:        s.StateName,
		ProtocolType: s.ProtocolType,
		Protocol:     s.Protocol,
		Generation:   s.Generation,
		Leader:       s.Leader,
	}
	for _, m := range s.Members {
		ms := groupMemberSnapshot{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
		if m.InstanceID != nil {
			ms.InstanceID = *m.InstanceID
		}
		if s.ProtocolType == groups.ConsumerProtocolType && len(m.Assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(m.Assignment) == nil {
				ms.Assigned = map[string][]int32{}
				for _, t := range a.Topics {
					ms.Assigned[t.Topic] = append(ms.Assigned[t.Topic], t.Partitions...)
				}
			}
		}
		gs.Members = append(gs.Members, ms)
	}
	for _, o := range s.Offsets {
		co := committedOffset{
			Topic:           o.Topic,
			Partition:       o.Partition,
			Offset:          o.Offset,
			LeaderEpoch:     o.LeaderEpoch,
			Metadata:        o.Metadata,
			CommitTimestamp: time.UnixMilli(o.CommitTimestamp),
		}
		if o.ExpireTimestamp >= 0 {
			co.ExpireTimestamp = time.UnixMilli(o.ExpireTimestamp)
		}
		gs.Offsets = append(gs.Offsets, co)
	}
	return gs
}

// adminClientID is the client id Kafka lets write internal topics.
const adminClientID = "__admin_client"

// maxBatchBytes is the largest batch __consumer_offsets accepts.
func (c *groupCoordinator) maxBatchBytes() int64 {
	if t := c.s.topics.get(consumerOffsetsTopic); t != nil {
		return c.s.topics.topicConfig(t).maxMessageBytes()
	}
	return int64(c.s.conf().MessageMaxBytes)
}
