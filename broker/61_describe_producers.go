package broker

// DescribeProducers (key 61), v0 (KIP-664): the producers a partition's
// leader keeps state for (id, epoch, last sequence, last append time,
// coordinator epoch of the last marker, start offset of the open
// transaction), so operators find the producer holding a hanging
// transaction. Needs READ on the topic (TOPIC_AUTHORIZATION_FAILED);
// UNKNOWN_TOPIC_OR_PARTITION and NOT_LEADER_OR_FOLLOWER per partition.
// last_timestamp is the broker's time of the producer's last append.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeProducers, 0, 0, handleDescribeProducers)
	checksACLs(kmsg.DescribeProducers)
}

func handleDescribeProducers(rc *requestContext, req *kmsg.DescribeProducersRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		denied := rc.topicDenied(acl.OpRead, rt.Topic)
		for _, partition := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = partition
			p, code := rc.s.topics.leaderPartition(rt.Topic, partition)
			switch {
			case denied != 0:
				sp.ErrorCode = denied
			case p == nil:
				sp.ErrorCode = rc.countError(code)
			default:
				for _, info := range p.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = info.ProducerID, int32(info.Epoch), info.LastSequence
					ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = info.LastUpdateMs, info.CoordinatorEpoch, info.CurrentTxnStartOffset
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				}
			}
			if sp.ErrorCode != 0 {
				msg := kerr.ErrorForCode(sp.ErrorCode).Error()
				sp.ErrorMessage = &msg
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
