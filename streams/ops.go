package streams

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Operators whose types do not change are methods; those that change the key
// or value type are functions, as Go methods cannot add type parameters.
// Every user function may return an error: the record then goes to the App's
// error handling (dead letter, skip or fail) under the operator's name.

func opErr(stage string, err error) error {
	return &StageError{Stage: stage, Kind: KindOperator, Err: err}
}

// Filter keeps the records for which keep returns true.
func (s Stream[K, V]) Filter(keep func(K, V) (bool, error), opts ...OpOpt) Stream[K, V] {
	stage := s.top.name("filter", opts)
	return derive(s, func(out *node[K, V]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			ok, err := keep(r.Key, r.Value)
			if err != nil {
				return opErr(stage, err)
			}
			if !ok {
				return nil
			}
			return out.emit(c, r)
		}
	})
}

// FilterRecord keeps the records for which keep returns true, with access
// to headers, timestamp and origin.
func (s Stream[K, V]) FilterRecord(keep func(Record[K, V]) (bool, error), opts ...OpOpt) Stream[K, V] {
	stage := s.top.name("filter", opts)
	return derive(s, func(out *node[K, V]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			ok, err := keep(r)
			if err != nil {
				return opErr(stage, err)
			}
			if !ok {
				return nil
			}
			return out.emit(c, r)
		}
	})
}

// FilterNot drops the records for which drop returns true.
func (s Stream[K, V]) FilterNot(drop func(K, V) (bool, error), opts ...OpOpt) Stream[K, V] {
	if len(opts) == 0 {
		opts = []OpOpt{Named(fmt.Sprintf("filter-not-%d", s.top.nextID+1))}
	}
	return s.Filter(func(k K, v V) (bool, error) {
		d, err := drop(k, v)
		return !d, err
	}, opts...)
}

// Peek calls fn for every record and passes it on unchanged.
func (s Stream[K, V]) Peek(fn func(K, V), opts ...OpOpt) Stream[K, V] {
	s.top.name("peek", opts)
	return derive(s, func(out *node[K, V]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			fn(r.Key, r.Value)
			return out.emit(c, r)
		}
	})
}

// Foreach calls fn for every record; it ends the stream.
func (s Stream[K, V]) Foreach(fn func(K, V) error, opts ...OpOpt) {
	stage := s.top.name("foreach", opts)
	s.node.children = append(s.node.children, func(c *procCtx, r Record[K, V]) error {
		if err := fn(r.Key, r.Value); err != nil {
			return opErr(stage, err)
		}
		return nil
	})
}

// Merge returns a stream of the records of s and of others.
func (s Stream[K, V]) Merge(others ...Stream[K, V]) Stream[K, V] {
	out := &node[K, V]{}
	merged := Stream[K, V]{top: s.top, node: out, src: s.src, rekeyed: s.rekeyed}
	for _, in := range append([]Stream[K, V]{s}, others...) {
		in.node.children = append(in.node.children, out.emit)
		if in.src != merged.src {
			merged.src = nil
		}
		merged.rekeyed = merged.rekeyed || in.rekeyed
	}
	return merged
}

// Transform is the general record operator: fn returns zero or more output
// records for each input, with access to headers, timestamp and origin. The
// other operators are special cases of it.
func Transform[K, V, K2, V2 any](s Stream[K, V], fn func(Record[K, V]) ([]Record[K2, V2], error), opts ...OpOpt) Stream[K2, V2] {
	stage := s.top.name("transform", opts)
	return rekeyed(derive(s, func(out *node[K2, V2]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			rs, err := fn(r)
			if err != nil {
				return opErr(stage, err)
			}
			for _, o := range rs {
				if err := out.emit(c, o); err != nil {
					return err
				}
			}
			return nil
		}
	}))
}

// rekeyed marks a stream whose keys an operator may have changed.
func rekeyed[K, V any](s Stream[K, V]) Stream[K, V] {
	s.rekeyed = true
	return s
}

// MapRecord maps each record to one record, with access to headers,
// timestamp and origin.
func MapRecord[K, V, K2, V2 any](s Stream[K, V], fn func(Record[K, V]) (Record[K2, V2], error), opts ...OpOpt) Stream[K2, V2] {
	stage := s.top.name("map", opts)
	return rekeyed(derive(s, func(out *node[K2, V2]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			o, err := fn(r)
			if err != nil {
				return opErr(stage, err)
			}
			return out.emit(c, o)
		}
	}))
}

func carry[K, V, K2, V2 any](r Record[K, V], k K2, v V2) Record[K2, V2] {
	return Record[K2, V2]{Key: k, Value: v, Headers: r.Headers, Timestamp: r.Timestamp,
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
}

// Map maps each record to a new key and value; headers and timestamp carry
// over.
func Map[K, V, K2, V2 any](s Stream[K, V], fn func(K, V) (K2, V2, error), opts ...OpOpt) Stream[K2, V2] {
	if len(opts) == 0 {
		opts = []OpOpt{Named(fmt.Sprintf("map-%d", s.top.nextID+1))}
	}
	return MapRecord(s, func(r Record[K, V]) (Record[K2, V2], error) {
		k, v, err := fn(r.Key, r.Value)
		return carry(r, k, v), err
	}, opts...)
}

// MapValues maps each value, keeping the key.
func MapValues[K, V, V2 any](s Stream[K, V], fn func(K, V) (V2, error), opts ...OpOpt) Stream[K, V2] {
	if len(opts) == 0 {
		opts = []OpOpt{Named(fmt.Sprintf("map-values-%d", s.top.nextID+1))}
	}
	out := MapRecord(s, func(r Record[K, V]) (Record[K, V2], error) {
		v, err := fn(r.Key, r.Value)
		return carry(r, r.Key, v), err
	}, opts...)
	out.rekeyed = s.rekeyed
	return out
}

// SelectKey sets a new key, keeping the value.
func SelectKey[K, V, K2 any](s Stream[K, V], fn func(K, V) (K2, error), opts ...OpOpt) Stream[K2, V] {
	if len(opts) == 0 {
		opts = []OpOpt{Named(fmt.Sprintf("select-key-%d", s.top.nextID+1))}
	}
	return MapRecord(s, func(r Record[K, V]) (Record[K2, V], error) {
		k, err := fn(r.Key, r.Value)
		return carry(r, k, r.Value), err
	}, opts...)
}

// FlatMap maps each record to zero or more key-value pairs.
func FlatMap[K, V, K2, V2 any](s Stream[K, V], fn func(K, V) ([]KeyValue[K2, V2], error), opts ...OpOpt) Stream[K2, V2] {
	stage := s.top.name("flat-map", opts)
	return rekeyed(derive(s, func(out *node[K2, V2]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			kvs, err := fn(r.Key, r.Value)
			if err != nil {
				return opErr(stage, err)
			}
			for _, kv := range kvs {
				if err := out.emit(c, carry(r, kv.Key, kv.Value)); err != nil {
					return err
				}
			}
			return nil
		}
	}))
}

// FlatMapValues maps each value to zero or more values, keeping the key.
func FlatMapValues[K, V, V2 any](s Stream[K, V], fn func(K, V) ([]V2, error), opts ...OpOpt) Stream[K, V2] {
	stage := s.top.name("flat-map-values", opts)
	return derive(s, func(out *node[K, V2]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			vs, err := fn(r.Key, r.Value)
			if err != nil {
				return opErr(stage, err)
			}
			for _, v := range vs {
				if err := out.emit(c, carry(r, r.Key, v)); err != nil {
					return err
				}
			}
			return nil
		}
	})
}

// Splitter routes each record of a stream to the first branch whose
// predicate holds, or else to the default branch (records no branch takes
// and no default exists are dropped). Create it with Split; add branches
// before the topology runs.
type Splitter[K, V any] struct {
	top      *Topology
	stage    string
	names    []string
	preds    []func(Record[K, V]) (bool, error)
	branches []*node[K, V]
	dflt     *node[K, V]
	src      *source
	rekeyed  bool
}

// Split starts a split of s into named branches.
func (s Stream[K, V]) Split(opts ...OpOpt) *Splitter[K, V] {
	sp := &Splitter[K, V]{top: s.top, stage: s.top.name("split", opts), src: s.src, rekeyed: s.rekeyed}
	s.node.children = append(s.node.children, sp.route)
	return sp
}

// Branch adds a branch taking the records pred holds for (and that no
// earlier branch took).
func (sp *Splitter[K, V]) Branch(name string, pred func(K, V) (bool, error)) Stream[K, V] {
	return sp.BranchRecord(name, func(r Record[K, V]) (bool, error) { return pred(r.Key, r.Value) })
}

// BranchRecord is Branch with a predicate over the whole record.
func (sp *Splitter[K, V]) BranchRecord(name string, pred func(Record[K, V]) (bool, error)) Stream[K, V] {
	n := &node[K, V]{}
	sp.names = append(sp.names, name)
	sp.preds = append(sp.preds, pred)
	sp.branches = append(sp.branches, n)
	return Stream[K, V]{top: sp.top, node: n, src: sp.src, rekeyed: sp.rekeyed}
}

// Default returns the branch of records no other branch took.
func (sp *Splitter[K, V]) Default() Stream[K, V] {
	if sp.dflt == nil {
		sp.dflt = &node[K, V]{}
	}
	return Stream[K, V]{top: sp.top, node: sp.dflt, src: sp.src, rekeyed: sp.rekeyed}
}

func (sp *Splitter[K, V]) route(c *procCtx, r Record[K, V]) error {
	for i, pred := range sp.preds {
		ok, err := pred(r)
		if err != nil {
			return opErr(sp.stage+"/"+sp.names[i], err)
		}
		if ok {
			return sp.branches[i].emit(c, r)
		}
	}
	if sp.dflt != nil {
		return sp.dflt.emit(c, r)
	}
	return nil
}

// To writes every record to topic.
func (s Stream[K, V]) To(topic string, keys Serde[K], values Serde[V], opts ...OpOpt) {
	if topic != "" {
		s.top.sinks = append(s.top.sinks, topic)
	}
	s.ToTopicFunc(func(Record[K, V]) (string, error) { return topic, nil }, keys, values, opts...)
}

// ToTopicFunc writes each record to the topic choose returns for it.
func (s Stream[K, V]) ToTopicFunc(choose func(Record[K, V]) (string, error), keys Serde[K], values Serde[V], opts ...OpOpt) {
	stage := s.top.name("sink", opts)
	s.node.children = append(s.node.children, func(c *procCtx, r Record[K, V]) error {
		topic, err := choose(r)
		if err != nil {
			return opErr(stage, err)
		}
		if topic == "" {
			return opErr(stage, fmt.Errorf("%w: empty output topic", ErrTopology))
		}
		return sink(c, stage, topic, r, keys, values)
	})
}

func sink[K, V any](c *procCtx, stage, topic string, r Record[K, V], keys Serde[K], values Serde[V]) error {
	kb, err := keys.Encode(r.Key)
	if err != nil {
		return &StageError{Stage: stage, Kind: KindSerialize, Err: fmt.Errorf("key: %w", err)}
	}
	vb, err := values.Encode(r.Value)
	if err != nil {
		return &StageError{Stage: stage, Kind: KindSerialize, Err: fmt.Errorf("value: %w", err)}
	}
	c.out = append(c.out, &kgo.Record{Topic: topic, Key: kb, Value: vb, Headers: r.Headers, Timestamp: r.Timestamp})
	return nil
}

// Repartition writes the stream to the internal topic
// <application id>-<name>-repartition and reads it back, so that records
// with equal keys (after SelectKey or Map) land in the same partition and
// are processed in order by one instance. The App creates the topic.
func (s Stream[K, V]) Repartition(keys Serde[K], values Serde[V], opts ...OpOpt) Stream[K, V] {
	name := s.top.name("repartition", opts)
	it := &internalTopic{name: name}
	s.top.internals = append(s.top.internals, it)
	s.node.children = append(s.node.children, func(c *procCtx, r Record[K, V]) error {
		return sink(c, name, it.resolved, r, keys, values)
	})
	return addSource(s.top, &source{internal: it}, keys, values, name+"-source")
}
