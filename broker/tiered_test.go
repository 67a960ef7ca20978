package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/tiering"
)

func tieredBroker(t *testing.T, tune ...func(*Config)) *testBroker {
	return startTestBroker(t, append([]func(*Config){func(c *Config) {
		c.ObjectStore = "file://" + t.TempDir()
		c.RemoteLogTaskIntervalMs = 20
		c.LogRetentionCheckIntervalMs = 20
		c.FileDeleteDelayMs = 0
		c.RemoteLogCacheChunkBytes = 256 << 10
	}}, tune...)...)
}

func tieredTopicConfigs(extra ...string) map[string]*string {
	s := func(v string) *string { return &v }
	cfg := map[string]*string{
		"remote.storage.enable": s("true"),
		"segment.bytes":         s("65536"),
		"local.retention.bytes": s("131072"),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = s(extra[i+1])
	}
	return cfg
}

// produceValues sends n records with distinct values and returns them.
func produceValues(t *testing.T, cl *kgo.Client, topic string, n int) [][]byte {
	t.Helper()
	ctx := testContext(t)
	values := make([][]byte, n)
	// Distinct, increasing timestamps (one ms apart, ending now) so lookups
	// by time have one right answer.
	base := time.Now().UnixMilli() - int64(n)
	for i := range values {
		values[i] = []byte(fmt.Sprintf("record-%06d-%s", i, bytes.Repeat([]byte{'x'}, 200)))
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: values[i], Timestamp: time.UnixMilli(base + int64(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return values
}

func consumeValues(t *testing.T, tb *testBroker, topic string, n int) [][]byte {
	t.Helper()
	ctx := testContext(t)
	cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxPartitionBytes(64<<10))
	defer cl.Close()
	var got [][]byte
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(got), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(len(got)) {
				t.Fatalf("offset %d, want %d", r.Offset, len(got))
			}
			got = append(got, r.Value)
		})
	}
	return got
}

func TestTieredUploadDeleteLocalAndReadBack(t *testing.T) {
	tb := tieredBroker(t)
	tb.createTopic("tiered", 1, tieredTopicConfigs())
	values := produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "tiered", 4000) // ≈ 900 KiB, 14 segments

	p := tb.srv.topics.partition("tiered", 0)
	waitFor(t, 20*time.Second, "local log start to move past 0", func() bool { return p.Log().LogStartOffset() > 0 })
	waitFor(t, 20*time.Second, "local size within local.retention.bytes + 2 segments", func() bool {
		return p.Log().Size() <= 131072+2*65536
	})
	if got := p.logStartOffset(); got != 0 {
		t.Fatalf("partition log start offset %d, want 0 (remote)", got)
	}
	m := p.remote.manifest.Load()
	if m == nil || len(m.Segments) == 0 || m.Segments[0].BaseOffset != 0 {
		t.Fatalf("manifest %+v", m)
	}
	check := func(when string) {
		got := consumeValues(t, tb, "tiered", len(values))
		for i := range values {
			if !bytes.Equal(got[i], values[i]) {
				t.Fatalf("%s: record %d differs", when, i)
			}
		}
	}
	check("before restart")
	offs, err := tb.admin().ListStartOffsets(testContext(t), "tiered")
	if err != nil || offs["tiered"][0].Offset != 0 {
		t.Fatalf("earliest: %v %+v", err, offs)
	}
	tb.restart()
	p = tb.srv.topics.partition("tiered", 0)
	if m := p.remote.manifest.Load(); m == nil || len(m.Segments) == 0 {
		t.Fatal("manifest not loaded at start")
	}
	check("after restart (cold cache)")
	// By timestamp: every record's timestamp is at or after the first one's.
	lo, err := tb.admin().ListOffsetsAfterMilli(testContext(t), 0, "tiered")
	if err != nil || lo["tiered"][0].Offset != 0 {
		t.Fatalf("by timestamp: %v %+v", err, lo)
	}
	// By the timestamp of a record in the middle of the remote log.
	target := p.Log().LogStartOffset() / 2
	p = tb.srv.topics.partition("tiered", 0)
	first := consumeTimestamps(t, tb, "tiered", target+1)
	lo, err = tb.admin().ListOffsetsAfterMilli(testContext(t), first[target], "tiered")
	if err != nil || lo["tiered"][0].Offset != target {
		t.Fatalf("by the timestamp of remote offset %d: %v %+v", target, err, lo)
	}
	// Max timestamp (-3) and latest-tiered (-5) see the remote log too.
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 9
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "tiered"
	for _, stamp := range []int64{-3, -5} {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = stamp
		rp.CurrentLeaderEpoch = -1
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
		// Uploads may go on while the request runs: the answer lies between
		// the remote end seen before and after it.
		lo, hi := int64(len(values)-1), int64(len(values)-1)
		if stamp == -5 {
			lo = p.remote.manifest.Load().NextOffset() - 1
		}
		resp, err := req.RequestWith(testContext(t), tb.client())
		if err != nil {
			t.Fatal(err)
		}
		if stamp == -5 {
			hi = p.remote.manifest.Load().NextOffset() - 1
		}
		got := resp.Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.Offset < lo || got.Offset > hi {
			t.Fatalf("ListOffsets %d: offset %d error %d, want in [%d, %d]", stamp, got.Offset, got.ErrorCode, lo, hi)
		}
	}
}

// consumeTimestamps returns the timestamps (ms) of the first n records.
func consumeTimestamps(t *testing.T, tb *testBroker, topic string, n int64) []int64 {
	t.Helper()
	ctx := testContext(t)
	cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	defer cl.Close()
	var out []int64
	for int64(len(out)) < n {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r.Timestamp.UnixMilli()) })
	}
	return out
}

// TestTieredRecoverTopicFromBucket loses a broker's whole data directory
// and recreates the topic in a fresh one from the object store alone.
func TestTieredRecoverTopicFromBucket(t *testing.T) {
	objects := "file://" + t.TempDir()
	tb := tieredBroker(t, func(c *Config) { c.ObjectStore = objects })
	tb.createTopic("lost", 1, tieredTopicConfigs("retention.ms", "-1"))
	values := produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "lost", 3000)
	p := tb.srv.topics.partition("lost", 0)
	waitFor(t, 20*time.Second, "local deletion of uploaded segments", func() bool { return p.Log().LogStartOffset() > 0 })
	prefix := p.remote.prefix
	tb.stop()
	// The bucket's manifest, read after the stop: uploads go on until then.
	store, err := tiering.Open(testContext(t), objects)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := tiering.LoadManifest(testContext(t), store, tiering.ManifestKey(prefix))
	if err != nil {
		t.Fatal(err)
	}
	remoteNext := stored.NextOffset()

	fresh := tieredBroker(t, func(c *Config) { c.ObjectStore = objects })
	adm := fresh.admin()
	resp, err := adm.CreateTopic(testContext(t), -1, -1, map[string]*string{recoverFromBucketConfig: kadm.StringPtr("true")}, "lost")
	if err != nil || resp.Err != nil {
		t.Fatalf("recover: %v %v", err, resp.Err)
	}
	rp := fresh.srv.topics.partition("lost", 0)
	if rp == nil || rp.Log().LogStartOffset() != remoteNext || rp.logStartOffset() != 0 {
		t.Fatalf("recovered partition: local start %d (want %d), start %d", rp.Log().LogStartOffset(), remoteNext, rp.logStartOffset())
	}
	if got := fresh.srv.topics.get("lost").meta.Configs["retention.ms"]; got != "-1" {
		t.Fatalf("recovered configs lost retention.ms: %q", got)
	}
	got := consumeValues(t, fresh, "lost", int(remoteNext))
	for i := range got {
		if !bytes.Equal(got[i], values[i]) {
			t.Fatalf("record %d differs after recovery", i)
		}
	}
	// A second recovery of the same name is refused.
	resp, err = adm.CreateTopic(testContext(t), -1, -1, map[string]*string{recoverFromBucketConfig: kadm.StringPtr("true")}, "lost")
	if err == nil && resp.Err == nil {
		t.Fatal("recovering an existing topic succeeded")
	}
	resp, err = adm.CreateTopic(testContext(t), -1, -1, map[string]*string{recoverFromBucketConfig: kadm.StringPtr("true")}, "never-existed")
	if err == nil && resp.Err == nil {
		t.Fatal("recovering a topic with no manifests succeeded")
	}
}

// gatedStore passes everything to a MemStore, except that while gate is
// non-nil ranged reads wait for it to close. Close does nothing, so one
// store survives broker restarts.
type gatedStore struct {
	tiering.ObjectStore
	mu      sync.Mutex
	gate    chan struct{}
	waiting map[string]bool // keys of ranged reads held at the gate
}

func (g *gatedStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	g.mu.Lock()
	gate := g.gate
	if gate != nil {
		if g.waiting == nil {
			g.waiting = map[string]bool{}
		}
		g.waiting[key] = true
	}
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.ObjectStore.GetRange(ctx, key, off, n)
}

func (g *gatedStore) Close() error { return nil }

// TestTieredRemoteReadNeverDelaysHotPartition: a fetch naming a hot local
// partition and a remote partition whose object store hangs is answered at
// once with the hot data; once the store answers, the remote records come.
func TestTieredRemoteReadNeverDelaysHotPartition(t *testing.T) {
	store := &gatedStore{ObjectStore: tiering.NewMemStore()}
	tb := tieredBroker(t, func(c *Config) { c.objectStore = store })
	tb.createTopic("cold", 1, tieredTopicConfigs())
	tb.createTopic("hot", 1, nil)
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	coldValues := produceValues(t, cl, "cold", 2000)
	p := tb.srv.topics.partition("cold", 0)
	waitFor(t, 20*time.Second, "local deletion of uploaded segments", func() bool { return p.Log().LogStartOffset() > 0 })
	tb.restart() // cold cache
	gate := make(chan struct{})
	store.mu.Lock()
	store.gate = gate
	store.mu.Unlock()
	hot := produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression())), "hot", 10)

	raw := tb.dialRaw()
	fetch := func() *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, -1, 10000, 1, 1<<20
		for _, topic := range []string{"cold", "hot"} {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 64 << 10
			rp.CurrentLeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := raw.readResponse(req, raw.send(req), 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.FetchResponse)
	}
	recordsOf := func(resp *kmsg.FetchResponse, topic string) []byte {
		for _, rt := range resp.Topics {
			if rt.Topic == topic {
				if code := rt.Partitions[0].ErrorCode; code != 0 {
					t.Fatalf("%s: error %d", topic, code)
				}
				return rt.Partitions[0].RecordBatches
			}
		}
		return nil
	}
	start := time.Now()
	resp := fetch()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("fetch with a hanging remote partition took %v; the hot partition waited", took)
	}
	if !bytes.Contains(recordsOf(resp, "hot"), hot[0]) {
		t.Fatal("hot partition's records missing")
	}
	if n := len(recordsOf(resp, "cold")); n != 0 {
		t.Fatalf("remote partition answered %d bytes while its store hung", n)
	}
	close(gate)
	var cold []byte
	waitFor(t, 20*time.Second, "remote records after the store answers", func() bool {
		cold = recordsOf(fetch(), "cold")
		return len(cold) > 0
	})
	if !bytes.Contains(cold, coldValues[0]) {
		t.Fatal("remote records do not hold the first record")
	}
}

// TestTieredCompactedTopic: a compacted topic is tiered too. Only segments
// the cleaner has compacted are uploaded, so the remote log holds at most
// one record per key per segment, and a consumer from offset 0 reads, partly
// from the bucket, every key's latest value at its original offset.
func TestTieredCompactedTopic(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) { c.LogCleanerBackoffMs = 20 })
	ctx := testContext(t)
	tb.createTopic("table", 1, tieredTopicConfigs(
		"cleanup.policy", "compact", "segment.bytes", "1024", "local.retention.bytes", "1",
		"min.cleanable.dirty.ratio", "0.01"))
	producer := tb.client(kgo.DefaultProduceTopic("table"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const updates, keys = 400, 5
	for i := range updates {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%keys), Value: fmt.Appendf(nil, "%d", i)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	p := tb.srv.topics.partition("table", 0)
	waitFor(t, 30*time.Second, "compacted segments uploaded and deleted locally", func() bool {
		return p.Log().LogStartOffset() > 0
	})
	// Every object under the partition is named by the manifest: segments
	// a compacted merge replaced are deleted, not left behind.
	waitFor(t, 30*time.Second, "no object outside the manifest", func() bool {
		m := p.remote.manifest.Load()
		named := map[string]bool{tiering.ManifestKey(p.remote.prefix): true}
		for _, seg := range m.Segments {
			for _, k := range segmentKeys(p.remote.prefix, seg) {
				named[k] = true
			}
		}
		objects, err := tb.srv.objects.List(ctx, p.remote.prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objects {
			if !named[o.Key] {
				return false
			}
		}
		return true
	})
	rr := remoteReader{r: p.remote, ctx: ctx, wait: true}
	// Read every remote segment whole and count records per key. A later
	// clean may replace segments (and delete their objects) meanwhile: then
	// read the new manifest's.
	var segments []tiering.RemoteSegment
	var contents [][]byte
	for attempt := 0; ; attempt++ {
		segments, contents = p.remote.manifest.Load().Segments, nil
		var err error
		for _, seg := range segments {
			data := make([]byte, seg.Size)
			if err = rr.readAt(segmentKeys(p.remote.prefix, seg)[0], seg.Size, data, 0); err != nil {
				break
			}
			contents = append(contents, data)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, tiering.ErrNotFound) || attempt == 10 {
			t.Fatal(err)
		}
	}
	for i, seg := range segments {
		data := contents[i]
		seen := map[string]int{}
		for len(data) > 0 {
			h, err := storage.ParseBatchHeader(data)
			if err != nil {
				t.Fatal(err)
			}
			records, err := storage.DecodeRecords(data[:h.Size()])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range records {
				seen[string(r.Key)]++
				if seen[string(r.Key)] > 1 {
					t.Fatalf("remote segment %d holds key %s twice: not compacted before upload", seg.BaseOffset, r.Key)
				}
			}
			data = data[h.Size():]
		}
	}
	records := consumeAll(t, tb, "table", updates)
	latest := map[string]*kgo.Record{}
	for _, r := range records {
		if string(r.Value) != fmt.Sprint(r.Offset) {
			t.Fatalf("offset %d holds value %s", r.Offset, r.Value)
		}
		latest[string(r.Key)] = r
	}
	for k := range keys {
		if r := latest[fmt.Sprint("k", k)]; r == nil || r.Offset != int64(updates-keys+k) {
			t.Fatalf("key k%d: latest record %+v", k, r)
		}
	}
	if records[0].Offset >= p.Log().LogStartOffset() {
		t.Fatalf("nothing was read from the remote log (first offset %d, local start %d)", records[0].Offset, p.Log().LogStartOffset())
	}
}

// TestTieredUploadReplacesMergedSegments drives upload directly with the
// segments compaction produces: a merged segment starting at a remote
// segment's base replaces the remote segments from there on (their objects
// deleted), and one starting inside a remote segment is refused.
func TestTieredUploadReplacesMergedSegments(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) { c.RemoteLogTaskIntervalMs, c.RemoteLogUploadOnRoll = 1<<30, false })
	tb.createTopic("merged", 1, tieredTopicConfigs())
	ctx := testContext(t)
	r := tb.srv.topics.partition("merged", 0).remote
	sealed := func(base, next int64) storage.SealedSegment {
		f, err := os.CreateTemp(t.TempDir(), "seg")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		data := bytes.Repeat([]byte{byte(base)}, 100)
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		return storage.SealedSegment{BaseOffset: base, NextOffset: next, Size: int64(len(data)), File: f, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1}
	}
	m, err := r.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][2]int64{{0, 10}, {10, 20}, {20, 30}} {
		if m, err = r.upload(ctx, m, sealed(s[0], s[1])); err != nil {
			t.Fatal(err)
		}
	}
	old := append(segmentKeys(r.prefix, m.Segments[1]), segmentKeys(r.prefix, m.Segments[2])...)
	if _, err := r.upload(ctx, m, sealed(15, 40)); err == nil {
		t.Fatal("a segment starting inside a remote segment was uploaded")
	}
	if m, err = r.upload(ctx, m, sealed(10, 40)); err != nil {
		t.Fatal(err)
	}
	if len(m.Segments) != 2 || m.Segments[1].BaseOffset != 10 || m.Segments[1].NextOffset != 40 {
		t.Fatalf("manifest after the merged upload: %+v", m.Segments)
	}
	stored, err := tiering.LoadManifest(ctx, tb.srv.objects, tiering.ManifestKey(r.prefix))
	if err != nil || stored.NextOffset() != 40 || len(stored.Segments) != 2 {
		t.Fatalf("stored manifest: %v %+v", err, stored)
	}
	for _, k := range old {
		if _, err := tb.srv.objects.Head(ctx, k); !errors.Is(err, tiering.ErrNotFound) {
			t.Errorf("replaced object %s still there (%v)", k, err)
		}
	}
}

// TestTieredDeleteRecordsBeforeUpload: DeleteRecords on a tiered topic
// whose segments are not uploaded yet is remembered in the manifest, so
// the later upload never brings the deleted records back.
func TestTieredDeleteRecordsBeforeUpload(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) { c.RemoteLogTaskIntervalMs, c.RemoteLogUploadOnRoll = 1<<30, false })
	tb.createTopic("purged", 1, tieredTopicConfigs())
	produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "purged", 2000)
	p := tb.srv.topics.partition("purged", 0)
	const cut = 700
	ctx := testContext(t)
	if _, err := tb.admin().DeleteRecords(ctx, kadm.Offsets{"purged": {0: {Topic: "purged", Partition: 0, At: cut}}}); err != nil {
		t.Fatal(err)
	}
	p.remote.runTask(ctx) // upload now
	if m := p.remote.manifest.Load(); m == nil || len(m.Segments) == 0 || m.LogStartOffset != cut {
		t.Fatalf("manifest after upload: %+v", m)
	}
	waitFor(t, 20*time.Second, "local deletion of uploaded segments", func() bool { return p.Log().LogStartOffset() > cut })
	if got := p.logStartOffset(); got != cut {
		t.Fatalf("log start offset %d after the upload, want %d", got, cut)
	}
	start, err := tb.admin().ListStartOffsets(ctx, "purged")
	if err != nil || start["purged"][0].Offset != cut {
		t.Fatalf("earliest: %v %+v", err, start)
	}
}

// TestTieredLocalLogBehindRemote: a partition directory that lost its data
// (wiped, or a tail lost to a power cut) restarts empty at the remote end:
// remote records are served and no offset is reused.
func TestTieredLocalLogBehindRemote(t *testing.T) {
	tb := tieredBroker(t)
	tb.createTopic("wiped", 1, tieredTopicConfigs())
	values := produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "wiped", 2000)
	p := tb.srv.topics.partition("wiped", 0)
	waitFor(t, 20*time.Second, "local deletion of uploaded segments", func() bool { return p.Log().LogStartOffset() > 0 })
	dir := p.Log().Dir()
	tb.stop()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != replica.PartitionMetadataFile {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	tb.start()
	p = tb.srv.topics.partition("wiped", 0)
	// The manifest as the restarted broker read it (uploads went on until
	// the stop).
	remoteEnd := p.remote.manifest.Load().NextOffset()
	if p.Log().LogStartOffset() != remoteEnd || p.Log().LogEndOffset() != remoteEnd {
		t.Fatalf("local log [%d, %d), want to start empty at the remote end %d", p.Log().LogStartOffset(), p.Log().LogEndOffset(), remoteEnd)
	}
	got := consumeValues(t, tb, "wiped", int(remoteEnd))
	for i := range got {
		if !bytes.Equal(got[i], values[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
	res := tb.client().ProduceSync(testContext(t), &kgo.Record{Topic: "wiped", Value: []byte("after")})
	if r, err := res.First(); err != nil || r.Offset != remoteEnd {
		t.Fatalf("produce after the reset: offset %d, %v; want %d", r.Offset, err, remoteEnd)
	}
}

// TestTieredSweepsOrphans: objects under a partition that its manifest does
// not name (a failed attempt's leftovers) are deleted once old enough; the
// manifest's own objects and young objects stay.
func TestTieredSweepsOrphans(t *testing.T) {
	objects := t.TempDir()
	tb := tieredBroker(t, func(c *Config) {
		c.ObjectStore = "file://" + objects
		c.RemoteLogTaskIntervalMs, c.RemoteLogUploadOnRoll = 1<<30, false
	})
	tb.createTopic("swept", 1, tieredTopicConfigs())
	produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "swept", 1000)
	ctx := testContext(t)
	r := tb.srv.topics.partition("swept", 0).remote
	r.runTask(ctx)
	m := r.manifest.Load()
	if m == nil || len(m.Segments) == 0 {
		t.Fatal("nothing uploaded")
	}
	old := tiering.SegmentKey(r.prefix, 0, "0123456789abcdef", tiering.SuffixLog)
	young := tiering.SegmentKey(r.prefix, 0, "fedcba9876543210", tiering.SuffixLog)
	for _, k := range []string{old, young} {
		if err := tb.srv.objects.Put(ctx, k, strings.NewReader("garbage"), 7); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(objects, old), past, past); err != nil {
		t.Fatal(err)
	}
	r.taskMu.Lock()
	r.sweepOrphans(ctx)
	r.taskMu.Unlock()
	if _, err := tb.srv.objects.Head(ctx, old); !errors.Is(err, tiering.ErrNotFound) {
		t.Fatalf("old orphan still there: %v", err)
	}
	if _, err := tb.srv.objects.Head(ctx, young); err != nil {
		t.Fatalf("young orphan deleted: %v", err)
	}
	for _, s := range m.Segments {
		for _, k := range segmentKeys(r.prefix, s) {
			if _, err := tb.srv.objects.Head(ctx, k); err != nil {
				t.Fatalf("manifest object %s deleted: %v", k, err)
			}
		}
	}
}

// TestTieredRemotePartitionsReadInParallel: one fetch naming two cold
// remote partitions starts both reads from the store at once (neither waits
// for the other), and then answers with both.
func TestTieredRemotePartitionsReadInParallel(t *testing.T) {
	store := &gatedStore{ObjectStore: tiering.NewMemStore()}
	tb := tieredBroker(t, func(c *Config) { c.objectStore = store })
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	for _, topic := range []string{"cold-a", "cold-b"} {
		tb.createTopic(topic, 1, tieredTopicConfigs())
		produceValues(t, cl, topic, 1500)
		p := tb.srv.topics.partition(topic, 0)
		waitFor(t, 20*time.Second, topic+" uploaded and deleted locally", func() bool { return p.Log().LogStartOffset() > 0 })
	}
	tb.restart() // cold cache
	gate := make(chan struct{})
	store.mu.Lock()
	store.gate = gate
	store.mu.Unlock()

	raw := tb.dialRaw()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, -1, 15000, 1, 1<<20
	for _, topic := range []string{"cold-a", "cold-b"} {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 64<<10, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	corr := raw.send(req)
	waitFor(t, 10*time.Second, "reads of both partitions at the store at once", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		a, b := false, false
		for k := range store.waiting {
			a = a || strings.HasPrefix(k, "v1/cold-a-")
			b = b || strings.HasPrefix(k, "v1/cold-b-")
		}
		return a && b
	})
	close(gate)
	resp, err := raw.readResponse(req, corr, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.(*kmsg.FetchResponse).Topics {
		if p := rt.Partitions[0]; p.ErrorCode != 0 {
			t.Fatalf("%s: error %d", rt.Topic, p.ErrorCode)
		}
	}
}

// TestTieredPurgeKeepsLiveTopic: purging a name deletes the objects of its
// deleted incarnation and none of the live topic's.
func TestTieredPurgeKeepsLiveTopic(t *testing.T) {
	tb := tieredBroker(t)
	ctx := testContext(t)
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	prefixes := make([]string, 2)
	for i := range prefixes {
		tb.createTopic("reborn", 1, tieredTopicConfigs())
		produceValues(t, cl, "reborn", 1000)
		p := tb.srv.topics.partition("reborn", 0)
		waitFor(t, 20*time.Second, "an upload", func() bool { m := p.remote.manifest.Load(); return m != nil && len(m.Segments) > 0 })
		prefixes[i] = tiering.TopicPrefix("reborn", fmt.Sprintf("%x", p.topic.meta.ID[:]))
		if i == 0 {
			if terr := tb.srv.topics.delete("reborn"); terr != nil {
				t.Fatal(terr.message)
			}
			// franz-go keeps a deleted topic's id (Produce v13 names
			// topics by id) until it is purged from the client.
			cl.PurgeTopicsFromClient("reborn")
		}
	}
	res, err := tb.srv.tiered.purgeTopic(ctx, "reborn")
	if err != nil || len(res.TopicIDs) != 1 || res.ObjectsDeleted == 0 {
		t.Fatalf("purge: %v %+v", err, res)
	}
	if old, _ := tb.srv.objects.List(ctx, prefixes[0]); len(old) != 0 {
		t.Fatalf("%d objects of the deleted incarnation left", len(old))
	}
	if live, _ := tb.srv.objects.List(ctx, prefixes[1]); len(live) == 0 {
		t.Fatal("the live topic's objects were purged")
	}
}

// TestTieredOffsetForLeaderEpoch: epochs whose records are only in the
// remote log are still answered, from the manifest.
func TestTieredOffsetForLeaderEpoch(t *testing.T) {
	tb := tieredBroker(t)
	tb.createTopic("epochs", 1, tieredTopicConfigs())
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	p := tb.srv.topics.partition("epochs", 0)
	produceValues(t, cl, "epochs", 800)
	epoch1Start := p.Log().LogEndOffset()
	next := *p.Role() // a new leader epoch, as a leader change would give
	next.LeaderEpoch++
	p.SetRole(&next, time.Now().UnixMilli())
	// Enough of epoch 1 that local retention (128 KiB) drops the segment
	// holding the epoch boundary whatever the batching (800 records were
	// borderline under load).
	produceValues(t, cl, "epochs", 2400)
	waitFor(t, 20*time.Second, "epoch 0 wholly remote", func() bool { return p.Log().LogStartOffset() >= epoch1Start })
	if e, end := p.Log().EndOffsetForEpoch(0); e != -1 {
		t.Fatalf("local log still knows epoch 0 (%d, %d); the test needs it remote-only", e, end)
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 4
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "epochs"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch, rp.LeaderEpoch = 1, 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), tb.client())
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != 0 || got.LeaderEpoch != 0 || got.EndOffset != epoch1Start {
		t.Fatalf("epoch 0: (%d, %d) error %d, want (0, %d)", got.LeaderEpoch, got.EndOffset, got.ErrorCode, epoch1Start)
	}
}

// TestTieredUploadsTxnIndex: a segment with aborted transactions carries
// its .txnindex to the bucket, named in the manifest, and it goes with the
// segment.
func TestTieredUploadsTxnIndex(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) { c.RemoteLogTaskIntervalMs, c.RemoteLogUploadOnRoll = 1<<30, false })
	tb.createTopic("txns", 1, tieredTopicConfigs())
	ctx := testContext(t)
	r := tb.srv.topics.partition("txns", 0).remote
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Repeat([]byte{1}, 100)); err != nil {
		t.Fatal(err)
	}
	aborted := []storage.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 5, LastStableOffset: 2}}
	seg := storage.SealedSegment{BaseOffset: 0, NextOffset: 10, Size: 100, File: f, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1,
		TxnIndex: storage.EncodeTxnIndex(aborted)}
	m, err := r.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = r.upload(ctx, m, seg); err != nil {
		t.Fatal(err)
	}
	keys := segmentKeys(r.prefix, m.Segments[0])
	if len(keys) != 4 || m.Segments[0].TxnIndexSize != int64(len(seg.TxnIndex)) {
		t.Fatalf("manifest entry %+v, keys %v", m.Segments[0], keys)
	}
	rc, err := tb.srv.objects.Get(ctx, keys[3])
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if got, err := storage.DecodeTxnIndex(data); err != nil || len(got) != 1 || got[0] != aborted[0] {
		t.Fatalf("remote txnindex: %v %+v", err, got)
	}
	if err := r.dropFirst(ctx, m, 1, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.srv.objects.Head(ctx, keys[3]); !errors.Is(err, tiering.ErrNotFound) {
		t.Fatalf("txnindex left after its segment was deleted: %v", err)
	}
}

// TestTieredReadCommitted: transactions on a tiered topic. Segments go
// remote only below the last stable offset (an open transaction's records
// stay local), and read_committed consumers reading the remote log get its
// aborted transactions from the uploaded .txnindex objects: they see
// exactly the committed records, in order, while read_uncommitted ones see
// every record.
func TestTieredReadCommitted(t *testing.T) {
	tb := tieredBroker(t)
	tb.createTopic("txns", 1, tieredTopicConfigs())
	ctx := testContext(t)
	pad := string(bytes.Repeat([]byte{'x'}, 200))
	prod := tb.client(kgo.TransactionalID("tiered-tx"), kgo.DefaultProduceTopic("txns"),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	var committed, all []string
	txnRound := func(cl *kgo.Client, name string, commit bool) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var vals []string
		for j := range 30 {
			vals = append(vals, fmt.Sprintf("%s-r%02d-%s", name, j, pad))
		}
		for _, v := range vals {
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		all = append(all, vals...)
		if commit {
			committed = append(committed, vals...)
		}
	}
	for i := range 60 {
		txnRound(prod, fmt.Sprintf("t%02d", i), i%3 != 1)
	}
	// An open transaction, then more committed ones behind it.
	open := tb.client(kgo.TransactionalID("tiered-open"), kgo.DefaultProduceTopic("txns"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(ctx, &kgo.Record{Value: []byte("open-" + pad)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stable := len(committed)
	all = append(all, "open-"+pad)
	for i := 60; i < 70; i++ {
		txnRound(prod, fmt.Sprintf("t%02d", i), true)
	}

	p := tb.srv.topics.partition("txns", 0)
	waitFor(t, 20*time.Second, "remote segments and local deletion", func() bool {
		m := p.remote.manifest.Load()
		return m != nil && len(m.Segments) > 3 && p.Log().LogStartOffset() > 0
	})
	lso := p.LastStableOffset()
	if m := p.remote.manifest.Load(); m.NextOffset() > lso {
		t.Fatalf("remote log reaches %d, past the last stable offset %d", m.NextOffset(), lso)
	}
	remoteAborts := 0
	for _, s := range p.remote.manifest.Load().Segments {
		if s.TxnIndexSize > 0 {
			remoteAborts++
		}
	}
	if remoteAborts == 0 {
		t.Fatal("no remote segment carries a .txnindex")
	}

	read := func(committedOnly bool, n int) []string {
		t.Helper()
		iso := kgo.ReadUncommitted()
		if committedOnly {
			iso = kgo.ReadCommitted()
		}
		cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"txns": {0: kgo.NewOffset().AtStart()}}),
			kgo.FetchIsolationLevel(iso), kgo.FetchMaxPartitionBytes(64<<10))
		defer cl.Close()
		var got []string
		for len(got) < n {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %d of %d records", len(got), n)
			}
			fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		return got
	}
	if got := read(true, stable); !slices.Equal(got, committed[:stable]) {
		t.Fatalf("read_committed with a transaction open: %d records, want the %d committed before it", len(got), stable)
	}
	if got := read(false, len(all)); !slices.Equal(got, all) {
		t.Fatalf("read_uncommitted: %d records differ from the %d produced", len(got), len(all))
	}
	if err := open.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	if got := read(true, len(committed)); !slices.Equal(got, committed) {
		t.Fatalf("read_committed after the open transaction aborted: %d records, want %d", len(got), len(committed))
	}
}

// TestTieredUploadOnRoll: with the task interval and the retention check
// both far away, a tiered partition's sealed segments are uploaded as the
// log rolls and local retention follows each confirmed upload, so the
// local log stays near local.retention.bytes under a burst; every record
// is still read back (remote, then local).
func TestTieredUploadOnRoll(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) {
		c.RemoteLogTaskIntervalMs = 1 << 30
		c.LogRetentionCheckIntervalMs = 1 << 30
	})
	tb.createTopic("rolling", 1, tieredTopicConfigs())
	values := produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "rolling", 4000)
	p := tb.srv.topics.partition("rolling", 0)
	waitFor(t, 20*time.Second, "sealed segments uploaded and the local log trimmed", func() bool {
		m := p.remote.manifest.Load()
		// 4000 records of ~230 bytes: about 14 segments of 64 KiB; all
		// but the active one go remote, and local retention keeps
		// 128 KiB plus the active segment.
		return m != nil && len(m.Segments) >= 10 && p.Log().Size() <= 131072+2*65536
	})
	if got := consumeValues(t, tb, "rolling", len(values)); !slices.EqualFunc(got, values, bytes.Equal) {
		t.Fatalf("read back %d records, not the %d produced", len(got), len(values))
	}
}
