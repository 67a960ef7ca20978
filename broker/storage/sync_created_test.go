package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSyncCreatedDirs runs both forms, syncfs (Linux) and the portable
// fsync of each file and directory, over directories in two parents.
func TestSyncCreatedDirs(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, d := range []string{"a/t-0", "a/t-1", "b/t-0"} {
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
	for _, parent := range []string{"a", "b"} {
		if err := syncEach(filepath.Join(root, parent), dirs); err != nil {
			t.Fatal(err)
		}
	}
	if err := SyncCreatedDirs([]string{filepath.Join(root, "missing", "t-0")}); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}
