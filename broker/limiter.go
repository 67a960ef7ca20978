package broker

import "sync"

// limiter admits at most limit() holders at once, reading the limit at
// every admission: a pool whose size is a dynamic broker config
// (remote.log.manager.thread.pool.size, remote.log.reader.threads) grows
// or shrinks for the next admissions without a restart. Holders above a
// lowered limit finish normally.
type limiter struct {
	limit func() int
	mu    sync.Mutex
	held  int
	freed chan struct{} // closed and replaced on a release or a limit change
}

func newLimiter(limit func() int) *limiter {
	return &limiter{limit: limit, freed: make(chan struct{})}
}

// tryAcquire admits the caller if a place is free.
func (l *limiter) tryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= max(l.limit(), 1) {
		return false
	}
	l.held++
	return true
}

// acquire waits for a place; false when done closes first.
func (l *limiter) acquire(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.held < max(l.limit(), 1) {
			l.held++
			l.mu.Unlock()
			return true
		}
		ch := l.freed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

// release frees a place.
func (l *limiter) release() {
	l.mu.Lock()
	l.held--
	l.wakeLocked()
	l.mu.Unlock()
}

// changed wakes waiters after the limit may have grown.
func (l *limiter) changed() {
	l.mu.Lock()
	l.wakeLocked()
	l.mu.Unlock()
}

func (l *limiter) wakeLocked() {
	close(l.freed)
	l.freed = make(chan struct{})
}
