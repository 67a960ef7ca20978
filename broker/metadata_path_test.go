package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Tests of the one metadata path (metadata_client.go): handlers propose and
// wait for the applied index; only followMetadata reconciles; nothing holds
// a lock across a proposal.

// blockCreates makes the node's metadata client hold every CreateTopic
// record named name before proposing it, until release is closed (or the
// proposal's context ends). entered receives the node id each time one is
// held.
func blockCreates(tb *testBroker, name string, entered chan<- int32, release <-chan struct{}) {
	id := tb.cfg.NodeID
	tb.srv.meta.setHook(func(ctx context.Context, rec cluster.Record) {
		if !createsTopic(rec, name) {
			return
		}
		entered <- id
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
}

// createsTopic reports whether rec (a CreateTopic, or a TopicBatch
// holding one) creates the topic name.
func createsTopic(rec cluster.Record, name string) bool {
	switch r := rec.(type) {
	case cluster.CreateTopic:
		return r.Name == name
	case cluster.TopicBatch:
		for _, item := range r.Records {
			if createsTopic(item, name) {
				return true
			}
		}
	}
	return false
}

// localLeader is the leader the node's own replica of the partition
// follows (what reconcile last gave it), -2 when the node hosts none.
func localLeader(tb *testBroker, topic string, partition int32) int32 {
	p := tb.srv.topics.partition(topic, partition)
	if p == nil {
		return -2
	}
	return p.Role().Leader
}

// TestMetadataBlockedCreateDoesNotDelayLeaderChange: a CreateTopics held in
// its proposal on a node does not delay that node's reaction to a leader
// change applied meanwhile (followMetadata never waits for an admin
// operation), and the held creation completes once released.
func TestMetadataBlockedCreateDoesNotDelayLeaderChange(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "moving"); err != nil {
		t.Fatal(err)
	}
	var current cluster.Partition
	waitUntil(t, 15*time.Second, "moving-0 on every node with a full ISR", func() bool {
		ct, ok := c.node(1).srv.clusterState().Topic("moving")
		if !ok || len(ct.Partitions[0].ISR) != 3 || ct.Partitions[0].Leader < 0 {
			return false
		}
		current = ct.Partitions[0]
		for id := int32(1); id <= 3; id++ {
			if localLeader(c.node(id), "moving", 0) != current.Leader {
				return false
			}
		}
		return true
	})

	entered := make(chan int32, 3)
	release := make(chan struct{})
	for id := int32(1); id <= 3; id++ {
		blockCreates(c.node(id), "blocked", entered, release)
	}
	created := make(chan error, 1)
	go func() {
		_, err := adm.CreateTopic(ctx, 1, 3, nil, "blocked")
		created <- err
	}()
	var held int32
	select {
	case held = <-entered:
	case err := <-created:
		t.Fatalf("CreateTopics returned before its proposal was held: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("the CreateTopics never reached its proposal")
	}

	// Move the leadership of moving-0 to another ISR member, with a record
	// proposed straight to the quorum (not through the held client).
	newLeader := current.Leader%3 + 1
	rec := cluster.AlterPartition{Topic: "moving", Partition: 0, PartitionEpoch: current.PartitionEpoch, LeaderEpoch: current.LeaderEpoch, NewISR: current.ISR, Leader: &newLeader}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := c.node(held).srv.member.Propose(pctx, rec)
	cancel()
	if err != nil {
		t.Fatalf("moving the leadership: %v", err)
	}
	start := time.Now()
	waitUntil(t, 3*time.Second, fmt.Sprintf("node %d (CreateTopics held) to follow leader %d", held, newLeader), func() bool {
		return localLeader(c.node(held), "moving", 0) == newLeader
	})
	t.Logf("node %d applied the leader change %v after it committed, its CreateTopics still held", held, time.Since(start).Round(time.Millisecond))
	select {
	case err := <-created:
		t.Fatalf("CreateTopics returned while held: %v", err)
	default:
	}

	close(release)
	select {
	case err := <-created:
		if err != nil {
			t.Fatalf("the released CreateTopics: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the released CreateTopics did not return")
	}
	if c.node(held).srv.topics.get("blocked") == nil {
		t.Fatal("CreateTopics answered before the handling node opened the topic")
	}
}

// TestMetadataConcurrentCreateSameName: CreateTopics of one name from two
// clients at once, both past validation before either commits: exactly one
// succeeds, the other gets TOPIC_ALREADY_EXISTS from the state machine.
// Unsynchronised, many at once: still exactly one.
func TestMetadataConcurrentCreateSameName(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)

	// Both proposals are held until both have arrived.
	var (
		mu      sync.Mutex
		arrived int
		both    = make(chan struct{})
	)
	tb.srv.meta.setHook(func(hctx context.Context, rec cluster.Record) {
		if !createsTopic(rec, "twin") {
			return
		}
		mu.Lock()
		arrived++
		if arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-hctx.Done():
		}
	})
	results := createConcurrently(t, ctx, tb, "twin", 2)
	mu.Lock()
	if arrived != 2 {
		t.Fatalf("%d creations reached the quorum, want both", arrived)
	}
	mu.Unlock()
	checkOneCreated(t, results)
	tb.srv.meta.setHook(nil)

	checkOneCreated(t, createConcurrently(t, ctx, tb, "crowd", 8))
	if tp := tb.srv.topics.get("crowd"); tp == nil || tp.meta.Partitions() != 1 {
		t.Fatalf("crowd: %+v", tp)
	}
}

// createConcurrently creates topic from n clients (one connection each) at
// once and returns each client's error.
func createConcurrently(t *testing.T, ctx context.Context, tb *testBroker, topic string, n int) []error {
	t.Helper()
	admins := make([]*kadm.Client, n)
	for i := range admins {
		admins[i] = kadm.NewClient(tb.client())
		if _, err := admins[i].BrokerMetadata(ctx); err != nil { // connected before the race
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, adm := range admins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
			if err == nil {
				err = resp.Err
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs
}

func checkOneCreated(t *testing.T, errs []error) {
	t.Helper()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, kerr.TopicAlreadyExists):
			t.Fatalf("a creation failed with %v, want TOPIC_ALREADY_EXISTS", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d creations succeeded, want exactly one: %v", ok, len(errs), errs)
	}
}

// TestMetadataBlockedCreateDoesNotBlockAdmin: admin operations do not
// serialise behind one held in its proposal: another topic is created,
// grown, reconfigured and deleted meanwhile.
func TestMetadataBlockedCreateDoesNotBlockAdmin(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	entered := make(chan int32, 1)
	release := make(chan struct{})
	blockCreates(tb, "slow", entered, release)
	adm := kadm.NewClient(tb.client())
	created := make(chan error, 1)
	go func() {
		_, err := kadm.NewClient(tb.client()).CreateTopic(ctx, 1, 1, nil, "slow")
		created <- err
	}()
	select {
	case <-entered:
	case <-time.After(15 * time.Second):
		t.Fatal("the CreateTopics never reached its proposal")
	}
	start := time.Now()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "fast"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreatePartitions(ctx, 2, "fast"); err != nil {
		t.Fatal(err)
	}
	retention := "1234"
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &retention}}, "fast"); err != nil {
		t.Fatal(err)
	}
	if tp := tb.srv.topics.get("fast"); tp == nil || len(tp.partitions) != 3 || tb.srv.topics.topicConfig(tp).values["retention.ms"] != "1234" {
		t.Fatalf("fast after the changes: %+v", tp)
	}
	if _, err := adm.DeleteTopic(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	if tb.srv.topics.get("fast") != nil {
		t.Fatal("DeleteTopics answered before this node removed the topic")
	}
	t.Logf("create, grow, alter and delete of another topic took %v with a CreateTopics held", time.Since(start).Round(time.Millisecond))
	select {
	case err := <-created:
		t.Fatalf("the held CreateTopics returned: %v", err)
	default:
	}
	close(release)
	if err := <-created; err != nil {
		t.Fatal(err)
	}
}

// TestMetadataClientWaitApplied: waitApplied returns once the applied-state
// loop has marked the index, fails when its context ends, and fails at
// once after close.
func TestMetadataClientWaitApplied(t *testing.T) {
	c := newMetadataClient(nil)
	c.markApplied(5)
	if err := c.waitApplied(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.waitApplied(context.Background(), 7) }()
	c.markApplied(6)
	select {
	case err := <-done:
		t.Fatalf("returned at index 6: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.markApplied(7)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.markApplied(3) // never backwards
	if got := c.appliedIndex(); got != 7 {
		t.Fatalf("applied index %d after marking 3, want 7", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.waitApplied(ctx, 8); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past the context: %v", err)
	}
	go func() { done <- c.waitApplied(context.Background(), 9) }()
	c.close()
	if err := <-done; !errors.Is(err, errMetadataClosed) {
		t.Fatalf("wait across close: %v", err)
	}
	if err := c.waitApplied(context.Background(), 7); err != nil {
		t.Fatalf("an index already applied after close: %v", err)
	}
}

// TestAppliedFeedSkipsHeartbeats: a batch of heartbeats only moves the
// index; any other record or a snapshot asks for a reconcile pass.
func TestAppliedFeedSkipsHeartbeats(t *testing.T) {
	f := &appliedFeed{wake: make(chan struct{}, 1)}
	f.push(appliedAt(3, cluster.BrokerHeartbeat{NodeID: 1}))
	f.push(appliedAt(4, cluster.BrokerHeartbeat{NodeID: 2}))
	if idx, changed := f.take(); idx != 4 || changed {
		t.Fatalf("after heartbeats: %d, %v", idx, changed)
	}
	f.push(appliedAt(5, cluster.DeleteTopic{Name: "x"}))
	f.push(appliedAt(6, cluster.BrokerHeartbeat{NodeID: 1}))
	if idx, changed := f.take(); idx != 6 || !changed {
		t.Fatalf("after a deletion: %d, %v", idx, changed)
	}
	if _, changed := f.take(); changed {
		t.Fatal("take did not reset")
	}
	a := appliedAt(7, nil)
	a.Snapshot = true
	f.push(a)
	if _, changed := f.take(); !changed {
		t.Fatal("a snapshot asked for no pass")
	}
	if len(f.wake) != 1 {
		t.Fatal("no pending wake-up")
	}
}

func appliedAt(index uint64, rec cluster.Record) metadata.Applied {
	return metadata.Applied{Index: index, Record: rec}
}
