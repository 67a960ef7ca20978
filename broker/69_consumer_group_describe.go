package broker

// ConsumerGroupDescribe (key 69), v0–v1: KIP-848 groups, served and
// advertised unless group.consumer.protocol.enable=false (default true).
// While the cluster's finalized group.version is 0 it is not advertised
// and every group gets UNSUPPORTED_VERSION, as Kafka.
//
//   - Per group: state (Empty, Assigning, Reconciling, Stable), group and
//     assignment epochs, assignor, and each member's epoch, subscription,
//     current and target assignment (by topic id and name).
//   - GROUP_ID_NOT_FOUND for a missing group or a classic one, as Kafka
//     ("not a consumer group"); INVALID_GROUP_ID for an empty id.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerOptionalAPI(kmsg.ConsumerGroupDescribe, 0, 1, consumerProtocolEnabled, handleConsumerGroupDescribe)
	checksACLs(kmsg.ConsumerGroupDescribe)
}

func handleConsumerGroupDescribe(rc *requestContext, req *kmsg.ConsumerGroupDescribeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	var topics groups.TopicCatalog
	active := rc.s.consumerProtocolActive()
	for _, id := range req.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = id
		rg.AuthorizedOperations = -2147483648
		if req.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = rc.groupAuthorizedOperations(id)
		}
		if rg.ErrorCode = rc.groupDenied(acl.OpDescribe, id); rg.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		if !active {
			rg.ErrorCode = rc.countError(kerr.UnsupportedVersion.Code)
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		if id == "" {
			rg.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d, found, consumer, errCode := rc.s.groups.describeConsumer(id)
		switch {
		case errCode != nil:
			rg.ErrorCode = rc.countError(errCode.Code)
		case !found:
			rg.ErrorCode = rc.countError(kerr.GroupIDNotFound.Code)
			rg.ErrorMessage = kmsg.StringPtr("Group " + id + " not found.")
		case !consumer:
			rg.ErrorCode = rc.countError(kerr.GroupIDNotFound.Code)
			rg.ErrorMessage = kmsg.StringPtr("Group " + id + " is not a consumer group.")
		}
		if rg.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		if topics.ByName == nil {
			topics = rc.s.groups.topicCatalog()
		}
		rg.State = d.State
		rg.Epoch = d.GroupEpoch
		rg.AssignmentEpoch = d.AssignmentEpoch
		rg.AssignorName = d.Assignor
		for _, m := range d.Members {
			rm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			rm.MemberID = m.MemberID
			rm.InstanceID = m.InstanceID
			rm.RackID = m.RackID
			rm.MemberEpoch = m.MemberEpoch
			rm.ClientID = m.ClientID
			rm.ClientHost = m.ClientHost
			rm.SubscribedTopics = m.SubscribedTopicNames
			rm.SubscribedTopicRegex = m.SubscribedTopicRegex
			rm.Assignment = describeAssignment(m.Assignment, topics)
			rm.TargetAssignment = describeAssignment(m.TargetAssignment, topics)
			rm.MemberType = 1 // consumer protocol
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func describeAssignment(tps []groups.TopicPartition, topics groups.TopicCatalog) kmsg.Assignment {
	a := kmsg.NewAssignment()
	for _, tp := range tps {
		if n := len(a.TopicPartitions); n > 0 && a.TopicPartitions[n-1].Topic == tp.Topic {
			a.TopicPartitions[n-1].Partitions = append(a.TopicPartitions[n-1].Partitions, tp.Partition)
			continue
		}
		t := kmsg.NewAssignmentTopicPartition()
		t.Topic = tp.Topic
		t.TopicID = topics.ByName[tp.Topic].ID
		t.Partitions = []int32{tp.Partition}
		a.TopicPartitions = append(a.TopicPartitions, t)
	}
	return a
}
