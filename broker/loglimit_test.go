package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// startCapturedBroker starts a broker on a loopback port whose log, at
// every level, goes to the returned handler; tb.stop closes it early.
func startCapturedBroker(t *testing.T) (*testBroker, *captureHandler) {
	t.Helper()
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
	tb := &testBroker{t: t, cfg: cfg, srv: srv}
	t.Cleanup(tb.stop)
	return tb, h
}

// TestConnectionErrorLogsBounded: a client that reconnects 200 times and
// sends a malformed frame each time, and one connection that repeats a
// failing request path, leave a bounded number of log lines with counts.
func TestConnectionErrorLogsBounded(t *testing.T) {
	tb, h := startCapturedBroker(t)
	srv := tb.srv

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

	tb.stop()
	// Shutdown reports the connections' count.
	if got := h.lines("closing connection"); len(got) != 2 || got[1]["repeated"] != "199" {
		t.Fatalf("after shutdown the connection lines are %v; want a second with repeated=199", got)
	}
}

// TestUnsupportedRequestsLogged: requests the broker does not serve, sent
// over real sockets, are logged at INFO, once per remote host and API key
// within the interval, and never as warnings: Fetch v3 (its response has
// no top-level error code) closes its connection each time, and the
// connections after the first are counted, not logged; Metadata v13 is
// answered UNSUPPORTED_VERSION on a connection that stays open, repeated
// there for one line; an unknown API key gets its own line; ApiVersions
// newer than ours (the KIP-511 probe of a newer client) gets none.
// Shutdown reports the counts.
func TestUnsupportedRequestsLogged(t *testing.T) {
	tb, h := startCapturedBroker(t)
	linesOf := func(apiKey kmsg.Key) []map[string]string {
		var out []map[string]string
		for _, l := range h.lines("unsupported request") {
			if l["api_key"] == strconv.Itoa(int(apiKey)) {
				out = append(out, l)
			}
		}
		return out
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 3
	for i := range 3 {
		c := tb.dialRaw()
		c.send(fetch)
		c.expectClosed(fmt.Sprintf("Fetch v3 on connection %d", i+1))
	}
	if got := linesOf(kmsg.Fetch); len(got) != 1 || got[0]["version"] != "3" || got[0]["served_versions"] != "4-18" ||
		got[0]["outcome"] != "connection closed" || got[0]["client_id"] != "strata-test" {
		t.Fatalf("Fetch v3 on three connections logged %v; want one line", got)
	}

	if apis[kmsg.Metadata.Int16()].maxVersion >= 13 {
		t.Fatal("Metadata v13 is served now: pick another version beyond ours with a top-level error code")
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 13
	c := tb.dialRaw()
	for range 3 {
		if resp := roundTrip[*kmsg.MetadataResponse](c, meta); resp.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("Metadata v13: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	meta.Version = 12 // the connection still serves
	if resp := roundTrip[*kmsg.MetadataResponse](c, meta); len(resp.Brokers) != 1 {
		t.Fatalf("Metadata v12 after v13: %+v", resp)
	}
	if got := linesOf(kmsg.Metadata); len(got) != 1 || got[0]["version"] != "13" || got[0]["outcome"] != "answered UNSUPPORTED_VERSION" {
		t.Fatalf("Metadata v13 three times on one connection logged %v; want one line", got)
	}

	unknown := tb.dialRaw()
	if err := unknown.writeRaw(sized(header(999, 0, 1))); err != nil {
		t.Fatal(err)
	}
	unknown.expectClosed("api key 999")
	if got := linesOf(999); len(got) != 1 || got[0]["outcome"] != "connection closed" || got[0]["served_versions"] != "" {
		t.Fatalf("api key 999 logged %v; want one line", got)
	}

	probe := tb.dialRaw()
	if err := probe.writeRaw(sized(append(header(kmsg.ApiVersions.Int16(), 99, 1), 0))); err != nil {
		t.Fatal(err)
	}
	if _, err := probe.readFrame(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := linesOf(kmsg.ApiVersions); len(got) != 0 {
		t.Fatalf("ApiVersions v99 logged %v", got)
	}

	tb.stop()
	if got := linesOf(kmsg.Fetch); len(got) != 2 || got[1]["repeated"] != "2" {
		t.Fatalf("after shutdown the Fetch lines are %v; want a second with repeated=2", got)
	}
	if got := linesOf(kmsg.Metadata); len(got) != 2 || got[1]["repeated"] != "2" {
		t.Fatalf("after shutdown the Metadata lines are %v; want a second with repeated=2", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged at %v: %s", r.Level, r.Message)
		}
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
