package broker

// JoinGroup (key 11), v0–v9.
//
//   - Blocks until the rebalance completes (or fails), like a long poll but
//     without holding any lock: the answer arrives on a channel. The
//     connection serves nothing else meanwhile, as in Kafka.
//   - v4+: a member without an id gets MEMBER_ID_REQUIRED and a new id
//     (KIP-394); v5+: static membership by group.instance.id (KIP-345);
//     v9: SkipAssignment for a restarted static leader (KIP-814).
//   - v0 has no rebalance timeout: the session timeout serves as one.
//   - INVALID_GROUP_ID for an empty group id; INVALID_SESSION_TIMEOUT
//     outside group.{min,max}.session.timeout.ms; INCONSISTENT_GROUP_PROTOCOL
//     without a protocol in common; the state machine is broker/groups.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.JoinGroup, 0, 9, handleJoinGroup)
	checksACLs(kmsg.JoinGroup)
}

func handleJoinGroup(rc *requestContext, req *kmsg.JoinGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		resp.Generation = -1
		resp.MemberID = req.MemberID
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		resp.Generation, resp.MemberID = -1, req.MemberID
		return resp
	}
	rebalanceTimeout := req.RebalanceTimeoutMillis
	if req.Version == 0 {
		rebalanceTimeout = req.SessionTimeoutMillis
	}
	jr := groups.JoinRequest{
		MemberID:               req.MemberID,
		InstanceID:             req.InstanceID,
		ClientID:               rc.header.clientID,
		ClientHost:             rc.clientHost(),
		SessionTimeout:         time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout:       time.Duration(rebalanceTimeout) * time.Millisecond,
		ProtocolType:           req.ProtocolType,
		RequireKnownMemberID:   req.Version >= 4,
		SupportsSkipAssignment: req.Version >= 9,
	}
	if req.Reason != nil {
		jr.Reason = *req.Reason
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, groups.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	res := rc.s.groups.join(rc.s.ctx, req.Group, jr)
	resp.ErrorCode = rc.countError(code(res.Err))
	resp.Generation = res.Generation
	resp.MemberID = res.MemberID
	resp.LeaderID = res.LeaderID
	resp.SkipAssignment = res.SkipAssignment
	if res.Err == nil {
		resp.ProtocolType = kmsg.StringPtr(res.ProtocolType)
		resp.Protocol = kmsg.StringPtr(res.Protocol)
	}
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID = m.MemberID
		rm.InstanceID = m.InstanceID
		rm.ProtocolMetadata = m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
