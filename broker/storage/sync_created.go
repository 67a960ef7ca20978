package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// SyncCreatedDirs makes newly created partition directories durable: the
// files written in them without an fsync (partition.metadata, see
// replica.Open; the log's first segment) and their entries in the parent
// directories. The broker calls it once per batch of created partitions,
// before serving any of them. On Linux it is one syncfs(2) per parent directory
// (a log dir): one journal commit for the whole batch, where an fsync per
// file cost a commit each. Elsewhere each file and directory is fsynced.
func SyncCreatedDirs(dirs []string) error {
	parents := map[string]bool{}
	for _, d := range dirs {
		parents[filepath.Dir(d)] = true
	}
	sorted := make([]string, 0, len(parents))
	for p := range parents {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	for _, p := range sorted {
		if err := syncFilesystem(p, dirs); err != nil {
			return fmt.Errorf("storage: make created directories durable in %s: %w", p, err)
		}
	}
	return nil
}

// syncEach fsyncs every file of each of dirs that lie in parent, each such
// directory, then parent: the portable form of a syncfs of parent.
func syncEach(parent string, dirs []string) error {
	for _, d := range dirs {
		if filepath.Dir(d) != parent {
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				if err := syncPath(filepath.Join(d, e.Name())); err != nil {
					return err
				}
			}
		}
		if err := syncPath(d); err != nil {
			return err
		}
	}
	return syncPath(parent)
}
