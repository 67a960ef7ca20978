package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Source tasks: Poll, convert, produce; then persist the source offsets.
//
// At-least-once (default): records are produced asynchronously; every
// offset.flush.interval.ms (default 5 s here, Kafka's is 60 s) and when
// the task stops, the runtime waits for every produced record to be
// acknowledged, writes the newest offset of each source partition to the
// offset topic, and calls Commit. A crash between the two replays at most
// one interval.
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
	opts = append(opts, kgo.ProducerLinger(5*time.Millisecond), kgo.AllowAutoTopicCreation())
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

	st := &sourceState{pending: map[string]sourceOffset{}, topicsSeen: map[string]bool{}}
	lastFlush := time.Now()
	for {
		if ctx.Err() != nil {
			break
		}
		var recs []SourceRecord
		err := policy.retry(ctx, func() error {
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
			krecs, offsets, err := w.convertSource(ctx, id, recs, keyConv, valConv, policy, st)
			if err != nil {
				return err
			}
			if exactlyOnce {
				if err := w.produceTransaction(ctx, producer, id.Connector, krecs, offsets); err != nil {
					return fmt.Errorf("task %s: %w", id, err)
				}
				if err := task.Commit(ctx); err != nil {
					w.log.Warn("connect: task commit", "task", id.String(), "err", err)
				}
			} else {
				for _, kr := range krecs {
					producer.Produce(ctx, kr, st.onAck)
				}
				for k, o := range offsets {
					st.pending[k] = o
				}
			}
		}
		if err := st.firstErr(); err != nil {
			return fmt.Errorf("task %s: producing: %w", id, err)
		}
		if !exactlyOnce && time.Since(lastFlush) >= w.cfg.OffsetFlushInterval && len(st.pending) > 0 {
			if err := w.flushSourceOffsets(ctx, producer, task, id, st); err != nil {
				return err
			}
			lastFlush = time.Now()
		}
	}
	// Stopping: persist what was acknowledged.
	if !exactlyOnce && len(st.pending) > 0 {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.flushSourceOffsets(fctx, producer, task, id, st); err != nil {
			w.log.Warn("connect: final offset flush", "task", id.String(), "err", err)
		}
		cancel()
	}
	stopped = true
	if err := task.Stop(); err != nil {
		w.log.Warn("connect: stopping task", "task", id.String(), "err", err)
	}
	return nil
}

// sourceState is a source task's bookkeeping between flushes.
type sourceState struct {
	pending    map[string]sourceOffset // newest offset per source partition since the last flush
	topicsSeen map[string]bool
	mu         sync.Mutex
	err        error
}

func (s *sourceState) onAck(_ *kgo.Record, err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *sourceState) firstErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (w *Worker) flushSourceOffsets(ctx context.Context, producer *kgo.Client, task SourceTask, id TaskID, st *sourceState) error {
	if err := producer.Flush(ctx); err != nil {
		return fmt.Errorf("task %s: waiting for acknowledgements: %w", id, err)
	}
	if err := st.firstErr(); err != nil {
		return fmt.Errorf("task %s: producing: %w", id, err)
	}
	offsets := make([]sourceOffset, 0, len(st.pending))
	for _, o := range st.pending {
		offsets = append(offsets, o)
	}
	if err := w.store.writeOffsets(ctx, id.Connector, offsets); err != nil {
		return err
	}
	st.pending = map[string]sourceOffset{}
	if err := task.Commit(ctx); err != nil {
		w.log.Warn("connect: task commit", "task", id.String(), "err", err)
	}
	return nil
}

// convertSource turns a poll batch into Kafka records and the newest offset
// per source partition. A record that fails conversion is skipped under
// errors.tolerance=all and fails the task under none.
func (w *Worker) convertSource(ctx context.Context, id TaskID, recs []SourceRecord, keyConv, valConv Converter, policy errorPolicy, st *sourceState) ([]*kgo.Record, map[string]sourceOffset, error) {
	out := make([]*kgo.Record, 0, len(recs))
	offsets := map[string]sourceOffset{}
	for i := range recs {
		sr := &recs[i]
		if sr.SourcePartition != nil && sr.SourceOffset != nil {
			offsets[canonicalPartition(sr.SourcePartition)] = sourceOffset{Partition: sr.SourcePartition, Offset: sr.SourceOffset}
		}
		if sr.Topic == "" {
			return nil, nil, fmt.Errorf("task %s: source record without a topic", id)
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
				return nil, nil, fmt.Errorf("task %s: %s failed for a record to %s: %w (errors.tolerance=none)", id, stage, sr.Topic, err)
			}
			if policy.logErrors {
				w.log.Warn("connect: skipping source record", "task", id.String(), "stage", stage, "err", err)
			}
			continue
		}
		kr := &kgo.Record{Topic: sr.Topic, Key: key, Value: value, Timestamp: sr.Timestamp}
		if sr.Partition != nil {
			kr.Partition = *sr.Partition
		}
		for _, h := range sr.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		out = append(out, kr)
		if !st.topicsSeen[sr.Topic] {
			st.topicsSeen[sr.Topic] = true
			w.recordTopic(ctx, id, sr.Topic)
		}
	}
	return out, offsets, nil
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
		w.log.Warn("connect: recording topic", "topic", topic, "err", err)
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
