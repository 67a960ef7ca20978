package broker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Followers replicate with Kafka's own protocol: one fetcher per leader
// node sends Fetch requests carrying this node's id as the replica id for
// every partition it follows there, long-polling like a consumer; the
// leader answers up to its log end offset and learns from the fetch offset
// how far the follower has come. Before the first fetch under a new leader
// epoch a follower asks the leader, with OffsetForLeaderEpoch, where its
// last epoch ends there and cuts any divergent tail.

// fetcherManager owns the fetchers, one per leader node.
type fetcherManager struct {
	s  *Server
	mu sync.Mutex
	m  map[int32]*replicaFetcher
	// running is m's fetchers as of the last change, read without mu by
	// Metadata (closedLeaders).
	running atomic.Pointer[[]*replicaFetcher]
}

func newFetcherManager(s *Server) *fetcherManager {
	return &fetcherManager{s: s, m: map[int32]*replicaFetcher{}}
}

// update hands each followed partition to the fetcher of its leader and
// stops fetchers left with none.
func (fm *fetcherManager) update(st cluster.State, parts []*partition) {
	byLeader := map[int32][]*partition{}
	for _, p := range parts {
		r := p.Role()
		if r.Leader == fm.s.cfg.NodeID || r.Leader == cluster.NoLeader {
			continue
		}
		byLeader[r.Leader] = append(byLeader[r.Leader], p)
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	defer fm.publishLocked()
	for id, f := range fm.m {
		b, ok := st.Brokers[id]
		if len(byLeader[id]) == 0 || !ok || b.Addr != f.addr {
			f.stop()
			delete(fm.m, id)
		}
	}
	for id, ps := range byLeader {
		b, ok := st.Brokers[id]
		if !ok {
			continue
		}
		f := fm.m[id]
		if f == nil {
			f = newReplicaFetcher(fm.s, id, b.Addr)
			fm.m[id] = f
		}
		f.set(ps)
	}
}

// publishLocked refreshes running from m.
func (fm *fetcherManager) publishLocked() {
	fs := make([]*replicaFetcher, 0, len(fm.m))
	for _, f := range fm.m {
		fs = append(fs, f)
	}
	fm.running.Store(&fs)
}

// fetching reports whether this node replicates from any leader.
func (fm *fetcherManager) fetching() bool {
	fs := fm.running.Load()
	return fs != nil && len(*fs) > 0
}

// closedLeaders lists the leaders whose process closed a connection of
// this node's fetcher (peer_conns.go).
func (fm *fetcherManager) closedLeaders() []int32 {
	fs := fm.running.Load()
	if fs == nil {
		return nil
	}
	var out []int32
	for _, f := range *fs {
		if f.conns.closedByPeer() {
			out = append(out, f.leader)
		}
	}
	return out
}

func (fm *fetcherManager) close() {
	fm.mu.Lock()
	fs := fm.m
	fm.m = map[int32]*replicaFetcher{}
	fm.publishLocked()
	fm.mu.Unlock()
	for _, f := range fs {
		f.stop()
	}
}

// replicaFetcher replicates the partitions one leader leads.
type replicaFetcher struct {
	s      *Server
	leader int32
	addr   string
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
	conns  peerConns

	mu    sync.Mutex
	parts []*partition
}

func newReplicaFetcher(s *Server, leader int32, addr string) *replicaFetcher {
	ctx, cancel := context.WithCancel(s.ctx)
	f := &replicaFetcher{s: s, leader: leader, addr: addr, ctx: ctx, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	go f.run()
	return f
}

func (f *replicaFetcher) set(ps []*partition) {
	f.mu.Lock()
	f.parts = ps
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *replicaFetcher) stop() {
	f.cancel()
	<-f.done
}

func (f *replicaFetcher) snapshot() []*partition {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts
}

func (f *replicaFetcher) run() {
	defer close(f.done)
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(f.addr),
		kgo.ClientID("strata-replica-fetcher"),
		kgo.DialTimeout(2 * time.Second),
		kgo.RetryTimeout(time.Second),
		kgo.WithHooks(&f.conns),
	}, f.s.interBrokerOpts()...)...)
	if err != nil {
		f.s.logger.Error("replica fetcher: client", "leader", f.leader, "err", err)
		return
	}
	defer cl.Close()
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return
	}
	b := seeds[0]
	backoff := 50 * time.Millisecond
	redialed := false
	for f.ctx.Err() == nil {
		err := f.round(b)
		if err == nil {
			backoff = 50 * time.Millisecond
			redialed = false
			f.s.connectionHealthy(f.leader)
			continue
		}
		if f.ctx.Err() != nil {
			return
		}
		f.s.logger.Debug("replica fetch failed", "leader", f.leader, "err", err)
		if f.s.connectionFailed(f.leader, err) && !redialed {
			// A lost connection is redialed at once: a refusal (the
			// leader's process is gone) is known within a millisecond,
			// before the clients that lost it ask for metadata.
			redialed = true
			continue
		}
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// round truncates what needs truncating, then sends one Fetch.
func (f *replicaFetcher) round(b *kgo.Broker) error {
	parts := f.snapshot()
	var active []*partition
	roles := map[*partition]*replica.Role{}
	st := f.s.clusterState()
	throttled := map[*partition]bool{}
	overQuota := f.s.followerThrottle.exceeded()
	for _, p := range parts {
		r := p.Role()
		if r.Leader != f.leader || f.s.partitionOffline(p) {
			continue
		}
		if !f.s.followerThrottle.unlimited() && f.s.replicaThrottled(st, p, f.s.cfg.NodeID, followerThrottledReplicas) {
			if overQuota {
				continue // follower.replication.throttled.rate: next round
			}
			throttled[p] = true
		}
		roles[p] = r
		if p.TakeTruncation() {
			if err := f.truncate(b, p); err != nil {
				p.RequestTruncation()
				return err
			}
		}
		active = append(active, p)
	}
	if len(active) == 0 {
		wait := time.Second
		if overQuota {
			wait = 100 * time.Millisecond // the bucket refills
		}
		select {
		case <-f.ctx.Done():
		case <-f.wake:
		case <-time.After(wait):
		}
		return nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.s.cfg.NodeID
	req.ReplicaState.ID = f.s.cfg.NodeID
	req.ReplicaState.Epoch = -1
	req.MaxWaitMillis = int32(f.s.cfg.ReplicaFetchWaitMaxMs)
	req.MinBytes = 1
	req.MaxBytes = f.s.cfg.ReplicaFetchMaxBytes
	req.SessionEpoch = -1
	epochs := map[*partition]int32{}
	index := map[string]int{}
	for _, p := range active {
		name := p.topic.name
		i, ok := index[name]
		if !ok {
			i = len(req.Topics)
			index[name] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic = name
			t.TopicID = p.topic.id
			req.Topics = append(req.Topics, t)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p.index
		rp.FetchOffset = p.Log().LogEndOffset()
		rp.CurrentLeaderEpoch = roles[p].LeaderEpoch
		rp.LogStartOffset = p.Log().LogStartOffset()
		rp.PartitionMaxBytes = f.s.cfg.ReplicaFetchMaxBytes
		if throttled[p] {
			// At most a second's worth, so one fetch cannot overshoot.
			rp.PartitionMaxBytes = int32(min(int64(rp.PartitionMaxBytes), max(f.s.conf().FollowerThrottledRate, 1)))
		}
		epochs[p] = rp.CurrentLeaderEpoch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	ctx, cancel := context.WithTimeout(f.ctx, time.Duration(f.s.cfg.ReplicaFetchWaitMaxMs)*time.Millisecond+5*time.Second)
	defer cancel()
	kresp, err := b.Request(ctx, req)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	byKey := map[string]map[int32]*partition{}
	for _, p := range active {
		name := p.topic.name
		if byKey[name] == nil {
			byKey[name] = map[int32]*partition{}
		}
		byKey[name][p.index] = p
	}
	var firstErr error
	for _, rt := range resp.Topics {
		name := rt.Topic
		if name == "" {
			for _, p := range active {
				if p.topic.id == rt.TopicID {
					name = p.topic.name
					break
				}
			}
		}
		for _, rp := range rt.Partitions {
			p := byKey[name][rp.Partition]
			if p == nil {
				continue
			}
			if throttled[p] {
				f.s.followerThrottle.record(int64(len(rp.RecordBatches)))
			}
			if err := f.handle(p, epochs[p], &rp); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

func (f *replicaFetcher) handle(p *partition, epoch int32, rp *kmsg.FetchResponseTopicPartition) error {
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		if p.Log().LogEndOffset() < rp.LogStartOffset {
			// Behind the leader's log start (retention, tiering): start
			// there; older records are the object store's to serve.
			return p.ResetTo(rp.LogStartOffset)
		}
		// Ahead of the leader: reconcile epochs again.
		p.RequestTruncation()
		return err
	default:
		// Not leader / fenced / unknown epoch: the metadata will move
		// this partition; wait for it.
		return err
	}
	if err := p.AppendReplica(rp.RecordBatches, epoch, rp.HighWatermark); err != nil {
		if errors.Is(err, replica.ErrNotLeader) {
			return nil
		}
		f.s.logger.Error("replica append failed", "topic", p.topic.name, "partition", p.index, "err", err)
		f.s.storageFailed(p, err)
		return err
	}
	// The leader's log start (retention, DeleteRecords) moves ours too.
	if lso := rp.LogStartOffset; lso > p.Log().LogStartOffset() && lso <= min(p.Log().LogEndOffset(), p.HighWatermark()) {
		if err := p.DeleteRecordsBefore(lso); err != nil {
			f.s.logger.Warn("following the leader's log start", "topic", p.topic.name, "partition", p.index, "offset", lso, "err", err)
		}
	}
	return nil
}

// truncate asks the leader where this follower's latest epoch ends and
// cuts the log there (KIP-101, KIP-279).
func (f *replicaFetcher) truncate(b *kgo.Broker, p *partition) error {
	latest := p.Log().LatestEpoch()
	if latest < 0 {
		return nil // nothing written under any epoch: nothing can diverge
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.s.cfg.NodeID
	t := kmsg.NewOffsetForLeaderEpochRequestTopic()
	t.Topic = p.topic.name
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition = p.index
	rp.CurrentLeaderEpoch = p.LeaderEpoch()
	rp.LeaderEpoch = latest
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	kresp, err := b.Request(ctx, req)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.OffsetForLeaderEpochResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return errors.New("broker: malformed OffsetForLeaderEpoch response")
	}
	sp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		return err
	}
	cut := sp.EndOffset
	if cut < 0 {
		// The leader knows no epoch at or below ours: keep only what we
		// know was committed (Kafka truncates to the high watermark).
		cut = p.HighWatermark()
	}
	if sp.LeaderEpoch < latest {
		// The leader never had our latest epoch: our log diverges where
		// its last common epoch ends on our side, if that is earlier.
		if _, ours := p.Log().EndOffsetForEpoch(sp.LeaderEpoch); ours >= 0 {
			cut = min(cut, ours)
		}
	}
	if cut < p.Log().LogEndOffset() {
		f.s.logger.Info("truncating divergent replica tail", "topic", p.topic.name, "partition", p.index, "from", p.Log().LogEndOffset(), "to", cut, "leader", f.leader)
		return p.TruncateTo(cut)
	}
	return nil
}
