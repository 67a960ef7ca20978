package broker

// RemoveRaftVoter (key 81), v0 (KIP-853): removes a controller (a voter,
// or a learner AddRaftVoter left behind) from the metadata quorum through
// a raft ConfChangeV2 on the leader, answered once committed. A leader
// that removes itself steps down after the change; the removed node never
// campaigns again.
//   - Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//   - Not the raft leader: forwarded to it as AddRaftVoter is (else
//     NOT_LEADER_OR_FOLLOWER naming the leader). Not a member, or a
//     directory id other than the one it was added with: VOTER_NOT_FOUND.
//     The last voter: INVALID_REQUEST. Another change in progress:
//     REQUEST_TIMED_OUT. Another cluster id: INCONSISTENT_CLUSTER_ID.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.RemoveRaftVoter, 0, 0, handleRemoveRaftVoter)
	checksACLs(kmsg.RemoveRaftVoter)
}

func handleRemoveRaftVoter(rc *requestContext, req *kmsg.RemoveRaftVoterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
	if fwd, ok := rc.forwardVoterChange(req, req.ClusterID, 0); ok {
		if r, ok := fwd.(*kmsg.RemoveRaftVoterResponse); ok {
			resp.ErrorCode, resp.ErrorMessage = rc.countError(r.ErrorCode), r.ErrorMessage
			return resp
		}
	}
	code, msg := rc.removeRaftVoter(req)
	resp.ErrorCode = rc.countError(code)
	if code != 0 {
		if msg == "" {
			msg = kerr.ErrorForCode(code).Error()
		}
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return resp
}

func (rc *requestContext) removeRaftVoter(req *kmsg.RemoveRaftVoterRequest) (int16, string) {
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
	ctx, cancel := context.WithTimeout(rc.s.ctx, voterChangeTimeout(0))
	defer cancel()
	err := node.RemoveVoter(ctx, req.VoterID, req.VoterDirectoryID)
	if err != nil {
		rc.s.logger.Info("RemoveRaftVoter", "voter", req.VoterID, "err", err)
	} else {
		rc.s.logger.Info("RemoveRaftVoter: voter removed", "voter", req.VoterID)
	}
	return voterChangeError(err)
}
