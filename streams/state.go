package streams

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kgo"
)

// storeSpec is a state store of the topology. Its input is one fixed topic
// (a source topic or a repartition topic): a task is one partition of that
// topic, and the changelog <application id>-<name>-changelog has as many
// partitions, partition p holding the writes of task p.
type storeSpec struct {
	index     int
	name      string
	input     *source // the single fixed-topic source feeding it
	changelog string  // resolved at bind
	// query parses keys and renders values for interactive queries
	// (query.go); nil: the store is not queryable.
	query *queryCodec
}

// inputTopic is the topic whose partitions are the store's tasks.
func (s *storeSpec) inputTopic() string {
	if s.input.internal != nil {
		return s.input.internal.resolved
	}
	return s.input.topics[0]
}

func (t *Topology) addStore(name string, input *source) *storeSpec {
	spec := &storeSpec{index: len(t.stores), name: name, input: input}
	t.stores = append(t.stores, spec)
	return spec
}

type topicPartition struct {
	topic     string
	partition int32
}

// task is one partition of an input topic that feeds stores, with those
// stores open.
type task struct {
	tp     topicPartition
	stores []*store // by storeSpec.index; nil for stores of other topics
	stats  *taskStats
}

// restoreFunc replays the changelogs of stores from their next offsets to
// the changelogs' ends.
type restoreFunc func(ctx context.Context, stores []*store) error

// stateManager owns the open tasks of one run (or of a TestDriver). It is
// used by the processing goroutine only, except noteAcked, which produce
// promises call.
type stateManager struct {
	top     *Topology
	root    string // <state dir>/<application id>
	fs      vfs.FS // nil: the OS
	cache   *pebble.Cache
	logger  *slog.Logger
	restore restoreFunc // nil: nothing to restore (TestDriver)

	// metrics are the App's per-task metrics (not enabled: none kept).
	metrics *taskRegistry
	tasks   map[topicPartition]*task
	byInput map[string][]*storeSpec // by task topic
	// groups maps joined input topics to their task topic (table_source.go):
	// partition p of each is one task. Other topics are their own.
	groups map[string]string

	acked struct {
		sync.Mutex
		next map[topicPartition]int64 // changelog partition → one past the last acked offset
	}
	changelogs map[string]bool

	// queryable are the open stores interactive queries read (query.go);
	// HTTP handlers take a store under the lock and read it without.
	queryable struct {
		sync.Mutex
		stores map[storePartition]*store
	}

	// standby, if not nil, holds standby copies of tasks (standby.go):
	// open takes a task's stores from it.
	standby *standbys
	// local is the changelog position of every task with open stores
	// here, active or standby (the sum of its stores' next offsets): what
	// this member tells the group leader (balancer.go). Written by the
	// processing and standby goroutines, read by the group goroutine.
	local struct {
		sync.Mutex
		offsets map[topicPartition]int64
	}
}

// storePartition names one store of one task.
type storePartition struct {
	name      string
	partition int32
}

func newStateManager(top *Topology, root string, fs vfs.FS, logger *slog.Logger, restore restoreFunc) *stateManager {
	m := &stateManager{top: top, root: root, fs: fs, logger: logger, restore: restore,
		tasks: map[topicPartition]*task{}, byInput: map[string][]*storeSpec{}, changelogs: map[string]bool{},
		groups: top.taskGroups()}
	for _, spec := range top.stores {
		tt := m.taskTopic(spec.inputTopic())
		m.byInput[tt] = append(m.byInput[tt], spec)
		m.changelogs[spec.changelog] = true
	}
	m.acked.next = map[topicPartition]int64{}
	m.queryable.stores = map[storePartition]*store{}
	m.local.offsets = map[topicPartition]int64{}
	m.cache = pebble.NewCache(64 << 20)
	m.metrics = &taskRegistry{}
	return m
}

// taskTopic is the topic naming the tasks of topic's partitions.
func (m *stateManager) taskTopic(topic string) string {
	if g, ok := m.groups[topic]; ok {
		return g
	}
	return topic
}

// stateful reports whether records of topic feed stores.
func (m *stateManager) stateful(topic string) bool { return len(m.byInput[m.taskTopic(topic)]) > 0 }

// task returns the open task of a partition, or nil.
func (m *stateManager) task(topic string, partition int32) *task {
	return m.tasks[topicPartition{m.taskTopic(topic), partition}]
}

// needsOpen reports whether a partition feeds stores that are not open.
func (m *stateManager) needsOpen(topic string, partition int32) bool {
	return m.stateful(topic) && m.task(topic, partition) == nil
}

// open opens the stores of a partition and restores them from their
// changelogs before its records are processed.
func (m *stateManager) open(ctx context.Context, topic string, partition int32) error {
	topic = m.taskTopic(topic)
	tp := topicPartition{topic, partition}
	if m.tasks[tp] != nil {
		return nil
	}
	var t *task
	if m.standby != nil {
		t = m.standby.take(tp)
	}
	if t == nil {
		t = &task{tp: tp, stores: make([]*store, len(m.top.stores))}
	}
	if err := m.openStores(t, func(spec *storeSpec, dir string) (*store, error) {
		return m.openRetrying(ctx, spec, partition, dir)
	}); err != nil {
		m.forgetLocal(tp) // a taken standby's copy is gone
		m.releaseStandby(tp)
		return err
	}
	t.stats = m.metrics.open(tp, t.open())
	if m.restore != nil {
		if err := m.restore(ctx, t.open()); err != nil {
			m.metrics.close(tp, t.open())
			m.closeStores(t)
			m.forgetLocal(tp)
			m.releaseStandby(tp)
			return err
		}
	}
	for _, st := range t.open() {
		st.noteSize()
	}
	m.noteLocal(t)
	m.tasks[tp] = t
	m.queryable.Lock()
	for _, st := range t.open() {
		if st.spec.query != nil {
			m.queryable.stores[storePartition{st.spec.name, partition}] = st
		}
	}
	m.queryable.Unlock()
	return nil
}

// openStores opens the stores of t's task that t lacks with openOne; on
// an error it closes every store of t.
func (m *stateManager) openStores(t *task, openOne func(spec *storeSpec, dir string) (*store, error)) error {
	for _, spec := range m.byInput[t.tp.topic] {
		if t.stores[spec.index] != nil {
			continue
		}
		st, err := openOne(spec, filepath.Join(m.root, spec.name+"-"+strconv.Itoa(int(t.tp.partition))))
		if err != nil {
			m.closeStores(t)
			return err
		}
		t.stores[spec.index] = st
	}
	return nil
}

// openTaskStores opens the stores of task tp once, without waiting for a
// store another App of this process holds (standbys retry later).
func (m *stateManager) openTaskStores(tp topicPartition) (*task, error) {
	t := &task{tp: tp, stores: make([]*store, len(m.top.stores))}
	err := m.openStores(t, func(spec *storeSpec, dir string) (*store, error) {
		if m.fs == nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("streams: state dir: %w", err)
			}
		}
		return openStore(spec, tp.partition, dir, m.fs, m.cache, m.logger)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// open lists the task's open stores.
func (t *task) open() []*store {
	var out []*store
	for _, st := range t.stores {
		if st != nil {
			out = append(out, st)
		}
	}
	return out
}

// closeStores closes the open stores of t.
func (m *stateManager) closeStores(t *task) {
	for i, st := range t.stores {
		if st == nil {
			continue
		}
		st.readers.Wait() // queries that took the store before it left the registry
		if err := st.close(); err != nil {
			m.logger.Warn("closing store", "store", st.spec.name, "partition", st.partition, "err", err)
		}
		t.stores[i] = nil
	}
}

func (m *stateManager) releaseStandby(tp topicPartition) {
	if m.standby != nil {
		m.standby.release(tp)
	}
}

// noteLocal records the changelog position of t's stores.
func (m *stateManager) noteLocal(t *task) {
	var sum int64
	for _, st := range t.open() {
		sum += st.nextOffset
	}
	m.local.Lock()
	m.local.offsets[t.tp] = sum
	m.local.Unlock()
}

func (m *stateManager) forgetLocal(tp topicPartition) {
	m.local.Lock()
	delete(m.local.offsets, tp)
	m.local.Unlock()
}

// localOffsets is a copy of local.offsets.
func (m *stateManager) localOffsets() map[topicPartition]int64 {
	m.local.Lock()
	defer m.local.Unlock()
	out := make(map[topicPartition]int64, len(m.local.offsets))
	for tp, o := range m.local.offsets {
		out[tp] = o
	}
	return out
}

// acquireQueryable returns the open store name of partition for a query,
// or nil; the caller reads its committed state and calls st.readers.Done.
func (m *stateManager) acquireQueryable(name string, partition int32) *store {
	m.queryable.Lock()
	defer m.queryable.Unlock()
	st := m.queryable.stores[storePartition{name, partition}]
	if st != nil {
		st.readers.Add(1)
	}
	return st
}

// queryablePartitions lists the partitions of store name open here.
func (m *stateManager) queryablePartitions(name string) []int32 {
	m.queryable.Lock()
	defer m.queryable.Unlock()
	var ps []int32
	for sp := range m.queryable.stores {
		if sp.name == name {
			ps = append(ps, sp.partition)
		}
	}
	return ps
}

// openRetrying opens a store's database, retrying for a while when another
// App of this process still holds it (its owner closes it after a
// rebalance moved the partition here).
func (m *stateManager) openRetrying(ctx context.Context, spec *storeSpec, partition int32, dir string) (*store, error) {
	if m.fs == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("streams: state dir: %w", err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		st, err := openStore(spec, partition, dir, m.fs, m.cache, m.logger)
		if err == nil || time.Now().After(deadline) {
			return st, err
		}
		m.logger.Info("store busy; retrying", "store", spec.name, "partition", partition, "err", err)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// noteAcked records a produced record's offset if it is a changelog record.
func (m *stateManager) noteAcked(r *kgo.Record) {
	if !m.changelogs[r.Topic] {
		return
	}
	tp := topicPartition{r.Topic, r.Partition}
	m.acked.Lock()
	if r.Offset+1 > m.acked.next[tp] {
		m.acked.next[tp] = r.Offset + 1
	}
	m.acked.Unlock()
}

// overBudget reports whether uncommitted writes should be committed now.
func (m *stateManager) overBudget() bool {
	for _, t := range m.tasks {
		for _, st := range t.stores {
			if st != nil && st.uncommittedBytes() > pendingLimit {
				return true
			}
		}
	}
	return false
}

// commit makes every task's uncommitted writes durable, once their
// changelog records are acknowledged and (exactly-once) the transaction
// that wrote them committed.
func (m *stateManager) commit() error {
	m.acked.Lock()
	next := make(map[topicPartition]int64, len(m.acked.next))
	for tp, o := range m.acked.next {
		next[tp] = o
	}
	m.acked.Unlock()
	for _, t := range m.tasks {
		for _, st := range t.stores {
			if st == nil {
				continue
			}
			o, ok := next[topicPartition{st.spec.changelog, st.partition}]
			if !ok {
				o = -1
			}
			if err := st.commit(o); err != nil {
				return err
			}
			st.noteSize()
		}
		m.noteLocal(t)
	}
	return nil
}

// abort drops every task's uncommitted writes (the transaction that wrote
// their changelog records aborted; the inputs will be processed again).
func (m *stateManager) abort() {
	for _, t := range m.tasks {
		for _, st := range t.stores {
			if st != nil {
				st.abort()
			}
		}
	}
}

// closeTasks closes the tasks of the given partitions, dropping what is
// uncommitted (callers commit first when that is right).
func (m *stateManager) closeTasks(parts map[string][]int32) {
	for topic, ps := range parts {
		for _, p := range ps {
			tp := topicPartition{m.taskTopic(topic), p}
			if t := m.tasks[tp]; t != nil {
				m.closeTask(t)
				delete(m.tasks, tp)
			}
		}
	}
}

func (m *stateManager) closeTask(t *task) {
	m.metrics.close(t.tp, t.stores)
	m.queryable.Lock()
	for _, st := range t.stores {
		if st != nil {
			delete(m.queryable.stores, storePartition{st.spec.name, st.partition})
		}
	}
	m.queryable.Unlock()
	m.closeStores(t)
	m.forgetLocal(t.tp)
	m.releaseStandby(t.tp)
}

// close closes every task and releases the block cache.
func (m *stateManager) close() {
	for tp, t := range m.tasks {
		m.closeTask(t)
		delete(m.tasks, tp)
	}
	if m.cache != nil {
		m.cache.Unref()
		m.cache = nil
	}
}

// partitioner sends changelog records to the partition set on them (the
// task's) and every other record where the client's default would.
type partitioner struct {
	changelogs map[string]bool
	dflt       kgo.Partitioner
}

// keyPartitioner is where the App sends records other than changelog
// records: keyed ones by kgo.KafkaHasher(murmur2) of the key, as Kafka's
// producers do (keyPartition).
func keyPartitioner() kgo.Partitioner { return kgo.UniformBytesPartitioner(64<<10, true, true, nil) }

// keyPartition is the partition of n that keyPartitioner sends key to
// (both default to kgo.KafkaHasher(murmur2)); interactive queries find a
// key's partition with it.
func keyPartition(key []byte, n int) int32 {
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic("").Partition(&kgo.Record{Key: key}, n))
}

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if p.changelogs[topic] {
		return kgo.ManualPartitioner().ForTopic(topic)
	}
	return p.dflt.ForTopic(topic)
}
