package broker

// OffsetCommit (key 8), v0–v9.
//
//   - Offsets are acknowledged once written to the group's
//     __consumer_offsets partition (and committed: the high watermark
//     passed them).
//   - Generation -1 with no member id ("simple" commits: kcat, admin tools)
//     is accepted while the group is Empty, and creates an offsets-only
//     group; member commits are checked against the member and generation
//     (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID,
//     REBALANCE_IN_PROGRESS between the join and the assignment).
//   - A member commit to a group that does not exist: ILLEGAL_GENERATION,
//     GROUP_ID_NOT_FOUND from v9, as Kafka answers.
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition that does
//     not exist, OFFSET_METADATA_TOO_LARGE over offset.metadata.max.bytes;
//     INVALID_COMMIT_OFFSET_SIZE if the records would not fit a batch.
//   - v1's per-partition timestamp sets the commit time; v2–v4's retention
//     time sets an expiry (offsets.retention.minutes applies otherwise).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.OffsetCommit, 0, 9, handleOffsetCommit)
	checksACLs(kmsg.OffsetCommit)
}

func handleOffsetCommit(rc *requestContext, req *kmsg.OffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	now := rc.s.groups.now().UnixMilli()
	var (
		offsets []groups.CommitOffset
		pending []*int16 // error slots of the partitions in offsets
		size    = 61     // batch header
	)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.OffsetCommitResponseTopicPartition, len(rt.Partitions))
		resp.Topics = append(resp.Topics, st)
	}
	// READ on the group, then on each topic.
	groupDenied := rc.groupDenied(acl.OpRead, req.Group)
	for ti, rt := range req.Topics {
		denied := groupDenied
		if denied == 0 {
			denied = rc.topicDenied(acl.OpRead, rt.Topic)
		}
		topic := rc.s.topics.get(rt.Topic)
		var partitions int32
		if topic != nil {
			_, _, meta := rc.s.topics.snapshot(topic)
			partitions = meta.Partitions()
		}
		for pi, rp := range rt.Partitions {
			sp := &resp.Topics[ti].Partitions[pi]
			*sp = kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			metadata := ""
			if rp.Metadata != nil {
				metadata = *rp.Metadata
			}
			switch {
			case denied != 0:
				sp.ErrorCode = denied
				continue
			case topic == nil || rp.Partition < 0 || rp.Partition >= partitions:
				sp.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
				continue
			case len(metadata) > int(rc.s.cfg.OffsetMetadataMaxBytes):
				sp.ErrorCode = rc.countError(kerr.OffsetMetadataTooLarge.Code)
				continue
			}
			o := groups.CommitOffset{
				TopicPartition: groups.TopicPartition{Topic: rt.Topic, Partition: rp.Partition},
				OffsetAndMetadata: groups.OffsetAndMetadata{
					Offset:          rp.Offset,
					LeaderEpoch:     rp.LeaderEpoch,
					Metadata:        metadata,
					CommitTimestamp: now,
					ExpireTimestamp: -1,
				},
			}
			if req.Version < 6 {
				o.LeaderEpoch = -1
			}
			if req.Version == 1 && rp.Timestamp != -1 {
				o.CommitTimestamp = rp.Timestamp
			}
			if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
				o.ExpireTimestamp = now + req.RetentionTimeMillis
			}
			size += 2*len(req.Group) + 2*len(rt.Topic) + len(metadata) + 64 // key, value, record framing
			offsets = append(offsets, o)
			pending = append(pending, &sp.ErrorCode)
		}
	}
	if len(offsets) == 0 {
		return resp
	}
	var err *kerr.Error
	if size > int(rc.s.groups.maxBatchBytes()) {
		err = kerr.InvalidCommitOffsetSize
	} else {
		generation := req.Generation
		if req.Version == 0 {
			generation = -1
		}
		err = rc.s.groups.commit(req.Group, req.Version, groups.CommitRequest{
			MemberID:   req.MemberID,
			InstanceID: req.InstanceID,
			Generation: generation,
			Offsets:    offsets,
		})
	}
	if err != nil {
		for _, slot := range pending {
			*slot = rc.countError(err.Code)
		}
	}
	return resp
}
