package broker

import (
	"context"
	"sync"
	"time"
)

// producerIDBlocks hands out producer ids from blocks of producerIDBlockSize
// reserved through the metadata quorum (cluster.AllocateProducerIDs), so
// an id is never given twice, across restarts and nodes. Its lock guards
// the current block only: the proposal for the next block runs outside
// it, one at a time, while other callers wait for it without the lock.
type producerIDBlocks struct {
	meta *metadataClient
	ctx  context.Context // the server's: a stopping node stops waiting

	mu struct {
		sync.Mutex
		next, limit int64
		// refilling is closed when the proposal for the next block ends;
		// nil while none is in flight.
		refilling chan struct{}
	}
}

const (
	// producerIDBlockSize is how many ids one proposal reserves.
	producerIDBlockSize = 1000
	// producerIDRefillTimeout bounds the proposal of one block.
	producerIDRefillTimeout = 10 * time.Second
)

func newProducerIDBlocks(ctx context.Context, meta *metadataClient) *producerIDBlocks {
	return &producerIDBlocks{meta: meta, ctx: ctx}
}

// allocate returns an unused producer id.
func (a *producerIDBlocks) allocate() (int64, error) {
	for {
		a.mu.Lock()
		if a.mu.next < a.mu.limit {
			id := a.mu.next
			a.mu.next++
			a.mu.Unlock()
			return id, nil
		}
		if wait := a.mu.refilling; wait != nil {
			a.mu.Unlock()
			select {
			case <-wait:
				continue // take from the new block, or refill if it failed
			case <-a.ctx.Done():
				return 0, a.ctx.Err()
			}
		}
		done := make(chan struct{})
		a.mu.refilling = done
		a.mu.Unlock()

		ctx, cancel := context.WithTimeout(a.ctx, producerIDRefillTimeout)
		first, err := a.meta.allocateProducerIDs(ctx, producerIDBlockSize)
		cancel()

		a.mu.Lock()
		a.mu.refilling = nil
		if err == nil {
			a.mu.next, a.mu.limit = first, first+producerIDBlockSize
		}
		a.mu.Unlock()
		close(done)
		if err != nil {
			return 0, err
		}
	}
}
