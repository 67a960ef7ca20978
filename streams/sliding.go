package streams

import (
	"fmt"
	"time"
)

// Sliding windows (SlidingWindows) keep, per key, the windows the records
// define; window store keys are as for time windows (key bytes + 8-byte
// start), values the 8-byte largest record timestamp in the window
// (appendTime) followed by the aggregate. A record at t reads the key's
// windows starting in [t − 2 × size, t + 1], in start order, and:
//
//   - updates every open window containing it;
//   - creates its left window [t − size, t] if missing: its aggregate before
//     t is that of the latest window ending before t, when the record just
//     before t (that window's largest timestamp) is within size of t, else
//     empty (that window holds exactly the records in [t − size, t): the
//     invariant below leaves no other window between);
//   - creates the right window [p + 1, p + 1 + size] of the record just
//     before it (at p) if missing and t falls inside, holding t alone;
//   - creates its own right window [t + 1, t + 1 + size] if missing and a
//     later record exists within it: its aggregate is that of the latest
//     window starting at or before t that holds a record after t (before t
//     is added), which then holds exactly the records in (t, t + 1 + size].
//
// Invariant: every record has its left window, and its right window when
// that holds a record; no other window exists (Kafka Streams' KIP-450
// algorithm, here in its forward-scan form).

// slidingWindow is one stored sliding window as a record sees it.
type slidingWindow struct {
	start, maxTS int64
	agg          []byte // the aggregate's bytes (a copy)
}

func slidingValue(maxTS int64, agg []byte) []byte {
	return append(appendTime(make([]byte, 0, 8+len(agg)), maxTS), agg...)
}

// slidingAggregate wires a sliding-window aggregation: the processor of
// g's records into wa's store, emitting every window it creates or
// updates to out.
func slidingAggregate[K, V, A any](g Grouped[K, V], w Windows, name string, wa *windowAgg, f fold[K, V, A], aggs Serde[A], out *node[Windowed[K], A]) {
	size := w.size
	render := wa.spec.query.renderValue
	wa.spec.query.renderValue = func(b []byte) (any, error) {
		if len(b) < 8 {
			return nil, fmt.Errorf("streams: sliding window value of %d bytes", len(b))
		}
		return render(b[8:])
	}
	// A suppressed sliding window stays in the store once emitted (later
	// windows take their aggregates from it); purge removes it.
	wa.take = func(_ *procCtx, st *store, kb []byte, start, due int64, _ time.Time) ([]byte, int64, bool, error) {
		v, ok, err := st.get(windowKey(kb, start))
		if !ok || err != nil {
			return nil, 0, false, err
		}
		if len(v) < 8 {
			return nil, 0, false, fmt.Errorf("streams: sliding window value of %d bytes", len(v))
		}
		return v[8:], start + size, true, nil
	}
	// put stores a window and emits it; with add it first folds r into
	// the aggregate (agg nil: empty so far).
	put := func(c *procCtx, st *store, kb []byte, r Record[K, V], start, maxTS int64, agg []byte, add bool) error {
		var (
			a   A
			err error
		)
		if agg != nil {
			if a, err = aggs.Decode(agg); err != nil {
				return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("stored aggregate: %w", err)}
			}
		}
		vb := agg
		if add {
			if a, err = f(r.Key, r.Value, a, agg != nil); err != nil {
				return opErr(name, err)
			}
			if vb, err = aggs.Encode(a); err != nil {
				return &StageError{Stage: name, Kind: KindSerialize, Err: fmt.Errorf("aggregate: %w", err)}
			}
			maxTS = max(maxTS, r.Timestamp.UnixMilli())
		}
		st.put(c, windowKey(kb, start), slidingValue(maxTS, vb), r.Timestamp)
		// Ends are inclusive: the window is final once stream time −
		// grace is past its end, so it is due at end + 1.
		wa.buffered(c, kb, start, start+size+1, r.Timestamp)
		return out.emit(c, carry(r, Windowed[K]{Key: r.Key, Start: time.UnixMilli(start), End: time.UnixMilli(start + size)}, a))
	}
	g.s.node.children = append(g.s.node.children, func(c *procCtx, r Record[K, V]) error {
		st, kb, err := storeAndKey(c, wa.spec, g.keys, r.Key)
		if err != nil {
			return err
		}
		t := r.Timestamp.UnixMilli()
		closed, err := wa.advance(c, st, t, w.grace)
		if err != nil {
			return err
		}
		// A window [start, end] (ends inclusive) is closed once end <
		// stream time − grace: with no grace, a record at stream time
		// still gets its left window (Kafka's KAFKA-13739).
		if t+1+size < closed {
			c.dropLate() // even its right window has closed
			return nil
		}
		var (
			before, after     *slidingWindow // aggregates for t's left and right windows
			prev              int64          // the record just before t
			hasPrev           bool
			leftDone, rightOK bool // t's left / right window exists
			starts            = map[int64]bool{}
			containing        []slidingWindow
		)
		err = st.scan(windowKey(kb, t-2*size), windowKey(kb, t+2), func(k, v []byte) (bool, error) {
			if len(k) != len(kb)+8 {
				return true, nil // a longer key sharing the prefix
			}
			if len(v) < 8 {
				return false, fmt.Errorf("sliding window value of %d bytes", len(v))
			}
			sw := slidingWindow{start: readTime(k[len(kb):]), maxTS: readTime(v), agg: append([]byte(nil), v[8:]...)}
			starts[sw.start] = true
			switch end := sw.start + size; {
			case end < t:
				before, prev, hasPrev = &sw, sw.maxTS, true
			case end == t:
				leftDone = true
				if sw.maxTS < t {
					prev, hasPrev = sw.maxTS, true
				}
				containing = append(containing, sw)
			case sw.start <= t:
				after = &sw
				containing = append(containing, sw)
			case sw.start == t+1:
				rightOK = true
			}
			return true, nil
		})
		if err != nil {
			return &StageError{Stage: name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
		}
		// create stores a new window if it is still open.
		create := func(start, maxTS int64, agg []byte) error {
			if start+size < closed {
				c.dropLate()
				return nil
			}
			return put(c, st, kb, r, start, maxTS, agg, true)
		}
		for _, sw := range containing {
			if err := create(sw.start, sw.maxTS, sw.agg); err != nil {
				return err
			}
		}
		if hasPrev && !starts[prev+1] && prev+1+size >= t {
			if err := create(prev+1, t, nil); err != nil {
				return err
			}
			// When prev = t − size − 1 that window is t's left window.
			leftDone = leftDone || prev+1 == t-size
		}
		if !leftDone {
			var agg []byte
			if hasPrev && prev >= t-size && before != nil {
				agg = before.agg
			}
			if err := create(t-size, t, agg); err != nil {
				return err
			}
		}
		if !rightOK && after != nil && after.maxTS > t {
			// It holds the records after t only, as t's right window
			// does (t+1+size > closed: checked above).
			return put(c, st, kb, r, t+1, after.maxTS, after.agg, false)
		}
		return nil
	})
}
