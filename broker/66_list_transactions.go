package broker

// ListTransactions (key 66), v0–v2.
//
//   - Every transactional id the coordinator knows, filtered by state
//     names (unknown names come back in unknown_state_filters and match
//     nothing), producer ids, v1's minimum running time (KIP-994) and v2's
//     transactional id pattern (KIP-1152; Go's RE2 syntax, which accepts
//     the common Java patterns; a bad one is INVALID_REGULAR_EXPRESSION).
//   - Before __transaction_state exists the list is empty; asking never
//     creates it.

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.ListTransactions, 0, 2, handleListTransactions)
	checksACLs(kmsg.ListTransactions)
}

func handleListTransactions(rc *requestContext, req *kmsg.ListTransactionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		var err error
		if pattern, err = regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$"); err != nil {
			resp.ErrorCode = rc.countError(kerr.InvalidRegularExpression.Code)
			return resp
		}
	}
	filter := txn.ListFilter{States: req.StateFilters, ProducerIDs: req.ProducerIDFilters}
	if req.Version >= 1 {
		filter.MinDurationMs = req.DurationFilterMillis
	}
	res := rc.s.txns.list(filter)
	resp.UnknownStateFilters = res.UnknownStateFilters
	for _, l := range res.Transactions {
		if pattern != nil && !pattern.MatchString(l.TransactionalID) {
			continue
		}
		if !rc.authorize(acl.OpDescribe, acl.ResourceTransactionalID, l.TransactionalID) {
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = l.TransactionalID, l.ProducerID, l.State
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

// list gathers ListTransactions' answer from every loaded shard.
func (c *txnCoordinator) list(filter txn.ListFilter) txn.ListResult {
	shards := c.shards()
	if shards == nil && c.s.topics.get(transactionStateTopic) != nil {
		shards = c.ensureTopic() // exists on disk but not loaded yet
	}
	out := txn.ListResult{UnknownStateFilters: txn.UnknownStates(filter.States)}
	now := time.Now()
	for _, sh := range shards {
		sh.mu.Lock()
		if sh.coord == nil { // led by another node
			sh.mu.Unlock()
			continue
		}
		res := sh.coord.List(now, filter)
		sh.mu.Unlock()
		out.Transactions = append(out.Transactions, res.Transactions...)
	}
	slices.SortFunc(out.Transactions, func(a, b txn.Listed) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return out
}
