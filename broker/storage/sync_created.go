package storage

import (
	"os"
	"path/filepath"
)

// DirCreated tells l that its directory was just created, its files
// (partition.metadata, the first segment) written without an fsync:
// nothing of it is durable yet. The first flush that makes records
// durable first makes the whole directory durable (SyncCreatedDir), so
// creating thousands of partitions costs no fsync at all, and a partition
// that never receives a record never pays one. A power loss before that
// flush may lose the directory or leave its files torn; it held nothing
// durable, and the broker creates it again from the metadata quorum.
func (l *Log) DirCreated() {
	l.writeMu.Lock()
	l.created = true
	l.writeMu.Unlock()
}

// SyncCreatedDir makes a created directory durable: its regular files,
// then the directory, then its entry in the parent directory.
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
