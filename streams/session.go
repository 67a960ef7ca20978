package streams

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Sessions are session windows: a key's records closer than gap to each
// other (in event time) form one session [first timestamp, last timestamp];
// a record within gap of two sessions merges them. A session is final once
// stream time has passed its end + gap + grace (Kafka Streams' close time
// for sessions); a record whose session would end before stream time −
// gap − grace is dropped and counted (Stats.LateDropped).
type Sessions struct{ gap, grace int64 }

// SessionWindows are sessions separated by inactivity of gap, with no
// grace.
func SessionWindows(gap time.Duration) Sessions { return Sessions{gap: gap.Milliseconds()} }

// Grace lets records arrive up to d late (in stream time) and still join
// or extend a session.
func (s Sessions) Grace(d time.Duration) Sessions {
	s.grace = d.Milliseconds()
	return s
}

// SessionGroup is a grouped stream cut into sessions; aggregate it with
// Count, Reduce or AggregateSessions.
type SessionGroup[K, V any] struct {
	g Grouped[K, V]
	s Sessions
}

// SessionWindowedBy cuts each key's records into sessions. The resulting
// tables have keys Windowed[K] whose End is the session's last timestamp
// (inclusive, as in Kafka Streams). When sessions merge, only the merged
// session is emitted (Kafka Streams also emits a tombstone for each merged
// one; a typed Table has no null value for it).
func SessionWindowedBy[K, V any](g Grouped[K, V], s Sessions) SessionGroup[K, V] {
	if s.gap <= 0 || s.grace < 0 {
		g.s.top.fail(fmt.Errorf("%w: sessions need a gap > 0 and grace >= 0 (ms), have %d and %d", ErrTopology, s.gap, s.grace))
	}
	return SessionGroup[K, V]{g: g, s: s}
}

// Count counts each key's records per session.
func (sg SessionGroup[K, V]) Count(opts ...OpOpt) Table[Windowed[K], int64] {
	return sessionAggregate(sg, "count", countFold[K, V], func(_ K, a, b int64) (int64, error) { return a + b, nil }, Int64, opts)
}

// Reduce combines each key's values per session with fn, which also merges
// the aggregates of sessions a record joins.
func (sg SessionGroup[K, V]) Reduce(fn func(agg, value V) (V, error), opts ...OpOpt) Table[Windowed[K], V] {
	return sessionAggregate(sg, "reduce", reduceFold[K](fn), func(_ K, a, b V) (V, error) { return fn(a, b) }, sg.g.values, opts)
}

// AggregateSessions folds each key's values per session into an aggregate
// of type A, starting from init(); merge combines the aggregates of two
// sessions a record joins (Kafka Streams' Merger).
func AggregateSessions[K, V, A any](sg SessionGroup[K, V], init func() A, add func(key K, value V, agg A) (A, error), merge func(key K, a, b A) (A, error), aggs Serde[A], opts ...OpOpt) Table[Windowed[K], A] {
	return sessionAggregate(sg, "aggregate", aggregateFold(init, add), merge, aggs, opts)
}

// A session store holds one entry per key: the key's open sessions, each
// 8-byte start, 8-byte end, uvarint aggregate length and aggregate. The
// suppression buffer keys a session by its start and the time it is due
// (end + gap + 1 ms), so a later record extending it moves its entry.
type session struct {
	start, end int64
	agg        []byte
}

func decodeSessions(b []byte) ([]session, error) {
	var out []session
	for len(b) > 0 {
		if len(b) < 16 {
			return nil, fmt.Errorf("streams: session list truncated")
		}
		s := session{start: readTime(b), end: readTime(b[8:])}
		n, w := binary.Uvarint(b[16:])
		if w <= 0 || uint64(len(b)-16-w) < n {
			return nil, fmt.Errorf("streams: session list corrupt")
		}
		s.agg = b[16+w : 16+w+int(n)]
		out = append(out, s)
		b = b[16+w+int(n):]
	}
	return out, nil
}

func encodeSessions(ss []session) []byte {
	var b []byte
	for _, s := range ss {
		b = appendTime(appendTime(b, s.start), s.end)
		b = binary.AppendUvarint(b, uint64(len(s.agg)))
		b = append(b, s.agg...)
	}
	return b
}

func sessionAggregate[K, V, A any](sg SessionGroup[K, V], kind string, f fold[K, V, A], merge func(K, A, A) (A, error), aggs Serde[A], opts []OpOpt) Table[Windowed[K], A] {
	g, gap, grace := sg.g, sg.s.gap, sg.s.grace
	top := g.s.top
	name := top.name("session-"+kind, opts)
	wa, _ := newWindowAgg(top, name, g.s.src, g.keys, aggs)
	stageErr := func(kind Kind, err error) error {
		if kind == KindOperator {
			err = fmt.Errorf("%w: %w", ErrRetriable, err)
		}
		return &StageError{Stage: name, Kind: kind, Err: err}
	}
	load := func(st *store, kb []byte) ([]session, error) {
		b, _, err := st.get(kb)
		if err != nil {
			return nil, stageErr(KindOperator, err)
		}
		ss, err := decodeSessions(b)
		if err != nil {
			return nil, stageErr(KindDeserialize, err)
		}
		return ss, nil
	}
	save := func(c *procCtx, st *store, kb []byte, ss []session, ts time.Time) {
		if len(ss) == 0 {
			st.put(c, kb, nil, ts)
			return
		}
		st.put(c, kb, encodeSessions(ss), ts)
	}
	wa.take = func(c *procCtx, st *store, kb []byte, start, due int64, ts time.Time) ([]byte, int64, bool, error) {
		ss, err := load(st, kb)
		if err != nil {
			return nil, 0, false, err
		}
		for i, s := range ss {
			if s.start == start && s.end+gap+1 == due {
				save(c, st, kb, append(ss[:i:i], ss[i+1:]...), ts)
				return s.agg, s.end, true, nil
			}
		}
		return nil, 0, false, nil
	}
	out := &node[Windowed[K], A]{}
	g.s.node.children = append(g.s.node.children, func(c *procCtx, r Record[K, V]) error {
		st, kb, err := storeAndKey(c, wa.spec, g.keys, r.Key)
		if err != nil {
			return err
		}
		ts := r.Timestamp.UnixMilli()
		closed, err := wa.advance(c, st, ts, grace)
		if err != nil {
			return err
		}
		ss, err := load(st, kb)
		if err != nil {
			return err
		}
		merged := session{start: ts, end: ts}
		var overlap, keep []session
		for _, s := range ss {
			switch {
			case s.end+gap < closed && wa.buffer == nil:
				// No record can join it any more and no
				// suppression will emit it: forget it.
			case s.end >= ts-gap && s.start <= ts+gap:
				merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
				overlap = append(overlap, s)
			default:
				keep = append(keep, s)
			}
		}
		if merged.end+gap < closed {
			// It could only have joined sessions already final.
			c.dropLate()
			return nil
		}
		var (
			agg    A
			exists bool
		)
		for _, s := range overlap {
			a, err := aggs.Decode(s.agg)
			if err != nil {
				return stageErr(KindDeserialize, fmt.Errorf("stored aggregate: %w", err))
			}
			if !exists {
				agg, exists = a, true
			} else if agg, err = merge(r.Key, agg, a); err != nil {
				return opErr(name, err)
			}
			wa.unbuffer(c, kb, s.start, s.end+gap+1, r.Timestamp)
		}
		if agg, err = f(r.Key, r.Value, agg, exists); err != nil {
			return opErr(name, err)
		}
		if merged.agg, err = aggs.Encode(agg); err != nil {
			return stageErr(KindSerialize, fmt.Errorf("aggregate: %w", err))
		}
		save(c, st, kb, append(keep, merged), r.Timestamp)
		wa.buffered(c, kb, merged.start, merged.end+gap+1, r.Timestamp)
		return out.emit(c, carry(r, Windowed[K]{Key: r.Key, Start: time.UnixMilli(merged.start), End: time.UnixMilli(merged.end)}, agg))
	})
	return Table[Windowed[K], A]{top: top, node: out, src: g.s.src, name: name, win: wa}
}
