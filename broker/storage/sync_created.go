package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// SyncCreatedDirs makes newly created partition directories durable: the
// files written in them without an fsync (partition.metadata, see
// replica.Open; the log's first segment) and their entries in the parent
// directories. The broker calls it once per batch of created partitions,
// before serving any of them: the files and directories are fsynced by a
// few goroutines at once, so the batch shares the file system's journal
// commits where one fsync after another cost a commit each. (A syncfs(2)
// was tried: no faster here, and it also waits for every other dirty page
// of the file system — on a busy broker, its unflushed log data.)
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
		if err := syncEachParallel(p, dirs); err != nil {
			return fmt.Errorf("storage: make created directories durable in %s: %w", p, err)
		}
	}
	return nil
}

// syncEachParallel fsyncs every file of each of dirs that lie in parent
// and each such directory, spread over a few goroutines (concurrent fsyncs
// share the file system's journal commits, so a batch of thousands costs
// a few commits), then parent.
func syncEachParallel(parent string, dirs []string) error {
	var mine []string
	for _, d := range dirs {
		if filepath.Dir(d) == parent {
			mine = append(mine, d)
		}
	}
	const workers = 16
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range min(workers, len(mine)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for d := range next {
				if first == nil {
					first = syncDir(d)
				}
			}
			errs <- first
		}()
	}
	for _, d := range mine {
		next <- d
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return syncPath(parent)
}

// syncDir fsyncs the regular files of d, then d.
func syncDir(d string) error {
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
	return syncPath(d)
}
