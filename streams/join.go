package streams

import "fmt"

// Joins (Kafka Streams semantics). Both inputs of a join must be
// co-partitioned: read from topics with the same partition count whose
// records are partitioned by the join key, so partition p of each side
// holds the same keys. The inputs' partitions p are one task (every store
// of the task is open while either side is processed), Run checks the
// partition counts first (ErrNotCoPartitioned), and a topology with joins
// uses range assignment, which gives one member partition p of every topic.

// JoinTable joins each record of the stream with the table's current value
// for its key (Kafka Streams' KStream-KTable inner join): a record whose key
// the table does not hold is dropped. The table is read when the record is
// processed, so table updates processed earlier are seen by later stream
// records and a table update never re-emits earlier stream records. The
// output keeps the stream record's key, headers and timestamp.
func JoinTable[K, V, TV, VR any](s Stream[K, V], t Table[K, TV], joiner func(key K, value V, tableValue TV) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinTable(s, t, "join", opts, func(k K, v V, tv TV, ok bool) (VR, bool, error) {
		if !ok {
			var zero VR
			return zero, false, nil
		}
		out, err := joiner(k, v, tv)
		return out, true, err
	})
}

// LeftJoinTable is JoinTable that keeps stream records whose key the table
// does not hold: the joiner then gets a nil table value.
func LeftJoinTable[K, V, TV, VR any](s Stream[K, V], t Table[K, TV], joiner func(key K, value V, tableValue *TV) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinTable(s, t, "left-join", opts, func(k K, v V, tv TV, ok bool) (VR, bool, error) {
		out, err := joiner(k, v, ptrIf(tv, ok))
		return out, true, err
	})
}

func joinTable[K, V, TV, VR any](s Stream[K, V], t Table[K, TV], kind string, opts []OpOpt,
	join func(k K, v V, tv TV, ok bool) (VR, bool, error)) Stream[K, VR] {
	stage := s.top.name(kind, opts)
	view := t.joinView()
	if s.rekeyed {
		s.top.fail(fmt.Errorf("%w: %s: the stream's keys may have changed since its source; Repartition it before joining", ErrTopology, stage))
	}
	if view != nil {
		s.top.coPartition(append([]*source{s.src}, view.srcs...)...)
	}
	return derive(s, func(out *node[K, VR]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			tv, ok, err := view.get(c, r.Key)
			if err != nil {
				return err
			}
			v, emit, err := join(r.Key, r.Value, tv, ok)
			if err != nil {
				return opErr(stage, err)
			}
			if !emit {
				return nil
			}
			return out.emit(c, carry(r, r.Key, v))
		}
	})
}

// JoinTables joins two tables by key (Kafka Streams' KTable-KTable inner
// join) into a table that holds joiner(left, right) for every key both
// hold. An update of either side emits the key's new joined value; a
// deletion on either side (or an update whose other side is missing)
// deletes the key from the result (emitted as a tombstone by ToTopic, not
// by ToStream). The result is not materialized: reading it (a later join)
// calls joiner on both sides' current values.
func JoinTables[K, L, R, VR any](left Table[K, L], right Table[K, R], joiner func(key K, left L, right R) (VR, error), opts ...OpOpt) Table[K, VR] {
	return joinTables(left, right, "table-join", opts, func(k K, l L, lok bool, r R, rok bool) (VR, bool, error) {
		var zero VR
		if !lok || !rok {
			return zero, false, nil
		}
		v, err := joiner(k, l, r)
		return v, true, err
	})
}

// LeftJoinTables is JoinTables that keeps every key of the left table: the
// joiner gets a nil right value when the right table does not hold the
// key, and right-side updates of keys the left does not hold emit only a
// deletion (which ToTopic writes as a tombstone).
func LeftJoinTables[K, L, R, VR any](left Table[K, L], right Table[K, R], joiner func(key K, left L, right *R) (VR, error), opts ...OpOpt) Table[K, VR] {
	return joinTables(left, right, "table-left-join", opts, func(k K, l L, lok bool, r R, rok bool) (VR, bool, error) {
		var zero VR
		if !lok {
			return zero, false, nil
		}
		v, err := joiner(k, l, ptrIf(r, rok))
		return v, true, err
	})
}

func joinTables[K, L, R, VR any](left Table[K, L], right Table[K, R], kind string, opts []OpOpt,
	join func(k K, l L, lok bool, r R, rok bool) (VR, bool, error)) Table[K, VR] {
	top := left.top
	stage := top.name(kind, opts)
	lv, rv := left.joinView(), right.joinView()
	out := &node[K, VR]{}
	view := &tableView[K, VR]{changes: &node[K, change[VR]]{}}
	res := Table[K, VR]{top: top, node: out, src: left.src, name: stage, view: view}
	if lv == nil || rv == nil {
		return res
	}
	view.srcs = append(append([]*source(nil), lv.srcs...), rv.srcs...)
	top.coPartition(view.srcs...)
	// compute returns the joined value of k from both sides' current
	// values (l or r may be given by the update being processed).
	compute := func(c *procCtx, k K) (VR, bool, error) {
		var zero VR
		l, lok, err := lv.get(c, k)
		if err != nil {
			return zero, false, err
		}
		r, rok, err := rv.get(c, k)
		if err != nil {
			return zero, false, err
		}
		v, ok, err := join(k, l, lok, r, rok)
		if err != nil {
			return zero, false, opErr(stage, err)
		}
		return v, ok, nil
	}
	view.get = compute
	// Either side's update is already in its store when its change is
	// emitted, so the joined value is computed from both stores.
	onChange := func(c *procCtx, k K, r Record[K, struct{}]) error {
		v, ok, err := compute(c, k)
		if err != nil {
			return err
		}
		if !ok {
			return view.changes.emit(c, carry(r, k, change[VR]{deleted: true}))
		}
		if err := out.emit(c, carry(r, k, v)); err != nil {
			return err
		}
		return view.changes.emit(c, carry(r, k, change[VR]{value: v}))
	}
	lv.changes.children = append(lv.changes.children, func(c *procCtx, r Record[K, change[L]]) error {
		return onChange(c, r.Key, carry(r, r.Key, struct{}{}))
	})
	rv.changes.children = append(rv.changes.children, func(c *procCtx, r Record[K, change[R]]) error {
		return onChange(c, r.Key, carry(r, r.Key, struct{}{}))
	})
	return res
}

// ptrIf returns &v if ok, else nil: the optional side of an outer join.
func ptrIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
