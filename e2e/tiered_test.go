package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// Tiered storage end to end: a broker process with --object-store pointing
// at a real MinIO (internal/miniotest), checked from outside only: the
// bucket through minio-go, the data directory through the file system, the
// broker through Kafka clients and /metrics.

const (
	tieredSegmentBytes   = 1 << 20 // segment.bytes
	tieredLocalRetention = 2 << 20 // local.retention.bytes
	tieredValueSize      = 10 << 10
	// tieredLocalCeiling is the most the partition directory may hold once
	// uploads have caught up: the retained 2 MiB, the active segment and
	// a segment waiting for the next retention pass.
	tieredLocalCeiling = 5 << 20
	tieredWait         = 60 * time.Second
)

// tieredBrokerFlags point the broker at store and make the remote log
// tasks, retention and deletion run within a fraction of a second.
func tieredBrokerFlags(store string) []string {
	return []string{
		"--object-store", store,
		"--set", "remote.log.manager.task.interval.ms=200",
		"--set", "log.retention.check.interval.ms=200",
		"--set", "file.delete.delay.ms=0",
		"--set", "remote.log.manager.task.retry.backoff.ms=200",
		"--set", "remote.log.manager.task.retry.backoff.max.ms=1000",
	}
}

// startTieredBroker starts a broker with a fresh data directory whose
// object store is prefix in the MinIO server's bucket.
func startTieredBroker(t *testing.T, store *miniotest.Server, prefix string) *server {
	t.Helper()
	return startServerEnv(t, store.AWSEnv(), tieredBrokerFlags(store.StoreURL(prefix))...)
}

func createTieredTopic(t *testing.T, addr, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	configs := map[string]*string{}
	for k, v := range map[string]string{
		"segment.bytes":         strconv.Itoa(tieredSegmentBytes),
		"local.retention.bytes": strconv.Itoa(tieredLocalRetention),
		"remote.storage.enable": "true",
		"retention.ms":          "-1",
	} {
		configs[k] = &v
	}
	resp, err := kadm.NewClient(newClient(t, addr)).CreateTopic(ctx, 1, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("CreateTopics %s: %v (%s)", topic, err, resp.ErrMessage)
	}
}

// tieredKey and tieredValue are record i: a 10 KiB value that starts with
// the index and continues with bytes from a generator seeded by it, so no
// two records are alike and compression gains nothing.
func tieredKey(i int) []byte { return fmt.Appendf(nil, "rec-%08d", i) }

func tieredValue(i int) []byte {
	value := make([]byte, tieredValueSize)
	header := fmt.Appendf(nil, "%08d|", i)
	copy(value, header)
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i))
	rand.NewChaCha8(seed).Read(value[len(header):])
	return value
}

// tieredProducer sends uncompressed batches of at most 256 KiB with
// acks=all, so segments roll every few batches.
func tieredProducer(t *testing.T, addr, topic string) *kgo.Client {
	return newClient(t, addr,
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(256<<10),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
}

// produceRange produces records [from, to) and checks that record i got
// offset i.
func produceRange(t *testing.T, cl *kgo.Client, from, to int) {
	t.Helper()
	const chunk = 200
	for start := from; start < to; start += chunk {
		end := min(start+chunk, to)
		records := make([]*kgo.Record, 0, end-start)
		for i := start; i < end; i++ {
			records = append(records, &kgo.Record{Key: tieredKey(i), Value: tieredValue(i)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		results := cl.ProduceSync(ctx, records...)
		cancel()
		if err := results.FirstErr(); err != nil {
			t.Fatalf("produce records [%d, %d): %v", start, end, err)
		}
		for i, r := range records {
			if r.Offset != int64(start+i) {
				t.Fatalf("record %d was written at offset %d", start+i, r.Offset)
			}
		}
	}
}

// consumeRange reads partition 0 from offset from with franz-go and checks
// that it holds exactly records [from, to), each at its own offset.
func consumeRange(t *testing.T, addr, topic string, from, to int) {
	t.Helper()
	cl := newClient(t, addr,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(int64(from))}}),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), tieredWait)
	defer cancel()
	next := from
	for next < to {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume %s from %d: got up to offset %d of %d within %s", topic, from, next, to, tieredWait)
		}
		for _, err := range fetches.Errors() {
			t.Fatalf("consume %s from %d (next %d): %v", topic, from, next, err.Err)
		}
		for _, r := range fetches.Records() {
			if r.Offset != int64(next) {
				t.Fatalf("consume %s: got offset %d, want %d", topic, r.Offset, next)
			}
			if next >= to {
				t.Fatalf("consume %s: record at offset %d, past the expected end %d", topic, r.Offset, to)
			}
			if !bytes.Equal(r.Key, tieredKey(next)) || !bytes.Equal(r.Value, tieredValue(next)) {
				t.Fatalf("consume %s: record at offset %d differs from what was produced (key %q, %d value bytes starting %q)",
					topic, r.Offset, r.Key, len(r.Value), clip(string(r.Value[:min(len(r.Value), 9)]), 9))
			}
			next++
		}
	}
}

// --- the bucket, seen through minio-go ---

// remoteManifest is the part of tiering.Manifest (tiering/manifest.go)
// these tests read; e2e does not import tiering.
type remoteManifest struct {
	Topic          string          `json:"topic"`
	TopicID        string          `json:"topic_id"`
	Partition      int32           `json:"partition"`
	LogStartOffset int64           `json:"log_start_offset"`
	Segments       []remoteSegment `json:"segments"`
}

type remoteSegment struct {
	BaseOffset   int64  `json:"base_offset"`
	NextOffset   int64  `json:"next_offset"`
	Size         int64  `json:"size"`
	CRC32C       uint32 `json:"crc32c"`
	UploadID     string `json:"upload_id"`
	UploadedAtMs int64  `json:"uploaded_at_ms"`
}

func (m *remoteManifest) nextOffset() int64 {
	if len(m.Segments) == 0 {
		return m.LogStartOffset
	}
	return m.Segments[len(m.Segments)-1].NextOffset
}

// bucketView is one listing of a topic's objects under a store prefix.
type bucketView struct {
	store    *miniotest.Server
	prefix   string           // the store's key prefix, without '/'
	topicDir string           // v1/<topic>-<topic id>, relative to prefix
	sizes    map[string]int64 // every object under topicDir, key relative to prefix
	manifest *remoteManifest  // partition 0's, nil if none yet
}

// viewBucket reads partition 0's manifest under prefix, then lists
// v1/<topic>-*/. In that order, because the broker writes a manifest after
// the objects it names: a listing taken after the manifest was read holds
// them all, whatever the broker uploads in between. Errors are returned,
// not fatal, so callers can poll.
func viewBucket(store *miniotest.Server, prefix, topic string) (*bucketView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	view := &bucketView{store: store, prefix: prefix}
	manifestKeys, err := listObjects(ctx, store, prefix, topic, "/0/manifest")
	if err != nil {
		return nil, err
	}
	switch len(manifestKeys) {
	case 0:
	case 1:
		for key := range manifestKeys {
			view.topicDir = strings.TrimSuffix(key, "/0/manifest")
			data, err := readObject(ctx, store, prefix+"/"+key)
			if err != nil {
				return nil, err
			}
			view.manifest = new(remoteManifest)
			if err := json.Unmarshal(data, view.manifest); err != nil {
				return nil, fmt.Errorf("manifest %s: %w\n%s", key, err, clip(string(data), 2000))
			}
		}
	default:
		return nil, fmt.Errorf("more than one manifest for partition 0 of %s: %v", topic, manifestKeys)
	}
	view.sizes, err = listObjects(ctx, store, prefix, topic, "")
	return view, err
}

// listObjects returns the sizes of the objects under prefix/v1/<topic>-
// whose keys end in suffix, keyed relative to prefix.
func listObjects(ctx context.Context, store *miniotest.Server, prefix, topic, suffix string) (map[string]int64, error) {
	sizes := map[string]int64{}
	for obj := range store.Client().ListObjects(ctx, miniotest.Bucket, minio.ListObjectsOptions{Prefix: prefix + "/v1/" + topic + "-", Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("listing %s: %w", prefix, obj.Err)
		}
		if key := strings.TrimPrefix(obj.Key, prefix+"/"); strings.HasSuffix(key, suffix) {
			sizes[key] = obj.Size
		}
	}
	return sizes, nil
}

func readObject(ctx context.Context, store *miniotest.Server, key string) ([]byte, error) {
	obj, err := store.Client().GetObject(ctx, miniotest.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return data, nil
}

func (v *bucketView) segmentKey(s remoteSegment) string {
	return fmt.Sprintf("%s/0/%020d-%s.log", v.topicDir, s.BaseOffset, s.UploadID)
}

// logObjects counts the .log objects, listed in the manifest or not.
func (v *bucketView) logObjects() int {
	n := 0
	for key := range v.sizes {
		if strings.HasSuffix(key, ".log") {
			n++
		}
	}
	return n
}

// manifestProblem describes the first manifest entry whose .log object is
// missing or of another size, or a manifest that does not cover [0, end)
// without gaps; "" if there is none.
func (v *bucketView) manifestProblem() string {
	if v.manifest == nil {
		return "no manifest yet"
	}
	expectBase := int64(0)
	for _, s := range v.manifest.Segments {
		if s.BaseOffset != expectBase || s.NextOffset <= s.BaseOffset {
			return fmt.Sprintf("segment [%d, %d) does not continue at %d", s.BaseOffset, s.NextOffset, expectBase)
		}
		expectBase = s.NextOffset
		size, ok := v.sizes[v.segmentKey(s)]
		if !ok {
			return fmt.Sprintf("manifest lists %s, which is not in the bucket", v.segmentKey(s))
		}
		if size != s.Size {
			return fmt.Sprintf("manifest says %s has %d bytes, the bucket %d", v.segmentKey(s), s.Size, size)
		}
	}
	return ""
}

// checkManifestObjects fails the test unless every manifest entry's .log
// object is in the bucket with the manifest's size and CRC-32C.
func checkManifestObjects(t *testing.T, store *miniotest.Server, prefix, topic string) *bucketView {
	t.Helper()
	view, err := viewBucket(store, prefix, topic)
	if err != nil {
		t.Fatal(err)
	}
	if problem := view.manifestProblem(); problem != "" {
		t.Fatalf("bucket %s: %s", prefix, problem)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	ctx, cancel := context.WithTimeout(context.Background(), tieredWait)
	defer cancel()
	for _, s := range view.manifest.Segments {
		data, err := readObject(ctx, store, prefix+"/"+view.segmentKey(s))
		if err != nil {
			t.Fatal(err)
		}
		if got := crc32.Checksum(data, castagnoli); got != s.CRC32C || int64(len(data)) != s.Size {
			t.Fatalf("%s: %d bytes with CRC-32C %08x, manifest says %d bytes, %08x", view.segmentKey(s), len(data), got, s.Size, s.CRC32C)
		}
	}
	return view
}

// --- the broker, seen from outside ---

// localLogBytes is the size of the partition's local .log files.
func localLogBytes(t *testing.T, srv *server, topic string) int64 {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(srv.dataDir, topic+"-0", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, path := range paths {
		info, err := os.Stat(path)
		if os.IsNotExist(err) {
			continue // deleted since the glob
		}
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
	}
	return total
}

// partitionMetric reads name{partition="0",topic=topic} from /metrics; false
// if the broker does not export it (yet).
func partitionMetric(t *testing.T, srv *server, name, topic string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(srv.metrics(t), "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		labels, value, ok := strings.Cut(line[len(name)+1:], "} ")
		if !ok {
			continue
		}
		if !strings.Contains(labels, `topic="`+topic+`"`) || !strings.Contains(labels, `partition="0"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		return v, true
	}
	return 0, false
}

// listOffset asks the broker for partition 0's offset at timestamp: -1
// latest, -2 earliest, -4 earliest local.
func listOffset(t *testing.T, cl *kgo.Client, topic string, timestamp int64) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = 0
	rp.CurrentLeaderEpoch = -1
	rp.Timestamp = timestamp
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ListOffsets %s timestamp %d: %v", topic, timestamp, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("ListOffsets %s: unexpected response %+v", topic, resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("ListOffsets %s timestamp %d: error code %d", topic, timestamp, p.ErrorCode)
	}
	return p.Offset
}

// waitUploadedAndTrimmed waits until the broker reports no upload lag and
// no failure, the manifest covers [0, atLeast) with every object in place,
// and the local log has shrunk to tieredLocalCeiling.
func waitUploadedAndTrimmed(t *testing.T, srv *server, store *miniotest.Server, prefix, topic string, atLeast int64) {
	t.Helper()
	waitFor(t, tieredWait, "uploads caught up and local log trimmed", func() (bool, string) {
		lag, lagOK := partitionMetric(t, srv, "strata_remote_upload_lag_segments", topic)
		failing, _ := partitionMetric(t, srv, "strata_remote_upload_failing", topic)
		local := localLogBytes(t, srv, topic)
		view, err := viewBucket(store, prefix, topic)
		if err != nil {
			return false, err.Error()
		}
		status := fmt.Sprintf("lag %v segments (exported %v), failing %v, local %d bytes, %d .log objects", lag, lagOK, failing, local, view.logObjects())
		if problem := view.manifestProblem(); problem != "" {
			return false, status + "; " + problem
		}
		status += fmt.Sprintf(", manifest [0, %d) in %d segments", view.manifest.nextOffset(), len(view.manifest.Segments))
		return lagOK && lag == 0 && failing == 0 && local <= tieredLocalCeiling && view.manifest.nextOffset() >= atLeast, status
	})
}

// mentionsTopicID reports whether out names the topic id given as 32 hex
// digits, either in hex (as the manifest and --topic-id spell it) or in the
// base64 form Kafka tools print.
func mentionsTopicID(out, hexID string) bool {
	raw, err := hex.DecodeString(hexID)
	if err != nil {
		return false
	}
	return strings.Contains(out, hexID) ||
		strings.Contains(out, base64.StdEncoding.EncodeToString(raw)) ||
		strings.Contains(out, base64.RawURLEncoding.EncodeToString(raw))
}

// TestTieredE2E writes 40 MiB to a tiered topic whose local log keeps only
// 2 MiB, and reads all of it back through the remote path with franz-go and
// kcat, before and after a restart (which starts with a cold chunk cache).
func TestTieredE2E(t *testing.T) {
	t.Parallel()
	store := miniotest.New(t)
	const prefix, topic, count = "tiered-e2e", "tiered", 4096 // 40 MiB
	srv := startTieredBroker(t, store, prefix)
	createTieredTopic(t, srv.addr, topic)

	start := time.Now()
	produceRange(t, tieredProducer(t, srv.addr, topic), 0, count)
	t.Logf("produced %d records (%d MiB) in %s", count, count*tieredValueSize>>20, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	waitFor(t, tieredWait, "sealed segments in the bucket, local log trimmed", func() (bool, string) {
		view, err := viewBucket(store, prefix, topic)
		if err != nil {
			return false, err.Error()
		}
		local := localLogBytes(t, srv, topic)
		status := fmt.Sprintf("%d .log objects, local %d bytes", view.logObjects(), local)
		if problem := view.manifestProblem(); problem != "" {
			return false, status + "; " + problem
		}
		return view.logObjects() >= 35 && len(view.manifest.Segments) >= 35 && local <= tieredLocalCeiling, status
	})
	// The local start is read before the remote end, which only grows.
	cl := newClient(t, srv.addr)
	localStart := listOffset(t, cl, topic, -4)
	view := checkManifestObjects(t, store, prefix, topic)
	t.Logf("%d segments up to offset %d uploaded and checked in %s", len(view.manifest.Segments), view.manifest.nextOffset(), time.Since(start).Round(time.Millisecond))
	if localStart <= 0 || localStart > view.manifest.nextOffset() {
		t.Errorf("earliest local offset %d, want in (0, %d]: above 0 since most of the log is remote only, at most the remote end", localStart, view.manifest.nextOffset())
	}
	if earliest := listOffset(t, cl, topic, -2); earliest != 0 {
		t.Errorf("earliest offset %d, want 0 (retention.ms=-1)", earliest)
	}

	start = time.Now()
	consumeRange(t, srv.addr, topic, 0, count)
	t.Logf("franz-go read %d records from 0 in %s", count, time.Since(start).Round(time.Millisecond))

	t.Run("kcat", func(t *testing.T) {
		kcat := requireTool(t, "kcat", kcatInstall)
		res := mustRun(t, tieredWait, "", kcat, "-C", "-b", srv.addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o %S %k\n")
		var want strings.Builder
		for i := range count {
			fmt.Fprintf(&want, "%d %d %s\n", i, tieredValueSize, tieredKey(i))
		}
		if res.stdout != want.String() {
			t.Fatalf("kcat -C %s: %s\n(stderr: %s)", topic, firstLineDiff(res.stdout, want.String()), clip(res.stderr, 2000))
		}
	})

	srv.stop()
	srv.restart()
	start = time.Now()
	consumeRange(t, srv.addr, topic, 0, count)
	t.Logf("after restart (cold cache) franz-go read %d records from 0 in %s", count, time.Since(start).Round(time.Millisecond))
}

// TestTieredMinIOOutage kills the object store while producers keep
// writing: produces still succeed, the broker reports failing uploads and
// keeps every segment that is not remote yet; once the store is back the
// backlog uploads, the local log shrinks and nothing was lost.
func TestTieredMinIOOutage(t *testing.T) {
	t.Parallel()
	store := miniotest.New(t)
	const prefix, topic = "tiered-outage", "outage"
	const beforeOutage, duringOutage, afterFailing = 400, 1100, 1200 // records of 10 KiB
	srv := startTieredBroker(t, store, prefix)
	createTieredTopic(t, srv.addr, topic)
	producer := tieredProducer(t, srv.addr, topic)
	admin := newClient(t, srv.addr)

	produceRange(t, producer, 0, beforeOutage)
	var remoteBeforeKill int64
	waitFor(t, tieredWait, "first segments uploaded", func() (bool, string) {
		view, err := viewBucket(store, prefix, topic)
		if err != nil {
			return false, err.Error()
		}
		if problem := view.manifestProblem(); problem != "" {
			return false, problem
		}
		remoteBeforeKill = view.manifest.nextOffset()
		return len(view.manifest.Segments) >= 2, fmt.Sprintf("%d segments in the manifest", len(view.manifest.Segments))
	})

	if err := store.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("MinIO killed; the manifest reached offset %d before", remoteBeforeKill)
	var localStarts []int64 // earliest-local offsets seen while the store was down
	sampleLocalStart := func() { localStarts = append(localStarts, listOffset(t, admin, topic, -4)) }
	for from := beforeOutage; from < duringOutage; from += 100 {
		produceRange(t, producer, from, from+100)
		sampleLocalStart()
	}
	waitFor(t, tieredWait, "uploads reported failing, sealed segments piling up locally", func() (bool, string) {
		failing, _ := partitionMetric(t, srv, "strata_remote_upload_failing", topic)
		lag, _ := partitionMetric(t, srv, "strata_remote_upload_lag_segments", topic)
		sampleLocalStart()
		return failing == 1 && lag >= 5, fmt.Sprintf("failing %v, lag %v segments", failing, lag)
	})
	produceRange(t, producer, duringOutage, afterFailing)
	sampleLocalStart()
	local := localLogBytes(t, srv, topic)
	if local < 6<<20 {
		t.Errorf("local log holds %d bytes while the store is down, want at least 6 MiB (nothing deleted that is not remote)", local)
	}
	t.Logf("store down: %d records produced, local log %d bytes, earliest-local offsets seen %v", afterFailing-beforeOutage, local, localStarts)
	// What is local stays readable without the store.
	consumeRange(t, srv.addr, topic, int(localStarts[len(localStarts)-1]), afterFailing)

	restartedAt := time.Now()
	if err := store.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUploadedAndTrimmed(t, srv, store, prefix, topic, afterFailing-200)
	t.Logf("backlog uploaded %s after MinIO came back", time.Since(restartedAt).Round(time.Millisecond))

	// The remote end when MinIO died: what was uploaded before the restart
	// (at least what the last manifest read before the kill said).
	view := checkManifestObjects(t, store, prefix, topic)
	t.Logf("manifest lists %d segments; the bucket holds %d .log objects (the rest are garbage of failed uploads)", len(view.manifest.Segments), view.logObjects())
	remoteAtKill := remoteBeforeKill
	for _, s := range view.manifest.Segments {
		if s.UploadedAtMs < restartedAt.UnixMilli() {
			remoteAtKill = max(remoteAtKill, s.NextOffset)
		}
	}
	for _, localStart := range localStarts {
		if localStart > remoteAtKill {
			t.Errorf("while the store was down the local log started at %d, past the remote end %d: records [%d, %d) were only in a deleted local segment (samples %v)",
				localStart, remoteAtKill, remoteAtKill, localStart, localStarts)
			break
		}
	}
	consumeRange(t, srv.addr, topic, 0, afterFailing)
}

// TestTieredRecoverFromBucket loses the broker's data directory and
// rebuilds the topic from the bucket with `strata topic recover`: every
// uploaded record comes back at its offset and new records follow them.
func TestTieredRecoverFromBucket(t *testing.T) {
	t.Parallel()
	store := miniotest.New(t)
	const prefix, topic, count, more = "tiered-recover", "recovered", 600, 50
	srv := startTieredBroker(t, store, prefix)
	createTieredTopic(t, srv.addr, topic)
	produceRange(t, tieredProducer(t, srv.addr, topic), 0, count)
	waitUploadedAndTrimmed(t, srv, store, prefix, topic, 400)
	srv.stop()

	view := checkManifestObjects(t, store, prefix, topic)
	remoteEnd := int(view.manifest.nextOffset())
	t.Logf("bucket holds [0, %d) of [0, %d) in %d segments of topic id %s", remoteEnd, count, len(view.manifest.Segments), view.manifest.TopicID)

	fresh := startTieredBroker(t, store, prefix)
	res := mustRun(t, clientTimeout, "", strataBin, "topic", "recover", topic, "--from-bucket", "--brokers", fresh.addr)
	if !strings.Contains(res.stdout, "recovered topic "+topic+" ") || !mentionsTopicID(res.stdout, view.manifest.TopicID) {
		t.Errorf("strata topic recover printed %q, want the topic and its id %s", res.stdout, view.manifest.TopicID)
	}
	cl := newClient(t, fresh.addr)
	if end := listOffset(t, cl, topic, -1); end != int64(remoteEnd) {
		t.Errorf("recovered topic ends at %d, want %d (the manifest's end)", end, remoteEnd)
	}
	consumeRange(t, fresh.addr, topic, 0, remoteEnd)

	produceRange(t, tieredProducer(t, fresh.addr, topic), remoteEnd, remoteEnd+more)
	consumeRange(t, fresh.addr, topic, 0, remoteEnd+more)
}
