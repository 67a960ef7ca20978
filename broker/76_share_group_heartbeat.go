package broker

// ShareGroupHeartbeat (key 76), v1 (v0 was Kafka 4.0's early access,
// removed in 4.1): share group membership (KIP-932), served and
// advertised unless group.share.enable=false.
//
//   - Epoch 0 joins (SubscribedTopicNames required), -1 leaves; members
//     generate their own ids (an empty one is INVALID_REQUEST).
//   - Every member is assigned every partition of its subscribed topics
//     (share-partitions hand out records, not partitions); the assignment
//     is sent when it changes and to every heartbeat naming the topics.
//   - FENCED_MEMBER_EPOCH for an epoch other than the member's current or
//     previous, UNKNOWN_MEMBER_ID for a member the group lacks,
//     GROUP_ID_NOT_FOUND when a classic or consumer group holds the id,
//     NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS as for other groups.
//     The state machine is broker/share (group.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/share"
)

func init() {
	checksACLs(kmsg.ShareGroupHeartbeat)
	registerOptionalAPI(kmsg.ShareGroupHeartbeat, 1, 1, shareGroupsEnabled, handleShareGroupHeartbeat)
}

// shareGroupsEnabled gates the KIP-932 APIs.
func shareGroupsEnabled(cfg *Config) bool { return cfg.GroupShareEnable }

func handleShareGroupHeartbeat(rc *requestContext, req *kmsg.ShareGroupHeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.MemberEpoch = -1
	if req.GroupID == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.GroupID); resp.ErrorCode != 0 {
		return resp
	}
	// As in Kafka: every subscribed topic must be describable.
	if resp.ErrorCode, resp.ErrorMessage = rc.subscriptionDenied(req.SubscribedTopicNames); resp.ErrorCode != 0 {
		return resp
	}
	res, interval := rc.s.shares.heartbeat(req.GroupID, share.HeartbeatRequest{
		MemberID:    req.MemberID,
		MemberEpoch: req.MemberEpoch,
		RackID:      req.RackID,
		Subscribed:  req.SubscribedTopicNames,
		ClientID:    rc.header.clientID,
		ClientHost:  rc.clientHost(),
	})
	resp.ErrorCode = rc.countError(code(res.Err))
	if res.ErrMessage != "" {
		resp.ErrorMessage = kmsg.StringPtr(res.ErrMessage)
	}
	if res.MemberID != "" {
		resp.MemberID = kmsg.StringPtr(res.MemberID)
	}
	resp.MemberEpoch = res.Epoch
	resp.HeartbeatIntervalMillis = int32(interval.Milliseconds())
	if res.Err == nil && res.Assignment != nil {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		a.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
		for id, ps := range res.Assignment {
			tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = id, ps
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		resp.Assignment = &a
	}
	return resp
}
