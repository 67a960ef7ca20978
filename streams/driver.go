package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDriver runs a Topology in memory, without brokers, like Kafka Streams'
// TopologyTestDriver: pipe input records in, read what the sinks (and the
// dead-letter topic) produced. Repartition topics are looped back at once.
// Error modes apply as in an App. It is for tests and examples; it is not
// safe for concurrent use.
//
// State stores live in memory (pebble on an in-memory file system), one per
// input topic with every record in partition 0; each piped record is
// committed at once, and changelog records appear as the output of the
// changelog topics (<application id>-<store>-changelog). Close releases the
// stores.
type TestDriver struct {
	proc    *processor
	state   *stateManager
	outputs map[string][]*kgo.Record
	offsets map[string]int64
	stats   counters
	intern  map[string]bool
	globals map[string]*globalStore // by topic (global_table.go)
}

// NewTestDriver binds t with the App options that matter in memory
// (ApplicationID, OnError, DeadLetterTopic); others are ignored.
func NewTestDriver(t *Topology, opts ...Opt) (*TestDriver, error) {
	if t.err != nil {
		return nil, t.err
	}
	cfg := defaultConfig()
	cfg.appID = "test-driver"
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t.bind(cfg.appID, cfg.deadLetter)
	d := &TestDriver{outputs: map[string][]*kgo.Record{}, offsets: map[string]int64{}, intern: map[string]bool{}}
	d.proc = &processor{top: t, mode: cfg.errorMode, dlq: cfg.deadLetter, stats: &d.stats}
	if len(t.stores) > 0 {
		d.state = newStateManager(t, "/"+cfg.appID, vfs.NewMem(), cfg.logger, nil)
		d.proc.state = d.state
	}
	for _, it := range t.internals {
		d.intern[it.resolved] = true
	}
	var err error
	if d.globals, err = driverGlobals(t, vfs.NewMem()); err != nil {
		return nil, err
	}
	return d, nil
}

// Pipe processes one input record (Topic, Key, Value, Headers, Timestamp
// are used; partition 0 and the next offset of the topic are assigned). It
// returns the error that would stop an App (ErrorFail mode).
func (d *TestDriver) Pipe(r *kgo.Record) error {
	queue := []*kgo.Record{r}
	for len(queue) > 0 {
		in := queue[0]
		queue = queue[1:]
		in.Offset = d.offsets[in.Topic]
		d.offsets[in.Topic]++
		if in.Timestamp.IsZero() {
			in.Timestamp = time.Unix(0, 0)
		}
		if g := d.globals[in.Topic]; g != nil {
			if err := g.apply(0, []*kgo.Record{in}, in.Offset+1); err != nil {
				return err
			}
			continue
		}
		if d.state != nil && d.state.needsOpen(in.Topic, 0) {
			if err := d.state.open(context.Background(), in.Topic, 0); err != nil {
				return err
			}
		}
		outs, err := d.proc.process(in)
		if err != nil {
			return err
		}
		if d.state != nil {
			if err := d.state.commit(); err != nil {
				return err
			}
		}
		for _, o := range outs {
			if d.intern[o.Topic] {
				c := *o
				queue = append(queue, &c)
				continue
			}
			o.Offset = int64(len(d.outputs[o.Topic]))
			d.outputs[o.Topic] = append(d.outputs[o.Topic], o)
		}
	}
	return nil
}

// Close closes the driver's state stores.
func (d *TestDriver) Close() {
	closeDriverGlobals(d.proc.top, d.globals)
	d.globals = nil
	if d.state != nil {
		d.state.close()
		d.state = nil
		d.proc.state = nil
	}
}

// Output returns and forgets the records produced to topic so far.
func (d *TestDriver) Output(topic string) []*kgo.Record {
	rs := d.outputs[topic]
	delete(d.outputs, topic)
	return rs
}

// Stats returns the driver's counters.
func (d *TestDriver) Stats() Stats {
	return Stats{Job: "test-driver", Instances: 1, RecordsIn: d.stats.in.Load(),
		Errors: d.stats.errors.Load(), DeadLettered: d.stats.deadLettered.Load(), Skipped: d.stats.skipped.Load(),
		Failed: d.stats.failed.Load(), LateDropped: d.stats.lateDropped.Load()}
}

// PipeInput encodes key and value with the serdes and pipes them to topic.
func PipeInput[K, V any](d *TestDriver, topic string, keys Serde[K], values Serde[V], key K, value V) error {
	kb, err := keys.Encode(key)
	if err != nil {
		return fmt.Errorf("streams: encoding key: %w", err)
	}
	vb, err := values.Encode(value)
	if err != nil {
		return fmt.Errorf("streams: encoding value: %w", err)
	}
	return d.Pipe(&kgo.Record{Topic: topic, Key: kb, Value: vb})
}

// ReadOutput returns and forgets topic's records so far, decoded.
func ReadOutput[K, V any](d *TestDriver, topic string, keys Serde[K], values Serde[V]) ([]KeyValue[K, V], error) {
	var out []KeyValue[K, V]
	for _, r := range d.Output(topic) {
		k, err := keys.Decode(r.Key)
		if err != nil {
			return out, err
		}
		v, err := values.Decode(r.Value)
		if err != nil {
			return out, err
		}
		out = append(out, KV(k, v))
	}
	return out, nil
}
