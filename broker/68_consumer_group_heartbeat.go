package broker

// ConsumerGroupHeartbeat (key 68), v0–v1: the next-generation consumer
// group protocol (KIP-848), served and advertised unless
// group.consumer.protocol.enable=false (default true). While the cluster's
// finalized group.version is 0 (UpdateFeatures) it is not advertised and
// answers UNSUPPORTED_VERSION, as Kafka.
//
//   - One request both joins (member epoch 0), heartbeats, reports the
//     partitions the member owns and leaves (-1; -2 for a static member);
//     the coordinator computes the assignment (uniform or range, as the
//     member's ServerAssignor asks) and hands it out by reconciliation. The
//     state machine is broker/groups (consumer_group.go).
//   - v1 members generate their own id; an empty id is INVALID_REQUEST.
//     v0 members get one from the coordinator on their first heartbeat.
//   - Topics are named by topic id; owned partitions of topics this broker
//     does not know are ignored.
//   - INVALID_GROUP_ID for an empty group id; GROUP_ID_NOT_FOUND for a
//     classic group with members; UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_
//     EXPRESSION, FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID and
//     UNRELEASED_INSTANCE_ID as Kafka.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	checksACLs(kmsg.ConsumerGroupHeartbeat)
	registerOptionalAPI(kmsg.ConsumerGroupHeartbeat, 0, 1, consumerProtocolEnabled, handleConsumerGroupHeartbeat)
}

// consumerProtocolEnabled gates the KIP-848 APIs.
func consumerProtocolEnabled(cfg *Config) bool { return cfg.GroupConsumerProtocolEnable }

func handleConsumerGroupHeartbeat(rc *requestContext, req *kmsg.ConsumerGroupHeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.MemberEpoch = -1
	if !rc.s.consumerProtocolActive() {
		resp.ErrorCode = rc.countError(kerr.UnsupportedVersion.Code)
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	// As in Kafka: every subscribed topic must be describable.
	if resp.ErrorCode, resp.ErrorMessage = rc.subscriptionDenied(req.SubscribedTopicNames); resp.ErrorCode != 0 {
		return resp
	}
	memberID := req.MemberID
	if req.Version == 0 && memberID == "" && req.MemberEpoch == groups.JoinEpoch {
		memberID = groups.RandomMemberID(rc.header.clientID)
	}
	hr := groups.ConsumerHeartbeatRequest{
		MemberID:             memberID,
		MemberEpoch:          req.MemberEpoch,
		InstanceID:           req.InstanceID,
		RackID:               req.RackID,
		RebalanceTimeout:     time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		SubscribedTopicNames: req.SubscribedTopicNames,
		SubscribedTopicRegex: req.SubscribedTopicRegex,
		ServerAssignor:       req.ServerAssignor,
		ClientID:             rc.header.clientID,
		ClientHost:           rc.clientHost(),
	}
	if req.RebalanceTimeoutMillis < 0 {
		hr.RebalanceTimeout = -1
	}
	if req.Topics != nil {
		hr.Owned = make([]groups.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			hr.Owned = append(hr.Owned, groups.TopicPartitions{TopicID: t.TopicID, Partitions: t.Partitions})
		}
	}
	res := rc.s.groups.consumerHeartbeat(req.Group, hr)
	resp.ErrorCode = rc.countError(code(res.Err))
	if res.ErrMessage != "" {
		resp.ErrorMessage = kmsg.StringPtr(res.ErrMessage)
	}
	if res.MemberID != "" {
		resp.MemberID = kmsg.StringPtr(res.MemberID)
	}
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	if res.Err == nil && res.Assignment != nil {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
		for _, t := range res.Assignment {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID = t.TopicID
			at.Partitions = t.Partitions
			a.Topics = append(a.Topics, at)
		}
		resp.Assignment = &a
	}
	return resp
}
