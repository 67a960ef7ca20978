package storage

import (
	"os"
	"path/filepath"
)

// SyncCreatedDir makes a created directory durable: its regular files,
// then the directory, then its entry in the parent directory. A log owes
// it to its directory until the first flush of records (Log.created): so
// creating thousands of partitions costs no fsync at all, and a partition
// that never receives a record never pays one. A power loss before that
// flush may lose the directory or leave its files torn; it held nothing
// durable, and the broker creates it again from the metadata quorum.
func SyncCreatedDir(d string) error {
	if err := syncDir(d); err != nil {
		return err
	}
	return syncPath(filepath.Dir(d))
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
