package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// Tests of the dynamic metadata quorum (KIP-853): controllers added with
// `strata quorum add-voter` after starting with --controller-join, and
// removed with `strata quorum remove-voter`, checked with DescribeQuorum
// sent as a kmsg request through franz-go.

// describeVoters asks the brokers at addrs for DescribeQuorum and returns
// the leader's answer: its id and voters (nil if no broker answered as the
// raft leader).
func describeVoters(t *testing.T, addrs []string) (int32, []int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, addr := range addrs {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = "__cluster_metadata"
		rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		one, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := req.RequestWith(ctx, one)
		one.Close()
		if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			continue
		}
		p := resp.Topics[0].Partitions[0]
		var voters []int32
		for _, v := range p.CurrentVoters {
			voters = append(voters, v.ReplicaID)
		}
		return p.LeaderID, voters
	}
	return -1, nil
}

func waitVoters(t *testing.T, addrs []string, want []int32) int32 {
	t.Helper()
	var leader int32
	var got []int32
	brokertest.WaitFor(t, failoverWait, fmt.Sprintf("DescribeQuorum voters %v", want), func() bool {
		leader, got = describeVoters(t, addrs)
		return slices.Equal(got, want)
	})
	return leader
}

// joinController launches node id as a controller,broker that joins the
// quorum whose current voters are voters ("id@host:port,…").
func joinController(t *testing.T, id int32, voters string) (*brokertest.Broker, string) {
	t.Helper()
	raft := brokertest.FreeAddr(t)
	b := brokertest.Launch(t, fmt.Sprintf("node %d", id),
		"--node-id", fmt.Sprint(id), "--controllers", voters, "--controller-listen", raft, "--controller-join",
		"--set", "group.initial.rebalance.delay.ms=0")
	return b, raft
}

func quorumCLI(t *testing.T, addrs []string, args ...string) string {
	t.Helper()
	res := mustRun(t, time.Minute, "", strataBin, append(append([]string{"quorum"}, args...), "-b", strings.Join(addrs, ","))...)
	return res.stdout
}

// TestQuorumReplaceLostController: one of three controllers is lost for
// good (SIGKILL, data directory wiped); a fresh node joins and is added as
// a voter, the lost one removed, while an acks=all producer writes. No
// acknowledged record is lost, and the new quorum survives another
// original's restart.
func TestQuorumReplaceLostController(t *testing.T) {
	const topic = "quorum-replace"
	c := startCluster(t)
	adm := clusterAdmin(t, c.Addrs())
	createReplicatedTopic(t, adm, topic, 2, 3, nil)
	sp := startSteadyProducer(t, c.Addrs(1, 2), topic, 2, 5*time.Millisecond, 16)
	waitVoters(t, c.Addrs(), []int32{1, 2, 3})

	c.Kill(3)
	if err := os.RemoveAll(c.Node(3).DataDir); err != nil {
		t.Fatal(err)
	}
	voters := fmt.Sprintf("1@%s,2@%s", c.RaftAddr(1), c.RaftAddr(2))
	node4, raft4 := joinController(t, 4, voters)
	live := c.Addrs(1, 2)

	out := quorumCLI(t, live, "add-voter", "--id", "4", "--address", raft4)
	if !strings.Contains(out, "Added controller 4") {
		t.Fatalf("add-voter printed %q", out)
	}
	if err := node4.AwaitReady(failoverWait); err != nil {
		t.Fatal(err)
	}
	waitVoters(t, live, []int32{1, 2, 3, 4})
	out = quorumCLI(t, live, "remove-voter", "--id", "3")
	if !strings.Contains(out, "Removed KRaft controller 3") {
		t.Fatalf("remove-voter printed %q", out)
	}
	all := append(live, node4.Addr)
	waitVoters(t, all, []int32{1, 2, 4})
	res := runCmd(t, time.Minute, "", strataBin, "quorum", "remove-voter", "--id", "3", "-b", strings.Join(live, ","))
	if res.exitCode == 0 || !strings.Contains(res.stderr, "VOTER_NOT_FOUND") {
		t.Fatalf("removing 3 again: want a non-zero exit naming VOTER_NOT_FOUND, got %s", res)
	}

	// Node 4 votes: with node 2 down, 1 and 4 are a majority of {1, 2, 4}
	// and elect a leader that commits (the topic's partitions, on 1, 2
	// and 3, wait for node 2 to take acks=all writes again).
	c.Kill(2)
	pair := []string{c.Node(1).Addr, node4.Addr}
	if leader := waitVoters(t, pair, []int32{1, 2, 4}); leader != 1 && leader != 4 {
		t.Fatalf("leader %d with node 2 down", leader)
	}
	createReplicatedTopic(t, clusterAdmin(t, pair), "quorum-replace-check", 1, 2, map[string]string{"min.insync.replicas": "1"})
	c.Restart(2)
	waitVoters(t, all, []int32{1, 2, 4})
	before := len(sp.acked())
	brokertest.WaitFor(t, failoverWait, "acks after node 2's restart", func() bool { return len(sp.acked()) > before+50 })

	acks, _, _ := sp.stop(t)
	if len(acks) == 0 {
		t.Fatal("no record acknowledged")
	}
	checkNoAckedLoss(t, acks, consumeAll(t, c.Addrs(1, 2), topic, 2))
}

// TestQuorumGrowFromOne: a one-controller cluster grows to three with
// add-voter; it then survives the first node's loss, and the first node,
// restarted with its original one-voter --controllers, follows the
// membership its log holds.
func TestQuorumGrowFromOne(t *testing.T) {
	brokertest.UseBinary(strataBin)
	c := brokertest.StartCluster(t, 1, "--set", "group.initial.rebalance.delay.ms=0")
	voters := fmt.Sprintf("1@%s", c.RaftAddr(1))
	addrs := c.Addrs(1)
	nodes := map[int32]*brokertest.Broker{}
	for _, id := range []int32{2, 3} {
		b, raft := joinController(t, id, voters)
		out := quorumCLI(t, addrs, "add-voter", "--id", fmt.Sprint(id), "--address", raft)
		if !strings.Contains(out, fmt.Sprintf("Added controller %d", id)) {
			t.Fatalf("add-voter printed %q", out)
		}
		if err := b.AwaitReady(failoverWait); err != nil {
			t.Fatal(err)
		}
		nodes[id] = b
		addrs = append(addrs, b.Addr)
	}
	waitVoters(t, addrs, []int32{1, 2, 3})
	adm := clusterAdmin(t, addrs[1:])
	createReplicatedTopic(t, adm, "grown", 1, 3, nil)

	c.Kill(1)
	rest := []string{nodes[2].Addr, nodes[3].Addr}
	leader := waitVoters(t, rest, []int32{1, 2, 3})
	if leader != 2 && leader != 3 {
		t.Fatalf("leader %d with node 1 down", leader)
	}
	createReplicatedTopic(t, clusterAdmin(t, rest), "grown-without-1", 1, 2, map[string]string{"min.insync.replicas": "1"})
	c.Restart(1)
	waitVoters(t, addrs, []int32{1, 2, 3})
	brokertest.WaitFor(t, failoverWait, "node 1 to see the topic made without it", func() bool {
		md, err := clusterAdmin(t, c.Addrs(1)).ListTopics(context.Background(), "grown-without-1")
		return err == nil && md.Has("grown-without-1")
	})
}

// TestQuorumObserverLearnsControllers: a broker-only node started with
// --controllers naming node 1 alone keeps following the metadata log after
// node 4 joined and node 1 was removed and killed: it learns node 4's
// address from the log (the membership record) and reconnects there.
func TestQuorumObserverLearnsControllers(t *testing.T) {
	brokertest.UseBinary(strataBin)
	c := brokertest.StartCluster(t, 3, "--set", "group.initial.rebalance.delay.ms=0")
	obs := brokertest.Launch(t, "node 10", "--node-id", "10", "--roles", "broker",
		"--controllers", "1@"+c.RaftAddr(1), "--set", "group.initial.rebalance.delay.ms=0")
	if err := obs.AwaitReady(failoverWait); err != nil {
		t.Fatal(err)
	}
	voters := fmt.Sprintf("1@%s,2@%s,3@%s", c.RaftAddr(1), c.RaftAddr(2), c.RaftAddr(3))
	b4, raft4 := joinController(t, 4, voters)
	if out := quorumCLI(t, c.Addrs(1, 2, 3), "add-voter", "--id", "4", "--address", raft4); !strings.Contains(out, "Added controller 4") {
		t.Fatalf("add-voter printed %q", out)
	}
	if err := b4.AwaitReady(failoverWait); err != nil {
		t.Fatal(err)
	}
	rest := append(c.Addrs(2, 3), b4.Addr)
	if out := quorumCLI(t, rest, "remove-voter", "--id", "1"); !strings.Contains(out, "Removed KRaft controller 1") {
		t.Fatalf("remove-voter printed %q", out)
	}
	waitVoters(t, rest, []int32{2, 3, 4})
	c.Kill(1)

	createReplicatedTopic(t, clusterAdmin(t, rest), "after-node-1", 1, 2, map[string]string{"min.insync.replicas": "1"})
	// Node 10 answers Metadata from the log it applied.
	cl, err := kgo.NewClient(kgo.SeedBrokers(obs.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	brokertest.WaitFor(t, failoverWait, "node 10 to apply the topic made after node 1 left", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("after-node-1")
		req.AllowAutoTopicCreation = false
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
		return err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) == 1
	})
}
