package broker

// InitProducerId (key 22), v0–v5, for idempotent producers.
//
//   - Without a transactional id: a fresh producer id (allocated in blocks
//     through the metadata quorum, never reused) with epoch 0.
//   - With an existing producer id and epoch (KIP-360, v3+): the epoch is
//     bumped so the producer can reset its sequences; at the maximum epoch a
//     new id is issued.
//   - With a transactional id: the transaction coordinator's answer
//     (txn_coordinator.go): a new id, or the next epoch that fences older
//     producers, after aborting an open transaction.

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.InitProducerID, 0, 5, handleInitProducerID)
	checksACLs(kmsg.InitProducerID)
}

func handleInitProducerID(rc *requestContext, req *kmsg.InitProducerIDRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		if resp.ErrorCode = rc.txnDenied(acl.OpWrite, *req.TransactionalID); resp.ErrorCode != 0 {
			return resp
		}
		return rc.initTransactionalProducer(req, resp)
	}
	if !rc.authorizeIdempotent() {
		resp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
		return resp
	}
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < math.MaxInt16-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return resp
	}
	id, err := rc.s.pids.allocate()
	if err != nil {
		rc.logError("allocating producer id", "err", err)
		resp.ErrorCode = rc.countError(kerr.CoordinatorNotAvailable.Code)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
