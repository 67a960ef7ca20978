package tiering

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// ChunkCache is a bounded on-disk cache of fixed-size chunks of immutable
// objects, for ranged reads of remote log segments. Object keys must never
// change content (every upload uses a fresh key): the cache never
// revalidates a chunk.
//
// Layout: chunk i of an object of objectSize bytes covers
// [i*ChunkSize, min((i+1)*ChunkSize, objectSize)). Each cached chunk is one
// file in the cache directory named <sha256(key, i) hex>-<generation>.chunk;
// a load streams into loading-*.tmp and renames it into place. The
// generation makes every inserted file name unique, so unlinking an evicted
// file can never remove a later copy of the same chunk.
//
// Concurrency: one mutex guards the index (chunks, LRU list, in-flight
// loads, statistics); no file or network I/O happens under it. A reader
// looks a chunk up under the mutex, then opens and reads its file outside
// it; eviction only unlinks, so a reader that has the file open keeps
// reading the old data, and one that finds the file gone looks again.
// Concurrent readers of one missing chunk share one load. Loads run in
// goroutines owned by the cache with a context that Close cancels, so a
// reader giving up on its ctx never cancels a load that others wait for.
// Background loads (Prefetch, read-ahead) hold one of Concurrency slots
// while they talk to the store; a foreground reader that joins a
// background load still queued for a slot lets it start at once.
//
// All methods are safe for concurrent use.
type ChunkCache struct {
	dir   string
	store ObjectStore
	opts  ChunkCacheOptions

	// loadCtx bounds every load; Close cancels it.
	loadCtx    context.Context
	cancelLoad context.CancelFunc
	// backgroundSlots is a semaphore of Concurrency slots for background
	// loads.
	backgroundSlots chan struct{}
	// goroutines counts every goroutine the cache started; Close waits.
	goroutines sync.WaitGroup

	// testHookOpened, if set, runs in ReadAt between opening a chunk's file
	// and reading it (tests pause a reader there).
	testHookOpened func(key string, index int64)

	mu struct {
		sync.Mutex
		closed bool
		// chunks indexes cached chunks by key, then chunk index.
		chunks map[string]map[int64]*cachedChunk
		// lru orders cached chunks, most recently used at the front.
		lru *list.List
		// loading holds the loads in flight.
		loading    map[chunkID]*chunkLoad
		generation uint64
		stats      ChunkCacheStats
	}
}

// ChunkCacheOptions configures a ChunkCache. Start from
// DefaultChunkCacheOptions: a zero ChunkSize, MaxBytes or Concurrency takes
// the default, but a zero ReadAhead disables read-ahead.
type ChunkCacheOptions struct {
	// ChunkSize is the number of bytes per chunk (default 4 MiB).
	ChunkSize int64
	// MaxBytes bounds the total size of cached chunk files (default 1 GiB);
	// it must be at least ChunkSize.
	MaxBytes int64
	// ReadAhead is the number of chunks ReadAt prefetches after the last
	// chunk a read touched (DefaultChunkCacheOptions: 2); 0 disables it.
	ReadAhead int
	// Concurrency bounds the object-store range requests of background
	// loads (Prefetch and read-ahead) in flight at once (default 8).
	// Loads that a reader waits for are not bounded by it.
	Concurrency int
}

// Defaults of ChunkCacheOptions.
const (
	DefaultChunkSize        = 4 << 20
	DefaultChunkCacheBytes  = 1 << 30
	DefaultChunkReadAhead   = 2
	DefaultChunkConcurrency = 8
)

// DefaultChunkCacheOptions returns the default options.
func DefaultChunkCacheOptions() ChunkCacheOptions {
	return ChunkCacheOptions{
		ChunkSize:   DefaultChunkSize,
		MaxBytes:    DefaultChunkCacheBytes,
		ReadAhead:   DefaultChunkReadAhead,
		Concurrency: DefaultChunkConcurrency,
	}
}

// ChunkCacheStats is a snapshot of a ChunkCache's counters.
type ChunkCacheStats struct {
	// Hits counts chunks that ReadAt or a successful TryReadAt found cached.
	Hits int64
	// Misses counts chunks that ReadAt had to wait for (its own load or
	// one already in flight). A TryReadAt that returns ok=false counts
	// nothing.
	Misses int64
	// BytesFetched counts bytes of successful loads from the store.
	BytesFetched int64
	// Evictions counts chunks dropped to respect MaxBytes (not Remove).
	Evictions int64
	// Bytes and Chunks describe what is cached now.
	Bytes  int64
	Chunks int64
	// LoadErrors counts failed loads.
	LoadErrors int64
}

// ErrChunkCacheClosed is returned by a ChunkCache after Close.
var ErrChunkCacheClosed = errors.New("tiering: chunk cache closed")

// errChunkRemoved fails a load whose key was removed while it ran.
var errChunkRemoved = errors.New("tiering: chunk removed while loading")

// chunkID names one chunk of one object.
type chunkID struct {
	key   string
	index int64
}

// cachedChunk is one chunk file in the index.
type cachedChunk struct {
	id   chunkID
	path string
	size int64
	lru  *list.Element
}

// chunkLoad is one load in flight; done closes when path or err is set.
type chunkLoad struct {
	done chan struct{}
	path string
	err  error

	// promote closes when a reader joins a background load, so it stops
	// waiting for a background slot. Guarded by ChunkCache.mu.
	promote  chan struct{}
	promoted bool
	// removed is set by Remove: the load's result must not be cached.
	// Guarded by ChunkCache.mu.
	removed bool
}

// NewChunkCache returns a cache keeping its chunk files in dir, which it
// creates if missing and empties if not (a restart starts cold: nothing
// says which object an old file belonged to or whether it was complete).
func NewChunkCache(dir string, store ObjectStore, opts ChunkCacheOptions) (*ChunkCache, error) {
	if store == nil {
		return nil, errors.New("tiering: chunk cache: nil store")
	}
	if opts.ChunkSize == 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultChunkCacheBytes
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = DefaultChunkConcurrency
	}
	switch {
	case opts.ChunkSize < 0:
		return nil, fmt.Errorf("tiering: chunk cache: negative chunk size %d", opts.ChunkSize)
	case opts.MaxBytes < opts.ChunkSize:
		return nil, fmt.Errorf("tiering: chunk cache: max bytes %d below chunk size %d", opts.MaxBytes, opts.ChunkSize)
	case opts.ReadAhead < 0:
		return nil, fmt.Errorf("tiering: chunk cache: negative read-ahead %d", opts.ReadAhead)
	case opts.Concurrency < 0:
		return nil, fmt.Errorf("tiering: chunk cache: negative concurrency %d", opts.Concurrency)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tiering: chunk cache: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tiering: chunk cache: %w", err)
	}
	for _, entry := range entries {
		if err := os.RemoveAll(filepath.Join(dir, entry.Name())); err != nil {
			return nil, fmt.Errorf("tiering: chunk cache: emptying %s: %w", dir, err)
		}
	}
	c := &ChunkCache{
		dir:             dir,
		store:           store,
		opts:            opts,
		backgroundSlots: make(chan struct{}, opts.Concurrency),
	}
	c.loadCtx, c.cancelLoad = context.WithCancel(context.Background())
	c.mu.chunks = make(map[string]map[int64]*cachedChunk)
	c.mu.lru = list.New()
	c.mu.loading = make(map[chunkID]*chunkLoad)
	return c, nil
}

// ReadAt reads min(len(p), objectSize-off) bytes of the object key, of
// objectSize bytes, starting at off, loading missing chunks from the store.
// Like io.ReaderAt it returns io.EOF when it reads fewer than len(p) bytes
// because the object ends. off must be in [0, objectSize). After the read
// it prefetches up to ReadAhead chunks following the last one it touched.
// A cancelled ctx stops the wait, not a load others may share.
func (c *ChunkCache) ReadAt(ctx context.Context, key string, objectSize int64, p []byte, off int64) (int, error) {
	want, err := c.checkRead(key, objectSize, off, len(p))
	if err != nil {
		return 0, err
	}
	n := 0
	for n < want {
		pos := off + int64(n)
		index := pos / c.opts.ChunkSize
		file, err := c.openChunk(ctx, chunkID{key, index}, c.chunkLength(index, objectSize))
		if err != nil {
			return n, err
		}
		if c.testHookOpened != nil {
			c.testHookOpened(key, index)
		}
		read, err := c.readChunk(file, p[n:want], pos-index*c.opts.ChunkSize)
		n += read
		if err != nil {
			return n, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", key, index, err)
		}
	}
	if want > 0 {
		c.readAhead(key, objectSize, off+int64(want)-1)
	}
	if want < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TryReadAt is ReadAt served only from the cache: if every chunk the read
// needs is cached it reads them and returns ok=true; otherwise it returns
// ok=false without touching the store (p may then hold part of the data).
// It never blocks on the network; on success it starts read-ahead like
// ReadAt.
func (c *ChunkCache) TryReadAt(key string, objectSize int64, p []byte, off int64) (n int, ok bool, err error) {
	want, err := c.checkRead(key, objectSize, off, len(p))
	if err != nil {
		return 0, false, err
	}
	if want == 0 {
		return 0, true, nil
	}
	first, last := off/c.opts.ChunkSize, (off+int64(want)-1)/c.opts.ChunkSize
	paths := c.cachedPaths(key, first, last)
	if paths == nil {
		return 0, false, nil
	}

	for i, path := range paths {
		index := first + int64(i)
		pos := off + int64(n)
		file, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Evicted since the lookup.
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", key, index, err)
		}
		read, err := c.readChunk(file, p[n:want], pos-index*c.opts.ChunkSize)
		n += read
		if err != nil {
			return 0, false, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", key, index, err)
		}
	}
	c.mu.Lock()
	c.mu.stats.Hits += int64(len(paths))
	c.mu.Unlock()
	c.readAhead(key, objectSize, off+int64(want)-1)
	if want < len(p) {
		return n, true, io.EOF
	}
	return n, true, nil
}

// cachedPaths returns the files of chunks first..last of key, marking them
// recently used, or nil if any is not cached.
func (c *ChunkCache) cachedPaths(key string, first, last int64) []string {
	paths := make([]string, 0, last-first+1)
	c.mu.Lock()
	defer c.mu.Unlock()
	for index := first; index <= last; index++ {
		chunk := c.mu.chunks[key][index]
		if chunk == nil {
			return nil
		}
		paths = append(paths, chunk.path)
	}
	for index := first; index <= last; index++ {
		c.touchLocked(c.mu.chunks[key][index])
	}
	return paths
}

// FileSection is a byte range of an open file; the caller closes File.
type FileSection struct {
	File *os.File
	Pos  int64
	Len  int64
}

// TryOpenRange is TryReadAt without the copy: if every chunk covering
// min(length, objectSize-off) bytes from off is cached it opens them and
// returns the sections, in order, for the caller to send (with sendfile)
// and close; eviction meanwhile only unlinks the files. ok is false, with
// nothing open, if a chunk is missing. On success it starts read-ahead.
func (c *ChunkCache) TryOpenRange(key string, objectSize, off, length int64) (sections []FileSection, ok bool, err error) {
	want, err := c.checkRead(key, objectSize, off, int(min(length, objectSize)))
	if err != nil || want == 0 {
		return nil, err == nil, err
	}
	first, last := off/c.opts.ChunkSize, (off+int64(want)-1)/c.opts.ChunkSize
	paths := c.cachedPaths(key, first, last)
	if paths == nil {
		return nil, false, nil
	}

	closeAll := func() {
		for _, s := range sections {
			s.File.Close()
		}
	}
	pos, end := off, off+int64(want)
	for i, path := range paths {
		index := first + int64(i)
		file, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			closeAll() // evicted since the lookup
			return nil, false, nil
		}
		if err != nil {
			closeAll()
			return nil, false, fmt.Errorf("tiering: chunk cache open %q chunk %d: %w", key, index, err)
		}
		chunkEnd := min((index+1)*c.opts.ChunkSize, end)
		sections = append(sections, FileSection{File: file, Pos: pos - index*c.opts.ChunkSize, Len: chunkEnd - pos})
		pos = chunkEnd
	}
	c.mu.Lock()
	c.mu.stats.Hits += int64(len(paths))
	c.mu.Unlock()
	c.readAhead(key, objectSize, end-1)
	return sections, true, nil
}

// Prefetch starts loading, in the background, the missing chunks covering
// [off, off+length) of the object (clipped to objectSize), at most
// Concurrency of them talking to the store at once. The returned channel
// closes once each of them is loaded or has failed (at once if none is
// missing, the range is empty or the cache is closed).
func (c *ChunkCache) Prefetch(key string, objectSize int64, off, length int64) <-chan struct{} {
	done := make(chan struct{})
	if off < 0 {
		length += off
		off = 0
	}
	if length > objectSize-off {
		length = objectSize - off
	}
	if objectSize <= 0 || off >= objectSize || length <= 0 {
		close(done)
		return done
	}
	first, last := off/c.opts.ChunkSize, (off+length-1)/c.opts.ChunkSize
	c.mu.Lock()
	loads := c.startBackgroundLoadsLocked(key, objectSize, first, last)
	if len(loads) == 0 || c.mu.closed {
		c.mu.Unlock()
		close(done)
		return done
	}
	c.goroutines.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.goroutines.Done()
		defer close(done)
		for _, load := range loads {
			<-load.done
		}
	}()
	return done
}

// Remove drops every cached chunk of key (call it when the object is
// deleted). A load of key in flight caches nothing: readers waiting on it
// get an error, as they would from the deleted object.
func (c *ChunkCache) Remove(key string) {
	c.mu.Lock()
	var paths []string
	for _, chunk := range c.mu.chunks[key] {
		paths = append(paths, chunk.path)
		c.dropLocked(chunk)
	}
	for id, load := range c.mu.loading {
		if id.key == key {
			load.removed = true
		}
	}
	c.mu.Unlock()
	unlinkAll(paths)
}

// Stats returns a snapshot of the cache's counters.
func (c *ChunkCache) Stats() ChunkCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.stats
}

// Close cancels the loads in flight and waits for every goroutine the cache
// started. Chunk files stay on disk until the next NewChunkCache on the
// directory. Every method but Stats fails with ErrChunkCacheClosed after
// Close; Close is idempotent.
func (c *ChunkCache) Close() error {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	c.cancelLoad()
	c.goroutines.Wait()
	return nil
}

// checkRead validates a read and returns the number of bytes it can read.
func (c *ChunkCache) checkRead(key string, objectSize, off int64, length int) (int, error) {
	if objectSize <= 0 || off < 0 || off >= objectSize {
		return 0, fmt.Errorf("%w: chunk cache read %q offset %d of a %d-byte object", ErrInvalidRange, key, off, objectSize)
	}
	if c.isClosed() {
		return 0, ErrChunkCacheClosed
	}
	want := int64(length)
	if want > objectSize-off {
		want = objectSize - off
	}
	return int(want), nil
}

func (c *ChunkCache) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.closed
}

// chunkLength returns the size of chunk index of an object of objectSize
// bytes.
func (c *ChunkCache) chunkLength(index, objectSize int64) int64 {
	return min(c.opts.ChunkSize, objectSize-index*c.opts.ChunkSize)
}

// readChunk reads min(len(p), chunk size - offset) bytes of file at offset
// into p and closes file.
func (c *ChunkCache) readChunk(file *os.File, p []byte, offset int64) (int, error) {
	defer file.Close()
	if len(p) > int(c.opts.ChunkSize-offset) {
		p = p[:c.opts.ChunkSize-offset]
	}
	n, err := file.ReadAt(p, offset)
	if err == io.EOF && n == len(p) {
		err = nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// openChunk returns the open file of a chunk, loading it if needed. The
// caller reads it and closes it; eviction may unlink it meanwhile.
func (c *ChunkCache) openChunk(ctx context.Context, id chunkID, length int64) (*os.File, error) {
	counted := false
	for {
		c.mu.Lock()
		if c.mu.closed {
			c.mu.Unlock()
			return nil, ErrChunkCacheClosed
		}
		if chunk := c.mu.chunks[id.key][id.index]; chunk != nil {
			c.touchLocked(chunk)
			if !counted {
				c.mu.stats.Hits++
				counted = true
			}
			c.mu.Unlock()
			file, err := c.openCached(chunk)
			if file != nil || err != nil {
				return file, err
			}
			// Evicted since the lookup: not a hit after all.
			c.mu.Lock()
			c.mu.stats.Hits--
			c.mu.Unlock()
			counted = false
			continue
		}
		if !counted {
			c.mu.stats.Misses++
			counted = true
		}
		load := c.mu.loading[id]
		if load == nil {
			load = c.startLoadLocked(id, length, false)
		} else if !load.promoted {
			load.promoted = true
			close(load.promote)
		}
		c.mu.Unlock()

		select {
		case <-load.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", id.key, id.index, ctx.Err())
		}
		if load.err != nil {
			return nil, load.err
		}
		file, err := os.Open(load.path)
		if err == nil {
			return file, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", id.key, id.index, err)
		}
		// Evicted before this reader got to it: look again.
	}
}

// openCached opens a cached chunk's file. If the file is gone it returns
// (nil, nil) after dropping the chunk from the index, unless eviction
// already did so.
func (c *ChunkCache) openCached(chunk *cachedChunk) (*os.File, error) {
	file, err := os.Open(chunk.path)
	if err == nil {
		return file, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tiering: chunk cache read %q chunk %d: %w", chunk.id.key, chunk.id.index, err)
	}
	c.mu.Lock()
	if c.mu.chunks[chunk.id.key][chunk.id.index] == chunk {
		// Removed by someone else than the cache: forget it.
		c.dropLocked(chunk)
	}
	c.mu.Unlock()
	return nil, nil
}

// readAhead prefetches the ReadAhead chunks after the one holding byte
// last.
func (c *ChunkCache) readAhead(key string, objectSize, last int64) {
	if c.opts.ReadAhead == 0 {
		return
	}
	numChunks := (objectSize + c.opts.ChunkSize - 1) / c.opts.ChunkSize
	first := last/c.opts.ChunkSize + 1
	end := min(first+int64(c.opts.ReadAhead)-1, numChunks-1)
	if first > end {
		return
	}
	c.mu.Lock()
	c.startBackgroundLoadsLocked(key, objectSize, first, end)
	c.mu.Unlock()
}

// startBackgroundLoadsLocked starts background loads of the chunks first
// through last that are neither cached nor loading, and returns every load
// the range waits for (started now or already in flight).
func (c *ChunkCache) startBackgroundLoadsLocked(key string, objectSize, first, last int64) []*chunkLoad {
	if c.mu.closed {
		return nil
	}
	var loads []*chunkLoad
	for index := first; index <= last; index++ {
		id := chunkID{key, index}
		if c.mu.chunks[key][index] != nil {
			continue
		}
		load := c.mu.loading[id]
		if load == nil {
			load = c.startLoadLocked(id, c.chunkLength(index, objectSize), true)
		}
		loads = append(loads, load)
	}
	return loads
}

// startLoadLocked registers and starts a load of a chunk. A background load
// waits for a slot unless a reader joins it. The cache must not be closed.
func (c *ChunkCache) startLoadLocked(id chunkID, length int64, background bool) *chunkLoad {
	load := &chunkLoad{done: make(chan struct{}), promote: make(chan struct{}), promoted: !background}
	c.mu.loading[id] = load
	c.goroutines.Add(1)
	go c.runLoad(id, length, load, background)
	return load
}

// runLoad fetches a chunk, caches it and wakes its waiters.
func (c *ChunkCache) runLoad(id chunkID, length int64, load *chunkLoad, background bool) {
	defer c.goroutines.Done()
	var path string
	var err error
	if background {
		select {
		case c.backgroundSlots <- struct{}{}:
			path, err = c.fetch(id, length)
			<-c.backgroundSlots
		case <-load.promote:
			path, err = c.fetch(id, length)
		case <-c.loadCtx.Done():
			err = c.loadCtx.Err()
		}
	} else {
		path, err = c.fetch(id, length)
	}

	var evicted []string
	c.mu.Lock()
	delete(c.mu.loading, id)
	if err == nil && load.removed {
		err = errChunkRemoved
		evicted = append(evicted, path)
	}
	if err == nil {
		evicted = c.insertLocked(id, path, length)
		c.mu.stats.BytesFetched += length
	} else {
		c.mu.stats.LoadErrors++
		if c.mu.closed {
			err = fmt.Errorf("%w (%w)", ErrChunkCacheClosed, err)
		}
		err = fmt.Errorf("tiering: chunk cache load %q chunk %d: %w", id.key, id.index, err)
	}
	load.path, load.err = path, err
	c.mu.Unlock()
	close(load.done)
	unlinkAll(evicted)
}

// fetch reads a chunk from the store into a new file in the cache directory
// and returns its path. A body of any length but the chunk's is an error.
// copyBuffers holds the buffers chunk loads copy through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

func (c *ChunkCache) fetch(id chunkID, length int64) (path string, err error) {
	body, err := c.store.GetRange(c.loadCtx, id.key, id.index*c.opts.ChunkSize, length)
	if err != nil {
		return "", err
	}
	defer body.Close()
	tmp, err := os.CreateTemp(c.dir, "loading-*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	buf := copyBuffers.Get().(*[]byte)
	// A plain io.Writer, so io.CopyBuffer uses the large buffer rather than
	// the file's ReadFrom (32 KiB reads): fewer syscalls per chunk.
	n, err := io.CopyBuffer(struct{ io.Writer }{tmp}, io.LimitReader(ctxReader{c.loadCtx, body}, length+1), *buf)
	copyBuffers.Put(buf)
	if err != nil {
		return "", err
	}
	if n != length {
		return "", fmt.Errorf("store returned %d bytes, want %d", n, length)
	}
	if err = tmp.Close(); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.mu.generation++
	generation := c.mu.generation
	c.mu.Unlock()
	path = filepath.Join(c.dir, chunkFileName(id, generation))
	if err = os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// insertLocked adds a loaded chunk as the most recently used one, then
// evicts least recently used chunks until the cache fits MaxBytes, and
// returns the evicted files for the caller to unlink without the lock. The
// new chunk is never evicted: it alone fits (MaxBytes >= ChunkSize).
func (c *ChunkCache) insertLocked(id chunkID, path string, size int64) (evicted []string) {
	chunk := &cachedChunk{id: id, path: path, size: size}
	byIndex := c.mu.chunks[id.key]
	if byIndex == nil {
		byIndex = make(map[int64]*cachedChunk)
		c.mu.chunks[id.key] = byIndex
	}
	byIndex[id.index] = chunk
	chunk.lru = c.mu.lru.PushFront(chunk)
	c.mu.stats.Bytes += size
	c.mu.stats.Chunks++
	for c.mu.stats.Bytes > c.opts.MaxBytes {
		victim := c.mu.lru.Back().Value.(*cachedChunk)
		if victim == chunk {
			break
		}
		evicted = append(evicted, victim.path)
		c.dropLocked(victim)
		c.mu.stats.Evictions++
	}
	return evicted
}

// dropLocked removes a chunk from the index; the caller unlinks its file.
func (c *ChunkCache) dropLocked(chunk *cachedChunk) {
	byIndex := c.mu.chunks[chunk.id.key]
	delete(byIndex, chunk.id.index)
	if len(byIndex) == 0 {
		delete(c.mu.chunks, chunk.id.key)
	}
	c.mu.lru.Remove(chunk.lru)
	c.mu.stats.Bytes -= chunk.size
	c.mu.stats.Chunks--
}

// touchLocked marks a chunk most recently used.
func (c *ChunkCache) touchLocked(chunk *cachedChunk) {
	c.mu.lru.MoveToFront(chunk.lru)
}

// chunkFileName names a chunk's file: a hash, so any key is a safe name,
// and a generation, so each inserted copy has its own name.
func chunkFileName(id chunkID, generation uint64) string {
	h := sha256.New()
	var index [8]byte
	binary.BigEndian.PutUint64(index[:], uint64(id.index))
	h.Write(index[:])
	h.Write([]byte(id.key))
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.FormatUint(generation, 10) + ".chunk"
}

// unlinkAll removes files, ignoring errors: a file already gone is fine,
// and one that cannot be removed only costs disk until the next restart.
func unlinkAll(paths []string) {
	for _, path := range paths {
		os.Remove(path)
	}
}
