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

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.TxnOffsetCommit, 0, 3, handleTxnOffsetCommit)
	checksACLs(kmsg.TxnOffsetCommit)
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
	// WRITE on the transactional id and READ on the group, or nothing is
	// committed; READ on each topic, or its partitions are left out.
	var denied *kerr.Error
	switch {
	case !rc.authorize(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID):
		denied = kerr.TransactionalIDAuthorizationFailed
	case !rc.authorize(acl.OpRead, acl.ResourceGroup, req.Group):
		denied = kerr.GroupAuthorizationFailed
	}
	topicDenied := map[string]bool{}
	for _, t := range req.Topics {
		if !rc.authorize(acl.OpRead, acl.ResourceTopic, t.Topic) {
			topicDenied[t.Topic] = true
			continue
		}
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
	code := denied
	if code == nil && len(greq.Offsets) > 0 {
		var sh *groupShard
		if sh, code = rc.s.groups.shardFor(req.Group); code == nil {
			var err error
			errs, code, err = sh.txnCommit(req.Group, greq)
			if code == nil && err != nil {
				code = kerr.CoordinatorNotAvailable
			}
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
			case topicDenied[t.Topic]:
				rp.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
				continue
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
