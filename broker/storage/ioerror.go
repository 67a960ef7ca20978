package storage

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrStorage marks a failure of the disk or file system under a log (an
// I/O error reading, writing, syncing or creating its files, or its
// directory gone), as opposed to a refused request: the broker takes the
// log directory offline and answers KAFKA_STORAGE_ERROR. Match it with
// errors.Is; the *IOError carries the operation and the cause.
var ErrStorage = errors.New("storage: I/O error")

// IOError is an I/O failure of a log's files.
type IOError struct {
	Op  string // append, read, flush, roll, checkpoint
	Dir string // the log directory
	Err error
}

func (e *IOError) Error() string { return "storage: " + e.Op + " " + e.Dir + ": " + e.Err.Error() }

// Unwrap lets errors.Is match ErrStorage and the cause.
func (e *IOError) Unwrap() []error { return []error{ErrStorage, e.Err} }

// ioError wraps err as an *IOError when it is a file-system failure. A
// file closed or removed under a read (retention, a clean's swap, a
// close racing the read) is not one: the data moved, the disk is fine.
// Nor is running out of file descriptors (ErrTooManyOpenFiles).
func (l *Log) ioError(op string, err error) error {
	if err == nil || errors.Is(err, ErrStorage) || errors.Is(err, ErrClosed) || errors.Is(err, ErrOffsetOutOfRange) || errors.Is(err, ErrTooManyOpenFiles) {
		return err
	}
	if op == "read" && (errors.Is(err, os.ErrClosed) || errors.Is(err, fs.ErrNotExist)) {
		return err
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var errno syscall.Errno
	if errors.As(err, &pathErr) || errors.As(err, &linkErr) || errors.As(err, &errno) {
		return &IOError{Op: op, Dir: l.dir, Err: err}
	}
	return err
}

// Append assigns offsets to already-validated batches and writes them
// (appendBatches); a file-system failure is an *IOError.
func (l *Log) Append(batches []byte, headers []BatchHeader, opts AppendOptions) (AppendResult, error) {
	res, err := l.appendBatches(batches, headers, opts)
	return res, l.ioError("append", err)
}

// Roll starts a new active segment unless the current one is empty.
func (l *Log) Roll() error { return l.ioError("roll", l.roll()) }

// MaybeRoll rolls when segment.ms has elapsed (maybeRoll).
func (l *Log) MaybeRoll() error { return l.ioError("roll", l.maybeRoll()) }

// Flush fsyncs everything written since the last flush (flush).
func (l *Log) Flush() error { return l.ioError("flush", l.flush()) }

// FlushIfDue flushes when flush.ms elapsed (flushIfDue).
func (l *Log) FlushIfDue() error { return l.ioError("flush", l.flushIfDue()) }

// Checkpoint flushes and records the recovery checkpoint (checkpoint).
func (l *Log) Checkpoint() error { return l.ioError("checkpoint", l.checkpoint()) }

// Read returns the bytes of one segment from the batch holding offset
// (read).
func (l *Log) Read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (FileChunk, error) {
	c, err := l.read(offset, maxBytes, maxOffset, minOneBatch)
	return c, l.ioError("read", err)
}
