package broker

// The transactional APIs (KIP-98), answered by the transaction coordinator
// (txn_coordinator.go, broker/txn): InitProducerId with a transactional id
// (22_init_producer_id.go calls in here), AddPartitionsToTxn (24, v0–v5:
// v4+ batches transactions and can be verify-only, KIP-890), AddOffsetsToTxn
// (25) and EndTxn (26); DescribeTransactions and ListTransactions are in
// 65_describe_transactions.go and 66_list_transactions.go. The answer is sent once the
// coordinator's records are durable; EndTxn also waits for the markers
// (they are local on one node).

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.AddPartitionsToTxn, 0, 5, handleAddPartitionsToTxn)
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
	if errors.Is(err, kerr.NotCoordinator) {
		return kerr.NotCoordinator
	}
	if err != nil {
		rc.logError("transaction coordinator write failed", "transactional_id", id, "err", err)
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
	if req.Version <= 3 {
		var topics []txnTopic
		for _, t := range req.Topics {
			topics = append(topics, txnTopic{name: t.Topic, partitions: t.Partitions})
		}
		errs := rc.addPartitionsToTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, topics, req.Version)
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition = p
				rp.ErrorCode = rc.countError(code(errs[txn.TopicPartition{Topic: t.Topic, Partition: p}]))
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	// v4+: several transactions at once, each of which may be verify-only
	// (KIP-890: a partition leader asking whether a partition already is
	// in the producer's transaction before it accepts a produce).
	for _, rt := range req.Transactions {
		var topics []txnTopic
		for _, t := range rt.Topics {
			topics = append(topics, txnTopic{name: t.Topic, partitions: t.Partitions})
		}
		errs := rc.addPartitionsToTxn(rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly, topics, req.Version)
		tr := kmsg.NewAddPartitionsToTxnResponseTransaction()
		tr.TransactionalID = rt.TransactionalID
		for _, t := range rt.Topics {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				tp.Partition = p
				tp.ErrorCode = rc.countError(code(errs[txn.TopicPartition{Topic: t.Topic, Partition: p}]))
				tt.Partitions = append(tt.Partitions, tp)
			}
			tr.Topics = append(tr.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, tr)
	}
	return resp
}

// txnTopic is one topic's partitions in an AddPartitionsToTxn request.
type txnTopic struct {
	name       string
	partitions []int32
}

// addPartitionsToTxn adds (or, verifyOnly, checks) one transaction's
// partitions and returns the error of each; nil means success.
func (rc *requestContext) addPartitionsToTxn(id string, pid int64, epoch int16, verifyOnly bool, topics []txnTopic, version int16) map[txn.TopicPartition]*kerr.Error {
	var tps []txn.TopicPartition
	unknown := map[txn.TopicPartition]bool{}
	for _, t := range topics {
		for _, p := range t.partitions {
			tp := txn.TopicPartition{Topic: t.name, Partition: p}
			if !rc.s.topics.exists(t.name, p) {
				unknown[tp] = true
			}
			tps = append(tps, tp)
		}
	}
	errs := make(map[txn.TopicPartition]*kerr.Error, len(tps))
	if len(unknown) > 0 {
		// Kafka refuses the whole request: the unknown partitions get
		// UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
		for _, tp := range tps {
			errs[tp] = kerr.OperationNotAttempted
			if unknown[tp] {
				errs[tp] = kerr.UnknownTopicOrPartition
			}
		}
		return errs
	}
	areq := txn.AddPartitionsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: tps, Version: version}
	var results []txn.PartitionResult
	failed := rc.txnCall(id, func(coord *txn.Coordinator, now time.Time) (*kerr.Error, txn.Effects) {
		if verifyOnly {
			results = coord.VerifyPartitions(areq)
			return nil, txn.Effects{}
		}
		var eff txn.Effects
		results, eff = coord.AddPartitions(now, areq)
		return nil, eff
	})
	for _, tp := range tps {
		errs[tp] = failed
	}
	if failed == nil {
		for _, r := range results {
			err := r.Err
			if err == kerr.TransactionAbortable && version < 5 {
				// TRANSACTION_ABORTABLE exists from v5 (KIP-890).
				err = kerr.InvalidTxnState
			}
			errs[r.TopicPartition] = err
		}
	}
	return errs
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
