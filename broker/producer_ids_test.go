package broker

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestProducerIDAllocatorConcurrent: callers that find the block used up
// wait for one reservation (made without the allocator's lock) instead of
// each reserving; every id is handed out once; a failed reservation fails
// the callers that waited for it, and the next call tries again.
func TestProducerIDAllocatorConcurrent(t *testing.T) {
	var reservations atomic.Int32
	release := make(chan struct{})
	fail := atomic.Bool{}
	next := int64(0)
	a := &producerIDAllocator{reserve: func(n int64) (int64, error) {
		reservations.Add(1)
		<-release
		if fail.Load() {
			return 0, errors.New("quorum unavailable")
		}
		first := next
		next += n
		return first, nil
	}}

	const callers = 50
	ids := make(chan int64, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := a.allocate()
			if err != nil {
				t.Error(err)
				return
			}
			ids <- id
		}()
	}
	// The lock is free while the reservation waits: a status read
	// (TryLock) succeeds.
	for reservations.Load() == 0 {
		if a.mu.TryLock() {
			a.mu.Unlock()
		}
	}
	if !a.mu.TryLock() {
		t.Fatal("the allocator's lock is held across the reservation")
	}
	a.mu.Unlock()
	close(release)
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != callers || reservations.Load() != 1 {
		t.Fatalf("%d ids from %d reservations, want %d from 1", len(seen), reservations.Load(), callers)
	}

	// Use up the block, then fail the next reservation.
	for range producerIDBlock - callers {
		if _, err := a.allocate(); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	if _, err := a.allocate(); err == nil {
		t.Fatal("allocate succeeded with the quorum unavailable")
	}
	fail.Store(false)
	if id, err := a.allocate(); err != nil || id != producerIDBlock {
		t.Fatalf("after the failure: %d, %v; want %d", id, err, producerIDBlock)
	}
}
