package console

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testMetadata is a Metadata answer listing topics given as name →
// partitions (numbered from 0, listed in reverse as a broker may).
func testMetadata(topics map[string][]kmsg.MetadataResponseTopicPartition) *kmsg.MetadataResponse {
	md := kmsg.NewPtrMetadataResponse()
	for name, ps := range topics {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(name)
		for i := len(ps) - 1; i >= 0; i-- {
			p := ps[i]
			p.Partition = int32(i)
			t.Partitions = append(t.Partitions, p)
		}
		md.Topics = append(md.Topics, t)
	}
	return md
}

func part(leader int32, replicas, isr []int32) kmsg.MetadataResponseTopicPartition {
	p := kmsg.NewMetadataResponseTopicPartition()
	p.Leader, p.Replicas, p.ISR = leader, replicas, isr
	return p
}

// TestSnapshotIndex: topics sorted by name (errored ones left out), a
// case-insensitive search, and each problem state's partitions in order.
func TestSnapshotIndex(t *testing.T) {
	md := testMetadata(map[string][]kmsg.MetadataResponseTopicPartition{
		"orders": {
			part(1, []int32{1, 2, 3}, []int32{1, 2, 3}), // healthy
			part(2, []int32{1, 2, 3}, []int32{2, 3}),    // under-replicated, not preferred
			part(-1, []int32{1}, []int32{}),             // offline only
		},
		"Audit":    {part(3, []int32{3, 1}, []int32{3})}, // under-replicated
		"payments": {part(2, []int32{1, 2}, []int32{1, 2})},
	})
	broken := kmsg.NewMetadataResponseTopic()
	broken.Topic, broken.ErrorCode = kmsg.StringPtr("broken"), kerr.UnknownTopicOrPartition.Code
	md.Topics = append(md.Topics, broken)
	s := newSnapshot(md, time.Now())
	var names []string
	for _, te := range s.topics {
		names = append(names, te.name)
	}
	if want := []string{"Audit", "orders", "payments"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("topics %v, want %v", names, want)
	}
	if s.partitions != 5 {
		t.Fatalf("partitions %d, want 5", s.partitions)
	}
	if got := s.matching("audit"); len(got) != 1 || got[0].name != "Audit" {
		t.Fatalf("search audit: %v", got)
	}
	if p, ok := s.partition(partitionRef{"orders", 2}); !ok || p.Partition != 2 || p.Leader != -1 {
		t.Fatalf("orders-2: %+v %v", p, ok)
	}
	if _, ok := s.partition(partitionRef{"orders", 3}); ok {
		t.Fatal("orders-3 found")
	}
	for state, want := range map[partitionState][]partitionRef{
		stateUnderReplicated:    {{"Audit", 0}, {"orders", 1}},
		stateOffline:            {{"orders", 2}},
		stateNonPreferredLeader: {{"orders", 1}, {"payments", 0}},
	} {
		if got := s.byState[state]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", state, got, want)
		}
	}
}

func TestPageBounds(t *testing.T) {
	for _, tc := range []struct{ n, page, size, from, to int }{
		{10, 1, 4, 0, 4}, {10, 3, 4, 8, 10}, {10, 4, 4, 10, 10}, {0, 1, 50, 0, 0}, {10, 1 << 31, 500, 10, 10},
	} {
		if from, to := pageBounds(tc.n, tc.page, tc.size); from != tc.from || to != tc.to {
			t.Errorf("pageBounds(%d, %d, %d) = %d, %d; want %d, %d", tc.n, tc.page, tc.size, from, to, tc.from, tc.to)
		}
	}
}

// TestSnapshotCache: requests within the TTL share one Metadata request,
// concurrent ones too; a snapshot past the TTL but within maxStale answers
// at once while a new one is fetched in the background; an older one or an
// invalidation waits for a new one; a failed fetch is not kept.
func TestSnapshotCache(t *testing.T) {
	var fetches atomic.Int32
	release := make(chan struct{})
	var fail atomic.Bool
	sc := newSnapshotCache(time.Second, 4*time.Second)
	clock := time.Unix(1000, 0)
	var clockMu sync.Mutex
	sc.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(d time.Duration) { clockMu.Lock(); clock = clock.Add(d); clockMu.Unlock() }
	sc.fetch = func(ctx context.Context, _ *kgo.Client) (*kmsg.MetadataResponse, error) {
		n := fetches.Add(1)
		<-release
		if fail.Load() {
			return nil, errors.New("cluster down")
		}
		return testMetadata(map[string][]kmsg.MetadataResponseTopicPartition{fmt.Sprint("t", n): {part(1, []int32{1}, []int32{1})}}), nil
	}
	ctx := context.Background()

	// Ten concurrent requests, one fetch.
	var wg sync.WaitGroup
	got := make([]*metadataSnapshot, 10)
	for i := range got {
		wg.Go(func() {
			s, err := sc.get(ctx, nil)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	time.Sleep(50 * time.Millisecond) // let them all find the fetch under way
	close(release)
	wg.Wait()
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches for concurrent requests, want 1", fetches.Load())
	}
	for _, s := range got {
		if s != got[0] {
			t.Fatal("concurrent requests got different snapshots")
		}
	}
	// Within the TTL: the same snapshot.
	advance(900 * time.Millisecond)
	if s, _ := sc.get(ctx, nil); s != got[0] || fetches.Load() != 1 {
		t.Fatalf("within the TTL: fetches %d", fetches.Load())
	}
	// Past it, within maxStale: the same one at once, and a new one
	// fetched in the background that later requests get.
	advance(200 * time.Millisecond)
	if s, _ := sc.get(ctx, nil); s != got[0] {
		t.Fatal("past the TTL, within maxStale: not the stale snapshot")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := sc.get(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s != got[0] {
			if fetches.Load() != 2 || s.topics[0].name != "t2" {
				t.Fatalf("after the background fetch: %s, fetches %d", s.topics[0].name, fetches.Load())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background fetch never replaced the stale snapshot (fetches %d)", fetches.Load())
		}
		time.Sleep(time.Millisecond) // the background fetch has no notification
	}
	// Past maxStale: the request waits for a new one.
	advance(5 * time.Second)
	if s, _ := sc.get(ctx, nil); fetches.Load() != 3 || s.topics[0].name != "t3" {
		t.Fatalf("past maxStale: fetches %d", fetches.Load())
	}
	// Invalidated: a new one at once.
	sc.invalidate()
	if s, _ := sc.get(ctx, nil); fetches.Load() != 4 || s.topics[0].name != "t4" {
		t.Fatalf("after invalidate: fetches %d", fetches.Load())
	}
	// A failure is returned and not kept.
	fail.Store(true)
	sc.invalidate()
	if _, err := sc.get(ctx, nil); err == nil {
		t.Fatal("a failed fetch gave no error")
	}
	fail.Store(false)
	if s, err := sc.get(ctx, nil); err != nil || fetches.Load() != 6 || s.topics[0].name != "t6" {
		t.Fatalf("after a failure: %v, fetches %d", err, fetches.Load())
	}
}
