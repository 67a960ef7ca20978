package broker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// logLimiter bounds how often one cause is logged, so a misbehaving client
// cannot flood the log: the first occurrence of a key is written at once,
// repeats are counted, and the count goes out with the key's next line
// once interval has passed, or when the owner flushes (a connection at its
// close, the server periodically and at shutdown). Safe for concurrent use.
type logLimiter struct {
	logger   *slog.Logger
	interval time.Duration
	now      func() time.Time
	// maxKeys bounds the keys remembered; past it a line is written
	// unlimited rather than the table growing without bound.
	maxKeys int

	mu struct {
		sync.Mutex
		lines map[string]*limitedLine
	}
}

// limitedLine is what a key last logged and how often it repeated since.
type limitedLine struct {
	level      slog.Level
	msg        string
	attrs      []any
	logged     time.Time // when the key last wrote a line
	suppressed int       // occurrences since then that wrote none
}

// logRepeatInterval is how long repeats of one cause stay counted before
// they are reported.
const logRepeatInterval = time.Minute

func newLogLimiter(logger *slog.Logger, interval time.Duration) *logLimiter {
	l := &logLimiter{logger: logger, interval: interval, now: time.Now, maxKeys: 1024}
	l.mu.lines = map[string]*limitedLine{}
	return l
}

// log writes msg with attrs unless key logged within the interval, in
// which case it is counted.
func (l *logLimiter) log(level slog.Level, key, msg string, attrs ...any) {
	now := l.now()
	l.mu.Lock()
	line, seen := l.mu.lines[key]
	switch {
	case !seen && len(l.mu.lines) >= l.maxKeys:
		l.mu.Unlock()
		l.logger.Log(context.Background(), level, msg, attrs...)
		return
	case !seen:
		l.mu.lines[key] = &limitedLine{level: level, msg: msg, attrs: attrs, logged: now}
		l.mu.Unlock()
		l.logger.Log(context.Background(), level, msg, attrs...)
		return
	case now.Sub(line.logged) < l.interval:
		line.suppressed++
		line.level, line.msg, line.attrs = level, msg, attrs
		l.mu.Unlock()
		return
	}
	repeated, since := line.suppressed, now.Sub(line.logged)
	line.suppressed, line.logged = 0, now
	l.mu.Unlock()
	if repeated > 0 {
		attrs = append(attrs[:len(attrs):len(attrs)], "repeated", repeated, "over", since.Round(time.Second).String())
	}
	l.logger.Log(context.Background(), level, msg, attrs...)
}

// flush reports the counts of repeats not yet reported. With all false,
// only keys whose interval has passed are reported and forgotten (a
// periodic sweep); with all, every key (a connection closing, shutdown).
func (l *logLimiter) flush(all bool) {
	now := l.now()
	type report struct {
		line     limitedLine
		repeated int
	}
	var reports []report
	l.mu.Lock()
	for key, line := range l.mu.lines {
		if !all && now.Sub(line.logged) < l.interval {
			continue
		}
		if line.suppressed > 0 {
			reports = append(reports, report{*line, line.suppressed})
		}
		delete(l.mu.lines, key)
	}
	l.mu.Unlock()
	for _, r := range reports {
		attrs := append(r.line.attrs[:len(r.line.attrs):len(r.line.attrs)], "repeated", r.repeated, "over", now.Sub(r.line.logged).Round(time.Second).String())
		l.logger.Log(context.Background(), r.line.level, r.line.msg, attrs...)
	}
}
