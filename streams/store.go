package streams

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A store is one state store of one task (one partition of the store's
// input topic): a pebble database in its own directory. Its layout:
//
//	0x00 "offset"       → 8 bytes BE: the changelog offset the data reflects (exclusive)
//	0x00 "stream-time"  → 8 bytes BE: the task's stream time in Unix ms
//	0x01 <key>          → <value>          (the store's entries)
//
// Writes of the current commit period wait in an indexed batch over the
// database (reads see them); a commit applies the batch together with the
// new changelog offset and stream time in one atomic pebble write, an abort
// drops it. So the database only ever holds committed state, and a restore
// replays the changelog from the recorded offset: after a crash, even under
// exactly-once, nothing needs wiping (the role of Kafka Streams' checkpoint
// file, made atomic with the data as KIP-892 proposes).
//
// A record's own writes wait in staged until the record succeeded, so a
// record that fails (and is skipped or dead-lettered) leaves no trace in the
// store, as it leaves none in the outputs.
type store struct {
	spec      *storeSpec
	partition int32
	db        *pebble.DB
	pending   *pebble.Batch // nil when there is nothing uncommitted
	staged    []stagedWrite // the current record's writes

	// nextOffset is the changelog offset the database reflects (from the
	// last commit or restore); streamTime the task's stream time (ms),
	// committed the value it had at the last commit.
	nextOffset          int64
	streamTime          int64
	committedStreamTime int64
}

type stagedWrite struct {
	key, value []byte // value nil: delete
}

var (
	metaOffset     = []byte("\x00offset")
	metaStreamTime = []byte("\x00stream-time")
)

const dataPrefix = 0x01

// noStreamTime is the stream time of a task that has seen no record.
const noStreamTime = -1 << 63

// pendingLimit is how large a store's uncommitted batch may grow before the
// App commits early (exactly-once ends the transaction, at-least-once
// commits): it bounds memory under long commit intervals.
const pendingLimit = 64 << 20

func openStore(spec *storeSpec, partition int32, dir string, fs vfs.FS, cache *pebble.Cache, logger *slog.Logger) (*store, error) {
	opts := &pebble.Options{Cache: cache, Logger: pebbleLogger{logger}}
	if fs != nil {
		opts.FS = fs
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("streams: opening store %s partition %d: %w", spec.name, partition, err)
	}
	s := &store{spec: spec, partition: partition, db: db, streamTime: noStreamTime}
	if v, ok, err := s.getRaw(metaOffset); err != nil {
		db.Close()
		return nil, err
	} else if ok && len(v) == 8 {
		s.nextOffset = int64(binary.BigEndian.Uint64(v))
	}
	if v, ok, err := s.getRaw(metaStreamTime); err != nil {
		db.Close()
		return nil, err
	} else if ok && len(v) == 8 {
		s.streamTime = int64(binary.BigEndian.Uint64(v))
	}
	s.committedStreamTime = s.streamTime
	return s, nil
}

func (s *store) getRaw(key []byte) ([]byte, bool, error) {
	var (
		v      []byte
		closer interface{ Close() error }
		err    error
	)
	if s.pending != nil {
		v, closer, err = s.pending.Get(key)
	} else {
		v, closer, err = s.db.Get(key)
	}
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("streams: store %s: %w", s.spec.name, err)
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true, nil
}

func dataKey(key []byte) []byte {
	return append([]byte{dataPrefix}, key...)
}

// get returns the value of key as the current record sees it: its own
// staged writes, then the uncommitted batch, then the database.
func (s *store) get(key []byte) ([]byte, bool, error) {
	for i := len(s.staged) - 1; i >= 0; i-- {
		if string(s.staged[i].key) == string(key) {
			w := s.staged[i]
			return w.value, w.value != nil, nil
		}
	}
	return s.getRaw(dataKey(key))
}

// put stages key=value (value nil deletes) for the current record and
// queues its changelog record among the record's outputs.
func (s *store) put(c *procCtx, key, value []byte, ts time.Time) {
	if len(s.staged) == 0 {
		c.touched = append(c.touched, s)
	}
	key = append([]byte(nil), key...)
	if value != nil {
		value = append([]byte(nil), value...)
	}
	s.staged = append(s.staged, stagedWrite{key: key, value: value})
	c.out = append(c.out, &kgo.Record{Topic: s.spec.changelog, Partition: s.partition, Key: key, Value: value, Timestamp: ts})
}

// applyStaged moves the current record's writes into the uncommitted batch.
func (s *store) applyStaged() error {
	if s.pending == nil {
		s.pending = s.db.NewIndexedBatch()
	}
	for _, w := range s.staged {
		var err error
		if w.value == nil {
			err = s.pending.Delete(dataKey(w.key), nil)
		} else {
			err = s.pending.Set(dataKey(w.key), w.value, nil)
		}
		if err != nil {
			return fmt.Errorf("streams: store %s: %w", s.spec.name, err)
		}
	}
	s.staged = s.staged[:0]
	return nil
}

// scan calls fn for the entries with lower <= key < upper (user keys), in
// key order, seeing uncommitted writes; fn may not keep its arguments.
// Staged writes of the current record are not seen.
func (s *store) scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	opts := &pebble.IterOptions{LowerBound: dataKey(lower), UpperBound: dataKey(upper)}
	var (
		it  *pebble.Iterator
		err error
	)
	if s.pending != nil {
		it, err = s.pending.NewIter(opts)
	} else {
		it, err = s.db.NewIter(opts)
	}
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", s.spec.name, err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		more, ferr := fn(it.Key()[1:], it.Value())
		if ferr != nil || !more {
			it.Close()
			return ferr
		}
	}
	return it.Close()
}

// uncommittedBytes is the size of the uncommitted batch.
func (s *store) uncommittedBytes() int {
	if s.pending == nil {
		return 0
	}
	return s.pending.Len()
}

// commit writes the uncommitted batch with the changelog offset reached
// (next: one past the last acknowledged changelog record, or -1 when
// unknown) and the stream time, atomically.
func (s *store) commit(next int64) error {
	if s.pending == nil && (next < 0 || next == s.nextOffset) && s.streamTime == s.committedStreamTime {
		return nil
	}
	b := s.pending
	if b == nil {
		b = s.db.NewBatch()
	}
	if next > s.nextOffset {
		s.nextOffset = next
	}
	if err := b.Set(metaOffset, binary.BigEndian.AppendUint64(nil, uint64(s.nextOffset)), nil); err != nil {
		return err
	}
	if err := b.Set(metaStreamTime, binary.BigEndian.AppendUint64(nil, uint64(s.streamTime)), nil); err != nil {
		return err
	}
	err := b.Commit(pebble.NoSync)
	b.Close()
	s.pending = nil
	if err != nil {
		return fmt.Errorf("streams: committing store %s partition %d: %w", s.spec.name, s.partition, err)
	}
	s.committedStreamTime = s.streamTime
	return nil
}

// abort drops every uncommitted write.
func (s *store) abort() {
	if s.pending != nil {
		s.pending.Close()
		s.pending = nil
	}
	s.staged = s.staged[:0]
	s.streamTime = s.committedStreamTime
}

// close drops uncommitted writes and closes the database.
func (s *store) close() error {
	s.abort()
	return s.db.Close()
}

// restoreBatch applies changelog records read during a restore: each
// record's key and value (nil deletes), then the offset after the last one
// and the stream time (the largest record timestamp seen).
func (s *store) restoreBatch(recs []*kgo.Record, next int64) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range recs {
		var err error
		if r.Value == nil {
			err = b.Delete(dataKey(r.Key), nil)
		} else {
			err = b.Set(dataKey(r.Key), r.Value, nil)
		}
		if err != nil {
			return err
		}
		if ms := r.Timestamp.UnixMilli(); ms > s.streamTime {
			s.streamTime = ms
		}
	}
	s.nextOffset = next
	s.committedStreamTime = s.streamTime
	if err := b.Set(metaOffset, binary.BigEndian.AppendUint64(nil, uint64(next)), nil); err != nil {
		return err
	}
	if err := b.Set(metaStreamTime, binary.BigEndian.AppendUint64(nil, uint64(s.streamTime)), nil); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// pebbleLogger sends pebble's messages to the App's logger.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
