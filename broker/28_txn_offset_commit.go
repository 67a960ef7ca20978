package broker

// TxnOffsetCommit (key 28), v0–v3: a transactional producer commits a
// group's offsets inside its transaction (exactly-once consume-transform-
// produce). The offsets stay pending until the transaction's marker on the
// group's __consumer_offsets partition (which AddOffsetsToTxn added to the
// transaction) commits or aborts them; v3 carries the member's generation,
// checked as OffsetCommit does (KIP-447).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.TxnOffsetCommit, 0, 3, handleTxnOffsetCommit)
}

func handleTxnOffsetCommit(rc *requestContext, req *kmsg.TxnOffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	greq := groups.TxnCommitRequest{
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		GenerationID: req.Generation, MemberID: req.MemberID, GroupInstanceID: req.InstanceID,
	}
	if req.Version < 3 {
		greq.GenerationID, greq.MemberID = -1, ""
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			meta := ""
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			greq.Offsets = append(greq.Offsets, groups.CommitOffset{
				TopicPartition:    groups.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				OffsetAndMetadata: groups.OffsetAndMetadata{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta, CommitTimestamp: rc.s.groups.now().UnixMilli(), ExpireTimestamp: -1},
			})
		}
	}
	var errs []*kerr.Error
	sh, code := rc.s.groups.shardFor(req.Group)
	if code == nil {
		var err error
		errs, code, err = sh.txnCommit(req.Group, greq)
		if code == nil && err != nil {
			code = kerr.CoordinatorNotAvailable
		}
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case code != nil:
				rp.ErrorCode = rc.countError(code.Code)
			case i < len(errs) && errs[i] != nil:
				rp.ErrorCode = rc.countError(errs[i].Code)
			}
			i++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
