package broker

// DescribeTopicPartitions (key 75), v0 (KIP-966): Metadata's topic
// description, paginated. Topics are described in name order from the
// cursor (a topic and a partition) on, at most response_partition_limit
// partitions (2000 when 0 or more), and next_cursor says where to go on.
// An empty topic list describes every topic the caller may describe; a
// named topic it may not is TOPIC_AUTHORIZATION_FAILED, one that does not
// exist UNKNOWN_TOPIC_OR_PARTITION. Each topic carries its authorized
// operations (KIP-430). Strata has no eligible leader replicas (KIP-966's
// ELR): those lists are empty.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeTopicPartitions, 0, 0, handleDescribeTopicPartitions)
	checksACLs(kmsg.DescribeTopicPartitions)
}

const maxDescribedPartitions = 2000

func handleDescribeTopicPartitions(rc *requestContext, req *kmsg.DescribeTopicPartitionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	limit := int(req.ResponsePartitionLimit)
	if limit <= 0 || limit > maxDescribedPartitions {
		limit = maxDescribedPartitions
	}
	var names []string
	listAll := len(req.Topics) == 0
	if listAll {
		for _, t := range rc.s.topics.all() {
			names = append(names, t.name)
		}
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	firstPartition := int32(0)
	if c := req.Cursor; c != nil {
		i, _ := slices.BinarySearch(names, c.Topic)
		names = names[i:]
		if len(names) > 0 && names[0] == c.Topic {
			firstPartition = max(c.Partition, 0)
		}
	}
	described := 0
	for n, name := range names {
		if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, name) {
			if !listAll {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic = kmsg.StringPtr(name)
				rt.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		t := rc.s.topics.get(name)
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = kmsg.StringPtr(name)
		rt.IsInternal = isInternalTopic(name)
		if t == nil {
			rt.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		mt := rc.metadataTopic(t)
		rt.ErrorCode, rt.TopicID = mt.ErrorCode, mt.TopicID
		rt.AuthorizedOperations = rc.authorizedOperations(acl.ResourceTopic, name, topicOperations)
		start := 0
		if n == 0 {
			start = int(firstPartition)
		}
		for i := start; i < len(mt.Partitions); i++ {
			if described == limit {
				resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: int32(i)}
				break
			}
			mp := mt.Partitions[i]
			dp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			dp.ErrorCode, dp.Partition, dp.LeaderID, dp.LeaderEpoch = mp.ErrorCode, mp.Partition, mp.Leader, mp.LeaderEpoch
			dp.Replicas, dp.ISR, dp.OfflineReplicas = mp.Replicas, mp.ISR, mp.OfflineReplicas
			dp.EligibleLeaderReplicas, dp.LastKnownELR = []int32{}, []int32{}
			rt.Partitions = append(rt.Partitions, dp)
			described++
		}
		if len(rt.Partitions) > 0 || resp.NextCursor == nil {
			resp.Topics = append(resp.Topics, rt)
		}
		if resp.NextCursor != nil {
			break
		}
	}
	return resp
}
