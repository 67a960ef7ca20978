package broker

// ReadShareGroupStateSummary (key 87), v0–v1: a share-partition's start
// offset and leader epoch at its share coordinator, and (v1,
// DeliveryCompleteCount) how many records from the start offset on are
// acknowledged or archived (share_state_apis.go has what the share
// coordinator APIs share). A share-partition with no state has start
// offset -1.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	checksACLs(kmsg.ReadShareGroupStateSummary)
	registerOptionalAPI(kmsg.ReadShareGroupStateSummary, 0, 1, shareGroupsEnabled, handleReadShareGroupStateSummary)
}

func handleReadShareGroupStateSummary(rc *requestContext, req *kmsg.ReadShareGroupStateSummaryRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	sc := rc.shareStateCall()
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.ReadShareGroupStateSummaryResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition, rp.StartOffset = p.Partition, -1
			sc.run(&rp.ErrorCode, func() (func() error, *kerr.Error) {
				start, epoch, done, ok, code := rc.s.shares.state.summaryLocal(shareKey(req.GroupID, t.TopicID, p.Partition))
				if code == nil && ok {
					rp.StartOffset, rp.LeaderEpoch, rp.DeliveryCompleteCount = start, epoch, int32(done)
				}
				return nil, code
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	sc.finish()
	return resp
}
