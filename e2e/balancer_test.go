package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterSelfHealing: with strata.balancer.dead.node.timeout.ms at
// 3 s, a node killed for good (SIGKILL, never restarted) has its replicas
// created again on the survivors by the balancer: every partition is back
// to two replicas, both in sync, none on the dead node, and every record
// acknowledged before the crash and after the healing is in the log
// exactly once, at the offset it was acknowledged with (acks=all with
// min.insync.replicas=2: the records after the healing are on both
// replicas).
func TestClusterSelfHealing(t *testing.T) {
	const (
		topic      = "self-healing"
		partitions = 6
		victim     = int32(3)
	)
	c := startCluster(t, "--set", "strata.balancer.interval.ms=200", "--set", "strata.balancer.dead.node.timeout.ms=3000")
	probe := newClusterProbe(t, c)
	createReplicatedTopic(t, clusterAdmin(t, c.Addrs()), topic, partitions, 2, nil) // min.insync.replicas=2
	waitReplicated(t, probe, allNodes(), topic, partitions, 2)

	survivors := otherNodes(victim)
	prod := acksAllClient(t, c.Addrs(survivors...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	acked := produceValues(t, prod, topic, numbered("before", 300))
	onVictim := 0
	for _, pv := range probe.mustView(t, 1, topic).Topics[topic] {
		if slices.Contains(pv.Replicas, victim) {
			onVictim++
		}
	}
	if onVictim == 0 {
		t.Fatalf("node %d holds no replica of %s", victim, topic)
	}

	c.Kill(victim)
	killed := time.Now()
	waitReplicated(t, probe, survivors, topic, partitions, 2)
	t.Logf("%d replicas of node %d created again on nodes %v, every partition in sync, %v after the kill",
		onVictim, victim, survivors, time.Since(killed).Round(time.Millisecond))
	for _, id := range survivors {
		for p, pv := range probe.mustView(t, id, topic).Topics[topic] {
			if slices.Contains(pv.Replicas, victim) {
				t.Fatalf("node %d: partition %d still lists node %d: %s", id, p, victim, pv)
			}
		}
	}

	acked = append(acked, produceValues(t, prod, topic, numbered("after", 300))...)
	read := consumeAll(t, c.Addrs(survivors...), topic, partitions)
	var acks []ackedRecord
	for _, r := range acked {
		acks = append(acks, ackedRecord{key: string(r.Key), partition: r.Partition, offset: r.Offset})
	}
	checkNoAckedLoss(t, acks, read)
	total := 0
	for _, recs := range read {
		total += len(recs)
	}
	if total != len(acks) {
		t.Errorf("the log holds %d records, %d were acknowledged", total, len(acks))
	}
}
