package broker

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDescribeLogDirs: the data directory with each partition's local size
// (at least the bytes written), no lag on a leader, the volume's total and
// usable bytes, through kadm and sarama's admin; a topic filter describes
// that topic only.
func TestDescribeLogDirs(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client())
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "dirs-a", "dirs-b"); err != nil {
		t.Fatal(err)
	}
	cl := tb.client(kgo.DefaultProduceTopic("dirs-a"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	value := randomValue(t, 4096)
	for range 50 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: value, Partition: 1}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := all[tb.srv.cfg.NodeID]
	d, ok := dirs[tb.srv.cfg.DataDir]
	if !ok || d.Err != nil || len(dirs) != 1 {
		t.Fatalf("log dirs: %+v", dirs)
	}
	if d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("volume: total %d usable %d", d.TotalBytes, d.UsableBytes)
	}
	p, ok := dirs.Lookup(tb.srv.cfg.DataDir, "dirs-a", 1)
	if !ok || p.Size < 50*4096 || p.OffsetLag != 0 {
		t.Fatalf("dirs-a-1: %+v", p)
	}
	if _, ok := dirs.Lookup(tb.srv.cfg.DataDir, "dirs-b", 0); !ok {
		t.Fatal("dirs-b-0 missing")
	}
	only, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{"dirs-b": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if topics := only[tb.srv.cfg.NodeID][tb.srv.cfg.DataDir].Topics; len(topics) != 1 || len(topics["dirs-b"]) != 1 {
		t.Fatalf("filtered: %+v", topics)
	}

	sa, err := sarama.NewClusterAdmin([]string{tb.addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sdirs, err := sa.DescribeLogDirs([]int32{tb.srv.cfg.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	meta := sdirs[tb.srv.cfg.NodeID]
	if len(meta) != 1 || meta[0].Path != tb.srv.cfg.DataDir || meta[0].ErrorCode != sarama.ErrNoError {
		t.Fatalf("sarama: %+v", meta)
	}
	var size int64
	for _, tp := range meta[0].Topics {
		if tp.Topic == "dirs-a" {
			for _, pp := range tp.Partitions {
				size += pp.Size
			}
		}
	}
	if size < 50*4096 {
		t.Fatalf("sarama: dirs-a holds %d bytes", size)
	}
}
