package broker

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFollowerFetchingByRack (KIP-392): three nodes on racks a, b, c with
// the rack-aware selector, node 1 (rack a) leading. A consumer with
// client.rack=b reads every record, identical to what was produced, from
// node 2: the leader names it as the preferred read replica and sends no
// records itself (the brokers' bytes-out metrics show who served). A raw
// v11 fetch to the leader is answered with preferred_read_replica 2, and
// one without a rack with records.
func TestFollowerFetchingByRack(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "b", 3: "c"}
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.BrokerRack = racks[cfg.NodeID]
		cfg.ReplicaSelectorClass = rackAwareSelectorClass
	})
	ctx := testContext(t)
	cl := c.client()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "racked", -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, []int32{1, 2, 3}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 30000
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("racked"))
	const n = 500
	var want [][]byte
	for i := range n {
		v := fmt.Appendf(nil, "value-%04d", i)
		want = append(want, v)
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var topicID [16]byte
	waitUntil(t, 10*time.Second, "every replica at the high watermark", func() bool {
		for _, nb := range c.nodes {
			p := nb.srv.topics.partition("racked", 0)
			if p == nil || p.HighWatermark() != n {
				return false
			}
			topicID = p.topic.id
		}
		return true
	})
	bytesOut := func(id int32) float64 {
		return testutil.ToFloat64(c.node(id).srv.metrics.bytesOut.WithLabelValues("racked"))
	}

	// Raw v11+ fetches to the leader (kmsg decodes them).
	fetch := func(rack string) *kmsg.FetchResponseTopicPartition {
		t.Helper()
		f := kmsg.NewPtrFetchRequest()
		f.ReplicaID, f.MaxWaitMillis, f.MaxBytes, f.Rack = -1, 100, 1<<20, rack
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "racked", topicID
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
		f.Topics = append(f.Topics, ft)
		resp, err := f.RequestWith(ctx, cl.Broker(1))
		if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch: %v %+v", err, resp)
		}
		return &resp.Topics[0].Partitions[0]
	}
	if p := fetch("b"); p.ErrorCode != 0 || p.PreferredReadReplica != 2 || len(p.RecordBatches) != 0 || p.HighWatermark != n {
		t.Fatalf("fetch with rack b: %+v", p)
	}
	if p := fetch(""); p.ErrorCode != 0 || p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch without a rack: %+v", p)
	}
	if p := fetch("a"); p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch from the leader's rack: %+v", p)
	}

	leaderBefore, followerBefore := bytesOut(1), bytesOut(2)
	consumer := c.client(kgo.Rack("b"), kgo.ConsumeTopics("racked"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got [][]byte
	for len(got) < n {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(got), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch error: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value) })
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
	if d := bytesOut(1) - leaderBefore; d != 0 {
		t.Errorf("the leader sent %v bytes to the rack-b consumer", d)
	}
	if d := bytesOut(2) - followerBefore; d <= 0 {
		t.Errorf("the rack-b follower sent %v bytes", d)
	}
	if d := bytesOut(3); d != 0 {
		t.Errorf("the rack-c follower sent %v bytes", d)
	}
}
