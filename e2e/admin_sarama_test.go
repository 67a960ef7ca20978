package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func ptr(s string) *string { return &s }

// TestAdminSurfaceSarama drives the real binary with sarama's ClusterAdmin,
// an encoder Strata does not share: dynamic broker configs (the cluster
// default and a node's, live and across a restart), Kafka's sources for
// values set by flags, log levels through BROKER_LOGGER, log dirs and
// preferred leader election.
func TestAdminSurfaceSarama(t *testing.T) {
	srv := startServer(t, "--node-id", "1")
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Admin.Timeout = 20 * time.Second
	admin, err := sarama.NewClusterAdmin([]string{srv.addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { admin.Close() }()
	if err := admin.CreateTopic("orders", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}

	describe := func(a sarama.ClusterAdmin, typ sarama.ConfigResourceType, name string, names ...string) map[string]sarama.ConfigEntry {
		t.Helper()
		entries, err := a.DescribeConfig(sarama.ConfigResource{Type: typ, Name: name, ConfigNames: names})
		if err != nil {
			t.Fatalf("describe %v %s: %v", typ, name, err)
		}
		out := map[string]sarama.ConfigEntry{}
		for _, e := range entries {
			out[e.Name] = e
		}
		return out
	}

	// Flags are STATIC_BROKER_CONFIG, Kafka's defaults DEFAULT_CONFIG.
	b := describe(admin, sarama.BrokerResource, "1", "node.id", "log.dirs", "num.partitions")
	if e := b["node.id"]; e.Value != "1" || e.Source != sarama.SourceStaticBroker || !e.ReadOnly {
		t.Errorf("node.id: %+v", e)
	}
	if e := b["log.dirs"]; e.Value != srv.dataDir || e.Source != sarama.SourceStaticBroker {
		t.Errorf("log.dirs: %+v", e)
	}
	if e := b["num.partitions"]; e.Value != "1" || e.Source != sarama.SourceDefault {
		t.Errorf("num.partitions: %+v", e)
	}

	// The cluster default, then the node's own value.
	if err := admin.IncrementalAlterConfig(sarama.BrokerResource, "", map[string]sarama.IncrementalAlterConfigsEntry{
		"log.retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: ptr("86400000")},
	}, false); err != nil {
		t.Fatalf("alter the cluster default: %v", err)
	}
	if err := admin.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"log.cleaner.backoff.ms": ptr("2000")}, false); err != nil {
		t.Fatalf("alter broker 1: %v", err)
	}
	check := func(a sarama.ClusterAdmin) {
		t.Helper()
		topic := describe(a, sarama.TopicResource, "orders", "retention.ms")
		if e := topic["retention.ms"]; e.Value != "86400000" || e.Source != sarama.SourceDynamicDefaultBroker {
			t.Errorf("topic retention.ms: %+v", e)
		}
		b := describe(a, sarama.BrokerResource, "1", "log.cleaner.backoff.ms", "log.retention.ms")
		if e := b["log.cleaner.backoff.ms"]; e.Value != "2000" || e.Source != sarama.SourceDynamicBroker || e.ReadOnly {
			t.Errorf("log.cleaner.backoff.ms: %+v", e)
		}
		if e := b["log.retention.ms"]; e.Value != "86400000" || e.Source != sarama.SourceDynamicDefaultBroker {
			t.Errorf("log.retention.ms: %+v", e)
		}
	}
	check(admin)
	if err := admin.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"log.dirs": ptr("/elsewhere")}, false); err == nil || !strings.Contains(err.Error(), "log.dirs") {
		t.Errorf("altering log.dirs: %v", err)
	}

	// BROKER_LOGGER: request lines appear in the process's log.
	if err := admin.IncrementalAlterConfig(sarama.BrokerLoggerResource, "1", map[string]sarama.IncrementalAlterConfigsEntry{
		"kafka.request.logger": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: ptr("DEBUG")},
	}, false); err != nil {
		t.Fatalf("raise kafka.request.logger: %v", err)
	}
	if e := describe(admin, sarama.BrokerLoggerResource, "1")["kafka.request.logger"]; e.Value != "DEBUG" {
		t.Errorf("kafka.request.logger: %+v", e)
	}
	if _, err := admin.ListTopics(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a DEBUG request line in the server log", func() (bool, string) {
		data, _ := os.ReadFile(srv.log.Name())
		return strings.Contains(string(data), "msg=request api=Metadata"), "no request line yet"
	})

	// Log dirs and a preferred election (nothing to move on one node).
	dirs, err := admin.DescribeLogDirs([]int32{1})
	if err != nil || len(dirs[1]) == 0 || dirs[1][0].Path != srv.dataDir {
		t.Errorf("log dirs: %v %+v", err, dirs)
	}
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{"orders": {0, 1}})
	if err != nil {
		t.Fatalf("elect leaders: %v", err)
	}
	for p, r := range res["orders"] {
		if r.ErrorCode != sarama.ErrElectionNotNeeded {
			t.Errorf("partition %d: %v", p, r.ErrorCode)
		}
	}

	// The dynamic configs survive a restart.
	admin.Close()
	srv.stop()
	srv.restart()
	admin, err = sarama.NewClusterAdmin([]string{srv.addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(admin)
}

// TestAdminSurfaceSaramaCluster drives a three-node cluster with sarama's
// ClusterAdmin and Broker APIs: DescribeCluster v2 (the brokers, the
// controller, a crashed node listed as fenced), DescribeProducers (KIP-664)
// on a partition's leader and follower, and an unclean leader election
// (KIP-460): a partition whose only in-sync replica crashed comes back
// under the out-of-sync replica, losing the records only the dead leader
// had, and takes writes again.
func TestAdminSurfaceSaramaCluster(t *testing.T) {
	const topic = "sarama-unclean"
	c := startCluster(t)
	probe := newClusterProbe(t, c)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0 // DescribeCluster v2, ElectLeaders v2
	cfg.Admin.Timeout = 20 * time.Second
	newAdmin := func(ids ...int32) sarama.ClusterAdmin {
		t.Helper()
		admin, err := sarama.NewClusterAdmin(c.Addrs(ids...), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Close() })
		return admin
	}
	broker := func(id int32) *sarama.Broker {
		t.Helper()
		b := sarama.NewBroker(c.Node(id).Addr)
		if err := b.Open(cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}

	// DescribeCluster: every node at its address, and the controller the
	// nodes' Metadata names.
	admin := newAdmin()
	brokers, controller, err := admin.DescribeCluster()
	if err != nil {
		t.Fatalf("describe cluster: %v", err)
	}
	got := map[int32]string{}
	for _, b := range brokers {
		got[b.ID()] = b.Addr()
	}
	for _, id := range allNodes() {
		if got[id] != c.Node(id).Addr {
			t.Errorf("describe cluster lists node %d at %q, want %s (all: %v)", id, got[id], c.Node(id).Addr, got)
		}
	}
	if len(got) != clusterSize {
		t.Errorf("describe cluster lists %v, want nodes %v", got, allNodes())
	}
	if v := probe.mustView(t, controller); v.Controller != controller {
		t.Errorf("describe cluster names controller %d, node %d's Metadata %d", controller, controller, v.Controller)
	}

	createReplicatedTopic(t, clusterAdmin(t, c.Addrs()), topic, 1, 2, map[string]string{"min.insync.replicas": "1"})
	waitReplicated(t, probe, allNodes(), topic, 1, 2)
	pv, _ := probe.mustView(t, 1, topic).partition(topic, 0)
	leader := pv.Leader
	follower := pv.Replicas[0]
	if follower == leader {
		follower = pv.Replicas[1]
	}

	// DescribeProducers: the leader knows the idempotent producer and its
	// last sequence; the follower refuses.
	first := acksAllClient(t, c.Addrs())
	produceValues(t, first, topic, numbered("kept", 5))
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	pid, epoch, err := first.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	describeProducers := func(id int32) sarama.DescribeProducersResponsePartition {
		t.Helper()
		resp, err := broker(id).DescribeProducers(&sarama.DescribeProducersRequest{
			Topics: []sarama.DescribeProducersRequestTopic{{Name: topic, PartitionIndexes: []int32{0}}},
		})
		if err != nil {
			t.Fatalf("describe producers on node %d: %v", id, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("describe producers on node %d: %+v", id, resp.Topics)
		}
		return resp.Topics[0].Partitions[0]
	}
	checkProducer := func(id int32, lastSequence int32) {
		t.Helper()
		p := describeProducers(id)
		if p.ErrorCode != sarama.ErrNoError || len(p.ActiveProducers) != 1 {
			t.Fatalf("describe producers on node %d: %v %+v", id, p.ErrorCode, p.ActiveProducers)
		}
		got := p.ActiveProducers[0]
		if got.ProducerID != pid || got.ProducerEpoch != int32(epoch) || got.LastSequence != lastSequence || got.CurrentTxnStartOffset != -1 || got.LastTimestamp <= 0 {
			t.Errorf("node %d's producer: %+v, want id %d epoch %d last sequence %d, no transaction", id, got, pid, epoch, lastSequence)
		}
	}
	checkProducer(leader, 4)
	if p := describeProducers(follower); p.ErrorCode != sarama.ErrNotLeaderForPartition {
		t.Errorf("describe producers on follower %d: %v, want NOT_LEADER_OR_FOLLOWER", follower, p.ErrorCode)
	}

	// The follower crashes: it leaves the ISR and DescribeCluster v2 lists
	// it as fenced. The leader alone takes five more records.
	c.Kill(follower)
	alive := otherNodes(follower)
	waitPartition(t, probe, alive, topic, 0, fmt.Sprintf("ISR [%d]", leader), func(pv partitionView) bool {
		return pv.Leader == leader && slices.Equal(pv.ISR, []int32{leader})
	})
	req := sarama.NewDescribeClusterRequest(cfg.Version)
	if req.Version != 2 || !req.IncludeFencedBrokers {
		t.Fatalf("sarama's DescribeCluster for %v: %+v, want v2 with fenced brokers", cfg.Version, req)
	}
	waitFor(t, failoverWait, fmt.Sprintf("node %d fenced in DescribeCluster v2", follower), func() (bool, string) {
		resp, err := broker(leader).DescribeCluster(req)
		if err != nil {
			return false, err.Error()
		}
		fenced := map[int32]bool{}
		for _, b := range resp.Brokers {
			fenced[b.BrokerID] = b.IsFenced
		}
		want := map[int32]bool{1: false, 2: false, 3: false}
		want[follower] = true
		return maps.Equal(fenced, want), fmt.Sprintf("brokers (id: fenced) %v", fenced)
	})
	produceValues(t, first, topic, numbered("lost", 5))
	checkProducer(leader, 9)

	// The leader crashes too (the last node has no raft majority), then the
	// follower comes back: it is out of sync, so the partition has no
	// leader and a preferred election cannot help.
	c.Kill(leader)
	c.Restart(follower)
	alive = otherNodes(leader)
	leaderless := waitPartition(t, probe, alive, topic, 0, "no leader", func(pv partitionView) bool {
		return pv.Leader == -1
	})
	admin = newAdmin(alive...)
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {0}})
	if err != nil {
		t.Fatalf("preferred election: %v", err)
	}
	if r := res[topic][0]; r == nil || r.ErrorCode != sarama.ErrPreferredLeaderNotAvailable {
		t.Errorf("preferred election of a leaderless partition: %+v, want PREFERRED_LEADER_NOT_AVAILABLE", r)
	}

	// The unclean election makes the follower leader with what it has.
	res, err = admin.ElectLeaders(sarama.UncleanElection, map[string][]int32{topic: {0}})
	if err != nil {
		t.Fatalf("unclean election: %v", err)
	}
	if r := res[topic][0]; r == nil || r.ErrorCode != sarama.ErrNoError {
		t.Fatalf("unclean election: %+v", r)
	}
	pv = waitNewLeader(t, probe, alive, topic, 0, leader, leaderless.LeaderEpoch)
	if pv.Leader != follower || !slices.Equal(pv.ISR, []int32{follower}) {
		t.Errorf("after the unclean election: %s, want leader %d, ISR [%d]", pv, follower, follower)
	}
	checkProducer(follower, 4)
	produceValues(t, acksAllClient(t, c.Addrs(alive...)), topic, numbered("after", 5))
	want := append(numbered("kept", 5), numbered("after", 5)...)
	if got := valuesOf(consumeAll(t, c.Addrs(alive...), topic, 1)[0]); !slices.Equal(got, want) {
		t.Errorf("log after the unclean election: %v, want %v", got, want)
	}
}
