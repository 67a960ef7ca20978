package broker

// EndTxn (key 26), v0–v3: the producer commits or aborts its transaction.
//
//   - The transaction moves to PrepareCommit or PrepareAbort; the answer is
//     sent once that record is durable, as in Kafka. The markers are then
//     written asynchronously by the coordinator's marker task
//     (txn_coordinator.go, finishTxn): locally and through WriteTxnMarkers
//     to the other partition leaders, retried with backoff until each is
//     written; then the transaction is completed (CompleteCommit or
//     CompleteAbort, another record). Until then the producer's next
//     InitProducerId, AddPartitionsToTxn or AddOffsetsToTxn waits for it
//     up to 200 ms (txnConcurrentWait), then gets CONCURRENT_TRANSACTIONS,
//     which clients retry.
//   - A retry finds the transaction decided: the same decision succeeds
//     once complete, and gets CONCURRENT_TRANSACTIONS while completing;
//     the other decision, or EndTxn without a transaction, is
//     INVALID_TXN_STATE.
//   - INVALID_PRODUCER_ID_MAPPING for another producer id, PRODUCER_FENCED
//     for a stale epoch (INVALID_PRODUCER_EPOCH below v2). Transaction
//     version 2 (KIP-890 part 2: the epoch bump on every EndTxn, v5) is
//     not implemented.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.EndTxn, 0, 3, handleEndTxn)
	checksACLs(kmsg.EndTxn)
}

func handleEndTxn(rc *requestContext, req *kmsg.EndTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	if resp.ErrorCode = rc.txnDenied(acl.OpWrite, req.TransactionalID); resp.ErrorCode != 0 {
		return resp
	}
	code := rc.txnCall(req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
		return coord.EndTxn(now, txn.EndTxnRequest{
			TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
			Commit: req.Commit, Version: req.Version,
		})
	})
	if code != nil {
		resp.ErrorCode = rc.countError(code.Code)
	}
	return resp
}
