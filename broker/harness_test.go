package broker

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// testBroker is an in-process broker on a loopback port with its own data
// directory; restart reopens the same directory.
type testBroker struct {
	t   testing.TB
	cfg Config
	srv *Server
	// logTo, if set, receives the server's log at debug level.
	logTo io.Writer
	// beforeStart, if set, sees each server before it starts.
	beforeStart func(*Server)
}

func startTestBroker(t testing.TB, tune ...func(*Config)) *testBroker {
	t.Helper()
	return startTestBrokerLogging(t, nil, tune...)
}

// startTestBrokerLogging is startTestBroker with the log written to w
// (at debug level) when w is not nil.
func startTestBrokerLogging(t testing.TB, w io.Writer, tune ...func(*Config)) *testBroker {
	t.Helper()
	return startTestBrokerHooked(t, w, nil, tune...)
}

// startTestBrokerHooked is startTestBrokerLogging with beforeStart called
// on the server (of each start) before it starts.
func startTestBrokerHooked(t testing.TB, w io.Writer, beforeStart func(*Server), tune ...func(*Config)) *testBroker {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.HTTPListen = "127.0.0.1:0"
	cfg.IcebergCatalogListen = "127.0.0.1:0"
	for _, f := range tune {
		f(&cfg)
	}
	tb := &testBroker{t: t, cfg: cfg, logTo: w, beforeStart: beforeStart}
	tb.start()
	t.Cleanup(func() { tb.stop() })
	return tb
}

func (tb *testBroker) start() {
	tb.t.Helper()
	level := slog.LevelWarn
	if os.Getenv("STRATA_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	var out io.Writer = os.Stderr
	if tb.logTo != nil {
		out, level = tb.logTo, slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	srv, err := NewServer(tb.cfg, logger)
	if err != nil {
		tb.t.Fatalf("NewServer: %v", err)
	}
	if tb.beforeStart != nil {
		tb.beforeStart(srv)
	}
	if err := srv.Start(); err != nil {
		tb.t.Fatalf("Start: %v", err)
	}
	tb.srv = srv
	// Restarts keep the port so clients reconnect to the same address.
	tb.cfg.Listen = srv.Addr()
}

func (tb *testBroker) stop() {
	if tb.srv != nil {
		if err := tb.srv.Close(); err != nil {
			tb.t.Errorf("Close: %v", err)
		}
		tb.srv = nil
	}
}

func (tb *testBroker) restart() {
	tb.t.Helper()
	tb.stop()
	tb.start()
}

func (tb *testBroker) addr() string { return tb.srv.Addr() }

// client returns a franz-go client for the broker, closed at test end.
func (tb *testBroker) client(opts ...kgo.Opt) *kgo.Client {
	tb.t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(tb.addr()), kgo.RetryTimeout(20 * time.Second)}
	if os.Getenv("STRATA_TEST_DEBUG") != "" {
		base = append(base, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Cleanup(cl.Close)
	return cl
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
