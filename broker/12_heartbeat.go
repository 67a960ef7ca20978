package broker

// Heartbeat (key 12), v0–v4.
//
//   - Keeps a member's session alive. REBALANCE_IN_PROGRESS tells it to
//     rejoin; ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID
//     that it is no longer part of the current generation.
//   - Members may heartbeat between JoinGroup and SyncGroup.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.Heartbeat, 0, 4, handleHeartbeat)
	checksACLs(kmsg.Heartbeat)
}

func handleHeartbeat(rc *requestContext, req *kmsg.HeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	err := rc.s.groups.heartbeat(req.Group, req.MemberID, req.InstanceID, req.Generation)
	resp.ErrorCode = rc.countError(code(err))
	return resp
}
