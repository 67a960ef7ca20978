//go:build !linux

package storage

// syncFilesystem fsyncs each created directory's files and entries.
func syncFilesystem(parent string, dirs []string) error { return syncEach(parent, dirs) }
