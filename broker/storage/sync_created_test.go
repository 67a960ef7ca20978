package storage

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestCreatedDirSyncsWithFirstRecords: a directory without a recovery
// checkpoint (new, or left by a process crash before its first flush)
// costs no fsync until a flush of a log holding records; that flush syncs
// every file of the directory (partition.metadata too), the directory and
// the parent, once. A log reopened with a checkpoint owes nothing.
func TestCreatedDirSyncsWithFirstRecords(t *testing.T) {
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
	dir := filepath.Join(t.TempDir(), "topic-0")
	meta := filepath.Join(dir, "partition.metadata")
	parent := filepath.Dir(dir)
	owed := func(what string, got []string, want bool) {
		t.Helper()
		for _, p := range []string{meta, dir, parent} {
			if slices.Contains(got, p) != want && (p != dir || want) {
				t.Fatalf("%s: synced %v; want the created directory synced: %v", what, got, want)
			}
		}
	}

	l := openLog(t, dir, testConfig(), nil)
	if err := os.WriteFile(meta, []byte("topic_id: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	take()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	owed("a flush with no records", take(), false)
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	owed("the first flush with records", take(), true)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 2))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	owed("a later flush", take(), false)

	// Closed with a checkpoint: reopened, it owes nothing.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, testConfig(), nil)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 3))
	take()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	owed("a flush after reopening with a checkpoint", take(), false)

	// Reopened without one (as after a crash before the first flush): the
	// first flush of its records makes the directory durable again.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, recoveryCheckpointFile)); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, testConfig(), nil)
	defer l.Close()
	take()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	owed("the first flush after reopening without a checkpoint", take(), true)
}

// TestSyncCreatedDir fails for a directory that does not exist.
func TestSyncCreatedDir(t *testing.T) {
	if err := SyncCreatedDir(filepath.Join(t.TempDir(), "missing", "t-0")); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}
