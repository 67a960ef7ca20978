package broker

// WriteShareGroupState (key 85), v0–v1: a share-partition leader stores
// its state at the share coordinator (share_state_apis.go has what the
// share coordinator APIs share).
//   - The write is the whole state (start offset and state batches), as
//     Strata's share-partition leaders send it: it replaces the stored
//     one, and is answered once durable.
//   - A LeaderEpoch older than the last one seen for the share-partition
//     is FENCED_LEADER_EPOCH: a deposed leader's late write is refused.
//   - v1's DeliveryCompleteCount (KIP-1226) is not needed: the count
//     follows from the state batches.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

func init() {
	checksACLs(kmsg.WriteShareGroupState)
	registerOptionalAPI(kmsg.WriteShareGroupState, 0, 1, shareGroupsEnabled, handleWriteShareGroupState)
}

func handleWriteShareGroupState(rc *requestContext, req *kmsg.WriteShareGroupStateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	sc := rc.shareStateCall()
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.WriteShareGroupStateResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition = p.Partition
			sc.run(&rp.ErrorCode, func() (func() error, *kerr.Error) {
				if p.StartOffset < 0 {
					return nil, kerr.InvalidRequest
				}
				snap := &share.Snapshot{Start: p.StartOffset}
				for _, b := range p.StateBatches {
					if b.LastOffset < b.FirstOffset || b.FirstOffset < p.StartOffset {
						return nil, kerr.InvalidRequest
					}
					snap.Batches = append(snap.Batches, share.StateBatch{First: b.FirstOffset, Last: b.LastOffset, State: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
				}
				return rc.s.shares.state.writeLocal(shareKey(req.GroupID, t.TopicID, p.Partition), p.LeaderEpoch, snap)
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	sc.finish()
	return resp
}
