// Package loglevel is a registry of named loggers whose levels change at
// run time, over log/slog: what Kafka operators change with log4j names
// (Connect's /admin/loggers, the broker's BROKER_LOGGER configs).
//
// Each logger is a slog.Handler wrapping one shared handler with a
// slog.LevelVar of its own: a record below the logger's level is dropped,
// one at or above it goes to the wrapped handler whatever that handler's
// own level, so a raised level shows debug lines. Names form a tree by
// their dots (a parent function may add other edges, such as Kafka's
// namespaces); setting a namespace sets it and every logger below it, as
// log4j does. Levels start at the lowest one the wrapped handler enables
// and are not persisted.
package loglevel

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// Root is log4j's root logger: every name descends from it.
const Root = "root"

// log4j's levels by name, and where they fall among slog's.
var levels = []struct {
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

// Parse reads a log4j level name, in any case.
func Parse(s string) (slog.Level, bool) {
	for _, l := range levels {
		if strings.EqualFold(strings.TrimSpace(s), l.name) {
			return l.level, true
		}
	}
	return 0, false
}

// Name is the log4j name of the highest log4j level at or below l.
func Name(l slog.Level) string {
	name := levels[0].name
	for _, ll := range levels {
		if ll.level <= l {
			name = ll.name
		}
	}
	return name
}

// Info is one logger's level and when Set last changed it (ms since the
// epoch; 0: never).
type Info struct {
	Level        slog.Level
	LastModified int64
}

type named struct {
	level        slog.LevelVar
	lastModified int64
}

// Registry holds the named loggers of one process part.
type Registry struct {
	inner   slog.Handler
	initial slog.Level
	parent  func(string) string

	mu     sync.Mutex
	byName map[string]*named
}

// New returns a registry over inner with the given loggers (and Root).
// parent, if not nil, names a logger's parent where it is not the name
// without its last dot-separated part; it returns "" for Root.
func New(inner slog.Handler, names []string, parent func(string) string) *Registry {
	r := &Registry{inner: inner, initial: slog.LevelError + 4, parent: parent, byName: map[string]*named{}}
	for _, ll := range levels[1 : len(levels)-1] {
		if inner.Enabled(context.Background(), ll.level) {
			r.initial = ll.level
			break
		}
	}
	r.getLocked(Root)
	for _, n := range names {
		r.getLocked(n)
	}
	return r
}

// Parent is the logger name inherits from.
func (r *Registry) Parent(name string) string {
	if name == Root {
		return ""
	}
	if r.parent != nil {
		if p := r.parent(name); p != "" {
			return p
		}
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return Root
}

// covers reports whether setting namespace sets the logger name.
func (r *Registry) covers(namespace, name string) bool {
	for n := name; n != ""; n = r.Parent(n) {
		if n == namespace {
			return true
		}
	}
	return false
}

// getLocked returns the named logger, creating it at its nearest existing
// ancestor's level. Needs mu.
func (r *Registry) getLocked(name string) *named {
	if n, ok := r.byName[name]; ok {
		return n
	}
	n := &named{}
	n.level.Set(r.initial)
	for p := r.Parent(name); p != ""; p = r.Parent(p) {
		if pn, ok := r.byName[p]; ok {
			n.level.Set(pn.level.Level())
			break
		}
	}
	r.byName[name] = n
	return n
}

// Logger returns the slog.Logger of a name, creating the name.
func (r *Registry) Logger(name string) *slog.Logger {
	r.mu.Lock()
	n := r.getLocked(name)
	r.mu.Unlock()
	return slog.New(&handler{inner: r.inner, level: &n.level})
}

// All lists every logger by name.
func (r *Registry) All() map[string]Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Info, len(r.byName))
	for name, n := range r.byName {
		out[name] = Info{Level: n.level.Level(), LastModified: n.lastModified}
	}
	return out
}

// Names lists the loggers, sorted.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.byName))
	for name := range r.byName {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get returns one logger's level; false for a logger that does not exist.
func (r *Registry) Get(name string) (Info, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.byName[name]
	if !ok {
		return Info{}, false
	}
	return Info{Level: n.level.Level(), LastModified: n.lastModified}, true
}

// Set gives namespace (created if new) and every logger it covers the
// level and returns their names, sorted.
func (r *Registry) Set(namespace string, level slog.Level, now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.getLocked(namespace)
	var changed []string
	for name, n := range r.byName {
		if r.covers(namespace, name) {
			n.level.Set(level)
			n.lastModified = now.UnixMilli()
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed
}

// Reset gives a logger (and those it covers) its parent's level back, what
// deleting a logger's level does in Kafka; Root returns to the level the
// registry started at. It reports false for a logger that does not exist.
func (r *Registry) Reset(name string, now time.Time) bool {
	r.mu.Lock()
	_, ok := r.byName[name]
	level := r.initial
	if p := r.Parent(name); p != "" {
		if pn, found := r.byName[p]; found {
			level = pn.level.Level()
		}
	}
	r.mu.Unlock()
	if !ok {
		return false
	}
	r.Set(name, level, now)
	return true
}

// handler filters records by one logger's level and passes the rest on.
type handler struct {
	inner slog.Handler
	level *slog.LevelVar
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *handler) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(attrs), level: h.level}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), level: h.level}
}
