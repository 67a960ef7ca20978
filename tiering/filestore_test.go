package tiering_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/tiering"
)

// TestFileStoreLayout: a key is a path below the root, and Delete prunes the
// directories it empties but never the root.
func TestFileStoreLayout(t *testing.T) {
	root := t.TempDir()
	store, err := tiering.NewFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := store.Put(ctx, "topics/t1/0/segment", strings.NewReader("data"), 4); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "topics/t1/keep", strings.NewReader("k"), 1); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "topics", "t1", "0", "segment"))
	if err != nil || string(data) != "data" {
		t.Fatalf("file for topics/t1/0/segment: %q, %v", data, err)
	}
	if err := store.Delete(ctx, "topics/t1/0/segment"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "topics", "t1", "0")); !os.IsNotExist(err) {
		t.Errorf("emptied directory topics/t1/0 still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(root, "topics", "t1", "keep")); err != nil {
		t.Errorf("sibling object gone: %v", err)
	}
	if err := store.Delete(ctx, "topics/t1/keep"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 0 {
		t.Errorf("root after deleting everything: %v entries, %v; want an empty root that still exists", len(entries), err)
	}
}

// TestFileStoreKeyIsDirectory: the one limit of the file layout — a key
// cannot also be a directory of keys — fails the Put clearly and harms
// nothing.
func TestFileStoreKeyIsDirectory(t *testing.T) {
	store, err := tiering.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := store.Put(ctx, "a", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	err = store.Put(ctx, "a/b", strings.NewReader("y"), 1)
	if err == nil || errors.Is(err, tiering.ErrInvalidKey) {
		t.Errorf("Put(a/b) over object a: %v, want a filesystem error", err)
	}
	if info, err := store.Head(ctx, "a"); err != nil || info.Size != 1 {
		t.Errorf("Head(a) = %+v, %v", info, err)
	}
}

// TestFileStoreSkipsForeignFiles: leftover temporary files (a crash during
// Put) and files no key can name are not listed.
func TestFileStoreSkipsForeignFiles(t *testing.T) {
	root := t.TempDir()
	store, err := tiering.NewFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(t.Context(), "d/real", strings.NewReader("r"), 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".strata-tmp-123", "d/.strata-tmp-456", `d/back\slash`} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := store.List(t.Context(), "")
	if err != nil || len(infos) != 1 || infos[0].Key != "d/real" {
		t.Errorf("List = %+v, %v; want only d/real", infos, err)
	}
}

func TestNewFileStoreOnAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tiering.NewFileStore(file); err == nil {
		t.Error("NewFileStore on a regular file succeeded")
	}
}
