package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
)

// captureHandler keeps every record logged through it.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

// lines returns the records with message msg, each as its attributes.
func (h *captureHandler) lines(msg string) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.Message != msg {
			continue
		}
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		out = append(out, attrs)
	}
	return out
}

func TestLogLimiter(t *testing.T) {
	h := &captureHandler{}
	l := newLogLimiter(slog.New(h), time.Minute)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }

	for i := range 1000 {
		l.log(slog.LevelError, "fetch read failed", "fetch read failed", "offset", i)
	}
	l.log(slog.LevelError, "other", "other cause")
	if got := h.lines("fetch read failed"); len(got) != 1 || got[0]["offset"] != "0" || got[0]["repeated"] != "" {
		t.Fatalf("1000 repeats within the interval logged %v; want the first line only", got)
	}
	if got := h.lines("other cause"); len(got) != 1 {
		t.Fatalf("a second cause logged %d lines, want 1", len(got))
	}

	// After the interval the next repeat carries the count.
	now = now.Add(61 * time.Second)
	l.log(slog.LevelError, "fetch read failed", "fetch read failed", "offset", 1000)
	got := h.lines("fetch read failed")
	if len(got) != 2 || got[1]["repeated"] != "999" || got[1]["offset"] != "1000" || got[1]["over"] != "1m1s" {
		t.Fatalf("after the interval: %v; want a second line with repeated=999 over 1m1s", got)
	}

	// A periodic sweep reports nothing young, forgets what is old.
	l.log(slog.LevelError, "fetch read failed", "fetch read failed", "offset", 1001)
	l.flush(false)
	if got := h.lines("fetch read failed"); len(got) != 2 {
		t.Fatalf("a sweep within the interval wrote %d lines, want none new", len(got)-2)
	}
	now = now.Add(2 * time.Minute)
	l.flush(false)
	if got := h.lines("fetch read failed"); len(got) != 3 || got[2]["repeated"] != "1" {
		t.Fatalf("a sweep after the interval: %v; want the pending repeat reported", got)
	}
	if got := h.lines("other cause"); len(got) != 1 {
		t.Fatalf("a cause without repeats was reported again by the sweep: %v", got)
	}

	// flush(true) reports everything pending at once.
	l.log(slog.LevelWarn, "k", "third cause")
	l.log(slog.LevelWarn, "k", "third cause")
	l.flush(true)
	if got := h.lines("third cause"); len(got) != 2 || got[1]["repeated"] != "1" {
		t.Fatalf("flush(true): %v", got)
	}

	// Past maxKeys new causes are logged, never dropped.
	l.maxKeys = 2
	for i := range 5 {
		l.log(slog.LevelInfo, "key"+string(rune('a'+i)), "many causes")
	}
	if got := h.lines("many causes"); len(got) != 5 {
		t.Fatalf("past maxKeys: %d lines, want every one of 5", len(got))
	}
}

// TestConnectionErrorLogsBounded: a client that reconnects 200 times and
// sends a malformed frame each time, and one connection that repeats a
// failing request path, leave a bounded number of log lines with counts.
func TestConnectionErrorLogsBounded(t *testing.T) {
	h := &captureHandler{}
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.HTTPListen = ""
	srv, err := NewServer(cfg, slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()

	const attempts = 200
	for range attempts {
		nc, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var frame [4]byte
		binary.BigEndian.PutUint32(frame[:], 3) // shorter than any header
		if _, err := nc.Write(frame[:]); err != nil {
			t.Fatal(err)
		}
		// The broker closes the connection: wait for it.
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); err == nil {
			t.Fatal("the broker answered a malformed frame")
		}
		nc.Close()
	}
	// Each connection's line was written before the broker closed it,
	// so all 200 have been seen by now.
	if got := h.lines("closing connection"); len(got) != 1 || !strings.Contains(got[0]["reason"], "frame size 3") {
		t.Fatalf("%d malformed connections logged %d lines (%v); want one", attempts, len(got), got)
	}

	// The request path: one connection, one cause, many times.
	c := &clientConn{s: srv, listener: srv.listeners[0], remote: "127.0.0.1:5555"}
	rc := &requestContext{s: srv, conn: c, header: requestHeader{clientID: "looping-client"}}
	for i := range 5000 {
		rc.logError("fetch read failed", "topic", "t", "partition", 0, "offset", i)
	}
	c.errLog.flush(true) // what serve does when the connection ends
	got := h.lines("fetch read failed")
	if len(got) != 2 || got[0]["client_id"] != "looping-client" || got[1]["repeated"] != "4999" {
		t.Fatalf("5000 failing requests logged %v; want the first and one with repeated=4999", got)
	}

	closed = true
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Shutdown reports the connections' count.
	if got := h.lines("closing connection"); len(got) != 2 || got[1]["repeated"] != "199" {
		t.Fatalf("after shutdown the connection lines are %v; want a second with repeated=199", got)
	}
}

// TestHousekeepingIgnoresClosedPartitions: a partition closed between a
// housekeeping task's snapshot and its turn (its topic was just deleted)
// is not an error worth a log line; other failures still are.
func TestHousekeepingIgnoresClosedPartitions(t *testing.T) {
	h := &captureHandler{}
	tb := startTestBroker(t)
	tb.createTopic("gone", 1, nil)
	p := tb.srv.topics.partition("gone", 0)
	m := &topicManager{s: &Server{logger: slog.New(h)}}
	if m.logTaskError("checkpoint failed", p, fmt.Errorf("checkpoint: %w", storage.ErrClosed)) {
		t.Fatal("a closed partition's checkpoint was logged as a failure")
	}
	if !m.logTaskError("checkpoint failed", p, errors.New("disk full")) || len(h.lines("checkpoint failed")) != 1 {
		t.Fatal("a real checkpoint failure was not logged")
	}
}
