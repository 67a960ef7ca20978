package broker

import (
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestThrottledReplicasList(t *testing.T) {
	for _, tc := range []struct {
		list      string
		partition int32
		node      int32
		want      bool
	}{
		{"", 0, 1, false},
		{"*", 3, 2, true},
		{"0:1,1:2", 1, 2, true},
		{"0:1, 1:2", 1, 1, false},
		{"0:1", 0, 1, true},
	} {
		if got := throttledListHas(tc.list, tc.partition, tc.node); got != tc.want {
			t.Errorf("%q has %d:%d = %v, want %v", tc.list, tc.partition, tc.node, got, tc.want)
		}
	}
	for _, ok := range []string{"", "*", "0:1,2:3"} {
		if err := validateThrottledReplicas(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"1", "a:b", "0:1,*", "-1:2"} {
		if err := validateThrottledReplicas(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestThrottleBucket: a bucket holds one second of its rate, is exceeded
// once more was recorded, and refills with time; an unlimited one never
// is.
func TestThrottleBucket(t *testing.T) {
	rate := int64(1 << 20)
	th := newThrottle(func() int64 { return rate })
	if th.exceeded() {
		t.Fatal("a fresh bucket is exceeded")
	}
	th.record(3 << 19) // 1.5 s worth
	if !th.exceeded() {
		t.Fatal("not exceeded after 1.5 s worth")
	}
	waitUntil(t, 3*time.Second, "the bucket refilled", func() bool { return !th.exceeded() })
	rate = 0
	th.record(1 << 30)
	if th.exceeded() {
		t.Fatal("an unlimited bucket is exceeded")
	}
}

// TestReassignmentThrottled: a replica added by a reassignment fetches at
// most follower.replication.throttled.rate (set on the new node with kadm,
// dynamically): while throttled it holds at most rate × (elapsed + 3) bytes
// of an 8 MiB incompressible partition, then, with the throttle removed,
// the reassignment completes; the records are all there.
func TestReassignmentThrottled(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	cl := c.client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 2, nil, "thr"); err != nil {
		t.Fatal(err)
	}
	var replicas []int32
	waitUntil(t, 10*time.Second, "a leader", func() bool {
		md, err := adm.Metadata(ctx, "thr")
		if err != nil || len(md.Topics["thr"].Partitions) != 1 {
			return false
		}
		p := md.Topics["thr"].Partitions[0]
		replicas = p.Replicas
		return p.Leader > 0
	})
	var added int32
	for id := int32(1); id <= 3; id++ {
		if !slices.Contains(replicas, id) {
			added = id
		}
	}
	prod := c.client(kgo.DefaultProduceTopic("thr"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks()))
	const records, size = 64, 128 << 10 // 8 MiB
	for range records {
		v := make([]byte, size)
		rand.Read(v)
		prod.Produce(ctx, &kgo.Record{Value: v}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const rate = 256 << 10
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate", Value: ptr("262144")}}, added); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the throttle applied", func() bool { return c.node(added).srv.conf().FollowerThrottledRate == rate })
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign("thr", 0, append(slices.Clone(replicas), added))
	start := time.Now()
	if res, err := adm.AlterPartitionAssignments(ctx, req); err != nil || res["thr"][0].Err != nil {
		t.Fatalf("reassign: %v %+v", err, res)
	}
	localBytes := func() int64 {
		if p := c.node(added).srv.topics.partition("thr", 0); p != nil {
			return p.Log().Size()
		}
		return 0
	}
	waitUntil(t, 10*time.Second, "the new replica fetching", func() bool { return localBytes() > 0 })
	for range 3 {
		time.Sleep(500 * time.Millisecond) // let it fetch: the bound must hold over time
		elapsed := time.Since(start).Seconds()
		if got, bound := localBytes(), int64(rate*(elapsed+3)); got > bound {
			t.Fatalf("after %.1fs the throttled replica holds %d bytes, more than %d", elapsed, got, bound)
		}
	}
	t.Logf("throttled: %d bytes after %.1fs", localBytes(), time.Since(start).Seconds())
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"}}, added); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the reassignment complete", func() bool {
		md, err := adm.Metadata(ctx, "thr")
		if err != nil {
			return false
		}
		p := md.Topics["thr"].Partitions[0]
		ras, err := adm.ListPartitionReassignments(ctx, nil)
		return err == nil && len(ras) == 0 && len(p.Replicas) == 3 && len(p.ISR) == 3
	})
	if got := localBytes(); got < records*size {
		t.Fatalf("the new replica holds %d bytes, want at least %d", got, records*size)
	}
}
