package streams

import (
	"encoding/binary"
	"fmt"
	"time"
)

// JoinWindows bound a stream-stream join: a left record at time t joins
// the right records with timestamps in [t-Before, t+After] (so a right
// record at time t joins the left records in [t-After, t+Before]). Grace
// is how long after its window's end (in stream time) a record may still
// arrive: a left record at t is late, dropped and counted
// (Stats.LateDropped) once stream time passes t+After+Grace, a right
// record at t once it passes t+Before+Grace.
type JoinWindows struct {
	Before, After, Grace time.Duration
}

// StreamJoined are the serdes a stream-stream join stores both sides with.
type StreamJoined[K, L, R any] struct {
	Keys        Serde[K]
	LeftValues  Serde[L]
	RightValues Serde[R]
}

// JoinStreams joins two co-partitioned streams by key within JoinWindows
// (Kafka Streams' KStream-KStream inner join): each record is buffered in
// its side's window store (changelogged) and joined with the buffered
// records of the other side whose timestamps fall in its window, so every
// matching pair is emitted exactly once, by whichever of the two arrives
// second. The output has the key, the later timestamp of the pair and the
// headers of the record that completed it.
//
// Stream time is the largest timestamp either side has seen in the task;
// records whose window has closed are dropped from the stores as it
// advances.
func JoinStreams[K, L, R, VR any](left Stream[K, L], right Stream[K, R], w JoinWindows, serdes StreamJoined[K, L, R],
	joiner func(key K, left L, right R) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinStreams(left, right, w, serdes, "join", false, false, opts,
		func(k K, l *L, r *R) (VR, error) { return joiner(k, *l, *r) })
}

// LeftJoinStreams is JoinStreams that also emits each left record that
// joined no right record, with a nil right value, once its window has
// closed (stream time passed its timestamp + After + Grace), as Kafka
// Streams does since 3.1 (no eager unmatched results).
func LeftJoinStreams[K, L, R, VR any](left Stream[K, L], right Stream[K, R], w JoinWindows, serdes StreamJoined[K, L, R],
	joiner func(key K, left L, right *R) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinStreams(left, right, w, serdes, "left-join", true, false, opts,
		func(k K, l *L, r *R) (VR, error) { return joiner(k, *l, r) })
}

// OuterJoinStreams is LeftJoinStreams that also emits unmatched right
// records (with a nil left value) once their window has closed.
func OuterJoinStreams[K, L, R, VR any](left Stream[K, L], right Stream[K, R], w JoinWindows, serdes StreamJoined[K, L, R],
	joiner func(key K, left *L, right *R) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinStreams(left, right, w, serdes, "outer-join", true, true, opts, joiner)
}

// joinSide is one side's window store of a stream-stream join. Its keys:
//
//	'k' uvarint(len(key)) key ts(8) seq(8) → matched(1) value
//	't' ts(8) uvarint(len(key)) key seq(8) → 0x00   (the same entries by time)
//
// ts sorts like the signed Unix ms (appendTime); seq is the input offset
// times 1024 plus a counter, so records of one input offset with equal key
// and timestamp are all kept. matched is 1 once the entry joined a record
// of the other side (outer joins emit the unmatched ones when they expire).
// An entry expires once stream time passes ts + retain.
type joinSide struct {
	spec   *storeSpec
	retain int64 // ms: the other side's reach after this side's record, + grace
}

const (
	joinByKey  = 'k'
	joinByTime = 't'
)

func joinKeyPrefix(kb []byte) []byte {
	b := binary.AppendUvarint([]byte{joinByKey}, uint64(len(kb)))
	return append(b, kb...)
}

func joinSideStore(c *procCtx, spec *storeSpec) (*store, error) {
	st := c.store(spec)
	if st == nil {
		return nil, &StageError{Stage: spec.name, Kind: KindOperator,
			Err: fmt.Errorf("%w: store %s is not open for this partition", ErrRetriable, spec.name)}
	}
	return st, nil
}

// add buffers a record; matched says it already joined.
func (s joinSide) add(c *procCtx, st *store, kb []byte, ts, offset int64, value []byte, matched bool) error {
	prefix := appendTime(joinKeyPrefix(kb), ts)
	seq := offset * 1024
	for {
		_, exists, err := st.get(binary.BigEndian.AppendUint64(prefix, uint64(seq)))
		if err != nil {
			return &StageError{Stage: s.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
		}
		if !exists {
			break
		}
		seq++
	}
	flag := byte(0)
	if matched {
		flag = 1
	}
	t := time.UnixMilli(ts)
	st.put(c, binary.BigEndian.AppendUint64(prefix, uint64(seq)), append([]byte{flag}, value...), t)
	timeKey := binary.AppendUvarint(appendTime([]byte{joinByTime}, ts), uint64(len(kb)))
	timeKey = binary.BigEndian.AppendUint64(append(timeKey, kb...), uint64(seq))
	st.put(c, timeKey, []byte{0}, t)
	return nil
}

type joinEntry struct {
	key     []byte // the store key ('k' …)
	ts      int64
	matched bool
	value   []byte
}

// between returns the entries of kb with from <= ts <= to, in time order.
func (s joinSide) between(st *store, kb []byte, from, to int64) ([]joinEntry, error) {
	prefix := joinKeyPrefix(kb)
	var out []joinEntry
	err := st.scan(appendTime(prefix, from), appendTime(prefix, to+1), func(k, v []byte) (bool, error) {
		out = append(out, joinEntry{key: append([]byte(nil), k...), ts: readTime(k[len(prefix):]),
			matched: v[0] == 1, value: append([]byte(nil), v[1:]...)})
		return true, nil
	})
	if err != nil {
		return nil, &StageError{Stage: s.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
	}
	return out, nil
}

// markMatched records that an entry joined.
func (s joinSide) markMatched(c *procCtx, st *store, e joinEntry) {
	st.put(c, e.key, append([]byte{1}, e.value...), time.UnixMilli(e.ts))
}

// expire deletes the entries with ts < before and returns them, in time
// order, with their matched flag as of now.
func (s joinSide) expire(c *procCtx, st *store, before int64) ([]joinEntry, error) {
	var timeKeys [][]byte
	err := st.scan([]byte{joinByTime}, appendTime([]byte{joinByTime}, before), func(k, _ []byte) (bool, error) {
		timeKeys = append(timeKeys, append([]byte(nil), k...))
		return true, nil
	})
	if err != nil {
		return nil, &StageError{Stage: s.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
	}
	out := make([]joinEntry, 0, len(timeKeys))
	for _, tk := range timeKeys {
		ts := readTime(tk[1:])
		n, w := binary.Uvarint(tk[9:])
		kb := tk[9+w : 9+w+int(n)]
		seq := tk[9+w+int(n):]
		key := append(appendTime(joinKeyPrefix(kb), ts), seq...)
		v, ok, err := st.get(key)
		if err != nil {
			return nil, &StageError{Stage: s.spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
		}
		t := time.UnixMilli(ts)
		st.put(c, tk, nil, t)
		if !ok {
			continue
		}
		st.put(c, key, nil, t)
		out = append(out, joinEntry{key: kb, ts: ts, matched: v[0] == 1, value: v[1:]})
	}
	return out, nil
}

func joinStreams[K, L, R, VR any](left Stream[K, L], right Stream[K, R], w JoinWindows, serdes StreamJoined[K, L, R],
	kind string, leftOuter, rightOuter bool, opts []OpOpt, joiner func(k K, l *L, r *R) (VR, error)) Stream[K, VR] {
	top := left.top
	name := top.name(kind, opts)
	before, after, grace := w.Before.Milliseconds(), w.After.Milliseconds(), w.Grace.Milliseconds()
	if before < 0 || after < 0 || grace < 0 || before+after < 0 {
		top.fail(fmt.Errorf("%w: %s: join windows need Before, After, Grace >= 0", ErrTopology, name))
	}
	if left.rekeyed || right.rekeyed {
		top.fail(fmt.Errorf("%w: %s: a join input's keys may have changed since its source; Repartition it before joining", ErrTopology, name))
	}
	if left.src == nil || right.src == nil {
		top.fail(fmt.Errorf("%w: %s: a join input must come from one fixed topic (Repartition the stream first)", ErrTopology, name))
		return Stream[K, VR]{top: top, node: &node[K, VR]{}}
	}
	top.coPartition(left.src, right.src)
	ls := joinSide{spec: top.addStore(name+"-left", left.src), retain: after + grace}
	rs := joinSide{spec: top.addStore(name+"-right", right.src), retain: before + grace}
	out := &node[K, VR]{}

	// emitUnmatched emits an expired entry that joined nothing.
	emitUnmatched := func(c *procCtx, e joinEntry, isLeft bool) error {
		k, err := serdes.Keys.Decode(e.key)
		if err != nil {
			return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored key: %w", err)}
		}
		var (
			l *L
			r *R
		)
		if isLeft {
			v, err := serdes.LeftValues.Decode(e.value)
			if err != nil {
				return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored left value: %w", err)}
			}
			l = &v
		} else {
			v, err := serdes.RightValues.Decode(e.value)
			if err != nil {
				return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored right value: %w", err)}
			}
			r = &v
		}
		v, err := joiner(k, l, r)
		if err != nil {
			return opErr(name, err)
		}
		return out.emit(c, Record[K, VR]{Key: k, Value: v, Timestamp: time.UnixMilli(e.ts)})
	}

	// emitExpired emits the unmatched expired entries of the outer sides,
	// in time order (the left first at equal times).
	emitExpired := func(c *procCtx, expiredL, expiredR []joinEntry) error {
		if !leftOuter {
			expiredL = nil
		}
		if !rightOuter {
			expiredR = nil
		}
		for len(expiredL) > 0 || len(expiredR) > 0 {
			isLeft := len(expiredR) == 0 || (len(expiredL) > 0 && expiredL[0].ts <= expiredR[0].ts)
			var e joinEntry
			if isLeft {
				e, expiredL = expiredL[0], expiredL[1:]
			} else {
				e, expiredR = expiredR[0], expiredR[1:]
			}
			if e.matched {
				continue
			}
			if err := emitUnmatched(c, e, isLeft); err != nil {
				return err
			}
		}
		return nil
	}

	// process handles a record of one side (this) against the other.
	process := func(c *procCtx, key K, ts time.Time, offset int64, value []byte, this, other joinSide,
		otherFrom, otherTo int64, pair func(other []byte) (VR, error), withRecord func(VR) Record[K, VR]) error {
		thisSt, err := joinSideStore(c, this.spec)
		if err != nil {
			return err
		}
		otherSt, err := joinSideStore(c, other.spec)
		if err != nil {
			return err
		}
		kb, err := serdes.Keys.Encode(key)
		if err != nil {
			return &StageError{Stage: name, Kind: KindSerialize, Err: fmt.Errorf("key: %w", err)}
		}
		ms := ts.UnixMilli()
		streamTime := max(thisSt.streamTime, otherSt.streamTime, ms)
		thisSt.streamTime, otherSt.streamTime = streamTime, streamTime
		if ms+this.retain < streamTime {
			c.dropLate()
			return nil
		}
		matches, err := other.between(otherSt, kb, otherFrom, otherTo)
		if err != nil {
			return err
		}
		for _, m := range matches {
			v, err := pair(m.value)
			if err != nil {
				return err
			}
			r := withRecord(v)
			r.Timestamp = time.UnixMilli(max(ms, m.ts))
			if err := out.emit(c, r); err != nil {
				return err
			}
			if !m.matched && (leftOuter || rightOuter) {
				other.markMatched(c, otherSt, m)
			}
		}
		if err := this.add(c, thisSt, kb, ms, offset, value, len(matches) > 0); err != nil {
			return err
		}
		// Expire what no later record can join.
		expiredL, err := ls.expire(c, c.store(ls.spec), streamTime-ls.retain)
		if err != nil {
			return err
		}
		expiredR, err := rs.expire(c, c.store(rs.spec), streamTime-rs.retain)
		if err != nil {
			return err
		}
		return emitExpired(c, expiredL, expiredR)
	}

	left.node.children = append(left.node.children, func(c *procCtx, rec Record[K, L]) error {
		vb, err := serdes.LeftValues.Encode(rec.Value)
		if err != nil {
			return &StageError{Stage: name, Kind: KindSerialize, Err: fmt.Errorf("left value: %w", err)}
		}
		ms := rec.Timestamp.UnixMilli()
		return process(c, rec.Key, rec.Timestamp, rec.Offset, vb, ls, rs, ms-before, ms+after,
			func(ob []byte) (VR, error) {
				var zero VR
				rv, err := serdes.RightValues.Decode(ob)
				if err != nil {
					return zero, &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored right value: %w", err)}
				}
				v, err := joiner(rec.Key, &rec.Value, &rv)
				if err != nil {
					return zero, opErr(name, err)
				}
				return v, nil
			},
			func(v VR) Record[K, VR] { return carry(rec, rec.Key, v) })
	})
	right.node.children = append(right.node.children, func(c *procCtx, rec Record[K, R]) error {
		vb, err := serdes.RightValues.Encode(rec.Value)
		if err != nil {
			return &StageError{Stage: name, Kind: KindSerialize, Err: fmt.Errorf("right value: %w", err)}
		}
		ms := rec.Timestamp.UnixMilli()
		return process(c, rec.Key, rec.Timestamp, rec.Offset, vb, rs, ls, ms-after, ms+before,
			func(ob []byte) (VR, error) {
				var zero VR
				lv, err := serdes.LeftValues.Decode(ob)
				if err != nil {
					return zero, &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored left value: %w", err)}
				}
				v, err := joiner(rec.Key, &lv, &rec.Value)
				if err != nil {
					return zero, opErr(name, err)
				}
				return v, nil
			},
			func(v VR) Record[K, VR] { return carry(rec, rec.Key, v) })
	})
	return Stream[K, VR]{top: top, node: out, src: left.src}
}
