package broker

// AddRaftVoter (key 80), v0-1 (KIP-853; v1's AckWhenCommitted, KIP-1186):
// adds a controller to the metadata quorum. The raft leader adds the node
// as a learner with the endpoint from the request's listeners (the one
// named like controller.listener.names, else CONTROLLER, else the only
// one), waits until it holds every committed entry and promotes it to
// voter (metadata.Node.AddVoter, raft ConfChangeV2). The answer comes once
// the promotion is committed, also when AckWhenCommitted is false.
//   - Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//   - Not the raft leader (or a broker-only node): forwarded to the
//     leader's Kafka listener, as Kafka's brokers forward it to the active
//     controller (forwardToQuorumLeader), after this node's ACL check;
//     NOT_LEADER_OR_FOLLOWER, naming the leader in the message, when the
//     leader is unknown, is a controller-only node (no Kafka listener),
//     cannot be reached, or the request came forwarded already.
//   - Already a voter: DUPLICATE_VOTER. Another change in progress, or the
//     new voter not caught up within TimeoutMillis: REQUEST_TIMED_OUT (the
//     node stays a learner; a retry promotes it). A cluster id other than
//     ours: INCONSISTENT_CLUSTER_ID. No usable listener: INVALID_REQUEST.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.AddRaftVoter, 0, 1, handleAddRaftVoter)
	checksACLs(kmsg.AddRaftVoter)
}

func handleAddRaftVoter(rc *requestContext, req *kmsg.AddRaftVoterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddRaftVoterResponse)
	fwdReq := *req
	fwdReq.TimeoutMillis = int32(voterChangeTimeout(req.TimeoutMillis).Milliseconds()) // 0 is 15 s here, not kgo's default read timeout
	if fwd, ok := rc.forwardVoterChange(&fwdReq, req.ClusterID, voterChangeTimeout(req.TimeoutMillis)); ok {
		if r, ok := fwd.(*kmsg.AddRaftVoterResponse); ok {
			resp.ErrorCode, resp.ErrorMessage = rc.countError(r.ErrorCode), r.ErrorMessage
			return resp
		}
	}
	code, msg := rc.addRaftVoter(req)
	resp.ErrorCode = rc.countError(code)
	if code != 0 {
		if msg == "" {
			msg = kerr.ErrorForCode(code).Error()
		}
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return resp
}

func (rc *requestContext) addRaftVoter(req *kmsg.AddRaftVoterRequest) (int16, string) {
	if !rc.authorizeCluster(acl.OpAlter) {
		return kerr.ClusterAuthorizationFailed.Code, ""
	}
	node, code := rc.quorumLeaderNode(req.ClusterID)
	if code == kerr.NotLeaderForPartition.Code {
		return code, rc.notLeaderMessage()
	}
	if code != 0 {
		return code, ""
	}
	ls := make([]voterListener, 0, len(req.Listeners))
	for _, l := range req.Listeners {
		ls = append(ls, voterListener{l.Name, l.Host, l.Port})
	}
	addr, ok := rc.voterEndpoint(ls)
	if !ok {
		return kerr.InvalidRequest.Code, "no listener of the new voter to reach its raft port"
	}
	ctx, cancel := context.WithTimeout(rc.s.ctx, voterChangeTimeout(req.TimeoutMillis))
	defer cancel()
	err := node.AddVoter(ctx, req.VoterID, addr, req.VoterDirectoryID)
	if err != nil {
		rc.s.logger.Info("AddRaftVoter", "voter", req.VoterID, "addr", addr, "err", err)
	} else {
		rc.s.logger.Info("AddRaftVoter: voter added", "voter", req.VoterID, "addr", addr)
	}
	return voterChangeError(err)
}

// quorumLeaderNode is this node's raft node if it leads the quorum and
// the request's cluster id (if any) is ours.
func (rc *requestContext) quorumLeaderNode(clusterID *string) (*metadata.Node, int16) {
	if clusterID != nil && *clusterID != rc.s.clusterState().ClusterID {
		return nil, kerr.InconsistentClusterID.Code
	}
	node, ok := rc.s.member.(*metadata.Node)
	if !ok || !node.IsLeader() {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return node, 0
}

// notLeaderMessage words NOT_LEADER_OR_FOLLOWER for a request only the
// quorum leader answers (a membership change, DescribeQuorum) that this
// node could not forward.
func (rc *requestContext) notLeaderMessage() string {
	leader := rc.s.member.LeaderID()
	if leader < 0 {
		return "the metadata quorum has no leader now; retry"
	}
	if _, ok := rc.s.clusterState().Brokers[leader]; !ok {
		return fmt.Sprintf("the quorum leader is controller %d, which has no Kafka listener to forward to", leader)
	}
	return fmt.Sprintf("not the quorum leader; the leader is node %d", leader)
}

// forwardVoterChange forwards AddRaftVoter/RemoveRaftVoter to the raft
// leader when this node is not it and the request passed this node's
// checks (ALTER on the cluster, the cluster id); ok is false when the
// request is this node's to answer (it leads, or forwarding is not
// possible: see forwardToQuorumLeader).
func (rc *requestContext) forwardVoterChange(req kmsg.Request, clusterID *string, timeout time.Duration) (kmsg.Response, bool) {
	if node, isNode := rc.s.member.(*metadata.Node); isNode && node.IsLeader() {
		return nil, false
	}
	if !rc.authorizeCluster(acl.OpAlter) || clusterID != nil && *clusterID != rc.s.clusterState().ClusterID {
		return nil, false // answered here with the error
	}
	return rc.forwardToQuorumLeader(req, voterChangeTimeout(int32(timeout.Milliseconds()))+10*time.Second)
}

// forwardToQuorumLeader sends req to the raft leader's Kafka listener
// (Kafka's brokers forward admin requests to the active controller) over
// the node's peer client and returns the leader's answer. ok is false when
// no other leader is known, the leader is not a registered broker (a
// controller-only node has no Kafka listener), req came from a peer (it
// was forwarded once: never twice, so a leader change cannot loop it), or
// the leader did not answer within timeout.
func (rc *requestContext) forwardToQuorumLeader(req kmsg.Request, timeout time.Duration) (kmsg.Response, bool) {
	leader := rc.s.member.LeaderID()
	if rc.header.clientID == peerClientID || leader < 0 || leader == rc.s.cfg.NodeID {
		return nil, false
	}
	if _, ok := rc.s.clusterState().Brokers[leader]; !ok {
		return nil, false
	}
	b, err := rc.s.peers.client(leader)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(rc.s.ctx, timeout)
	defer cancel()
	resp, err := b.Request(ctx, req)
	if err != nil {
		rc.s.logger.Info("forwarding to the quorum leader failed", "api", kmsg.NameForKey(req.Key()), "leader", leader, "err", err)
		return nil, false
	}
	return resp, true
}

// voterListener is one listener of a voter in AddRaftVoter or
// UpdateRaftVoter.
type voterListener struct {
	Name, Host string
	Port       uint16
}

// voterEndpoint picks the voter's raft address among its listeners.
func (rc *requestContext) voterEndpoint(ls []voterListener) (string, bool) {
	want := rc.s.cfg.controllerListenerName()
	if want == "" {
		want = "CONTROLLER"
	}
	pick := -1
	for i, l := range ls {
		if strings.EqualFold(l.Name, want) {
			pick = i
			break
		}
	}
	if pick < 0 && len(ls) == 1 {
		pick = 0
	}
	if pick < 0 || ls[pick].Host == "" || ls[pick].Port == 0 {
		return "", false
	}
	return net.JoinHostPort(ls[pick].Host, strconv.Itoa(int(ls[pick].Port))), true
}

// voterChangeTimeout is the request's timeout, at least a second and at
// most five minutes (15 s when unset).
func voterChangeTimeout(ms int32) time.Duration {
	if ms <= 0 {
		ms = 15000
	}
	return min(max(time.Duration(ms)*time.Millisecond, time.Second), 5*time.Minute)
}

// voterChangeError maps AddVoter's and RemoveVoter's errors to Kafka's codes.
func voterChangeError(err error) (int16, string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, metadata.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code, ""
	case errors.Is(err, metadata.ErrDuplicateVoter):
		return kerr.DuplicateVoter.Code, err.Error()
	case errors.Is(err, metadata.ErrVoterNotFound):
		return kerr.VoterNotFound.Code, err.Error()
	case errors.Is(err, metadata.ErrLastVoter), errors.Is(err, cluster.ErrInvalid):
		return kerr.InvalidRequest.Code, err.Error()
	case errors.Is(err, metadata.ErrMembershipChangePending), errors.Is(err, metadata.ErrNotCaughtUp),
		errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code, err.Error()
	default:
		return kerr.UnknownServerError.Code, err.Error()
	}
}
