package broker

// AddPartitionsToTxn (key 24), v0–v5, answered by the transaction
// coordinator (txn_coordinator.go, broker/txn).
//
//   - v0–v3 carry one transaction; v4+ batch several, each answered on its
//     own, and a transaction marked verify_only (KIP-890: a partition
//     leader asking whether the partitions already are in the producer's
//     ongoing transaction) changes nothing: each partition not in it gets
//     TRANSACTION_ABORTABLE (INVALID_TXN_STATE below v5, which predates
//     that code).
//   - A partition of an unknown topic fails the whole request: it gets
//     UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
//   - Adding while the previous transaction is still being completed
//     (its markers not all written) waits for that, up to 200 ms
//     (txnConcurrentWait, no lock held), then answers
//     CONCURRENT_TRANSACTIONS: the client retries. A wrong producer id is INVALID_PRODUCER_ID_MAPPING,
//     a stale epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v2).
//   - The answer is sent once the coordinator's record is durable (below
//     the __transaction_state partition's high watermark), holding no
//     lock while it waits; a failed write is COORDINATOR_NOT_AVAILABLE.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.AddPartitionsToTxn, 0, 5, handleAddPartitionsToTxn)
	checksACLs(kmsg.AddPartitionsToTxn)
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
	// in the producer's transaction before it accepts a produce). Only
	// brokers send it: CLUSTER_ACTION.
	if resp.ErrorCode = rc.clusterDenied(acl.OpClusterAction); resp.ErrorCode != 0 {
		return resp
	}
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
	refused := map[txn.TopicPartition]*kerr.Error{}
	txnDenied := !rc.authorize(acl.OpWrite, acl.ResourceTransactionalID, id)
	for _, t := range topics {
		topicDenied := !txnDenied && !rc.authorize(acl.OpWrite, acl.ResourceTopic, t.name)
		for _, p := range t.partitions {
			tp := txn.TopicPartition{Topic: t.name, Partition: p}
			switch {
			case txnDenied:
				refused[tp] = kerr.TransactionalIDAuthorizationFailed
			case topicDenied:
				refused[tp] = kerr.TopicAuthorizationFailed
			case !rc.s.topics.exists(t.name, p):
				refused[tp] = kerr.UnknownTopicOrPartition
			}
			tps = append(tps, tp)
		}
	}
	errs := make(map[txn.TopicPartition]*kerr.Error, len(tps))
	if len(refused) > 0 {
		// Kafka refuses the whole request: the unauthorized and unknown
		// partitions get their error, the others OPERATION_NOT_ATTEMPTED.
		for _, tp := range tps {
			errs[tp] = kerr.OperationNotAttempted
			if err := refused[tp]; err != nil {
				errs[tp] = err
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
		if len(results) > 0 && results[0].Err == kerr.ConcurrentTransactions {
			// Every partition has the same result; as the call's answer
			// txnCall waits for the previous transaction's markers.
			return kerr.ConcurrentTransactions, eff
		}
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
