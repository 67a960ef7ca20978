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
	take := captureSyncs(t)
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

// TestOpenFresh: a log opened in a directory its caller has just made
// (Options.Fresh) starts empty at offset 0, owes the directory's
// durability to its first flush of records like any new log, and reopens
// with its records. Its .log file is created by the first append, not by
// Open, and a flush before then succeeds.
func TestOpenFresh(t *testing.T) {
	take := captureSyncs(t)
	dir := filepath.Join(t.TempDir(), "topic-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, testConfig(), Options{Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 0 || l.LogEndOffset() != 0 {
		t.Fatalf("fresh log: start %d end %d", l.LogStartOffset(), l.LogEndOffset())
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("fresh log before its first append: files %v (%v); want none", entries, err)
	}
	if err := l.Flush(); err != nil {
		t.Fatalf("flush before the first append: %v", err)
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatalf("checkpoint before the first append: %v", err)
	}
	appendRaw(t, l, 0, valueBatch(t, 3, 10, 1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if synced := take(); !slices.Contains(synced, dir) || !slices.Contains(synced, filepath.Dir(dir)) {
		t.Fatalf("first flush of a fresh log synced %v; want the directory and its parent", synced)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, testConfig(), nil)
	if l.LogEndOffset() != 3 {
		t.Fatalf("reopened: end %d, want 3", l.LogEndOffset())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// captureSyncs records every path fsynced through syncHook until the test
// ends; take returns (and forgets) those recorded so far.
func captureSyncs(t *testing.T) (take func() []string) {
	var mu sync.Mutex
	var synced []string
	syncHook = func(path string) {
		mu.Lock()
		synced = append(synced, path)
		mu.Unlock()
	}
	t.Cleanup(func() { syncHook = nil })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := synced
		synced = nil
		return out
	}
}
