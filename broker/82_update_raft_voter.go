package broker

// UpdateRaftVoter (key 82), v0 (KIP-853): a controller announces its own
// endpoints and supported kraft.version range to the raft leader, which
// records them in the metadata log (cluster.UpdateController,
// metadata.Node.UpdateVoter): from then on every member dials the
// listener named like controller.listener.names (else CONTROLLER, else
// the only one) as its raft address, observers learn it from the log, and
// DescribeQuorum v2 lists the announced listeners. Answered once applied.
//   - Needs CLUSTER_ACTION on the cluster (CLUSTER_AUTHORIZATION_FAILED):
//     in Kafka it is a request between controllers.
//   - Another cluster id: INCONSISTENT_CLUSTER_ID. CurrentLeaderEpoch
//     below the raft term (DescribeQuorum's LeaderEpoch):
//     FENCED_LEADER_EPOCH; above it: UNKNOWN_LEADER_EPOCH.
//   - Not the raft leader (or a broker-only node): NOT_LEADER_OR_FOLLOWER,
//     not forwarded (Kafka's brokers do not serve it; its controllers
//     answer so). Every answer carries CurrentLeader: the leader's id,
//     epoch and, when it is a broker, its Kafka listener's host and port.
//   - A zero directory id, no usable listener, a kraft.version range that
//     is inverted, negative or excludes the finalized level:
//     INVALID_REQUEST. Not a member, or another directory id than the
//     one recorded: VOTER_NOT_FOUND.

import (
	"context"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.UpdateRaftVoter, 0, 0, handleUpdateRaftVoter)
	checksACLs(kmsg.UpdateRaftVoter)
}

func handleUpdateRaftVoter(rc *requestContext, req *kmsg.UpdateRaftVoterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.UpdateRaftVoterResponse)
	code := rc.updateRaftVoter(req)
	resp.ErrorCode = rc.countError(code)
	resp.CurrentLeader = rc.currentQuorumLeader()
	return resp
}

func (rc *requestContext) updateRaftVoter(req *kmsg.UpdateRaftVoterRequest) int16 {
	if !rc.authorizeCluster(acl.OpClusterAction) {
		return kerr.ClusterAuthorizationFailed.Code
	}
	if req.ClusterID != nil && *req.ClusterID != rc.s.clusterState().ClusterID {
		return kerr.InconsistentClusterID.Code
	}
	node, ok := rc.s.member.(*metadata.Node)
	if !ok {
		return kerr.NotLeaderForPartition.Code
	}
	switch term := int64(node.Term()); {
	case int64(req.CurrentLeaderEpoch) < term:
		return kerr.FencedLeaderEpoch.Code
	case int64(req.CurrentLeaderEpoch) > term:
		return kerr.UnknownLeaderEpoch.Code
	case !node.IsLeader():
		return kerr.NotLeaderForPartition.Code
	}
	if req.VoterDirectoryID == ([16]byte{}) {
		return kerr.InvalidRequest.Code
	}
	ls := make([]voterListener, 0, len(req.Listeners))
	u := metadata.VoterUpdate{ID: req.VoterID, DirectoryID: req.VoterDirectoryID}
	for _, l := range req.Listeners {
		if l.Host == "" || l.Port == 0 {
			return kerr.InvalidRequest.Code
		}
		ls = append(ls, voterListener{l.Name, l.Host, l.Port})
		u.Listeners = append(u.Listeners, cluster.ControllerListener{Name: l.Name, Addr: net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))})
	}
	addr, ok := rc.voterEndpoint(ls)
	if !ok {
		return kerr.InvalidRequest.Code
	}
	u.Addr = addr
	kv := req.KRaftVersionFeature
	if kv.MinSupportedVersion < 0 || kv.MaxSupportedVersion < kv.MinSupportedVersion ||
		!(cluster.FeatureRange{Min: kv.MinSupportedVersion, Max: kv.MaxSupportedVersion}).Contains(rc.s.clusterState().FeatureLevel(cluster.KRaftVersionFeature)) {
		return kerr.InvalidRequest.Code
	}
	u.KRaftMin, u.KRaftMax = kv.MinSupportedVersion, kv.MaxSupportedVersion
	ctx, cancel := context.WithTimeout(rc.s.ctx, voterChangeTimeout(0))
	defer cancel()
	err := node.UpdateVoter(ctx, u)
	if err != nil {
		rc.s.logger.Info("UpdateRaftVoter", "voter", req.VoterID, "addr", addr, "err", err)
	} else {
		rc.s.logger.Info("UpdateRaftVoter: voter updated", "voter", req.VoterID, "addr", addr)
	}
	code, _ := voterChangeError(err)
	return code
}

// currentQuorumLeader is UpdateRaftVoter's CurrentLeader: the raft
// leader's id and term, and its Kafka listener when it is a registered
// broker (a controller-only leader has none).
func (rc *requestContext) currentQuorumLeader() kmsg.UpdateRaftVoterResponseCurrentLeader {
	cur := kmsg.NewUpdateRaftVoterResponseCurrentLeader()
	cur.LeaderID = rc.s.member.LeaderID()
	if node, ok := rc.s.member.(*metadata.Node); ok && cur.LeaderID >= 0 {
		cur.LeaderEpoch = int32(node.Term())
	}
	if b, ok := rc.s.clusterState().Brokers[cur.LeaderID]; ok && cur.LeaderID >= 0 {
		if host, port, err := net.SplitHostPort(b.Addr); err == nil {
			if p, err := strconv.ParseUint(port, 10, 16); err == nil {
				cur.Host, cur.Port = host, int32(p)
			}
		}
	}
	return cur
}
