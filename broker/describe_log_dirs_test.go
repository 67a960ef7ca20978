package broker

import (
	"testing"
	"time"

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

// TestDescribeLogDirsCluster: on three nodes, each node's answer lists
// exactly the partitions Metadata places on it, and no node fails on the
// partitions it does not host.
func TestDescribeLogDirsCluster(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 6, 1, nil, "spread"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	want := map[int32]map[int32]bool{} // node -> partitions
	waitUntil(t, 10*time.Second, "every node to host its spread partitions", func() bool {
		md, err := adm.Metadata(ctx, "spread")
		if err != nil || len(md.Topics["spread"].Partitions) != 6 {
			return false
		}
		clear(want)
		for _, p := range md.Topics["spread"].Partitions {
			if len(p.Replicas) != 1 {
				return false
			}
			n := p.Replicas[0]
			if c.node(n).srv.topics.partition("spread", p.Partition) == nil {
				return false
			}
			if want[n] == nil {
				want[n] = map[int32]bool{}
			}
			want[n][p.Partition] = true
		}
		return true
	})
	if len(want) < 2 {
		t.Fatalf("placement %v: every partition on one node", want)
	}
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= 3; id++ {
		dirs, ok := all[id]
		if !ok || len(dirs) != 1 {
			t.Fatalf("node %d: log dirs %+v", id, dirs)
		}
		got := map[int32]bool{}
		for _, d := range dirs {
			if d.Err != nil {
				t.Fatalf("node %d: dir %s: %v", id, d.Dir, d.Err)
			}
			for p := range d.Topics["spread"] {
				got[p] = true
			}
		}
		if len(got) != len(want[id]) {
			t.Fatalf("node %d lists spread partitions %v, Metadata places %v there", id, got, want[id])
		}
		for p := range got {
			if !want[id][p] {
				t.Fatalf("node %d lists spread partitions %v, Metadata places %v there", id, got, want[id])
			}
		}
	}
}
