package connect

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Source tasks: Poll, convert, produce; then persist the source offsets.
//
// At-least-once (default): records are produced asynchronously, with a
// context the task's cancellation does not reach; every
// offset.flush.interval.ms (default 5 s here, Kafka's is 60 s) and when
// the task stops (waiting up to 3/4 of task.shutdown.graceful.timeout.ms),
// the runtime waits for the produced records' acknowledgements and writes,
// per source partition, the offset of the newest record that was
// acknowledged together with every earlier record of that partition; then
// it calls Commit. A record that failed (any error, cancellation included)
// never lets its offset, or a later one of its partition, be written, and
// fails the task. A crash between the two replays at most one interval.
//
// Exactly-once (exactly.once.source.support=enabled, KIP-618): a
// transactional producer per task (transactional.id
// <group.id>-<connector>-<task>) writes each poll batch's records and their
// offset records in one transaction; offsets are read read_committed, so
// a restarted task resumes exactly after the last committed batch, and a
// zombie task is fenced by the producer epoch.
func (w *Worker) runSourceTask(ctx context.Context, r *runner, id TaskID, connCfg, taskCfg Config, task SourceTask) error {
	keyConv, err := converterFor("key", w.cfg.Props, connCfg)
	if err != nil {
		return err
	}
	valConv, err := converterFor("value", w.cfg.Props, connCfg)
	if err != nil {
		return err
	}
	policy, cerrs := parseErrorPolicy(connCfg)
	if len(cerrs) > 0 {
		return &cerrs[0]
	}
	exactlyOnce := exactlyOnceSource(w.cfg, connCfg)
	opts := append([]kgo.Opt(nil), w.kopts...)
	opts = append(opts, kgo.ProducerLinger(5*time.Millisecond), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(sourcePartitioner{kgo.StickyKeyPartitioner(nil)}))
	if exactlyOnce {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("%s-%s-%d", w.cfg.GroupID, id.Connector, id.Task)),
			kgo.TransactionTimeout(60*time.Second))
	}
	producer, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("source task %s: producer: %w", id, err)
	}
	defer producer.Close()

	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if exactlyOnce {
		// InitProducerId first: it fences a zombie copy of this task and
		// aborts its open transaction, so the offsets read next are final.
		if _, _, err := producer.ProducerID(syncCtx); err != nil {
			return fmt.Errorf("source task %s: initializing the transactional producer: %w", id, err)
		}
	}
	if err := w.store.sync(syncCtx); err != nil {
		return err
	}
	cancel()
	if err := task.Start(ctx, taskCfg, offsetReader{w.store, id.Connector}); err != nil {
		return fmt.Errorf("starting task %s: %w", id, err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = task.Stop()
		}
	}()
	w.markRunning(ctx, r)

	st := newSourceState(!exactlyOnce)
	// Records are produced with a context the task's cancellation does not
	// reach: stopping the task must not fail records already handed to the
	// producer (their offsets would otherwise look acknowledged). The final
	// flush below bounds how long a stop waits for them.
	produceCtx := context.WithoutCancel(ctx)
	if !exactlyOnce {
		// On every way out (stop, poll or produce failure), persist the
		// offsets whose records, and all earlier records of the same source
		// partition, were acknowledged.
		defer func() {
			if stopped || !st.hasPending() {
				return
			}
			fctx, cancel := context.WithTimeout(context.Background(), w.finalFlushTimeout())
			defer cancel()
			if err := w.flushSourceOffsets(fctx, producer, task, id, st); err != nil {
				w.taskLog.Warn("connect: final offset flush", "task", id.String(), "err", err)
			}
		}()
	}
	lastFlush := time.Now()
	for {
		if ctx.Err() != nil {
			break
		}
		var recs []SourceRecord
		err := policy.retryRetriable(ctx, func() error {
			var err error
			recs, err = task.Poll(ctx)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("task %s poll: %w", id, err)
		}
		if len(recs) > 0 {
			krecs, refs, offsets, err := w.convertSource(ctx, id, recs, keyConv, valConv, policy, st)
			if err != nil {
				return err
			}
			if exactlyOnce {
				if err := w.produceTransaction(ctx, producer, id.Connector, krecs, offsets); err != nil {
					return fmt.Errorf("task %s: %w", id, err)
				}
				if err := task.Commit(ctx); err != nil {
					w.taskLog.Warn("connect: task commit", "task", id.String(), "err", err)
				}
			} else {
				for i, kr := range krecs {
					ref := refs[i]
					producer.Produce(produceCtx, kr, func(_ *kgo.Record, err error) { st.ack(ref, err) })
				}
			}
		}
		if err := st.firstErr(); err != nil {
			return fmt.Errorf("task %s: producing: %w", id, err)
		}
		if !exactlyOnce && time.Since(lastFlush) >= w.cfg.OffsetFlushInterval && st.hasPending() {
			if err := w.flushSourceOffsets(ctx, producer, task, id, st); err != nil {
				if ctx.Err() != nil {
					break // stopping: the deferred final flush takes over
				}
				return err
			}
			lastFlush = time.Now()
		}
	}
	if !exactlyOnce && st.hasPending() {
		// Stopping: persist what was acknowledged before the task stops.
		fctx, cancel := context.WithTimeout(context.Background(), w.finalFlushTimeout())
		if err := w.flushSourceOffsets(fctx, producer, task, id, st); err != nil {
			w.taskLog.Warn("connect: final offset flush", "task", id.String(), "err", err)
		}
		cancel()
	}
	stopped = true
	if err := task.Stop(); err != nil {
		w.taskLog.Warn("connect: stopping task", "task", id.String(), "err", err)
	}
	return nil
}

// finalFlushTimeout bounds a stopping task's wait for acknowledgements:
// three quarters of task.shutdown.graceful.timeout.ms, leaving time to
// write the offsets before the task would be abandoned.
func (w *Worker) finalFlushTimeout() time.Duration {
	d := w.cfg.TaskShutdownTimeout
	if d <= 0 {
		d = defaultTaskShutdown * time.Millisecond
	}
	return d * 3 / 4
}

// sourceState is a source task's bookkeeping between flushes: for every
// source partition, the records produced since the last flush in order,
// each with its offset and whether the producer acknowledged it.
type sourceState struct {
	topicsSeen map[string]bool
	tracking   bool

	mu      sync.Mutex
	queues  map[string][]*pendingRecord // canonical source partition → records in produce order
	err     error
	pending int // records in queues
}

// pendingRecord is one produced source record awaiting its acknowledgement.
// A record dropped by errors.tolerance=all is acknowledged at once.
type pendingRecord struct {
	offset sourceOffset
	acked  bool
	failed bool
}

// newSourceState returns the bookkeeping of a task; tracking is off for
// exactly-once tasks, whose offsets travel in each batch's transaction.
func newSourceState(tracking bool) *sourceState {
	return &sourceState{topicsSeen: map[string]bool{}, queues: map[string][]*pendingRecord{}, tracking: tracking}
}

// track queues a record of a source partition; it returns nil for a record
// without a source partition or offset (nothing to persist).
func (s *sourceState) track(sr *SourceRecord) *pendingRecord {
	if !s.tracking || sr.SourcePartition == nil || sr.SourceOffset == nil {
		return nil
	}
	p := &pendingRecord{offset: sourceOffset{Partition: sr.SourcePartition, Offset: sr.SourceOffset}}
	key := canonicalPartition(sr.SourcePartition)
	s.mu.Lock()
	s.queues[key] = append(s.queues[key], p)
	s.pending++
	s.mu.Unlock()
	return p
}

// ack records the producer's answer for a record. Any error, a
// cancellation included, means the record was not written: its offset, and
// every later one of its source partition, is never persisted, and the task
// fails.
func (s *sourceState) ack(p *pendingRecord, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		if p != nil {
			p.failed = true
		}
		return
	}
	if p != nil {
		p.acked = true
	}
}

func (s *sourceState) firstErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sourceState) hasPending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending > 0
}

// takeCommittable removes, per source partition, the acknowledged records
// at the front of the queue and returns the newest offset among them: the
// offset of a record is only persisted when it and every earlier record of
// its source partition were written.
func (s *sourceState) takeCommittable() []sourceOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sourceOffset
	for key, q := range s.queues {
		n := 0
		for n < len(q) && q[n].acked {
			n++
		}
		if n == 0 {
			continue
		}
		out = append(out, q[n-1].offset)
		s.pending -= n
		if n == len(q) {
			delete(s.queues, key)
		} else {
			s.queues[key] = q[n:]
		}
	}
	return out
}

// flushSourceOffsets waits for the produced records' acknowledgements and
// writes the offsets takeCommittable allows, even when the wait ended early
// (what was acknowledged is safe to persist).
func (w *Worker) flushSourceOffsets(ctx context.Context, producer *kgo.Client, task SourceTask, id TaskID, st *sourceState) error {
	flushErr := producer.Flush(ctx)
	offsets := st.takeCommittable()
	if len(offsets) > 0 {
		// Acknowledged offsets are written even when ctx ended while
		// waiting (a stop), within a bound of their own.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := w.store.writeOffsets(wctx, id.Connector, offsets)
		cancel()
		if err != nil {
			return err
		}
	}
	if flushErr != nil {
		return fmt.Errorf("task %s: waiting for acknowledgements: %w", id, flushErr)
	}
	if err := st.firstErr(); err != nil {
		return fmt.Errorf("task %s: producing: %w", id, err)
	}
	if len(offsets) > 0 {
		if err := task.Commit(ctx); err != nil {
			w.taskLog.Warn("connect: task commit", "task", id.String(), "err", err)
		}
	}
	return nil
}

// sourcePartitioner honours SourceRecord.Partition (carried as a
// non-negative kgo.Record.Partition) and leaves records without one
// (Partition -1) to the fallback, Kafka's murmur2 key hashing with sticky
// batches for keyless records.
type sourcePartitioner struct{ fallback kgo.Partitioner }

func (p sourcePartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &sourceTopicPartitioner{p.fallback.ForTopic(topic)}
}

type sourceTopicPartitioner struct{ fallback kgo.TopicPartitioner }

// RequiresConsistency is true for an explicit partition: the index chosen
// must be the partition number, not an index among writable partitions.
func (p *sourceTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || p.fallback.RequiresConsistency(r)
}

// Partition returns an explicit partition as is (one the topic lacks fails
// the record), else asks the fallback.
func (p *sourceTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 {
		return int(r.Partition)
	}
	return p.fallback.Partition(r, n)
}

// OnNewBatch forwards to a sticky fallback.
func (p *sourceTopicPartitioner) OnNewBatch() {
	if nb, ok := p.fallback.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

// convertSource turns a poll batch into Kafka records and the newest offset
// per source partition. A record that fails conversion is skipped under
// errors.tolerance=all and fails the task under none. Without exactly-once
// (refs != nil on return), every record with a source offset is tracked in
// st; refs[i] is krecs[i]'s entry.
func (w *Worker) convertSource(ctx context.Context, id TaskID, recs []SourceRecord, keyConv, valConv Converter, policy errorPolicy, st *sourceState) (krecs []*kgo.Record, refs []*pendingRecord, offsets map[string]sourceOffset, err error) {
	out := make([]*kgo.Record, 0, len(recs))
	refs = make([]*pendingRecord, 0, len(recs))
	offsets = map[string]sourceOffset{}
	for i := range recs {
		if recs[i].Topic == "" {
			return nil, nil, nil, fmt.Errorf("task %s: source record without a topic", id)
		}
	}
	for i := range recs {
		sr := &recs[i]
		if sr.SourcePartition != nil && sr.SourceOffset != nil {
			offsets[canonicalPartition(sr.SourcePartition)] = sourceOffset{Partition: sr.SourcePartition, Offset: sr.SourceOffset}
		}
		key, err := keyConv.FromConnect(sr.Topic, sr.KeySchema, sr.Key)
		stage := "KEY_CONVERTER"
		var value []byte
		if err == nil {
			stage = "VALUE_CONVERTER"
			value, err = valConv.FromConnect(sr.Topic, sr.ValueSchema, sr.Value)
		}
		if err != nil {
			if !policy.tolerateAll {
				return nil, nil, nil, fmt.Errorf("task %s: %s failed for a record to %s: %w (errors.tolerance=none)", id, stage, sr.Topic, err)
			}
			if policy.logErrors {
				w.taskLog.Warn("connect: skipping source record", "task", id.String(), "stage", stage, "err", err)
			}
			// Skipped: nothing to wait for, its offset may pass.
			st.ack(st.track(sr), nil)
			continue
		}
		kr := &kgo.Record{Topic: sr.Topic, Key: key, Value: value, Timestamp: sr.Timestamp, Partition: -1}
		if sr.Partition != nil {
			if *sr.Partition < 0 {
				return nil, nil, nil, fmt.Errorf("task %s: source record for %s with negative partition %d", id, sr.Topic, *sr.Partition)
			}
			kr.Partition = *sr.Partition
		}
		for _, h := range sr.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		out = append(out, kr)
		refs = append(refs, st.track(sr))
		if !st.topicsSeen[sr.Topic] {
			st.topicsSeen[sr.Topic] = true
			w.recordTopic(ctx, id, sr.Topic)
		}
	}
	return out, refs, offsets, nil
}

// recordTopic notes in the status topic that a connector used a topic
// (GET /connectors/{name}/topics, KIP-558).
func (w *Worker) recordTopic(ctx context.Context, id TaskID, topic string) {
	known := false
	w.store.view(func(st *clusterState) { known = st.topics[id.Connector][topic] })
	if known {
		return
	}
	var v topicStatusValue
	v.Topic.Name, v.Topic.Connector, v.Topic.Task, v.Topic.Discover = topic, id.Connector, id.Task, time.Now().UnixMilli()
	if err := w.store.writeStatus(ctx, "topic-"+topic+"-connector-"+id.Connector, v); err != nil {
		w.taskLog.Warn("connect: recording topic", "topic", topic, "err", err)
	}
}

// produceTransaction writes records and their offsets atomically.
func (w *Worker) produceTransaction(ctx context.Context, producer *kgo.Client, connector string, recs []*kgo.Record, offsets map[string]sourceOffset) error {
	if err := producer.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	all := append([]*kgo.Record(nil), recs...)
	for _, o := range offsets {
		rec, err := w.store.offsetRecord(connector, o.Partition, o.Offset)
		if err != nil {
			_ = producer.EndTransaction(ctx, kgo.TryAbort)
			return err
		}
		all = append(all, rec)
	}
	if err := producer.ProduceSync(ctx, all...).FirstErr(); err != nil {
		_ = producer.AbortBufferedRecords(ctx)
		_ = producer.EndTransaction(ctx, kgo.TryAbort)
		return fmt.Errorf("producing in transaction: %w", err)
	}
	if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// exactlyOnceSource reports whether a source connector's tasks use
// transactions: the worker's exactly.once.source.support=enabled, or the
// connector's exactly.once.support=required|requested (Kafka's per-connector
// name) or exactly.once.source.support=enabled.
func exactlyOnceSource(worker WorkerConfig, connCfg Config) bool {
	switch strings.ToLower(strings.TrimSpace(connCfg["exactly.once.support"])) {
	case "required", "requested":
		return true
	}
	return worker.ExactlyOnceSource || strings.EqualFold(connCfg["exactly.once.source.support"], "enabled")
}
