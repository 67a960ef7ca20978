package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
)

// ErrTooManyOpenFiles reports that a segment file could not be opened
// because the process is out of file descriptors (EMFILE, ENFILE). It is
// not an *IOError: the disk is fine, so the log directory stays online and
// only the request that needed the file fails.
var ErrTooManyOpenFiles = errors.New("storage: too many open files")

// segmentFile is a segment's .log file, opened on first use (see "Lazy
// open" in the package documentation). Once open it stays open until the
// log closes it: a FileChunk handed to sendfile may still use it, so
// there is no closing of idle files. Concurrent first uses need no lock:
// each opens the file, the first to publish it wins and the others close
// theirs.
//
// A segment leaving the log is pinned (opened) before its files are
// unlinked or a clean's output takes its name (pinForRemoval), so a reader
// holding an older view never opens a missing or different file: a failed
// or losing open looks at the published state again.
type segmentFile struct {
	path string
	// checkBase, if >= 0, is checked at the first open against the base
	// offset of the file's first batch (checkFirstBatch): Open trusts a
	// sealed segment below the recovery checkpoint without reading it.
	// Set by Open before the log is published, never changed after.
	checkBase int64
	// unborn: the file does not exist yet (the first segment of a fresh
	// log); the first use creates it, so a partition that is never
	// written or read costs no inode for it. Set before the log is
	// published, never changed after.
	unborn bool
	// beforeCreate, for an unborn file, makes its directory first
	// (Log.ensureDir); nil when the directory exists. Set with unborn.
	beforeCreate func() error
	state        atomic.Pointer[fileState] // nil: not opened yet
}

// fileState is an opened file, or the error every use gets instead.
type fileState struct {
	file *os.File
	err  error
}

// closedFile is the state of a closed segment file.
var closedFile = &fileState{err: os.ErrClosed}

func newSegmentFile(path string, f *os.File) *segmentFile {
	sf := &segmentFile{path: path, checkBase: -1}
	if f != nil {
		sf.state.Store(&fileState{file: f})
	}
	return sf
}

// get returns the open file, opening it on first use.
func (sf *segmentFile) get() (*os.File, error) {
	if st := sf.state.Load(); st != nil {
		return st.file, st.err
	}
	flags := os.O_RDWR
	if sf.unborn {
		flags |= os.O_CREATE
		if sf.beforeCreate != nil {
			if err := sf.beforeCreate(); err != nil {
				return nil, err
			}
		}
	}
	f, err := os.OpenFile(sf.path, flags, 0o644)
	if err != nil {
		if st := sf.state.Load(); st != nil {
			return st.file, st.err // pinned (or closed) meanwhile
		}
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			return nil, fmt.Errorf("%w: open %s: %v", ErrTooManyOpenFiles, sf.path, err)
		}
		return nil, err
	}
	st := &fileState{file: f}
	if sf.checkBase >= 0 {
		if err := checkFirstBatch(f, sf.path, sf.checkBase); err != nil {
			f.Close()
			if !errors.Is(err, ErrCorruptLog) {
				return nil, err // a read error: try again next time
			}
			st = &fileState{err: err}
		}
	}
	if !sf.state.CompareAndSwap(nil, st) {
		if st.file != nil {
			st.file.Close()
		}
		st = sf.state.Load()
	}
	return st.file, st.err
}

// opened returns the file if it is open, nil otherwise; it never opens it.
func (sf *segmentFile) opened() *os.File {
	if st := sf.state.Load(); st != nil {
		return st.file
	}
	return nil
}

// closeOSFile closes a segment's descriptor; tests replace it to hold a
// close as a busy filesystem does.
var closeOSFile = (*os.File).Close

// close closes the file if it is open; every later use gets os.ErrClosed.
func (sf *segmentFile) close() error {
	if old := sf.state.Swap(closedFile); old != nil && old.file != nil {
		return closeOSFile(old.file)
	}
	return nil
}

// release closes the file and leaves it to be opened again on first use.
// Only Open calls it, before the log is published: no reader can hold the
// file.
func (sf *segmentFile) release() {
	if old := sf.state.Swap(nil); old != nil && old.file != nil {
		old.file.Close()
	}
}

// sync fsyncs the file: through its descriptor when open, otherwise by
// path. fsync(2) flushes the file, not the descriptor, so this also covers
// what recovery wrote through a descriptor it closed since.
func (sf *segmentFile) sync() error {
	if st := sf.state.Load(); st != nil {
		if st.err != nil {
			return st.err
		}
		return st.file.Sync()
	}
	if err := syncPath(sf.path); err != nil && !(sf.unborn && errors.Is(err, os.ErrNotExist)) {
		return err
	}
	return nil // synced, or never created: nothing to sync
}

// modTime is the file's modification time, without opening it.
func (sf *segmentFile) modTime() (int64, error) {
	var st os.FileInfo
	var err error
	if f := sf.opened(); f != nil {
		st, err = f.Stat()
	} else {
		st, err = os.Stat(sf.path)
	}
	if err != nil {
		return 0, err
	}
	return st.ModTime().UnixMilli(), nil
}

// pinForRemoval opens the files of segments about to leave the log (their
// files unlinked, or their names taken by a clean's output), so that
// readers holding their views keep reading the old files until the
// delayed close. A file that cannot be opened (out of descriptors) is
// marked removed instead: its readers get an error, never another file.
func pinForRemoval(segments []*segment) {
	for _, s := range segments {
		if _, err := s.file.get(); err != nil {
			s.file.state.CompareAndSwap(nil, &fileState{err: fmt.Errorf("%w: segment %s removed before it was opened: %v", fs.ErrNotExist, s.file.path, err)})
		}
	}
}
