package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// reassignCreate creates a one-partition topic with one replica and returns
// the node holding it, once every node has opened the topic (a node
// answers Metadata from the topics it has opened, a few milliseconds after
// the quorum applied the creation).
func reassignCreate(t *testing.T, c *testCluster, cl *kgo.Client, topic string, configs map[string]*string) int32 {
	t.Helper()
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	res, err := adm.CreateTopic(ctx, 1, 1, configs, topic)
	if err != nil || res.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, res.Err)
	}
	var holder int32 = -1
	waitUntil(t, 10*time.Second, "a leader for "+topic, func() bool {
		p, err := partitionMetadata(ctx, cl, topic, 0)
		if err != nil || p.Leader < 0 || len(p.Replicas) != 1 {
			return false
		}
		holder = p.Replicas[0]
		return true
	})
	waitUntil(t, 10*time.Second, "every node to open "+topic, func() bool {
		for _, nb := range c.nodes {
			if nb.srv.topics.get(topic) == nil {
				return false
			}
		}
		return c.node(holder).srv.topics.partition(topic, 0) != nil
	})
	return holder
}

// otherNodes lists the nodes 1..n other than skip.
func otherNodes(n int, skip int32) []int32 {
	var out []int32
	for id := int32(1); id <= int32(n); id++ {
		if id != skip {
			out = append(out, id)
		}
	}
	return out
}

// reassign sends one AlterPartitionReassignments entry and returns the
// partition's result.
func reassign(t *testing.T, adm *kadm.Client, topic string, partition int32, replicas []int32) kadm.AlterPartitionAssignmentsResponse {
	t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, partition, replicas)
	res, err := adm.AlterPartitionAssignments(testContext(t), req)
	if err != nil {
		t.Fatalf("alter partition assignments: %v", err)
	}
	r, ok := res[topic][partition]
	if !ok {
		t.Fatalf("no result for %s-%d in %+v", topic, partition, res)
	}
	return r
}

// partitionMetadata asks the cluster (bypassing the client's metadata
// cache) for the partition's replicas, ISR and leader.
func partitionMetadata(ctx context.Context, cl *kgo.Client, topic string, partition int32) (kmsg.MetadataResponseTopicPartition, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.MetadataResponseTopicPartition{}, err
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return kmsg.MetadataResponseTopicPartition{}, err
		}
		for _, p := range t.Partitions {
			if p.Partition == partition {
				return p, kerr.ErrorForCode(p.ErrorCode)
			}
		}
	}
	return kmsg.MetadataResponseTopicPartition{}, fmt.Errorf("no partition %s-%d in metadata", topic, partition)
}

// awaitReassigned waits until the partition's reassignment is over and
// Metadata shows replicas and ISR equal to target (in any order).
func awaitReassigned(t *testing.T, cl *kgo.Client, topic string, target []int32) {
	t.Helper()
	ctx := testContext(t)
	want := slices.Sorted(slices.Values(target))
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		listed, lerr := kadm.NewClient(cl).ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: struct{}{}}})
		p, merr := partitionMetadata(ctx, cl, topic, 0)
		if lerr == nil && merr == nil {
			replicas := slices.Sorted(slices.Values(p.Replicas))
			isr := slices.Sorted(slices.Values(p.ISR))
			last = fmt.Sprintf("listed %v, replicas %v, isr %v, leader %d", listed[topic], p.Replicas, p.ISR, p.Leader)
			if len(listed[topic]) == 0 && slices.Equal(replicas, want) && slices.Equal(isr, want) && slices.Contains(want, p.Leader) {
				return
			}
		} else {
			last = fmt.Sprintf("list: %v, metadata: %v", lerr, merr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("reassignment of %s to %v not done after 30s: %s", topic, target, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// produceKeyed sends n acks=all records keyed k0..k(n-1).
func produceKeyed(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	ctx := testContext(t)
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// A one-replica partition moves to the two other nodes: the new replicas
// catch up and join the ISR, the reassignment completes, the old node
// drops its replica (directory included) and every record stays readable.
func TestReassignMovesPartition(t *testing.T) {
	c := startTestCluster(t, 3)
	// A short metadata age: the producer finds the new leader at once.
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond))
	adm := kadm.NewClient(cl)
	old := reassignCreate(t, c, cl, "mv", nil)
	const n = 500
	produceKeyed(t, cl, "mv", n)
	oldPart := c.node(old).srv.topics.partition("mv", 0)
	if oldPart == nil {
		t.Fatalf("node %d holds no mv-0", old)
	}
	oldDir := oldPart.Log().Dir()

	target := otherNodes(3, old)
	if r := reassign(t, adm, "mv", 0, target); r.Err != nil {
		t.Fatalf("reassign to %v: %v (%s)", target, r.Err, r.ErrMessage)
	}
	awaitReassigned(t, cl, "mv", target)
	waitUntil(t, 10*time.Second, fmt.Sprintf("node %d to drop mv-0", old), func() bool {
		if c.node(old).srv.topics.partition("mv", 0) != nil {
			return false
		}
		_, err := os.Stat(oldDir)
		return errors.Is(err, os.ErrNotExist)
	})
	for _, id := range target {
		waitUntil(t, 10*time.Second, fmt.Sprintf("node %d to hold all of mv-0", id), func() bool {
			p := c.node(id).srv.topics.partition("mv", 0)
			return p != nil && p.Log().LogEndOffset() == n
		})
	}
	got := consumeKeys(t, c.client(), "mv", n)
	for i := range n {
		if !got[fmt.Sprintf("k%d", i)] {
			t.Fatalf("record k%d missing after the move", i)
		}
	}
	// Writes go on with acks=all on the new replicas.
	produceKeyed(t, cl, "mv", 1)
}

// A reassignment to a stopped node stays in progress: it is listed (with
// the replicas being added and removed) until cancelled, and the cancel
// restores the original replica. Cancelling again is refused.
func TestReassignCancel(t *testing.T) {
	c := startTestCluster(t, 3)
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	old := reassignCreate(t, c, cl, "cx", nil)
	produceKeyed(t, cl, "cx", 50)
	down := otherNodes(3, old)[0]
	c.node(down).stop()

	if r := reassign(t, adm, "cx", 0, []int32{down}); r.Err != nil {
		t.Fatalf("reassign to stopped node %d: %v (%s)", down, r.Err, r.ErrMessage)
	}
	ctx := testContext(t)
	listed, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"cx": {0: struct{}{}}})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := listed["cx"][0]
	if !ok || !slices.Equal(got.Replicas, []int32{down, old}) || !slices.Equal(got.AddingReplicas, []int32{down}) || !slices.Equal(got.RemovingReplicas, []int32{old}) {
		t.Fatalf("listed %+v (ok %v), want replicas [%d %d], adding [%d], removing [%d]", got, ok, down, old, down, old)
	}
	// The request with no topics lists every reassignment in progress.
	all := kmsg.NewPtrListPartitionReassignmentsRequest()
	allResp, err := all.RequestWith(ctx, cl)
	if err != nil || allResp.ErrorCode != 0 || len(allResp.Topics) != 1 || allResp.Topics[0].Topic != "cx" {
		t.Fatalf("list all: %v %+v", err, allResp)
	}

	if r := reassign(t, adm, "cx", 0, nil); r.Err != nil {
		t.Fatalf("cancel: %v (%s)", r.Err, r.ErrMessage)
	}
	awaitReassigned(t, cl, "cx", []int32{old})
	if r := reassign(t, adm, "cx", 0, nil); !errors.Is(r.Err, kerr.NoReassignmentInProgress) {
		t.Fatalf("second cancel: %v, want NO_REASSIGNMENT_IN_PROGRESS", r.Err)
	}
	keys := consumeKeys(t, c.client(), "cx", 50)
	if len(keys) != 50 {
		t.Fatalf("consumed %d keys after the cancel, want 50", len(keys))
	}
}

// Bad requests get per-partition errors and change nothing.
func TestReassignInvalid(t *testing.T) {
	c := startTestCluster(t, 3)
	cl := c.client()
	adm := kadm.NewClient(cl)
	holder := reassignCreate(t, c, cl, "bad", nil)
	cases := []struct {
		name      string
		topic     string
		partition int32
		replicas  []int32
		want      *kerr.Error
	}{
		{"unknown broker", "bad", 0, []int32{holder, 99}, kerr.InvalidReplicaAssignment},
		{"duplicate broker", "bad", 0, []int32{holder, holder}, kerr.InvalidReplicaAssignment},
		{"empty list", "bad", 0, []int32{}, kerr.InvalidReplicaAssignment},
		{"negative id", "bad", 0, []int32{-1}, kerr.InvalidReplicaAssignment},
		{"unknown topic", "nope", 0, []int32{1}, kerr.UnknownTopicOrPartition},
		{"unknown partition", "bad", 7, []int32{1}, kerr.UnknownTopicOrPartition},
		{"cancel with none in progress", "bad", 0, nil, kerr.NoReassignmentInProgress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := reassign(t, adm, tc.topic, tc.partition, tc.replicas)
			if !errors.Is(r.Err, tc.want) {
				t.Fatalf("error %v (%s), want %v", r.Err, r.ErrMessage, tc.want)
			}
			if tc.want == kerr.InvalidReplicaAssignment && r.ErrMessage == "" {
				t.Error("no message with INVALID_REPLICA_ASSIGNMENT")
			}
		})
	}
	// A partition named twice in one request.
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "bad"
	for range 2 {
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Replicas = []int32{holder}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("duplicate entry: code %d, want INVALID_REQUEST", p.ErrorCode)
		}
	}
	if p, err := partitionMetadata(testContext(t), cl, "bad", 0); err != nil || !slices.Equal(p.Replicas, []int32{holder}) {
		t.Fatalf("replicas %v (%v) after refused requests, want [%d]", p.Replicas, err, holder)
	}
	if listed, err := adm.ListPartitionReassignments(testContext(t), kadm.TopicsSet{"bad": {0: struct{}{}}, "nope": {3: struct{}{}}}); err != nil || len(listed) != 0 {
		t.Fatalf("listed %+v, %v; want nothing", listed, err)
	}
}

// With tiered storage on a shared object store, a moved partition's new
// replica copies only the leader's local tail: its local log starts above
// 0, and the history before it is still served from the object store.
func TestReassignTieredCopiesOnlyTheTail(t *testing.T) {
	objects := t.TempDir()
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.ObjectStore = "file://" + objects
		cfg.RemoteLogTaskIntervalMs = 20
		cfg.LogRetentionCheckIntervalMs = 20
		cfg.FileDeleteDelayMs = 0
	})
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	adm := kadm.NewClient(cl)
	old := reassignCreate(t, c, cl, "tmv", tieredTopicConfigs())
	const n = 4000 // ≈ 900 KiB: about 14 segments of 64 KiB
	values := make([][]byte, n)
	ctx := testContext(t)
	for i := range values {
		values[i] = fmt.Appendf(nil, "record-%06d-%s", i, bytes.Repeat([]byte{'x'}, 200))
		cl.Produce(ctx, &kgo.Record{Topic: "tmv", Value: values[i]}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	leader := c.node(old).srv.topics.partition("tmv", 0)
	waitUntil(t, 20*time.Second, "the leader's local log start to move past 0", func() bool { return leader.Log().LogStartOffset() > 0 })

	moved := otherNodes(3, old)[0]
	if r := reassign(t, adm, "tmv", 0, []int32{moved}); r.Err != nil {
		t.Fatalf("reassign to %d: %v (%s)", moved, r.Err, r.ErrMessage)
	}
	awaitReassigned(t, cl, "tmv", []int32{moved})
	waitUntil(t, 10*time.Second, fmt.Sprintf("node %d to drop tmv-0", old), func() bool {
		return c.node(old).srv.topics.partition("tmv", 0) == nil
	})
	p := c.node(moved).srv.topics.partition("tmv", 0)
	if p == nil {
		t.Fatalf("node %d holds no tmv-0 after the move", moved)
	}
	if start := p.Log().LogStartOffset(); start == 0 {
		t.Fatalf("the new replica's local log starts at 0: it copied the whole history instead of the local tail")
	}
	if end := p.Log().LogEndOffset(); end != n {
		t.Fatalf("the new replica's log ends at %d, want %d", end, n)
	}

	// From offset 0, through the new leader: the head comes from the object store.
	rd := c.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"tmv": {0: kgo.NewOffset().At(0)}}), kgo.FetchMaxPartitionBytes(64<<10))
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := 0
	for next < n {
		fs := rd.PollFetches(cctx)
		if cctx.Err() != nil {
			t.Fatalf("consumed %d of %d records after the move", next, n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(next) || !bytes.Equal(r.Value, values[next]) {
				t.Fatalf("offset %d: got offset %d value %.20q", next, r.Offset, r.Value)
			}
			next++
		})
	}
}

// The quorum's answers map to Kafka codes: this is the path a request
// takes when the state changed between the handler's check and the apply.
func TestReassignErrorMapping(t *testing.T) {
	rec := cluster.ReassignPartition{Topic: "t", Partition: 0, Target: []int32{1}}
	cases := []struct {
		err         error
		want        int16
		requestWide bool
	}{
		{nil, 0, false},
		{fmt.Errorf("%w: t", cluster.ErrTopicNotFound), kerr.UnknownTopicOrPartition.Code, false},
		{fmt.Errorf("%w: t-3", cluster.ErrPartitionNotFound), kerr.UnknownTopicOrPartition.Code, false},
		{fmt.Errorf("%w: t-0: broker 9 is not registered", cluster.ErrInvalidReplicaAssignment), kerr.InvalidReplicaAssignment.Code, false},
		{fmt.Errorf("%w: t-0", cluster.ErrNoReassignmentInProgress), kerr.NoReassignmentInProgress.Code, false},
		{fmt.Errorf("metadata: proposal not applied: %w", context.DeadlineExceeded), kerr.RequestTimedOut.Code, false},
		{&metadata.NotLeaderError{Leader: -1}, kerr.RequestTimedOut.Code, false},
		{metadata.ErrClosed, kerr.NotController.Code, true},
		{errors.New("disk on fire"), kerr.UnknownServerError.Code, false},
	}
	for _, tc := range cases {
		got := reassignResult(rec, tc.err)
		if got.code != tc.want || got.requestWide != tc.requestWide || (tc.want != 0 && got.message == "") {
			t.Errorf("%v: got %+v, want code %d (request-wide %v) with a message", tc.err, got, tc.want, tc.requestWide)
		}
	}
}

// Without a quorum the change cannot commit: the node answers
// REQUEST_TIMED_OUT within the request's timeout_ms instead of hanging.
func TestReassignTimesOutWithoutQuorum(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) { cfg.ControlledShutdownEnable = false })
	cl := c.client()
	home := reassignCreate(t, c, cl, "tq", nil)
	others := otherNodes(3, home)
	for _, id := range others {
		c.node(id).stop()
	}
	one := c.client(kgo.SeedBrokers(c.node(home).cfg.Listen))
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = 500
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "tq"
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Replicas = []int32{others[0]}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	start := time.Now()
	raw, err := one.Broker(int(home)).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	resp := raw.(*kmsg.AlterPartitionAssignmentsResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("response %+v", resp)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("code %d, want REQUEST_TIMED_OUT", code)
	}
	if took < 400*time.Millisecond || took > 5*time.Second {
		t.Fatalf("answered after %v; want about the 500ms timeout", took)
	}
}
