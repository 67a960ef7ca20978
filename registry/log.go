package registry

import (
	"context"
	"errors"
	"sync"
)

// Record is one record of the log: a key and a value, nil for a
// tombstone. Offset is set by the log.
type Record struct {
	Offset int64
	Key    []byte
	Value  []byte
}

// Log is where the registry keeps its records: the single partition of
// the _schemas topic (kafkaLog), or a MemoryLog in tests.
type Log interface {
	// EndOffset is the offset the next appended record will get, as far
	// as the log knows now (Kafka: the high watermark).
	EndOffset(ctx context.Context) (int64, error)
	// Append appends records, in order, durably (Kafka: acks=all), and
	// returns their offsets.
	Append(ctx context.Context, records ...Record) ([]int64, error)
	// Read returns records at or after offset from, waiting (at most a
	// short while) until there are some, and the offset to read next:
	// past what it returned and past any range compaction emptied.
	Read(ctx context.Context, from int64) (records []Record, next int64, err error)
	// Close releases the log's clients.
	Close() error
}

// ErrLogClosed is what a closed MemoryLog answers.
var ErrLogClosed = errors.New("registry: log closed")

// MemoryLog is the in-memory twin of the _schemas topic, for tests: one
// partition, offsets from 0, compaction on demand. Several registries may
// share one, as they share a topic.
type MemoryLog struct {
	mu      sync.Mutex
	records []Record // by offset; compaction leaves gaps
	end     int64
	closed  bool
	wake    chan struct{} // closed and replaced on every append
	// Test hooks, run unlocked: after every EndOffset, and at the start
	// of every Append.
	afterEndOffset, beforeAppend func()
}

// NewMemoryLog returns an empty log.
func NewMemoryLog() *MemoryLog { return &MemoryLog{wake: make(chan struct{})} }

// EndOffset implements Log.
func (l *MemoryLog) EndOffset(context.Context) (int64, error) {
	l.mu.Lock()
	end, closed, hook := l.end, l.closed, l.afterEndOffset
	l.mu.Unlock()
	if closed {
		return 0, ErrLogClosed
	}
	if hook != nil {
		hook()
	}
	return end, nil
}

// setHooks sets the test hooks (nil: none).
func (l *MemoryLog) setHooks(afterEndOffset, beforeAppend func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.afterEndOffset, l.beforeAppend = afterEndOffset, beforeAppend
}

// Append implements Log.
func (l *MemoryLog) Append(_ context.Context, records ...Record) ([]int64, error) {
	l.mu.Lock()
	hook := l.beforeAppend
	l.mu.Unlock()
	if hook != nil {
		hook()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrLogClosed
	}
	offsets := make([]int64, len(records))
	for i, r := range records {
		r.Offset = l.end
		r.Key, r.Value = clone(r.Key), clone(r.Value)
		l.records = append(l.records, r)
		offsets[i] = l.end
		l.end++
	}
	close(l.wake)
	l.wake = make(chan struct{})
	return offsets, nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Read implements Log.
func (l *MemoryLog) Read(ctx context.Context, from int64) ([]Record, int64, error) {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, from, ErrLogClosed
		}
		if from < l.end {
			var out []Record
			for _, r := range l.records {
				if r.Offset >= from {
					out = append(out, r)
				}
			}
			end := l.end
			l.mu.Unlock()
			return out, end, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, from, ctx.Err()
		case <-wake:
		}
	}
}

// Close implements Log.
func (l *MemoryLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.wake)
	}
	return nil
}

// Compact does what Kafka's log cleaner does to a compacted topic: keep
// only the last record of each key, and drop tombstones too when
// dropTombstones (as after delete.retention.ms). Offsets do not change.
func (l *MemoryLog) Compact(dropTombstones bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := map[string]int64{}
	for _, r := range l.records {
		last[string(r.Key)] = r.Offset
	}
	kept := l.records[:0]
	for _, r := range l.records {
		if last[string(r.Key)] != r.Offset || (dropTombstones && r.Value == nil) {
			continue
		}
		kept = append(kept, r)
	}
	l.records = kept
}

// Records returns a copy of what the log holds.
func (l *MemoryLog) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.records...)
}
