package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-streaming/strata/broker/quota"
	"github.com/strata-streaming/strata/internal/httpsec"
	"github.com/strata-streaming/strata/internal/loglevel"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/tiering"
)

// Server is one Strata node: the Kafka listener, the partition logs it leads,
// the admin HTTP listener and the background tasks (retention, flush,
// checkpoints). Create it with NewServer, then Start; Close shuts it down
// gracefully.
type Server struct {
	cfg Config // static: flags, --config, --set, STRATA_*; conf() is the effective one
	// dyn is the effective configuration with the quorum's dynamic broker
	// configs (dynamic_config.go); confChanged wakes the loops whose
	// intervals it sets.
	dyn         atomic.Pointer[dynamicConfig]
	confChanged chan struct{}
	// schemaValidator checks records of topics with schema validation on
	// (schema_validation.go); nil without the node's schema registry.
	schemaValidator atomic.Pointer[SchemaValidator]
	// leaderThrottle and followerThrottle bound throttled replication
	// (replication_throttle.go).
	leaderThrottle, followerThrottle *throttle
	// offlineDirs wakes the heartbeat loop when a log dir goes offline,
	// to report its replicas at once (capacity 1).
	offlineDirs chan struct{}
	logger      *slog.Logger
	// logLevels are the named loggers whose levels BROKER_LOGGER configs
	// change (broker_logger.go); reqLog is kafka.request.logger.
	logLevels *loglevel.Registry
	reqLog    *slog.Logger
	// member is this node's member of the metadata quorum (a raft voter,
	// or an observer with --roles broker): the applied cluster state.
	// Changes go through meta, never member.Propose.
	member metadata.Member
	meta   *metadataClient // proposals and the applied index (metadata_client.go)
	// objects is the tiering object store from --object-store.
	objects tiering.ObjectStore
	tiered  *tieredStorage    // uploads, remote retention and remote reads (tiered.go)
	iceberg *icebergCommitter // Iceberg tables of topics with iceberg.enabled (iceberg.go)
	// icebergCatalogAddr is the bound iceberg.catalog.listen ("" if none).
	icebergCatalogAddr string
	topics             *topicManager
	logDirs            *logDirSet  // log.dirs: where each partition lives, which dirs are offline (logdirs.go)
	moves              logDirMoves // moves between log dirs in progress (34_alter_replica_log_dirs.go)
	metrics            *metrics
	fetches            *fetchSessionCache
	pids               *producerIDBlocks
	groups             *groupCoordinator // consumer groups and committed offsets (group_coordinator.go)
	txns               *txnCoordinator   // transactions (txn_coordinator.go)
	shares             *shareCoordinator // share groups, KIP-932 (share_coordinator.go)
	lag                *lagMonitor       // consumer lag for /metrics and /v1/groups (lag_metrics.go); nil without the admin listener

	// Cluster membership (cluster.go): this process's incarnation id, the
	// replica fetchers, and whether a controlled shutdown has begun.
	incarnation string
	fetchers    *fetcherManager
	gains       leaderGains // ends followers' long polls on a new leadership (leader_gain.go)
	peers       peerClients // clients to other nodes (transaction markers)
	refusals    refusals    // nodes seen refusing connections (unreachable.go)
	// roleTasks are goroutines started by the applied-state loop
	// (coordinator loads, manifest refreshes); Close waits for them once
	// the loop has stopped.
	roleTasks    sync.WaitGroup
	shuttingDown atomic.Bool
	// serving is set once Start has the Kafka listeners accepting (/readyz).
	serving atomic.Bool
	// stopMetadata ends the subscription feeding followMetadata;
	// followDone is closed when followMetadata has returned.
	stopMetadata func()
	followDone   chan struct{}

	// listeners are the Kafka listeners (listener.go), the inter-broker
	// one first.
	listeners []*kafkaListener
	http      *http.Server
	httpAddr  string

	ctx    context.Context // cancelled by Close; long polls and tasks watch it
	cancel context.CancelFunc
	tasks  sync.WaitGroup // background goroutines started by Start

	connsMu struct {
		sync.Mutex
		conns  map[*clientConn]struct{}
		closed bool
	}
	connsWG sync.WaitGroup
	// connLog bounds the "closing connection" lines of clients that
	// reconnect and fail the same way, per remote host and reason.
	connLog *logLimiter
	// authFailures rate-limits failed SASL authentications per host.
	authFailures authFailures
	// authz is the authorizer of the current ACLs (authorize.go).
	authz authzState
	// quotas is the client quota table and usage (quotas.go).
	quotas quotaState
	// telemetry is the KIP-714 client instances and their metrics (telemetry.go).
	telemetry clientTelemetry
	// httpGuard secures the admin HTTP listener (admin_http_security.go).
	httpGuard *httpsec.Guard
	// consoleHooks is what add-ons tell the console (console_connect.go).
	consoleHooks consoleHooks
}

// NewServer opens the data directory (recovering every partition log) but
// does not listen yet.
func NewServer(cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if r, err := metadata.ParseRoles(cfg.ProcessRoles); err == nil && !r.Broker {
		return nil, errors.New("broker: --roles controller runs no broker (use NewControllerNode)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	levels := newBrokerLoggers(logger.Handler())
	logger = levels.Logger(brokerLogger)
	specs, err := cfg.resolveListeners()
	if err != nil {
		return nil, err
	}
	if cfg.ObjectStore == "" {
		abs, err := filepath.Abs(filepath.Join(cfg.firstLogDir(), "objects"))
		if err != nil {
			return nil, err
		}
		cfg.ObjectStore = "file://" + abs
	}
	logDirs, err := openLogDirs(cfg.LogDirs())
	if err != nil {
		return nil, err
	}
	// The object store is opened (and its URL checked) at start so a typo
	// fails here, not when the first segment is tiered.
	objects := cfg.objectStore
	if objects == nil {
		objects, err = tiering.Open(context.Background(), cfg.ObjectStore)
	}
	if err != nil {
		return nil, fmt.Errorf("broker: --object-store: %w", err)
	}
	member, err := openMetadata(cfg, levels.Logger(metadataLogger))
	if err != nil {
		objects.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		objects: objects,
		logDirs: logDirs,
		cfg:     cfg,
		logger:  logger,

		confChanged: make(chan struct{}, 1),
		offlineDirs: make(chan struct{}, 1),
		logLevels:   levels,
		reqLog:      levels.Logger(requestLogger),
		connLog:     newLogLimiter(logger, logRepeatInterval),
		member:      member,
		meta:        newMetadataClient(member),
		metrics:     newMetrics(),
		fetches:     newFetchSessionCache(1000),
		ctx:         ctx,
		cancel:      cancel,
	}
	s.initDynamic()
	s.leaderThrottle = newThrottle(func() int64 { return s.conf().LeaderThrottledRate })
	s.followerThrottle = newThrottle(func() int64 { return s.conf().FollowerThrottledRate })
	logDirs.onFailure = func(d *logDir, cause error) {
		logger.Error("log directory offline: its partitions answer KAFKA_STORAGE_ERROR until a restart; their leadership moves to other replicas", "dir", d.path, "err", cause)
		select {
		case s.offlineDirs <- struct{}{}:
		default:
		}
	}
	s.quotas.sensors = quota.NewSensors(quota.Window{Samples: int(cfg.QuotaWindowNum), Size: time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second})
	// The Kafka listeners are bound now: the node registers their
	// addresses with the quorum before it opens its partitions (their
	// roles depend on it).
	if err := s.bindListeners(specs); err != nil {
		cancel()
		member.Close()
		objects.Close()
		return nil, err
	}
	regCtx, regCancel := context.WithTimeout(ctx, 60*time.Second)
	err = s.register(regCtx)
	if err == nil {
		// Heartbeats start now: opening a large data directory must not
		// get the node fenced.
		s.goTask(s.heartbeatLoop)
		s.startBalancer()
		s.awaitElections(regCtx)
	}
	regCancel()
	if err != nil {
		s.closeListeners()
		cancel()
		member.Close()
		objects.Close()
		return nil, err
	}
	if err := s.bootstrapScram(ctx); err != nil {
		s.closeListeners()
		cancel()
		s.tasks.Wait()
		member.Close()
		objects.Close()
		return nil, err
	}
	s.pids = newProducerIDBlocks(ctx, s.meta, s.goTask)
	if s.tiered, err = newTieredStorage(s, objects); err != nil {
		s.closeListeners()
		cancel()
		s.tasks.Wait()
		member.Close()
		objects.Close()
		return nil, err
	}
	s.iceberg = newIcebergCommitter(s)
	s.connsMu.conns = map[*clientConn]struct{}{}
	start := time.Now()
	s.topics, err = openTopicManager(s)
	if err != nil {
		s.closeListeners()
		cancel()
		s.tasks.Wait()
		s.tiered.close()
		member.Close()
		objects.Close()
		return nil, err
	}
	logger.Info("log directories opened", "dirs", cfg.LogDirs(), "topics", s.topics.count(), "took", time.Since(start).Round(time.Millisecond))
	s.groups = newGroupCoordinator(s)
	s.txns = newTxnCoordinator(s)
	s.shares = newShareCoordinator(s)
	s.fetchers = newFetcherManager(s)
	s.peers.s = s
	s.goTask(s.isrLoop)
	// From here on only followMetadata changes the open partitions; its
	// first pass catches up with what was applied since openTopicManager.
	s.startFollowingMetadata()
	return s, nil
}

// Start binds the listeners and starts serving.
func (s *Server) Start() error {
	if s.cfg.HTTPListen != "" {
		guard, err := s.adminHTTPGuard()
		if err != nil {
			s.closeListeners()
			return err
		}
		hl, err := net.Listen("tcp", s.cfg.HTTPListen)
		if err != nil {
			guard.Close()
			s.closeListeners()
			return fmt.Errorf("broker: http listen %s: %w", s.cfg.HTTPListen, err)
		}
		s.httpAddr = hl.Addr().String()
		s.httpGuard = guard
		hl = guard.Listener(hl)
		s.http = &http.Server{Handler: guard.Handler(s.adminHandler()), ReadHeaderTimeout: 10 * time.Second}
		s.goTask(func() {
			if err := s.http.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.logger.Error("admin http stopped", "err", err)
			}
		})
	}
	for _, l := range s.listeners {
		s.goTask(func() { s.acceptLoop(l) })
	}
	s.goTask(s.housekeeping)
	s.goTask(s.tiered.loop)
	s.goTask(s.iceberg.loop)
	if s.iceberg.external != nil {
		s.goTask(s.iceberg.external.run)
	}
	s.serveIcebergCatalog()
	s.goTask(s.txns.run)
	s.groups.start()
	s.serving.Store(true)
	s.logger.Info("strata broker listening", "kafka", s.listenerSummary(), "http", s.httpAddr, "node_id", s.cfg.NodeID, "cluster_id", s.clusterState().ClusterID)
	return nil
}

// Addr is the bound address of the inter-broker listener (with --listen,
// the one listener).
func (s *Server) Addr() string { return s.listeners[0].ln.Addr().String() }

// PlaintextAddr is the bound address of a PLAINTEXT listener, preferring
// the inter-broker one ("" if every listener is secured).
func (s *Server) PlaintextAddr() string {
	for _, l := range s.listeners {
		if l.spec.protocol == protoPlaintext {
			return l.ln.Addr().String()
		}
	}
	return ""
}

// ListenerAddr is the bound address of the named listener ("" if none).
func (s *Server) ListenerAddr(name string) string {
	for _, l := range s.listeners {
		if l.spec.name == name {
			return l.ln.Addr().String()
		}
	}
	return ""
}

// HTTPAddr is the bound admin HTTP address ("" if disabled).
func (s *Server) HTTPAddr() string { return s.httpAddr }

// goRoleTask runs fn for the applied-state loop (work it must not wait
// for) in a goroutine that Close waits for.
func (s *Server) goRoleTask(fn func()) {
	s.roleTasks.Add(1)
	go func() {
		defer s.roleTasks.Done()
		fn()
	}()
}

// goTask runs fn in a goroutine that Close waits for.
func (s *Server) goTask(fn func()) {
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		fn()
	}()
}

func (s *Server) acceptLoop(l *kafkaListener) {
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.logger.Error("accept failed", "err", err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		c := newClientConn(s, l, nc)
		s.connsMu.Lock()
		if s.connsMu.closed {
			s.connsMu.Unlock()
			nc.Close()
			return
		}
		s.connsMu.conns[c] = struct{}{}
		s.connsWG.Add(1)
		s.connsMu.Unlock()
		s.metrics.openConnections.Inc()
		go func() {
			defer s.connsWG.Done()
			c.serve()
			s.connsMu.Lock()
			delete(s.connsMu.conns, c)
			s.connsMu.Unlock()
			s.metrics.openConnections.Dec()
		}()
	}
}

// housekeeping runs the periodic log tasks: retention, segment.ms rolls,
// flush.ms flushes, recovery checkpoints and log compaction.
func (s *Server) housekeeping() {
	interval := func(ms int64) time.Duration {
		d := time.Duration(ms) * time.Millisecond
		if d < 10*time.Millisecond || ms <= 0 {
			d = 10 * time.Millisecond
		}
		return d
	}
	// The intervals are dynamic broker configs: a change resets the
	// ticker it sets.
	type task struct {
		ms  func(c *Config) int64
		run func()
		t   *time.Ticker
		d   time.Duration
	}
	tasks := []*task{
		{ms: func(c *Config) int64 { return c.LogRetentionCheckIntervalMs }, run: s.topics.applyRetention},
		{ms: func(c *Config) int64 { return c.LogFlushSchedulerIntervalMs }, run: s.topics.flushAndRoll},
		{ms: func(c *Config) int64 { return c.LogCheckpointIntervalMs }, run: s.topics.checkpoint},
		{ms: func(c *Config) int64 { return c.LogCleanerBackoffMs }, run: s.topics.cleanLogs},
	}
	for _, t := range tasks {
		t.d = interval(t.ms(s.conf()))
		t.t = time.NewTicker(t.d)
		defer t.t.Stop()
	}
	logs := time.NewTicker(logRepeatInterval)
	defer logs.Stop()
	probe := time.NewTicker(logDirProbeInterval)
	defer probe.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-logs.C:
			s.connLog.flush(false)
		case <-probe.C:
			s.logDirs.probe()
		case <-s.confChanged:
			c := s.conf()
			for _, t := range tasks {
				if d := interval(t.ms(c)); d != t.d {
					t.d = d
					t.t.Reset(d)
				}
			}
			s.tiered.intervalChanged()
		case <-tasks[0].t.C:
			tasks[0].run()
		case <-tasks[1].t.C:
			tasks[1].run()
		case <-tasks[2].t.C:
			tasks[2].run()
		case <-tasks[3].t.C:
			tasks[3].run()
		}
	}
}

// Close stops accepting, lets in-flight requests finish (long polls return
// early), flushes and checkpoints every log, and closes the metadata member.
func (s *Server) Close() error {
	s.connsMu.Lock()
	if s.connsMu.closed {
		s.connsMu.Unlock()
		return nil
	}
	s.connsMu.closed = true
	started := len(s.listeners) > 0 && s.incarnation != ""
	s.connsMu.Unlock()
	if started && s.cfg.ControlledShutdownEnable && s.movableLeaderships(s.clusterState()) > 0 {
		// Still serving: requests in flight finish against the old
		// leaders, then clients follow NOT_LEADER_OR_FOLLOWER.
		s.controlledShutdown(15 * time.Second)
	}
	s.connsMu.Lock()
	conns := make([]*clientConn, 0, len(s.connsMu.conns))
	for c := range s.connsMu.conns {
		conns = append(conns, c)
	}
	s.connsMu.Unlock()

	s.cancel()
	s.closeListeners()
	for _, c := range conns {
		c.stopReading()
	}
	s.connsWG.Wait()
	if s.http != nil {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.http.Shutdown(shutdownCtx)
		cancel()
		s.httpGuard.Close()
	}
	if s.stopMetadata != nil {
		s.stopMetadata()
		<-s.followDone // no reconciliation from here on
	}
	s.meta.close()
	s.fetchers.close()
	s.tasks.Wait()
	s.groups.close()
	s.shares.state.close()
	s.roleTasks.Wait()
	s.peers.close()
	err := s.topics.close()
	if cerr := s.member.Close(); err == nil {
		err = cerr
	}
	if cerr := s.tiered.close(); err == nil {
		err = cerr
	}
	if cerr := s.objects.Close(); err == nil {
		err = cerr
	}
	s.connLog.flush(true)
	s.logger.Info("strata broker stopped")
	return err
}

// advertisedHostPort splits the inter-broker listener's advertised
// address (tests compare Metadata answers with it).
func (s *Server) advertisedHostPort() (string, int32) {
	b := s.brokerAddrOf(s.cfg.NodeID, s.listeners[0].spec.advertised, s.cfg.BrokerRack)
	return b.host, b.port
}
