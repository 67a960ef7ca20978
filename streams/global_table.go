package streams

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GlobalTable is a table every instance holds completely (Kafka Streams'
// GlobalKTable): each App reads all partitions of its topic, outside the
// consumer group, into a local store. Run restores it up to the topic's
// end (the last stable offset under exactly-once) before it processes any
// record, then keeps it updated from a goroutine of its own; the topic
// itself is the changelog (no changelog topic). Join streams with it with
// JoinGlobal or LeftJoinGlobal, which need no co-partitioning.
type GlobalTable[K, V any] struct {
	spec   *globalSpec
	keys   Serde[K]
	values Serde[V]
}

// globalSpec is a global table of a topology; db is the open store of the
// current run (or TestDriver), nil otherwise.
type globalSpec struct {
	name, topic string
	mu          sync.Mutex
	db          *globalStore
}

// GlobalTableFrom reads topic as a GlobalTable (tombstones delete); its
// store is named by Named (default "global-<n>") and lives under StateDir.
func GlobalTableFrom[K, V any](t *Topology, keys Serde[K], values Serde[V], topic string, opts ...OpOpt) GlobalTable[K, V] {
	spec := &globalSpec{name: t.name("global", opts), topic: topic}
	t.globals = append(t.globals, spec)
	return GlobalTable[K, V]{spec: spec, keys: keys, values: values}
}

func (s *globalSpec) current() *globalStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db
}

func (s *globalSpec) setCurrent(db *globalStore) {
	s.mu.Lock()
	s.db = db
	s.mu.Unlock()
}

// globalStore is a global table's pebble database:
//
//	0x00 "offset" partition(4 BE) → 8 bytes BE: the next offset to read
//	0x01 <key>                    → <value>
//
// Each batch of records is applied with the partitions' next offsets in
// one atomic write; pebble allows the processing goroutine's reads
// concurrently.
type globalStore struct {
	db *pebble.DB
}

func openGlobalStore(dir string, fs vfs.FS) (*globalStore, error) {
	opts := &pebble.Options{}
	if fs != nil {
		opts.FS = fs
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("streams: opening global store %s: %w", dir, err)
	}
	return &globalStore{db: db}, nil
}

func globalOffsetKey(partition int32) []byte {
	return binary.BigEndian.AppendUint32([]byte("\x00offset"), uint32(partition))
}

func (g *globalStore) get(key []byte) ([]byte, bool, error) {
	v, closer, err := g.db.Get(dataKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), true, nil
}

// nextOffset returns where reading partition resumes (-1: from the start).
func (g *globalStore) nextOffset(partition int32) (int64, error) {
	v, closer, err := g.db.Get(globalOffsetKey(partition))
	if errors.Is(err, pebble.ErrNotFound) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v)), nil
}

// apply writes a partition's records (nil values delete) and the offset
// after the last one.
func (g *globalStore) apply(partition int32, recs []*kgo.Record, next int64) error {
	b := g.db.NewBatch()
	defer b.Close()
	for _, r := range recs {
		if err := putRecord(b, r); err != nil {
			return err
		}
	}
	if err := b.Set(globalOffsetKey(partition), binary.BigEndian.AppendUint64(nil, uint64(next)), nil); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// JoinGlobal joins each stream record with the global table's value for
// the key keyOf returns (Kafka Streams' KStream-GlobalKTable join): records
// whose key the table lacks are dropped. The output keeps the stream's key.
func JoinGlobal[K, V, GK, GV, VR any](s Stream[K, V], g GlobalTable[GK, GV], keyOf func(K, V) (GK, error),
	joiner func(key K, value V, tableValue GV) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinGlobal(s, g, keyOf, "global-join", opts, func(k K, v V, gv GV, ok bool) (VR, bool, error) {
		var zero VR
		if !ok {
			return zero, false, nil
		}
		out, err := joiner(k, v, gv)
		return out, true, err
	})
}

// LeftJoinGlobal is JoinGlobal that keeps records whose key the table
// lacks: the joiner gets a nil table value.
func LeftJoinGlobal[K, V, GK, GV, VR any](s Stream[K, V], g GlobalTable[GK, GV], keyOf func(K, V) (GK, error),
	joiner func(key K, value V, tableValue *GV) (VR, error), opts ...OpOpt) Stream[K, VR] {
	return joinGlobal(s, g, keyOf, "global-left-join", opts, func(k K, v V, gv GV, ok bool) (VR, bool, error) {
		out, err := joiner(k, v, ptrIf(gv, ok))
		return out, true, err
	})
}

func joinGlobal[K, V, GK, GV, VR any](s Stream[K, V], g GlobalTable[GK, GV], keyOf func(K, V) (GK, error), kind string, opts []OpOpt,
	join func(K, V, GV, bool) (VR, bool, error)) Stream[K, VR] {
	stage := s.top.name(kind, opts)
	return derive(s, func(out *node[K, VR]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			gk, err := keyOf(r.Key, r.Value)
			if err != nil {
				return opErr(stage, err)
			}
			kb, err := g.keys.Encode(gk)
			if err != nil {
				return &StageError{Stage: stage, Kind: KindSerialize, Err: fmt.Errorf("global key: %w", err)}
			}
			db := g.spec.current()
			if db == nil {
				return &StageError{Stage: stage, Kind: KindOperator, Err: fmt.Errorf("%w: global table %s is not open", ErrRetriable, g.spec.name)}
			}
			b, ok, err := db.get(kb)
			if err != nil {
				return &StageError{Stage: stage, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
			}
			var gv GV
			if ok {
				if gv, err = g.values.Decode(b); err != nil {
					return &StageError{Stage: stage, Kind: KindDeserialize, Err: fmt.Errorf("global value: %w", err)}
				}
			}
			v, emit, err := join(r.Key, r.Value, gv, ok)
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

// globalRunner keeps a run's global tables: restored by start, updated by
// one goroutine until stop.
type globalRunner struct {
	specs  []*globalSpec
	stores []*globalStore
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

// startGlobals opens every global table of the topology under dir,
// restores each to its topic's current end and starts the updater. It
// returns nil when the topology has none.
func (a *App) startGlobals(ctx context.Context) (*globalRunner, error) {
	if len(a.top.globals) == 0 {
		return nil, nil
	}
	g := &globalRunner{specs: a.top.globals}
	fail := func(err error) (*globalRunner, error) {
		g.stop()
		return nil, err
	}
	var topics []string
	for _, spec := range g.specs {
		st, err := openGlobalStore(filepath.Join(a.cfg.stateDir, a.cfg.appID, spec.name), nil)
		if err != nil {
			return fail(err)
		}
		g.stores = append(g.stores, st)
		topics = append(topics, spec.topic)
	}
	// Control records are kept so a restore sees where a transactional
	// topic's last stable offset is.
	opts := []kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...), kgo.KeepControlRecords(),
		kgo.ClientID("strata-streams-" + a.cfg.appID + "-global")}
	if a.cfg.guarantee == ExactlyOnceV2 {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append(opts, a.cfg.clientOpts...)...)
	if err != nil {
		return fail(fmt.Errorf("streams: global table client: %w", err))
	}
	g.cl = cl
	ends, err := a.readableEnds(ctx, cl, topics)
	if err != nil {
		return fail(fmt.Errorf("streams: global table end offsets: %w", err))
	}
	byTopic := map[string]*globalStore{}
	assign := map[string]map[int32]kgo.Offset{}
	pending := map[topicPartition]int64{} // partitions still restoring → end
	for i, spec := range g.specs {
		byTopic[spec.topic] = g.stores[i]
		assign[spec.topic] = map[int32]kgo.Offset{}
		var perr error
		ends.Each(func(lo kadm.ListedOffset) {
			if lo.Topic != spec.topic || perr != nil {
				return
			}
			next, err := g.stores[i].nextOffset(lo.Partition)
			if err != nil {
				perr = err
				return
			}
			if next < 0 {
				assign[spec.topic][lo.Partition] = kgo.NewOffset().AtStart()
				next = 0
			} else {
				assign[spec.topic][lo.Partition] = kgo.NewOffset().At(next)
			}
			if lo.Offset > next {
				pending[topicPartition{spec.topic, lo.Partition}] = lo.Offset
			}
		})
		if perr != nil {
			return fail(perr)
		}
		if len(assign[spec.topic]) == 0 {
			return fail(fmt.Errorf("streams: global table topic %s does not exist; create it first", spec.topic))
		}
	}
	cl.AddConsumePartitions(assign)
	for len(pending) > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		n, err := g.applyFetches(fetches, byTopic, pending)
		if err != nil {
			return fail(err)
		}
		a.stats.restoredRecords.Add(uint64(n))
	}
	for i, spec := range g.specs {
		spec.setCurrent(g.stores[i])
	}
	upCtx, cancel := context.WithCancel(context.Background())
	g.cancel, g.done = cancel, make(chan struct{})
	go func() {
		defer close(g.done)
		for upCtx.Err() == nil {
			fetches := cl.PollFetches(upCtx)
			if upCtx.Err() != nil {
				return
			}
			if _, err := g.applyFetches(fetches, byTopic, nil); err != nil {
				a.cfg.logger.Warn("updating global tables; retrying in a second", "err", err)
				timer := time.NewTimer(time.Second)
				select {
				case <-upCtx.Done():
				case <-timer.C:
				}
				timer.Stop()
			}
		}
	}()
	return g, nil
}

// applyFetches applies fetched records to their global stores and returns
// how many; pending, if not nil, loses the partitions that reached their
// end.
func (g *globalRunner) applyFetches(fetches kgo.Fetches, byTopic map[string]*globalStore, pending map[topicPartition]int64) (int, error) {
	var (
		err     error
		applied int
	)
	fetches.EachError(func(t string, p int32, ferr error) {
		if err == nil && !errors.Is(ferr, context.Canceled) {
			err = fmt.Errorf("streams: reading global table topic %s[%d]: %w", t, p, ferr)
		}
	})
	if err != nil {
		return 0, err
	}
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if err != nil || len(p.Records) == 0 {
			return
		}
		recs := make([]*kgo.Record, 0, len(p.Records))
		for _, r := range p.Records {
			if !r.Attrs.IsControl() {
				recs = append(recs, r)
			}
		}
		next := p.Records[len(p.Records)-1].Offset + 1
		if err = byTopic[p.Topic].apply(p.Partition, recs, next); err != nil {
			return
		}
		applied += len(recs)
		tp := topicPartition{p.Topic, p.Partition}
		if end, ok := pending[tp]; ok && next >= end {
			delete(pending, tp)
		}
	})
	return applied, err
}

// stop ends the updater and closes the client and stores.
func (g *globalRunner) stop() {
	if g == nil {
		return
	}
	if g.cancel != nil {
		g.cancel()
		g.cl.Close()
		<-g.done
	} else if g.cl != nil {
		g.cl.Close()
	}
	for i, st := range g.stores {
		g.specs[i].setCurrent(nil)
		st.db.Close()
	}
}

// driverGlobals opens a TestDriver's global tables in memory; piped
// records of their topics update them at once.
func driverGlobals(t *Topology, fs vfs.FS) (map[string]*globalStore, error) {
	out := map[string]*globalStore{}
	for _, spec := range t.globals {
		st, err := openGlobalStore("/global/"+spec.name, fs)
		if err != nil {
			return nil, err
		}
		spec.setCurrent(st)
		out[spec.topic] = st
	}
	return out, nil
}

// closeDriverGlobals closes a TestDriver's global tables.
func closeDriverGlobals(t *Topology, stores map[string]*globalStore) {
	for _, spec := range t.globals {
		if st := stores[spec.topic]; st != nil && spec.current() == st {
			spec.setCurrent(nil)
		}
	}
	for _, st := range stores {
		st.db.Close()
	}
}
