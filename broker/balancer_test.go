package broker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/metadata/balancer"
)

// TestBalancerAddAndDecommission: three nodes on two racks with 30
// partitions; a fourth node joins and the balancer gives it its share of
// replicas and leaderships while a producer writes (acks=all, idempotent)
// and a consumer reads — replica counts and leader counts within one,
// every partition on both racks; then node 2 is decommissioned
// (strata.balancer.decommission.nodes, set with kadm as a cluster-default
// dynamic config) and drained of every replica and leadership, the racks
// still spread. The consumer, reading all along, sees every acknowledged
// record, each at one offset (it may read one twice, at-least-once, but
// the log holds no record twice); so does a fresh read afterwards.
func TestBalancerAddAndDecommission(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b"}
	tune := func(cfg *Config) {
		cfg.BrokerRack = racks[cfg.NodeID]
		cfg.BalancerEnable = true
		cfg.BalancerIntervalMs = 200
		cfg.BalancerMaxMoves = 4
		cfg.LeaderImbalanceCheckIntervalSeconds = 1
	}
	c := startTestCluster(t, 3, tune)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 30, 2, nil, "bal"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.MetadataMinAge(250*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	sp := startSteadyProducer(prod, "bal", 3*time.Millisecond)
	waitUntil(t, 20*time.Second, "acks flowing", func() bool { return sp.ackedCount() > 100 })
	cons := startPositionsConsumer(c.client(kgo.ConsumeTopics("bal"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond)))
	defer cons.stop()

	c.addBrokerOnly(4, tune)

	// layout is replicas and leaders per node, and whether every
	// partition spans both racks with no reassignment running.
	layout := func() (replicas, leaders map[int32]int, spread bool) {
		md, err := adm.Metadata(ctx, "bal")
		if err != nil || len(md.Topics["bal"].Partitions) != 30 {
			return nil, nil, false
		}
		replicas, leaders, spread = map[int32]int{}, map[int32]int{}, true
		for _, p := range md.Topics["bal"].Partitions {
			leaders[p.Leader]++
			seen := map[string]bool{}
			for _, r := range p.Replicas {
				replicas[r]++
				seen[racks[r]] = true
			}
			spread = spread && len(p.Replicas) == 2 && len(seen) == 2
		}
		ras, err := adm.ListPartitionReassignments(ctx, nil)
		return replicas, leaders, spread && err == nil && len(ras) == 0
	}
	// withinOne reports whether each of nodes 1..4 has within one of the
	// others.
	withinOne := func(perNode map[int32]int) bool {
		lo, hi := 60, 0
		for id := int32(1); id <= 4; id++ {
			lo, hi = min(lo, perNode[id]), max(hi, perNode[id])
		}
		return hi-lo <= 1
	}
	var replicas, leaders map[int32]int
	waitUntil(t, 90*time.Second, "node 4 holding its share of replicas and leaderships", func() bool {
		var spread bool
		replicas, leaders, spread = layout()
		return spread && withinOne(replicas) && withinOne(leaders)
	})
	t.Logf("after node 4 joined: replicas per node %v, leaders %v", replicas, leaders)

	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: decommissionConfig, Value: ptr("2")}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 90*time.Second, "node 2 drained", func() bool {
		var spread bool
		replicas, leaders, spread = layout()
		return spread && replicas[2] == 0 && leaders[2] == 0
	})
	t.Logf("after decommissioning node 2: replicas %v, leaders %v", replicas, leaders)
	if replicas[1] != 30 {
		t.Errorf("node 1, alone on rack a, holds %d replicas, want all 30", replicas[1])
	}

	moves := 0.0
	for _, nb := range c.nodes {
		mfs, err := nb.srv.metrics.registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "strata_balancer_moves_total" {
				for _, m := range mf.GetMetric() {
					moves += m.GetCounter().GetValue()
				}
			}
		}
	}
	if moves == 0 {
		t.Error("strata_balancer_moves_total is 0 on every node")
	}

	acked := sp.finish()
	waitUntil(t, 30*time.Second, "the concurrent consumer reading every acknowledged record", func() bool {
		return len(cons.missing(acked)) == 0
	})
	cons.stop()
	if dups := cons.atTwoOffsets(); len(dups) > 0 {
		t.Errorf("%d records in the log twice, first %s", len(dups), dups[0])
	}
	got := consumeKeys(t, c.client(), "bal", len(acked))
	var lost []string
	for k := range acked {
		if !got[k] {
			lost = append(lost, k)
		}
	}
	if len(lost) > 0 {
		slices.Sort(lost)
		t.Errorf("%d acknowledged records lost, first %s", len(lost), lost[0])
	}
	t.Logf("%d records acknowledged, all read back, by the consumer reading during the moves too (%d read twice at the same offset); %v balancer moves",
		len(acked), cons.rereads(), moves)
}

// positionsConsumer polls a client in the background and remembers where
// it read each key (partition and offset).
type positionsConsumer struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     struct {
		sync.Mutex
		at      map[string][]recordPosition
		rereads int
	}
}

type recordPosition struct {
	partition int32
	offset    int64
}

func startPositionsConsumer(cl *kgo.Client) *positionsConsumer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &positionsConsumer{cancel: cancel, done: make(chan struct{})}
	c.mu.at = map[string][]recordPosition{}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				pos := recordPosition{r.Partition, r.Offset}
				c.mu.Lock()
				defer c.mu.Unlock()
				if slices.Contains(c.mu.at[string(r.Key)], pos) {
					c.mu.rereads++
					return
				}
				c.mu.at[string(r.Key)] = append(c.mu.at[string(r.Key)], pos)
			})
		}
	}()
	return c
}

// stop ends the polling and waits for it (idempotent).
func (c *positionsConsumer) stop() {
	c.cancel()
	<-c.done
}

// missing lists the keys of want not read yet.
func (c *positionsConsumer) missing(want map[string]bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range want {
		if len(c.mu.at[k]) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// atTwoOffsets lists the keys read at more than one position, sorted.
func (c *positionsConsumer) atTwoOffsets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, at := range c.mu.at {
		if len(at) > 1 {
			out = append(out, fmt.Sprintf("%s at %v", k, at))
		}
	}
	slices.Sort(out)
	return out
}

func (c *positionsConsumer) rereads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.rereads
}

// TestBalancerLoadsMeasureTraffic: the loads the balancer gathers carry a
// partition's bytes-in rate once a producer wrote to it and its bytes-out
// rate once a consumer read it; the follower's replica fetches are not
// bytes out (the planner derives replication from the bytes in).
func TestBalancerLoadsMeasureTraffic(t *testing.T) {
	c := startTestCluster(t, 2)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 1, 2, nil, "traffic"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	s := c.node(1).srv
	run := &balancerRun{s: s, cluster: newClusterGroups(s.interBrokerSeed, s.interBrokerOpts())}
	defer run.cluster.close()
	id := balancer.PartitionID{Topic: "traffic", Partition: 0}
	load := func() balancer.Load {
		t.Helper()
		loads, err := run.loads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return loads[id]
	}
	// Both replicas in place, so the first round sees both nodes' counters.
	waitUntil(t, 20*time.Second, "both replicas in sync", func() bool {
		leader, isr := leaderOf(ctx, adm, "traffic", 0)
		return leader > 0 && len(isr) == 2
	})
	if l := load(); l.InRate != 0 || l.OutRate != 0 {
		t.Fatalf("first round %+v: rates before any traffic", l)
	}

	const n = 100
	value := bytes.Repeat([]byte("v"), 1024)
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("traffic"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	l := load()
	if l.InRate <= 0 || l.OutRate != 0 || l.Bytes < n*1024 {
		t.Fatalf("after producing (replicated to both nodes): %+v, want an in-rate, no out-rate and %d bytes or more", l, n*1024)
	}

	consumeKeys(t, c.client(), "traffic", n)
	l = load()
	if l.OutRate <= 0 || l.InRate != 0 {
		t.Fatalf("after a consumer read: %+v, want an out-rate and no in-rate", l)
	}
	t.Logf("after reading: %+v", l)
}
