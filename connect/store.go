package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// store reads the three internal topics from the start into a clusterState
// and writes to them. Every worker runs one, so every worker knows every
// connector, offset and status; any worker can accept a REST write by
// producing to the config topic.
type store struct {
	cfg      WorkerConfig
	log      *slog.Logger
	consumer *kgo.Client // read_committed, control records kept to track positions
	producer *kgo.Client
	admin    *kadm.Client
	changed  chan struct{} // config records applied; cap 1
	// onLogLevel applies a cluster-scoped logger level (KIP-976) read from
	// the config topic, if written at or after since: as in Kafka, a
	// worker ignores the requests made before it started. Set before start.
	onLogLevel func(namespace, level string)
	since      time.Time

	mu struct {
		sync.Mutex
		state    *clusterState
		position map[string]map[int32]int64 // next offset read, per topic and partition
		wake     chan struct{}              // closed and replaced on every poll
	}

	cancel context.CancelFunc
	done   chan struct{}
}

func newStore(cfg WorkerConfig, log *slog.Logger, opts []kgo.Opt) (*store, error) {
	s := &store{cfg: cfg, log: log, changed: make(chan struct{}, 1), done: make(chan struct{})}
	s.mu.state = newClusterState()
	s.mu.position = map[string]map[int32]int64{}
	s.mu.wake = make(chan struct{})
	var err error
	s.producer, err = kgo.NewClient(append(opts,
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(0),
	)...)
	if err != nil {
		return nil, fmt.Errorf("connect: producer: %w", err)
	}
	s.admin = kadm.NewClient(s.producer)
	return s, nil
}

// ensureTopics creates the internal topics (compacted) when missing.
func (s *store) ensureTopics(ctx context.Context) error {
	want := []struct {
		name       string
		partitions int32
		rfKey      string
	}{
		{s.cfg.ConfigTopic, 1, "config.storage.replication.factor"},
		{s.cfg.OffsetTopic, s.cfg.OffsetPartitions, "offset.storage.replication.factor"},
		{s.cfg.StatusTopic, s.cfg.StatusPartitions, "status.storage.replication.factor"},
	}
	compact := "compact"
	for _, t := range want {
		rf := s.cfg.ReplicationFactor
		if v, err := strconv.ParseInt(s.cfg.Props[t.rfKey], 10, 16); err == nil && (v == -1 || v > 0) {
			rf = int16(v)
		}
		resp, err := s.admin.CreateTopic(ctx, t.partitions, rf, map[string]*string{"cleanup.policy": &compact}, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("connect: creating topic %s: %w", t.name, err)
		}
	}
	return nil
}

// start begins reading the topics and waits until everything present at
// start was read.
func (s *store) start(ctx context.Context, opts []kgo.Opt) error {
	var err error
	s.consumer, err = kgo.NewClient(append(opts,
		kgo.ConsumeTopics(s.cfg.ConfigTopic, s.cfg.OffsetTopic, s.cfg.StatusTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(500*time.Millisecond),
	)...)
	if err != nil {
		return fmt.Errorf("connect: consumer: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(runCtx)
	return s.sync(ctx)
}

func (s *store) run(ctx context.Context) {
	defer close(s.done)
	for {
		fetches := s.consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(topic string, p int32, err error) {
			s.log.Warn("connect: reading internal topic", "topic", topic, "partition", p, "err", err)
		})
		configChanged := false
		var levels []loggerLevelRecord
		s.mu.Lock()
		fetches.EachRecord(func(r *kgo.Record) {
			pos := s.mu.position[r.Topic]
			if pos == nil {
				pos = map[int32]int64{}
				s.mu.position[r.Topic] = pos
			}
			pos[r.Partition] = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			var err error
			switch r.Topic {
			case s.cfg.ConfigTopic:
				if ns, ok := strings.CutPrefix(string(r.Key), loggerClusterPrefix); ok {
					var v loggerLevelValue
					if r.Value != nil && !r.Timestamp.Before(s.since) {
						if err = json.Unmarshal(r.Value, &v); err == nil {
							levels = append(levels, loggerLevelRecord{namespace: ns, level: v.Level})
						}
					}
					break
				}
				err = s.mu.state.applyConfig(r.Offset, string(r.Key), r.Value)
				configChanged = true
			case s.cfg.StatusTopic:
				err = s.mu.state.applyStatus(string(r.Key), r.Value)
			case s.cfg.OffsetTopic:
				err = s.mu.state.applyOffset(r.Key, r.Value)
			}
			if err != nil {
				s.log.Warn("connect: skipping unreadable record", "topic", r.Topic, "offset", r.Offset, "err", err)
			}
		})
		close(s.mu.wake)
		s.mu.wake = make(chan struct{})
		s.mu.Unlock()
		for _, l := range levels {
			if s.onLogLevel != nil {
				s.onLogLevel(l.namespace, l.level)
			}
		}
		if configChanged {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
	}
}

// sync waits until every record committed to the three topics before the
// call has been applied: read-your-writes for the REST API, and the
// "caught up" barrier before a leader assigns or a task reads offsets.
func (s *store) sync(ctx context.Context) error {
	ends, err := s.admin.ListCommittedOffsets(ctx, s.cfg.ConfigTopic, s.cfg.OffsetTopic, s.cfg.StatusTopic)
	if err != nil {
		return fmt.Errorf("connect: listing internal topic offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("connect: listing internal topic offsets: %w", err)
	}
	for {
		s.mu.Lock()
		behind := false
		ends.Each(func(o kadm.ListedOffset) {
			if o.Offset > 0 && s.mu.position[o.Topic][o.Partition] < o.Offset {
				behind = true
			}
		})
		wake := s.mu.wake
		s.mu.Unlock()
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("connect: catching up with internal topics: %w", ctx.Err())
		case <-wake:
		case <-s.done:
			return errors.New("connect: store closed")
		}
	}
}

// view runs f with the state locked; f must not keep references to maps.
func (s *store) view(f func(st *clusterState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.mu.state)
}

// writeConfig produces one config-topic record and waits for it.
func (s *store) writeConfig(ctx context.Context, key string, value any) error {
	return s.write(ctx, s.cfg.ConfigTopic, []byte(key), value)
}

// writeStatus produces one status-topic record and waits for it.
func (s *store) writeStatus(ctx context.Context, key string, value any) error {
	return s.write(ctx, s.cfg.StatusTopic, []byte(key), value)
}

func (s *store) write(ctx context.Context, topic string, key []byte, value any) error {
	var data []byte
	if value != nil {
		var err error
		if data, err = json.Marshal(value); err != nil {
			return fmt.Errorf("connect: encoding %s: %w", key, err)
		}
	}
	rec := &kgo.Record{Topic: topic, Key: key, Value: data}
	if err := s.producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("connect: writing %s to %s: %w", key, topic, err)
	}
	return nil
}

// offsetRecord builds the offset-topic record of one source partition;
// a nil offset is a tombstone (reset).
func (s *store) offsetRecord(connector string, partition, offset map[string]any) (*kgo.Record, error) {
	key, err := offsetKey(connector, partition)
	if err != nil {
		return nil, fmt.Errorf("connect: source partition %v: %w", partition, err)
	}
	rec := &kgo.Record{Topic: s.cfg.OffsetTopic, Key: key}
	if offset != nil {
		if rec.Value, err = json.Marshal(offset); err != nil {
			return nil, fmt.Errorf("connect: source offset %v: %w", offset, err)
		}
	}
	return rec, nil
}

// writeOffsets persists source offsets (non-transactional path).
func (s *store) writeOffsets(ctx context.Context, connector string, offsets []sourceOffset) error {
	recs := make([]*kgo.Record, 0, len(offsets))
	for _, o := range offsets {
		rec, err := s.offsetRecord(connector, o.Partition, o.Offset)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	if err := s.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("connect: writing offsets of %s: %w", connector, err)
	}
	return nil
}

// offsetReader is a task's view of its connector's committed offsets.
type offsetReader struct {
	store     *store
	connector string
}

// Offset implements OffsetReader.
func (r offsetReader) Offset(partition map[string]any) (map[string]any, error) {
	canon := canonicalPartition(normalizeJSON(partition))
	var out map[string]any
	r.store.view(func(st *clusterState) {
		if o, ok := st.offsets[r.connector][canon]; ok {
			out = make(map[string]any, len(o.Offset))
			for k, v := range o.Offset {
				out[k] = v
			}
		}
	})
	return out, nil
}

// normalizeJSON round-trips a map through JSON so that its numbers have the
// types a decoded record has (int64/float64).
func normalizeJSON(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var v any
	if unmarshalNumber(b, &v) != nil {
		return m
	}
	out, ok := schemalessFromJSON(v).(map[string]any)
	if !ok {
		return m
	}
	return out
}

func (s *store) close() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	if s.consumer != nil {
		s.consumer.Close()
	}
	s.producer.Close()
}

// loggerClusterPrefix keys a cluster-scoped logger level in the config
// topic, as Kafka Connect's: logger-cluster-<namespace> → {"level": "DEBUG"}.
const loggerClusterPrefix = "logger-cluster-"

type loggerLevelValue struct {
	Level string `json:"level"`
}

type loggerLevelRecord struct {
	namespace, level string
}
