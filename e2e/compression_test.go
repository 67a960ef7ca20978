package e2e

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createTopicWithConfigs creates a one-partition topic with configs through
// CreateTopics and returns its topic ID.
func createTopicWithConfigs(t testing.TB, addr, topic string, configs map[string]string) [16]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cfgs := make(map[string]*string, len(configs))
	for k, v := range configs {
		cfgs[k] = &v
	}
	resp, err := kadm.NewClient(newClient(t, addr)).CreateTopic(ctx, 1, 1, cfgs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("CreateTopics %s %v: %v (%s)", topic, configs, err, resp.ErrMessage)
	}
	return resp.ID
}

// storedCodecs fetches partition 0 of topic from the start with a raw
// Fetch (franz-go sends its newest version, which names topics by ID) and
// returns the codec (attribute bits 0-2) of each batch, and the records
// the batches cover.
func storedCodecs(t testing.TB, addr, topic string, topicID [16]byte) (codecs []int8, records int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cl := newClient(t, addr)
	for offset := int64(0); ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxBytes = 16 << 20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes = offset, 16<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("Fetch %s at %d: %v", topic, offset, err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("Fetch %s at %d: %v", topic, offset, kerr.ErrorForCode(p.ErrorCode))
		}
		raw := p.RecordBatches
		before := offset
		for len(raw) >= 61 {
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw); err != nil {
				break // a batch cut at the end of the response
			}
			codecs = append(codecs, int8(b.Attributes&0x07))
			records += int64(b.LastOffsetDelta) + 1
			offset = b.FirstOffset + int64(b.LastOffsetDelta) + 1
			raw = raw[12+int(b.Length):]
		}
		if offset >= p.HighWatermark || offset == before {
			return codecs, records
		}
	}
}

// TestKcatRecompression: librdkafka (kcat) produces with -z none, gzip,
// lz4, snappy and zstd into a topic with compression.type=zstd; every
// batch is stored as zstd, and kcat reads every message back identical, in
// order, at its offset.
func TestKcatRecompression(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	srv := startServer(t)
	const topic, per = "kcat-recompressed", 500
	topicID := createTopicWithConfigs(t, srv.addr, topic, map[string]string{"compression.type": "zstd"})
	codecs := []string{"none", "gzip", "lz4", "snappy", "zstd"}
	for i, codec := range codecs {
		kcatProduce(t, kcat, srv.addr, topic, codec, i*per, (i+1)*per)
	}
	total := len(codecs) * per
	kcatConsumeAll(t, kcat, srv.addr, topic, total)

	stored, records := storedCodecs(t, srv.addr, topic, topicID)
	if records != int64(total) {
		t.Fatalf("batches cover %d records, want %d", records, total)
	}
	if len(stored) < len(codecs) {
		t.Fatalf("%d batches stored for %d produce runs", len(stored), len(codecs))
	}
	for i, c := range stored {
		if c != 4 {
			t.Fatalf("batch %d of %d stored with codec %d, want 4 (zstd)", i, len(stored), c)
		}
	}
}
