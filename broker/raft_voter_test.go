package broker

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func addRaftVoterRequest(id int32, raftAddr string) *kmsg.AddRaftVoterRequest {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = id, [16]byte{byte(id), 1}, 30000
	host, port, _ := net.SplitHostPort(raftAddr)
	p, _ := strconv.Atoi(port)
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(p)
	req.Listeners = append(req.Listeners, l)
	return req
}

// quorumVoters asks every broker of ids for DescribeQuorum and returns the
// leader's id and its voters (nil until one node answers as the leader).
func quorumVoters(ctx context.Context, cl *kgo.Client, ids []int32) (int32, []int32) {
	for _, id := range ids {
		r, err := describeQuorumRequest("__cluster_metadata").RequestWith(ctx, cl.Broker(int(id)))
		if err != nil || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].ErrorCode != 0 {
			continue
		}
		var voters []int32
		for _, v := range r.Topics[0].Partitions[0].CurrentVoters {
			voters = append(voters, v.ReplicaID)
		}
		var nodes []int32
		for _, n := range r.Nodes {
			nodes = append(nodes, n.NodeID)
		}
		if !slices.Equal(voters, nodes) {
			return -1, nil // the v2 nodes list must name the same voters
		}
		return r.Topics[0].Partitions[0].LeaderID, voters
	}
	return -1, nil
}

// TestRaftVoterAPIs: a fourth node started with --controller-join is added
// to a three-voter quorum with AddRaftVoter (kmsg through kgo), shows up
// among DescribeQuorum's voters, and is removed again, both sent to a
// follower, which forwards them to the leader; the error paths answer
// with Kafka's codes.
func TestRaftVoterAPIs(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	cl := c.client()
	ids := []int32{1, 2, 3}
	var leader int32
	waitUntil(t, 20*time.Second, "a leader describing three voters", func() bool {
		var voters []int32
		leader, voters = quorumVoters(ctx, cl, ids)
		return slices.Equal(voters, ids)
	})
	follower := ids[(slices.Index(ids, leader)+1)%3]

	// Error paths.
	if r, err := addRaftVoterRequest(2, c.node(2).cfg.ControllerListen).RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.DuplicateVoter.Code {
		t.Fatalf("adding voter 2 again: %v %+v", err, r)
	}
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.VoterID = 99
	if r, err := rm.RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("removing unknown voter 99: %v %+v", err, r)
	}
	// A follower forwards to the leader (Kafka's brokers forward to the
	// active controller): the leader's answer comes back.
	if r, err := rm.RequestWith(ctx, cl.Broker(int(follower))); err != nil || r.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("RemoveRaftVoter(99) through follower %d: %v %+v", follower, err, r)
	}
	if r, err := addRaftVoterRequest(2, c.node(2).cfg.ControllerListen).RequestWith(ctx, cl.Broker(int(follower))); err != nil || r.ErrorCode != kerr.DuplicateVoter.Code {
		t.Fatalf("AddRaftVoter(2) through follower %d: %v %+v", follower, err, r)
	}
	// A request that came forwarded (from a peer) is not forwarded again.
	peer, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.ClientID(peerClientID))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	rm.VoterID = leader
	r, err := rm.RequestWith(ctx, peer.Broker(int(follower)))
	if err != nil || r.ErrorCode != kerr.NotLeaderForPartition.Code || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "leader is node "+strconv.Itoa(int(leader))) {
		t.Fatalf("a peer's RemoveRaftVoter to follower %d: %v %+v", follower, err, r)
	}
	other := "other-cluster"
	add := addRaftVoterRequest(4, freeLoopbackAddr(t))
	add.ClusterID = &other
	if r, err := add.RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.InconsistentClusterID.Code {
		t.Fatalf("another cluster id: %v %+v", err, r)
	}
	noListener := kmsg.NewPtrAddRaftVoterRequest()
	noListener.VoterID = 4
	if r, err := noListener.RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("no listener: %v %+v", err, r)
	}

	// Node 4 joins: it starts (waiting) before it is added.
	cfg := DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.Listen, cfg.HTTPListen = 4, t.TempDir(), freeLoopbackAddr(t), ""
	cfg.ControllerQuorumVoters = c.node(1).cfg.ControllerQuorumVoters
	cfg.ControllerListen, cfg.ControllerJoin, cfg.ControllerJoinTimeout = freeLoopbackAddr(t), true, 30*time.Second
	joiner := &testBroker{t: t, cfg: cfg}
	started := make(chan error, 1)
	go func() { started <- joiner.tryStart() }()
	t.Cleanup(func() {
		if err := <-started; err == nil {
			joiner.stop()
		}
	})
	ar, err := addRaftVoterRequest(4, cfg.ControllerListen).RequestWith(ctx, cl.Broker(int(follower)))
	if err != nil || ar.ErrorCode != 0 {
		t.Fatalf("AddRaftVoter(4) through follower %d: %v %+v", follower, err, ar)
	}
	select {
	case err := <-started:
		started <- err // for the cleanup
		if err != nil {
			t.Fatalf("node 4: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("node 4 did not start after it was added")
	}
	waitUntil(t, 20*time.Second, "DescribeQuorum listing voter 4", func() bool {
		_, voters := quorumVoters(ctx, cl, ids)
		return slices.Equal(voters, []int32{1, 2, 3, 4})
	})
	if r, err := addRaftVoterRequest(4, cfg.ControllerListen).RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.DuplicateVoter.Code {
		t.Fatalf("adding voter 4 twice: %v %+v", err, r)
	}

	// A wrong directory id does not find it; the right one removes it.
	rm = kmsg.NewPtrRemoveRaftVoterRequest()
	rm.VoterID, rm.VoterDirectoryID = 4, [16]byte{9}
	if r, err := rm.RequestWith(ctx, cl.Broker(int(leader))); err != nil || r.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("removing voter 4 with another directory id: %v %+v", err, r)
	}
	rm.VoterDirectoryID = [16]byte{4, 1}
	if r, err := rm.RequestWith(ctx, cl.Broker(int(follower))); err != nil || r.ErrorCode != 0 {
		t.Fatalf("RemoveRaftVoter(4) through follower %d: %v %+v", follower, err, r)
	}
	waitUntil(t, 20*time.Second, "DescribeQuorum without voter 4", func() bool {
		_, voters := quorumVoters(ctx, cl, ids)
		return slices.Equal(voters, ids)
	})
	// The quorum still commits: a topic can be created.
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "after-removal", 1, 3
	ct.Topics = append(ct.Topics, rt)
	if r, err := ct.RequestWith(ctx, cl); err != nil || r.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic after the removal: %v %+v", err, r)
	}
}
