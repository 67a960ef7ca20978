package storage

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestDirCreatedSyncsWithFirstRecords: a created directory costs no fsync
// until a flush makes records durable; that flush syncs every file of the
// directory (partition.metadata too), the directory and the parent, once.
func TestDirCreatedSyncsWithFirstRecords(t *testing.T) {
	var mu sync.Mutex
	var synced []string
	syncHook = func(path string) {
		mu.Lock()
		synced = append(synced, path)
		mu.Unlock()
	}
	t.Cleanup(func() { syncHook = nil })
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := synced
		synced = nil
		return out
	}

	l, dir := newTestLog(t, testConfig(), nil)
	meta := filepath.Join(dir, "partition.metadata")
	if err := os.WriteFile(meta, []byte("topic_id: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.DirCreated()
	take()

	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := take(); slices.Contains(got, meta) || slices.Contains(got, filepath.Dir(dir)) {
		t.Fatalf("a flush with no records synced the created directory: %v", got)
	}

	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	got := take()
	for _, want := range []string{meta, dir, filepath.Dir(dir)} {
		if !slices.Contains(got, want) {
			t.Fatalf("the first flush with records did not sync %s: %v", want, got)
		}
	}

	appendRaw(t, l, 0, valueBatch(t, 1, 10, 2))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := take(); slices.Contains(got, meta) || slices.Contains(got, filepath.Dir(dir)) {
		t.Fatalf("a later flush synced the created directory again: %v", got)
	}
}

// TestSyncCreatedDir fails for a directory that does not exist.
func TestSyncCreatedDir(t *testing.T) {
	if err := SyncCreatedDir(filepath.Join(t.TempDir(), "missing", "t-0")); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}
