package registry

import (
	"context"
	"errors"
)

// maxWriteAttempts bounds how often a write that keeps losing the race
// for its offset starts over.
const maxWriteAttempts = 10

// change is what a write operation decides against the view: records to
// append (none: nothing to write) and the answer to give once they are
// applied.
type change struct {
	records []Record
	// sequenced: the one record carries seq, and counts only if it lands
	// at the end offset the writer read.
	sequenced bool
	result    any
}

// writeOp decides a write against the view as of offset st.seq. It runs
// with the view locked: it must be pure (no I/O) and quick.
type writeOp func(v *view, st stamp) (change, error)

type writeRequest struct {
	ctx  context.Context
	op   writeOp
	done chan writeResult // buffered: the writer never waits for the caller
}

type writeResult struct {
	value any
	err   error
}

// write hands op to the writer goroutine and waits for its answer.
func (r *Registry) write(ctx context.Context, op writeOp) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	req := &writeRequest{ctx: ctx, op: op, done: make(chan writeResult, 1)}
	select {
	case r.writes <- req:
	case <-ctx.Done():
		return nil, writeCtxError(ctx.Err())
	}
	select {
	case res := <-req.done:
		return res.value, res.err
	case <-ctx.Done():
		return nil, writeCtxError(ctx.Err())
	}
}

func writeCtxError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return apiErrorf(codeTimeout, "Operation timed out: the write was not applied in time")
	}
	return apiErrorf(codeStore, "Write abandoned: %v", err)
}

// writeLoop runs this node's writes one at a time, so that each is
// decided against a view that includes the one before.
func (r *Registry) writeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case req := <-r.writes:
			if req.ctx.Err() != nil {
				req.done <- writeResult{err: writeCtxError(req.ctx.Err())}
				continue
			}
			value, err := r.execute(req.ctx, req.op)
			req.done <- writeResult{value, err}
		}
	}
}

// execute is the sequenced write (see doc.go): read the end offset E,
// wait until the view has applied everything below E, decide the change
// against it, append it with seq E, and if it did not land at E — another
// writer got there first — start over.
func (r *Registry) execute(ctx context.Context, op writeOp) (any, error) {
	for attempt := 1; attempt <= maxWriteAttempts; attempt++ {
		end, err := r.store.EndOffset(ctx)
		if err != nil {
			return nil, r.storeError(ctx, "reading the end offset", err)
		}
		if err := r.waitApplied(ctx, end); err != nil {
			return nil, r.storeError(ctx, "catching up", err)
		}
		var ch change
		r.mu.Lock()
		ch, err = op(r.mu.view, stamp{seq: end, node: r.node})
		r.mu.Unlock()
		if err != nil || len(ch.records) == 0 {
			return ch.result, err
		}
		offsets, err := r.store.Append(ctx, ch.records...)
		if err != nil {
			return nil, r.storeError(ctx, "writing", err)
		}
		last := offsets[len(offsets)-1]
		if err := r.waitApplied(ctx, last+1); err != nil {
			return nil, r.storeError(ctx, "waiting for the write to apply", err)
		}
		if !ch.sequenced || offsets[0] == end {
			return ch.result, nil
		}
		r.log.Debug("lost the race for an offset; deciding again", "expected", end, "landed", offsets[0], "attempt", attempt)
	}
	return nil, apiErrorf(codeStore, "Error while writing to the schemas topic: %d concurrent writes won the race for the same offset; try again", maxWriteAttempts)
}

func (r *Registry) storeError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return writeCtxError(ctx.Err())
	}
	return apiErrorf(codeStore, "Error in the backend data store while %s: %v", what, err)
}
