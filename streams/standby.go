package streams

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Standby replicas (NumStandbyReplicas). The group leader names, in each
// member's assignment, the tasks the member keeps a standby copy of
// (balancer.go). A standby task is the task's stores opened at their usual
// directories, <StateDir>/<application id>/<store>-<partition>, fed by one
// goroutine per run that tails the tasks' changelog partitions with a
// consumer of its own (read_committed under exactly-once, so a standby
// never holds uncommitted data) and applies what it reads as a restore
// does: the records and the next changelog offset in one pebble batch.
// When the task becomes active here, the processing goroutine takes the
// open stores over (no second open) and restores only the changelog's tail
// past the standby's offset.
//
// Locking: mu guards the sets; opening, applying and closing stores run
// without it, with the task marked busy so that take waits for them.
type standbys struct {
	app   *App
	state *stateManager

	mu struct {
		sync.Mutex
		cond *sync.Cond
		// wanted are the tasks the latest assignment made standbys
		// here; open are those whose stores are open; active are
		// the tasks the processing goroutine has (or is opening) as
		// active ones, never opened as standbys; busy are tasks whose
		// stores the standby goroutine is opening or writing.
		wanted map[topicPartition]bool
		open   map[topicPartition]*task
		active map[topicPartition]bool
		busy   map[topicPartition]bool
		// lag is each standby store's distance from its changelog
		// partition's end (the last stable offset under exactly-once)
		// as of its last fetch; keyed by changelog partition.
		lag map[topicPartition]int64
	}
	byChangelog map[string]*storeSpec

	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

// standbyPoll bounds a standby poll, so a changed standby set is acted on
// within it.
const standbyPoll = 250 * time.Millisecond

func newStandbys(a *App, st *stateManager) *standbys {
	s := &standbys{app: a, state: st, byChangelog: map[string]*storeSpec{}}
	s.mu.cond = sync.NewCond(&s.mu.Mutex)
	s.mu.wanted = map[topicPartition]bool{}
	s.mu.open = map[topicPartition]*task{}
	s.mu.active = map[topicPartition]bool{}
	s.mu.busy = map[topicPartition]bool{}
	s.mu.lag = map[topicPartition]int64{}
	for _, spec := range a.top.stores {
		s.byChangelog[spec.changelog] = spec
	}
	return s
}

// start runs the standby goroutine until stop.
func (s *standbys) start(ctx context.Context) error {
	cl, err := s.app.changelogClient("standby")
	if err != nil {
		return err
	}
	s.cl = cl
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		defer cl.Close()
		s.loop(ctx)
	}()
	return nil
}

// stop ends the standby goroutine and closes the standby stores.
func (s *standbys) stop() {
	s.cancel()
	<-s.done
}

// setWanted replaces the standby set (from this member's assignment).
func (s *standbys) setWanted(tasks []topicPartition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.wanted = map[topicPartition]bool{}
	for _, tp := range tasks {
		s.mu.wanted[tp] = true
	}
}

// take marks a task active and returns its standby stores (nil if it has
// none open); the caller owns them from then on.
func (s *standbys) take(tp topicPartition) *task {
	s.mu.Lock()
	s.mu.active[tp] = true
	for s.mu.busy[tp] {
		s.mu.cond.Wait()
	}
	t := s.mu.open[tp]
	delete(s.mu.open, tp)
	if t != nil {
		s.dropLagLocked(t)
	}
	s.mu.Unlock()
	if t != nil {
		s.cl.RemoveConsumePartitions(changelogPartitions(t))
		s.app.stats.standbyTasks.Add(-1)
	}
	return t
}

// release marks a task no longer active here (closed); it may become a
// standby again.
func (s *standbys) release(tp topicPartition) {
	s.mu.Lock()
	delete(s.mu.active, tp)
	s.mu.Unlock()
}

func (s *standbys) loop(ctx context.Context) {
	defer func() {
		s.mu.Lock()
		open := s.mu.open
		s.mu.open = map[topicPartition]*task{}
		for _, t := range open {
			s.dropLagLocked(t)
		}
		s.mu.Unlock()
		for _, t := range open {
			s.app.stats.standbyTasks.Add(-1)
			s.closeTask(t)
		}
	}()
	for ctx.Err() == nil {
		s.reconcile()
		pollCtx, cancel := context.WithTimeout(ctx, standbyPoll)
		fetches := s.cl.PollFetches(pollCtx)
		cancel()
		if fetches.IsClientClosed() {
			return
		}
		fetches.EachPartition(func(p kgo.FetchTopicPartition) { s.apply(p) })
	}
}

// reconcile closes the standby tasks no longer wanted and opens the wanted
// ones that are neither open nor active here. A store still held by an
// active task of another App in this process fails to open; the next
// round tries again.
func (s *standbys) reconcile() {
	s.mu.Lock()
	var closing []*task
	for tp, t := range s.mu.open {
		if !s.mu.wanted[tp] {
			closing = append(closing, t)
			delete(s.mu.open, tp)
			s.dropLagLocked(t)
			s.mu.busy[tp] = true // a take waits for the close
		}
	}
	var opening []topicPartition
	for tp := range s.mu.wanted {
		if s.mu.open[tp] == nil && !s.mu.active[tp] && !s.mu.busy[tp] {
			s.mu.busy[tp] = true
			opening = append(opening, tp)
		}
	}
	s.mu.Unlock()
	for _, t := range closing {
		s.cl.RemoveConsumePartitions(changelogPartitions(t))
		s.app.stats.standbyTasks.Add(-1)
		s.closeTask(t)
		s.mu.Lock()
		delete(s.mu.busy, t.tp)
		s.mu.cond.Broadcast()
		s.mu.Unlock()
	}
	for _, tp := range opening {
		t, err := s.state.openTaskStores(tp)
		if err != nil {
			s.app.cfg.logger.Info("standby not opened; retrying", "topic", tp.topic, "partition", tp.partition, "err", err)
		} else {
			assign := map[string]map[int32]kgo.Offset{}
			for _, st := range t.stores {
				if st != nil {
					assign[st.spec.changelog] = map[int32]kgo.Offset{st.partition: kgo.NewOffset().At(st.nextOffset)}
				}
			}
			s.cl.AddConsumePartitions(assign)
			s.state.noteLocal(t)
			s.app.stats.standbyTasks.Add(1)
		}
		s.mu.Lock()
		delete(s.mu.busy, tp)
		if t != nil {
			s.mu.open[tp] = t
		}
		s.mu.cond.Broadcast()
		s.mu.Unlock()
	}
}

// apply writes a fetched changelog partition into its standby store.
func (s *standbys) apply(p kgo.FetchTopicPartition) {
	spec := s.byChangelog[p.Topic]
	if spec == nil || len(p.Records) == 0 {
		return
	}
	tp := topicPartition{s.state.taskTopic(spec.inputTopic()), p.Partition}
	s.mu.Lock()
	t := s.mu.open[tp]
	if t == nil {
		s.mu.Unlock()
		return // taken over or closed since the fetch
	}
	s.mu.busy[tp] = true
	s.mu.Unlock()
	st := t.stores[spec.index]
	// Records below the store's offset were fetched before an earlier
	// owner of the stores (an active task) moved it on.
	recs := p.Records
	for len(recs) > 0 && recs[0].Offset < st.nextOffset {
		recs = recs[1:]
	}
	n, _, _, err := applyChangelog(st, recs, -1)
	if err != nil {
		// The consumer has moved past these records: close the standby,
		// and the next reconcile opens it again from the offset its
		// database holds, so no record is skipped.
		s.app.cfg.logger.Warn("standby apply failed; reopening it", "store", spec.name, "partition", p.Partition, "err", err)
		s.mu.Lock()
		delete(s.mu.open, tp)
		s.dropLagLocked(t)
		s.mu.Unlock()
		s.cl.RemoveConsumePartitions(changelogPartitions(t))
		s.app.stats.standbyTasks.Add(-1)
		s.closeTask(t)
		s.mu.Lock()
		delete(s.mu.busy, tp)
		s.mu.cond.Broadcast()
		s.mu.Unlock()
		return
	}
	s.app.stats.standbyRecords.Add(uint64(n))
	s.state.noteLocal(t)
	end := p.HighWatermark
	if s.app.cfg.guarantee == ExactlyOnceV2 {
		end = p.LastStableOffset
	}
	s.mu.Lock()
	delete(s.mu.busy, tp)
	s.setLagLocked(topicPartition{p.Topic, p.Partition}, max(0, end-st.nextOffset))
	s.mu.cond.Broadcast()
	s.mu.Unlock()
}

func (s *standbys) setLagLocked(changelog topicPartition, lag int64) {
	s.app.stats.standbyLag.Add(lag - s.mu.lag[changelog])
	s.mu.lag[changelog] = lag
}

// dropLagLocked forgets the lag of t's stores (no longer standbys here).
func (s *standbys) dropLagLocked(t *task) {
	for _, st := range t.open() {
		key := topicPartition{st.spec.changelog, st.partition}
		s.app.stats.standbyLag.Add(-s.mu.lag[key])
		delete(s.mu.lag, key)
	}
}

func (s *standbys) closeTask(t *task) {
	s.state.forgetLocal(t.tp)
	s.state.closeStores(t)
}

// changelogPartitions lists a task's changelog partitions.
func changelogPartitions(t *task) map[string][]int32 {
	out := map[string][]int32{}
	for _, st := range t.stores {
		if st != nil {
			out[st.spec.changelog] = append(out[st.spec.changelog], st.partition)
		}
	}
	return out
}
