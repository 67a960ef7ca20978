package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/tiering"
)

// tieredStorage moves sealed segments of topics with remote.storage.enable
// to the object store and serves them back (ARCHITECTURE.md, "Tiered
// storage"). One per server; each partition's remote state is its
// remoteLog.
type tieredStorage struct {
	s       *Server
	store   tiering.ObjectStore
	cache   *tiering.ChunkCache
	readers *limiter       // remote.log.reader.threads (dynamic): background remote reads in flight
	workers *limiter       // remote.log.manager.thread.pool.size (dynamic): partitions in a task at once
	reads   sync.WaitGroup // background remote reads, waited for by close
	// reset wakes the task loop when remote.log.manager.task.interval.ms
	// changed (a dynamic broker config).
	reset chan struct{}

	uploadedBytes  *prometheus.CounterVec
	uploadErrors   *prometheus.CounterVec
	remoteReadByte *prometheus.CounterVec
	deletedBytes   *prometheus.CounterVec
	orphansDeleted *prometheus.CounterVec
}

func newTieredStorage(s *Server, store tiering.ObjectStore) (*tieredStorage, error) {
	cache, err := tiering.NewChunkCache(filepath.Join(s.cfg.firstLogDir(), "remote-cache"), store, tiering.ChunkCacheOptions{
		ChunkSize:   s.cfg.RemoteLogCacheChunkBytes,
		MaxBytes:    s.cfg.RemoteLogCacheBytes,
		ReadAhead:   int(s.cfg.RemoteLogCacheReadAheadChunks),
		Concurrency: int(max(s.cfg.RemoteLogReaderThreads, 1)),
	})
	if err != nil {
		return nil, fmt.Errorf("broker: remote chunk cache: %w", err)
	}
	t := &tieredStorage{
		s:       s,
		store:   store,
		cache:   cache,
		reset:   make(chan struct{}, 1),
		readers: newLimiter(func() int { return int(s.conf().RemoteLogReaderThreads) }),
		workers: newLimiter(func() int { return int(s.conf().RemoteLogThreadPoolSize) }),
		uploadedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_remote_uploaded_bytes_total", Help: "Segment bytes uploaded to the object store and recorded in a manifest, per topic.",
		}, []string{"topic"}),
		uploadErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_remote_upload_errors_total", Help: "Failed upload or manifest writes, per topic (each is retried with backoff).",
		}, []string{"topic"}),
		remoteReadByte: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_remote_fetch_bytes_total", Help: "Record bytes served to fetches from remote segments, per topic.",
		}, []string{"topic"}),
		deletedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_remote_deleted_bytes_total", Help: "Remote segment bytes removed by retention or DeleteRecords, per topic.",
		}, []string{"topic"}),
	}
	t.orphansDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_remote_orphans_deleted_total", Help: "Objects under a partition's prefix that no manifest named (failed attempts), deleted, per topic.",
	}, []string{"topic"})
	s.metrics.registry.MustRegister(t.uploadedBytes, t.uploadErrors, t.remoteReadByte, t.deletedBytes, t.orphansDeleted, &tieredCollector{t: t})
	return t, nil
}

// loadManifests reads the manifests of the tiered partitions among parts,
// in parallel, before the server serves, so remote offsets are served at
// once after a restart. A manifest that cannot be read (store down) is
// retried by the partition's task; until then nothing local is deleted and
// reads below the local log get a retriable error.
func (t *tieredStorage) loadManifests(parts []*partition) {
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, p := range parts {
		if !p.remote.enabled() {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := p.remote.load(t.s.ctx); err != nil {
				t.s.logger.Warn("remote log manifest not loaded; will retry", "topic", p.topic.name, "partition", p.index, "err", err)
			}
		}()
	}
	wg.Wait()
	for _, p := range parts {
		if m := p.remote.manifest.Load(); m != nil && len(m.Segments) > 0 && p.Log().LogEndOffset() < m.NextOffset() {
			// The local log lost its tail (power loss before a flush, a
			// wiped directory): everything it has is remote, and offsets
			// must not be reused. Start it empty at the remote end.
			if err := p.resetLocalLog(m.NextOffset()); err != nil {
				t.s.logger.Error("resetting a local log behind its remote log", "topic", p.topic.name, "partition", p.index, "err", err)
			}
		}
	}
}

// intervalChanged tells the task loop to re-read its interval.
func (t *tieredStorage) intervalChanged() {
	if t == nil {
		return
	}
	select {
	case t.reset <- struct{}{}:
	default:
	}
	t.readers.changed() // remote.log.reader.threads may have grown
}

// loop runs the remote-log tasks every remote.log.manager.task.interval.ms
// until the server stops, then waits for running tasks. Between those
// rounds a poll every sealPollInterval starts the task of a leader whose
// log rolled since (a segment sealed: upload it now, not up to an interval
// later, and let local retention follow the upload).
func (t *tieredStorage) loop() {
	interval := time.Duration(t.s.conf().RemoteLogTaskIntervalMs) * time.Millisecond
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	seal := time.NewTicker(sealPollInterval)
	defer seal.Stop()
	var running sync.WaitGroup
	defer running.Wait()
	for {
		sealedOnly := false
		select {
		case <-t.s.ctx.Done():
			return
		case <-t.reset:
			if d := time.Duration(t.s.conf().RemoteLogTaskIntervalMs) * time.Millisecond; d != interval {
				interval = d
				ticker.Reset(d)
			}
			continue
		case <-ticker.C:
		case <-seal.C:
			sealedOnly = true
		}
		now := time.Now()
		t.s.topics.forEachPartition(func(p *partition) {
			r := p.remote
			// Only the leader uploads. A follower re-reads the leader's
			// manifest, so its local retention may drop what is uploaded.
			leader := p.IsLeader()
			if !r.enabled() {
				return
			}
			if sealedOnly && (!leader || !t.s.conf().RemoteLogUploadOnRoll || !r.rolled()) {
				return
			}
			if (leader && !r.dueAt(now)) || !r.running.CompareAndSwap(false, true) {
				return
			}
			if !t.workers.tryAcquire() {
				r.running.Store(false) // pool busy: next tick
				return
			}
			running.Add(1)
			go func() {
				defer running.Done()
				defer t.workers.release()
				defer r.running.Store(false)
				if !leader {
					if err := r.refresh(r.ctx); err != nil {
						t.s.logger.Debug("follower manifest refresh failed", "topic", p.topic.name, "partition", p.index, "err", err)
					}
					return
				}
				r.runTask(r.ctx)
			}()
		})
	}
}

// sealPollInterval is how often the tiering loop looks for rolled logs.
const sealPollInterval = 250 * time.Millisecond

// rolled reports whether the log has more segments than when last asked
// (a roll; fewer — retention — only updates the count).
func (r *remoteLog) rolled() bool {
	n := int64(r.local.Log().NumSegments())
	return r.segments.Swap(n) < n
}

// close waits for background remote reads (the server's context is
// already cancelled), then closes the cache.
func (t *tieredStorage) close() error {
	t.reads.Wait()
	return t.cache.Close()
}

// Bounds on object-store calls, so a hung store cannot hold a partition's
// task (and DeleteRecords waiting behind it) forever.
const (
	manifestLoadTimeout = 10 * time.Second // reading a manifest
	manifestSaveTimeout = time.Minute      // writing one
	segmentPutTimeout   = 15 * time.Minute // one segment's objects (1 GiB at 1.2 MB/s)
	// ListOffsets by timestamp reads remote indexes and a batch inline.
	remoteListOffsetsTimeout = 30 * time.Second
)

// remoteLog is one partition's tiered state: the manifest of its remote
// segments (nil until read from the store) and the upload task's backoff.
type remoteLog struct {
	t          *tieredStorage
	topicState *topicState
	index      int32
	local      localReplica    // the partition's replica, through the little the remote log needs
	prefix     string          // tiering.PartitionPrefix
	ctx        context.Context // the server's, also cancelled when the topic is deleted
	cancel     context.CancelFunc

	manifest atomic.Pointer[tiering.Manifest] // replaced whole; readers never lock
	running  atomic.Bool                      // a task is in progress
	failing  atomic.Bool                      // the last task failed (alert metric)

	lagSegments atomic.Int64 // sealed segments not yet uploaded
	lagBytes    atomic.Int64
	// segments is the local segment count the seal poll last saw: a roll
	// (one more) starts a task at once instead of at the next interval.
	segments atomic.Int64

	// Guarded by taskMu (held by the running task and by DeleteRecords).
	taskMu    sync.Mutex
	failures  int
	lastSweep time.Time    // of sweepOrphans
	retryAt   atomic.Int64 // unix ms before which no task starts

	idxMu   sync.Mutex
	indexes map[string]any // object key → decoded .index/.timeindex (storage.OffsetIndex, TimeIndex), a few recent ones

	loadingMu sync.Mutex
	loading   map[int64]chan struct{} // background reads by fetch offset; closed when done
}

func newRemoteLog(t *tieredStorage, p *partition) *remoteLog {
	ctx, cancel := context.WithCancel(t.s.ctx)
	return &remoteLog{
		t:          t,
		topicState: p.topic,
		index:      p.index,
		local:      p.Replica,
		prefix:     tiering.PartitionPrefix(p.topic.name, fmt.Sprintf("%x", p.topic.id[:]), p.index),
		ctx:        ctx,
		cancel:     cancel,
		indexes:    map[string]any{},
		loading:    map[int64]chan struct{}{},
	}
}

// localReplica is what the remote log needs of its partition's replica:
// the local log to read and upload from, the last stable offset (only
// decided data is uploaded), a flush before upload, and where to record
// how far the remote copy reaches.
type localReplica interface {
	Log() replica.LocalLog
	LastStableOffset() int64
	Flush() error
	SetRemoteOffset(next int64)
	ApplyRetention() (int, error)
	NotifyChanged() // the remote log's start moved: fetch sessions answer it
}

// stop cancels the partition's remote work and waits for a running task,
// so a deleted topic's upload never writes a manifest after it is gone
// (a topic recovered under the same ID would share its keys).
func (r *remoteLog) stop() {
	r.cancel()
	r.taskMu.Lock()
	r.taskMu.Unlock() //nolint:staticcheck // empty critical section: waits for the task
}

func (r *remoteLog) enabled() bool {
	_, cfg := r.topic()
	return cfg.values["remote.storage.enable"] == "true"
}

// topic returns the topic's metadata and config; while the topic manager
// is still opening (no concurrency yet) straight from the topic.
func (r *remoteLog) topic() (metadata.Topic, effectiveTopicConfig) {
	if r.t.s.topics == nil {
		return r.topicState.meta, r.topicState.config
	}
	_, cfg, meta := r.t.s.topics.snapshot(r.topicState)
	return meta, cfg
}

// unavailable: the partition is tiered but its manifest is not read yet.
func (r *remoteLog) unavailable() bool { return r.manifest.Load() == nil && r.enabled() }

func (r *remoteLog) dueAt(now time.Time) bool { return now.UnixMilli() >= r.retryAt.Load() }

// load reads the manifest from the store; a missing one is an empty
// manifest starting at the local log start. On success the log may delete
// local segments the manifest holds.
func (r *remoteLog) load(ctx context.Context) (*tiering.Manifest, error) {
	if m := r.manifest.Load(); m != nil {
		return m, nil
	}
	loadCtx, cancel := context.WithTimeout(ctx, manifestLoadTimeout)
	defer cancel()
	m, err := tiering.LoadManifest(loadCtx, r.t.store, tiering.ManifestKey(r.prefix))
	switch {
	case errors.Is(err, tiering.ErrNotFound):
		m = r.stamp(&tiering.Manifest{LogStartOffset: r.local.Log().LogStartOffset()})
	case err != nil:
		return nil, err
	}
	r.install(m)
	return m, nil
}

// refresh reads the manifest from the object store even when one is
// cached: another node (the partition's leader) writes it.
func (r *remoteLog) refresh(ctx context.Context) error {
	loadCtx, cancel := context.WithTimeout(ctx, manifestLoadTimeout)
	defer cancel()
	m, err := tiering.LoadManifest(loadCtx, r.t.store, tiering.ManifestKey(r.prefix))
	if errors.Is(err, tiering.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	r.install(m)
	return nil
}

// stamp fills the topic-level fields a recovery from the bucket needs.
func (r *remoteLog) stamp(m *tiering.Manifest) *tiering.Manifest {
	meta, _ := r.topic()
	m.Version = tiering.ManifestVersion
	m.Topic = meta.Name
	m.TopicID = fmt.Sprintf("%x", meta.ID[:])
	m.Partition = r.index
	m.Partitions = int32(len(meta.LeaderEpochs))
	m.Configs = meta.Configs
	return m
}

func (r *remoteLog) install(m *tiering.Manifest) {
	// The topic's counters exist from its first manifest on, at 0, so
	// rates and alert rules see the series before the first upload or
	// failure (Prometheus' advice for known label values).
	for _, c := range []*prometheus.CounterVec{r.t.uploadedBytes, r.t.uploadErrors, r.t.remoteReadByte, r.t.deletedBytes, r.t.orphansDeleted} {
		c.WithLabelValues(r.topicState.name)
	}
	r.manifest.Store(m)
	r.local.NotifyChanged()
	if len(m.Segments) > 0 {
		r.local.SetRemoteOffset(m.NextOffset())
	}
}

// readable is the remote range [start, next) that fetches may read, and
// false when nothing is remote.
func (r *remoteLog) readable() (start, next int64, ok bool) {
	m := r.manifest.Load()
	if m == nil || len(m.Segments) == 0 || m.StartOffset() >= m.NextOffset() {
		return 0, 0, false
	}
	return m.StartOffset(), m.NextOffset(), true
}

// runTask uploads the sealed segments not yet remote, then applies remote
// retention. A failure backs off exponentially; nothing local is deleted
// for data the manifest does not hold, so an unavailable store only delays
// local deletion.
func (r *remoteLog) runTask(ctx context.Context) {
	// Upload only what is durable locally: a segment uploaded and then lost
	// to a power cut would leave the local log behind the remote one. The
	// flush runs before the task lock is taken (no lock is held across an
	// fsync); what it made durable is everything below the log end read
	// before it.
	durable := r.local.Log().LogEndOffset()
	err := r.local.Flush()
	r.taskMu.Lock()
	defer r.taskMu.Unlock()
	uploaded := 0
	if err == nil {
		uploaded, err = r.uploadPending(ctx, durable)
	}
	if err == nil && uploaded > 0 {
		// Local retention (local.retention.*) right after the upload is
		// confirmed, not at the next log.retention.check.interval.ms: the
		// hot tail stays near its bound under a burst.
		if n, rerr := r.local.ApplyRetention(); rerr != nil {
			r.t.s.logger.Warn("local retention after an upload failed", "topic", r.topicState.name, "partition", r.index, "err", rerr)
		} else if n > 0 {
			r.t.s.logger.Debug("local retention after an upload", "topic", r.topicState.name, "partition", r.index, "segments", n)
		}
	}
	if err == nil {
		err = r.applyRetention(ctx)
	}
	if err == nil && time.Since(r.lastSweep) >= orphanSweepInterval {
		r.sweepOrphans(ctx)
	}
	if err == nil {
		r.failures = 0
		r.failing.Store(false)
		r.retryAt.Store(0)
		return
	}
	if ctx.Err() != nil {
		return
	}
	r.failures++
	r.failing.Store(true)
	r.t.uploadErrors.WithLabelValues(r.topicState.name).Inc()
	backoff := time.Duration(r.t.s.cfg.RemoteLogRetryBackoffMs) * time.Millisecond << min(r.failures-1, 16)
	backoff = min(backoff, time.Duration(r.t.s.cfg.RemoteLogRetryBackoffMaxMs)*time.Millisecond)
	backoff += time.Duration(rand.Int64N(int64(backoff)/5 + 1)) // jitter, so partitions do not retry in step
	r.retryAt.Store(time.Now().Add(backoff).UnixMilli())
	r.t.s.logger.Warn("remote log task failed; will retry", "topic", r.topicState.name, "partition", r.index,
		"failures", r.failures, "retry_in", backoff.Round(time.Millisecond), "err", err)
}

// uploadPending uploads the sealed segments below durable (flushed by the
// caller) that the manifest lacks. Needs taskMu.
func (r *remoteLog) uploadPending(ctx context.Context, durable int64) (uploaded int, err error) {
	m, err := r.load(ctx)
	if err != nil {
		return 0, err
	}
	segs, err := r.local.Log().SealedSegments(m.NextOffset())
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, s := range segs {
			s.File.Close()
		}
	}()
	r.updateLag(segs, m)
	for _, seg := range segs {
		if seg.NextOffset > durable {
			break // sealed after the flush: the next task uploads it
		}
		if seg.NextOffset > r.local.LastStableOffset() {
			// Only stable data goes remote (as in Kafka): a segment
			// holding records of an open transaction waits for its
			// marker, so remote reads never pass the last stable offset
			// and an open transaction's records stay local.
			break
		}
		// A segment starting below the manifest's end is one compaction
		// merged from uploaded segments and newer ones: it replaces the
		// remote segments from its base on (upload).
		if m, err = r.upload(ctx, m, seg); err != nil {
			return uploaded, err
		}
		uploaded++
		r.updateLag(segs, m)
	}
	return uploaded, nil
}

func (r *remoteLog) updateLag(segs []storage.SealedSegment, m *tiering.Manifest) {
	var n, size int64
	for _, s := range segs {
		if s.BaseOffset >= m.NextOffset() {
			n++
			size += s.Size
		}
	}
	r.lagSegments.Store(n)
	r.lagBytes.Store(size)
}

// upload puts one segment's objects under a fresh upload ID, then the
// manifest naming them. If putting an object fails, the attempt's objects
// are removed (best effort: an object no manifest names is garbage, never
// data); once the manifest write was attempted they are left alone.
//
// On a compacted topic the cleaner may merge segments that were uploaded
// with newer ones; the merged segment then starts at the base of a remote
// segment (merging only removes segment boundaries, so it never starts
// inside one) and replaces every remote segment from there on, whose
// objects are deleted once the new manifest is written.
func (r *remoteLog) upload(ctx context.Context, m *tiering.Manifest, seg storage.SealedSegment) (*tiering.Manifest, error) {
	kept := len(m.Segments)
	for kept > 0 && m.Segments[kept-1].NextOffset > seg.BaseOffset {
		kept--
	}
	if kept < len(m.Segments) && m.Segments[kept].BaseOffset < seg.BaseOffset {
		return m, fmt.Errorf("upload segment [%d, %d) of %s: it starts inside remote segment [%d, %d)", seg.BaseOffset, seg.NextOffset,
			r.prefix, m.Segments[kept].BaseOffset, m.Segments[kept].NextOffset)
	}
	replaced := m.Segments[kept:]
	id := tiering.NewUploadID()
	keys := []string{
		tiering.SegmentKey(r.prefix, seg.BaseOffset, id, tiering.SuffixLog),
		tiering.SegmentKey(r.prefix, seg.BaseOffset, id, tiering.SuffixIndex),
		tiering.SegmentKey(r.prefix, seg.BaseOffset, id, tiering.SuffixTimeIdx),
	}
	crc := crc32.New(storage.Castagnoli)
	body := io.TeeReader(io.NewSectionReader(seg.File, 0, seg.Size), crc)
	putCtx, cancel := context.WithTimeout(ctx, segmentPutTimeout)
	err := r.t.store.Put(putCtx, keys[0], body, seg.Size)
	if err == nil {
		err = r.t.store.Put(putCtx, keys[1], bytes.NewReader(seg.OffsetIndex), int64(len(seg.OffsetIndex)))
	}
	if err == nil {
		err = r.t.store.Put(putCtx, keys[2], bytes.NewReader(seg.TimeIndex), int64(len(seg.TimeIndex)))
	}
	if err == nil && len(seg.TxnIndex) > 0 {
		// The aborted-transaction index travels with the segment, so
		// read_committed reads of remote data know what was aborted.
		keys = append(keys, tiering.SegmentKey(r.prefix, seg.BaseOffset, id, tiering.SuffixTxnIdx))
		err = r.t.store.Put(putCtx, keys[3], bytes.NewReader(seg.TxnIndex), int64(len(seg.TxnIndex)))
	}
	cancel()
	next := r.stamp(m.Clone())
	if err == nil {
		entry := tiering.RemoteSegment{
			BaseOffset: seg.BaseOffset, NextOffset: seg.NextOffset, Size: seg.Size,
			OffsetIndexSize: int64(len(seg.OffsetIndex)), TimeIndexSize: int64(len(seg.TimeIndex)), TxnIndexSize: int64(len(seg.TxnIndex)),
			MaxTimestamp: seg.MaxTimestamp, OffsetOfMaxTimestamp: seg.OffsetOfMaxTimestamp,
			CRC32C: crc.Sum32(), UploadID: id, UploadedAtMs: time.Now().UnixMilli(),
		}
		for _, e := range seg.Epochs {
			if e.StartOffset >= seg.BaseOffset && e.StartOffset < seg.NextOffset {
				entry.LeaderEpochs = append(entry.LeaderEpochs, tiering.EpochStart{Epoch: e.Epoch, StartOffset: e.StartOffset})
			}
		}
		next.Segments = append(next.Segments[:kept], entry)
		if err = r.saveManifest(ctx, next); err != nil {
			// The write may have landed even though it reports failure
			// (a timeout after the store committed it, a cancelled
			// request): the objects stay, since a durable manifest may
			// name them. If it does not, they are garbage.
			return m, fmt.Errorf("upload segment %d of %s: manifest: %w", seg.BaseOffset, r.prefix, err)
		}
	}
	if err != nil {
		r.deleteObjects(keys)
		return m, fmt.Errorf("upload segment %d of %s: %w", seg.BaseOffset, r.prefix, err)
	}
	r.install(next)
	if len(replaced) > 0 {
		var old []string
		for _, s := range replaced {
			old = append(old, segmentKeys(r.prefix, s)...)
		}
		r.deleteObjects(old)
		r.t.s.logger.Info("remote log: compacted segment replaced remote segments", "topic", r.topicState.name, "partition", r.index,
			"base_offset", seg.BaseOffset, "next_offset", seg.NextOffset, "replaced", len(replaced))
	}
	r.t.uploadedBytes.WithLabelValues(r.topicState.name).Add(float64(seg.Size))
	r.t.s.logger.Debug("remote log: segment uploaded", "topic", r.topicState.name, "partition", r.index,
		"base_offset", seg.BaseOffset, "next_offset", seg.NextOffset, "bytes", seg.Size)
	return next, nil
}

// Orphan sweeping: objects under a partition that its manifest does not
// name are left by attempts that failed after some puts, or by a manifest
// write that failed ambiguously. Only this partition's task writes under
// its prefix, and it holds taskMu while sweeping, so no upload is in
// flight; the age margin covers clocks and a manifest that landed late.
var (
	orphanSweepInterval = time.Hour
	orphanMinAge        = 10 * time.Minute
)

// sweepOrphans deletes objects under the partition's prefix that the
// manifest does not name and that are older than orphanMinAge. Needs
// taskMu.
func (r *remoteLog) sweepOrphans(ctx context.Context) {
	r.lastSweep = time.Now()
	m := r.manifest.Load()
	if m == nil {
		return
	}
	named := map[string]bool{tiering.ManifestKey(r.prefix): true}
	for _, s := range m.Segments {
		for _, k := range segmentKeys(r.prefix, s) {
			named[k] = true
		}
	}
	listCtx, cancel := context.WithTimeout(ctx, manifestSaveTimeout)
	objects, err := r.t.store.List(listCtx, r.prefix)
	cancel()
	if err != nil {
		r.t.s.logger.Warn("remote log: listing for orphaned objects failed", "prefix", r.prefix, "err", err)
		return
	}
	var orphans []string
	for _, o := range objects {
		if !named[o.Key] && time.Since(o.ModTime) >= orphanMinAge {
			orphans = append(orphans, o.Key)
		}
	}
	if len(orphans) > 0 {
		r.deleteObjects(orphans)
		r.t.orphansDeleted.WithLabelValues(r.topicState.name).Add(float64(len(orphans)))
		r.t.s.logger.Info("remote log: orphaned objects deleted", "prefix", r.prefix, "count", len(orphans))
	}
}

func (r *remoteLog) saveManifest(ctx context.Context, m *tiering.Manifest) error {
	ctx, cancel := context.WithTimeout(ctx, manifestSaveTimeout)
	defer cancel()
	return tiering.SaveManifest(ctx, r.t.store, tiering.ManifestKey(r.prefix), m)
}

// deleteObjects removes objects no manifest names any more, ignoring
// failures (they are garbage either way) and dropping them from the cache.
func (r *remoteLog) deleteObjects(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, k := range keys {
		r.t.cache.Remove(k)
		r.forgetIndex(k)
		if err := r.t.store.Delete(ctx, k); err != nil {
			r.t.s.logger.Warn("remote log: could not delete object; left as garbage", "key", k, "err", err)
		}
	}
}

// segmentKeys are the objects of a remote segment.
func segmentKeys(prefix string, s tiering.RemoteSegment) []string {
	keys := []string{
		tiering.SegmentKey(prefix, s.BaseOffset, s.UploadID, tiering.SuffixLog),
		tiering.SegmentKey(prefix, s.BaseOffset, s.UploadID, tiering.SuffixIndex),
		tiering.SegmentKey(prefix, s.BaseOffset, s.UploadID, tiering.SuffixTimeIdx),
	}
	if s.TxnIndexSize > 0 {
		keys = append(keys, tiering.SegmentKey(prefix, s.BaseOffset, s.UploadID, tiering.SuffixTxnIdx))
	}
	return keys
}

// applyRetention deletes remote segments past retention.ms or
// retention.bytes (the whole log's size: remote segments below the local
// log plus the local log), first from the manifest, then their objects.
func (r *remoteLog) applyRetention(ctx context.Context) error {
	m := r.manifest.Load()
	if m == nil || len(m.Segments) == 0 {
		return nil
	}
	_, cfg := r.topic()
	sc := cfg.storageConfig()
	localStart := r.local.Log().LogStartOffset()
	total := r.local.Log().Size()
	for _, s := range m.Segments {
		if s.NextOffset <= localStart {
			total += s.Size
		}
	}
	nowMs := time.Now().UnixMilli()
	n := 0
	for ; n < len(m.Segments); n++ {
		s := m.Segments[n]
		ts := s.MaxTimestamp
		if ts < 0 {
			ts = s.UploadedAtMs
		}
		belowStart := s.NextOffset <= m.LogStartOffset
		byTime := sc.Delete && sc.RetentionMs >= 0 && ts < nowMs-sc.RetentionMs
		bySize := sc.Delete && sc.RetentionBytes >= 0 && s.NextOffset <= localStart && total-s.Size >= sc.RetentionBytes
		if !belowStart && !byTime && !bySize {
			break
		}
		if s.NextOffset <= localStart {
			total -= s.Size
		}
	}
	if n == 0 {
		return nil
	}
	return r.dropFirst(ctx, m, n, m.Segments[n-1].NextOffset)
}

// dropFirst removes the first n segments from the manifest, raising its log
// start offset to at least start, then deletes their objects.
func (r *remoteLog) dropFirst(ctx context.Context, m *tiering.Manifest, n int, start int64) error {
	if n == 0 && start <= m.LogStartOffset {
		return nil
	}
	next := r.stamp(m.Clone())
	removed := next.Segments[:n]
	next.Segments = append([]tiering.RemoteSegment(nil), next.Segments[n:]...)
	next.LogStartOffset = max(next.LogStartOffset, start)
	if err := r.saveManifest(ctx, next); err != nil {
		return fmt.Errorf("remote retention of %s: %w", r.prefix, err)
	}
	r.manifest.Store(next)
	r.local.NotifyChanged()
	var keys []string
	var size int64
	for _, s := range removed {
		keys = append(keys, segmentKeys(r.prefix, s)...)
		size += s.Size
	}
	r.deleteObjects(keys)
	r.t.deletedBytes.WithLabelValues(r.topicState.name).Add(float64(size))
	if n > 0 {
		r.t.s.logger.Info("remote log: segments deleted", "topic", r.topicState.name, "partition", r.index,
			"segments", n, "remote_log_start_offset", next.StartOffset())
	}
	return nil
}

// deleteRecordsBefore applies DeleteRecords to the remote log: the
// manifest's log start offset moves to offset and segments wholly below it
// go.
//
// Even with no remote segment yet the new start is written, so a segment
// uploaded later never brings deleted records back. A tiered partition
// whose manifest cannot be read fails, rather than delete only locally.
func (r *remoteLog) deleteRecordsBefore(ctx context.Context, offset int64) error {
	r.taskMu.Lock()
	defer r.taskMu.Unlock()
	m := r.manifest.Load()
	if m == nil {
		if !r.enabled() {
			return nil
		}
		var err error
		if m, err = r.load(ctx); err != nil {
			return fmt.Errorf("delete records below %d of %s: %w", offset, r.prefix, err)
		}
	}
	if offset <= m.LogStartOffset {
		return nil
	}
	n := 0
	for n < len(m.Segments) && m.Segments[n].NextOffset <= offset {
		n++
	}
	return r.dropFirst(ctx, m, n, offset)
}

// logStartOffset is the partition's first readable offset: remote if the
// remote log reaches below the local one.
func (p *partition) logStartOffset() int64 {
	local := p.Log().LogStartOffset()
	if start, _, ok := p.remote.readable(); ok && start < local {
		return start
	}
	return local
}

// tieredCollector reports per-partition remote gauges and the chunk cache
// at scrape time.
type tieredCollector struct {
	t *tieredStorage
}

var (
	descRemoteLagSegments = prometheus.NewDesc("strata_remote_upload_lag_segments", "Sealed local segments of tiered partitions not yet uploaded.", []string{"topic", "partition"}, nil)
	descRemoteLagBytes    = prometheus.NewDesc("strata_remote_upload_lag_bytes", "Bytes of sealed local segments not yet uploaded.", []string{"topic", "partition"}, nil)
	descRemoteBytes       = prometheus.NewDesc("strata_remote_log_size_bytes", "Bytes of the partition's remote segments.", []string{"topic", "partition"}, nil)
	descRemoteSegments    = prometheus.NewDesc("strata_remote_log_segments", "Remote segments of the partition.", []string{"topic", "partition"}, nil)
	descRemoteFailing     = prometheus.NewDesc("strata_remote_upload_failing", "1 while the partition's last upload or remote retention failed (object store unavailable?): local deletion waits.", []string{"topic", "partition"}, nil)
	descCacheBytes        = prometheus.NewDesc("strata_remote_cache_bytes", "Bytes in the remote chunk cache.", nil, nil)
	descCacheHits         = prometheus.NewDesc("strata_remote_cache_hits_total", "Remote chunk reads served from the cache.", nil, nil)
	descCacheMisses       = prometheus.NewDesc("strata_remote_cache_misses_total", "Remote chunk reads that went to the object store.", nil, nil)
	descCacheFetched      = prometheus.NewDesc("strata_remote_cache_fetched_bytes_total", "Bytes read from the object store into the chunk cache.", nil, nil)
)

func (c *tieredCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRemoteLagSegments, descRemoteLagBytes, descRemoteBytes, descRemoteSegments, descRemoteFailing, descCacheBytes, descCacheHits, descCacheMisses, descCacheFetched} {
		ch <- d
	}
}

func (c *tieredCollector) Collect(ch chan<- prometheus.Metric) {
	c.t.s.topics.forEachPartition(func(p *partition) {
		m := p.remote.manifest.Load()
		if m == nil {
			return
		}
		labels := []string{p.topic.name, fmt.Sprint(p.index)}
		failing := 0.0
		if p.remote.failing.Load() {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(descRemoteLagSegments, prometheus.GaugeValue, float64(p.remote.lagSegments.Load()), labels...)
		ch <- prometheus.MustNewConstMetric(descRemoteLagBytes, prometheus.GaugeValue, float64(p.remote.lagBytes.Load()), labels...)
		ch <- prometheus.MustNewConstMetric(descRemoteBytes, prometheus.GaugeValue, float64(m.Bytes()), labels...)
		ch <- prometheus.MustNewConstMetric(descRemoteSegments, prometheus.GaugeValue, float64(len(m.Segments)), labels...)
		ch <- prometheus.MustNewConstMetric(descRemoteFailing, prometheus.GaugeValue, failing, labels...)
	})
	st := c.t.cache.Stats()
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(descCacheHits, prometheus.CounterValue, float64(st.Hits))
	ch <- prometheus.MustNewConstMetric(descCacheMisses, prometheus.CounterValue, float64(st.Misses))
	ch <- prometheus.MustNewConstMetric(descCacheFetched, prometheus.CounterValue, float64(st.BytesFetched))
}

// resetLocalLog empties the partition's local log, before the server
// serves, to start at start (the remote log's end).
func (p *partition) resetLocalLog(start int64) error {
	p.remote.t.s.logger.Warn("local log ends below its remote log; starting it empty at the remote end",
		"topic", p.topic.name, "partition", p.index, "local_end_offset", p.LogEndOffset(), "remote_end_offset", start)
	if err := p.ResetTo(start); err != nil {
		return err
	}
	p.SetRemoteOffset(start)
	return nil
}
