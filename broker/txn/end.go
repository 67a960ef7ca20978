package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// EndTxnRequest is EndTxn.
type EndTxnRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	// Version: below 2 a stale epoch is INVALID_PRODUCER_EPOCH.
	Version int16
}

// EndTxn ends the producer's Ongoing transaction: it moves to
// PrepareCommit or PrepareAbort (a record) and its markers are requested.
// The answer (nil) may be sent once the record is durable — the markers
// are written afterwards, asynchronously, as in Kafka.
//
// A retry is answered from the state it finds: the same decision already
// complete succeeds, one still being completed gets
// CONCURRENT_TRANSACTIONS, the opposite decision (or ending with no
// transaction, in Empty) gets INVALID_TXN_STATE.
func (c *Coordinator) EndTxn(now time.Time, req EndTxnRequest) (*kerr.Error, Effects) {
	err := c.endTxn(now, req)
	if err == kerr.ProducerFenced {
		err = fenced(req.Version, endTxnFencedVersion)
	}
	return err, c.take()
}

func (c *Coordinator) endTxn(now time.Time, req EndTxnRequest) *kerr.Error {
	m, err := c.lookup(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if err != nil {
		return err
	}
	switch m.state {
	case Ongoing:
		c.prepareEnd(m, req.Commit, now.UnixMilli())
		return nil
	case CompleteCommit:
		return retryResult(req.Commit, nil)
	case CompleteAbort:
		return retryResult(!req.Commit, nil)
	case PrepareCommit:
		return retryResult(req.Commit, kerr.ConcurrentTransactions)
	case PrepareAbort:
		return retryResult(!req.Commit, kerr.ConcurrentTransactions)
	case Empty:
		return kerr.InvalidTxnState
	}
	return kerr.UnknownServerError // Dead, PrepareEpochFence: never held
}

func retryResult(same bool, err *kerr.Error) *kerr.Error {
	if !same {
		return kerr.InvalidTxnState
	}
	return err
}

// CompleteTxn is called by the caller once every marker of a Markers it
// was given is durable: the transaction moves to CompleteCommit or
// CompleteAbort (a record) and its partitions are cleared. A completion
// that no longer matches the transaction (another producer id or epoch, or
// not in the Prepare state of that decision — e.g. after a reload) is
// ignored with the error Kafka would log.
func (c *Coordinator) CompleteTxn(now time.Time, done Markers) (*kerr.Error, Effects) {
	m := c.txns[done.TransactionalID]
	switch {
	case m == nil || m.producerID != done.ProducerID:
		return kerr.InvalidProducerIDMapping, Effects{}
	case m.producerEpoch != done.ProducerEpoch:
		return kerr.ProducerFenced, Effects{}
	case done.Commit && m.state != PrepareCommit, !done.Commit && m.state != PrepareAbort:
		return kerr.InvalidTxnState, Effects{}
	}
	m.state, m.pending = m.pending, NoState
	clear(m.partitions)
	m.lastUpdate = now.UnixMilli()
	c.persist(m)
	return nil, c.take()
}

// PendingMarkers returns the markers of every transaction in PrepareCommit
// or PrepareAbort. Call it after loading a partition (Replay): Kafka's new
// coordinator resends them, as the old one may have died before finishing.
func (c *Coordinator) PendingMarkers() []Markers {
	for _, id := range c.IDs() {
		if m := c.txns[id]; m.state == PrepareCommit || m.state == PrepareAbort {
			c.sendMarkers(m)
		}
	}
	return c.take().Markers
}

// Tick fires what is due at now:
//
//   - a transaction Ongoing for longer than its timeout is aborted: its
//     epoch is bumped (fencing the producer, which must InitProducerId
//     again) and it moves to PrepareAbort with abort markers;
//   - a transactional id in Empty, CompleteCommit or CompleteAbort not
//     updated for transactional.id.expiration.ms is removed with a
//     tombstone.
func (c *Coordinator) Tick(now time.Time) Effects {
	nowMs := now.UnixMilli()
	expireBefore := nowMs - c.cfg.IDExpiration.Milliseconds()
	for _, id := range c.IDs() {
		m := c.txns[id]
		switch {
		case m.state == Ongoing && m.startTimestamp+int64(m.timeoutMs) < nowMs:
			c.fenceAndAbort(m, nowMs)
		case m.state.expirationAllowed() && m.lastUpdate <= expireBefore:
			delete(c.txns, id)
			c.out.Records = append(c.out.Records, Record{TransactionalID: id})
		}
	}
	return c.take()
}

// NextDeadline is when Tick next has work to do; zero when nothing is
// scheduled. Kafka checks timeouts every 10 s
// (transaction.abort.timed.out.transaction.cleanup.interval.ms) and
// expiry hourly; callers may likewise tick less often than this.
func (c *Coordinator) NextDeadline() time.Time {
	var next int64
	found := false
	for _, m := range c.txns {
		var at int64
		switch {
		case m.state == Ongoing:
			at = m.startTimestamp + int64(m.timeoutMs) + 1
		case m.state.expirationAllowed():
			at = m.lastUpdate + c.cfg.IDExpiration.Milliseconds()
		default:
			continue
		}
		if !found || at < next {
			next, found = at, true
		}
	}
	if !found {
		return time.Time{}
	}
	return time.UnixMilli(next)
}
