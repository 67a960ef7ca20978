package broker

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestLimiterFollowsItsLimit: at most limit() holders; a raised limit
// admits a waiter once changed() is called, a lowered one admits nobody
// new until enough holders leave; acquire gives up when done closes.
func TestLimiterFollowsItsLimit(t *testing.T) {
	var limit atomic.Int64
	limit.Store(2)
	l := newLimiter(func() int { return int(limit.Load()) })
	if !l.tryAcquire() || !l.tryAcquire() || l.tryAcquire() {
		t.Fatal("a limit of 2 admitted a different number")
	}
	got := make(chan bool, 1)
	go func() { got <- l.acquire(nil) }()
	select {
	case <-got:
		t.Fatal("a third holder got in under a limit of 2")
	case <-time.After(50 * time.Millisecond):
	}
	limit.Store(3)
	l.changed()
	if !<-got {
		t.Fatal("the waiter was not admitted after the limit grew")
	}
	limit.Store(1)
	l.release()
	l.release()
	if l.tryAcquire() {
		t.Fatal("admitted with 1 holder under a limit of 1")
	}
	l.release()
	if !l.tryAcquire() {
		t.Fatal("not admitted with no holder")
	}
	done := make(chan struct{})
	close(done)
	if l.acquire(done) {
		t.Fatal("acquire succeeded past its done channel while full")
	}
}
