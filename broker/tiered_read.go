package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/tiering"
)

// errNotRemote: the offset is not in the remote log.
var errNotRemote = errors.New("offset not in the remote log")

// errManifestNotLoaded: the partition is tiered but its manifest could not
// be read yet (object store down at start). Fetches below the local log get
// a retriable KAFKA_STORAGE_ERROR rather than OFFSET_OUT_OF_RANGE, which
// would make consumers with auto.offset.reset skip the remote records.
var errManifestNotLoaded = errors.New("remote log manifest not loaded yet")

// remoteReadTimeout bounds one background remote read.
const remoteReadTimeout = 2 * time.Minute

// maxCachedIndexes bounds the remote index objects a partition keeps in memory.
const maxCachedIndexes = 8

// remoteReader reads a remote segment's objects through the chunk cache,
// either waiting for the object store (wait) or only from what is cached.
type remoteReader struct {
	r    *remoteLog
	ctx  context.Context
	wait bool
}

// errNotCached: a non-waiting read needs bytes that are not in the cache.
var errNotCached = errors.New("remote bytes not cached")

func (rr remoteReader) readAt(key string, size int64, p []byte, off int64) error {
	want := min(int64(len(p)), size-off)
	var n int
	var err error
	if rr.wait {
		n, err = rr.r.t.cache.ReadAt(rr.ctx, key, size, p[:want], off)
	} else {
		var ok bool
		n, ok, err = rr.r.t.cache.TryReadAt(key, size, p[:want], off)
		if err == nil && !ok {
			return errNotCached
		}
	}
	if int64(n) == want {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("short read: %d of %d bytes", n, want)
	}
	return fmt.Errorf("remote read %s at %d: %w", key, off, err)
}

// indexObject returns a remote .index or .timeindex decoded, from memory
// if read recently: each is read through the cache and validated once, not
// on every fetch.
func indexObject[T any](rr remoteReader, key string, size int64, decode func([]byte) (T, error)) (T, error) {
	r := rr.r
	r.idxMu.Lock()
	cached, ok := r.indexes[key].(T)
	r.idxMu.Unlock()
	if ok {
		return cached, nil
	}
	b := make([]byte, size)
	if size > 0 {
		if err := rr.readAt(key, size, b, 0); err != nil {
			var zero T
			return zero, err
		}
	}
	x, err := decode(b)
	if err != nil {
		return x, err
	}
	r.idxMu.Lock()
	if len(r.indexes) >= maxCachedIndexes {
		for k := range r.indexes { // evict any one: a handful of entries
			delete(r.indexes, k)
			break
		}
	}
	r.indexes[key] = x
	r.idxMu.Unlock()
	return x, nil
}

func (rr remoteReader) offsetIndex(prefix string, seg tiering.RemoteSegment) (storage.OffsetIndex, error) {
	return indexObject(rr, tiering.SegmentKey(prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixIndex), seg.OffsetIndexSize,
		func(b []byte) (storage.OffsetIndex, error) { return storage.DecodeOffsetIndex(b, seg.BaseOffset) })
}

func (rr remoteReader) timeIndex(prefix string, seg tiering.RemoteSegment) (storage.TimeIndex, error) {
	return indexObject(rr, tiering.SegmentKey(prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixTimeIdx), seg.TimeIndexSize,
		func(b []byte) (storage.TimeIndex, error) { return storage.DecodeTimeIndex(b, seg.BaseOffset) })
}

func (rr remoteReader) txnIndex(prefix string, seg tiering.RemoteSegment) ([]storage.AbortedTxn, error) {
	if seg.TxnIndexSize == 0 {
		return nil, nil // no transaction aborted in the segment
	}
	return indexObject(rr, tiering.SegmentKey(prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixTxnIdx), seg.TxnIndexSize, storage.DecodeTxnIndex)
}

// abortedTxns lists the aborted transactions of the remote log that
// overlap [from, upTo), for a read_committed fetch of remote records. Like
// the local log's AbortedTxns it walks the segments' transaction indexes
// from the one holding from and stops at the first entry whose last stable
// offset reaches upTo; complete is false when the remote log ended first,
// and the caller goes on with the local log. A transaction's entry is in
// the segment of its abort marker, which may come after its records.
func (rr remoteReader) abortedTxns(from, upTo int64) (out []storage.AbortedTxn, complete bool, err error) {
	m := rr.r.manifest.Load()
	if m == nil {
		return nil, false, errManifestNotLoaded
	}
	i, _ := m.Find(from)
	for ; i < len(m.Segments); i++ {
		entries, err := rr.txnIndex(rr.r.prefix, m.Segments[i])
		if err != nil {
			return nil, false, err
		}
		if out, complete = storage.CollectAbortedTxns(out, entries, from, upTo); complete {
			return out, true, nil
		}
	}
	return out, false, nil
}

func (r *remoteLog) forgetIndex(key string) {
	r.idxMu.Lock()
	delete(r.indexes, key)
	r.idxMu.Unlock()
}

// findBatch returns the position and header of the first batch of seg whose
// last offset is >= offset, starting at the index's hint; ok is false when
// the segment ends first (a compaction gap at its end).
func (rr remoteReader) findBatch(prefix string, seg tiering.RemoteSegment, offset int64) (pos int64, h storage.BatchHeader, ok bool, err error) {
	index, err := rr.offsetIndex(prefix, seg)
	if err != nil {
		return 0, h, false, err
	}
	pos = index.Lookup(offset)
	logKey := tiering.SegmentKey(prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixLog)
	var hdr [storage.BatchHeaderSize]byte
	for pos < seg.Size {
		if seg.Size-pos < storage.BatchHeaderSize {
			return 0, h, false, fmt.Errorf("remote segment %s: truncated batch header at %d", logKey, pos)
		}
		if err := rr.readAt(logKey, seg.Size, hdr[:], pos); err != nil {
			return 0, h, false, err
		}
		if h, err = storage.ParseBatchHeader(hdr[:]); err != nil {
			return 0, h, false, fmt.Errorf("remote segment %s at %d: %w", logKey, pos, err)
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
		pos += int64(h.Size())
	}
	return 0, h, false, nil
}

// read finds the bytes a fetch at offset gets from the remote log: from
// the batch holding offset, at most maxBytes (the last batch may be cut, as
// in local reads), or the first batch whole if minOneBatch; one segment at
// a time. Without wait it returns open sections of cached chunk files for
// sendfile (the caller closes them), or errNotCached. With wait it only
// loads what is missing into the cache and returns no sections.
// errNotRemote if offset is outside the remote log.
func (rr remoteReader) read(offset int64, maxBytes int, minOneBatch bool) ([]storage.FileChunk, error) {
	m := rr.r.manifest.Load()
	if m == nil {
		if rr.r.enabled() {
			return nil, errManifestNotLoaded
		}
		return nil, errNotRemote
	}
	i, ok := m.Find(offset)
	for {
		if i >= len(m.Segments) || offset < m.StartOffset() {
			return nil, errNotRemote
		}
		if !ok {
			// In a gap (compaction) or past a segment's last batch: on to
			// the next segment.
			offset = max(offset, m.Segments[i].BaseOffset)
		}
		seg := m.Segments[i]
		pos, h, found, err := rr.findBatch(rr.r.prefix, seg, offset)
		if err != nil {
			return nil, err
		}
		if !found {
			i, ok = i+1, false
			continue
		}
		n := min(int64(max(maxBytes, 0)), seg.Size-pos)
		if minOneBatch && n < int64(h.Size()) {
			n = min(int64(h.Size()), seg.Size-pos)
		}
		if n <= 0 {
			return nil, nil
		}
		if i+1 < len(m.Segments) {
			rr.r.readAheadNext(m.Segments[i+1], seg.Size-(pos+n))
		}
		key := tiering.SegmentKey(rr.r.prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixLog)
		if rr.wait {
			select {
			case <-rr.r.t.cache.Prefetch(key, seg.Size, pos, n):
				return nil, nil
			case <-rr.ctx.Done():
				return nil, rr.ctx.Err()
			}
		}
		sections, ok, err := rr.r.t.cache.TryOpenRange(key, seg.Size, pos, n)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, errNotCached
		}
		chunks := make([]storage.FileChunk, len(sections))
		for j, s := range sections {
			chunks[j] = storage.FileChunk{File: s.File, Pos: s.Pos, Len: s.Len}
		}
		return chunks, nil
	}
}

// readAheadNext extends the chunk cache's read-ahead, which stops at the
// end of an object, into the next segment: when a sequential reader is
// within the read-ahead window of a segment's end, the next segment's
// index and first chunks start loading, so crossing segments costs no
// round trip to the store.
func (r *remoteLog) readAheadNext(next tiering.RemoteSegment, left int64) {
	cfg := &r.t.s.cfg
	window := cfg.RemoteLogCacheChunkBytes * int64(cfg.RemoteLogCacheReadAheadChunks)
	if left > window || window == 0 {
		return
	}
	if next.OffsetIndexSize > 0 {
		r.t.cache.Prefetch(tiering.SegmentKey(r.prefix, next.BaseOffset, next.UploadID, tiering.SuffixIndex), next.OffsetIndexSize, 0, next.OffsetIndexSize)
	}
	r.t.cache.Prefetch(tiering.SegmentKey(r.prefix, next.BaseOffset, next.UploadID, tiering.SuffixLog), next.Size, 0, window-left)
}

// fetchRemote serves a fetch below the local log from the remote log.
// Cached bytes are answered at once; otherwise the read is started in the
// background (bounded by remote.log.reader.threads) and notify is signalled
// when it finishes, so the long poll re-reads from the warm cache while
// local partitions in the same fetch are answered without waiting.
// started dedupes background reads within one fetch request.
func (r *remoteLog) fetchRemote(offset int64, maxBytes int, minOneBatch, readCommitted bool, notify chan struct{}, started map[*remoteLog]bool) ([]storage.FileChunk, []storage.AbortedTxn, bool, error) {
	rr := remoteReader{r: r, wait: false}
	chunks, err := rr.read(offset, maxBytes, minOneBatch)
	var aborted []storage.AbortedTxn
	if err == nil && readCommitted && len(chunks) > 0 {
		if aborted, err = r.abortedFor(rr, offset); err != nil {
			for _, c := range chunks {
				c.File.Close()
			}
			chunks = nil
		}
	}
	if !errors.Is(err, errNotCached) {
		return chunks, aborted, err == nil, err
	}
	if started[r] {
		return nil, nil, false, nil
	}
	started[r] = true
	t := r.t
	wake := func() {
		select {
		case notify <- struct{}{}:
		default:
		}
	}
	// One background read per partition and offset, however many fetches
	// (consumers of the same backfill) ask for it; the others only wait.
	r.loadingMu.Lock()
	if done, ok := r.loading[offset]; ok {
		r.loadingMu.Unlock()
		t.reads.Add(1)
		go func() {
			defer t.reads.Done()
			select {
			case <-done:
			case <-t.s.ctx.Done():
			}
			wake()
		}()
		return nil, nil, false, nil
	}
	done := make(chan struct{})
	r.loading[offset] = done
	r.loadingMu.Unlock()
	t.reads.Add(1)
	go func() {
		defer t.reads.Done()
		defer wake()
		defer func() {
			r.loadingMu.Lock()
			delete(r.loading, offset)
			r.loadingMu.Unlock()
			close(done)
		}()
		if !t.readers.acquire(t.s.ctx.Done()) {
			return
		}
		defer t.readers.release()
		ctx, cancel := context.WithTimeout(t.s.ctx, remoteReadTimeout)
		defer cancel()
		rw := remoteReader{r: r, ctx: ctx, wait: true}
		_, err := rw.read(offset, maxBytes, minOneBatch)
		if err == nil && readCommitted {
			_, err = r.abortedFor(rw, offset)
		}
		if err != nil && !errors.Is(err, errNotRemote) && ctx.Err() == nil {
			t.s.logger.Warn("remote read failed", "topic", r.topicState.name, "partition", r.index, "offset", offset, "err", err)
		}
	}()
	return nil, nil, false, nil
}

// abortedFor lists the aborted transactions a read_committed fetch of the
// remote segment holding offset must carry: from the remote transaction
// indexes, then the local log's if the remote ones end before the scan is
// complete. The upper bound is the segment's end, as a remote read never
// crosses one.
func (r *remoteLog) abortedFor(rr remoteReader, offset int64) ([]storage.AbortedTxn, error) {
	m := r.manifest.Load()
	if m == nil {
		return nil, errManifestNotLoaded
	}
	i, _ := m.Find(offset)
	if i >= len(m.Segments) {
		return nil, nil
	}
	upTo := m.Segments[i].NextOffset
	out, complete, err := rr.abortedTxns(offset, upTo)
	if err != nil || complete {
		return out, err
	}
	local, err := r.local.Log().AbortedTxns(offset, upTo)
	for _, t := range local {
		// Segments both uploaded and still local were scanned remotely.
		if t.LastOffset >= m.NextOffset() {
			out = append(out, t)
		}
	}
	return out, err
}

// offsetForTimestamp answers ListOffsets by timestamp from the remote log:
// the first record with timestamp >= ts in the first remote segment whose
// max timestamp reaches ts, reading below the local log only.
func (r *remoteLog) offsetForTimestamp(ctx context.Context, ts, localStart int64) (offset, timestamp int64, found bool, err error) {
	m := r.manifest.Load()
	if m == nil {
		return 0, 0, false, nil
	}
	rr := remoteReader{r: r, ctx: ctx, wait: true}
	start := m.StartOffset()
	for _, seg := range m.Segments {
		if seg.NextOffset <= start || seg.MaxTimestamp < ts {
			continue
		}
		if seg.BaseOffset >= localStart {
			return 0, 0, false, nil // the local log answers from here
		}
		from := max(start, seg.BaseOffset)
		tindex, err := rr.timeIndex(r.prefix, seg)
		if err != nil {
			return 0, 0, false, err
		}
		if older, ok := tindex.Lookup(ts); ok {
			from = max(from, older)
		}
		logKey := tiering.SegmentKey(r.prefix, seg.BaseOffset, seg.UploadID, tiering.SuffixLog)
		pos, h, ok, err := rr.findBatch(r.prefix, seg, from)
		for ok && err == nil {
			if h.MaxTimestamp >= ts {
				batch := make([]byte, h.Size())
				if err := rr.readAt(logKey, seg.Size, batch, pos); err != nil {
					return 0, 0, false, err
				}
				off, t, found, err := storage.FindRecordAtOrAfterTimestamp(batch, ts, start)
				if err != nil || found {
					return off, t, found, err
				}
			}
			pos += int64(h.Size())
			if pos >= seg.Size {
				break
			}
			var hdr [storage.BatchHeaderSize]byte
			if err = rr.readAt(logKey, seg.Size, hdr[:], pos); err == nil {
				h, err = storage.ParseBatchHeader(hdr[:])
			}
		}
		if err != nil {
			return 0, 0, false, err
		}
	}
	return 0, 0, false, nil
}

// endOffsetForEpoch answers OffsetForLeaderEpoch over the whole log: the
// local epoch cache, or, for epochs older than every local one, the
// leader-epoch starts the manifest keeps for the remote segments.
func (p *partition) endOffsetForEpoch(epoch int32) (int32, int64) {
	if e, end := p.Log().EndOffsetForEpoch(epoch); e >= 0 {
		return e, end
	}
	m := p.remote.manifest.Load()
	if m == nil {
		return -1, -1
	}
	// The remote epochs, then the local log's first epoch start after them
	// (local entries are clamped to the local start, so the next epoch's
	// start is the first local entry with a larger epoch, or the local
	// log's first offset if its epoch is the remote's last).
	found := int32(-1)
	for _, s := range m.Segments {
		for _, e := range s.LeaderEpochs {
			switch {
			case e.Epoch <= epoch:
				found = max(found, e.Epoch)
			case found >= 0:
				return found, e.StartOffset
			}
		}
	}
	if found < 0 {
		return -1, -1
	}
	// The requested epoch's successor starts in the local log.
	for _, e := range p.Log().Epochs() {
		if e.Epoch > found {
			return found, e.StartOffset
		}
	}
	return found, p.Log().LogEndOffset()
}
