package broker

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// TestReadinessNotReady: each condition /readyz waits for, alone.
func TestReadinessNotReady(t *testing.T) {
	ready := readiness{
		serving: true, leader: 1, node: 2, incarnation: "inc",
		state:   cluster.State{Brokers: map[int32]cluster.Broker{2: {NodeID: 2, IncarnationID: "inc"}}},
		applied: 500, commit: 510,
	}
	if got := ready.notReady(); got != "" {
		t.Fatalf("ready node: %q", got)
	}
	for _, tc := range []struct {
		name   string
		change func(*readiness)
		want   string
	}{
		{"shutting down", func(r *readiness) { r.shuttingDown = true }, "shutting down"},
		{"listeners not started", func(r *readiness) { r.serving = false }, "not serving"},
		{"no leader", func(r *readiness) { r.leader = -1 }, "no metadata quorum leader"},
		{"unregistered", func(r *readiness) { r.state = cluster.State{} }, "not registered"},
		{"earlier incarnation", func(r *readiness) { r.incarnation = "new" }, "not registered"},
		{"fenced", func(r *readiness) {
			r.state = cluster.State{Brokers: map[int32]cluster.Broker{2: {NodeID: 2, IncarnationID: "inc", Fenced: true}}}
		}, "fenced"},
		{"behind the commit", func(r *readiness) { r.commit = r.applied + readyLagEntries + 1 }, "applied to index 500"},
	} {
		r := ready
		tc.change(&r)
		if got := r.notReady(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: notReady() = %q, want %q", tc.name, got, tc.want)
		}
	}
	observer := ready
	observer.commit = 0 // an observer knows no commit index: registration decides
	if got := observer.notReady(); got != "" {
		t.Fatalf("observer: %q", got)
	}
}

// TestReadyzServed: a started node answers /readyz 200 (its voter knows a
// commit index it has applied), without credentials on a guarded admin
// listener, and 503 once closing.
func TestReadyzServed(t *testing.T) {
	users := filepath.Join(t.TempDir(), "http-users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := startTestBroker(t, func(c *Config) { mustSet(t, c, "admin.http.auth.basic.users.file", users) })
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + tb.srv.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	if r := tb.srv.readiness(); r.commit == 0 || r.applied+readyLagEntries < r.commit {
		t.Fatalf("voter's commit index %d, applied %d", r.commit, r.applied)
	}
	if code, _ := get("/metrics"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without credentials: %d, want 401 (the guard is on)", code)
	}
	tb.srv.shuttingDown.Store(true)
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Fatalf("/readyz while shutting down: %d %q", code, body)
	}
	tb.srv.shuttingDown.Store(false)
}
