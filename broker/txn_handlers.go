package broker

// The transactional APIs (KIP-98), answered by the transaction coordinator
// (txn_coordinator.go, broker/txn): InitProducerId with a transactional id
// (22_init_producer_id.go calls in here), AddPartitionsToTxn (24, v0–v3),
// AddOffsetsToTxn (25) and EndTxn (26). The answer is sent once the
// coordinator's records are durable; EndTxn also waits for the markers
// (they are local on one node).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.AddPartitionsToTxn, 0, 3, handleAddPartitionsToTxn)
	registerAPI(kmsg.AddOffsetsToTxn, 0, 3, handleAddOffsetsToTxn)
	registerAPI(kmsg.EndTxn, 0, 3, handleEndTxn)
}

// txnCall runs fn on the shard of a transactional id and turns a failed
// write into COORDINATOR_NOT_AVAILABLE (the client retries).
func (rc *requestContext) txnCall(id string, fn func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects)) *kerr.Error {
	sh, code := rc.s.txns.shardFor(id)
	if code != nil {
		return code
	}
	var answer *kerr.Error
	err := sh.do(func(coord *txn.Coordinator, now time.Time) txn.Effects {
		var eff txn.Effects
		answer, eff = fn(coord, now)
		return eff
	})
	if err != nil {
		rc.s.logger.Error("transaction coordinator write failed", "transactional_id", id, "err", err)
		return kerr.CoordinatorNotAvailable
	}
	return answer
}

func (rc *requestContext) initTransactionalProducer(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) kmsg.Response {
	var res txn.InitResult
	code := rc.txnCall(*req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
		var eff txn.Effects
		res, eff = coord.InitProducerID(now, txn.InitRequest{
			TransactionalID: *req.TransactionalID, TimeoutMs: req.TransactionTimeoutMillis,
			ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Version: req.Version,
		}, rc.s.pids.allocate)
		return res.Err, eff
	})
	if code != nil {
		resp.ErrorCode = rc.countError(code.Code)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
	return resp
}

func handleAddPartitionsToTxn(rc *requestContext, req *kmsg.AddPartitionsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	var tps []txn.TopicPartition
	unknown := map[txn.TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := txn.TopicPartition{Topic: t.Topic, Partition: p}
			if rc.s.topics.partition(t.Topic, p) == nil {
				unknown[tp] = true
			}
			tps = append(tps, tp)
		}
	}
	errs := map[txn.TopicPartition]*kerr.Error{}
	if len(unknown) > 0 {
		// Kafka refuses the whole request: the unknown partitions get
		// UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
		for _, tp := range tps {
			errs[tp] = kerr.OperationNotAttempted
			if unknown[tp] {
				errs[tp] = kerr.UnknownTopicOrPartition
			}
		}
	} else {
		var results []txn.PartitionResult
		code := rc.txnCall(req.TransactionalID, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
			var eff txn.Effects
			results, eff = coord.AddPartitions(now, txn.AddPartitionsRequest{
				TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
				Partitions: tps, Version: req.Version,
			})
			return nil, eff
		})
		for _, tp := range tps {
			errs[tp] = code
		}
		for _, r := range results {
			if code == nil {
				errs[r.TopicPartition] = r.Err
			}
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition = p
			if e := errs[txn.TopicPartition{Topic: t.Topic, Partition: p}]; e != nil {
				rp.ErrorCode = rc.countError(e.Code)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func handleAddOffsetsToTxn(rc *requestContext, req *kmsg.AddOffsetsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
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

func handleEndTxn(rc *requestContext, req *kmsg.EndTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
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
