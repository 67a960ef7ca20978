package connect

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Sink tasks: a consumer in group connect-<connector> reads topics (or
// topics.regex) from the earliest offset when the group has none, converts
// each record, hands the batch to Put, calls Flush, and only then commits
// the consumed offsets (once per poll batch), so a crash redelivers at most
// the batch in hand. Rebalances are held until the batch is committed.
//
// Failures: a RetriableError from Put or Flush is retried with capped
// backoff until the task stops (as Kafka Connect does), never dead-lettered.
// A conversion error, or a record Put rejects with any other error, fails
// the task under errors.tolerance=none; under all it goes to the
// dead-letter topic (when errors.deadletterqueue.topic.name is set) and is
// skipped. When a batch fails, its records are retried one by one so that
// only the bad ones are dead-lettered.
func (w *Worker) runSinkTask(ctx context.Context, r *runner, id TaskID, connCfg, taskCfg Config, task SinkTask) error {
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
	opts := append([]kgo.Opt(nil), w.kopts...)
	opts = append(opts,
		kgo.ConsumerGroup("connect-"+id.Connector),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.SessionTimeout(w.consumerSessionTimeout()),
		kgo.HeartbeatInterval(w.consumerSessionTimeout()/3),
		kgo.RebalanceTimeout(w.consumerDuration("consumer.max.poll.interval.ms", 60*time.Second)),
	)
	topics, regex, err := sinkTopics(connCfg)
	if err != nil {
		return err
	}
	if regex != "" {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(regex))
	} else {
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	consumer, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("sink task %s: consumer: %w", id, err)
	}
	defer consumer.CloseAllowingRebalance()
	var dlq *kgo.Client
	if policy.tolerateAll && policy.dlqTopic != "" {
		if dlq, err = kgo.NewClient(append(append([]kgo.Opt(nil), w.kopts...), kgo.AllowAutoTopicCreation())...); err != nil {
			return fmt.Errorf("sink task %s: dead letter producer: %w", id, err)
		}
		defer dlq.Close()
	}
	if err := task.Start(ctx, taskCfg); err != nil {
		return fmt.Errorf("starting task %s: %w", id, err)
	}
	defer func() {
		if err := task.Stop(); err != nil {
			w.taskLog.Warn("connect: stopping task", "task", id.String(), "err", err)
		}
	}()
	w.markRunning(ctx, r)
	for _, t := range topics {
		w.recordTopic(ctx, id, t)
	}

	for {
		fetches := consumer.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			w.taskLog.Warn("connect: sink fetch", "task", id.String(), "topic", topic, "partition", p, "err", err)
		})
		raw := fetches.Records()
		if len(raw) == 0 {
			consumer.AllowRebalance()
			continue
		}
		batch := make([]SinkRecord, 0, len(raw))
		origin := make([]*kgo.Record, 0, len(raw))
		for _, kr := range raw {
			sr, stage, err := convertSink(kr, keyConv, valConv)
			if err != nil {
				if err := policy.deadLetter(ctx, w.taskLog, dlq, id, stage, kr, err); err != nil {
					return fmt.Errorf("task %s: %w", id, err)
				}
				continue
			}
			batch = append(batch, sr)
			origin = append(origin, kr)
		}
		if err := w.putBatch(ctx, task, id, policy, dlq, batch, origin); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := w.flushBatch(ctx, task, id, policy, dlq, batch, origin); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := consumer.CommitRecords(ctx, raw...); err != nil && ctx.Err() == nil {
			w.taskLog.Warn("connect: committing sink offsets", "task", id.String(), "err", err)
		}
		consumer.AllowRebalance()
	}
}

// putBatch hands records to Put with retries; under errors.tolerance=all a
// failed batch is retried record by record and the failing ones are
// dead-lettered.
func (w *Worker) putBatch(ctx context.Context, task SinkTask, id TaskID, policy errorPolicy, dlq *kgo.Client, batch []SinkRecord, origin []*kgo.Record) error {
	if len(batch) == 0 {
		return nil
	}
	err := policy.retryRetriable(ctx, func() error { return task.Put(ctx, batch) })
	if err == nil {
		return nil
	}
	if !policy.tolerateAll || ctx.Err() != nil {
		return fmt.Errorf("task %s put: %w", id, err)
	}
	for i := range batch {
		one := batch[i : i+1]
		if err := policy.retryRetriable(ctx, func() error { return task.Put(ctx, one) }); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := policy.deadLetter(ctx, w.taskLog, dlq, id, "TASK_PUT", origin[i], err); err != nil {
				return fmt.Errorf("task %s: %w", id, err)
			}
		}
	}
	return nil
}

// flushBatch calls Flush, retrying a RetriableError until the task stops.
// Under errors.tolerance=all a Flush that fails otherwise (a constraint
// violation, say) does not fail the task: the task has forgotten the
// records since its last successful Flush (SinkTask's contract), so they
// are written again one at a time, each Put followed by its own Flush, and
// those that still fail are dead-lettered.
func (w *Worker) flushBatch(ctx context.Context, task SinkTask, id TaskID, policy errorPolicy, dlq *kgo.Client, batch []SinkRecord, origin []*kgo.Record) error {
	err := policy.retryRetriable(ctx, func() error { return task.Flush(ctx) })
	if err == nil {
		return nil
	}
	if !policy.tolerateAll || ctx.Err() != nil {
		return fmt.Errorf("task %s flush: %w", id, err)
	}
	w.taskLog.Warn("connect: flush failed; writing the batch one record at a time", "task", id.String(), "records", len(batch), "err", err)
	for i := range batch {
		one := batch[i : i+1]
		err := policy.retryRetriable(ctx, func() error { return task.Put(ctx, one) })
		if err == nil {
			err = policy.retryRetriable(ctx, func() error { return task.Flush(ctx) })
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := policy.deadLetter(ctx, w.taskLog, dlq, id, "TASK_PUT", origin[i], err); err != nil {
				return fmt.Errorf("task %s: %w", id, err)
			}
		}
	}
	return nil
}

func convertSink(kr *kgo.Record, keyConv, valConv Converter) (SinkRecord, string, error) {
	ks, k, err := keyConv.ToConnect(kr.Topic, kr.Key)
	if err != nil {
		return SinkRecord{}, "KEY_CONVERTER", err
	}
	vs, v, err := valConv.ToConnect(kr.Topic, kr.Value)
	if err != nil {
		return SinkRecord{}, "VALUE_CONVERTER", err
	}
	sr := SinkRecord{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, KeySchema: ks, Key: k,
		ValueSchema: vs, Value: v, Timestamp: kr.Timestamp}
	for _, h := range kr.Headers {
		sr.Headers = append(sr.Headers, Header{Key: h.Key, Value: h.Value})
	}
	return sr, "", nil
}

// sinkTopics reads topics or topics.regex (exactly one must be set).
func sinkTopics(cfg Config) ([]string, string, error) {
	var topics []string
	for _, t := range strings.Split(cfg["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			topics = append(topics, t)
		}
	}
	regex := strings.TrimSpace(cfg["topics.regex"])
	switch {
	case len(topics) > 0 && regex != "":
		return nil, "", &ConfigError{"topics", "topics and topics.regex are mutually exclusive"}
	case len(topics) == 0 && regex == "":
		return nil, "", &ConfigError{"topics", "Must configure one of topics or topics.regex"}
	case regex != "":
		if _, err := regexp.Compile(regex); err != nil {
			return nil, "", &ConfigError{"topics.regex", "Invalid regex: " + err.Error()}
		}
	}
	return topics, regex, nil
}

// consumerSessionTimeout is consumer.session.timeout.ms if set, else the
// worker's session timeout, so a dead worker's sink partitions move on the
// same schedule as its tasks.
func (w *Worker) consumerSessionTimeout() time.Duration {
	return w.consumerDuration("consumer.session.timeout.ms", w.cfg.SessionTimeout)
}

// consumerDuration reads a consumer.* override in milliseconds (at least
// 100), else def. consumer.max.poll.interval.ms bounds a sink consumer's
// rebalance (the time a member may take to rejoin) as in Kafka.
func (w *Worker) consumerDuration(key string, def time.Duration) time.Duration {
	if v := w.cfg.Props[key]; v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 100 {
			return time.Duration(n) * time.Millisecond
		}
	}
	return def
}
