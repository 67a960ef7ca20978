package broker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
)

// The coordinator runtime against an in-memory log: its lock discipline,
// the order of completions and the reload after a failed append, without
// a broker around it.

// fakeState is a runtime state: the batches applied, in order.
type fakeState struct {
	coordinatorEpoch int32
	applied          []string
}

type fakeMachine struct {
	mu       sync.Mutex
	started  []int32 // coordinator epochs of the loads that served
	stopped  int
	replayed [][]string
}

func (m *fakeMachine) newState(epoch int32) *fakeState { return &fakeState{coordinatorEpoch: epoch} }

func (m *fakeMachine) replay(s *fakeState, batch []byte, _ storage.BatchHeader) error {
	s.applied = append(s.applied, string(batch))
	return nil
}

func (m *fakeMachine) startedLocked(s *fakeState) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = append(m.started, s.coordinatorEpoch)
	m.replayed = append(m.replayed, slices.Clone(s.applied))
	return nil
}

func (m *fakeMachine) stoppedLocked(*fakeState) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped++
	return nil
}

// fakeLog is a partition in memory: a batch per offset. Hooks, if set,
// run with no lock of the log held.
type fakeLog struct {
	mu          sync.Mutex
	batches     [][]byte
	epoch       int32
	leader      bool
	onAppend    func(batch []byte) error // may block or fail the append
	onReplicate func(offset int64) error // may block or fail the wait
}

func (l *fakeLog) append(batch []byte, _ bool) (int64, int32, error) {
	if l.onAppend != nil {
		if err := l.onAppend(batch); err != nil {
			return 0, 0, err
		}
	}
	l.mu.Lock()
	l.batches = append(l.batches, batch)
	off := int64(len(l.batches) - 1)
	epoch := l.epoch
	l.mu.Unlock()
	return off, epoch, nil
}

func (l *fakeLog) awaitReplicated(offset int64, _ int32) error {
	if l.onReplicate != nil {
		return l.onReplicate(offset)
	}
	return nil
}

func (l *fakeLog) isLeader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader
}

func (l *fakeLog) leaderEpoch() int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

func (l *fakeLog) replay(from int64, fn func([]byte, storage.BatchHeader) error) (int64, error) {
	l.mu.Lock()
	batches := slices.Clone(l.batches[from:])
	l.mu.Unlock()
	for _, b := range batches {
		if err := fn(b, storage.BatchHeader{}); err != nil {
			return from, err
		}
		from++
	}
	return from, nil
}

func (l *fakeLog) logStartOffset() int64 { return 0 }

func (l *fakeLog) logEndOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.batches))
}

// newFakeShard is a loaded shard over log.
func newFakeShard(t *testing.T, log *fakeLog) (*coordinatorShard[*fakeState], *fakeMachine) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tasks := &taskGroup{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		tasks.close()
	})
	m := &fakeMachine{}
	sh := newCoordinatorShard[*fakeState](ctx, slog.New(slog.DiscardHandler), tasks, "test coordinator", "__test", 0, log, m)
	if err := sh.load(); err != nil {
		t.Fatal(err)
	}
	return sh, m
}

// fakeCall is a call in flight: its caller awaits its write.
type fakeCall struct {
	w    *shardWrite
	done chan struct{}
	err  error
}

// apply is a call: it applies a change and queues its batch under mu,
// then its caller awaits the write (nil if the shard does not serve).
func apply(sh *coordinatorShard[*fakeState], batch string) *fakeCall {
	sh.mu.Lock()
	if sh.coord == nil {
		sh.mu.Unlock()
		return nil
	}
	sh.coord.applied = append(sh.coord.applied, batch)
	w := sh.queueLocked([]byte(batch), false)
	sh.mu.Unlock()
	return awaitCall(sh, w)
}

func awaitCall(sh *coordinatorShard[*fakeState], w *shardWrite) *fakeCall {
	c := &fakeCall{w: w, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = sh.await(w)
	}()
	return c
}

// wait is the call's answer.
func (c *fakeCall) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(5 * time.Second):
		t.Fatal("a call is still waiting after 5s")
		return nil
	}
}

func within(t *testing.T, what string, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

// TestCoordinatorRuntimeNoLockAcrossWaits: while an append hangs (an
// fsync) and while a replication wait hangs (a slow ISR), calls still
// apply and queue — mu is free — and the queue is appended in order.
func TestCoordinatorRuntimeNoLockAcrossWaits(t *testing.T) {
	appendGate, replicateGate := make(chan struct{}), make(chan struct{})
	inAppend, inReplicate := make(chan struct{}, 1), make(chan struct{}, 1)
	log := &fakeLog{leader: true, epoch: 3}
	sh, _ := newFakeShard(t, log)
	log.onAppend = func(batch []byte) error {
		if string(batch) == "a" {
			inAppend <- struct{}{}
			<-appendGate
		}
		return nil
	}
	log.onReplicate = func(offset int64) error {
		if offset == 1 {
			inReplicate <- struct{}{}
			<-replicateGate
		}
		return nil
	}

	a := apply(sh, "a")
	<-inAppend
	var b, c *fakeCall
	within(t, "a call while an append hangs", time.Second, func() { b = apply(sh, "b") })
	close(appendGate)
	<-inReplicate // b's replication wait hangs
	within(t, "a call while a replication wait hangs", time.Second, func() { c = apply(sh, "c") })
	within(t, "appending behind a hanging replication wait", time.Second, func() {
		for log.logEndOffset() < 3 {
			time.Sleep(time.Millisecond)
		}
	})
	if err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.w.done:
		t.Fatal("c completed before b, which is before it in the log")
	case <-time.After(50 * time.Millisecond):
	}
	close(replicateGate)
	for _, call := range []*fakeCall{b, c} {
		if err := call.wait(t); err != nil {
			t.Fatal(err)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if got := log.batches; len(got) != 3 || string(got[0]) != "a" || string(got[1]) != "b" || string(got[2]) != "c" {
		t.Fatalf("log %q, want a b c", got)
	}
}

// TestCoordinatorRuntimeCompletesInLogOrder: completions follow the log
// even when later writes replicate first, and a call without records of
// its own (lastLocked) completes after what was queued before it.
func TestCoordinatorRuntimeCompletesInLogOrder(t *testing.T) {
	release := make(chan struct{})
	log := &fakeLog{leader: true}
	sh, _ := newFakeShard(t, log)
	log.onReplicate = func(offset int64) error {
		if offset == 0 {
			<-release
		}
		return nil
	}
	calls := []*fakeCall{apply(sh, "0"), apply(sh, "1"), apply(sh, "2")}
	sh.mu.Lock()
	calls = append(calls, awaitCall(sh, sh.lastLocked())) // a call without records
	sh.mu.Unlock()
	within(t, "appending behind a hanging replication wait", time.Second, func() {
		for log.logEndOffset() < 3 {
			time.Sleep(time.Millisecond)
		}
	})
	time.Sleep(20 * time.Millisecond) // let 1 and 2 replicate
	for i, c := range calls {
		select {
		case <-c.done:
			t.Fatalf("call %d answered before write 0, which precedes it in the log, is durable", i)
		default:
		}
	}
	close(release)
	for i, c := range calls {
		if err := c.wait(t); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

// TestCoordinatorRuntimeFailedAppendReloads: a failed append fails its
// write and every write queued after it; what was appended before stays
// done; the shard loads again from its log, under a higher coordinator
// epoch, with the appended batches only.
func TestCoordinatorRuntimeFailedAppendReloads(t *testing.T) {
	gate := make(chan struct{})
	log := &fakeLog{leader: true, epoch: 7}
	sh, m := newFakeShard(t, log)
	fail := errors.New("injected: disk error")
	log.onAppend = func(batch []byte) error {
		switch string(batch) {
		case "ok":
			<-gate // hold the writer so "bad" and "after" queue behind
		case "bad":
			return fail
		}
		return nil
	}
	ok := apply(sh, "ok")
	bad := apply(sh, "bad")
	after := apply(sh, "after")
	close(gate)
	if err := ok.wait(t); err != nil {
		t.Fatalf("the write before the failure: %v", err)
	}
	if err := bad.wait(t); !errors.Is(err, fail) {
		t.Fatalf("the failed write: %v", err)
	}
	if err := after.wait(t); err == nil {
		t.Fatal("a write queued after the failed one was appended")
	}
	waitFor(t, 5*time.Second, "the reload", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.started) == 2
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped != 1 {
		t.Fatalf("stopped %d times, want 1", m.stopped)
	}
	if first, second := m.started[0], m.started[1]; second <= first || first != coordinatorEpochFor(7, 0) {
		t.Fatalf("coordinator epochs %d then %d", first, second)
	}
	if got := m.replayed[1]; !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("reloaded from %q, want the appended batch only", got)
	}
	if got := log.logEndOffset(); got != 1 {
		t.Fatalf("log end %d, want 1", got)
	}
}

// TestCoordinatorRuntimeLoadWaitsForWriter: a load (after an unload)
// waits for the append the previous state's writer has in hand, so its
// replay sees it.
func TestCoordinatorRuntimeLoadWaitsForWriter(t *testing.T) {
	inAppend, gate := make(chan struct{}), make(chan struct{})
	log := &fakeLog{leader: true}
	sh, m := newFakeShard(t, log)
	var once sync.Once
	log.onAppend = func([]byte) error {
		once.Do(func() {
			close(inAppend)
			<-gate
		})
		return nil
	}
	w := apply(sh, "in-hand")
	<-inAppend
	sh.unload(shardLoading)

	loaded := make(chan error, 1)
	go func() { loaded <- sh.load() }()
	select {
	case err := <-loaded:
		t.Fatalf("load finished (%v) while an append was in hand", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if err := w.wait(t); err != nil {
		t.Fatalf("the write in hand: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := m.replayed[len(m.replayed)-1]; !slices.Equal(got, []string{"in-hand"}) {
		t.Fatalf("replayed %q", got)
	}
}

// TestCoordinatorRuntimeUnload: an unload fails what is still queued and
// a load that started before it does not serve.
func TestCoordinatorRuntimeUnload(t *testing.T) {
	inAppend, gate := make(chan struct{}), make(chan struct{})
	log := &fakeLog{leader: true}
	sh, _ := newFakeShard(t, log)
	log.onAppend = func(batch []byte) error {
		if string(batch) == "first" {
			close(inAppend)
			<-gate
		}
		return nil
	}
	first := apply(sh, "first")
	<-inAppend
	queued := apply(sh, "queued")
	sh.moveTo(log, false)
	close(gate)
	if err := first.wait(t); err != nil {
		t.Fatalf("the write in hand: %v", err)
	}
	if err := queued.wait(t); !errors.Is(err, errShardMoved) {
		t.Fatalf("the queued write: %v, want errShardMoved", err)
	}
	if w := apply(sh, "late"); w != nil {
		t.Fatal("an unloaded shard took a call")
	}
	sh.mu.Lock()
	state := sh.mu.state
	sh.mu.Unlock()
	if state != shardUnloaded {
		t.Fatalf("state %d", state)
	}
}

// TestCoordinatorRuntimeSharedAwait: a write awaited by two calls at once
// — its own and one without records (lastLocked) — has one writer and one
// completer, whichever call takes the roles.
func TestCoordinatorRuntimeSharedAwait(t *testing.T) {
	log := &fakeLog{leader: true}
	sh, _ := newFakeShard(t, log)
	for i := range 200 {
		sh.mu.Lock()
		w := sh.queueLocked([]byte("x"), false)
		last := sh.lastLocked()
		sh.mu.Unlock()
		calls := []*fakeCall{awaitCall(sh, last), awaitCall(sh, w)}
		for _, c := range calls {
			if err := c.wait(t); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.mu.writing || len(sh.mu.queue) > 0 {
		t.Fatalf("left writing=%v queue=%d", sh.mu.writing, len(sh.mu.queue))
	}
	if got := log.logEndOffset(); got != 200 {
		t.Fatalf("log end %d, want 200", got)
	}
}
