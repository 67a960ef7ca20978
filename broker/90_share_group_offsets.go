package broker

// DescribeShareGroupOffsets (key 90) v0–v1, AlterShareGroupOffsets (91)
// v0 and DeleteShareGroupOffsets (92) v0: the admin side of share groups
// (KIP-932), answered by the group's coordinator from the share-partitions
// it holds, live or persisted in __share_group_state.
//
//   - Describe: each share-partition's start offset (-1 before its first
//     fetch) and, v1, its lag: records up to the high watermark neither
//     acknowledged nor archived. Null topics: every share-partition of the
//     group. GROUP_ID_NOT_FOUND for a group without any.
//   - Alter sets start offsets (records in flight are forgotten) and
//     Delete forgets topics' share-partitions; both need an empty group
//     (NON_EMPTY_GROUP otherwise), and report UNKNOWN_TOPIC_OR_PARTITION
//     for topics or partitions that do not exist, INVALID_REQUEST for a
//     negative offset.
//   - Share-partitions are held by their partition's leader and stored by
//     their share coordinator: Describe answers from those this node
//     holds or stores, and asks the share coordinators of the other
//     partitions of the topics the group's members subscribe to
//     (ReadShareGroupStateSummary); the lag of a partition this node has
//     no replica of is unknown (-1). Alter and Delete reach what this
//     node holds and the share coordinators of the partitions named.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
)

func init() {
	checksACLs(kmsg.DescribeShareGroupOffsets, kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets)
	registerOptionalAPI(kmsg.DescribeShareGroupOffsets, 0, 1, shareGroupsEnabled, handleDescribeShareGroupOffsets)
	registerOptionalAPI(kmsg.AlterShareGroupOffsets, 0, 0, shareGroupsEnabled, handleAlterShareGroupOffsets)
	registerOptionalAPI(kmsg.DeleteShareGroupOffsets, 0, 0, shareGroupsEnabled, handleDeleteShareGroupOffsets)
}

func handleDescribeShareGroupOffsets(rc *requestContext, req *kmsg.DescribeShareGroupOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	for _, rg := range req.Groups {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = rg.GroupID
		if g.ErrorCode = rc.groupDenied(acl.OpDescribe, rg.GroupID); g.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, g)
			continue
		}
		offsets, found, err := rc.s.shares.offsets(rg.GroupID)
		if err != nil || !found {
			if err == nil {
				err = kerr.GroupIDNotFound
			}
			g.ErrorCode = rc.countError(err.Code)
			resp.Groups = append(resp.Groups, g)
			continue
		}
		wanted := func(topic string, partition int32) bool {
			if rg.Topics == nil {
				return true
			}
			for _, t := range rg.Topics {
				if t.Topic == topic {
					for _, p := range t.Partitions {
						if p == partition {
							return true
						}
					}
				}
			}
			return false
		}
		byTopic := map[string]int{}
		for _, o := range offsets {
			if o.topic == "" || !wanted(o.topic, o.key.partition) || !rc.authorize(acl.OpDescribe, acl.ResourceTopic, o.topic) {
				continue
			}
			i, ok := byTopic[o.topic]
			if !ok {
				i = len(g.Topics)
				byTopic[o.topic] = i
				t := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
				t.Topic, t.TopicID = o.topic, [16]byte(o.key.topic)
				g.Topics = append(g.Topics, t)
			}
			p := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag = o.key.partition, o.start, -1, o.lag
			g.Topics[i].Partitions = append(g.Topics[i].Partitions, p)
		}
		// Partitions asked for that the group has no state of: start -1.
		for _, t := range rg.Topics {
			// Without DESCRIBE on the topic the answer says only that,
			// not whether the topic exists (Kafka's rule).
			denied := !rc.authorize(acl.OpDescribe, acl.ResourceTopic, t.Topic)
			ts := rc.s.topics.get(t.Topic)
			for _, part := range t.Partitions {
				if _, ok := byTopic[t.Topic]; ok && hasSharePartition(g.Topics[byTopic[t.Topic]].Partitions, part) {
					continue
				}
				i, ok := byTopic[t.Topic]
				if !ok {
					i = len(g.Topics)
					byTopic[t.Topic] = i
					nt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
					nt.Topic = t.Topic
					if ts != nil && !denied {
						nt.TopicID = [16]byte(ts.id)
					}
					g.Topics = append(g.Topics, nt)
				}
				p := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag = part, -1, -1, -1
				switch {
				case denied:
					p.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
				case ts == nil || !rc.s.topics.exists(t.Topic, part):
					p.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
				}
				g.Topics[i].Partitions = append(g.Topics[i].Partitions, p)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

func hasSharePartition(ps []kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition, p int32) bool {
	for _, x := range ps {
		if x.Partition == p {
			return true
		}
	}
	return false
}

func handleAlterShareGroupOffsets(rc *requestContext, req *kmsg.AlterShareGroupOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.GroupID); resp.ErrorCode != 0 {
		return resp
	}
	starts := map[sharePartitionKey]int64{}
	for _, rt := range req.Topics {
		t := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		ts := rc.s.topics.get(rt.Topic)
		if ts != nil {
			t.TopicID = [16]byte(ts.id)
		}
		denied := !rc.authorize(acl.OpRead, acl.ResourceTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			p := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			switch {
			case denied:
				p.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
			case ts == nil || !rc.s.topics.exists(rt.Topic, rp.Partition):
				p.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
			case rp.StartOffset < 0:
				p.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
			default:
				starts[sharePartitionKey{group: req.GroupID, topic: ts.id, partition: rp.Partition}] = rp.StartOffset
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if err := rc.s.shares.alterOffsets(req.GroupID, starts); err != nil {
		resp.ErrorCode = rc.countError(err.Code)
		resp.ErrorMessage = kmsg.StringPtr(err.Description)
	}
	return resp
}

func handleDeleteShareGroupOffsets(rc *requestContext, req *kmsg.DeleteShareGroupOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if resp.ErrorCode = rc.groupDenied(acl.OpDelete, req.GroupID); resp.ErrorCode != 0 {
		return resp
	}
	topics := map[metadata.TopicID]bool{}
	for _, rt := range req.Topics {
		t := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		switch ts := rc.s.topics.get(rt.Topic); {
		case ts == nil:
			t.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
		case !rc.authorize(acl.OpRead, acl.ResourceTopic, rt.Topic):
			t.TopicID = [16]byte(ts.id)
			t.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
		default:
			t.TopicID = [16]byte(ts.id)
			topics[ts.id] = true
		}
		resp.Topics = append(resp.Topics, t)
	}
	if err := rc.s.shares.deleteOffsets(req.GroupID, topics); err != nil {
		resp.ErrorCode = rc.countError(err.Code)
		resp.ErrorMessage = kmsg.StringPtr(err.Description)
	}
	return resp
}
