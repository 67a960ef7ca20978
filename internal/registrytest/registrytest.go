// Package registrytest runs Strata's schema registry in-process for tests:
// on a memory log (no broker) and a free loopback port, closed in the
// test's cleanup.
package registrytest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-streaming/strata/registry"
)

// Start serves a registry on a memory log and a free loopback port and
// returns its URL (http://127.0.0.1:port). Warnings and errors it logs go
// to the test's output.
func Start(t testing.TB) string {
	t.Helper()
	cfg := registry.DefaultConfig()
	cfg.Log = registry.NewMemoryLog()
	cfg.Listen = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return "http://" + r.Addr()
}
