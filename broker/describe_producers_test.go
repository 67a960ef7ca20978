package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDescribeProducers: an idempotent producer and a transactional one
// with a transaction left open show in DescribeProducers (kadm and
// sarama's request): ids, epochs, last sequences, and the open
// transaction's start offset, which goes back to -1 once it commits.
func TestDescribeProducers(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client())
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "producers"); err != nil {
		t.Fatal(err)
	}
	idem := tb.client(kgo.DefaultProduceTopic("producers"))
	for i := range 3 {
		if err := idem.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	txn := tb.client(kgo.DefaultProduceTopic("producers"), kgo.TransactionalID("producers-txn"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	described, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"producers": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	p := described["producers"].Partitions[0]
	if p.Err != nil || len(p.ActiveProducers) != 2 {
		t.Fatalf("described: %v %+v", p.Err, p.ActiveProducers)
	}
	var open *kadm.DescribedProducer
	for _, ap := range p.ActiveProducers {
		switch ap.LastSequence {
		case 2: // the idempotent producer's third record
			if ap.CurrentTxnStartOffset != -1 {
				t.Fatalf("idempotent producer with a transaction: %+v", ap)
			}
		case 0:
			open = &ap
		default:
			t.Fatalf("unexpected producer %+v", ap)
		}
	}
	if open == nil || open.CurrentTxnStartOffset != 3 || open.LastTimestamp <= 0 {
		t.Fatalf("the open transaction: %+v", open)
	}

	// sarama's encoder, and the errors.
	sb := sarama.NewBroker(tb.addr())
	if err := sb.Open(saramaConfig()); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sresp, err := sb.DescribeProducers(&sarama.DescribeProducersRequest{Topics: []sarama.DescribeProducersRequestTopic{{Name: "producers", PartitionIndexes: []int32{0, 7}}}})
	if err != nil {
		t.Fatal(err)
	}
	parts := sresp.Topics[0].Partitions
	if len(parts) != 2 || parts[0].ErrorCode != sarama.ErrNoError || len(parts[0].ActiveProducers) != 2 || parts[1].ErrorCode != sarama.ErrUnknownTopicOrPartition {
		t.Fatalf("sarama: %+v", parts)
	}

	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// EndTxn returns once the commit is decided; the markers reach the
	// partition right after, as in Kafka: wait for them.
	for deadline := time.Now().Add(10 * time.Second); ; {
		described, err = adm.DescribeProducers(ctx, kadm.TopicsSet{"producers": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		open := false
		for _, ap := range described["producers"].Partitions[0].ActiveProducers {
			open = open || ap.CurrentTxnStartOffset != -1
		}
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the commit: %+v", described["producers"].Partitions[0].ActiveProducers)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"no-such-topic": {0: {}}}); err == nil && !errors.Is(d["no-such-topic"].Partitions[0].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %+v", d)
	}
}
