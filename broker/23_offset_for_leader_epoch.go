package broker

// OffsetForLeaderEpoch (key 23), v0–v4.
//
//   - For the requested epoch: the largest epoch <= it that this log has,
//     and the offset where the next epoch starts (the log end offset for the
//     current epoch). Clients use it to detect truncation after a leader
//     change (KIP-320); followers will use it to truncate divergent tails.
//   - current_leader_epoch is checked (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH).
//   - Epochs older than the local log's come from the remote log's manifest
//     (tiered topics), so the answer does not change when segments move.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.OffsetForLeaderEpoch, 0, 4, handleOffsetForLeaderEpoch)
	checksACLs(kmsg.OffsetForLeaderEpoch)
}

func handleOffsetForLeaderEpoch(rc *requestContext, req *kmsg.OffsetForLeaderEpochRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	follower := req.Version >= 3 && req.ReplicaID >= 0
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		// Followers need CLUSTER_ACTION, clients DESCRIBE on the topic.
		var denied int16
		switch {
		case follower && !rc.authorizeCluster(acl.OpClusterAction):
			denied = kerr.ClusterAuthorizationFailed.Code
		case !follower && !rc.authorize(acl.OpDescribe, acl.ResourceTopic, rt.Topic):
			denied = kerr.TopicAuthorizationFailed.Code
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			p, code := rc.s.topics.leaderPartition(rt.Topic, rp.Partition)
			switch {
			case denied != 0:
				sp.ErrorCode = rc.countError(denied)
			case p == nil:
				sp.ErrorCode = rc.countError(code)
			case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < p.LeaderEpoch():
				sp.ErrorCode = rc.countError(kerr.FencedLeaderEpoch.Code)
			case rp.CurrentLeaderEpoch > p.LeaderEpoch():
				sp.ErrorCode = rc.countError(kerr.UnknownLeaderEpoch.Code)
			case rp.LeaderEpoch > p.LeaderEpoch():
				// An epoch newer than any this leader knows: undefined,
				// as in Kafka (sp keeps -1, -1).
			case rp.LeaderEpoch == p.LeaderEpoch():
				// The current epoch (possibly with no batch written in
				// it yet) ends at the log end.
				sp.LeaderEpoch, sp.EndOffset = rp.LeaderEpoch, p.Log().LogEndOffset()
			case rp.LeaderEpoch > p.Log().LatestEpoch():
				// Newer than any epoch in the log: the largest epoch at
				// or below it is the log's latest, which ends at the
				// log end (KIP-279).
				sp.LeaderEpoch, sp.EndOffset = p.Log().LatestEpoch(), p.Log().LogEndOffset()
			default:
				sp.LeaderEpoch, sp.EndOffset = p.endOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
