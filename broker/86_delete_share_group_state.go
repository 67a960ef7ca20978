package broker

// DeleteShareGroupState (key 86), v0: a group coordinator deletes the
// state of share-partitions whose group or offsets were deleted (a
// tombstone in __share_group_state; share_state_apis.go has what the
// share coordinator APIs share).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	checksACLs(kmsg.DeleteShareGroupState)
	registerOptionalAPI(kmsg.DeleteShareGroupState, 0, 0, shareGroupsEnabled, handleDeleteShareGroupState)
}

func handleDeleteShareGroupState(rc *requestContext, req *kmsg.DeleteShareGroupStateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	sc := rc.shareStateCall()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.DeleteShareGroupStateResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition = p.Partition
			sc.run(&rp.ErrorCode, func() (func() error, *kerr.Error) {
				return rc.s.shares.state.writeLocal(shareKey(req.GroupID, t.TopicID, p.Partition), -1, nil)
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	sc.finish()
	return resp
}
