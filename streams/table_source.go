package streams

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrNotCoPartitioned is returned by Run when the topics of a join have
// different partition counts (Kafka Streams fails the same way with a
// TopologyException): partition p of each side must hold the same keys.
var ErrNotCoPartitioned = errors.New("streams: join inputs are not co-partitioned")

// change is one update of a table: the key's new value, or its deletion.
type change[V any] struct {
	value   V
	deleted bool
}

// tableView is how joins read a table and follow its updates: get returns
// a key's current value as the current record sees it (from the task's
// store, or computed from other tables for a join's result), and changes
// receives every update, deletions included.
type tableView[K, V any] struct {
	get     func(c *procCtx, key K) (V, bool, error)
	changes *node[K, change[V]]
	// srcs are the sources whose records update the table: a join with
	// it must be co-partitioned with them.
	srcs []*source
}

// storeView reads a table kept in a store of spec (keys and values as the
// serdes encode them) whose updates are emitted by updates (deletions are
// never emitted there).
func storeView[K, V any](spec *storeSpec, keys Serde[K], values Serde[V], updates *node[K, V]) *tableView[K, V] {
	v := &tableView[K, V]{changes: &node[K, change[V]]{}, srcs: []*source{spec.input}}
	v.get = func(c *procCtx, key K) (V, bool, error) {
		var zero V
		st, kb, err := storeAndKey(c, spec, keys, key)
		if err != nil {
			return zero, false, err
		}
		b, ok, err := st.get(kb)
		if err != nil {
			return zero, false, &StageError{Stage: spec.name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
		}
		if !ok {
			return zero, false, nil
		}
		val, err := values.Decode(b)
		if err != nil {
			return zero, false, &StageError{Stage: spec.name, Kind: KindDeserialize, Err: fmt.Errorf("stored value: %w", err)}
		}
		return val, true, nil
	}
	if updates != nil {
		updates.children = append(updates.children, func(c *procCtx, r Record[K, V]) error {
			return v.changes.emit(c, carry(r, r.Key, change[V]{value: r.Value}))
		})
	}
	return v
}

// TableFrom reads a topic as a table (Kafka Streams' builder.table): each
// record is the new value of its key, a tombstone (nil value) deletes the
// key. The table is materialized in a state store named by Named (default
// "table-<n>") whose writes go to the compacted changelog
// <application id>-<store>-changelog, like every store: Strata does not
// reuse the source topic as the changelog (Kafka Streams'
// reuse.ktable.source.topics optimization), so a source topic with delete
// retention, or one written by others while the App is down, never
// corrupts a restore. ToStream emits every update except deletions; ToTopic
// writes deletions too.
func TableFrom[K, V any](t *Topology, keys Serde[K], values Serde[V], topic string, opts ...OpOpt) Table[K, V] {
	name := t.name("table", opts)
	updates := &node[K, V]{}
	src := &source{topics: []string{topic}}
	spec := t.addStore(name, src)
	spec.query = newQueryCodec(keys, values, 0)
	view := storeView(spec, keys, values, nil)
	src.handle = func(c *procCtx, kr *kgo.Record) error {
		k, err := keys.Decode(kr.Key)
		if err != nil {
			return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("key: %w", err)}
		}
		st, kb, err := storeAndKey(c, spec, keys, k)
		if err != nil {
			return err
		}
		r := Record[K, change[V]]{Key: k, Headers: kr.Headers, Timestamp: kr.Timestamp,
			Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset}
		if kr.Value == nil {
			_, existed, err := st.get(kb)
			if err != nil {
				return &StageError{Stage: name, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
			}
			if !existed {
				return nil
			}
			st.put(c, kb, nil, kr.Timestamp)
			r.Value.deleted = true
			return view.changes.emit(c, r)
		}
		v, err := values.Decode(kr.Value)
		if err != nil {
			return &StageError{Stage: name, Kind: KindDeserialize, Err: fmt.Errorf("value: %w", err)}
		}
		st.put(c, kb, kr.Value, kr.Timestamp)
		if err := updates.emit(c, carry(r, k, v)); err != nil {
			return err
		}
		r.Value.value = v
		return view.changes.emit(c, r)
	}
	t.sources = append(t.sources, src)
	return Table[K, V]{top: t, node: updates, src: src, name: name, view: view}
}

// ToTopic writes every update of the table to topic, deletions as
// tombstones (nil values), so the topic can be read back as a table.
func (t Table[K, V]) ToTopic(topic string, keys Serde[K], values Serde[V], opts ...OpOpt) {
	stage := t.top.name("sink", opts)
	t.top.sinks = append(t.top.sinks, topic)
	view := t.joinView()
	if view == nil {
		return
	}
	view.changes.children = append(view.changes.children, func(c *procCtx, r Record[K, change[V]]) error {
		if !r.Value.deleted {
			return sink(c, stage, topic, carry(r, r.Key, r.Value.value), keys, values)
		}
		kb, err := keys.Encode(r.Key)
		if err != nil {
			return &StageError{Stage: stage, Kind: KindSerialize, Err: fmt.Errorf("key: %w", err)}
		}
		c.out = append(c.out, &kgo.Record{Topic: topic, Key: kb, Headers: r.Headers, Timestamp: r.Timestamp})
		return nil
	})
}

// joinView returns the table's view, failing the topology for tables that
// have none (windowed tables).
func (t Table[K, V]) joinView() *tableView[K, V] {
	if t.view == nil {
		t.top.fail(fmt.Errorf("%w: table %s cannot be joined or written as a table (windowed tables cannot)", ErrTopology, t.name))
	}
	return t.view
}

// coPartition records that the sources' topics must be co-partitioned and
// processed by one task per partition.
func (t *Topology) coPartition(srcs ...*source) {
	for _, s := range srcs {
		if s == nil || s.pattern != nil || (s.internal == nil && len(s.topics) != 1) {
			t.fail(fmt.Errorf("%w: a join input must come from one fixed topic (Repartition the stream first)", ErrTopology))
			return
		}
	}
	t.joined = append(t.joined, srcs)
}

func sourceTopic(s *source) string {
	if s.internal != nil {
		return s.internal.resolved
	}
	return s.topics[0]
}

// taskGroups maps every input topic that takes part in a join to the name
// of its group (the smallest topic name of the group): the joined topics'
// partitions p form one task, whose stores are all open while any of them
// is processed. Topics joined to nothing are absent.
func (t *Topology) taskGroups() map[string]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		root := find(p)
		parent[x] = root
		return root
	}
	for _, srcs := range t.joined {
		first := find(sourceTopic(srcs[0]))
		for _, s := range srcs[1:] {
			other := find(sourceTopic(s))
			if other < first {
				first, other = other, first
			}
			parent[other] = first
		}
	}
	groups := make(map[string]string, len(parent))
	for x := range parent {
		groups[x] = find(x)
	}
	return groups
}

// checkCoPartitioned fails with ErrNotCoPartitioned when the topics of a
// task group have different partition counts.
func (a *App) checkCoPartitioned(ctx context.Context) error {
	groups := a.top.taskGroups()
	if len(groups) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...)}, a.cfg.clientOpts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	names := make([]string, 0, len(groups))
	for tp := range groups {
		names = append(names, tp)
	}
	sort.Strings(names)
	topics, err := kadm.NewClient(cl).ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("streams: describing join topics: %w", err)
	}
	counts := map[string][]string{} // group → "topic (n partitions)"
	first := map[string]int{}
	mismatch := false
	for _, tp := range names {
		td, ok := topics[tp]
		if !ok || td.Err != nil || len(td.Partitions) == 0 {
			return fmt.Errorf("streams: join input topic %s does not exist; create it first", tp)
		}
		g, n := groups[tp], len(td.Partitions)
		counts[g] = append(counts[g], fmt.Sprintf("%s (%d)", tp, n))
		if f, ok := first[g]; !ok {
			first[g] = n
		} else if f != n {
			mismatch = true
		}
	}
	if !mismatch {
		return nil
	}
	var parts []string
	for g, f := range first {
		for _, tp := range names {
			if groups[tp] == g && len(topics[tp].Partitions) != f {
				parts = append(parts, strings.Join(counts[g], ", "))
				break
			}
		}
	}
	sort.Strings(parts)
	return fmt.Errorf("%w: topics joined must have the same number of partitions, have %s", ErrNotCoPartitioned, strings.Join(parts, "; "))
}
