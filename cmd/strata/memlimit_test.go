package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
)

func TestContainerMemoryLimit(t *testing.T) {
	write := func(t *testing.T, root, name, v string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, file, value string
		want              int64
		ok, fails         bool
	}{
		{"v2 limit", "memory.max", "2147483648", 2147483648, true, false},
		{"v2 unlimited", "memory.max", "max", 0, false, false},
		{"v1 limit", "memory/memory.limit_in_bytes", "1073741824", 1073741824, true, false},
		{"v1 unlimited", "memory/memory.limit_in_bytes", strconv.FormatInt(math.MaxInt64&^4095, 10), 0, false, false},
		{"garbage", "memory.max", "lots", 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, c.file, c.value)
			got, ok, err := containerMemoryLimit(root)
			if (err != nil) != c.fails || ok != c.ok || got != c.want {
				t.Fatalf("containerMemoryLimit = %d, %v, %v; want %d, %v, error %v", got, ok, err, c.want, c.ok, c.fails)
			}
		})
	}
	if _, ok, err := containerMemoryLimit(t.TempDir()); ok || err != nil {
		t.Fatalf("no cgroup files: ok %v err %v", ok, err)
	}
}

func TestApplyContainerMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "memory.max"), []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	soft, err := applyContainerMemoryLimit(noEnv, root)
	if err != nil || soft != 900000000 {
		t.Fatalf("soft limit %d, %v; want 90%% of the container's", soft, err)
	}
	if got := debug.SetMemoryLimit(-1); got != 900000000 {
		t.Fatalf("runtime memory limit %d, want 900000000", got)
	}
	// GOMEMLIMIT wins: the runtime applied it; nothing is changed.
	debug.SetMemoryLimit(math.MaxInt64)
	withEnv := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "512MiB"
		}
		return ""
	}
	if soft, err := applyContainerMemoryLimit(withEnv, root); soft != 0 || err != nil {
		t.Fatalf("with GOMEMLIMIT: set %d, %v", soft, err)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT the limit changed to %d", got)
	}
}

func TestServerGCPolicy(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	if got := gcPolicy(func(string) string { return "" }, serverGCPercent); got != serverGCPercent {
		t.Fatalf("without GOGC: policy says %d, want %d", got, serverGCPercent)
	}
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("without GOGC: runtime GC percent %d, want %d", got, serverGCPercent)
	}
	// GOGC=off (-1) is the user's choice too: kept.
	debug.SetGCPercent(-1)
	if got := gcPolicy(func(k string) string {
		if k == "GOGC" {
			return "off"
		}
		return ""
	}, serverGCPercent); got != -1 {
		t.Fatalf("with GOGC=off: policy says %d, want -1", got)
	}
}
