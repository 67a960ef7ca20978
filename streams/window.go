package streams

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Windows are time windows over record timestamps (event time): tumbling
// (size = advance) or hopping (advance < size), aligned to the Unix epoch.
// A window [start, end) accepts records while the task's stream time (the
// largest record timestamp the aggregation has seen in that partition) is
// below end + grace; a later record is dropped and counted
// (Stats.LateDropped, strata_stream_late_dropped_total), once per window
// it missed.
type Windows struct {
	size, advance, grace int64 // ms
	sliding              bool  // SlidingWindows (advance unused)
}

// SlidingWindows are Kafka Streams' sliding windows (KIP-450): windows
// [start, start + timeDifference], both ends inclusive, defined by the
// records rather than aligned to the epoch. Each record at t has its left
// window [t − timeDifference, t] and, when a later record falls within
// timeDifference + 1 ms of it, its right window [t + 1, t + 1 +
// timeDifference]; every window holding a record exists and no other
// does, so each distinct set of records a timeDifference-wide interval can
// hold is aggregated once. A record updates every existing window that
// contains it. As ends are inclusive, a window closes once its end <
// stream time − grace (with no grace, a record at stream time still gets
// its left window); a record all of whose windows are closed is dropped
// and counted. Unlike
// Kafka Streams, records earlier than timeDifference after the epoch get
// windows with negative starts instead of one combined [0,
// timeDifference] window. No grace unless Grace sets one.
func SlidingWindows(timeDifference time.Duration) Windows {
	return Windows{size: timeDifference.Milliseconds(), advance: timeDifference.Milliseconds(), sliding: true}
}

// TumblingWindows are adjacent windows of size, with no grace.
func TumblingWindows(size time.Duration) Windows {
	return Windows{size: size.Milliseconds(), advance: size.Milliseconds()}
}

// HoppingWindows are windows of size starting every advance (a record
// falls into size/advance windows), with no grace.
func HoppingWindows(size, advance time.Duration) Windows {
	return Windows{size: size.Milliseconds(), advance: advance.Milliseconds()}
}

// Grace lets records arrive up to d after their window's end (in stream
// time) and still count.
func (w Windows) Grace(d time.Duration) Windows {
	w.grace = d.Milliseconds()
	return w
}

func (w Windows) validate() error {
	if w.size <= 0 || w.advance <= 0 || w.advance > w.size || w.grace < 0 {
		return fmt.Errorf("%w: windows need size >= advance > 0 (ms) and grace >= 0, have size %d advance %d grace %d",
			ErrTopology, w.size, w.advance, w.grace)
	}
	return nil
}

// starts calls fn with the start of every window containing ts, earliest
// first.
func (w Windows) starts(ts int64, fn func(start int64) error) error {
	first := ts - w.size + w.advance
	if first < 0 {
		first = 0
	}
	first -= first % w.advance
	for start := first; start <= ts; start += w.advance {
		if start+w.size > ts {
			if err := fn(start); err != nil {
				return err
			}
		}
	}
	return nil
}

// Windowed is a key of a windowed aggregation: the grouping key and the
// window [Start, End).
type Windowed[K any] struct {
	Key        K
	Start, End time.Time
}

// WindowedSerde encodes a windowed key as the key's bytes followed by the
// window start and end, each 8 bytes big-endian Unix milliseconds.
func WindowedSerde[K any](keys Serde[K]) Serde[Windowed[K]] { return windowedSerde[K]{keys} }

type windowedSerde[K any] struct{ keys Serde[K] }

func (s windowedSerde[K]) Encode(w Windowed[K]) ([]byte, error) {
	kb, err := s.keys.Encode(w.Key)
	if err != nil {
		return nil, err
	}
	b := binary.BigEndian.AppendUint64(kb, uint64(w.Start.UnixMilli()))
	return binary.BigEndian.AppendUint64(b, uint64(w.End.UnixMilli())), nil
}

func (s windowedSerde[K]) Decode(b []byte) (Windowed[K], error) {
	var w Windowed[K]
	if len(b) < 16 {
		return w, fmt.Errorf("streams: windowed key of %d bytes, want at least 16", len(b))
	}
	k, err := s.keys.Decode(b[:len(b)-16])
	if err != nil {
		return w, err
	}
	w.Key = k
	w.Start = time.UnixMilli(int64(binary.BigEndian.Uint64(b[len(b)-16:])))
	w.End = time.UnixMilli(int64(binary.BigEndian.Uint64(b[len(b)-8:])))
	return w, nil
}

// WindowedGroup is a grouped stream cut into windows; aggregate it with
// Count, Reduce or AggregateWindows.
type WindowedGroup[K, V any] struct {
	g Grouped[K, V]
	w Windows
}

// minRetention is the shortest Retention of the windows' store: size +
// grace (Kafka Streams' default retention), and for sliding windows one
// more size, because a new record's left window takes its aggregate from
// a window ending up to 2 × size before stream time − grace.
func (w Windows) minRetention() int64 {
	if w.sliding {
		return 2*w.size + w.grace
	}
	return w.size + w.grace
}

// WindowedBy cuts each key's records into windows. (A function, not a
// method of Grouped: Go rejects the instantiation cycle Grouped[K] →
// Table[Windowed[K]] → Grouped[Windowed[K]] that a method would create.)
func WindowedBy[K, V any](g Grouped[K, V], w Windows) WindowedGroup[K, V] {
	if err := w.validate(); err != nil {
		g.s.top.fail(err)
	}
	return WindowedGroup[K, V]{g: g, w: w}
}

// Count counts each key's records per window.
func (wg WindowedGroup[K, V]) Count(opts ...OpOpt) Table[Windowed[K], int64] {
	return windowAggregate(wg, "count", countFold[K, V], Int64, opts)
}

// Reduce combines each key's values per window with fn.
func (wg WindowedGroup[K, V]) Reduce(fn func(agg, value V) (V, error), opts ...OpOpt) Table[Windowed[K], V] {
	return windowAggregate(wg, "reduce", reduceFold[K](fn), wg.g.values, opts)
}

// AggregateWindows folds each key's values per window into an aggregate
// of type A, starting from init().
func AggregateWindows[K, V, A any](wg WindowedGroup[K, V], init func() A, add func(key K, value V, agg A) (A, error), aggs Serde[A], opts ...OpOpt) Table[Windowed[K], A] {
	return windowAggregate(wg, "aggregate", aggregateFold(init, add), aggs, opts)
}

// windowAgg is a windowed aggregation's state: its window store (keys:
// key bytes + 8-byte start) and, once Suppress asked for final results, a
// buffer store of the windows not yet emitted (keys: 8-byte end + 8-byte
// start + key bytes, ordered by end; values: 8-byte timestamp of the last
// update) and the node final results go to.
type windowAgg struct {
	// size and retention (ms) of time and sliding windows: their store
	// drops windows with end + retention < stream time (purge).
	size, retention int64
	spec            *storeSpec
	buffer          *storeSpec
	final           any // *node[Windowed[K], A]: where final results go
	emit            func(c *procCtx, key []byte, start, end, ts int64, agg []byte) error
	// take removes a due window (by its buffer key's fields) from the
	// store and returns its aggregate and end.
	take func(c *procCtx, st *store, kb []byte, start, due int64, ts time.Time) (agg []byte, end int64, ok bool, err error)
}

// newWindowAgg starts a windowed aggregation's state and the emission of
// its final results (decoded with keys and aggs, sent to final).
func newWindowAgg[K, A any](top *Topology, name string, src *source, keys Serde[K], aggs Serde[A]) (*windowAgg, *node[Windowed[K], A]) {
	wa := &windowAgg{spec: top.addStore(name, src)}
	final := &node[Windowed[K], A]{}
	wa.final = final
	wa.emit = func(c *procCtx, kb []byte, start, end, ts int64, aggBytes []byte) error {
		k, err := keys.Decode(kb)
		if err != nil {
			return &StageError{Stage: wa.buffer.name, Kind: KindDeserialize, Err: fmt.Errorf("stored key: %w", err)}
		}
		agg, err := aggs.Decode(aggBytes)
		if err != nil {
			return &StageError{Stage: wa.buffer.name, Kind: KindDeserialize, Err: fmt.Errorf("stored aggregate: %w", err)}
		}
		return final.emit(c, Record[Windowed[K], A]{
			Key:       Windowed[K]{Key: k, Start: time.UnixMilli(start), End: time.UnixMilli(end)},
			Value:     agg,
			Timestamp: time.UnixMilli(ts),
		})
	}
	return wa, final
}

// buffered notes a window's latest update in the suppression buffer (if
// any): due is when it closes.
func (wa *windowAgg) buffered(c *procCtx, kb []byte, start, due int64, r time.Time) {
	if wa.buffer == nil {
		return
	}
	buf := c.store(wa.buffer)
	buf.put(c, bufferKey(kb, start, due), appendTime(nil, r.UnixMilli()), r)
	buf.nextDue = min(buf.nextDue, due)
}

func windowAggregate[K, V, A any](wg WindowedGroup[K, V], kind string, f fold[K, V, A], aggs Serde[A], opts []OpOpt) Table[Windowed[K], A] {
	g := wg.g
	top := g.s.top
	name := top.name("windowed-"+kind, opts)
	wa, _ := newWindowAgg(top, name, g.s.src, g.keys, aggs)
	w := wg.w
	wa.size, wa.retention = w.size, w.minRetention()
	if r := retentionOf(opts); r != 0 && r < wa.retention {
		top.fail(fmt.Errorf("%w: %s: Retention %v is shorter than its windows need (size + grace, sliding 2 × size + grace: %v)",
			ErrTopology, name, time.Duration(r)*time.Millisecond, time.Duration(wa.retention)*time.Millisecond))
	} else if r != 0 {
		wa.retention = r
	}
	wa.spec.query = newQueryCodec(g.keys, aggs, w.size)
	out := &node[Windowed[K], A]{}
	if w.sliding {
		slidingAggregate(g, w, name, wa, f, aggs, out)
		return Table[Windowed[K], A]{top: top, node: out, src: g.s.src, name: name, win: wa}
	}
	wa.take = func(c *procCtx, st *store, kb []byte, start, due int64, ts time.Time) ([]byte, int64, bool, error) {
		winKey := windowKey(kb, start)
		agg, ok, err := st.get(winKey)
		if ok {
			st.put(c, winKey, nil, ts)
		}
		return agg, due, ok, err
	}
	g.s.node.children = append(g.s.node.children, func(c *procCtx, r Record[K, V]) error {
		st, kb, err := storeAndKey(c, wa.spec, g.keys, r.Key)
		if err != nil {
			return err
		}
		ts := r.Timestamp.UnixMilli()
		closed, err := wa.advance(c, st, ts, w.grace)
		if err != nil {
			return err
		}
		return w.starts(ts, func(start int64) error {
			end := start + w.size
			if end <= closed {
				c.dropLate()
				return nil
			}
			agg, err := update(c, st, name, windowKey(kb, start), r, f, aggs)
			if err != nil {
				return err
			}
			wa.buffered(c, kb, start, end, r.Timestamp)
			return out.emit(c, carry(r, Windowed[K]{Key: r.Key, Start: time.UnixMilli(start), End: time.UnixMilli(end)}, agg))
		})
	})
	return Table[Windowed[K], A]{top: top, node: out, src: g.s.src, name: name, win: wa}
}

// maxPurgePerRecord bounds the tombstones one record's purge writes: after
// a restore or a long gap in stream time a large store may hold many
// expired windows, and they all would go into one record's outputs (and
// one transaction) at once.
const maxPurgePerRecord = 10_000

// purge deletes the windows of a time or sliding window store that ended
// more than the retention before stream time (end + retention < stream
// time), writing tombstones to the changelog. Such windows are closed, so
// a late record for one is dropped, never re-created. It scans the whole
// store, at most once per half retention of stream time and only once the
// earliest window left has expired: windows go at most retention/2 after
// they expire. One record deletes at most maxPurgePerRecord windows; the
// records after it go on.
func (wa *windowAgg) purge(c *procCtx, st *store) error {
	if st.nextPurge != noStreamTime && st.streamTime < st.nextPurge {
		return nil
	}
	horizon := st.streamTime - wa.retention
	var expired [][]byte
	earliest := int64(math.MaxInt64)
	err := st.scan(nil, nil, func(k, _ []byte) (bool, error) {
		if len(k) < 8 {
			return true, nil
		}
		if end := readTime(k[len(k)-8:]) + wa.size; end < horizon {
			expired = append(expired, append([]byte(nil), k...))
		} else {
			earliest = min(earliest, end)
		}
		return len(expired) < maxPurgePerRecord, nil
	})
	if err != nil {
		return &StageError{Stage: wa.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
	}
	for _, k := range expired {
		st.put(c, k, nil, time.UnixMilli(st.streamTime))
	}
	if len(expired) == maxPurgePerRecord {
		return nil // more to purge: the next record goes on
	}
	st.nextPurge = st.streamTime + max(wa.retention/2, 1)
	if earliest != math.MaxInt64 {
		st.nextPurge = max(st.nextPurge, earliest+wa.retention+1)
	}
	return nil
}

// unbuffer removes a window that a record merged away from the
// suppression buffer (if any).
func (wa *windowAgg) unbuffer(c *procCtx, kb []byte, start, due int64, r time.Time) {
	if wa.buffer != nil {
		c.store(wa.buffer).put(c, bufferKey(kb, start, due), nil, r)
	}
}

// advance moves the task's stream time to a record's timestamp ts and
// returns the time at or before which windows are closed; with Suppress it
// first emits the windows that closed (before the record's updates, which
// only touch open windows), then (time and sliding windows) it purges
// windows past their retention.
func (wa *windowAgg) advance(c *procCtx, st *store, ts, grace int64) (closed int64, err error) {
	st.streamTime = max(st.streamTime, ts)
	closed = st.streamTime - grace
	c.punctuate(st.streamTime)
	if wa.buffer != nil {
		if err = wa.emitClosed(c, st, closed); err != nil {
			return closed, err
		}
	}
	if wa.size > 0 {
		err = wa.purge(c, st)
	}
	return closed, err
}

// emitClosed emits the final result of every buffered window that ended at
// or before closed, in end order, and forgets the window. It sees committed
// and uncommitted buffer entries, not the current record's.
func (wa *windowAgg) emitClosed(c *procCtx, st *store, closed int64) error {
	buf := c.store(wa.buffer)
	if buf == nil {
		return fmt.Errorf("%w: store %s is not open", ErrRetriable, wa.buffer.name)
	}
	if buf.nextDue != noStreamTime && closed < buf.nextDue {
		return nil // nothing due: no scan
	}
	type due struct {
		bufKey []byte
		ts     int64
	}
	var dues []due
	buf.nextDue = math.MaxInt64
	err := buf.scan(nil, nil, func(k, v []byte) (bool, error) {
		if end := readTime(k); end > closed {
			buf.nextDue = end
			return false, nil
		}
		dues = append(dues, due{bufKey: append([]byte(nil), k...), ts: readTime(v)})
		return true, nil
	})
	if err != nil {
		return &StageError{Stage: wa.buffer.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
	}
	for _, d := range dues {
		due, start, kb := readTime(d.bufKey), readTime(d.bufKey[8:]), d.bufKey[16:]
		agg, end, ok, err := wa.take(c, st, kb, start, due, time.UnixMilli(d.ts))
		if err != nil {
			return &StageError{Stage: wa.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
		}
		buf.put(c, d.bufKey, nil, time.UnixMilli(d.ts))
		if !ok {
			continue
		}
		if err := wa.emit(c, kb, start, end, d.ts, agg); err != nil {
			return err
		}
	}
	return nil
}

// Suppressed says when a suppressed table emits.
type Suppressed struct{ untilWindowCloses bool }

// UntilWindowCloses emits one final result per window, once stream time
// has passed the window's end plus grace (Kafka Streams'
// Suppressed.untilWindowCloses with an unbounded buffer, held in a
// changelogged store).
func UntilWindowCloses() Suppressed { return Suppressed{untilWindowCloses: true} }

// Suppress returns a table that holds back a windowed table's updates and
// emits only each window's final aggregate (see UntilWindowCloses); the
// window is then removed from the store. Only windowed tables (from
// WindowedBy) can be suppressed, and only once.
func (t Table[K, V]) Suppress(s Suppressed) Table[K, V] {
	switch {
	case t.win == nil:
		t.top.fail(fmt.Errorf("%w: Suppress needs a windowed table", ErrTopology))
		return t
	case t.win.buffer != nil:
		t.top.fail(fmt.Errorf("%w: table %s is suppressed twice", ErrTopology, t.name))
		return t
	case !s.untilWindowCloses:
		t.top.fail(fmt.Errorf("%w: Suppress needs UntilWindowCloses", ErrTopology))
		return t
	}
	wa := t.win
	wa.buffer = t.top.addStore(t.name+"-suppress", wa.spec.input)
	return Table[K, V]{top: t.top, node: wa.final.(*node[K, V]), src: t.src, name: wa.buffer.name, win: wa}
}

// appendTime appends ms as 8 bytes that sort like the signed value.
func appendTime(b []byte, ms int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(ms)^(1<<63))
}

func readTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// windowKey is a window store key: the key's bytes and the window start.
func windowKey(kb []byte, start int64) []byte {
	return appendTime(append(make([]byte, 0, len(kb)+8), kb...), start)
}

func bufferKey(kb []byte, start, end int64) []byte {
	b := make([]byte, 0, 16+len(kb))
	return append(appendTime(appendTime(b, end), start), kb...)
}
