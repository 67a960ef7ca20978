package broker

// InitializeShareGroupState (key 83), v0: a group coordinator sets a
// share-partition's start offset at its share coordinator, forgetting the
// records in flight (share_state_apis.go has what the share coordinator
// APIs share). A StartOffset of -1 leaves the state as it is.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

func init() {
	checksACLs(kmsg.InitializeShareGroupState)
	registerOptionalAPI(kmsg.InitializeShareGroupState, 0, 0, shareGroupsEnabled, handleInitializeShareGroupState)
}

func handleInitializeShareGroupState(rc *requestContext, req *kmsg.InitializeShareGroupStateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	sc := rc.shareStateCall()
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.InitializeShareGroupStateResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition = p.Partition
			sc.run(&rp.ErrorCode, func() (func() error, *kerr.Error) {
				if p.StartOffset < 0 {
					return nil, nil
				}
				return rc.s.shares.state.writeLocal(shareKey(req.GroupID, t.TopicID, p.Partition), -1, &share.Snapshot{Start: p.StartOffset})
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	sc.finish()
	return resp
}
