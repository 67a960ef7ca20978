package tiering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// chunkTestStore wraps a MemStore, counts GetRange calls and lets a test
// fail, cut short or block them.
type chunkTestStore struct {
	*MemStore
	ranges   atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64

	mu struct {
		sync.Mutex
		failNext  error // the next GetRange fails with it
		shortNext int64 // the next GetRange body has this many bytes fewer (negative: more)
	}
	// When started is set, each GetRange sends on it and then waits for
	// release (or, with honourCtx, for its ctx to end).
	started   chan chunkTestRange
	release   chan struct{}
	honourCtx bool
}

type chunkTestRange struct {
	key            string
	offset, length int64
}

var errInjected = errors.New("injected failure")

func newChunkTestStore(t testing.TB, key string, data []byte) *chunkTestStore {
	t.Helper()
	s := &chunkTestStore{MemStore: NewMemStore()}
	if err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	return s
}

// blocking makes every GetRange wait until the test releases it.
func (s *chunkTestStore) blocking(honourCtx bool) *chunkTestStore {
	s.started = make(chan chunkTestRange, 100)
	s.release = make(chan struct{})
	s.honourCtx = honourCtx
	return s
}

func (s *chunkTestStore) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	s.ranges.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		seen := s.maxSeen.Load()
		if n <= seen || s.maxSeen.CompareAndSwap(seen, n) {
			break
		}
	}
	if s.started != nil {
		s.started <- chunkTestRange{key, offset, length}
		if s.honourCtx {
			select {
			case <-s.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		} else {
			<-s.release
		}
	}
	s.mu.Lock()
	fail, short := s.mu.failNext, s.mu.shortNext
	s.mu.failNext, s.mu.shortNext = nil, 0
	s.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	body, err := s.MemStore.GetRange(ctx, key, offset, length)
	if err != nil || short == 0 {
		return body, err
	}
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		return nil, err
	}
	if short > 0 {
		data = data[:int64(len(data))-short]
	} else {
		data = append(data, make([]byte, -short)...)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func chunkTestData(size int) []byte {
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

func newTestChunkCache(t testing.TB, store ObjectStore, opts ChunkCacheOptions) (*ChunkCache, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chunks")
	c, err := NewChunkCache(dir, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

func chunkFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// mustReadChunkCache reads [off, off+length) and checks it against data.
func mustReadChunkCache(t testing.TB, c *ChunkCache, key string, data []byte, off, length int64) {
	t.Helper()
	p := make([]byte, length)
	n, err := c.ReadAt(context.Background(), key, int64(len(data)), p, off)
	want := min(length, int64(len(data))-off)
	if int64(n) != want {
		t.Fatalf("ReadAt(%d, %d) read %d bytes, want %d (err %v)", off, length, n, want, err)
	}
	if want < length && err != io.EOF {
		t.Fatalf("ReadAt(%d, %d) past the end: err %v, want io.EOF", off, length, err)
	}
	if want == length && err != nil {
		t.Fatalf("ReadAt(%d, %d): %v", off, length, err)
	}
	if !bytes.Equal(p[:n], data[off:off+want]) {
		t.Fatalf("ReadAt(%d, %d) returned the wrong bytes", off, length)
	}
}

const chunkTestKey = "v1/orders-abc/0/00000000000000000000-u1.log"

func TestChunkCacheReadsMatchSource(t *testing.T) {
	data := chunkTestData(10*1000 + 123)
	for _, tc := range []struct {
		name     string
		maxBytes int64
	}{
		{"roomy", 1 << 20},
		{"evicting", 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newChunkTestStore(t, chunkTestKey, data)
			c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: tc.maxBytes, ReadAhead: 2})
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					for range 200 {
						off := rng.Int64N(int64(len(data)))
						length := 1 + rng.Int64N(3500)
						mustReadChunkCache(t, c, chunkTestKey, data, off, length)
					}
				})
			}
			wg.Wait()
			// Edges: first byte, last byte, exact chunk, whole object.
			mustReadChunkCache(t, c, chunkTestKey, data, 0, 1)
			mustReadChunkCache(t, c, chunkTestKey, data, int64(len(data))-1, 1)
			mustReadChunkCache(t, c, chunkTestKey, data, int64(len(data))-1, 10)
			mustReadChunkCache(t, c, chunkTestKey, data, 2000, 1000)
			mustReadChunkCache(t, c, chunkTestKey, data, 0, int64(len(data)))
			if s := c.Stats(); s.Bytes > tc.maxBytes {
				t.Fatalf("Bytes %d over MaxBytes %d", s.Bytes, tc.maxBytes)
			}
		})
	}
}

func TestChunkCacheRejectsBadReads(t *testing.T) {
	data := chunkTestData(100)
	c, _ := newTestChunkCache(t, newChunkTestStore(t, chunkTestKey, data), ChunkCacheOptions{ChunkSize: 10, MaxBytes: 100})
	p := make([]byte, 5)
	for _, off := range []int64{-1, 100, 1000} {
		if _, err := c.ReadAt(context.Background(), chunkTestKey, 100, p, off); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("ReadAt at %d: %v, want ErrInvalidRange", off, err)
		}
		if _, _, err := c.TryReadAt(chunkTestKey, 100, p, off); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("TryReadAt at %d: %v, want ErrInvalidRange", off, err)
		}
	}
	if n, err := c.ReadAt(context.Background(), chunkTestKey, 100, nil, 50); n != 0 || err != nil {
		t.Errorf("empty ReadAt = %d, %v", n, err)
	}
}

func TestChunkCacheOptions(t *testing.T) {
	store := NewMemStore()
	if _, err := NewChunkCache(t.TempDir(), store, ChunkCacheOptions{ChunkSize: 100, MaxBytes: 99}); err == nil {
		t.Error("MaxBytes below ChunkSize accepted")
	}
	if _, err := NewChunkCache(t.TempDir(), store, ChunkCacheOptions{ReadAhead: -1}); err == nil {
		t.Error("negative ReadAhead accepted")
	}
	c, err := NewChunkCache(t.TempDir(), store, ChunkCacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := DefaultChunkCacheOptions()
	want.ReadAhead = 0
	if c.opts != want {
		t.Errorf("options %+v, want %+v", c.opts, want)
	}
}

func TestChunkCacheSecondReadIsHit(t *testing.T) {
	data := chunkTestData(5000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	mustReadChunkCache(t, c, chunkTestKey, data, 1500, 1000) // chunks 1 and 2
	if got := store.ranges.Load(); got != 2 {
		t.Fatalf("first read: %d GetRange calls, want 2", got)
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 1200, 1700)
	if got := store.ranges.Load(); got != 2 {
		t.Fatalf("second read: %d GetRange calls, want still 2", got)
	}
	s := c.Stats()
	if s.Hits != 2 || s.Misses != 2 || s.BytesFetched != 2000 || s.Chunks != 2 || s.Bytes != 2000 {
		t.Fatalf("stats %+v", s)
	}
}

func TestChunkCacheSingleflight(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(false)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	const readers = 8
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() { mustReadChunkCache(t, c, chunkTestKey, data, 1100, 500) })
	}
	<-store.started
	waitForChunkCache(t, c, func(s ChunkCacheStats) bool { return s.Misses == readers })
	close(store.release)
	wg.Wait()
	if got := store.ranges.Load(); got != 1 {
		t.Fatalf("%d GetRange calls for %d readers of one chunk, want 1", got, readers)
	}
}

// waitForChunkCache yields until cond holds for the cache's stats: the
// cache counts a miss under its lock just before the reader waits, so this
// observes readers reaching the wait without sleeping.
func waitForChunkCache(t *testing.T, c *ChunkCache, cond func(ChunkCacheStats) bool) {
	t.Helper()
	for !cond(c.Stats()) {
		runtime.Gosched()
	}
}

func TestChunkCacheCancelledWaiterLeavesLoad(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(true)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error)
	go func() {
		_, err := c.ReadAt(ctx, chunkTestKey, 3000, make([]byte, 10), 0)
		cancelled <- err
	}()
	<-store.started
	patient := make(chan struct{})
	go func() {
		defer close(patient)
		mustReadChunkCache(t, c, chunkTestKey, data, 0, 10)
	}()
	waitForChunkCache(t, c, func(s ChunkCacheStats) bool { return s.Misses == 2 })
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled reader: %v, want context.Canceled", err)
	}
	close(store.release)
	<-patient
	if got := store.ranges.Load(); got != 1 {
		t.Fatalf("%d GetRange calls, want 1", got)
	}
}

func TestChunkCacheEvictsLeastRecentlyUsed(t *testing.T) {
	data := chunkTestData(1000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 100, MaxBytes: 300})
	for _, chunk := range []int64{0, 1, 2, 0, 3} { // 0 touched after 2: 1 is oldest
		mustReadChunkCache(t, c, chunkTestKey, data, chunk*100, 100)
	}
	s := c.Stats()
	if s.Bytes != 300 || s.Chunks != 3 || s.Evictions != 1 {
		t.Fatalf("stats %+v, want 3 chunks, 300 bytes, 1 eviction", s)
	}
	for chunk, want := range map[int64]bool{0: true, 1: false, 2: true, 3: true} {
		if _, ok, _ := c.TryReadAt(chunkTestKey, 1000, make([]byte, 100), chunk*100); ok != want {
			t.Errorf("chunk %d cached = %v, want %v", chunk, ok, want)
		}
	}
	// The short last chunk counts its own size.
	mustReadChunkCache(t, c, chunkTestKey, data, 950, 50)
	if s := c.Stats(); s.Bytes > 300 {
		t.Fatalf("Bytes %d over MaxBytes", s.Bytes)
	}
	c.Close() // evicted files are unlinked once the loads return
	if files := chunkFiles(t, dir); len(files) != int(c.Stats().Chunks) {
		t.Fatalf("%d files for %d chunks: %v", len(files), c.Stats().Chunks, files)
	}
}

func TestChunkCacheReaderSurvivesEviction(t *testing.T) {
	data := chunkTestData(1000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 100, MaxBytes: 100})
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 100)
	opened, resume := make(chan struct{}), make(chan struct{})
	c.testHookOpened = func(key string, index int64) {
		if index == 0 {
			close(opened)
			<-resume
		}
	}
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		mustReadChunkCache(t, c, chunkTestKey, data, 10, 80)
	}()
	<-opened
	mustReadChunkCache(t, c, chunkTestKey, data, 500, 100) // evicts chunk 0
	if s := c.Stats(); s.Evictions != 1 {
		t.Fatalf("stats %+v, want 1 eviction", s)
	}
	if _, ok, _ := c.TryReadAt(chunkTestKey, 1000, make([]byte, 1), 0); ok {
		t.Fatal("chunk 0 still cached")
	}
	c.Close() // waits for the load of chunk 5, which unlinks chunk 0's file
	if files := chunkFiles(t, dir); len(files) != 1 {
		t.Fatalf("files %v, want only chunk 5's", files)
	}
	close(resume) // the paused reader reads the unlinked file
	<-reader
}

func TestChunkCacheFailedLoadIsRetried(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	store.mu.Lock()
	store.mu.failNext = errInjected
	store.mu.Unlock()
	_, err := c.ReadAt(context.Background(), chunkTestKey, 3000, make([]byte, 10), 0)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), chunkTestKey) {
		t.Fatalf("ReadAt: %v, want the injected error naming the key", err)
	}
	if s := c.Stats(); s.LoadErrors != 1 || s.Chunks != 0 || s.Bytes != 0 {
		t.Fatalf("stats %+v", s)
	}
	if files := chunkFiles(t, dir); len(files) != 0 {
		t.Fatalf("failed load left files %v", files)
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 10)
	if got := store.ranges.Load(); got != 2 {
		t.Fatalf("%d GetRange calls, want 2 (the failure, the retry)", got)
	}
}

func TestChunkCacheRejectsWrongLengthBody(t *testing.T) {
	for _, short := range []int64{1, 999, -1} {
		t.Run(fmt.Sprint(short), func(t *testing.T) {
			data := chunkTestData(3000)
			store := newChunkTestStore(t, chunkTestKey, data)
			c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
			store.mu.Lock()
			store.mu.shortNext = short
			store.mu.Unlock()
			if _, err := c.ReadAt(context.Background(), chunkTestKey, 3000, make([]byte, 10), 1000); err == nil {
				t.Fatal("a body of the wrong length was accepted")
			}
			if s := c.Stats(); s.Chunks != 0 || s.LoadErrors != 1 {
				t.Fatalf("stats %+v", s)
			}
			if files := chunkFiles(t, dir); len(files) != 0 {
				t.Fatalf("rejected load left files %v", files)
			}
			mustReadChunkCache(t, c, chunkTestKey, data, 1000, 10)
		})
	}
}

func TestChunkCacheTryReadAtNeverFetches(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(false)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	p := make([]byte, 1500)
	if _, ok, err := c.TryReadAt(chunkTestKey, 3000, p, 0); ok || err != nil {
		t.Fatalf("TryReadAt on a cold cache: ok %v err %v", ok, err)
	}
	if got := store.ranges.Load(); got != 0 {
		t.Fatalf("TryReadAt made %d GetRange calls", got)
	}
	// A load in flight (blocked in the store) does not block TryReadAt.
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		mustReadChunkCache(t, c, chunkTestKey, data, 0, 1500)
	}()
	<-store.started
	if _, ok, _ := c.TryReadAt(chunkTestKey, 3000, p, 0); ok {
		t.Fatal("TryReadAt succeeded while the chunk was loading")
	}
	close(store.release)
	<-reader
	before := store.ranges.Load()
	n, ok, err := c.TryReadAt(chunkTestKey, 3000, p, 0)
	if !ok || err != nil || n != 1500 || !bytes.Equal(p, data[:1500]) {
		t.Fatalf("TryReadAt of cached chunks: n %d ok %v err %v", n, ok, err)
	}
	if _, ok, _ := c.TryReadAt(chunkTestKey, 3000, p, 2500); ok {
		t.Fatal("TryReadAt of an uncached chunk succeeded")
	}
	if store.ranges.Load() != before {
		t.Fatal("TryReadAt called the store")
	}
}

func TestChunkCacheReadAhead(t *testing.T) {
	data := chunkTestData(4500) // chunks 0-3 full, 4 of 500 bytes
	store := newChunkTestStore(t, chunkTestKey, data)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000, ReadAhead: 2})
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 1000) // chunk 0; read-ahead 1, 2
	// Prefetch joins the read-ahead loads in flight and starts none.
	<-c.Prefetch(chunkTestKey, 4500, 1000, 2000)
	if got := store.ranges.Load(); got != 3 {
		t.Fatalf("%d GetRange calls after a read with read-ahead 2, want 3", got)
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 1000, 2000) // hits; read-ahead 3, 4
	<-c.Prefetch(chunkTestKey, 4500, 3000, 1500)
	s := c.Stats()
	if store.ranges.Load() != 5 || s.Hits != 2 || s.Misses != 1 || s.Chunks != 5 || s.Bytes != 4500 {
		t.Fatalf("ranges %d stats %+v", store.ranges.Load(), s)
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 4000, 500) // last chunk: nothing to read ahead
	if got := store.ranges.Load(); got != 5 {
		t.Fatalf("%d GetRange calls, want 5", got)
	}
}

func TestChunkCachePrefetch(t *testing.T) {
	data := chunkTestData(6000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	<-c.Prefetch(chunkTestKey, 6000, 1500, 2000) // chunks 1-3
	if s := c.Stats(); store.ranges.Load() != 3 || s.Chunks != 3 || s.Hits+s.Misses != 0 {
		t.Fatalf("ranges %d stats %+v", store.ranges.Load(), s)
	}
	<-c.Prefetch(chunkTestKey, 6000, 1000, 3000) // all cached
	<-c.Prefetch(chunkTestKey, 6000, 5500, 1e9)  // clipped to chunk 5
	<-c.Prefetch(chunkTestKey, 6000, 7000, 10)   // past the end: nothing
	if got := store.ranges.Load(); got != 4 {
		t.Fatalf("%d GetRange calls, want 4", got)
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 1000, 3000)
	if got := store.ranges.Load(); got != 4 {
		t.Fatalf("reading prefetched chunks made GetRange calls")
	}
}

func TestChunkCachePrefetchConcurrencyBound(t *testing.T) {
	data := chunkTestData(6000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(false)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000, Concurrency: 2})
	done := c.Prefetch(chunkTestKey, 6000, 0, 6000)
	for range 6 {
		<-store.started
		if n := store.inFlight.Load(); n > 2 {
			t.Fatalf("%d range requests in flight, Concurrency is 2", n)
		}
		store.release <- struct{}{}
	}
	<-done
	if s := c.Stats(); s.Chunks != 6 || store.maxSeen.Load() > 2 {
		t.Fatalf("stats %+v, max in flight %d", s, store.maxSeen.Load())
	}
}

func TestChunkCacheReaderOvertakesQueuedPrefetch(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(false)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000, Concurrency: 1})
	done := c.Prefetch(chunkTestKey, 3000, 0, 2000) // one of chunks 0, 1 takes the slot
	first := <-store.started
	queued := 1000 - first.offset // the other one waits for the slot
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		mustReadChunkCache(t, c, chunkTestKey, data, queued, 10)
	}()
	if r := <-store.started; r.offset != queued {
		t.Errorf("second request at %d, want %d", r.offset, queued)
	}
	close(store.release)
	<-reader
	<-done
	if got := store.ranges.Load(); got != 2 {
		t.Fatalf("%d GetRange calls, want 2", got)
	}
}

func TestChunkCacheRemove(t *testing.T) {
	data := chunkTestData(3000)
	other := "v1/orders-abc/0/00000000000000000100-u2.log"
	store := newChunkTestStore(t, chunkTestKey, data)
	if err := store.Put(context.Background(), other, bytes.NewReader(data), 3000); err != nil {
		t.Fatal(err)
	}
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 3000)
	mustReadChunkCache(t, c, other, data, 0, 1000)
	c.Remove(chunkTestKey)
	if s := c.Stats(); s.Chunks != 1 || s.Bytes != 1000 || s.Evictions != 0 {
		t.Fatalf("stats after Remove %+v", s)
	}
	if files := chunkFiles(t, dir); len(files) != 1 {
		t.Fatalf("files after Remove: %v", files)
	}
	if _, ok, _ := c.TryReadAt(chunkTestKey, 3000, make([]byte, 1), 0); ok {
		t.Fatal("removed chunk still readable from cache")
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 10)
	if got := store.ranges.Load(); got != 5 {
		t.Fatalf("%d GetRange calls, want 5", got)
	}
	c.Remove("never-cached")
}

func TestChunkCacheRemoveDuringLoad(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(false)
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000})
	done := c.Prefetch(chunkTestKey, 3000, 0, 1000)
	<-store.started
	c.Remove(chunkTestKey)
	close(store.release)
	<-done
	c.Close()
	if s := c.Stats(); s.Chunks != 0 {
		t.Fatalf("a load finishing after Remove was cached: %+v", s)
	}
	if files := chunkFiles(t, dir); len(files) != 0 {
		t.Fatalf("files %v", files)
	}
}

func TestChunkCacheCloseWaitsForLoads(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data).blocking(true)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 10000, Concurrency: 1})
	done := c.Prefetch(chunkTestKey, 3000, 0, 3000) // one loading, two queued for the slot
	<-store.started
	readErr := make(chan error)
	go func() {
		_, err := c.ReadAt(context.Background(), chunkTestKey, 3000, make([]byte, 10), 0)
		readErr <- err
	}()
	waitForChunkCache(t, c, func(s ChunkCacheStats) bool { return s.Misses == 1 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	default:
		t.Fatal("Close returned before the prefetch finished")
	}
	if n := store.inFlight.Load(); n != 0 {
		t.Fatalf("Close returned with %d range requests in flight", n)
	}
	if err := <-readErr; !errors.Is(err, ErrChunkCacheClosed) {
		t.Fatalf("reader waiting across Close: %v, want ErrChunkCacheClosed", err)
	}
	if s := c.Stats(); s.LoadErrors != 3 || s.Chunks != 0 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := c.ReadAt(context.Background(), chunkTestKey, 3000, make([]byte, 1), 0); !errors.Is(err, ErrChunkCacheClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
	<-c.Prefetch(chunkTestKey, 3000, 0, 3000)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewChunkCacheEmptiesDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"old.chunk", "loading-1.tmp", "sub/deeper"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewChunkCache(dir, NewMemStore(), ChunkCacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if files := chunkFiles(t, dir); len(files) != 0 {
		t.Fatalf("old files survived: %v", files)
	}
	if s := c.Stats(); s != (ChunkCacheStats{}) {
		t.Fatalf("stats of a fresh cache %+v", s)
	}
}

func TestChunkCacheOddKeysAreSafeFileNames(t *testing.T) {
	data := chunkTestData(100)
	store := NewMemStore()
	keys := []string{"a", "odd key/with:colons*?<>|%20 and spaces", strings.Repeat("k", 255) + "/" + strings.Repeat("é", 100)}
	for _, key := range keys {
		if err := store.Put(context.Background(), key, bytes.NewReader(data), 100); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
	}
	c, dir := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 50, MaxBytes: 1000})
	for _, key := range keys {
		mustReadChunkCache(t, c, key, data, 0, 100)
	}
	if files := chunkFiles(t, dir); len(files) != 2*len(keys) {
		t.Fatalf("files %v", files)
	}
}

// TryOpenRange hands out open sections of cached chunk files that hold the
// object's bytes, survive eviction, and never touch the store.
func TestChunkCacheTryOpenRange(t *testing.T) {
	data := chunkTestData(3000)
	store := newChunkTestStore(t, chunkTestKey, data)
	c, _ := newTestChunkCache(t, store, ChunkCacheOptions{ChunkSize: 1000, MaxBytes: 2000})
	if sections, ok, err := c.TryOpenRange(chunkTestKey, 3000, 500, 1000); ok || err != nil || sections != nil {
		t.Fatalf("cold cache: %v %v %v", sections, ok, err)
	}
	if store.ranges.Load() != 0 {
		t.Fatal("TryOpenRange called the store")
	}
	mustReadChunkCache(t, c, chunkTestKey, data, 0, 2000) // chunks 0 and 1
	sections, ok, err := c.TryOpenRange(chunkTestKey, 3000, 500, 1200)
	if !ok || err != nil || len(sections) != 2 {
		t.Fatalf("cached range: %d sections, ok %v, err %v", len(sections), ok, err)
	}
	// Evict both chunks while the sections are open.
	mustReadChunkCache(t, c, chunkTestKey, data, 2000, 1000)
	mustReadChunkCache(t, c, chunkTestKey, data, 2500, 500)
	var got []byte
	for _, s := range sections {
		b := make([]byte, s.Len)
		if _, err := s.File.ReadAt(b, s.Pos); err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		s.File.Close()
	}
	if !bytes.Equal(got, data[500:1700]) {
		t.Fatal("sections do not hold the object's bytes")
	}
	// A range running past the end is cut at the end.
	sections, ok, err = c.TryOpenRange(chunkTestKey, 3000, 2900, 500)
	if !ok || err != nil || len(sections) != 1 || sections[0].Len != 100 || sections[0].Pos != 900 {
		t.Fatalf("range past the end: %+v %v %v", sections, ok, err)
	}
	sections[0].File.Close()
}
