package broker

// OffsetDelete (key 47), v0 (KIP-496).
//
//   - Deletes a group's committed offsets for the listed partitions, with
//     tombstones in __consumer_offsets.
//   - An Empty group: any partition. An active consumer group: only topics
//     none of its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC for the
//     others). Another active group: NON_EMPTY_GROUP.
//   - GROUP_ID_NOT_FOUND for a group that does not exist;
//     UNKNOWN_TOPIC_OR_PARTITION for a topic that does not.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.OffsetDelete, 0, 0, handleOffsetDelete)
	checksACLs(kmsg.OffsetDelete)
}

func handleOffsetDelete(rc *requestContext, req *kmsg.OffsetDeleteRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if req.Group == "" {
		resp.ErrorCode = rc.countError(kerr.InvalidGroupID.Code)
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpDelete, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	var (
		tps   []groups.TopicPartition
		slots []*int16
	)
	for _, rt := range req.Topics {
		t := kmsg.NewOffsetDeleteResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.OffsetDeleteResponseTopicPartition, len(rt.Partitions))
		resp.Topics = append(resp.Topics, t)
	}
	for ti, rt := range req.Topics {
		known := rc.s.topics.get(rt.Topic) != nil
		readable := rc.authorize(acl.OpRead, acl.ResourceTopic, rt.Topic)
		for pi, rp := range rt.Partitions {
			p := &resp.Topics[ti].Partitions[pi]
			*p = kmsg.NewOffsetDeleteResponseTopicPartition()
			p.Partition = rp.Partition
			if !readable {
				p.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
				continue
			}
			if !known {
				p.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
				continue
			}
			tps = append(tps, groups.TopicPartition{Topic: rt.Topic, Partition: rp.Partition})
			slots = append(slots, &p.ErrorCode)
		}
	}
	top, errs := rc.s.groups.deleteOffsets(req.Group, tps)
	if top != nil {
		resp.ErrorCode = rc.countError(top.Code)
		resp.Topics = nil
		return resp
	}
	for i, slot := range slots {
		*slot = rc.countError(code(errs[i]))
	}
	return resp
}
