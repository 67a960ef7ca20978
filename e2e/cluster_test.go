package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// Tests of three-node clusters (brokertest.StartCluster): crashes of
// partition leaders and of the controller under an acks=all producer, a
// leader cut off from the metadata quorum, a full stop and restart, kcat
// (librdkafka) following a leader change, and controlled shutdown.

const (
	clusterSize = 3
	// failoverWait bounds every wait for the cluster to react to a crash,
	// a partition or a restart.
	failoverWait = 30 * time.Second
	// maxFailoverGap is what TestClusterKillLeaderRounds accepts as the
	// longest pause in acks around a leader crash; the goal is under 3 s,
	// the bound leaves room for loaded CI machines.
	maxFailoverGap = 10 * time.Second
)

// startCluster runs a three-node cluster of the binary TestMain built.
func startCluster(t *testing.T, extraFlags ...string) *brokertest.Cluster {
	t.Helper()
	brokertest.UseBinary(strataBin)
	flags := append([]string{"--set", "group.initial.rebalance.delay.ms=0"}, extraFlags...)
	return brokertest.StartCluster(t, clusterSize, flags...)
}

// allNodes is 1..clusterSize.
func allNodes() []int32 {
	ids := make([]int32, clusterSize)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	return ids
}

// otherNodes is every node but id.
func otherNodes(id int32) []int32 {
	return slices.DeleteFunc(allNodes(), func(n int32) bool { return n == id })
}

// partitionView is one partition as a node's Metadata response shows it.
type partitionView struct {
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	ErrorCode   int16
}

func (p partitionView) String() string {
	return fmt.Sprintf("leader %d epoch %d replicas %v isr %v err %d", p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.ErrorCode)
}

// fullyReplicated reports whether the partition has a leader and every
// replica in its ISR.
func (p partitionView) fullyReplicated(rf int) bool {
	if p.ErrorCode != 0 || p.Leader < 0 || len(p.Replicas) != rf || len(p.ISR) != rf {
		return false
	}
	for _, r := range p.Replicas {
		if !slices.Contains(p.ISR, r) {
			return false
		}
	}
	return true
}

// clusterView is what one node's Metadata response says.
type clusterView struct {
	From       int32 // the node asked
	Controller int32
	Brokers    []int32                    // sorted node ids
	Topics     map[string][]partitionView // by partition number
}

// partition returns the view of topic's partition p, and false if the
// response did not have it.
func (v clusterView) partition(topic string, p int32) (partitionView, bool) {
	ps := v.Topics[topic]
	if int(p) >= len(ps) || ps[p].ErrorCode == -2 {
		return partitionView{}, false
	}
	return ps[p], true
}

// ledBy returns the lowest partition of topic that node leads.
func (v clusterView) ledBy(topic string, node int32) (int32, bool) {
	for p, pv := range v.Topics[topic] {
		if pv.Leader == node {
			return int32(p), true
		}
	}
	return 0, false
}

// clusterProbe asks individual nodes for Metadata: each node has its own
// client whose seed is that node alone, and requests go to the seed, so an
// answer is exactly that node's view.
type clusterProbe struct {
	c      *brokertest.Cluster
	direct map[int32]*kgo.Client
}

func newClusterProbe(t *testing.T, c *brokertest.Cluster) *clusterProbe {
	t.Helper()
	p := &clusterProbe{c: c, direct: map[int32]*kgo.Client{}}
	for _, id := range allNodes() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Node(id).Addr), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		p.direct[id] = cl
	}
	return p
}

// request sends req to node id only.
func (p *clusterProbe) request(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	seeds := p.direct[id].SeedBrokers()
	if len(seeds) != 1 {
		return nil, fmt.Errorf("node %d: client has %d seed brokers", id, len(seeds))
	}
	return seeds[0].Request(ctx, req)
}

// view asks node id for its Metadata about topics.
func (p *clusterProbe) view(id int32, topics ...string) (clusterView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for _, topic := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	raw, err := p.request(ctx, id, req)
	if err != nil {
		return clusterView{}, fmt.Errorf("metadata from node %d: %w", id, err)
	}
	resp := raw.(*kmsg.MetadataResponse)
	v := clusterView{From: id, Controller: resp.ControllerID, Topics: map[string][]partitionView{}}
	for _, b := range resp.Brokers {
		v.Brokers = append(v.Brokers, b.NodeID)
	}
	slices.Sort(v.Brokers)
	for _, rt := range resp.Topics {
		if rt.Topic == nil {
			continue
		}
		ps := make([]partitionView, len(rt.Partitions))
		for i := range ps {
			ps[i].ErrorCode = -2 // missing from the response
		}
		for _, rp := range rt.Partitions {
			if rp.Partition < 0 || int(rp.Partition) >= len(ps) {
				return clusterView{}, fmt.Errorf("metadata from node %d: %s partition %d of %d", id, *rt.Topic, rp.Partition, len(ps))
			}
			ps[rp.Partition] = partitionView{
				Leader: rp.Leader, LeaderEpoch: rp.LeaderEpoch,
				Replicas: rp.Replicas, ISR: rp.ISR, ErrorCode: rp.ErrorCode,
			}
		}
		if rt.ErrorCode != 0 {
			for i := range ps {
				ps[i].ErrorCode = rt.ErrorCode
			}
		}
		v.Topics[*rt.Topic] = ps
	}
	return v, nil
}

// mustView is view retried for a while (a node that restarted answers a
// connection from before its restart with EOF first), failing the test if
// the node never answers.
func (p *clusterProbe) mustView(t *testing.T, id int32, topics ...string) clusterView {
	t.Helper()
	var v clusterView
	var last string
	waitForCluster(t, 10*time.Second, fmt.Sprintf("node %d to answer a Metadata request", id), &last, func() (bool, string) {
		var err error
		if v, err = p.view(id, topics...); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return v
}

// views asks each of ids; it returns false unless all of them answered.
func (p *clusterProbe) views(ids []int32, topics ...string) ([]clusterView, bool) {
	out := make([]clusterView, 0, len(ids))
	for _, id := range ids {
		v, err := p.view(id, topics...)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// waitReplicated waits until each node in ids lists every node in ids as a
// live broker and reports every partition of topic led and with all rf
// replicas in the ISR.
func waitReplicated(t *testing.T, probe *clusterProbe, ids []int32, topic string, partitions, rf int) {
	t.Helper()
	var last string
	waitForCluster(t, failoverWait, fmt.Sprintf("every partition of %s fully replicated as seen by nodes %v", topic, ids), &last, func() (bool, string) {
		vs, ok := probe.views(ids, topic)
		if !ok {
			return false, "a node did not answer"
		}
		for _, v := range vs {
			if len(v.Brokers) != len(ids) {
				return false, fmt.Sprintf("node %d lists brokers %v", v.From, v.Brokers)
			}
			if len(v.Topics[topic]) != partitions {
				return false, fmt.Sprintf("node %d lists %d partitions", v.From, len(v.Topics[topic]))
			}
			for p, pv := range v.Topics[topic] {
				if !pv.fullyReplicated(rf) {
					return false, fmt.Sprintf("node %d: partition %d: %s", v.From, p, pv)
				}
			}
		}
		return true, ""
	})
}

// waitNewLeader waits until every node in ids agrees that topic's partition
// p has a leader other than old, with an epoch above oldEpoch, and returns
// that view.
func waitNewLeader(t *testing.T, probe *clusterProbe, ids []int32, topic string, p, old, oldEpoch int32) partitionView {
	t.Helper()
	return waitPartition(t, probe, ids, topic, p, fmt.Sprintf("a new leader (not %d, epoch > %d)", old, oldEpoch), func(pv partitionView) bool {
		return pv.Leader >= 0 && pv.Leader != old && pv.LeaderEpoch > oldEpoch
	})
}

// waitPartition waits until every node in ids shows topic's partition p
// with the same leader and epoch, satisfying cond, and returns that view.
func waitPartition(t *testing.T, probe *clusterProbe, ids []int32, topic string, p int32, what string, cond func(partitionView) bool) partitionView {
	t.Helper()
	var got partitionView
	var last string
	waitForCluster(t, failoverWait, fmt.Sprintf("nodes %v to show %s[%d] with %s", ids, topic, p, what), &last, func() (bool, string) {
		vs, ok := probe.views(ids, topic)
		if !ok {
			return false, "a node did not answer"
		}
		for i, v := range vs {
			pv, ok := v.partition(topic, p)
			if !ok || !cond(pv) {
				return false, fmt.Sprintf("node %d: %s", v.From, pv)
			}
			if i > 0 && (pv.Leader != got.Leader || pv.LeaderEpoch != got.LeaderEpoch) {
				return false, fmt.Sprintf("nodes disagree: %s / %s", got, pv)
			}
			got = pv
		}
		return true, ""
	})
	return got
}

// waitForCluster is brokertest.WaitFor that also reports the last state
// cond described, so a timeout says what was still wrong.
func waitForCluster(t *testing.T, timeout time.Duration, what string, last *string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		*last = state
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s; last: %s", timeout, what, *last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clusterAdmin is a kadm client bootstrapped from the given nodes.
func clusterAdmin(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// createReplicatedTopic creates topic with rf replicas per partition,
// min.insync.replicas=2 (unless configs says otherwise) and configs.
func createReplicatedTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]string) {
	t.Helper()
	cfg := map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}
	for k, v := range configs {
		cfg[k] = kadm.StringPtr(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, rf, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s (%d partitions, rf %d): %v", topic, partitions, rf, err)
	}
}

// acksAllClient is a producer (idempotent by default) that waits for every
// in-sync replica, refreshes metadata quickly after a leader change, and
// gives up on a record after 30 s.
func acksAllClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.RecordDeliveryTimeout(30 * time.Second),
	}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceValues sends one record per value to topic (partition 0 unless
// the client partitions otherwise) with acks=all and fails on any error.
func produceValues(t *testing.T, cl *kgo.Client, topic string, values []string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failoverWait)
	defer cancel()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("acks=all produce to %s: %v", topic, err)
	}
	return recs
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

// readRecord is one record read back, with where it was.
type readRecord struct {
	Key, Value string
	Partition  int32
	Offset     int64
}

// consumeAll reads every partition of topic from the start to the end
// offset that ListOffsets reports now, with a fresh client, and returns the
// records of each partition in offset order.
func consumeAll(t *testing.T, addrs []string, topic string, partitions int32) map[int32][]readRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failoverWait)
	defer cancel()
	ends, err := clusterAdmin(t, addrs).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	end := map[int32]int64{}
	start := map[int32]kgo.Offset{}
	for p := int32(0); p < partitions; p++ {
		lo, ok := ends.Lookup(topic, p)
		if !ok || lo.Err != nil {
			t.Fatalf("end offset of %s[%d]: %v (listed: %v)", topic, p, lo.Err, ok)
		}
		end[p] = lo.Offset
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchMaxWait(500*time.Millisecond), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]readRecord{}
	next := map[int32]int64{}
	done := func() bool {
		for p, e := range end {
			if next[p] < e {
				return false
			}
		}
		return true
	}
	var lastErr error
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s back: read up to %v of end offsets %v before the deadline (last fetch error: %v)", topic, next, end, lastErr)
		}
		fs.EachError(func(_ string, _ int32, err error) { lastErr = err })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < end[r.Partition] {
				out[r.Partition] = append(out[r.Partition], readRecord{Key: string(r.Key), Value: string(r.Value), Partition: r.Partition, Offset: r.Offset})
			}
			next[r.Partition] = r.Offset + 1
		})
	}
	return out
}

// valuesOf lists the values of records in order.
func valuesOf(recs []readRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Value
	}
	return out
}

// ackedRecord is a record the cluster acknowledged with acks=all.
type ackedRecord struct {
	key       string
	partition int32
	offset    int64
	at        time.Time
}

// steadyProducer produces records with unique keys to the partitions of
// one topic in turn, one every interval, with at most maxInFlight
// unacknowledged, and records every acknowledgement and its time.
type steadyProducer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		acks     []ackedRecord
		failed   int
		firstErr error
	}
}

func startSteadyProducer(t *testing.T, addrs []string, topic string, partitions int32, interval time.Duration, maxInFlight int) *steadyProducer {
	t.Helper()
	return startSteadyProducerWith(t, acksAllClient(t, addrs, kgo.RecordPartitioner(kgo.ManualPartitioner())), topic, partitions, interval, maxInFlight)
}

// startSteadyProducerWith is startSteadyProducer on a client of the
// caller's (it must partition manually).
func startSteadyProducerWith(t *testing.T, cl *kgo.Client, topic string, partitions int32, interval time.Duration, maxInFlight int) *steadyProducer {
	t.Helper()
	sp := &steadyProducer{
		cl:   cl,
		done: make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp.cancel = cancel
	slots := make(chan struct{}, maxInFlight)
	go func() {
		defer close(sp.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case <-ctx.Done():
				return
			case slots <- struct{}{}:
			}
			key := fmt.Sprintf("key-%07d", i)
			rec := &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: []byte(key), Value: []byte("value of " + key)}
			// Not ctx: stopping the loop must not fail records in flight.
			sp.cl.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
				now := time.Now()
				<-slots
				sp.mu.Lock()
				defer sp.mu.Unlock()
				if err != nil {
					sp.mu.failed++
					if sp.mu.firstErr == nil {
						sp.mu.firstErr = err
					}
					return
				}
				sp.mu.acks = append(sp.mu.acks, ackedRecord{key: string(r.Key), partition: r.Partition, offset: r.Offset, at: now})
			})
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-sp.done
	})
	return sp
}

// acked returns a copy of the acknowledgements so far, in ack order.
func (sp *steadyProducer) acked() []ackedRecord {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := slices.Clone(sp.mu.acks)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// ackedSince reports whether partition p had an ack at or after since.
func (sp *steadyProducer) ackedSince(p int32, since time.Time) (time.Time, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for i := len(sp.mu.acks) - 1; i >= 0; i-- {
		a := sp.mu.acks[i]
		if a.partition == p && !a.at.Before(since) {
			return a.at, true
		}
	}
	return time.Time{}, false
}

// longestGap is the longest time between consecutive acks of partition p
// from the last ack before from up to the first ack at or after to.
func (sp *steadyProducer) longestGap(p int32, from, to time.Time) time.Duration {
	var prev time.Time
	var longest time.Duration
	for _, a := range sp.acked() {
		if a.partition != p {
			continue
		}
		if a.at.Before(from) {
			prev = a.at
			continue
		}
		if !prev.IsZero() {
			longest = max(longest, a.at.Sub(prev))
		}
		prev = a.at
		if !a.at.Before(to) {
			break
		}
	}
	return longest
}

// describe says how far the producer got, and what the given nodes say of
// topic, for failure messages.
func (sp *steadyProducer) describe(probe *clusterProbe, ids []int32, topic string) string {
	sp.mu.Lock()
	last := map[int32]time.Time{}
	for _, a := range sp.mu.acks {
		last[a.partition] = a.at
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d acked, %d failed (first error %v);", len(sp.mu.acks), sp.mu.failed, sp.mu.firstErr)
	sp.mu.Unlock()
	for p, at := range last {
		fmt.Fprintf(&b, " partition %d last acked %s ago;", p, time.Since(at).Round(time.Millisecond))
	}
	for _, id := range ids {
		if v, err := probe.view(id, topic); err != nil {
			fmt.Fprintf(&b, " node %d: %v;", id, err)
		} else {
			fmt.Fprintf(&b, " node %d: controller %d, %v;", id, v.Controller, v.Topics[topic])
		}
	}
	return b.String()
}

// stop ends producing, waits for the records in flight, and returns every
// ack and how many records failed.
func (sp *steadyProducer) stop(t *testing.T) (acks []ackedRecord, failed int, firstErr error) {
	t.Helper()
	sp.cancel()
	<-sp.done
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := sp.cl.Flush(ctx); err != nil {
		t.Fatalf("flushing the producer: %v", err)
	}
	sp.mu.Lock()
	failed, firstErr = sp.mu.failed, sp.mu.firstErr
	sp.mu.Unlock()
	return sp.acked(), failed, firstErr
}

// checkNoAckedLoss asserts that every acked record is in the log at the
// offset it was acked with, exactly once.
func checkNoAckedLoss(t *testing.T, acks []ackedRecord, read map[int32][]readRecord) {
	t.Helper()
	type where struct {
		partition int32
		offset    int64
	}
	seen := map[string][]where{}
	for _, recs := range read {
		for _, r := range recs {
			seen[r.Key] = append(seen[r.Key], where{r.Partition, r.Offset})
		}
	}
	lost, moved, dup := 0, 0, 0
	for _, a := range acks {
		got := seen[a.key]
		switch {
		case len(got) == 0:
			if lost < 5 {
				t.Errorf("acked record %s (partition %d offset %d) is not in the log", a.key, a.partition, a.offset)
			}
			lost++
		case len(got) > 1:
			if dup < 5 {
				t.Errorf("acked record %s is in the log %d times: %v", a.key, len(got), got)
			}
			dup++
		case got[0] != where{a.partition, a.offset}:
			if moved < 5 {
				t.Errorf("acked record %s was acked at partition %d offset %d but is at %v", a.key, a.partition, a.offset, got[0])
			}
			moved++
		}
	}
	if lost+moved+dup > 0 {
		t.Errorf("of %d acked records: %d lost, %d at another offset than acked, %d duplicated", len(acks), lost, moved, dup)
	}
}

// TestClusterKillLeaderRounds crashes (SIGKILL) a partition leader three
// times under a steady acks=all producer — once the controller as well —
// and checks that acks resume quickly, the node rejoins every ISR after a
// restart, and no acknowledged record is lost.
func TestClusterKillLeaderRounds(t *testing.T) {
	const (
		topic      = "kill-rounds"
		partitions = 3
	)
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	adm := clusterAdmin(t, c.Addrs())
	createReplicatedTopic(t, adm, topic, partitions, clusterSize, nil)
	waitReplicated(t, probe, allNodes(), topic, partitions, clusterSize)

	prod := startSteadyProducer(t, c.Addrs(), topic, partitions, 3*time.Millisecond, 256)
	warmup := time.Now()
	brokertest.WaitFor(t, failoverWait, "the producer's first acks on every partition", func() bool {
		for p := int32(0); p < partitions; p++ {
			if _, ok := prod.ackedSince(p, warmup); !ok {
				return false
			}
		}
		return true
	})

	killedController := false
	for round := 1; round <= 3; round++ {
		before := probe.mustView(t, allNodes()[round%clusterSize], topic)
		victim, part := int32(-1), int32(0)
		if pv, ok := before.partition(topic, 0); ok {
			victim = pv.Leader
		}
		// Round 2 (or a later one, if the controller led nothing before)
		// crashes the controller, when it leads a partition.
		if !killedController && round >= 2 {
			if p, ok := before.ledBy(topic, before.Controller); ok {
				victim, part = before.Controller, p
			} else {
				t.Logf("round %d: controller %d leads no partition of %s; crashing the leader of partition 0", round, before.Controller, topic)
			}
		}
		if victim < 1 {
			t.Fatalf("round %d: partition 0 has no leader: %+v", round, before.Topics[topic])
		}
		old, _ := before.partition(topic, part)
		wasController := victim == before.Controller
		killedController = killedController || wasController

		killedAt := time.Now()
		c.Kill(victim)
		survivors := otherNodes(victim)
		next := waitNewLeader(t, probe, survivors, topic, part, victim, old.LeaderEpoch)
		if wasController {
			var last string
			waitForCluster(t, failoverWait, "a new controller after the controller crashed", &last, func() (bool, string) {
				vs, ok := probe.views(survivors)
				if !ok {
					return false, "a node did not answer"
				}
				for _, v := range vs {
					if v.Controller < 1 || v.Controller == victim || v.Controller != vs[0].Controller {
						return false, fmt.Sprintf("node %d says controller %d", v.From, v.Controller)
					}
				}
				return true, ""
			})
		}
		elected := time.Now()
		var resumed time.Time
		var last string
		waitForCluster(t, failoverWait, fmt.Sprintf("acks on partition %d after its new leader %d was elected", part, next.Leader), &last, func() (bool, string) {
			var ok bool
			if resumed, ok = prod.ackedSince(part, elected); ok {
				return true, ""
			}
			return false, prod.describe(probe, survivors, topic)
		})
		gap := prod.longestGap(part, killedAt, resumed)
		role := "leader"
		if wasController {
			role = "leader and controller"
		}
		t.Logf("round %d: failover gap %s: crashed node %d (%s of partition %d, epoch %d); new leader %d (epoch %d) seen by the survivors %s after the crash",
			round, gap.Round(time.Millisecond), victim, role, part, old.LeaderEpoch, next.Leader, next.LeaderEpoch, elected.Sub(killedAt).Round(time.Millisecond))
		if gap > maxFailoverGap {
			t.Errorf("round %d: failover gap %s: acks on partition %d paused longer than %s (goal: under 3 s)", round, gap.Round(time.Millisecond), part, maxFailoverGap)
		}

		c.Restart(victim)
		waitReplicated(t, probe, allNodes(), topic, partitions, clusterSize)
	}
	if !killedController {
		t.Log("the controller led no partition in rounds 2 and 3; no round crashed it")
	}

	acks, failed, firstErr := prod.stop(t)
	t.Logf("%d records acked, %d failed (first error: %v)", len(acks), failed, firstErr)
	if len(acks) < 300 {
		t.Fatalf("only %d records acked over the whole test; the producer barely ran", len(acks))
	}
	checkNoAckedLoss(t, acks, consumeAll(t, c.Addrs(), topic, partitions))
}

// recordBatch encodes values as one uncompressed, non-idempotent v2 record
// batch.
func recordBatch(values []string) []byte {
	now := time.Now().UnixMilli()
	var records []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(v), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // everything after a one-byte zero Length
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(values) - 1),
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(values)),
		Records:              records,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:12], uint32(len(raw)-12))                                          // Length: after itself
	binary.BigEndian.PutUint32(raw[17:21], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))) // CRC: from Attributes on
	return raw
}

// TestClusterNetworkPartition cuts a partition leader off from the
// metadata quorum: the majority elects a new leader with a higher epoch and
// keeps taking acks=all writes, the old leader acknowledges none, and after
// the partition heals it rejoins the ISR with only the majority's records.
func TestClusterNetworkPartition(t *testing.T) {
	const topic = "net-partition"
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	adm := clusterAdmin(t, c.Addrs())
	createReplicatedTopic(t, adm, topic, 1, clusterSize, nil)
	waitReplicated(t, probe, allNodes(), topic, 1, clusterSize)

	before := numbered("before", 20)
	produceValues(t, acksAllClient(t, c.Addrs()), topic, before)

	start, _ := probe.mustView(t, 1, topic).partition(topic, 0)
	isolated := start.Leader
	majority := otherNodes(isolated)
	t.Logf("isolating node %d, leader of %s[0] at epoch %d", isolated, topic, start.LeaderEpoch)
	c.Isolate(isolated)

	next := waitNewLeader(t, probe, majority, topic, 0, isolated, start.LeaderEpoch)
	t.Logf("majority %v elected node %d at epoch %d", majority, next.Leader, next.LeaderEpoch)

	// The old leader is cut off from the quorum; an acks=all write sent to
	// it directly must not be acknowledged.
	minority := numbered("minority", 5)
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 0
	rp.Records = recordBatch(minority)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	raw, err := probe.request(ctx, isolated, req)
	cancel()
	switch {
	case err != nil:
		t.Logf("acks=all produce to the isolated node %d failed as it should: %v", isolated, err)
	default:
		resp := raw.(*kmsg.ProduceResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("produce response from node %d has %d topics", isolated, len(resp.Topics))
		}
		prp := resp.Topics[0].Partitions[0]
		if prp.ErrorCode == 0 {
			t.Errorf("isolated node %d acknowledged an acks=all write at offset %d without the quorum", isolated, prp.BaseOffset)
		} else {
			t.Logf("acks=all produce to the isolated node %d refused as it should: %v", isolated, kerr.ErrorForCode(prp.ErrorCode))
		}
	}

	majorityValues := numbered("majority", 50)
	produceValues(t, acksAllClient(t, c.Addrs(majority...)), topic, majorityValues)

	c.HealAll()
	waitReplicated(t, probe, allNodes(), topic, 1, clusterSize)
	// Read from the old leader's log if it is the preferred replica and
	// takes leadership back; that shows it truncated what it took alone.
	if len(start.Replicas) > 0 && start.Replicas[0] == isolated {
		var last string
		waitForCluster(t, failoverWait, fmt.Sprintf("node %d, the preferred replica, to lead %s[0] again", isolated, topic), &last, func() (bool, string) {
			vs, ok := probe.views(allNodes(), topic)
			if !ok {
				return false, "a node did not answer"
			}
			for _, v := range vs {
				if pv, _ := v.partition(topic, 0); pv.Leader != isolated || !pv.fullyReplicated(clusterSize) {
					return false, fmt.Sprintf("node %d: %s", v.From, pv)
				}
			}
			return true, ""
		})
	}

	got := valuesOf(consumeAll(t, c.Addrs(), topic, 1)[0])
	want := append(slices.Clone(before), majorityValues...)
	for _, v := range got {
		if strings.HasPrefix(v, "minority-") {
			t.Errorf("a record the isolated leader took without the quorum survived the heal: %s (log: %v)", v, got)
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("log after heal has %d records, want the %d before the cut and the %d the majority took:\ngot  %v\nwant %v", len(got), len(before), len(majorityValues), got, want)
	}
}

// TestClusterRestartAll stops every node with SIGTERM, starts them all
// again together, and checks that topics, partition counts, a topic config,
// committed group offsets and every record survived.
func TestClusterRestartAll(t *testing.T) {
	const group = "restart-all-group"
	topics := map[string]int32{"restart-a": 3, "restart-b": 2}
	retention := map[string]string{"restart-a": "3600000", "restart-b": "7200000"}
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	adm := clusterAdmin(t, c.Addrs())
	prod := acksAllClient(t, c.Addrs())
	written := map[string]map[int32][]string{}
	commits := kadm.Offsets{}
	for topic, partitions := range topics {
		createReplicatedTopic(t, adm, topic, partitions, clusterSize, map[string]string{"retention.ms": retention[topic]})
		waitReplicated(t, probe, allNodes(), topic, int(partitions), clusterSize)
		recs := produceValues(t, prod, topic, numbered(topic, 200))
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Offset < recs[j].Offset })
		written[topic] = map[int32][]string{}
		for _, r := range recs {
			written[topic][r.Partition] = append(written[topic][r.Partition], string(r.Value))
		}
		for p := int32(0); p < partitions; p++ {
			commits.Add(kadm.Offset{Topic: topic, Partition: p, At: int64(len(written[topic][p]) / 2), LeaderEpoch: -1})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), failoverWait)
	resp, err := adm.CommitOffsets(ctx, group, commits)
	cancel()
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing offsets for %s: %v", group, err)
	}

	for _, id := range allNodes() {
		if err := c.Stop(id); err != nil {
			t.Fatalf("stopping node %d: %v", id, err)
		}
	}
	c.RestartAll()

	adm = clusterAdmin(t, c.Addrs())
	for topic, partitions := range topics {
		waitReplicated(t, probe, allNodes(), topic, int(partitions), clusterSize)
	}
	ctx, cancel = context.WithTimeout(context.Background(), failoverWait)
	defer cancel()
	details, err := adm.ListTopics(ctx, "restart-a", "restart-b")
	if err != nil {
		t.Fatalf("listing topics after the restart: %v", err)
	}
	for topic, partitions := range topics {
		d, ok := details[topic]
		if !ok || d.Err != nil {
			t.Fatalf("topic %s after the restart: listed %v, %v", topic, ok, d.Err)
		}
		if got := int32(len(d.Partitions)); got != partitions {
			t.Errorf("topic %s has %d partitions after the restart, want %d", topic, got, partitions)
		}
	}
	configs, err := adm.DescribeTopicConfigs(ctx, "restart-a", "restart-b")
	if err != nil {
		t.Fatalf("describing topic configs: %v", err)
	}
	for topic, want := range retention {
		rc, err := configs.On(topic, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			t.Fatalf("configs of %s: %v", topic, err)
		}
		got := "<unset>"
		for _, cfg := range rc.Configs {
			if cfg.Key == "retention.ms" && cfg.Value != nil {
				got = *cfg.Value
			}
		}
		if got != want {
			t.Errorf("%s retention.ms after the restart = %s, want %s", topic, got, want)
		}
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetching %s's offsets after the restart: %v", group, err)
	}
	commits.Each(func(o kadm.Offset) {
		got, ok := fetched.Lookup(o.Topic, o.Partition)
		if !ok || got.Err != nil || got.At != o.At {
			t.Errorf("%s's committed offset for %s[%d] after the restart: %d (found %v, err %v), want %d", group, o.Topic, o.Partition, got.At, ok, got.Err, o.At)
		}
	})
	for topic, partitions := range topics {
		read := consumeAll(t, c.Addrs(), topic, partitions)
		for p := int32(0); p < partitions; p++ {
			if got, want := valuesOf(read[p]), written[topic][p]; !slices.Equal(got, want) {
				t.Errorf("%s[%d] after the restart holds %d records, want the %d written (first difference: %s)", topic, p, len(got), len(want), firstLineDiff(strings.Join(got, "\n"), strings.Join(want, "\n")))
			}
		}
	}
}

// kcatMetadata is the part of `kcat -L -J` the cluster tests read.
type kcatMetadata struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
		} `json:"partitions"`
	} `json:"topics"`
}

// TestClusterKcatFollowsLeader drives the cluster with librdkafka: kcat
// sees all three brokers and the partition's leader, produces with
// acks=all, and after the leader is crashed produces and consumes again
// through the new leader with nothing lost.
func TestClusterKcatFollowsLeader(t *testing.T) {
	const (
		topic = "kcat-cluster"
		first = 300
	)
	kcat := requireTool(t, "kcat", kcatInstall)
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	createReplicatedTopic(t, clusterAdmin(t, c.Addrs()), topic, 1, clusterSize, nil)
	waitReplicated(t, probe, allNodes(), topic, 1, clusterSize)

	res := mustRun(t, 30*time.Second, "", kcat, "-b", c.Bootstrap(), "-L", "-J", "-t", topic)
	var md kcatMetadata
	if err := json.Unmarshal([]byte(res.stdout), &md); err != nil {
		t.Fatalf("kcat -L -J: %v\n%s", err, res)
	}
	var listed []string
	for _, b := range md.Brokers {
		listed = append(listed, fmt.Sprintf("%d@%s", b.ID, b.Name))
	}
	slices.Sort(listed)
	var want []string
	for _, id := range allNodes() {
		want = append(want, fmt.Sprintf("%d@%s", id, c.Node(id).Addr))
	}
	if !slices.Equal(listed, want) {
		t.Fatalf("kcat -L lists brokers %v, want %v", listed, want)
	}
	if len(md.Topics) != 1 || md.Topics[0].Topic != topic || len(md.Topics[0].Partitions) != 1 {
		t.Fatalf("kcat -L -t %s lists %+v", topic, md.Topics)
	}
	leader := md.Topics[0].Partitions[0].Leader
	if leader < 1 || leader > clusterSize {
		t.Fatalf("kcat -L shows leader %d for %s[0]", leader, topic)
	}

	kcatProduceAcksAll := func(from, to int) {
		t.Helper()
		input, _ := kcatLines(from, to)
		mustRun(t, time.Minute, input, kcat, "-P", "-b", c.Bootstrap(), "-t", topic, "-K", ":", "-X", "acks=all", "-X", "enable.idempotence=true", "-X", "linger.ms=5")
	}
	kcatProduceAcksAll(0, first)

	old, _ := probe.mustView(t, leader, topic).partition(topic, 0)
	if old.Leader != leader {
		t.Fatalf("node %d says %s[0] is led by %d; kcat said %d", leader, topic, old.Leader, leader)
	}
	c.Kill(leader)
	next := waitNewLeader(t, probe, otherNodes(leader), topic, 0, leader, old.LeaderEpoch)
	t.Logf("crashed leader %d; node %d leads at epoch %d", leader, next.Leader, next.LeaderEpoch)

	kcatProduceAcksAll(first, 2*first)
	kcatConsumeAll(t, kcat, c.Bootstrap(), topic, 2*first)
}

// TestClusterControlledShutdown stops (SIGTERM) a partition leader: it
// exits 0 having handed its leaderships over first, and once restarted the
// preferred leaders are restored.
func TestClusterControlledShutdown(t *testing.T) {
	const (
		topic      = "controlled-shutdown"
		partitions = 3
	)
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	createReplicatedTopic(t, clusterAdmin(t, c.Addrs()), topic, partitions, clusterSize, nil)
	waitPreferredLeaders(t, probe, topic, partitions)

	view := probe.mustView(t, 1, topic)
	pv, _ := view.partition(topic, 0)
	victim := pv.Leader
	survivors := otherNodes(victim)
	if err := c.Stop(victim); err != nil {
		t.Fatalf("controlled shutdown of node %d: %v", victim, err)
	}
	exited := time.Now()
	// Leaderships must have moved before the exit, not when the session
	// times out later; allow only the moment a survivor may need to apply
	// the last committed metadata.
	var last string
	waitForCluster(t, 500*time.Millisecond, fmt.Sprintf("survivors %v to show no partition led by the stopped node %d right after its exit", survivors, victim), &last, func() (bool, string) {
		vs, ok := probe.views(survivors, topic)
		if !ok {
			return false, "a node did not answer"
		}
		for _, v := range vs {
			for p, pv := range v.Topics[topic] {
				if pv.Leader == victim || pv.Leader < 0 {
					return false, fmt.Sprintf("node %d: partition %d: %s", v.From, p, pv)
				}
			}
		}
		return true, ""
	})
	t.Logf("node %d stopped; leaderships had moved %s after its exit", victim, time.Since(exited).Round(time.Millisecond))

	c.Restart(victim)
	waitPreferredLeaders(t, probe, topic, partitions)
}

// waitPreferredLeaders waits until every node reports each partition of
// topic led by its first replica with the full ISR.
func waitPreferredLeaders(t *testing.T, probe *clusterProbe, topic string, partitions int) {
	t.Helper()
	var last string
	waitForCluster(t, failoverWait, fmt.Sprintf("each partition of %s led by its preferred (first) replica", topic), &last, func() (bool, string) {
		vs, ok := probe.views(allNodes(), topic)
		if !ok {
			return false, "a node did not answer"
		}
		for _, v := range vs {
			if len(v.Topics[topic]) != partitions {
				return false, fmt.Sprintf("node %d lists %d partitions", v.From, len(v.Topics[topic]))
			}
			for p, pv := range v.Topics[topic] {
				if !pv.fullyReplicated(clusterSize) || pv.Leader != pv.Replicas[0] {
					return false, fmt.Sprintf("node %d: partition %d: %s", v.From, p, pv)
				}
			}
		}
		return true, ""
	})
}
