package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSyncCreatedDirs syncs directories in two parents, more than there
// are syncing goroutines, and fails for one that is missing among them.
func TestSyncCreatedDirs(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	names := []string{"b/t-0"}
	for i := range 40 {
		names = append(names, fmt.Sprintf("a/t-%d", i))
	}
	for _, d := range names {
		dir := filepath.Join(root, d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "partition.metadata"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	if err := SyncCreatedDirs(dirs); err != nil {
		t.Fatal(err)
	}
	if err := SyncCreatedDirs([]string{filepath.Join(root, "missing", "t-0")}); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
	if err := SyncCreatedDirs(append(dirs, filepath.Join(root, "a", "gone"))); err == nil {
		t.Fatal("no error for a missing directory among 41")
	}
}
