package broker

// AddOffsetsToTxn (key 25), v0–v3: the group's __consumer_offsets
// partition joins the producer's transaction, so TxnOffsetCommit
// (28_txn_offset_commit.go) may write the group's offsets in it and the
// transaction's marker settles them.
//
//   - The partition is the group's coordinator partition
//     (abs(javaHash(group)) % offsets.topic.num.partitions); the topic is
//     created on first use (COORDINATOR_NOT_AVAILABLE if it cannot be).
//   - Errors as AddPartitionsToTxn's (24_add_partitions_to_txn.go):
//     CONCURRENT_TRANSACTIONS while the previous transaction completes,
//     INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
//     below v2).
//   - Answered once the coordinator's record is durable.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.AddOffsetsToTxn, 0, 3, handleAddOffsetsToTxn)
	checksACLs(kmsg.AddOffsetsToTxn)
}

func handleAddOffsetsToTxn(rc *requestContext, req *kmsg.AddOffsetsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if resp.ErrorCode = rc.txnDenied(acl.OpWrite, req.TransactionalID); resp.ErrorCode != 0 {
		return resp
	}
	if resp.ErrorCode = rc.groupDenied(acl.OpRead, req.Group); resp.ErrorCode != 0 {
		return resp
	}
	shards := rc.s.groups.ensureTopic()
	if len(shards) == 0 {
		resp.ErrorCode = rc.countError(kerr.CoordinatorNotAvailable.Code)
		return resp
	}
	code := rc.txnCall(req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
		return coord.AddOffsets(now, txn.AddOffsetsRequest{
			TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
			GroupID: req.Group, OffsetsPartition: groupPartition(req.Group, len(shards)), Version: req.Version,
		})
	})
	if code != nil {
		resp.ErrorCode = rc.countError(code.Code)
	}
	return resp
}
