package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchMaxWait is how long one Read waits at the end of the topic.
const fetchMaxWait = 500 * time.Millisecond

// kafkaLog is Log over partition 0 of the _schemas topic, through one
// franz-go client: an idempotent acks=all producer for Append, ListOffsets
// for EndOffset, and Fetch requests of its own for Read, so that it knows
// where the next record starts even when compaction emptied a range (a
// kgo consumer hides such empty fetches).
type kafkaLog struct {
	client *kgo.Client
	admin  *kadm.Client
	topic  string

	mu struct {
		sync.Mutex
		leader  int32 // -1: look it up
		topicID [16]byte
	}
}

// openKafkaLog connects, creates the topic if it is missing (compacted,
// one partition, replication factor min(cfg's, brokers)) and checks it
// if it exists.
func openKafkaLog(ctx context.Context, cfg Config, log *slog.Logger) (*kafkaLog, error) {
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID("strata-schema-registry"),
		kgo.DialTimeout(5 * time.Second),
		// The topic may be new: its leader must be learned in well under
		// kgo's default of 5 s between metadata refreshes.
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic(cfg.Topic),
	}, cfg.ClientOptions...)
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("registry: Kafka client: %w", err)
	}
	l := &kafkaLog{client: client, admin: kadm.NewClient(client), topic: cfg.Topic}
	l.mu.leader = -1
	if err := l.ensureTopic(ctx, cfg.ReplicationFactor, log); err != nil {
		client.Close()
		return nil, err
	}
	if err := l.waitReady(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return l, nil
}

// waitReady waits until the partition answers ListOffsets: a topic just
// created has no leader for a moment.
func (l *kafkaLog) waitReady(ctx context.Context) error {
	backoff := 20 * time.Millisecond
	for {
		_, err := l.EndOffset(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("registry: topic %s never became readable: %w (last: %v)", l.topic, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (l *kafkaLog) ensureTopic(ctx context.Context, rf int16, log *slog.Logger) error {
	topics, err := l.admin.ListTopics(ctx, l.topic)
	if err != nil {
		return fmt.Errorf("registry: describing topic %s: %w", l.topic, err)
	}
	if td, ok := topics[l.topic]; ok && td.Err == nil {
		if n := len(td.Partitions); n != 1 {
			return fmt.Errorf("registry: topic %s has %d partitions; the schemas topic must have exactly one", l.topic, n)
		}
		configs, err := l.admin.DescribeTopicConfigs(ctx, l.topic)
		if err != nil {
			return fmt.Errorf("registry: describing topic %s: %w", l.topic, err)
		}
		rc, err := configs.On(l.topic, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			return fmt.Errorf("registry: describing topic %s: %w", l.topic, err)
		}
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil && !strings.Contains(*c.Value, "compact") {
				return fmt.Errorf("registry: topic %s has cleanup.policy=%s; the schemas topic must be compacted, or schemas are lost to retention", l.topic, *c.Value)
			}
		}
		return nil
	}
	rf, brokers, err := l.replicationFactor(ctx, rf, log)
	if err != nil {
		return err
	}
	compact := "compact"
	resp, err := l.admin.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &compact}, l.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("registry: creating topic %s: %w", l.topic, err)
	}
	if err == nil {
		log.Info("created the schemas topic", "topic", l.topic, "replication_factor", rf, "live_brokers", brokers)
	}
	return nil
}

// replicationFactor is the one to create the topic with: asked exactly
// (waiting until that many brokers are alive), or for 0 Confluent's
// default, min(3, live brokers).
func (l *kafkaLog) replicationFactor(ctx context.Context, asked int16, log *slog.Logger) (rf int16, live int, err error) {
	logged := false
	for {
		brokers, err := l.admin.ListBrokers(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("registry: listing brokers: %w", err)
		}
		live = len(brokers)
		switch {
		case asked == 0:
			return int16(max(1, min(DefaultReplicationFactor, live))), live, nil
		case live >= int(asked):
			return asked, live, nil
		case !logged:
			log.Info("waiting for brokers to create the schemas topic", "topic", l.topic, "replication_factor", asked, "live_brokers", live)
			logged = true
		}
		select {
		case <-ctx.Done():
			return 0, live, fmt.Errorf("registry: creating topic %s with replication factor %d: %d live brokers: %w", l.topic, asked, live, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// EndOffset implements Log: the partition's high watermark.
func (l *kafkaLog) EndOffset(ctx context.Context) (int64, error) {
	offsets, err := l.admin.ListEndOffsets(ctx, l.topic)
	if err != nil {
		return 0, err
	}
	o, ok := offsets.Lookup(l.topic, 0)
	if !ok {
		return 0, fmt.Errorf("no offset for %s partition 0", l.topic)
	}
	return o.Offset, o.Err
}

// Append implements Log.
func (l *kafkaLog) Append(ctx context.Context, records ...Record) ([]int64, error) {
	recs := make([]*kgo.Record, len(records))
	for i, r := range records {
		recs[i] = &kgo.Record{Topic: l.topic, Partition: 0, Key: r.Key, Value: r.Value}
	}
	if err := l.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	offsets := make([]int64, len(recs))
	for i, r := range recs {
		offsets[i] = r.Offset
	}
	return offsets, nil
}

// leader returns the partition leader and the topic id, looking them up
// when unknown.
func (l *kafkaLog) leader(ctx context.Context) (int32, [16]byte, error) {
	l.mu.Lock()
	leader, id := l.mu.leader, l.mu.topicID
	l.mu.Unlock()
	if leader >= 0 {
		return leader, id, nil
	}
	md, err := l.admin.Metadata(ctx, l.topic)
	if err != nil {
		return -1, id, err
	}
	td, ok := md.Topics[l.topic]
	if !ok || td.Err != nil {
		return -1, id, fmt.Errorf("topic %s: %v", l.topic, td.Err)
	}
	p, ok := td.Partitions[0]
	if !ok || p.Err != nil || p.Leader < 0 {
		return -1, id, fmt.Errorf("topic %s partition 0 has no leader", l.topic)
	}
	l.mu.Lock()
	l.mu.leader, l.mu.topicID = p.Leader, td.ID
	l.mu.Unlock()
	return p.Leader, td.ID, nil
}

func (l *kafkaLog) forgetLeader() {
	l.mu.Lock()
	l.mu.leader = -1
	l.mu.Unlock()
}

// Read implements Log with one Fetch request to the partition leader.
func (l *kafkaLog) Read(ctx context.Context, from int64) ([]Record, int64, error) {
	leader, topicID, err := l.leader(ctx)
	if err != nil {
		return nil, from, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(fetchMaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 32 << 20
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = l.topic, topicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes = 0, from, 16<<20
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	kresp, err := l.client.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		l.forgetLeader()
		return nil, from, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		l.forgetLeader()
		return nil, from, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		l.forgetLeader()
		return nil, from, fmt.Errorf("fetch answered %d topics for one", len(resp.Topics))
	}
	rp := &resp.Topics[0].Partitions[0]
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange) && rp.LogStartOffset > from:
		// Records below the log start are gone (deleted, not compacted):
		// there is nothing to read before it.
		return nil, rp.LogStartOffset, nil
	default:
		l.forgetLeader()
		return nil, from, err
	}
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: from, Topic: l.topic, Partition: 0},
		rp, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		return nil, from, fp.Err
	}
	records := make([]Record, 0, len(fp.Records))
	for _, r := range fp.Records {
		records = append(records, Record{Offset: r.Offset, Key: r.Key, Value: r.Value})
	}
	if len(rp.RecordBatches) == 0 && rp.HighWatermark > next {
		// No batch at or after from below the high watermark: compaction
		// emptied the range (a fetch returns the batch holding from, or
		// the next one).
		next = rp.HighWatermark
	}
	return records, next, nil
}

// Close implements Log.
func (l *kafkaLog) Close() error {
	l.client.Close()
	return nil
}
