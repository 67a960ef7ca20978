package broker

// DescribeTransactions (key 65), v0.
//
//   - For each transactional id: its state (Kafka's names: Empty, Ongoing,
//     PrepareCommit, …), producer id and epoch, timeout, the start of the
//     ongoing transaction (-1 outside one) and its partitions by topic.
//   - TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know
//     (including before __transaction_state exists: asking never creates
//     it); INVALID_REQUEST for an empty id.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions)
	checksACLs(kmsg.DescribeTransactions)
}

func handleDescribeTransactions(rc *requestContext, req *kmsg.DescribeTransactionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
		if st.ErrorCode = rc.txnDenied(acl.OpDescribe, id); st.ErrorCode != 0 {
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		d := rc.s.txns.describe(id)
		if d.Err != nil {
			st.ErrorCode = rc.countError(d.Err.Code)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State, st.TimeoutMillis, st.StartTimestamp = d.State, d.TimeoutMs, d.StartTimestamp
		st.ProducerID, st.ProducerEpoch = d.ProducerID, d.ProducerEpoch
		for _, tp := range d.Partitions { // sorted by topic, then partition
			if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, tp.Topic) {
				continue // as Kafka: topics the caller may not see are left out
			}
			if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic = tp.Topic
				st.Topics = append(st.Topics, t)
			}
			t := &st.Topics[len(st.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

// describe answers DescribeTransactions for one id without creating
// __transaction_state.
func (c *txnCoordinator) describe(id string) txn.Described {
	if id == "" {
		return txn.Described{Err: kerr.InvalidRequest}
	}
	shards := c.shards()
	if shards == nil && c.s.topics.get(transactionStateTopic) == nil {
		return txn.Described{Err: kerr.TransactionalIDNotFound}
	}
	sh, code := c.shardFor(id)
	if code != nil {
		return txn.Described{Err: code}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.coord == nil {
		return txn.Described{Err: kerr.NotCoordinator}
	}
	return sh.coord.Describe(id)
}
