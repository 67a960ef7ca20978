package e2e

// librdkafka through confluent-kafka-go, whose module carries a current
// librdkafka as a static library (Debian's kcat links librdkafka 2.0,
// which sends Produce v7 and so predates KIP-467's per-record errors).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestLibrdkafkaPerRecordErrors: librdkafka produces one batch to a
// compacted topic in which some records have no key. The broker refuses
// the batch naming those records (KIP-467), so librdkafka fails them with
// INVALID_RECORD and the others with _INVALID_DIFFERENT_RECORD (which an
// application may retry); nothing of the batch is stored, and the valid
// records sent again are.
func TestLibrdkafkaPerRecordErrors(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const topic = "compacted-librdkafka"
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}

	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers": srv.addr,
		"linger.ms":         200, // all ten records in one batch
		"retries":           0,
		"log_level":         3,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	send := func(keyless map[int]bool, n int) map[int]kafka.ErrorCode {
		t.Helper()
		reports := make(chan kafka.Event, n)
		name := topic
		for i := range n {
			m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &name, Partition: 0}, Value: fmt.Appendf(nil, "value-%d", i), Opaque: i}
			if !keyless[i] {
				m.Key = fmt.Appendf(nil, "key-%d", i)
			}
			if err := p.Produce(m, reports); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
		codes := map[int]kafka.ErrorCode{}
		deadline := time.After(clientTimeout)
		for range n {
			select {
			case ev := <-reports:
				m := ev.(*kafka.Message)
				code := kafka.ErrNoError
				if err, ok := m.TopicPartition.Error.(kafka.Error); ok {
					code = err.Code()
				} else if m.TopicPartition.Error != nil {
					t.Fatalf("record %v: %v", m.Opaque, m.TopicPartition.Error)
				}
				codes[m.Opaque.(int)] = code
			case <-deadline:
				t.Fatalf("delivery reports: %d of %d after %v", len(codes), n, clientTimeout)
			}
		}
		return codes
	}

	keyless := map[int]bool{2: true, 7: true}
	codes := send(keyless, 10)
	for i := range 10 {
		want := kafka.ErrInvalidDifferentRecord
		if keyless[i] {
			want = kafka.ErrInvalidRecord
		}
		if codes[i] != want {
			t.Fatalf("record %d: librdkafka reports %v, want %v (all: %v)", i, codes[i], want, codes)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(topic, 0); o.Offset != 0 {
		t.Fatalf("log end offset %d after a refused batch, want 0", o.Offset)
	}

	// The valid records alone go through.
	for i, code := range send(nil, 8) {
		if code != kafka.ErrNoError {
			t.Fatalf("keyed record %d: %v", i, code)
		}
	}
}
