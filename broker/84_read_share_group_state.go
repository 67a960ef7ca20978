package broker

// ReadShareGroupState (key 84), v0: a share-partition's new leader reads
// its state from the share coordinator (share_state_apis.go has what the
// share coordinator APIs share).
//   - The state is the start offset (-1: none yet) and the state batches
//     of the records in flight (available, acknowledged, archived, with
//     their delivery counts; records acquired when it was written are
//     available).
//   - LeaderEpoch fences: older than the last one seen for the
//     share-partition is FENCED_LEADER_EPOCH; newer is recorded, so the
//     writes of the leaders before it are refused from then on.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	checksACLs(kmsg.ReadShareGroupState)
	registerOptionalAPI(kmsg.ReadShareGroupState, 0, 0, shareGroupsEnabled, handleReadShareGroupState)
}

func handleReadShareGroupState(rc *requestContext, req *kmsg.ReadShareGroupStateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	sc := rc.shareStateCall()
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.ReadShareGroupStateResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition, rp.StartOffset = p.Partition, -1
			sc.run(&rp.ErrorCode, func() (func() error, *kerr.Error) {
				snap, ok, wait, code := rc.s.shares.state.readLocal(shareKey(req.GroupID, t.TopicID, p.Partition), p.LeaderEpoch)
				if code != nil || !ok {
					return wait, code
				}
				rp.StartOffset = snap.Start
				for _, b := range snap.Batches {
					sb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.First, b.Last, int8(b.State), b.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, sb)
				}
				return wait, nil
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	sc.finish()
	return resp
}
