package broker

// DescribeQuorum (key 55), v0-2 (KIP-595, KIP-836, KIP-853's v2 nodes):
// the metadata quorum (topic __cluster_metadata, partition 0) as its raft
// leader knows it: leader, epoch (the raft term), high watermark (the
// commit index), each voter's and each observer's log end (its match
// index), when the leader last heard from it and, when it holds every
// committed entry, that time as last caught up. Offsets are raft indexes.
//   - Only the raft leader knows the followers' progress: another node
//     (a follower or a broker-only node) forwards the request to the
//     leader's Kafka listener, after its own ACL check, and returns the
//     leader's answer, as Kafka's brokers forward it to the active
//     controller (forwardToQuorumLeader in 80_add_raft_voter.go: once,
//     never a request that came forwarded). It answers
//     NOT_LEADER_OR_FOLLOWER itself, with the leader's id (-1 when none is
//     known) and, v2, a message naming it, when no leader is known, the
//     leader is a controller-only node (no Kafka listener) or it cannot be
//     reached.
//   - Observers are the broker-only nodes: those streaming from the leader
//     with their position; those following another controller with their
//     last heartbeat as last fetch and log_end_offset -1 (unknown here).
//   - v2 lists the voters' endpoints: the listeners a voter announced with
//     UpdateRaftVoter, else its raft address as listener CONTROLLER; the
//     membership the metadata log holds once AddRaftVoter/RemoveRaftVoter/
//     UpdateRaftVoter changed it, --controllers before; a controller
//     AddRaftVoter is still catching up (a raft learner) is listed among
//     the observers.
//   - Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.DescribeQuorum, 0, 2, handleDescribeQuorum)
	checksACLs(kmsg.DescribeQuorum)
}

// metadataTopicName is KRaft's name of the metadata log.
const metadataTopicName = "__cluster_metadata"

func handleDescribeQuorum(rc *requestContext, req *kmsg.DescribeQuorumRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !rc.authorizeCluster(acl.OpDescribe) {
		resp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
		return resp
	}
	node, isNode := rc.s.member.(*metadata.Node)
	if !isNode || !node.IsLeader() {
		fwdReq := *req // kgo sets the version it negotiates with the leader
		if fwd, ok := rc.forwardToQuorumLeader(&fwdReq, describeQuorumForwardTimeout); ok {
			if r, ok := fwd.(*kmsg.DescribeQuorumResponse); ok {
				r.Version = req.Version // answered in the client's version
				return rc.countDescribeQuorumErrors(r)
			}
		}
	}
	var status metadata.QuorumStatus
	var statusErr error
	if isNode {
		ctx, cancel := context.WithTimeout(rc.s.ctx, 5*time.Second)
		status, statusErr = node.QuorumStatus(ctx)
		cancel()
	}
	for _, rt := range req.Topics {
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDescribeQuorumResponseTopicPartition()
			p.Partition = rp.Partition
			p.LeaderID, p.LeaderEpoch, p.HighWatermark = rc.s.member.LeaderID(), -1, -1
			switch {
			case rt.Topic != metadataTopicName || rp.Partition != 0:
				p.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
			case !isNode || statusErr != nil || !status.IsLeader:
				p.ErrorCode = rc.countError(kerr.NotLeaderForPartition.Code)
				if status.Term > 0 {
					p.LeaderEpoch = int32(status.Term)
				}
			default:
				p.LeaderID, p.LeaderEpoch, p.HighWatermark = status.Leader, int32(status.Term), int64(status.Commit)
				p.CurrentVoters = replicaStates(status.Voters)
				p.Observers = append(replicaStates(status.Observers), rc.otherObservers(status)...)
			}
			if p.ErrorCode != 0 && req.Version >= 2 {
				msg := kerr.ErrorForCode(p.ErrorCode).Error()
				if p.ErrorCode == kerr.NotLeaderForPartition.Code {
					msg = rc.notLeaderMessage()
				}
				p.ErrorMessage = kmsg.StringPtr(msg)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if req.Version >= 2 {
		flags, _ := metadata.ParseVoters(rc.s.cfg.ControllerQuorumVoters)
		members := metadata.MembersOf(rc.s.clusterState(), flags)
		if isNode {
			members = node.Members()
		}
		// The membership the log holds (AddRaftVoter, RemoveRaftVoter,
		// UpdateRaftVoter), --controllers before.
		for _, m := range members {
			if m.Learner {
				continue
			}
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = m.ID
			ls := m.Listeners
			if len(ls) == 0 {
				ls = []cluster.ControllerListener{{Name: "CONTROLLER", Addr: m.Addr}}
			}
			for _, ml := range ls {
				host, portStr, err := net.SplitHostPort(ml.Addr)
				port, perr := strconv.ParseUint(portStr, 10, 16)
				if err != nil || perr != nil {
					continue
				}
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = ml.Name, host, uint16(port)
				n.Listeners = append(n.Listeners, l)
			}
			if len(n.Listeners) > 0 {
				resp.Nodes = append(resp.Nodes, n)
			}
		}
	}
	return resp
}

// describeQuorumForwardTimeout bounds waiting for the quorum leader's
// answer to a forwarded DescribeQuorum; past it this node answers
// NOT_LEADER_OR_FOLLOWER itself.
const describeQuorumForwardTimeout = 10 * time.Second

// countDescribeQuorumErrors records the error codes of the leader's answer
// to a forwarded request in this node's errors metric, as if answered
// here, and returns the answer.
func (rc *requestContext) countDescribeQuorumErrors(resp *kmsg.DescribeQuorumResponse) *kmsg.DescribeQuorumResponse {
	rc.countError(resp.ErrorCode)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			rc.countError(p.ErrorCode)
		}
	}
	return resp
}

func replicaStates(ps []metadata.ReplicaProgress) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(ps))
	for _, p := range ps {
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.ReplicaDirectoryID = p.ID, int64(p.Match), p.DirectoryID
		r.LastFetchTimestamp, r.LastCaughtUpTimestamp = -1, -1
		if !p.LastContact.IsZero() {
			r.LastFetchTimestamp = p.LastContact.UnixMilli()
			if p.CaughtUp {
				r.LastCaughtUpTimestamp = r.LastFetchTimestamp
			}
		}
		out = append(out, r)
	}
	return out
}

// otherObservers are the registered brokers that are neither voters nor
// streaming from this node: known by their last heartbeat only.
func (rc *requestContext) otherObservers(status metadata.QuorumStatus) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	known := map[int32]bool{}
	for _, p := range status.Voters {
		known[p.ID] = true
	}
	for _, p := range status.Observers {
		known[p.ID] = true
	}
	var out []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	st := rc.s.clusterState()
	for _, id := range st.BrokerIDs() {
		if known[id] {
			continue
		}
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, -1, -1, -1
		if ms := st.Brokers[id].LastHeartbeatMs; ms > 0 {
			r.LastFetchTimestamp = ms
		}
		out = append(out, r)
	}
	return out
}
