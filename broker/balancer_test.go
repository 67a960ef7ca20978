package broker

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/metadata/balancer"
)

// TestBalancerAddAndDecommission: three nodes on two racks with 30
// partitions; a fourth node joins and the balancer gives it its share of
// replicas while a producer writes (acks=all) — replica counts within one,
// every partition on both racks; then node 2 is decommissioned
// (strata.balancer.decommission.nodes, set with kadm as a cluster-default
// dynamic config) and drained of every replica and leadership, the racks
// still spread. No acknowledged record is lost.
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
	var replicas map[int32]int
	waitUntil(t, 90*time.Second, "node 4 holding its share", func() bool {
		var spread bool
		replicas, _, spread = layout()
		if !spread || len(replicas) != 4 {
			return false
		}
		lo, hi := 60, 0
		for _, n := range replicas {
			lo, hi = min(lo, n), max(hi, n)
		}
		return hi-lo <= 1
	})
	t.Logf("after node 4 joined: replicas per node %v", replicas)

	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: decommissionConfig, Value: ptr("2")}}); err != nil {
		t.Fatal(err)
	}
	var leaders map[int32]int
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
	t.Logf("%d records acknowledged, all read back; %v balancer moves", len(acked), moves)
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
