package broker

// SyncGroup (key 14), v0–v5.
//
//   - A follower's SyncGroup waits for the leader's; the leader's assignment
//     is written to __consumer_offsets before anyone is answered.
//   - In a Stable group every member gets its current assignment at once.
//   - UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (the
//     group started another rebalance), FENCED_INSTANCE_ID; v5 checks the
//     protocol type and name (INCONSISTENT_GROUP_PROTOCOL) and echoes them.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.SyncGroup, 0, 5, handleSyncGroup)
	checksACLs(kmsg.SyncGroup)
}

func handleSyncGroup(rc *requestContext, req *kmsg.SyncGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	sr := groups.SyncRequest{
		MemberID:     req.MemberID,
		InstanceID:   req.InstanceID,
		Generation:   req.Generation,
		ProtocolType: req.ProtocolType,
		Protocol:     req.Protocol,
	}
	for _, a := range req.GroupAssignment {
		sr.Assignments = append(sr.Assignments, groups.Assignment{MemberID: a.MemberID, Assignment: a.MemberAssignment})
	}
	res := rc.s.groups.sync(rc.s.ctx, req.Group, sr)
	resp.ErrorCode = rc.countError(code(res.Err))
	if res.Err == nil {
		resp.ProtocolType = kmsg.StringPtr(res.ProtocolType)
		resp.Protocol = kmsg.StringPtr(res.Protocol)
		resp.MemberAssignment = res.Assignment
	}
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}
