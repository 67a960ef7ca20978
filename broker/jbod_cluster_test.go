package broker

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestJBODDirFailureInCluster: three nodes with two log dirs each. Node 1
// leads every partition; the dir holding half of them fails at run time.
// Node 1 reports those replicas offline, so their leadership moves to
// another ISR member and node 1 leaves their ISRs (Metadata lists it as
// an offline replica — checked with kadm and sarama), while it keeps
// leading the partitions of its healthy dir. An acks=all producer that
// writes throughout loses nothing. Restarted with the dir repaired, node
// 1 is no longer offline and catches up into every ISR.
func TestJBODDirFailureInCluster(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.DataDir = filepath.Join(cfg.DataDir, "a") + "," + filepath.Join(cfg.DataDir, "b")
		cfg.ControlledShutdownEnable = false
	})
	ctx := testContext(t)
	cl := c.client()
	adm := kadm.NewClient(cl)

	const topic, parts = "jbod", 4
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p := range int32(parts) {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, []int32{1, 2, 3}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	min2 := "2"
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "min.insync.replicas", &min2
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}

	dirs := c.node(1).cfg.LogDirs()
	var inB, inA []int32
	waitUntil(t, 15*time.Second, "node 1 hosting every partition", func() bool {
		inA, inB = nil, nil
		ds, err := adm.DescribeBrokerLogDirs(ctx, 1, nil)
		if err != nil {
			return false
		}
		for p := range int32(parts) {
			if _, ok := ds[dirs[0]].Topics[topic][p]; ok {
				inA = append(inA, p)
			}
			if _, ok := ds[dirs[1]].Topics[topic][p]; ok {
				inB = append(inB, p)
			}
		}
		return len(inA)+len(inB) == parts
	})
	if len(inA) == 0 || len(inB) == 0 {
		t.Fatalf("partitions not spread over both dirs: a=%v b=%v", inA, inB)
	}

	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.MetadataMinAge(250*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	sp := startSteadyProducer(prod, topic, 3*time.Millisecond)
	waitUntil(t, 20*time.Second, "acks flowing", func() bool { return sp.ackedCount() > 100 })

	// The second dir goes away under the running node.
	if err := os.Rename(dirs[1], dirs[1]+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirs[1], []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	partitionsNow := func() map[int32]kadm.PartitionDetail {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return nil
		}
		return md.Topics[topic].Partitions
	}
	waitUntil(t, 20*time.Second, "leadership of the failed dir's partitions moved", func() bool {
		ps := partitionsNow()
		for _, p := range inB {
			d := ps[p]
			if d.Leader <= 1 || slices.Contains(d.ISR, 1) || !slices.Equal(d.OfflineReplicas, []int32{1}) {
				return false
			}
		}
		return len(ps) == parts
	})
	ps := partitionsNow()
	for _, p := range inA {
		if d := ps[p]; d.Leader != 1 || !slices.Contains(d.ISR, 1) || len(d.OfflineReplicas) != 0 {
			t.Errorf("partition %d of the healthy dir: leader %d isr %v offline %v", p, d.Leader, d.ISR, d.OfflineReplicas)
		}
	}

	// sarama decodes the same Metadata with its own encoder.
	sc, err := sarama.NewClient(c.bootstrap(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for _, p := range inB {
		off, err := sc.OfflineReplicas(topic, p)
		if err != nil || !slices.Equal(off, []int32{1}) {
			t.Errorf("sarama: partition %d offline replicas %v, %v", p, off, err)
		}
	}
	// DescribeLogDirs of node 1 answers KAFKA_STORAGE_ERROR for the dir.
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(all[1][dirs[1]].Err, kerr.KafkaStorageError) || all[1][dirs[0]].Err != nil {
		t.Errorf("node 1 log dirs: %+v", all[1])
	}

	at := sp.ackedCount()
	waitUntil(t, 20*time.Second, "acks continuing", func() bool { return sp.ackedCount() > at+200 })
	t.Logf("longest gap between acks across the dir failure: %v", sp.takeGap())

	// Node 1 restarts with the dir repaired: its replicas are no longer
	// offline and it catches up into every ISR.
	c.node(1).stop()
	if err := os.Remove(dirs[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dirs[1]+".gone", dirs[1]); err != nil {
		t.Fatal(err)
	}
	c.startAll()
	waitUntil(t, 30*time.Second, "node 1 back in every ISR", func() bool {
		ps := partitionsNow()
		for p := range int32(parts) {
			if d := ps[p]; !slices.Contains(d.ISR, 1) || len(d.OfflineReplicas) != 0 {
				return false
			}
		}
		return len(ps) == parts
	})

	acked := sp.finish()
	got := consumeKeys(t, c.client(), topic, len(acked))
	for k := range acked {
		if !got[k] {
			t.Errorf("acknowledged record %s lost", k)
		}
	}
	t.Logf("%d records acknowledged, all read back", len(acked))
}
