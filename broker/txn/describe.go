package txn

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Describe answers DescribeTransactions for one transactional id:
// TRANSACTIONAL_ID_NOT_FOUND for an unknown id, INVALID_REQUEST for "".
func (c *Coordinator) Describe(id string) Described {
	d := Described{TransactionalID: id, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, StartTimestamp: -1}
	if id == "" {
		d.Err = kerr.InvalidRequest
		return d
	}
	m := c.txns[id]
	if m == nil || m.state == Dead {
		d.Err = kerr.TransactionalIDNotFound
		return d
	}
	d.State = m.state.String()
	d.ProducerID, d.ProducerEpoch = m.producerID, m.producerEpoch
	d.TimeoutMs = m.timeoutMs
	d.StartTimestamp = m.startTimestamp
	d.Partitions = m.sortedPartitions()
	return d
}

// List answers ListTransactions (v0–v1): the transactions matching every
// filter given. State names Kafka does not know are returned in
// UnknownStateFilters (and match nothing).
func (c *Coordinator) List(now time.Time, f ListFilter) ListResult {
	states, unknown := parseStates(f.States)
	res := ListResult{UnknownStateFilters: unknown}
	nowMs := now.UnixMilli()
	for _, id := range c.IDs() {
		m := c.txns[id]
		switch {
		case m.state == Dead:
			continue
		case len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, m.producerID):
			continue
		case len(f.States) > 0 && !slices.Contains(states, m.state):
			continue
		case f.MinDurationMs > 0 && nowMs-m.startTimestamp <= f.MinDurationMs:
			continue
		}
		res.Transactions = append(res.Transactions, Listed{TransactionalID: id, ProducerID: m.producerID, State: m.state.String()})
	}
	return res
}

// UnknownStates returns the state names of a ListTransactions filter that
// Kafka does not know, in request order.
func UnknownStates(names []string) []string {
	_, unknown := parseStates(names)
	return unknown
}

func parseStates(names []string) (known []State, unknown []string) {
	for _, name := range names {
		if s, ok := ParseState(name); ok {
			known = append(known, s)
		} else {
			unknown = append(unknown, name)
		}
	}
	return known, unknown
}
