package streams

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// App runs a Topology against Kafka brokers as one instance of a consumer
// group. Run it with Run; several instances (processes or Apps) with the
// same ApplicationID share the input partitions. Records of one partition
// are processed in order, one fetch at a time, on the Run goroutine.
type App struct {
	cfg   config
	top   *Topology
	stats counters

	// produceErr is the first failed produce since the last commit; its
	// own lock, as promises run while a.mu is held across Flush.
	produceErr struct {
		sync.Mutex
		err error
	}

	mu struct {
		sync.Mutex
		// at-least-once only: the partitions this instance owns and the
		// offsets after the last processed record of each.
		owned     map[string]map[int32]bool
		processed map[string]map[int32]kgo.EpochOffset
		lag       map[string]map[int32]int64
		// revoked are partitions taken away whose tasks the run loop
		// has yet to close.
		revoked map[string][]int32
	}
	promise func(*kgo.Record, error)
	// state is the current run's state manager (nil without stores);
	// promises read it.
	state atomic.Pointer[stateManager]
	// query is the current run's query server (nil without QueryListen).
	query atomic.Pointer[queryServer]
}

// NewApp validates the options and binds the topology; it does not connect.
func NewApp(t *Topology, opts ...Opt) (*App, error) {
	if t.err != nil {
		return nil, t.err
	}
	if len(t.sources) == 0 {
		return nil, fmt.Errorf("%w: no source", ErrTopology)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if len(cfg.brokers) == 0 {
		return nil, fmt.Errorf("%w: Brokers is required", ErrConfig)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t.bind(cfg.appID, cfg.deadLetter)
	a := &App{cfg: cfg, top: t}
	a.stats.tasks.enable()
	a.mu.owned = map[string]map[int32]bool{}
	a.mu.processed = map[string]map[int32]kgo.EpochOffset{}
	a.mu.lag = map[string]map[int32]int64{}
	a.promise = func(r *kgo.Record, err error) {
		if err != nil {
			a.produceErr.Lock()
			if a.produceErr.err == nil {
				a.produceErr.err = err
			}
			a.produceErr.Unlock()
			return
		}
		a.stats.out.Add(1)
		if st := a.state.Load(); st != nil {
			st.noteAcked(r)
		}
	}
	return a, nil
}

// Stats returns a snapshot of this App's counters.
func (a *App) Stats() Stats {
	return Stats{
		Job: a.cfg.name, Instances: 1,
		RecordsIn: a.stats.in.Load(), RecordsOut: a.stats.out.Load(),
		Errors: a.stats.errors.Load(), DeadLettered: a.stats.deadLettered.Load(),
		Skipped: a.stats.skipped.Load(), Failed: a.stats.failed.Load(),
		Aborted: a.stats.aborted.Load(), Restarts: a.stats.restarts.Load(),
		Lag:         a.stats.lag.Load(),
		LateDropped: a.stats.lateDropped.Load(), RestoredRecords: a.stats.restoredRecords.Load(),
		RestoredBytes: a.stats.restoredBytes.Load(), RestoreTime: time.Duration(a.stats.restoreNanos.Load()),
		Restores: a.stats.restores.Load(), StandbyTasks: a.stats.standbyTasks.Load(),
		StandbyRecords: a.stats.standbyRecords.Load(), StandbyLag: a.stats.standbyLag.Load(),
		RestoreRemaining: a.stats.restoreRemaining.Load(),
	}
}

// Run processes records until ctx is done (then it finishes the records in
// hand, flushes, commits and leaves the group, returning nil) or a fatal
// error occurs (a record error in ErrorFail mode, a produce failure, a
// fenced transactional id), which it returns.
//
// Run may be called again after it returned (not concurrently): the App
// starts over from the committed offsets, keeping its counters.
func (a *App) Run(ctx context.Context) error {
	register(a)
	defer unregister(a)
	return a.run(ctx)
}

// RunWithRestarts runs the App until ctx is done, running it again after
// each error: first after minBackoff, doubling up to maxBackoff (a run that
// lasted a minute or more starts the delays over). Stats.Restarts and
// strata_stream_restarts_total count the restarts. onError, if not nil, is
// called with each error and the delay before the next run. It returns nil
// once ctx is done.
func (a *App) RunWithRestarts(ctx context.Context, minBackoff, maxBackoff time.Duration, onError func(err error, retryIn time.Duration)) error {
	if minBackoff <= 0 {
		minBackoff = time.Second
	}
	if maxBackoff < minBackoff {
		maxBackoff = minBackoff
	}
	register(a)
	defer unregister(a)
	delay := minBackoff
	for {
		start := time.Now()
		err := a.run(ctx)
		if ctx.Err() != nil || err == nil {
			return nil
		}
		if time.Since(start) >= healthyRun {
			delay = minBackoff
		}
		if onError != nil {
			onError(err, delay)
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		delay = min(2*delay, maxBackoff)
		a.stats.restarts.Add(1)
	}
}

// healthyRun is how long a run must last for RunWithRestarts to start its
// delays over.
const healthyRun = time.Minute

// run is one Run: state from an earlier run is dropped first.
func (a *App) run(ctx context.Context) error {
	a.takeProduceErr()
	a.mu.Lock()
	a.mu.owned = map[string]map[int32]bool{}
	a.mu.processed = map[string]map[int32]kgo.EpochOffset{}
	a.mu.lag = map[string]map[int32]int64{}
	a.mu.revoked = nil
	a.stats.lag.Store(0)
	a.mu.Unlock()
	for _, fn := range a.cfg.beforeRun {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	if a.cfg.queryListen != "" {
		qs, err := a.startQueryServer() // query.go
		if err != nil {
			return err
		}
		defer qs.stop()
	}
	if err := a.createInternalTopics(ctx); err != nil {
		return err
	}
	if err := a.checkCoPartitioned(ctx); err != nil {
		return err
	}
	globals, err := a.startGlobals(ctx) // global_table.go
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while restoring
		}
		return err
	}
	defer globals.stop()
	proc := &processor{top: a.top, mode: a.cfg.errorMode, dlq: a.cfg.deadLetter, stats: &a.stats}
	if len(a.top.stores) > 0 {
		rest := &restorer{app: a}
		defer rest.close()
		st := newStateManager(a.top, filepath.Join(a.cfg.stateDir, a.cfg.appID), nil, a.cfg.logger, rest.restore)
		st.metrics = &a.stats.tasks
		a.state.Store(st)
		defer func() {
			a.state.Store(nil)
			st.close()
		}()
		proc.state = st
		if a.cfg.standbys > 0 {
			sb := newStandbys(a, st) // standby.go
			if err := sb.start(ctx); err != nil {
				return err
			}
			defer sb.stop()
			st.standby = sb
		}
	}
	if a.cfg.guarantee == ExactlyOnceV2 {
		return a.runExactlyOnce(ctx, proc)
	}
	return a.runAtLeastOnce(ctx, proc)
}

func (a *App) baseOpts() []kgo.Opt {
	topics, patterns := a.top.subscription()
	opts := []kgo.Opt{
		kgo.SeedBrokers(a.cfg.brokers...),
		kgo.ConsumerGroup(a.cfg.appID),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.ClientID(a.clientID()),
		// Output and dead-letter topics are created on first produce
		// when the brokers allow it (auto.create.topics.enable).
		kgo.AllowAutoTopicCreation(),
	}
	if len(a.top.stores) > 0 {
		changelogs := map[string]bool{}
		for _, st := range a.top.stores {
			changelogs[st.changelog] = true
		}
		opts = append(opts, kgo.RecordPartitioner(partitioner{changelogs: changelogs, dflt: keyPartitioner()}))
	}
	switch st := a.state.Load(); {
	case st != nil && len(a.top.joined) > 0:
		// Tasks placed with their stores (balancer.go), keeping
		// partition p of every co-partitioned topic on one member
		// (join.go); range assignment does that too while members of
		// an older version are in the group.
		opts = append(opts, kgo.Balancers(st.balancer(a.cfg.standbys, a.cfg.logger), kgo.RangeBalancer()))
	case st != nil:
		opts = append(opts, kgo.Balancers(st.balancer(a.cfg.standbys, a.cfg.logger), kgo.CooperativeStickyBalancer()))
	case len(a.top.joined) > 0:
		opts = append(opts, kgo.Balancers(kgo.RangeBalancer()))
	}
	if len(patterns) > 0 {
		named := map[string]bool{}
		for _, t := range topics {
			named[t] = true
			patterns = append(patterns, "^"+regexp.QuoteMeta(t)+"$")
		}
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(patterns...))
		// Never subscribe to what this topology writes (handlers skip
		// such records too, should one arrive), unless a source names
		// the topic (a repartition topic, or an explicit From).
		var exclude []string
		for _, t := range a.top.outputTopics() {
			if named[t] {
				continue
			}
			exclude = append(exclude, "^"+regexp.QuoteMeta(t)+"$")
		}
		if len(exclude) > 0 {
			opts = append(opts, kgo.ConsumeExcludeTopics(exclude...))
		}
	} else {
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	return opts
}

func (a *App) createInternalTopics(ctx context.Context) error {
	if len(a.top.internals) == 0 && len(a.top.stores) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...)}, a.cfg.clientOpts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	partitions := a.cfg.repartitions
	if partitions == 0 {
		partitions = -1
	}
	for _, it := range a.top.internals {
		n := partitions
		if it.like != nil {
			if n, err = partitionsLike(ctx, adm, it.like); err != nil {
				return err
			}
		}
		resp, err := adm.CreateTopic(ctx, n, -1, nil, it.resolved)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("streams: creating repartition topic %s: %w", it.resolved, err)
		}
	}
	return a.createChangelogs(ctx, adm)
}

// createChangelogs creates each store's compacted changelog with as many
// partitions as the store's input topic, or checks the existing one.
func (a *App) createChangelogs(ctx context.Context, adm *kadm.Client) error {
	if len(a.top.stores) == 0 {
		return nil
	}
	var names []string
	for _, st := range a.top.stores {
		names = append(names, st.inputTopic(), st.changelog)
	}
	topics, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("streams: describing state topics: %w", err)
	}
	compact := "compact"
	for _, st := range a.top.stores {
		in, ok := topics[st.inputTopic()]
		if !ok || in.Err != nil || len(in.Partitions) == 0 {
			return fmt.Errorf("streams: input topic %s of store %s does not exist; create it first", st.inputTopic(), st.name)
		}
		want := len(in.Partitions)
		if cl, ok := topics[st.changelog]; ok && cl.Err == nil {
			if len(cl.Partitions) != want {
				return fmt.Errorf("%w: changelog %s has %d partitions, its input %s has %d", ErrConfig, st.changelog, len(cl.Partitions), st.inputTopic(), want)
			}
			continue
		}
		resp, err := adm.CreateTopic(ctx, int32(want), -1, map[string]*string{"cleanup.policy": &compact}, st.changelog)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("streams: creating changelog %s: %w", st.changelog, err)
		}
	}
	return nil
}

// peekProduceErr returns the first produce failure without clearing it:
// at-least-once never commits again after one (the failed records would be
// lost).
func (a *App) peekProduceErr() error {
	a.produceErr.Lock()
	defer a.produceErr.Unlock()
	return a.produceErr.err
}

// takeProduceErr returns and clears the first produce failure (exactly-once
// aborts the transaction, which rewinds and retries the records).
func (a *App) takeProduceErr() error {
	a.produceErr.Lock()
	defer a.produceErr.Unlock()
	err := a.produceErr.err
	a.produceErr.err = nil
	return err
}

// updateLagLocked records a partition's lag after a fetch and refreshes the
// total.
func (a *App) updateLagLocked(p kgo.FetchTopicPartition) {
	if len(p.Records) == 0 {
		return
	}
	m := a.mu.lag[p.Topic]
	if m == nil {
		m = map[int32]int64{}
		a.mu.lag[p.Topic] = m
	}
	lag := p.HighWatermark - (p.Records[len(p.Records)-1].Offset + 1)
	if lag < 0 {
		lag = 0
	}
	m[p.Partition] = lag
	var total int64
	for _, ps := range a.mu.lag {
		for _, l := range ps {
			total += l
		}
	}
	a.stats.lag.Store(total)
}

func (a *App) logFetchErrors(fetches kgo.Fetches) {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, kgo.ErrClientClosed) {
			continue
		}
		a.cfg.logger.Warn("fetch error", "topic", fe.Topic, "partition", fe.Partition, "err", fe.Err)
	}
}

// pollContext bounds a poll by the next commit deadline.
func pollContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, deadline)
}

// noteRevokedLocked queues the tasks of partitions this instance lost for
// the run loop to close.
func (a *App) noteRevokedLocked(parts map[string][]int32) {
	if len(a.top.stores) == 0 {
		return
	}
	if a.mu.revoked == nil {
		a.mu.revoked = map[string][]int32{}
	}
	for t, ps := range parts {
		a.mu.revoked[t] = append(a.mu.revoked[t], ps...)
	}
}

// settleTasks runs on the processing goroutine before a fetch is
// processed: it closes the tasks of revoked partitions and opens (restores)
// the tasks of fetched partitions that feed stores. First settle commits
// (at-least-once) or ends the transaction (exactly-once), so closed stores
// hold what was committed and a long restore never runs inside a
// transaction.
func (a *App) settleTasks(ctx context.Context, st *stateManager, fetches kgo.Fetches, settle func() error) error {
	a.mu.Lock()
	revoked := a.mu.revoked
	a.mu.revoked = nil
	var fetched []topicPartition // owned, with records, feeding stores
	needed := false
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) > 0 && a.mu.owned[p.Topic][p.Partition] && st.stateful(p.Topic) {
			fetched = append(fetched, topicPartition{p.Topic, p.Partition})
			needed = needed || st.needsOpen(p.Topic, p.Partition)
		}
	})
	a.mu.Unlock()
	if len(revoked) == 0 && !needed {
		return nil
	}
	if err := settle(); err != nil {
		return err
	}
	st.closeTasks(revoked)
	// After closing: a revoked partition assigned here again by the
	// same rebalance (eager assignors revoke everything) was fetched
	// anew and needs its task reopened.
	for _, tp := range fetched {
		if !st.needsOpen(tp.topic, tp.partition) {
			continue
		}
		if err := st.open(ctx, tp.topic, tp.partition); err != nil {
			return err
		}
	}
	return nil
}
