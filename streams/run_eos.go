package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Exactly-once (v2): one kgo.GroupTransactSession per instance, with
// transactional id <application id>-<instance id>. A transaction begins with
// the first fetched record, spans every fetch for up to CommitInterval, and
// ends with the produced records flushed and the input offsets committed
// inside it (TxnOffsetCommit with the group generation). A rebalance during
// the transaction, a failed produce, or a fencing error aborts it and
// rewinds the consumer to the last committed offsets, so the records are
// processed again in a new transaction. A zombie instance (paused past its
// session, or replaced by a restart with the same instance id) is fenced:
// its offset commit fails on the stale generation or its producer epoch is
// bumped, and its transaction aborts.

// MaxProduceAborts is how many transactions in a row an exactly-once App
// aborts and retries after retriable produce failures (record timeouts,
// retriable broker errors) before Run returns the failure (ErrProduce).
const MaxProduceAborts = 5

// permanentProduceError reports a produce failure that retrying the
// transaction cannot fix: a non-retriable broker error (MESSAGE_TOO_LARGE,
// authorization, invalid topic, …), except the producer-state errors that
// a new transaction clears.
func permanentProduceError(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) || ke.Retriable {
		return false
	}
	switch ke {
	case kerr.UnknownProducerID, kerr.OutOfOrderSequenceNumber, kerr.InvalidProducerIDMapping:
		return false
	}
	return true
}

func (a *App) runExactlyOnce(ctx context.Context, proc *processor) error {
	opts := append(a.baseOpts(),
		kgo.TransactionalID(a.cfg.appID+"-"+a.cfg.instanceID),
		kgo.TransactionTimeout(a.cfg.txnTimeout),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// The session wraps the last two: it aborts the open transaction
		// on a revocation or loss; here ownership and the lag gauge
		// follow the assignment (records of a partition revoked after
		// they were polled are not processed: the session commits none
		// of its offsets, its next owner reads them).
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) { a.noteAssigned(assigned) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, revoked map[string][]int32) { a.dropLag(revoked) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) { a.dropLag(lost) }),
	)
	opts = append(opts, a.cfg.clientOpts...)
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		return fmt.Errorf("streams: client: %w", err)
	}
	defer sess.Close()

	produceCtx, cancelProduce := context.WithCancel(context.Background())
	defer cancelProduce()
	var (
		inTxn    bool
		txnStart time.Time
		// produceAborts counts transactions in a row aborted by a
		// retriable produce failure.
		produceAborts int
	)
	// aborted is set when end aborts: the session then rewinds the
	// consumer to the committed offsets, so records already polled must
	// not be processed (they come again).
	aborted := false
	end := func(endCtx context.Context) error {
		inTxn = false
		cl := sess.Client()
		if err := cl.Flush(endCtx); err != nil {
			return fmt.Errorf("streams: flush: %w", err)
		}
		try := kgo.TryCommit
		var fatal error
		if perr := a.takeProduceErr(); perr != nil {
			try = kgo.TryAbort
			switch {
			case errors.Is(perr, kgo.ErrAborting):
				// Records failed by an abort already under way
				// (rebalance): not a produce problem.
			case permanentProduceError(perr):
				fatal = fmt.Errorf("%w: %w", ErrProduce, perr)
			default:
				produceAborts++
				if produceAborts >= MaxProduceAborts {
					fatal = fmt.Errorf("%w: %d transactions in a row aborted, last: %w", ErrProduce, produceAborts, perr)
				} else {
					a.cfg.logger.Warn("produce failed; aborting the transaction", "err", perr, "attempt", produceAborts)
				}
			}
		}
		committed, err := sess.End(endCtx, try)
		if err != nil {
			return errors.Join(fatal, fmt.Errorf("streams: ending transaction: %w", err))
		}
		if committed {
			produceAborts = 0
			if proc.state != nil {
				// The transaction wrote the stores' changelog
				// records: now the stores may keep the writes.
				return proc.state.commit()
			}
			return nil
		}
		aborted = true
		if proc.state != nil {
			proc.state.abort()
		}
		a.stats.aborted.Add(1)
		if fatal != nil {
			return fatal
		}
		a.cfg.logger.Info("transaction aborted; its records will be processed again")
		return nil
	}
	for {
		pollCtx := ctx
		cancel := context.CancelFunc(func() {})
		if inTxn {
			pollCtx, cancel = pollContext(ctx, txnStart.Add(a.cfg.commitInterval))
		}
		fetches := sess.PollFetches(pollCtx)
		cancel()
		if fetches.IsClientClosed() {
			return nil
		}
		a.logFetchErrors(fetches)
		aborted = false
		if proc.state != nil {
			err := a.settleTasks(ctx, proc.state, fetches, func() error {
				if !inTxn {
					return nil
				}
				endCtx, cancelEnd := context.WithTimeout(context.Background(), a.cfg.txnTimeout)
				defer cancelEnd()
				return end(endCtx)
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if aborted {
				// Ending the transaction before opening tasks aborted
				// it (a rebalance): the session rewound to the
				// committed offsets, and these records, polled before
				// the rewind, will be fetched again. Processing them
				// now would count them twice.
				continue
			}
		}
		if fetches.NumRecords() > 0 {
			if !inTxn {
				if err := sess.Begin(); err != nil {
					return fmt.Errorf("streams: begin transaction: %w", err)
				}
				inTxn, txnStart = true, time.Now()
			}
			if err := a.processExactlyOnce(produceCtx, sess, proc, fetches); err != nil {
				abortCtx, cancelAbort := context.WithTimeout(context.Background(), a.cfg.txnTimeout)
				defer cancelAbort()
				inTxn = false
				_ = sess.Client().AbortBufferedRecords(abortCtx)
				if _, aerr := sess.End(abortCtx, kgo.TryAbort); aerr != nil {
					err = errors.Join(err, aerr)
				}
				if proc.state != nil {
					proc.state.abort()
				}
				return err
			}
		}
		if inTxn && (ctx.Err() != nil || !time.Now().Before(txnStart.Add(a.cfg.commitInterval)) ||
			(proc.state != nil && proc.state.overBudget())) {
			endCtx, cancelEnd := context.WithTimeout(context.Background(), a.cfg.txnTimeout)
			err := end(endCtx)
			cancelEnd()
			if err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// owns reports whether partition is assigned to this instance.
func (a *App) owns(topic string, partition int32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mu.owned[topic][partition]
}

func (a *App) processExactlyOnce(produceCtx context.Context, sess *kgo.GroupTransactSession, proc *processor, fetches kgo.Fetches) error {
	if proc.state != nil && len(proc.state.groups) > 0 {
		return a.processJoinedExactlyOnce(produceCtx, sess, proc, fetches) // join_order.go
	}
	var err error
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if err != nil || len(p.Records) == 0 || !a.owns(p.Topic, p.Partition) {
			return
		}
		for _, r := range p.Records {
			outs, perr := proc.process(r)
			if perr != nil {
				err = perr
				return
			}
			for _, o := range outs {
				sess.Produce(produceCtx, o, a.promise)
			}
		}
		a.mu.Lock()
		a.updateLagLocked(p)
		a.mu.Unlock()
	})
	return err
}
