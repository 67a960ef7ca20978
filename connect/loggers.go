package connect

// Named loggers with levels the REST API changes at run time: Kafka
// Connect's /admin/loggers (KIP-495, KIP-976) over log/slog.
//
//	root                        Kafka's root logger: setting it sets every logger
//	org.apache.kafka.connect    Kafka Connect's namespace: sets every strata.connect logger
//	strata.connect              the runtime
//	  .worker  .group  .store   the worker, its group membership, the internal topics
//	  .task                     source and sink task runners, error handling
//	  .rest                     the REST API (a debug line per request)
//	  .plugin.<class>           a connector without a Plugin.Logger (e.g. strata.connect.jdbc)
//
// Each logger is a slog.Handler wrapping the worker's with a slog.LevelVar
// of its own: a record below the logger's level is dropped, one at or above
// it goes to the wrapped handler whatever that handler's own level, so a
// raised level shows debug lines. A level set on a namespace sets the
// namespace's logger (creating it, as log4j does) and every logger below
// it, where below follows the dots, plus the two Kafka names above.
// Levels start at the lowest one the worker's handler enables and are not
// persisted: a restarted worker starts again from its configuration.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Logger names of the runtime.
const (
	RootLogger         = "root"
	KafkaConnectLogger = "org.apache.kafka.connect"
	RuntimeLogger      = "strata.connect"
	workerLogger       = "strata.connect.worker"
	groupLogger        = "strata.connect.group"
	storeLogger        = "strata.connect.store"
	taskLogger         = "strata.connect.task"
	restLogger         = "strata.connect.rest"
)

// log4j's levels by name, and where they fall among slog's.
var logLevels = []struct {
	name  string
	level slog.Level
}{
	{"ALL", slog.Level(-1 << 10)},
	{"TRACE", slog.LevelDebug - 4},
	{"DEBUG", slog.LevelDebug},
	{"INFO", slog.LevelInfo},
	{"WARN", slog.LevelWarn},
	{"ERROR", slog.LevelError},
	{"FATAL", slog.LevelError + 4},
	{"OFF", slog.Level(1 << 10)},
}

func parseLogLevel(s string) (slog.Level, bool) {
	for _, l := range logLevels {
		if strings.EqualFold(strings.TrimSpace(s), l.name) {
			return l.level, true
		}
	}
	return 0, false
}

// logLevelName is the log4j name of the highest log4j level at or below l.
func logLevelName(l slog.Level) string {
	name := logLevels[0].name
	for _, ll := range logLevels {
		if ll.level <= l {
			name = ll.name
		}
	}
	return name
}

// namedLogger is one logger's level and when the REST API last set it.
type namedLogger struct {
	level        slog.LevelVar
	lastModified int64 // ms since the epoch; 0: never
}

// loggers is a worker's registry of named loggers.
type loggers struct {
	inner   slog.Handler
	initial slog.Level

	mu struct {
		sync.Mutex
		byName map[string]*namedLogger
	}
}

func newLoggers(inner slog.Handler) *loggers {
	l := &loggers{inner: inner, initial: slog.LevelError + 4}
	for _, ll := range logLevels[1 : len(logLevels)-1] {
		if inner.Enabled(context.Background(), ll.level) {
			l.initial = ll.level
			break
		}
	}
	l.mu.byName = map[string]*namedLogger{}
	for _, name := range []string{RootLogger, KafkaConnectLogger, RuntimeLogger, workerLogger, groupLogger, storeLogger, taskLogger, restLogger} {
		l.getLocked(name)
	}
	return l
}

// getLocked returns the named logger, creating it at its parent's level.
// Needs mu.
func (l *loggers) getLocked(name string) *namedLogger {
	if n, ok := l.mu.byName[name]; ok {
		return n
	}
	n := &namedLogger{}
	n.level.Set(l.initial)
	for p := parentLogger(name); p != ""; p = parentLogger(p) {
		if pn, ok := l.mu.byName[p]; ok {
			n.level.Set(pn.level.Level())
			break
		}
	}
	l.mu.byName[name] = n
	return n
}

// parentLogger is the logger a name inherits from: the name without its
// last dot-separated part; strata.connect's is Kafka Connect's namespace,
// whose parent is root.
func parentLogger(name string) string {
	switch name {
	case RootLogger:
		return ""
	case RuntimeLogger:
		return KafkaConnectLogger
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return RootLogger
}

// covers reports whether setting namespace sets the logger name.
func covers(namespace, name string) bool {
	for n := name; n != ""; n = parentLogger(n) {
		if n == namespace {
			return true
		}
	}
	return false
}

// logger returns the slog.Logger of a name.
func (l *loggers) logger(name string) *slog.Logger {
	l.mu.Lock()
	n := l.getLocked(name)
	l.mu.Unlock()
	return slog.New(&levelHandler{inner: l.inner, level: &n.level})
}

// loggerLevel is Kafka Connect's LoggerLevel.
type loggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

func (n *namedLogger) info() loggerLevel {
	out := loggerLevel{Level: logLevelName(n.level.Level())}
	if n.lastModified != 0 {
		t := n.lastModified
		out.LastModified = &t
	}
	return out
}

// all lists every logger by name.
func (l *loggers) all() map[string]loggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]loggerLevel, len(l.mu.byName))
	for name, n := range l.mu.byName {
		out[name] = n.info()
	}
	return out
}

// get returns one logger's level; false for a logger that does not exist.
func (l *loggers) get(name string) (loggerLevel, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.mu.byName[name]
	if !ok {
		return loggerLevel{}, false
	}
	return n.info(), true
}

// set gives namespace and every logger it covers the level and returns
// their names, sorted.
func (l *loggers) set(namespace string, level slog.Level, now time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.getLocked(namespace)
	var changed []string
	for name, n := range l.mu.byName {
		if covers(namespace, name) {
			n.level.Set(level)
			n.lastModified = now.UnixMilli()
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed
}

// levelHandler filters records by one logger's level and passes the rest
// to the worker's handler.
type levelHandler struct {
	inner slog.Handler
	level *slog.LevelVar
}

func (h *levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &levelHandler{inner: h.inner.WithAttrs(attrs), level: h.level}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{inner: h.inner.WithGroup(name), level: h.level}
}

// pluginLogger is the logger name of a connector class.
func pluginLogger(p *Plugin) string {
	if p.Logger != "" {
		return p.Logger
	}
	return fmt.Sprintf("%s.plugin.%s", RuntimeLogger, p.Class)
}

type loggerKey struct{}

// LoggerFrom returns the logger the runtime gave a connector or task
// through the context of Start (its plugin's logger, whose level the REST
// API's /admin/loggers sets), or slog.Default outside the runtime.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func withLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// The /admin/loggers endpoints, Kafka Connect's (KIP-495, KIP-976):
//
//	GET /admin/loggers          {"<logger>": {"level": "INFO", "last_modified": ms|null}, …}, by name
//	GET /admin/loggers/{name}   {"level": …, "last_modified": …}; 404 for a logger that does not exist
//	PUT /admin/loggers/{name}   {"level": "DEBUG"}; ?scope=worker (default): this worker, 200 with the
//	                            names of the loggers set; ?scope=cluster: every worker of the group
//	                            through the config topic, 204

func (w *Worker) restLoggers(*http.Request) (int, any, error) {
	return http.StatusOK, w.loggers.all(), nil
}

func (w *Worker) restLogger(r *http.Request) (int, any, error) {
	name := r.PathValue("name")
	l, ok := w.loggers.get(name)
	if !ok {
		return 0, nil, httpErr(http.StatusNotFound, "Logger %s not found.", name)
	}
	return http.StatusOK, l, nil
}

func (w *Worker) restSetLogger(r *http.Request) (int, any, error) {
	name := r.PathValue("name")
	var body map[string]any
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	raw, ok := body["level"]
	if !ok || raw == nil {
		return 0, nil, httpErr(http.StatusBadRequest, "Desired 'level' parameter was not specified in request.")
	}
	levelName, _ := raw.(string)
	level, ok := parseLogLevel(levelName)
	if !ok {
		return 0, nil, httpErr(http.StatusBadRequest, "Invalid log level '%v'.", raw)
	}
	switch scope := r.URL.Query().Get("scope"); strings.ToLower(scope) {
	case "cluster":
		if err := w.store.writeConfig(r.Context(), loggerClusterPrefix+name, loggerLevelValue{Level: strings.ToUpper(levelName)}); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	case "", "worker":
	default:
		w.log.Warn("connect: invalid scope in a request to set a logger level; using worker scope", "scope", scope)
	}
	return http.StatusOK, w.loggers.set(name, level, time.Now()), nil
}

// applyClusterLogLevel applies a cluster-scoped level read from the config
// topic (store.go calls it).
func (w *Worker) applyClusterLogLevel(namespace, levelName string) {
	level, ok := parseLogLevel(levelName)
	if !ok {
		w.log.Warn("connect: ignoring a cluster logger level that is not a level", "logger", namespace, "level", levelName)
		return
	}
	changed := w.loggers.set(namespace, level, time.Now())
	w.log.Info("connect: logger level set for the cluster", "logger", namespace, "level", logLevelName(level), "loggers", len(changed))
}
