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
// The registry is internal/loglevel's: a level set on a namespace sets the
// namespace's logger (creating it, as log4j does) and every logger below
// it, where below follows the dots, plus the two Kafka names above.
// Levels are not persisted: a restarted worker starts again from its
// configuration.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/strata-streaming/strata/internal/loglevel"
)

// Logger names of the runtime.
const (
	RootLogger         = loglevel.Root
	KafkaConnectLogger = "org.apache.kafka.connect"
	RuntimeLogger      = "strata.connect"
	workerLogger       = "strata.connect.worker"
	groupLogger        = "strata.connect.group"
	storeLogger        = "strata.connect.store"
	taskLogger         = "strata.connect.task"
	restLogger         = "strata.connect.rest"
)

// loggers is a worker's registry of named loggers (internal/loglevel),
// with strata.connect below Kafka Connect's namespace.
type loggers struct{ *loglevel.Registry }

func newLoggers(inner slog.Handler) *loggers {
	return &loggers{loglevel.New(inner, []string{KafkaConnectLogger, RuntimeLogger, workerLogger, groupLogger, storeLogger, taskLogger, restLogger}, func(name string) string {
		if name == RuntimeLogger {
			return KafkaConnectLogger
		}
		return ""
	})}
}

func (l *loggers) logger(name string) *slog.Logger { return l.Logger(name) }

// loggerLevel is Kafka Connect's LoggerLevel.
type loggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

func levelOf(i loglevel.Info) loggerLevel {
	out := loggerLevel{Level: loglevel.Name(i.Level)}
	if i.LastModified != 0 {
		t := i.LastModified
		out.LastModified = &t
	}
	return out
}

// all lists every logger by name.
func (l *loggers) all() map[string]loggerLevel {
	all := l.All()
	out := make(map[string]loggerLevel, len(all))
	for name, i := range all {
		out[name] = levelOf(i)
	}
	return out
}

// get returns one logger's level; false for a logger that does not exist.
func (l *loggers) get(name string) (loggerLevel, bool) {
	i, ok := l.Get(name)
	return levelOf(i), ok
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
	level, ok := loglevel.Parse(levelName)
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
	return http.StatusOK, w.loggers.Set(name, level, time.Now()), nil
}

// applyClusterLogLevel applies a cluster-scoped level read from the config
// topic (store.go calls it).
func (w *Worker) applyClusterLogLevel(namespace, levelName string) {
	level, ok := loglevel.Parse(levelName)
	if !ok {
		w.log.Warn("connect: ignoring a cluster logger level that is not a level", "logger", namespace, "level", levelName)
		return
	}
	changed := w.loggers.Set(namespace, level, time.Now())
	w.log.Info("connect: logger level set for the cluster", "logger", namespace, "level", loglevel.Name(level), "loggers", len(changed))
}
