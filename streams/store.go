package streams

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
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
// Writes of the current commit period wait in memory (dirty; reads see
// them); a commit writes them together with the new changelog offset and
// stream time in one atomic pebble batch, an abort drops them. So the
// database only ever holds committed state, and a restore replays the
// changelog from the recorded offset: after a crash, even under
// exactly-once, nothing needs wiping (the role of Kafka Streams' checkpoint
// file, made atomic with the data as KIP-892 proposes).
//
// A record's own writes wait in staged until the record succeeded, so a
// record that fails (and is skipped or dead-lettered) leaves no trace in the
// store, as it leaves none in the outputs. Committed values recently read or
// written stay in a bounded map (cache), as pebble point reads cost
// microseconds.
type store struct {
	spec      *storeSpec
	partition int32
	db        *pebble.DB
	staged    []stagedWrite     // the current record's writes
	dirty     map[string][]byte // uncommitted writes; nil deletes
	dirtySize int
	cache     map[string][]byte // committed values; nil: known absent
	cacheSize int               // bytes of cache, with cacheEntryOverhead each

	// nextOffset is the changelog offset the database reflects (from the
	// last commit or restore); streamTime the task's stream time (ms),
	// committed the value it had at the last commit.
	nextOffset          int64
	streamTime          int64
	committedStreamTime int64
	// readers counts interactive queries reading the database (query.go):
	// close waits for them.
	readers sync.WaitGroup
	// nextDue is, for a suppression buffer, a lower bound of the earliest
	// window end it holds (noStreamTime: unknown, math.MaxInt64: empty).
	nextDue int64
	// nextPurge is, for a time or sliding window store, the stream time
	// at which to look for expired windows (noStreamTime: at once).
	nextPurge int64
	// stats are the store's metrics (nil: not kept).
	stats *storeStats
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

// pendingLimit is how large a store's uncommitted writes may grow before the
// App commits early (exactly-once ends the transaction, at-least-once
// commits): it bounds memory under long commit intervals.
const pendingLimit = 64 << 20

// cacheBytes bounds a store's cache of committed values; an entry counts
// its key, its value and cacheEntryOverhead.
const (
	cacheBytes         = 16 << 20
	cacheEntryOverhead = 48
)

func openStore(spec *storeSpec, partition int32, dir string, fs vfs.FS, cache *pebble.Cache, logger *slog.Logger) (*store, error) {
	opts := &pebble.Options{Cache: cache, Logger: pebbleLogger{logger}}
	// Most reads of a windowed aggregation miss (a key's first record in
	// a window): bloom filters spare them the sstable seeks.
	opts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	if fs != nil {
		opts.FS = fs
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("streams: opening store %s partition %d: %w", spec.name, partition, err)
	}
	s := &store{spec: spec, partition: partition, db: db, streamTime: noStreamTime, nextDue: noStreamTime, nextPurge: noStreamTime,
		dirty: map[string][]byte{}, cache: map[string][]byte{}}
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
	v, closer, err := s.db.Get(key)
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
// staged writes, then the uncommitted ones, then the committed state. The
// value must not be modified.
func (s *store) get(key []byte) ([]byte, bool, error) {
	for i := len(s.staged) - 1; i >= 0; i-- {
		if string(s.staged[i].key) == string(key) {
			w := s.staged[i]
			return w.value, w.value != nil, nil
		}
	}
	if v, ok := s.dirty[string(key)]; ok {
		return v, v != nil, nil
	}
	if v, ok := s.cache[string(key)]; ok {
		return v, v != nil, nil
	}
	v, ok, err := s.getRaw(dataKey(key))
	if err == nil {
		s.remember(string(key), v)
	}
	return v, ok, err
}

// remember caches a committed value, evicting arbitrary entries (Go's map
// iteration order is random) when over budget.
func (s *store) remember(key string, value []byte) {
	if old, ok := s.cache[key]; ok {
		s.cacheSize -= len(old)
	} else {
		s.cacheSize += len(key) + cacheEntryOverhead
	}
	s.cache[key] = value
	s.cacheSize += len(value)
	if s.cacheSize <= cacheBytes {
		return
	}
	for k, v := range s.cache {
		if s.cacheSize <= cacheBytes {
			break
		}
		if k != key {
			delete(s.cache, k)
			s.cacheSize -= len(k) + len(v) + cacheEntryOverhead
		}
	}
}

// put stages key=value (value nil deletes) for the current record and
// queues its changelog record among the record's outputs.
func (s *store) put(c *procCtx, key, value []byte, ts time.Time) {
	if len(s.staged) == 0 {
		c.touched = append(c.touched, s)
	}
	key = append([]byte(nil), key...)
	if value != nil {
		value = append(make([]byte, 0, len(value)), value...)
	}
	s.staged = append(s.staged, stagedWrite{key: key, value: value})
	c.out = append(c.out, &kgo.Record{Topic: s.spec.changelog, Partition: s.partition, Key: key, Value: value, Timestamp: ts})
}

// applyStaged makes the current record's writes part of the uncommitted
// state.
func (s *store) applyStaged() {
	for _, w := range s.staged {
		s.dirty[string(w.key)] = w.value
		s.dirtySize += len(w.key) + len(w.value)
	}
	s.staged = s.staged[:0]
}

// scan calls fn for the entries with lower <= key < upper (user keys; nil
// upper: no bound), in key order, seeing uncommitted writes but not the
// current record's; fn may not keep its arguments and returns false to
// stop. It costs a pass over the uncommitted writes.
func (s *store) scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	var overlay []string
	for k := range s.dirty {
		if k >= string(lower) && (upper == nil || k < string(upper)) {
			overlay = append(overlay, k)
		}
	}
	slices.Sort(overlay)
	opts := &pebble.IterOptions{LowerBound: dataKey(lower)}
	if upper != nil {
		opts.UpperBound = dataKey(upper)
	} else {
		opts.UpperBound = []byte{dataPrefix + 1}
	}
	it, err := s.db.NewIter(opts)
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", s.spec.name, err)
	}
	defer it.Close()
	valid := it.First()
	for valid || len(overlay) > 0 {
		var (
			key, value []byte
			fromDB     bool
		)
		switch {
		case len(overlay) > 0 && (!valid || overlay[0] <= string(it.Key()[1:])):
			if valid && overlay[0] == string(it.Key()[1:]) {
				valid = it.Next() // the uncommitted write hides it
			}
			key, value = []byte(overlay[0]), s.dirty[overlay[0]]
			overlay = overlay[1:]
			if value == nil {
				continue
			}
		default:
			key, value, fromDB = it.Key()[1:], it.Value(), true
		}
		more, err := fn(key, value)
		if err != nil || !more {
			return err
		}
		if fromDB {
			valid = it.Next()
		}
	}
	return it.Error()
}

// uncommittedBytes is the size of the uncommitted batch.
func (s *store) uncommittedBytes() int { return s.dirtySize }

// commit writes the uncommitted writes with the changelog offset reached
// (next: one past the last acknowledged changelog record, or -1 when
// unknown) and the stream time, atomically.
func (s *store) commit(next int64) error {
	if len(s.dirty) == 0 && (next < 0 || next == s.nextOffset) && s.streamTime == s.committedStreamTime {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for k, v := range s.dirty {
		var err error
		if v == nil {
			err = b.Delete(dataKey([]byte(k)), nil)
		} else {
			err = b.Set(dataKey([]byte(k)), v, nil)
		}
		if err != nil {
			return err
		}
	}
	offset := max(s.nextOffset, next)
	if err := b.Set(metaOffset, binary.BigEndian.AppendUint64(nil, uint64(offset)), nil); err != nil {
		return err
	}
	if err := b.Set(metaStreamTime, binary.BigEndian.AppendUint64(nil, uint64(s.streamTime)), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("streams: committing store %s partition %d: %w", s.spec.name, s.partition, err)
	}
	for k, v := range s.dirty {
		s.remember(k, v)
	}
	clear(s.dirty)
	s.dirtySize = 0
	s.nextOffset = offset
	s.committedStreamTime = s.streamTime
	return nil
}

// noteSize refreshes the store's size metric, if kept: pebble's disk
// space use, with the live WAL at its logical size (pebble reports the
// current WAL's physical size as of its creation).
func (s *store) noteSize() {
	if s.stats == nil {
		return
	}
	m := s.db.Metrics()
	size := m.DiskSpaceUsage()
	if m.WAL.Size > m.WAL.PhysicalSize {
		size += m.WAL.Size - m.WAL.PhysicalSize
	}
	s.stats.sizeBytes.Store(int64(size))
}

// noteRestoreRemaining sets how many changelog offsets the store has
// still to restore, if its metrics are kept.
func (s *store) noteRestoreRemaining(n int64) {
	if s.stats != nil {
		s.stats.restoreRemaining.Store(max(n, 0))
	}
}

// abort drops every uncommitted write.
func (s *store) abort() {
	clear(s.dirty)
	s.dirtySize = 0
	s.staged = s.staged[:0]
	s.streamTime = s.committedStreamTime
	s.nextDue = noStreamTime
	s.nextPurge = noStreamTime
}

// close drops uncommitted writes and closes the database.
func (s *store) close() error {
	s.abort()
	return s.db.Close()
}

// putRecord writes a table or changelog record's key and value to b; a nil
// value (a tombstone) deletes the key.
func putRecord(b *pebble.Batch, r *kgo.Record) error {
	if r.Value == nil {
		return b.Delete(dataKey(r.Key), nil)
	}
	return b.Set(dataKey(r.Key), r.Value, nil)
}

// restoreBatch applies changelog records read during a restore: each
// record's key and value (nil deletes), then the offset after the last one
// and the stream time (the largest record timestamp seen).
func (s *store) restoreBatch(recs []*kgo.Record, next int64) error {
	clear(s.cache)
	s.cacheSize = 0
	b := s.db.NewBatch()
	defer b.Close()
	streamTime := s.streamTime
	for _, r := range recs {
		if err := putRecord(b, r); err != nil {
			return err
		}
		streamTime = max(streamTime, r.Timestamp.UnixMilli())
	}
	if err := b.Set(metaOffset, binary.BigEndian.AppendUint64(nil, uint64(next)), nil); err != nil {
		return err
	}
	if err := b.Set(metaStreamTime, binary.BigEndian.AppendUint64(nil, uint64(streamTime)), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err // the offsets stay where the database is
	}
	s.nextOffset, s.streamTime, s.committedStreamTime = next, streamTime, streamTime
	return nil
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
