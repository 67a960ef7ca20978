package broker

// ShareAcknowledge (key 79), v1–v2: acknowledgements of share group
// records outside a fetch (KIP-932), on the partition leader.
//
//   - The request runs in the member's share session: epoch 0 is
//     INVALID_SHARE_SESSION_EPOCH (a session is opened by a ShareFetch),
//     -1 applies the acknowledgements and closes the session, releasing
//     what the member still holds.
//   - Each partition's acknowledgements apply all or nothing
//     (INVALID_RECORD_STATE for records the member does not hold,
//     INVALID_REQUEST for malformed batches); RENEW (type 4) needs v2 and
//     IsRenewAck. They are persisted before the answer.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

func init() {
	checksACLs(kmsg.ShareAcknowledge)
	registerOptionalAPI(kmsg.ShareAcknowledge, 1, 2, shareGroupsEnabled, handleShareAcknowledge)
}

func handleShareAcknowledge(rc *requestContext, req *kmsg.ShareAcknowledgeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	c := rc.s.shares
	group, member, errCode := rc.shareRequestStart(req.GroupID, req.MemberID)
	if resp.ErrorCode = errCode; errCode != 0 {
		return resp
	}
	resp.AcquisitionLockTimeoutMillis = int32(c.settings(group).partition.LockDuration.Milliseconds())
	if req.ShareSessionEpoch == share.SessionOpenEpoch {
		resp.ErrorCode = rc.countError(kerr.InvalidShareSessionEpoch.Code)
		return resp
	}
	if _, _, err := c.shareSessionStart(group, member, req.ShareSessionEpoch, nil, nil); err != nil {
		resp.ErrorCode = rc.countError(err.Code)
		return resp
	}
	renew := req.Version >= 2 && req.IsRenewAck
	saves := &shareSaves{}
	type result struct {
		tp   share.TopicPartition
		code int16
	}
	var results []result
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}
			batches := shareAckBatches(p.AcknowledgementBatches, func(b kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) share.AckBatch {
				return share.AckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: b.AcknowledgeTypes}
			})
			results = append(results, result{tp, c.acknowledge(group, member, rc.resolveShareTarget(tp), batches, renew, saves)})
		}
	}
	if err := saves.await(); err != nil {
		rc.logError("share acknowledgements not persisted", "group", group, "err", err)
		for i := range results {
			if results[i].code == 0 {
				results[i].code = kerr.CoordinatorNotAvailable.Code
			}
		}
	}
	if req.ShareSessionEpoch == share.SessionFinalEpoch {
		c.closeSession(group, member)
	}
	byTopic := map[[16]byte]int{}
	for _, r := range results {
		i, ok := byTopic[r.tp.TopicID]
		if !ok {
			i = len(resp.Topics)
			byTopic[r.tp.TopicID] = i
			t := kmsg.NewShareAcknowledgeResponseTopic()
			t.TopicID = r.tp.TopicID
			resp.Topics = append(resp.Topics, t)
		}
		p := kmsg.NewShareAcknowledgeResponseTopicPartition()
		p.Partition = r.tp.Partition
		p.ErrorCode = rc.countError(r.code)
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	return resp
}
