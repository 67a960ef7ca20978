package streams

import (
	"fmt"
)

// Grouped is a stream grouped by key for an aggregation (Count, Reduce,
// Aggregate, or the same per window after WindowedBy). Create it with GroupByKey or
// GroupBy.
type Grouped[K, V any] struct {
	s      Stream[K, V] // read from one fixed topic, keys as there
	keys   Serde[K]
	values Serde[V]
}

// GroupByKey groups the stream by its current key. Like Kafka Streams, it
// first repartitions (through <application id>-<name>-repartition, name
// from Named or "group-<n>") when the keys may have changed since the
// source (SelectKey, Map, FlatMap, Transform, MapRecord) or the stream does
// not come from exactly one fixed topic (a pattern, several topics, a
// Merge): a state store's tasks are the partitions of one topic whose
// records are partitioned by the grouping key. The serdes encode keys for
// the store and, when repartitioning, the records.
func (s Stream[K, V]) GroupByKey(keys Serde[K], values Serde[V], opts ...OpOpt) Grouped[K, V] {
	src := s.src
	if s.rekeyed || src == nil || src.pattern != nil || (src.internal == nil && len(src.topics) != 1) {
		s = s.Repartition(keys, values, Named(s.top.name("group", opts)))
	}
	return Grouped[K, V]{s: s, keys: keys, values: values}
}

// GroupBy groups the stream by a new key (Kafka Streams' groupBy): it is
// SelectKey followed by GroupByKey, so the records are repartitioned by the
// new key.
func GroupBy[K, V, K2 any](s Stream[K, V], key func(K, V) (K2, error), keys Serde[K2], values Serde[V], opts ...OpOpt) Grouped[K2, V] {
	return SelectKey(s, key).GroupByKey(keys, values, opts...)
}

// Table is a changelog stream of aggregates by key (Kafka Streams' KTable):
// every update of a key's aggregate is a record. It is backed by a state
// store whose writes go to a compacted changelog topic.
type Table[K, V any] struct {
	top  *Topology
	node *node[K, V]
	src  *source
	name string
	// win is the windowed aggregation behind a windowed table (for
	// Suppress), nil otherwise.
	win *windowAgg
	// view reads the table's current values for joins (table_source.go);
	// nil for windowed tables.
	view *tableView[K, V]
}

// ToStream returns the stream of the table's updates: one record per
// aggregate change, with the timestamp of the record that caused it.
func (t Table[K, V]) ToStream() Stream[K, V] {
	return Stream[K, V]{top: t.top, node: t.node, src: t.src, rekeyed: t.win != nil}
}

// StoreName is the name of the table's state store; its changelog topic is
// <application id>-<store name>-changelog.
func (t Table[K, V]) StoreName() string { return t.name }

// fold computes a key's new aggregate from a record and the old aggregate
// (exists is false for the key's first record).
type fold[K, V, A any] func(key K, value V, agg A, exists bool) (A, error)

// Count counts the records of each key.
func (g Grouped[K, V]) Count(opts ...OpOpt) Table[K, int64] {
	return aggregate(g, "count", countFold[K, V], Int64, opts)
}

// Reduce combines the values of each key with fn (the first value of a key
// is its initial aggregate).
func (g Grouped[K, V]) Reduce(fn func(agg, value V) (V, error), opts ...OpOpt) Table[K, V] {
	return aggregate(g, "reduce", reduceFold[K](fn), g.values, opts)
}

// Aggregate folds the values of each key into an aggregate of type A,
// starting from init(), stored with the serde aggs.
func Aggregate[K, V, A any](g Grouped[K, V], init func() A, add func(key K, value V, agg A) (A, error), aggs Serde[A], opts ...OpOpt) Table[K, A] {
	return aggregate(g, "aggregate", aggregateFold(init, add), aggs, opts)
}

func countFold[K, V any](_ K, _ V, n int64, _ bool) (int64, error) { return n + 1, nil }

func reduceFold[K, V any](fn func(agg, value V) (V, error)) fold[K, V, V] {
	return func(_ K, v V, agg V, exists bool) (V, error) {
		if !exists {
			return v, nil
		}
		return fn(agg, v)
	}
}

func aggregateFold[K, V, A any](init func() A, add func(K, V, A) (A, error)) fold[K, V, A] {
	return func(k K, v V, agg A, exists bool) (A, error) {
		if !exists {
			agg = init()
		}
		return add(k, v, agg)
	}
}

func aggregate[K, V, A any](g Grouped[K, V], kind string, f fold[K, V, A], aggs Serde[A], opts []OpOpt) Table[K, A] {
	top := g.s.top
	name := top.name(kind, opts)
	spec := top.addStore(name, g.s.src)
	spec.query = newQueryCodec(g.keys, aggs, 0)
	out := &node[K, A]{}
	g.s.node.children = append(g.s.node.children, func(c *procCtx, r Record[K, V]) error {
		st, kb, err := storeAndKey(c, spec, g.keys, r.Key)
		if err != nil {
			return err
		}
		agg, err := update(c, st, name, kb, r, f, aggs)
		if err != nil {
			return err
		}
		return out.emit(c, carry(r, r.Key, agg))
	})
	return Table[K, A]{top: top, node: out, src: g.s.src, name: name, view: storeView(spec, g.keys, aggs, out)}
}

// storeAndKey returns the current task's store of spec and the encoded key.
func storeAndKey[K any](c *procCtx, spec *storeSpec, keys Serde[K], key K) (*store, []byte, error) {
	st := c.store(spec)
	if st == nil {
		return nil, nil, &StageError{Stage: spec.name, Kind: KindOperator,
			Err: fmt.Errorf("%w: store %s is not open for this partition", ErrRetriable, spec.name)}
	}
	kb, err := keys.Encode(key)
	if err != nil {
		return nil, nil, &StageError{Stage: spec.name, Kind: KindSerialize, Err: fmt.Errorf("key: %w", err)}
	}
	return st, kb, nil
}

// update reads the aggregate stored under storeKey, folds the record into
// it and writes it back (and to the changelog).
func update[K, V, A any](c *procCtx, st *store, stage string, storeKey []byte, r Record[K, V], f fold[K, V, A], aggs Serde[A]) (A, error) {
	var agg A
	old, exists, err := st.get(storeKey)
	if err != nil {
		return agg, &StageError{Stage: stage, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
	}
	if exists {
		if agg, err = aggs.Decode(old); err != nil {
			return agg, &StageError{Stage: stage, Kind: KindDeserialize, Err: fmt.Errorf("stored aggregate: %w", err)}
		}
	}
	if agg, err = f(r.Key, r.Value, agg, exists); err != nil {
		return agg, opErr(stage, err)
	}
	vb, err := aggs.Encode(agg)
	if err != nil {
		return agg, &StageError{Stage: stage, Kind: KindSerialize, Err: fmt.Errorf("aggregate: %w", err)}
	}
	st.put(c, storeKey, vb, r.Timestamp)
	return agg, nil
}

// store returns the current task's store of spec, or nil.
func (c *procCtx) store(spec *storeSpec) *store {
	if c.task == nil {
		return nil
	}
	return c.task.stores[spec.index]
}
