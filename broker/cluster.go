package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// A node learns the cluster from the metadata quorum: it registers itself
// (with a fresh incarnation id per process), heartbeats, and follows every
// applied record. reconcile brings the node's open topics and partitions
// in line with the applied state: it opens the partitions assigned to this
// node, closes those that moved away, applies each partition's role
// (leader or follower, epochs, ISR) and hands the followers to the replica
// fetchers. It runs only in followMetadata's loop (and once, before the
// loop starts, when the data directory opens), never in a request
// handler: a handler proposes through s.meta and, if it must see the
// result in the open partitions, waits for the loop with waitApplied.
// Nothing acts on metadata this node has not applied.

// clusterState is the applied metadata state.
func (s *Server) clusterState() cluster.State { return s.member.State() }

// register records this process in the quorum as the node's current
// incarnation; it retries until the quorum answers or ctx ends.
func (s *Server) register(ctx context.Context) error {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s.incarnation = hex.EncodeToString(b[:])
	rec := cluster.RegisterBroker{NodeID: s.cfg.NodeID, IncarnationID: s.incarnation, Addr: s.listeners[0].spec.advertised, Rack: s.cfg.BrokerRack, Endpoints: s.endpoints()}
	for {
		rec.TimeMs = time.Now().UnixMilli()
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.meta.registerBroker(pctx, rec)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("broker: registering node %d with the metadata quorum: %w", s.cfg.NodeID, err)
		}
		s.logger.Warn("registering with the metadata quorum failed; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// awaitElections waits (within ctx) until the controller has given a
// leader to every partition this node could lead: after a restart the
// new incarnation's partitions are leaderless until the next controller
// step, and a single node should serve at once when Start returns.
func (s *Server) awaitElections(ctx context.Context) {
	s.waitForState(ctx, func(st cluster.State) bool {
		for _, r := range cluster.PlanElections(st) {
			e, ok := r.(cluster.ElectLeader)
			if !ok {
				continue
			}
			if t, ok := st.Topic(e.Topic); ok && int(e.Partition) < len(t.Partitions) && slices.Contains(t.Partitions[e.Partition].ISR, s.cfg.NodeID) {
				return false
			}
		}
		return true
	})
}

// waitForState waits until done holds for the applied metadata state,
// re-checking after each applied record; it reports whether it did before
// ctx ended.
func (s *Server) waitForState(ctx context.Context, done func(cluster.State) bool) bool {
	for ctx.Err() == nil {
		idx := s.member.AppliedIndex() // before the state: nothing applied in between is missed
		if done(s.clusterState()) {
			return true
		}
		_ = s.member.WaitApplied(ctx, idx+1)
	}
	return false
}

// heartbeatLoop keeps this node unfenced: one BrokerHeartbeat every
// broker.heartbeat.interval.ms. A heartbeat refused as stale (the state
// no longer knows this incarnation) registers again. It also reports the
// replicas of offline log dirs (as a Kafka broker's heartbeat lists its
// offline dirs): at once when a dir fails, and again with every
// heartbeat until the state shows them all offline.
func (s *Server) heartbeatLoop() {
	interval := time.Duration(s.cfg.BrokerHeartbeatIntervalMs) * time.Millisecond
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		beat := false
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			beat = true
		case <-s.offlineDirs:
		}
		ctx, cancel := context.WithTimeout(s.ctx, 2*interval+time.Second)
		var err error
		if beat {
			err = s.meta.heartbeat(ctx, s.cfg.NodeID, s.incarnation, time.Now().UnixMilli())
		}
		if err == nil {
			err = s.reportOfflineReplicas(ctx)
		}
		cancel()
		if (errors.Is(err, cluster.ErrStaleIncarnation) || errors.Is(err, cluster.ErrBrokerNotRegistered)) && !s.shuttingDown.Load() {
			if rerr := s.register(s.ctx); rerr != nil && s.ctx.Err() == nil {
				s.logger.Warn("re-registering failed", "err", rerr)
			}
		}
	}
}

// offlineReportBatch bounds the partitions of one OfflineReplicas record.
const offlineReportBatch = 10000

// reportOfflineReplicas proposes OfflineReplicas for this node's replicas
// in offline log dirs that the applied state does not show offline yet.
func (s *Server) reportOfflineReplicas(ctx context.Context) error {
	if len(s.logDirs.offlineDirs()) == 0 {
		return nil
	}
	st := s.clusterState()
	var refs []cluster.ReplicaRef
	for _, p := range s.topics.allPartitions() {
		if !s.partitionOffline(p) {
			continue
		}
		t, ok := st.TopicByID(cluster.TopicID(p.topic.id))
		if !ok || int(p.index) >= len(t.Partitions) || slices.Contains(t.Partitions[p.index].OfflineReplicas, s.cfg.NodeID) {
			continue
		}
		refs = append(refs, cluster.ReplicaRef{TopicID: t.ID, Partition: p.index})
	}
	for len(refs) > 0 {
		n := min(len(refs), offlineReportBatch)
		rec := cluster.OfflineReplicas{NodeID: s.cfg.NodeID, IncarnationID: s.incarnation, Partitions: refs[:n]}
		if _, err := s.meta.propose(ctx, rec); err != nil {
			if s.ctx.Err() == nil {
				s.logger.Warn("reporting offline replicas to the controller failed; retrying with the next heartbeat", "replicas", n, "err", err)
			}
			return err
		}
		s.logger.Info("reported offline replicas to the controller", "replicas", n)
		refs = refs[n:]
	}
	return nil
}

// appliedFeed is what the metadata subscription has delivered since
// followMetadata last looked: the latest index, and whether any record
// other than a heartbeat (which changes nothing reconcile acts on) came.
type appliedFeed struct {
	wake chan struct{} // capacity 1: a pending wake-up

	mu      sync.Mutex
	index   uint64
	changed bool
}

func (f *appliedFeed) push(a metadata.Applied) {
	_, heartbeat := a.Record.(cluster.BrokerHeartbeat)
	f.mu.Lock()
	f.index = max(f.index, a.Index)
	f.changed = f.changed || a.Snapshot || !heartbeat
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *appliedFeed) take() (index uint64, changed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	index, changed = f.index, f.changed
	f.changed = false
	return index, changed
}

// startFollowingMetadata subscribes to the applied records and starts
// followMetadata; Close stops both (stopMetadata, then followDone).
func (s *Server) startFollowingMetadata() {
	feed := &appliedFeed{wake: make(chan struct{}, 1)}
	feed.wake <- struct{}{} // the first pass catches up with what came before
	feed.changed = true
	s.followDone = make(chan struct{})
	s.stopMetadata = s.member.Subscribe(feed.push)
	go func() {
		defer close(s.followDone)
		s.followMetadata(feed)
	}()
}

// followMetadata is the node's one reconciliation loop: after every batch
// of applied records it brings the open partitions in line with the
// applied state (reconcile) and publishes how far it got (markApplied),
// which is what handlers wait for. It holds no lock across a pass and
// never waits for a request handler; a batch of heartbeats only moves the
// index. It returns when the server closes.
func (s *Server) followMetadata(feed *appliedFeed) {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-feed.wake:
		}
		index, changed := feed.take()
		if !changed {
			// Only heartbeats since the last pass, which reconciled every
			// earlier record: nothing to do up to index.
			s.meta.markApplied(index)
			continue
		}
		if s.ctx.Err() != nil {
			return // closing: the logs are about to be closed
		}
		s.topics.reconcileApplied()
	}
}

// reconcileApplied runs one reconcile pass against the latest applied
// state and marks its index; it returns the topics whose partitions could
// not be opened. Only followMetadata and openTopicManager (before the loop
// starts) call it.
func (m *topicManager) reconcileApplied() map[string]error {
	index := m.s.member.AppliedIndex() // before the state: the state is at index or later
	failed := m.reconcile(m.s.clusterState())
	m.s.meta.markApplied(index)
	return failed
}

// isrLoop shrinks the ISR of partitions this node leads when a follower
// has not caught up for replica.lag.time.max.ms.
func (s *Server) isrLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now().UnixMilli()
		s.topics.forEachPartition(func(p *partition) {
			if c := p.LaggingISR(now, s.cfg.ReplicaLagTimeMaxMs); c != nil {
				s.proposeISR(p, c)
			}
		})
	}
}

// proposeISR commits a new ISR for a partition this node leads (Kafka's
// AlterPartition), with the partition epoch it was decided at.
func (s *Server) proposeISR(p *partition, c *replica.ISRChange) {
	rec := cluster.AlterPartition{Topic: p.topic.name, Partition: p.index, PartitionEpoch: c.Role.PartitionEpoch, LeaderEpoch: c.Role.LeaderEpoch, NewISR: c.ISR}
	// A tracked task (Close waits for it); at most one per partition is in
	// flight, and a failed one delays the next (replica.ISRChangeDone).
	s.goTask(func() {
		ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		defer cancel()
		err := s.meta.alterPartition(ctx, rec)
		p.ISRChangeDone(c, err)
		if err != nil {
			if s.ctx.Err() == nil {
				s.logger.Info("ISR change not committed", "topic", rec.Topic, "partition", rec.Partition, "isr", c.ISR, "err", err)
			}
			return
		}
		if len(c.ISR) < len(c.Role.ISR) {
			s.metrics.isrShrinks.Inc()
		} else {
			s.metrics.isrExpands.Inc()
		}
		s.logger.Info("ISR changed", "topic", rec.Topic, "partition", rec.Partition, "isr", c.ISR)
	})
}

// hosted reports whether this node holds a replica of the partition.
func (s *Server) hosted(p cluster.Partition) bool { return slices.Contains(p.Replicas, s.cfg.NodeID) }

// reconcile makes the open topics and partitions match st. A new topic
// being recovered from the bucket (recoveryStarts) starts its partitions'
// logs at the offsets recoverFromBucket registered. It returns the topics whose partitions
// could not be opened, and records them for openFailure. It runs on one
// goroutine at a time (see reconcileApplied) and holds no lock while it
// opens, recovers or removes a log.
func (m *topicManager) reconcile(st cluster.State) map[string]error {
	s := m.s
	failed := map[string]error{}
	// Dynamic broker configs first: topic defaults resolve against them.
	dynChanged := s.refreshDynamic(st)
	eff := s.conf()
	// Topics gone (or replaced by a new topic of the same name).
	for _, ts := range m.all() {
		t, ok := st.Topics[ts.name]
		if !ok || metadata.TopicID(t.ID) != ts.id {
			m.dropTopic(ts)
		}
	}
	// The partitions to open first, all at once on a bounded pool of
	// workers (openPartitions): a restart opens thousands.
	fresh := map[string]*topicState{} // topics new to this node, by name
	var jobs []*openJob
	opened := map[openKey]*openJob{}
	for _, name := range st.TopicNames() {
		t := st.Topics[name]
		ts := m.get(name)
		if ts == nil {
			configs := t.Configs
			if configs == nil {
				configs = map[string]string{}
			}
			ts = &topicState{name: name, id: metadata.TopicID(t.ID), config: resolveTopicConfig(eff, configs)}
			fresh[name] = ts
		}
		m.mu.RLock()
		have := ts.partitions
		for i, cp := range t.Partitions {
			if s.hosted(cp) && (i >= len(have) || have[i] == nil) {
				j := &openJob{ts: ts, index: int32(i), leaderEpoch: cp.LeaderEpoch}
				jobs = append(jobs, j)
				opened[openKey{ts, int32(i)}] = j
			}
		}
		m.mu.RUnlock()
	}
	m.openPartitions(jobs)

	now := time.Now().UnixMilli()
	var changes []leadershipChange
	var removed []*partition
	for _, name := range m.changedTopics(st, dynChanged) {
		t := st.Topics[name]
		meta := metadata.Topic{Name: name, ID: metadata.TopicID(t.ID), LeaderEpochs: make([]int32, len(t.Partitions)), Configs: maps.Clone(t.Configs)}
		if meta.Configs == nil {
			meta.Configs = map[string]string{}
		}
		for i, p := range t.Partitions {
			meta.LeaderEpochs[i] = p.LeaderEpoch
		}
		ts, isNew := fresh[name]
		if isNew {
			ts.meta = meta
		} else {
			ts = m.get(name)
		}
		m.mu.RLock()
		parts := slices.Clone(ts.partitions)
		configChanged := dynChanged || !maps.Equal(ts.meta.Configs, meta.Configs)
		metaChanged := isNew || configChanged || len(ts.meta.LeaderEpochs) != len(meta.LeaderEpochs)
		m.mu.RUnlock()
		cfg := resolveTopicConfig(eff, meta.Configs)
		for len(parts) < len(t.Partitions) {
			parts = append(parts, nil)
		}
		var openErr error
		for i, cp := range t.Partitions {
			p := parts[i]
			switch {
			case s.hosted(cp) && p == nil:
				var err error
				if j := opened[openKey{ts, int32(i)}]; j != nil {
					p, err = j.p, j.err
				} else {
					err = errors.New("not opened") // cannot happen: the first pass listed it
				}
				if err != nil {
					openErr = fmt.Errorf("partition %d: %w", i, err)
					s.logger.Error("cannot open partition", "topic", name, "partition", i, "err", err)
					continue
				}
				parts[i] = p
			case !s.hosted(cp) && p != nil:
				// The replica moved to other nodes (reassignment): removed
				// once the topic no longer lists it.
				if p.IsLeader() {
					changes = append(changes, leadershipChange{p: p, leader: false})
				}
				removed = append(removed, p)
				parts[i] = nil
				continue
			}
			if p == nil {
				continue
			}
			if configChanged {
				p.UpdateConfig(cfg.storageConfig())
			}
			became, lost := p.SetRole(replica.RoleOf(cp), now)
			if became || lost {
				changes = append(changes, leadershipChange{p: p, leader: became})
			}
		}
		if openErr != nil {
			failed[name] = openErr
		}
		m.mu.Lock()
		if openErr != nil {
			m.openFailed[ts.id] = openErr
		} else {
			delete(m.openFailed, ts.id)
		}
		if metaChanged {
			// Written only on a change: readers of the name and id go
			// through the immutable fields, the rest under mu.
			ts.meta, ts.config = meta, cfg
		}
		if !slices.Equal(ts.partitions, parts) {
			ts.partitions = parts
		}
		if isNew {
			m.byName[name] = ts
			m.byID[meta.ID] = ts
		}
		m.mu.Unlock()
		if isNew {
			s.logger.Info("topic opened", "topic", name, "partitions", len(t.Partitions), "topic_id", meta.ID.String())
		}
	}
	m.reconciled = st
	if s.fetchers != nil {
		s.fetchers.update(st, m.allPartitions())
	}
	for _, p := range removed {
		m.removePartition(p)
	}
	for _, c := range changes {
		s.onLeadershipChange(c)
	}
	return failed
}

// changedTopics lists, sorted, the topics of st that reconcile must look
// at: all of them after a change of the dynamic broker configs (topic
// defaults) or when nothing was reconciled before; otherwise those whose
// topic value differs from the state the last pass reconciled, those not
// open here, and those with a partition that failed to open (tried again).
// States are immutable and Apply copies what it changes, so a topic whose
// partitions slice and configs are the ones of the last pass is unchanged:
// a pass costs O(changed topics), not O(topics), past this scan.
func (m *topicManager) changedTopics(st cluster.State, all bool) []string {
	prev := m.reconciled
	if all || prev.Topics == nil {
		return st.TopicNames()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var names []string
	for name, t := range st.Topics {
		pt, ok := prev.Topics[name]
		ts := m.byName[name]
		unchanged := ok && ts != nil && ts.id == metadata.TopicID(t.ID) && sameTopic(pt, t) &&
			m.openFailed[ts.id] == nil
		if !unchanged {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// sameTopic reports whether b is topic a unchanged: same id, the same
// partitions slice (Apply replaces it on any partition change) and equal
// configs.
func sameTopic(a, b cluster.Topic) bool {
	return a.ID == b.ID && sameSlice(a.Partitions, b.Partitions) && maps.Equal(a.Configs, b.Configs)
}

// sameSlice reports whether a and b are the same slice (same backing array
// and length): nothing in an immutable state changed it.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

type leadershipChange struct {
	p      *partition
	leader bool // became leader; false: lost leadership
}

// onLeadershipChange moves the coordinators of internal-topic partitions
// with their leadership.
func (s *Server) onLeadershipChange(c leadershipChange) {
	if c.leader {
		s.gains.gained(c.p, c.p.Role().Replicas, time.Now())
	}
	if s.groups == nil || s.txns == nil || s.shares == nil {
		return // at open: the coordinators adopt what they find
	}
	if c.leader && c.p.remote.enabled() {
		// The previous leader may have uploaded more since this node
		// last read the manifest.
		p := c.p
		s.goRoleTask(func() {
			if err := p.remote.refresh(s.ctx); err != nil && s.ctx.Err() == nil {
				s.logger.Warn("reading the remote log manifest after a leader change", "topic", p.topic.name, "partition", p.index, "err", err)
			}
		})
	}
	switch c.p.topic.name {
	case consumerOffsetsTopic:
		s.groups.onLeadership(c.p, c.leader)
	case transactionStateTopic:
		s.txns.onLeadership(c.p, c.leader)
	case shareStateTopic:
		s.shares.state.onLeadership(c.p, c.leader)
	default:
		// Share-partitions follow their data partition's leader: the
		// state held for the old leader epoch goes either way.
		s.shares.dropPartition(c.p.topic.id, c.p.index)
	}
	if !c.leader {
		s.logger.Info("leadership moved away", "topic", c.p.topic.name, "partition", c.p.index, "leader", c.p.Role().Leader, "epoch", c.p.LeaderEpoch())
	}
}

// dropTopic forgets a deleted topic and removes its directories (reconcile).
func (m *topicManager) dropTopic(t *topicState) {
	m.noteDeleted(t.name) // before the name leaves byName: see noteDeleted
	m.mu.Lock()
	if m.byName[t.name] == t {
		delete(m.byName, t.name)
	}
	delete(m.byID, t.id)
	delete(m.openFailed, t.id)
	parts := t.partitions
	m.mu.Unlock()
	for _, p := range parts {
		if p != nil {
			m.removePartition(p)
		}
	}
	m.s.logger.Info("topic deleted", "topic", t.name)
	if m.s.groups != nil {
		m.s.groups.onTopicDeleted(t.name) // committed offsets go with the topic, as in Kafka
	}
}

// removePartition stops serving a partition and deletes its directory.
func (m *topicManager) removePartition(p *partition) {
	dir := p.Log().Dir()
	p.remote.stop()
	if err := p.Remove(); err != nil {
		m.s.logger.Error("removing partition directory", "dir", dir, "err", err)
	}
	m.s.logDirs.forget(partitionDirName(p.topic.name, p.index))
}

// hostedDirs is the set of partition directory names this node keeps.
func (s *Server) hostedDirs(st cluster.State) map[string]bool {
	out := map[string]bool{}
	for name, t := range st.Topics {
		for i, p := range t.Partitions {
			if s.hosted(p) {
				out[partitionDirName(name, int32(i))] = true
			}
		}
	}
	return out
}

// removeStrayDir deletes a partition directory this node no longer hosts.
func (s *Server) removeStrayDir(logDir, name string) error {
	s.logger.Info("removing directory of a partition not hosted here (or an unfinished move)", "dir", filepath.Join(logDir, name))
	return os.RemoveAll(filepath.Join(logDir, name))
}

// eligibleBrokers counts the registered brokers that may take replicas
// (at least 1: this node, before it has registered).
func (s *Server) eligibleBrokers() int {
	st := s.clusterState()
	n := 0
	for _, id := range st.BrokerIDs() {
		if st.Eligible(id) {
			n++
		}
	}
	return max(n, 1)
}

// internalReplicationFactor is the replication factor of an internal topic
// (offsets.topic.replication.factor and its transaction-log twin): the
// configured one, capped by the number of controllers (configured, or in
// the quorum now if more; one on a single node) so a small cluster can
// still create it.
func (s *Server) internalReplicationFactor(configured int16) int16 {
	voters, err := metadata.ParseVoters(s.cfg.ControllerQuorumVoters)
	n := int16(len(voters))
	if err != nil || n < 1 {
		n = 1
	}
	if node, ok := s.member.(*metadata.Node); ok {
		// A quorum grown with AddRaftVoter counts its current voters.
		n = max(n, int16(len(node.Members())))
	}
	return min(configured, n)
}

// brokerAddr is one live broker's advertised endpoint.
type brokerAddr struct {
	id   int32
	host string
	port int32
	rack *string
}

// liveBrokers lists the unfenced registered brokers (Metadata,
// DescribeCluster) at their addresses on the named listener (the one the
// client connected to), in id order; brokers without that listener are
// left out, as in Kafka. Before this node has registered, itself.
func (s *Server) liveBrokers(st cluster.State, listener *kafkaListener) []brokerAddr {
	var out []brokerAddr
	for _, id := range st.BrokerIDs() {
		b := st.Brokers[id]
		if b.Fenced {
			continue
		}
		if addr, ok := b.Endpoint(listener.spec.name); ok {
			out = append(out, s.brokerAddrOf(b.NodeID, addr, b.Rack))
		}
	}
	if len(out) == 0 {
		out = append(out, s.brokerAddrOf(s.cfg.NodeID, listener.spec.advertised, s.cfg.BrokerRack))
	}
	return out
}

func (s *Server) brokerAddrOf(id int32, addr, rack string) brokerAddr {
	b := brokerAddr{id: id, host: addr, port: 9092}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		p, _ := strconv.Atoi(port)
		b.host, b.port = host, int32(p)
	}
	if rack != "" {
		b.rack = &rack
	}
	return b
}

// controllerID is the node id of the active controller (the raft leader),
// -1 while there is none.
//
// Clients send admin requests to the controller they are told of, so it
// must be a broker: when the raft leader is a controller-only node, this
// node answers for it (as KRaft brokers name a broker, not the quorum).
func (s *Server) controllerID() int32 {
	id := s.member.LeaderID()
	if id < 0 {
		return -1
	}
	if st := s.clusterState(); !st.Live(id) {
		return s.cfg.NodeID
	}
	return id
}

// controlledShutdown hands this node's leaderships to other in-sync
// replicas before it stops (controlled.shutdown.enable): clients see a
// leader change instead of an outage. It waits, up to timeout, until the
// node leads nothing another eligible ISR member could lead.
func (s *Server) controlledShutdown(timeout time.Duration) {
	s.shuttingDown.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Short attempts until the timeout: a proposal forwarded to a raft
	// leader that just went away is dropped, not failed, and while the
	// quorum elects a leader an attempt fails at once (so wait a little
	// between those).
	// At most 5 s of it: a node whose peers are all gone stops soon.
	proposeCtx, proposeCancel := context.WithTimeout(ctx, 5*time.Second)
	defer proposeCancel()
	var err error
	for proposeCtx.Err() == nil {
		pctx, pcancel := context.WithTimeout(proposeCtx, time.Second)
		err = s.meta.controlledShutdown(pctx, s.cfg.NodeID, s.incarnation)
		pcancel()
		if err == nil || errors.Is(err, cluster.ErrRejected) {
			break
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-proposeCtx.Done():
		}
		t.Stop()
	}
	if err != nil {
		s.logger.Warn("controlled shutdown not committed; stopping anyway", "err", err)
		return
	}
	if s.waitForState(ctx, func(st cluster.State) bool { return s.movableLeaderships(st) == 0 }) {
		s.logger.Info("controlled shutdown: leaderships moved", "still_leading", s.clusterState().LeadersOn(s.cfg.NodeID))
		return
	}
	s.logger.Warn("controlled shutdown: timed out with leaderships left", "leading", s.clusterState().LeadersOn(s.cfg.NodeID))
}

// movableLeaderships counts partitions this node leads that have another
// eligible ISR member.
func (s *Server) movableLeaderships(st cluster.State) int {
	n := 0
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			if p.Leader != s.cfg.NodeID {
				continue
			}
			for _, r := range p.ISR {
				if r != s.cfg.NodeID && st.EligibleReplica(p, r) {
					n++
					break
				}
			}
		}
	}
	return n
}
