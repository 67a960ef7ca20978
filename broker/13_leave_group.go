package broker

// LeaveGroup (key 13), v0–v5.
//
//   - v0–v2 name one member; v3+ a batch, each by member id or, with an
//     empty member id, by group.instance.id (KIP-345 admin removal), with
//     an error per member.
//   - The group rebalances without the members that left.
//   - An unknown group or member: UNKNOWN_MEMBER_ID (per member from v3).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.LeaveGroup, 0, 5, handleLeaveGroup)
	checksACLs(kmsg.LeaveGroup)
}

func handleLeaveGroup(rc *requestContext, req *kmsg.LeaveGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	var leaving []groups.LeaveMember
	if req.Version < 3 {
		leaving = []groups.LeaveMember{{MemberID: req.MemberID}}
	} else {
		for _, m := range req.Members {
			leaving = append(leaving, groups.LeaveMember{MemberID: m.MemberID, InstanceID: m.InstanceID})
		}
	}
	top, errs := rc.s.groups.leave(req.Group, leaving)
	if top != nil {
		resp.ErrorCode = rc.countError(top.Code)
		return resp
	}
	if req.Version < 3 {
		resp.ErrorCode = rc.countError(code(errs[0]))
		return resp
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID = m.MemberID
		rm.InstanceID = m.InstanceID
		rm.ErrorCode = rc.countError(code(errs[i]))
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
