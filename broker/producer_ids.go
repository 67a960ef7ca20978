package broker

import (
	"context"
	"sync"
	"time"
)

// producerIDBlocks hands out producer ids from blocks of
// producerIDBlockSize reserved through the metadata quorum
// (cluster.AllocateProducerIDs), so an id is never given twice, across
// restarts and nodes. Its lock guards the blocks only: the proposal for the
// next block runs outside it, one at a time, as a tracked background task
// started when the current block is half used, so a caller — which may
// hold a coordinator's lock — waits for the quorum only when ids are taken
// faster than a proposal commits (and for the very first block).
type producerIDBlocks struct {
	meta  *metadataClient
	ctx   context.Context // the server's: a stopping node stops waiting
	spawn func(func())    // runs a refill (Server.goTask: Close waits for it)

	mu struct {
		sync.Mutex
		next, limit int64 // the block ids are taken from: [next, limit)
		spare       int64 // first id of the block reserved next; -1 for none
		refill      *producerIDRefill
	}
}

// producerIDRefill is one proposal for a block; done is closed when it
// ends, err set before.
type producerIDRefill struct {
	done chan struct{}
	err  error
}

const (
	// producerIDBlockSize is how many ids one proposal reserves.
	producerIDBlockSize = 1000
	// producerIDRefillTimeout bounds the proposal of one block.
	producerIDRefillTimeout = 10 * time.Second
)

func newProducerIDBlocks(ctx context.Context, meta *metadataClient, spawn func(func())) *producerIDBlocks {
	a := &producerIDBlocks{meta: meta, ctx: ctx, spawn: spawn}
	a.mu.spare = -1
	return a
}

// allocate returns an unused producer id.
func (a *producerIDBlocks) allocate() (int64, error) {
	for {
		a.mu.Lock()
		if a.mu.next == a.mu.limit && a.mu.spare >= 0 {
			a.mu.next, a.mu.limit, a.mu.spare = a.mu.spare, a.mu.spare+producerIDBlockSize, -1
		}
		if a.mu.next < a.mu.limit {
			id := a.mu.next
			a.mu.next++
			if a.mu.limit-a.mu.next <= producerIDBlockSize/2 && a.mu.spare < 0 {
				a.startRefillLocked()
			}
			a.mu.Unlock()
			return id, nil
		}
		r := a.startRefillLocked()
		a.mu.Unlock()
		select {
		case <-r.done:
			if r.err != nil {
				return 0, r.err
			}
		case <-a.ctx.Done():
			return 0, a.ctx.Err()
		}
	}
}

// startRefillLocked starts the proposal of the spare block unless one is
// in flight, and returns the one in flight. Needs mu.
func (a *producerIDBlocks) startRefillLocked() *producerIDRefill {
	if r := a.mu.refill; r != nil {
		return r
	}
	r := &producerIDRefill{done: make(chan struct{})}
	a.mu.refill = r
	a.spawn(func() {
		ctx, cancel := context.WithTimeout(a.ctx, producerIDRefillTimeout)
		first, err := a.meta.allocateProducerIDs(ctx, producerIDBlockSize)
		cancel()
		a.mu.Lock()
		a.mu.refill = nil
		if err == nil {
			a.mu.spare = first
		}
		r.err = err
		a.mu.Unlock()
		close(r.done)
	})
	return r
}
