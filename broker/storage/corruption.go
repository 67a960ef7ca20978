package storage

import (
	"errors"
	"fmt"
)

// ErrCorruption marks an error about data (a segment, index, checkpoint,
// record batch or remote object) that is not in the expected format, as
// pebble's base.ErrCorruption does: errors.Is(err, ErrCorruption) holds for
// every corruption error of this package, whichever sentinel it carries
// (ErrCorruptBatch, ErrCorruptLog, ErrCorruptRemoteData, or one made by
// CorruptionErrorf).
//
// Packages that may not import storage keep their own sentinels:
// groups.ErrCorruptRecord and txn.ErrCorruptRecord (pure packages, see
// their purity tests), wal.ErrCorrupt and cluster.ErrMalformed (metadata),
// tiering.ErrInvalidManifest (tiering). The broker only logs those (it
// skips an undecodable group or transaction record when it replays).
var ErrCorruption = errors.New("strata: corruption")

// CorruptionErrorf formats like fmt.Errorf (%w included) and marks the
// result as corruption. The mark does not change the message: the error
// matches ErrCorruption and whatever format wraps, and reads exactly as
// fmt.Errorf(format, args...) would.
func CorruptionErrorf(format string, args ...any) error {
	return &corruptionError{err: fmt.Errorf(format, args...)}
}

// corruptionError is an error marked as corruption (errors.Mark without
// cockroachdb/errors). Each one is a distinct pointer, so a sentinel made
// by CorruptionErrorf matches only itself under errors.Is.
type corruptionError struct{ err error }

func (e *corruptionError) Error() string   { return e.err.Error() }
func (e *corruptionError) Unwrap() []error { return []error{e.err, ErrCorruption} }
