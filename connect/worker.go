package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/httpsec"
)

// Worker is one Connect worker: it joins its cluster's group, runs the
// connectors and tasks the leader assigns it, keeps the cluster state from
// the internal topics and serves the REST API.
//
// Start it with Start; Close stops the tasks, leaves the group and closes
// the clients and the listener.
type Worker struct {
	cfg      WorkerConfig
	loggers  *loggers     // named loggers with levels set at run time (loggers.go)
	log      *slog.Logger // strata.connect.worker
	taskLog  *slog.Logger // strata.connect.task
	kopts    []kgo.Opt
	store    *store
	groupCl  *kgo.Client
	member   *membership
	listener net.Listener
	guard    *httpsec.Guard
	http     *http.Server
	workerID string
	kick     chan struct{} // cap 1: reconcile soon

	mu struct {
		sync.Mutex
		assigned   map[unit]bool
		generation int32
		leaderURL  string
		runners    map[unit]*runner
		digest     string // units digest this worker last joined with
	}

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once
}

// runner is one unit on this worker: a running connector or task, or one
// held in PAUSED, STOPPED or FAILED.
type runner struct {
	unit        unit
	hash        string
	target      string
	startOffset int64
	cancel      context.CancelFunc
	done        chan struct{} // nil when nothing runs

	mu    sync.Mutex
	state string
	// generation is the newest group generation in which this worker was
	// assigned the unit; statuses carry it, so a late write from a worker
	// that lost the unit cannot overwrite its new owner's.
	generation int32
}

func (r *runner) setGeneration(g int32) {
	r.mu.Lock()
	r.generation = max(r.generation, g)
	r.mu.Unlock()
}

func (r *runner) getGeneration() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.generation
}

func (r *runner) setState(s string) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
}

func (r *runner) getState() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// stopRunners cancels the runners and waits for them together, at most
// task.shutdown.graceful.timeout.ms in all; a unit still running then (one
// that ignores its context) is abandoned with a log line, so one stuck task
// cannot hold up reconcile or Close.
func (w *Worker) stopRunners(rs []*runner) {
	for _, r := range rs {
		if r.cancel != nil {
			r.cancel()
		}
	}
	timeout := w.cfg.TaskShutdownTimeout
	if timeout <= 0 {
		timeout = defaultTaskShutdown * time.Millisecond
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	expired := false
	for _, r := range rs {
		if r.done == nil {
			continue
		}
		if expired {
			select {
			case <-r.done:
			default:
				w.log.Error("connect: unit did not stop within task.shutdown.graceful.timeout.ms; abandoning it", "unit", r.unit.String(), "timeout", timeout)
			}
			continue
		}
		select {
		case <-r.done:
		case <-timer.C:
			expired = true
			w.log.Error("connect: unit did not stop within task.shutdown.graceful.timeout.ms; abandoning it", "unit", r.unit.String(), "timeout", timeout)
		}
	}
}

// NewWorker checks the configuration; nothing connects until Start.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	lg := newLoggers(log.Handler())
	w := &Worker{cfg: cfg, loggers: lg, log: lg.logger(workerLogger), taskLog: lg.logger(taskLogger), kick: make(chan struct{}, 1), closed: make(chan struct{})}
	w.mu.assigned = map[unit]bool{}
	w.mu.runners = map[unit]*runner{}
	w.kopts = append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID("strata-connect"),
		kgo.DialTimeout(5 * time.Second),
	}, cfg.ClientOptions...)
	return w, nil
}

// Start creates the internal topics if needed, reads them, opens the REST
// listener and joins the group. It returns once the worker serves.
func (w *Worker) Start(ctx context.Context) error {
	guard, err := httpsec.New(w.cfg.RESTSecurity)
	if err != nil {
		return fmt.Errorf("connect: REST listener: %w", err)
	}
	ln, err := net.Listen("tcp", w.cfg.RESTListen)
	if err != nil {
		guard.Close()
		return fmt.Errorf("connect: REST listener: %w", err)
	}
	w.guard = guard
	w.listener = ln
	w.workerID = w.cfg.RESTAdvertise
	if w.workerID == "" {
		w.workerID = ln.Addr().String()
	}
	fail := func(err error) error {
		ln.Close()
		guard.Close()
		if w.store != nil {
			w.store.close()
		}
		return err
	}
	if w.store, err = newStore(w.cfg, w.loggers.logger(storeLogger), w.kopts); err != nil {
		return fail(err)
	}
	w.store.since, w.store.onLogLevel = time.Now(), w.applyClusterLogLevel
	if err := w.store.ensureTopics(ctx); err != nil {
		return fail(err)
	}
	if err := w.store.start(ctx, w.kopts); err != nil {
		return fail(err)
	}
	if w.groupCl, err = kgo.NewClient(w.kopts...); err != nil {
		return fail(fmt.Errorf("connect: group client: %w", err))
	}
	runCtx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.member = &membership{client: w.groupCl, cfg: w.cfg, log: w.loggers.logger(groupLogger), rejoin: make(chan struct{}, 1), hooks: groupHooks{
		metadata: w.joinMetadata,
		assign:   w.assign,
		assigned: w.onAssigned,
		revoked:  w.onRevoked,
	}}
	w.http = &http.Server{Handler: guard.Handler(w.Handler()), ReadHeaderTimeout: 10 * time.Second}
	ln = guard.Listener(ln)
	w.goFunc(func() { w.member.run(runCtx) })
	w.goFunc(func() { w.reconcileLoop(runCtx) })
	w.goFunc(func() {
		if err := w.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("connect: REST server", "err", err)
		}
	})
	w.log.Info("connect: worker started", "worker_id", w.workerID, "group.id", w.cfg.GroupID)
	return nil
}

func (w *Worker) goFunc(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}

// Addr is the REST listener's address.
func (w *Worker) Addr() string { return w.listener.Addr().String() }

// ID is the worker id shown in statuses (the advertised REST host:port).
func (w *Worker) ID() string { return w.workerID }

// Close stops every connector and task, leaves the group and releases the
// clients and the listener.
func (w *Worker) Close() error {
	w.once.Do(func() {
		close(w.closed)
		if w.cancel == nil {
			return
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.http.Shutdown(shutdownCtx)
		w.guard.Close()
		w.cancel()
		w.wg.Wait()
		w.mu.Lock()
		runners := w.mu.runners
		w.mu.runners = map[unit]*runner{}
		w.mu.Unlock()
		rs := make([]*runner, 0, len(runners))
		for _, r := range runners {
			rs = append(rs, r)
		}
		w.stopRunners(rs)
		// As Kafka Connect does on a clean shutdown: the units are nobody's
		// until the group reassigns them (a newer generation's status wins).
		for _, r := range runners {
			w.writeUnitStatusCtx(shutdownCtx, r, StateUnassigned, "")
		}
		w.member.leave(shutdownCtx)
		w.groupCl.Close()
		w.store.close()
	})
	return nil
}

func (w *Worker) kickReconcile() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// unitsDigest summarises the units the config topic defines; a change
// means the group must rebalance.
func unitsDigest(units []unit) string {
	h := sha256.New()
	for _, u := range units {
		fmt.Fprintf(h, "%s\x00%d\x00", u.Connector, u.Task)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func (w *Worker) joinMetadata() memberMetadata {
	var units []unit
	w.store.view(func(st *clusterState) { units = clusterUnits(st) })
	digest := unitsDigest(units)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.digest = digest
	md := memberMetadata{URL: w.workerID, Digest: digest, Units: []unit{}, Epoch: w.mu.generation}
	// What this worker owns: its latest assignment, plus anything still
	// running from before (the assignment may be newer than the last
	// reconcile). The leader keeps these here where it can.
	owned := map[unit]bool{}
	for u := range w.mu.assigned {
		owned[u] = true
	}
	for u := range w.mu.runners {
		owned[u] = true
	}
	for u := range owned {
		md.Units = append(md.Units, u)
	}
	sort.Slice(md.Units, func(i, j int) bool { return unitLess(md.Units[i], md.Units[j]) })
	return md
}

func (w *Worker) assign(ctx context.Context, members map[string]memberMetadata, minEpoch int32) (map[string][]unit, int32, error) {
	sctx, cancel := context.WithTimeout(ctx, w.cfg.RebalanceTimeout/2)
	defer cancel()
	if err := w.store.sync(sctx); err != nil {
		return nil, 0, err
	}
	var units []unit
	epoch := minEpoch
	w.store.view(func(st *clusterState) {
		units = clusterUnits(st)
		epoch = max(epoch, st.maxStatusGeneration()+1)
	})
	ids := make([]string, 0, len(members))
	previous := map[string][]unit{}
	for id, md := range members {
		ids = append(ids, id)
		previous[id] = md.Units
	}
	plan := assignUnits(ids, previous, units)
	w.log.Info("connect: assigned", "members", len(ids), "units", len(units), "epoch", epoch)
	return plan, epoch, nil
}

func (w *Worker) onAssigned(a memberAssignment) {
	w.mu.Lock()
	w.mu.assigned = map[unit]bool{}
	for _, u := range a.Units {
		w.mu.assigned[u] = true
	}
	w.mu.generation = a.Epoch
	w.mu.leaderURL = a.LeaderURL
	w.mu.Unlock()
	w.log.Info("connect: assignment", "epoch", a.Epoch, "units", len(a.Units))
	w.kickReconcile()
}

func (w *Worker) onRevoked() {
	w.mu.Lock()
	w.mu.assigned = map[unit]bool{}
	w.mu.Unlock()
	w.kickReconcile()
}

func (w *Worker) reconcileLoop(ctx context.Context) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-w.store.changed:
		case <-tick.C:
		}
		w.reconcile(ctx)
	}
}

// desiredUnit is what the config topic says about one assigned unit.
type desiredUnit struct {
	hash      string
	target    string
	connector Config
	task      Config
}

func configHash(parts ...Config) string {
	h := sha256.New()
	for _, p := range parts {
		b, _ := json.Marshal(p) // map keys are sorted
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// reconcile makes the runners match the assignment and the config topic.
func (w *Worker) reconcile(ctx context.Context) {
	desired := map[unit]desiredUnit{}
	var restarts []restartRequest
	var digest string
	var configEnd int64
	w.mu.Lock()
	assigned := make([]unit, 0, len(w.mu.assigned))
	for u := range w.mu.assigned {
		assigned = append(assigned, u)
	}
	joined := w.mu.digest
	generation := w.mu.generation
	w.mu.Unlock()
	w.store.view(func(st *clusterState) {
		digest = unitsDigest(clusterUnits(st))
		configEnd = st.configEnd
		restarts = append(restarts, st.restarts...)
		for _, u := range assigned {
			cfg, ok := st.connectors[u.Connector]
			if !ok {
				continue
			}
			d := desiredUnit{target: st.targetStates[u.Connector], connector: cfg}
			if u.isConnector() {
				d.hash = configHash(cfg)
			} else {
				if u.Task >= len(st.tasks[u.Connector]) {
					continue
				}
				d.task = st.tasks[u.Connector][u.Task]
				d.hash = configHash(cfg, d.task)
			}
			desired[u] = d
		}
	})
	if digest != joined {
		w.member.requestRejoin()
	}

	w.mu.Lock()
	var toStop []*runner
	for u, r := range w.mu.runners {
		d, ok := desired[u]
		if !ok || d.hash != r.hash || d.target != r.target || restartWanted(r, restarts) {
			toStop = append(toStop, r)
			delete(w.mu.runners, u)
			continue
		}
		r.setGeneration(generation)
	}
	w.mu.Unlock()
	w.stopRunners(toStop)
	units := make([]unit, 0, len(desired))
	for u := range desired {
		units = append(units, u)
	}
	sort.Slice(units, func(i, j int) bool { return unitLess(units[i], units[j]) })
	for _, u := range units {
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		_, running := w.mu.runners[u]
		w.mu.Unlock()
		if running {
			continue
		}
		r := w.startUnit(ctx, u, desired[u], configEnd, generation)
		w.mu.Lock()
		w.mu.runners[u] = r
		w.mu.Unlock()
	}
}

// restartWanted reports whether a restart request written after r started
// names r.
func restartWanted(r *runner, restarts []restartRequest) bool {
	for _, req := range restarts {
		if req.Offset < r.startOffset || req.Connector != r.unit.Connector {
			continue
		}
		match := false
		switch {
		case req.Task >= 0:
			match = req.Task == r.unit.Task
		case r.unit.isConnector():
			match = true
		default:
			match = req.IncludeTasks
		}
		if match && (!req.OnlyFailed || r.getState() == StateFailed) {
			return true
		}
	}
	return false
}

// writeUnitStatus records a unit's state in the status topic.
func (w *Worker) writeUnitStatus(r *runner, state, trace string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.writeUnitStatusCtx(ctx, r, state, trace)
}

func (w *Worker) writeUnitStatusCtx(ctx context.Context, r *runner, state, trace string) {
	u := r.unit
	key := "status-connector-" + u.Connector
	if !u.isConnector() {
		key = "status-task-" + u.Connector + "-" + strconv.Itoa(u.Task)
	}
	st := Status{State: state, Trace: trace, WorkerID: w.workerID, Generation: r.getGeneration()}
	if err := w.store.writeStatus(ctx, key, st); err != nil {
		w.log.Warn("connect: writing status", "unit", u.String(), "err", err)
	}
}

func (w *Worker) startUnit(ctx context.Context, u unit, d desiredUnit, configEnd int64, generation int32) *runner {
	r := &runner{unit: u, hash: d.hash, target: d.target, startOffset: configEnd, generation: generation}
	switch {
	case d.target == TargetStopped:
		r.setState(StateStopped)
		w.writeUnitStatus(r, StateStopped, "")
		if u.isConnector() {
			w.clearTasks(ctx, u.Connector)
		}
		return r
	case d.target == TargetPaused && !u.isConnector():
		r.setState(StatePaused)
		w.writeUnitStatus(r, StatePaused, "")
		return r
	}
	runCtx, cancel := context.WithCancel(ctx)
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		var err error
		if u.isConnector() {
			err = w.runConnector(runCtx, r, u.Connector, d.connector, d.target)
		} else {
			err = w.runTask(runCtx, r, TaskID{u.Connector, u.Task}, d.connector, d.task)
		}
		if err != nil && runCtx.Err() == nil {
			w.log.Error("connect: failed", "unit", u.String(), "err", err)
			r.setState(StateFailed)
			w.writeUnitStatus(r, StateFailed, err.Error())
		}
	}()
	return r
}

// clearTasks writes an empty task set for a stopped connector (as Kafka
// Connect does), so its tasks stop everywhere.
func (w *Worker) clearTasks(ctx context.Context, name string) {
	n := 0
	w.store.view(func(st *clusterState) { n = len(st.tasks[name]) })
	if n == 0 {
		return
	}
	if err := w.store.writeConfig(ctx, "commit-"+name, commitValue{Tasks: 0}); err != nil {
		w.log.Warn("connect: clearing tasks", "connector", name, "err", err)
	}
}

// runConnector starts the connector, publishes its task configurations when
// they changed, and holds it until ctx ends.
func (w *Worker) runConnector(ctx context.Context, r *runner, name string, cfg Config, target string) error {
	plugin, err := pluginFor(cfg)
	if err != nil {
		return err
	}
	conn := plugin.New()
	ctx = withLogger(ctx, w.loggers.logger(pluginLogger(plugin)).With("connector", name))
	if err := conn.Start(ctx, cfg); err != nil {
		return fmt.Errorf("starting connector %s: %w", name, err)
	}
	defer func() {
		if err := conn.Stop(); err != nil {
			w.log.Warn("connect: stopping connector", "connector", name, "err", err)
		}
	}()
	maxTasks := 1
	if v := cfg["tasks.max"]; v != "" {
		if maxTasks, err = strconv.Atoi(v); err != nil || maxTasks < 1 {
			return fmt.Errorf("connector %s: tasks.max %q must be a positive integer", name, v)
		}
	}
	taskCfgs, err := conn.TaskConfigs(maxTasks)
	if err != nil {
		return fmt.Errorf("connector %s: task configs: %w", name, err)
	}
	if len(taskCfgs) > maxTasks {
		taskCfgs = taskCfgs[:maxTasks]
	}
	var current []Config
	w.store.view(func(st *clusterState) { current = append(current, st.tasks[name]...) })
	if configHash(current...) != configHash(taskCfgs...) || len(current) != len(taskCfgs) {
		for i, tc := range taskCfgs {
			if err := w.store.writeConfig(ctx, fmt.Sprintf("task-%s-%d", name, i), propertiesValue{Properties: tc}); err != nil {
				return err
			}
		}
		if err := w.store.writeConfig(ctx, "commit-"+name, commitValue{Tasks: len(taskCfgs)}); err != nil {
			return err
		}
	}
	state := StateRunning
	if target == TargetPaused {
		state = StatePaused
	}
	r.setState(state)
	if ctx.Err() == nil {
		w.writeUnitStatus(r, state, "")
	}
	<-ctx.Done()
	return nil
}

// pluginFor finds a connector's plugin by connector.class.
func pluginFor(cfg Config) (*Plugin, error) {
	class := cfg["connector.class"]
	if class == "" {
		return nil, fmt.Errorf("%w: connector.class is missing", ErrUnknownPlugin)
	}
	p, ok := LookupPlugin(class)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPlugin, class)
	}
	return p, nil
}

// ErrUnknownPlugin is returned for a connector.class no plugin registered.
var ErrUnknownPlugin = errors.New("connect: unknown connector class")

// runTask runs one source or sink task until ctx ends or it fails.
func (w *Worker) runTask(ctx context.Context, r *runner, id TaskID, connCfg, taskCfg Config) error {
	plugin, err := pluginFor(connCfg)
	if err != nil {
		return err
	}
	conn := plugin.New()
	ctx = withLogger(ctx, w.loggers.logger(pluginLogger(plugin)).With("connector", id.Connector, "task", id.Task))
	switch c := conn.(type) {
	case SourceConnector:
		return w.runSourceTask(ctx, r, id, connCfg, taskCfg, c.NewTask())
	case SinkConnector:
		return w.runSinkTask(ctx, r, id, connCfg, taskCfg, c.NewTask())
	}
	return fmt.Errorf("connector class %s is neither a source nor a sink", connCfg["connector.class"])
}

// markRunning records RUNNING for a task that started (unless it is being
// stopped already).
func (w *Worker) markRunning(ctx context.Context, r *runner) {
	r.setState(StateRunning)
	if ctx.Err() == nil {
		w.writeUnitStatus(r, StateRunning, "")
	}
}
