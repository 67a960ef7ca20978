package broker

import "sync"

// producerIDAllocator hands out producer ids in blocks reserved durably in
// the metadata quorum, so ids are never reused across restarts. A block
// is reserved by one caller at a time with mu released (a quorum
// proposal); the others wait for that reservation, not for the lock.
type producerIDAllocator struct {
	// reserve durably reserves n consecutive ids and returns the first
	// (the quorum's AllocateProducerIDs record).
	reserve func(n int64) (int64, error)
	mu      sync.Mutex
	next    int64
	limit   int64
	// reserving is closed when the reservation in flight ends; err is its
	// failure, read by those who waited for it.
	reserving chan struct{}
	err       error
}

const producerIDBlock = 1000

func (a *producerIDAllocator) allocate() (int64, error) {
	a.mu.Lock()
	for a.next >= a.limit {
		if wait := a.reserving; wait != nil {
			a.mu.Unlock()
			<-wait
			a.mu.Lock()
			if a.next >= a.limit && a.err != nil {
				err := a.err
				a.mu.Unlock()
				return 0, err
			}
			continue
		}
		done := make(chan struct{})
		a.reserving = done
		a.mu.Unlock()
		first, err := a.reserve(producerIDBlock)
		a.mu.Lock()
		a.reserving, a.err = nil, err
		if err == nil {
			a.next, a.limit = first, first+producerIDBlock
		}
		close(done)
		if err != nil {
			a.mu.Unlock()
			return 0, err
		}
	}
	id := a.next
	a.next++
	a.mu.Unlock()
	return id, nil
}
