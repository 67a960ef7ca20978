package tiering

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// BenchmarkChunkCacheHit reads 1 MiB from chunks already cached: the cost
// of a hit is an index lookup, an open and a pread per chunk touched.
func BenchmarkChunkCacheHit(b *testing.B) {
	const objectSize, readSize = 16 << 20, 1 << 20
	store := newBenchChunkStore(b, objectSize)
	c, err := NewChunkCache(b.TempDir(), store, ChunkCacheOptions{ChunkSize: 4 << 20, MaxBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	<-c.Prefetch(chunkTestKey, objectSize, 0, objectSize)
	p := make([]byte, readSize)
	b.SetBytes(readSize)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		off := int64(i%(objectSize/readSize)) * readSize
		if _, err := c.ReadAt(ctx, chunkTestKey, objectSize, p, off); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if s := c.Stats(); s.Misses != 0 {
		b.Fatalf("stats %+v, want no misses", s)
	}
}

// BenchmarkChunkCacheColdSequential reads a 64 MiB object in 1 MiB steps
// through a fresh cache each iteration (NewChunkCache empties the one
// directory, so disk use stays at one object), with and without
// read-ahead. With latency=0 the MemStore answers at memory speed, so it
// measures the cache's own load path (temp file, rename, index); with
// latency=5ms each range request first waits as a remote store would, which
// is what read-ahead hides.
func BenchmarkChunkCacheColdSequential(b *testing.B) {
	const objectSize, readSize = 64 << 20, 1 << 20
	store := newBenchChunkStore(b, objectSize)
	for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
		for _, readAhead := range []int{0, 2} {
			b.Run(fmt.Sprintf("latency=%v/ReadAhead=%d", latency, readAhead), func(b *testing.B) {
				ctx := context.Background()
				dir := b.TempDir()
				p := make([]byte, readSize)
				b.SetBytes(objectSize)
				for b.Loop() {
					c, err := NewChunkCache(dir, slowStore{store, latency}, ChunkCacheOptions{ChunkSize: 4 << 20, MaxBytes: 1 << 30, ReadAhead: readAhead})
					if err != nil {
						b.Fatal(err)
					}
					for off := int64(0); off < objectSize; off += readSize {
						if _, err := c.ReadAt(ctx, chunkTestKey, objectSize, p, off); err != nil {
							b.Fatal(err)
						}
					}
					c.Close()
				}
			})
		}
	}
}

// slowStore delays each GetRange by latency, standing in for a remote
// store's time to first byte.
type slowStore struct {
	*MemStore
	latency time.Duration
}

func (s slowStore) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if s.latency > 0 {
		select {
		case <-time.After(s.latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.MemStore.GetRange(ctx, key, offset, length)
}

func newBenchChunkStore(b *testing.B, size int) *MemStore {
	b.Helper()
	store := NewMemStore()
	data := chunkTestData(size)
	if err := store.Put(context.Background(), chunkTestKey, bytes.NewReader(data), int64(size)); err != nil {
		b.Fatal(err)
	}
	return store
}
