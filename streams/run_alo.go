package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// At-least-once: records are produced asynchronously; every commit interval
// (and before partitions are revoked, and at shutdown) the client flushes all
// produced records and only then commits the offsets after the last
// processed record of each owned partition. A crash loses at most the
// uncommitted tail, which the next owner reprocesses.

func (a *App) runAtLeastOnce(ctx context.Context, proc *processor) error {
	opts := append(a.baseOpts(),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) { a.noteAssigned(assigned) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
			a.mu.Lock()
			defer a.mu.Unlock()
			if err := a.flushAndCommitLocked(ctx, cl); err != nil {
				a.cfg.logger.Warn("commit before revocation failed; the next owner reprocesses", "err", err)
			}
			a.dropLocked(revoked)
			a.noteRevokedLocked(revoked)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.dropLocked(lost)
			a.noteRevokedLocked(lost)
		}),
	)
	opts = append(opts, a.cfg.clientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("streams: client: %w", err)
	}
	defer cl.Close()

	// Produce with a context that outlives ctx, so records in hand at
	// shutdown are still delivered before the last commit.
	produceCtx, cancelProduce := context.WithCancel(context.Background())
	defer cancelProduce()
	// commit delivers every produced record, commits the offsets and then
	// the stores (whose changelog records are now all acknowledged).
	commit := func() error {
		a.mu.Lock()
		err := a.flushAndCommitLocked(produceCtx, cl)
		a.mu.Unlock()
		if err == nil && proc.state != nil {
			err = proc.state.commit()
		}
		return err
	}
	nextCommit := time.Now().Add(a.cfg.commitInterval)
	for {
		pollCtx, cancel := pollContext(ctx, nextCommit)
		fetches := cl.PollFetches(pollCtx)
		cancel()
		if fetches.IsClientClosed() {
			return nil
		}
		a.logFetchErrors(fetches)
		if proc.state != nil {
			if err := a.settleTasks(ctx, proc.state, fetches, commit); err != nil {
				if ctx.Err() != nil {
					return commit()
				}
				return err
			}
		}
		if err := a.processAtLeastOnce(produceCtx, cl, proc, fetches); err != nil {
			// Deliver what the good records produced and commit up to
			// (not including) the failed record.
			if ferr := commit(); ferr != nil {
				err = errors.Join(err, ferr)
			}
			return err
		}
		if ctx.Err() != nil || !time.Now().Before(nextCommit) || (proc.state != nil && proc.state.overBudget()) {
			if err := commit(); err != nil {
				return err
			}
			nextCommit = time.Now().Add(a.cfg.commitInterval)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (a *App) processAtLeastOnce(produceCtx context.Context, cl *kgo.Client, proc *processor, fetches kgo.Fetches) error {
	if proc.state != nil && len(proc.state.groups) > 0 {
		return a.processJoinedAtLeastOnce(produceCtx, cl, proc, fetches) // join_order.go
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if err != nil || len(p.Records) == 0 || !a.mu.owned[p.Topic][p.Partition] {
			return
		}
		last := -1
		for i, r := range p.Records {
			outs, perr := proc.process(r)
			if perr != nil {
				err = perr
				break
			}
			for _, o := range outs {
				cl.Produce(produceCtx, o, a.promise)
			}
			last = i
		}
		if last >= 0 {
			r := p.Records[last]
			m := a.mu.processed[p.Topic]
			if m == nil {
				m = map[int32]kgo.EpochOffset{}
				a.mu.processed[p.Topic] = m
			}
			m[p.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
		}
		a.updateLagLocked(p)
	})
	return err
}

// flushAndCommitLocked delivers every produced record, then commits the
// processed offsets. A produce failure is returned (and nothing committed).
func (a *App) flushAndCommitLocked(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("streams: flush: %w", err)
	}
	if err := a.peekProduceErr(); err != nil {
		return fmt.Errorf("%w: %w", ErrProduce, err)
	}
	if len(a.mu.processed) == 0 {
		return nil
	}
	offsets := a.mu.processed
	var commitErr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && commitErr == nil {
					commitErr = fmt.Errorf("%s[%d]: %w", t.Topic, p.Partition, e)
				}
			}
		}
	})
	if commitErr != nil {
		// A rebalance moved partitions: the new owner reprocesses from
		// the last commit (at-least-once allows the duplicates).
		a.cfg.logger.Info("offset commit failed", "err", commitErr)
		return nil
	}
	a.mu.processed = map[string]map[int32]kgo.EpochOffset{}
	return nil
}

func (a *App) dropLocked(parts map[string][]int32) {
	for t, ps := range parts {
		for _, p := range ps {
			delete(a.mu.owned[t], p)
			delete(a.mu.processed[t], p)
			delete(a.mu.lag[t], p)
		}
	}
}

// noteAssigned records partitions assigned to this instance: only their
// records are processed and only their tasks opened.
func (a *App) noteAssigned(assigned map[string][]int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for t, ps := range assigned {
		if a.mu.owned[t] == nil {
			a.mu.owned[t] = map[int32]bool{}
		}
		for _, p := range ps {
			a.mu.owned[t][p] = true
		}
	}
}

// dropLag forgets partitions this instance no longer owns (exactly-once:
// ownership and lag) and queues their tasks for closing.
func (a *App) dropLag(parts map[string][]int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.noteRevokedLocked(parts)
	for t, ps := range parts {
		for _, p := range ps {
			delete(a.mu.owned[t], p)
			delete(a.mu.lag[t], p)
		}
	}
	var total int64
	for _, ps := range a.mu.lag {
		for _, l := range ps {
			total += l
		}
	}
	a.stats.lag.Store(total)
}
