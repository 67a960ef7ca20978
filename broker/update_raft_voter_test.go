package broker

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func updateRaftVoterRequest(id int32, epoch int32, dir [16]byte, listeners ...string) *kmsg.UpdateRaftVoterRequest {
	req := kmsg.NewPtrUpdateRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID, req.CurrentLeaderEpoch = id, dir, epoch
	for i, addr := range listeners {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(p)
		if i > 0 {
			l.Name = "EXTRA" + strconv.Itoa(i)
		}
		req.Listeners = append(req.Listeners, l)
	}
	return req
}

// quorumLeaderEpoch asks the nodes of ids for DescribeQuorum and returns
// the leader's answer (nil until one answers as the leader).
func quorumLeaderEpoch(ctx context.Context, cl *kgo.Client, ids []int32) (*kmsg.DescribeQuorumResponse, int32, int32) {
	for _, id := range ids {
		r, err := describeQuorumRequest("__cluster_metadata").RequestWith(ctx, cl.Broker(int(id)))
		if err != nil || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].ErrorCode != 0 {
			continue
		}
		p := r.Topics[0].Partitions[0]
		return r, p.LeaderID, p.LeaderEpoch
	}
	return nil, -1, -1
}

// TestUpdateRaftVoter: a controller restarted on a new raft address is
// cut off until UpdateRaftVoter (kmsg through kgo) records the address;
// then it catches up, DescribeQuorum v2 lists its announced listeners and
// directory id, and it votes (the quorum commits with the third node
// down). The error paths answer with Kafka's codes and the current leader.
func TestUpdateRaftVoter(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	cl := c.client()
	ids := []int32{1, 2, 3}
	var leader, epoch int32
	waitUntil(t, 20*time.Second, "a leader describing three voters", func() bool {
		var voters []int32
		leader, voters = quorumVoters(ctx, cl, ids)
		_, _, epoch = quorumLeaderEpoch(ctx, cl, ids)
		return slices.Equal(voters, ids) && epoch > 0
	})
	moved := ids[(slices.Index(ids, leader)+1)%3]
	other := 6 - leader - moved
	dir := [16]byte{byte(moved), 1}
	leaderAddr := c.node(leader).cfg.Listen

	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil || !slices.ContainsFunc(av.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == kmsg.UpdateRaftVoter.Int16() && k.MinVersion == 0 && k.MaxVersion == 0
	}) {
		t.Fatalf("ApiVersions does not advertise UpdateRaftVoter v0: %v", err)
	}

	// Error paths.
	same := c.node(moved).cfg.ControllerListen
	check := func(what string, to int32, req *kmsg.UpdateRaftVoterRequest, want int16) *kmsg.UpdateRaftVoterResponse {
		t.Helper()
		r, err := req.RequestWith(ctx, cl.Broker(int(to)))
		if err != nil || r.ErrorCode != want {
			t.Fatalf("%s: %v %+v, want %s", what, err, r, kerr.ErrorForCode(want))
		}
		return r
	}
	r := check("to a follower", other, updateRaftVoterRequest(moved, epoch, dir, same), kerr.NotLeaderForPartition.Code)
	if r.CurrentLeader.LeaderID != leader || r.CurrentLeader.LeaderEpoch != epoch || net.JoinHostPort(r.CurrentLeader.Host, strconv.Itoa(int(r.CurrentLeader.Port))) != leaderAddr {
		t.Fatalf("a follower's CurrentLeader %+v, want %d epoch %d at %s", r.CurrentLeader, leader, epoch, leaderAddr)
	}
	check("an old epoch", leader, updateRaftVoterRequest(moved, epoch-1, dir, same), kerr.FencedLeaderEpoch.Code)
	check("a future epoch", leader, updateRaftVoterRequest(moved, epoch+1, dir, same), kerr.UnknownLeaderEpoch.Code)
	check("no directory id", leader, updateRaftVoterRequest(moved, epoch, [16]byte{}, same), kerr.InvalidRequest.Code)
	check("no listener", leader, updateRaftVoterRequest(moved, epoch, dir), kerr.InvalidRequest.Code)
	bad := updateRaftVoterRequest(moved, epoch, dir, same)
	bad.KRaftVersionFeature.MinSupportedVersion, bad.KRaftVersionFeature.MaxSupportedVersion = 1, 1
	check("kraft.version 1 only", leader, bad, kerr.InvalidRequest.Code)
	bad.KRaftVersionFeature.MinSupportedVersion, bad.KRaftVersionFeature.MaxSupportedVersion = 1, 0
	check("an inverted kraft.version range", leader, bad, kerr.InvalidRequest.Code)
	check("an unknown voter", leader, updateRaftVoterRequest(9, epoch, [16]byte{9}, freeLoopbackAddr(t)), kerr.VoterNotFound.Code)
	otherCluster := "other-cluster"
	oc := updateRaftVoterRequest(moved, epoch, dir, same)
	oc.ClusterID = &otherCluster
	check("another cluster id", leader, oc, kerr.InconsistentClusterID.Code)
	r = check("the leader's answer", leader, updateRaftVoterRequest(9, epoch, [16]byte{9}, same), kerr.VoterNotFound.Code)
	if r.CurrentLeader.LeaderID != leader || r.CurrentLeader.LeaderEpoch != epoch {
		t.Fatalf("the leader's CurrentLeader %+v", r.CurrentLeader)
	}

	// The moved node restarts on a new raft address nobody dials yet.
	nb := c.node(moved)
	nb.stop()
	newRaft, extra := freeLoopbackAddr(t), freeLoopbackAddr(t)
	nb.cfg.ControllerListen = newRaft
	started := make(chan error, 1)
	go func() { started <- nb.tryStart() }()
	t.Cleanup(func() {
		if err := <-started; err == nil {
			nb.stop()
		}
	})
	waitUntil(t, 20*time.Second, "UpdateRaftVoter accepted", func() bool {
		_, l, e := quorumLeaderEpoch(ctx, cl, []int32{leader, other})
		if l < 0 {
			return false
		}
		r, err := updateRaftVoterRequest(moved, e, dir, newRaft, extra).RequestWith(ctx, cl.Broker(int(l)))
		if err != nil {
			return false
		}
		switch r.ErrorCode {
		case 0:
			return true
		case kerr.NotLeaderForPartition.Code, kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
			return false // a leader change in between
		}
		t.Fatalf("UpdateRaftVoter(%d, %s): %v", moved, newRaft, kerr.ErrorForCode(r.ErrorCode))
		return false
	})
	select {
	case err := <-started:
		started <- err // for the cleanup
		if err != nil {
			t.Fatalf("node %d on its new address: %v", moved, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("node %d did not start after its address was recorded", moved)
	}
	waitUntil(t, 20*time.Second, "DescribeQuorum listing the new endpoints", func() bool {
		resp, _, _ := quorumLeaderEpoch(ctx, cl, ids)
		if resp == nil {
			return false
		}
		i := slices.IndexFunc(resp.Nodes, func(n kmsg.DescribeQuorumResponseNode) bool { return n.NodeID == moved })
		if i < 0 || len(resp.Nodes[i].Listeners) != 2 {
			return false
		}
		var got []string
		for _, l := range resp.Nodes[i].Listeners {
			got = append(got, l.Name+"="+net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
		}
		if !slices.Equal(got, []string{"CONTROLLER=" + newRaft, "EXTRA1=" + extra}) {
			t.Fatalf("node %d listed with %v", moved, got)
		}
		v := resp.Topics[0].Partitions[0].CurrentVoters
		j := slices.IndexFunc(v, func(s kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool { return s.ReplicaID == moved })
		return j >= 0 && v[j].ReplicaDirectoryID == dir && v[j].LastCaughtUpTimestamp > 0
	})
	_, l, e := quorumLeaderEpoch(ctx, cl, ids)
	check("another directory id", l, updateRaftVoterRequest(moved, e, [16]byte{7}, newRaft), kerr.VoterNotFound.Code)

	// The moved node votes: the quorum commits with the third node down.
	c.node(other).stop()
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "after-move", 1, 1
	ct.Topics = append(ct.Topics, rt)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if r, err := ct.RequestWith(cctx, cl); err != nil || r.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic with node %d down: %v %+v", other, err, r)
	}
}
