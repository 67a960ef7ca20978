package broker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/strata-streaming/strata/broker/storage"
)

var saramaCodecs = []struct {
	codec  int8
	sarama sarama.CompressionCodec
}{
	{codecNone, sarama.CompressionNone},
	{codecGzip, sarama.CompressionGZIP},
	{codecSnappy, sarama.CompressionSnappy},
	{codecLZ4, sarama.CompressionLZ4},
	{codecZstd, sarama.CompressionZSTD},
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "strata-sarama-test"
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Flush.Bytes = 256 << 10
	cfg.Producer.Flush.Frequency = time.Millisecond
	cfg.Consumer.Fetch.Default = 4 << 20
	cfg.Consumer.Return.Errors = true
	return cfg
}

// TestProduceConsumeEveryCodecSarama is the franz-go codec test with
// sarama as producer and consumer.
func TestProduceConsumeEveryCodecSarama(t *testing.T) {
	tb := startTestBroker(t)
	records := fixtureRecords(codecRecordCount, 7)
	for _, c := range saramaCodecs {
		t.Run(codecNames[c.codec], func(t *testing.T) {
			topic := "sarama-codec-" + codecNames[c.codec]
			tb.createTopic(topic, 1, nil)
			cfg := saramaConfig()
			cfg.Producer.Compression = c.sarama
			produceAllSarama(t, tb, cfg, topic, records)
			assertStoredCodec(t, tb, topic, c.codec)
			consumeAllSarama(t, tb, cfg, topic, records)
		})
	}
}

func produceAllSarama(t *testing.T, tb *testBroker, cfg *sarama.Config, topic string, records []testRecord) {
	t.Helper()
	prod, err := sarama.NewAsyncProducer([]string{tb.addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	deadline := time.After(60 * time.Second)
	sent, acked := 0, 0
	for acked < len(records) {
		var input chan<- *sarama.ProducerMessage
		var next *sarama.ProducerMessage
		if sent < len(records) {
			input, next = prod.Input(), saramaMessage(topic, sent, records[sent])
		}
		select {
		case input <- next:
			sent++
		case msg := <-prod.Successes():
			i := msg.Metadata.(int)
			if msg.Offset != int64(i) {
				t.Fatalf("record %d acknowledged at offset %d", i, msg.Offset)
			}
			acked++
		case perr := <-prod.Errors():
			t.Fatalf("produce record %v: %v", perr.Msg.Metadata, perr.Err)
		case <-deadline:
			t.Fatalf("timed out with %d of %d records acknowledged", acked, len(records))
		}
	}
}

func saramaMessage(topic string, i int, r testRecord) *sarama.ProducerMessage {
	msg := &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.ByteEncoder(r.value),
		Timestamp: time.UnixMilli(r.timestamp), Metadata: i}
	if r.key != nil {
		msg.Key = sarama.ByteEncoder(r.key)
	}
	for _, h := range r.headers {
		msg.Headers = append(msg.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return msg
}

func consumeAllSarama(t *testing.T, tb *testBroker, cfg *sarama.Config, topic string, want []testRecord) {
	t.Helper()
	cons, err := sarama.NewConsumer([]string{tb.addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	deadline := time.After(60 * time.Second)
	for got := 0; got < len(want); got++ {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(got) {
				t.Fatalf("record %d at offset %d; offsets must be contiguous from 0", got, m.Offset)
			}
			var hs []storage.RecordHeader
			for _, h := range m.Headers {
				hs = append(hs, storage.RecordHeader{Key: string(h.Key), Value: h.Value})
			}
			if diff := sameRecord(want[got], m.Key, m.Value, hs, m.Timestamp.UnixMilli()); diff != "" {
				t.Fatalf("record %d: %s", got, diff)
			}
		case cerr := <-pc.Errors():
			t.Fatalf("consume: %v", cerr)
		case <-deadline:
			t.Fatalf("timed out after %d of %d records", got, len(want))
		}
	}
}

// TestSaramaIdempotentProducer: sarama's idempotent producer (InitProducerId
// then sequenced batches) against the broker; every record lands once.
func TestSaramaIdempotentProducer(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("sarama-idem", 1, nil)
	records := fixtureRecords(10_000, 33)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Compression = sarama.CompressionZSTD
	produceAllSarama(t, tb, cfg, "sarama-idem", records)
	if end := tb.logEnd("sarama-idem", 0); end != int64(len(records)) {
		t.Fatalf("log end %d after %d records", end, len(records))
	}
	var idempotent bool
	err := tb.srv.topics.partition("sarama-idem", 0).Log().ForEachBatch(0, func(h storage.BatchHeader) error {
		idempotent = h.ProducerID >= 0
		return nil
	})
	if err != nil || !idempotent {
		t.Fatalf("stored batches carry no producer id (err %v)", err)
	}
	consumeAllSarama(t, tb, cfg, "sarama-idem", records)
}
