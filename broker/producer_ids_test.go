package broker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// TestProducerIDBlocks: ids are unique across blocks and concurrent
// callers; the next block is reserved in the background while the current
// one still serves, so a held proposal delays no caller until the block
// runs out.
func TestProducerIDBlocks(t *testing.T) {
	ctx := testContext(t)
	node, err := metadata.OpenNode(ctx, metadata.Config{NodeID: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	meta := newMetadataClient(node)
	var tasks sync.WaitGroup
	defer tasks.Wait()
	spawn := func(fn func()) {
		tasks.Add(1)
		go func() { defer tasks.Done(); fn() }()
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	a := newProducerIDBlocks(stop, meta, spawn)

	seen := map[int64]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 400 {
				id, err := a.allocate()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d given twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 3200 {
		t.Fatalf("%d distinct ids, want 3200", len(seen))
	}

	// Hold the next proposal: the ids left in the current block and the
	// spare still come at once.
	waitUntil(t, 10*time.Second, "no refill in flight", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.mu.refill == nil
	})
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	meta.setHook(func(hctx context.Context, rec cluster.Record) {
		if _, ok := rec.(cluster.AllocateProducerIDs); ok {
			held <- struct{}{}
			select {
			case <-release:
			case <-hctx.Done():
			}
		}
	})
	a.mu.Lock()
	left := a.mu.limit - a.mu.next
	if a.mu.spare >= 0 {
		left += producerIDBlockSize
	}
	a.mu.Unlock()
	start := time.Now()
	for range left {
		if _, err := a.allocate(); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("%d ids from reserved blocks took %v", left, took)
	}
	got := make(chan error, 1)
	go func() {
		_, err := a.allocate()
		got <- err
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no refill was proposed")
	}
	select {
	case err := <-got:
		t.Fatalf("an id past the reserved blocks came before the proposal committed: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
