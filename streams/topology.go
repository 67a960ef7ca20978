package streams

import (
	"cmp"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Topology is a graph of sources, operators and sinks. Build it with From or
// FromRegex and the operators, then run it with NewApp (against brokers) or
// NewTestDriver (in memory). A Topology must not be changed once an App or
// driver uses it.
type Topology struct {
	nextID    int
	sources   []*source
	internals []*internalTopic
	stores    []*storeSpec
	sinks     []string // the fixed topics of To sinks
	err       error    // first build error, reported by NewApp

	// joined are the sources each join reads together (join.go).
	joined [][]*source
	// globals are the global tables (global_table.go).
	globals []*globalSpec

	// excluded are the topics the topology itself writes (sinks, the
	// dead-letter topic, repartition topics): pattern sources never read
	// them, so a pattern matching its own output cannot loop.
	excluded map[string]bool

	mu     sync.Mutex
	routes map[string][]func(*procCtx, *kgo.Record) error // by input topic
}

// NewTopology returns an empty topology.
func NewTopology() *Topology { return &Topology{} }

type source struct {
	topics   []string
	pattern  *regexp.Regexp
	internal *internalTopic // a repartition topic this source reads
	handle   func(*procCtx, *kgo.Record) error
}

// internalTopic is a topic the App owns (Repartition), named
// <application id>-<name>-repartition once the App binds the topology.
type internalTopic struct {
	name     string
	resolved string
	// suffix ends the resolved name instead of "repartition"; like, if
	// set, is the source whose topic's partition count the App creates
	// the topic with (a foreign-key join's topics, join_fk.go).
	suffix string
	like   *source
}

func (t *Topology) name(kind string, opts []OpOpt) string {
	t.nextID++
	for _, o := range opts {
		if o.name != "" {
			return o.name
		}
	}
	return fmt.Sprintf("%s-%d", kind, t.nextID)
}

func (t *Topology) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// bind resolves internal topic names for an application id and collects
// the topics the topology writes (with the dead-letter topic, if any).
func (t *Topology) bind(appID, deadLetter string) {
	excluded := map[string]bool{}
	for _, it := range t.internals {
		it.resolved = appID + "-" + it.name + "-" + cmp.Or(it.suffix, "repartition")
		excluded[it.resolved] = true
	}
	for _, st := range t.stores {
		st.changelog = appID + "-" + st.name + "-changelog"
		excluded[st.changelog] = true
	}
	for _, tp := range t.sinks {
		excluded[tp] = true
	}
	if deadLetter != "" {
		excluded[deadLetter] = true
	}
	t.mu.Lock()
	t.excluded = excluded
	t.routes = nil
	t.mu.Unlock()
}

// outputTopics returns the topics the topology writes that pattern sources
// must not read, sorted.
func (t *Topology) outputTopics() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.excluded))
	for tp := range t.excluded {
		out = append(out, tp)
	}
	sort.Strings(out)
	return out
}

// subscription is what the client consumes: fixed topics and, if any source
// uses a pattern, one combined regular expression.
func (t *Topology) subscription() (topics []string, patterns []string) {
	seen := map[string]bool{}
	for _, s := range t.sources {
		switch {
		case s.pattern != nil:
			patterns = append(patterns, s.pattern.String())
		case s.internal != nil:
			if !seen[s.internal.resolved] {
				seen[s.internal.resolved] = true
				topics = append(topics, s.internal.resolved)
			}
		default:
			for _, tp := range s.topics {
				if !seen[tp] {
					seen[tp] = true
					topics = append(topics, tp)
				}
			}
		}
	}
	return topics, patterns
}

// handlers returns the source handlers for an input topic, cached.
func (t *Topology) handlers(topic string) []func(*procCtx, *kgo.Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if hs, ok := t.routes[topic]; ok {
		return hs
	}
	var hs []func(*procCtx, *kgo.Record) error
	for _, s := range t.sources {
		match := false
		switch {
		case s.pattern != nil:
			// A pattern never reads what the topology writes itself.
			match = !t.excluded[topic] && s.pattern.MatchString(topic)
		case s.internal != nil:
			match = s.internal.resolved == topic
		default:
			for _, tp := range s.topics {
				match = match || tp == topic
			}
		}
		if match {
			hs = append(hs, s.handle)
		}
	}
	if t.routes == nil {
		t.routes = map[string][]func(*procCtx, *kgo.Record) error{}
	}
	t.routes[topic] = hs
	return hs
}

// OpOpt configures one operator.
type OpOpt struct {
	name      string
	retention time.Duration
}

// Named names an operator; the name appears in error headers
// (strata.error.stage) and in errors. Unnamed operators get "<kind>-<n>".
func Named(name string) OpOpt { return OpOpt{name: name} }

// Retention keeps a windowed aggregation's windows in its store (for
// interactive queries) until stream time passes their end by d (Kafka
// Streams' Materialized.withRetention). The default and the minimum are the
// window size + grace (sliding windows: 2 × size + grace). Other operators
// ignore it.
func Retention(d time.Duration) OpOpt { return OpOpt{retention: d} }

// retentionOf returns the Retention among opts in ms, or 0.
func retentionOf(opts []OpOpt) int64 {
	for _, o := range opts {
		if o.retention != 0 {
			return o.retention.Milliseconds()
		}
	}
	return 0
}

// Stream is a typed stream of records in a topology.
type Stream[K, V any] struct {
	top  *Topology
	node *node[K, V]
	// src is the one source whose records reach this stream, nil after a
	// Merge of several; rekeyed says an operator may have changed keys
	// since. Grouping repartitions unless src is one fixed topic and the
	// keys are the source's.
	src     *source
	rekeyed bool
}

// node is where an operator's output goes: every child receives every record.
type node[K, V any] struct {
	children []func(*procCtx, Record[K, V]) error
}

func (n *node[K, V]) emit(c *procCtx, r Record[K, V]) error {
	for _, child := range n.children {
		if err := child(c, r); err != nil {
			return err
		}
	}
	return nil
}

// derive adds a child to s that feeds a new stream, returning the child's
// output node.
func derive[K, V, K2, V2 any](s Stream[K, V], fn func(out *node[K2, V2]) func(*procCtx, Record[K, V]) error) Stream[K2, V2] {
	out := &node[K2, V2]{}
	s.node.children = append(s.node.children, fn(out))
	return Stream[K2, V2]{top: s.top, node: out, src: s.src, rekeyed: s.rekeyed}
}

// From reads the named topics, decoding keys and values with the serdes. A
// record that fails to decode is an error of stage "<name>" (by default
// "source-<n>"), handled by the App's error mode.
func From[K, V any](t *Topology, keys Serde[K], values Serde[V], topics []string, opts ...OpOpt) Stream[K, V] {
	if len(topics) == 0 {
		t.fail(fmt.Errorf("%w: From needs at least one topic", ErrTopology))
	}
	return addSource(t, &source{topics: topics}, keys, values, t.name("source", opts))
}

// FromRegex reads every topic whose name matches pattern (Go regexp syntax,
// matched against the whole name when anchored), except the topics the
// topology itself writes: the topics of To sinks, the dead-letter topic and
// repartition topics (topics chosen at run time by ToTopicFunc are not
// known in advance and are not excluded).
func FromRegex[K, V any](t *Topology, keys Serde[K], values Serde[V], pattern string, opts ...OpOpt) Stream[K, V] {
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.fail(fmt.Errorf("%w: FromRegex %q: %w", ErrTopology, pattern, err))
		re = regexp.MustCompile(`\A\z`)
	}
	return addSource(t, &source{pattern: re}, keys, values, t.name("source", opts))
}

func addSource[K, V any](t *Topology, s *source, keys Serde[K], values Serde[V], stage string) Stream[K, V] {
	out := &node[K, V]{}
	s.handle = func(c *procCtx, kr *kgo.Record) error {
		k, err := keys.Decode(kr.Key)
		if err != nil {
			return &StageError{Stage: stage, Kind: KindDeserialize, Err: fmt.Errorf("key: %w", err)}
		}
		v, err := values.Decode(kr.Value)
		if err != nil {
			return &StageError{Stage: stage, Kind: KindDeserialize, Err: fmt.Errorf("value: %w", err)}
		}
		return out.emit(c, Record[K, V]{
			Key: k, Value: v, Headers: kr.Headers, Timestamp: kr.Timestamp,
			Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset,
		})
	}
	t.sources = append(t.sources, s)
	return Stream[K, V]{top: t, node: out, src: s}
}
