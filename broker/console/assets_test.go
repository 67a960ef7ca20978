package console

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-streaming/strata/broker/console/internal/bundle"
)

// TestFirstLoadWeight: what the browser loads first (index.html, app.js,
// app.css) stays well under 500 KiB gzip-compressed (issue 19's budget).
func TestFirstLoadWeight(t *testing.T) {
	const budget = 500 << 10
	total := 0
	for _, name := range bundle.Files {
		b, err := fs.ReadFile(Assets(), name)
		if err != nil {
			t.Fatalf("embedded %s: %v", name, err)
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = w.Write(b)
		_ = w.Close()
		t.Logf("%s: %d bytes, %d gzipped", name, len(b), z.Len())
		total += z.Len()
	}
	if total > budget {
		t.Fatalf("first load is %d bytes gzipped, over the %d budget", total, budget)
	}
}

// TestDistUpToDate re-runs the bundler and fails if the committed dist/
// differs (run `go generate ./broker/console`). It needs ui/node_modules
// (scripts/install-test-deps.sh); without it the test skips, or fails
// under CI.
func TestDistUpToDate(t *testing.T) {
	if _, err := os.Stat(filepath.Join("ui", "node_modules")); err != nil {
		msg := "broker/console/ui/node_modules is missing; run scripts/install-test-deps.sh (npm ci there)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	built, err := bundle.Build(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bundle.Files {
		committed, err := os.ReadFile(filepath.Join("dist", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, built[name]) {
			t.Errorf("dist/%s is stale: run go generate ./broker/console and commit dist/", name)
		}
	}
}
