package tiering_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/tiering"
	"github.com/strata-streaming/strata/tiering/storetest"
)

func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) (tiering.ObjectStore, storetest.Inspector) {
			return tiering.NewMemStore(), nil
		},
	})
}

func TestFileStoreContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) (tiering.ObjectStore, storetest.Inspector) {
			dir := t.TempDir()
			store, err := tiering.Open(t.Context(), "file://"+dir)
			if err != nil {
				t.Fatal(err)
			}
			return store, dirInspector{root: dir}
		},
	})
}

// dirInspector reads a FileStore's directory with plain os calls. Keys
// reports every regular file, temporary files included, so debris left by a
// failed Put shows up as an unexpected key.
type dirInspector struct{ root string }

func (d dirInspector) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	err := filepath.WalkDir(d.root, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entry.Type().IsRegular() {
			rel, err := filepath.Rel(d.root, path)
			if err != nil {
				return err
			}
			if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
				keys = append(keys, key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", d.root, err)
	}
	slices.Sort(keys)
	return keys
}

func (d dirInspector) Read(t testing.TB, key string) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(key)))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return data, true
}
