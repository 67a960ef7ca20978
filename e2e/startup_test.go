package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restartBound is how long a node with 10,000 partitions may take, from
// the start of the process after kill -9, until Metadata lists every
// partition with a leader and a Fetch of every partition returns its
// record. Issue 18's target is 5 s; on the shared 2-core VM the restart
// measured 2.6-5.7 s (51 s before the parallel open, the deferred
// checkpoint and the batched elections), so the bound keeps a margin for
// a loaded machine and still fails the old behaviour by a factor of three.
const restartBound = 15 * time.Second

// TestRestartManyPartitionsAfterKill creates 10,000 partitions (100 topics
// x 100, in one CreateTopics request; STRATA_E2E_STARTUP_TOPICS and STRATA_E2E_STARTUP_PARTITIONS
// change the shape, e.g. 1000 x 100 for a 100,000-partition measurement),
// writes one record to each, kills the node with SIGKILL and restarts it:
// Metadata must answer for every partition and every partition must serve
// its record within restartBound (checked for up to 10,000 partitions).
//
// STRATA_E2E_STARTUP_SAMPLE=n writes to and reads only n random
// partitions: a partition that was written to or read holds its active
// segment's file open, so serving all 100,000 at once needs an open-file
// limit above 100,000, while starting them needs none (segment files
// open lazily).
func TestRestartManyPartitionsAfterKill(t *testing.T) {
	topics := envInt(t, "STRATA_E2E_STARTUP_TOPICS", 100)
	perTopic := envInt(t, "STRATA_E2E_STARTUP_PARTITIONS", 100)
	total := topics * perTopic
	sampleSize := envInt(t, "STRATA_E2E_STARTUP_SAMPLE", total)
	srv := startServer(t)

	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("startup-%04d", i)
	}
	start := time.Now()
	// Every partition in one CreateTopics request (one raft entry).
	adm := kadm.NewClient(newClient(t, srv.addr, kgo.RequestTimeoutOverhead(3*time.Minute)))
	adm.SetTimeoutMillis(int32((3 * time.Minute).Milliseconds()))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	resps, err := adm.CreateTopics(ctx, int32(perTopic), 1, nil, names...)
	cancel()
	if err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			t.Fatalf("CreateTopics %s: %v (%s)", r.Topic, r.Err, r.ErrMessage)
		}
	}
	t.Logf("created %d partitions in %s", total, time.Since(start).Round(time.Millisecond))

	sample := samplePartitions(names, perTopic, sampleSize)
	start = time.Now()
	producer := newClient(t, srv.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxBufferedRecords(total+1), kgo.ProducerLinger(5*time.Millisecond))
	records := make([]*kgo.Record, 0, sampleSize)
	for name, partitions := range sample {
		for p := range partitions {
			records = append(records, &kgo.Record{Topic: name, Partition: p, Value: []byte(name + "/" + strconv.Itoa(int(p)))})
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	err = producer.ProduceSync(ctx, records...).FirstErr()
	cancel()
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	t.Logf("produced one record to each of %d partitions in %s", len(records), time.Since(start).Round(time.Millisecond))

	srv.kill()
	start = time.Now()
	srv.launch()
	// The poll runs past restartBound so that a slow start is measured
	// (and reported) rather than only failed.
	deadline := start.Add(max(12*restartBound, 2*time.Minute))
	client := newClient(t, srv.addr, kgo.RetryTimeout(time.Second))
	ids := waitAllLeaders(t, client, srv, names, perTopic, deadline)
	metadataAt := time.Since(start)
	waitAllReadable(t, client, srv, sample, ids, deadline)
	readableAt := time.Since(start)
	t.Logf("restart after kill -9 with %d partitions: Metadata complete after %s, %d partitions read after %s",
		total, metadataAt.Round(time.Millisecond), len(records), readableAt.Round(time.Millisecond))
	if total <= 10_000 && readableAt > restartBound {
		t.Errorf("restart with %d partitions took %s until every partition served, want at most %s", total, readableAt, restartBound)
	}

	// One summary line for the opened logs, not one line per partition.
	logData, err := os.ReadFile(filepath.Join(srv.logDir, fmt.Sprintf("server-%d.log", srv.starts)))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logData), "storage: opened log"); n > 10 {
		t.Errorf("the restart logged %d per-partition \"storage: opened log\" lines, want a summary", n)
	}
	if want := fmt.Sprintf("partitions=%d", total); !strings.Contains(string(logData), "partition logs opened") || !strings.Contains(string(logData), want) {
		t.Errorf("the restart log has no \"partition logs opened\" summary with %s; log:\n%s", want, clip(string(logData), 4000))
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// waitAllLeaders polls Metadata until every partition of names is listed
// with a leader and no error; it returns the topic IDs.
func waitAllLeaders(t *testing.T, client *kgo.Client, srv *server, names []string, perTopic int, deadline time.Time) map[string][16]byte {
	t.Helper()
	var last string
	for time.Now().Before(deadline) {
		if !srv.running() {
			t.Fatalf("server exited during restart; log:\n%s", srv.logTail())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req := kmsg.NewPtrMetadataRequest()
		for _, name := range names {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, client)
		cancel()
		if err != nil {
			last = err.Error()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		ids := map[string][16]byte{}
		complete := len(resp.Topics) == len(names)
		for _, rt := range resp.Topics {
			ready := 0
			for _, p := range rt.Partitions {
				if p.ErrorCode == 0 && p.Leader >= 0 {
					ready++
				}
			}
			if rt.ErrorCode != 0 || ready != perTopic {
				complete = false
				last = fmt.Sprintf("topic %s: error %d, %d of %d partitions with a leader", *rt.Topic, rt.ErrorCode, ready, perTopic)
				break
			}
			ids[*rt.Topic] = rt.TopicID
		}
		if complete {
			return ids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("Metadata incomplete at the deadline: %s", last)
	return nil
}

// samplePartitions picks n random partitions of names (all of them when n
// covers every partition), by topic.
func samplePartitions(names []string, perTopic, n int) map[string]map[int32]bool {
	all := make([][2]int, 0, len(names)*perTopic)
	for i := range names {
		for p := range perTopic {
			all = append(all, [2]int{i, p})
		}
	}
	if n < len(all) {
		rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:n]
	}
	sample := map[string]map[int32]bool{}
	for _, tp := range all {
		name := names[tp[0]]
		if sample[name] == nil {
			sample[name] = map[int32]bool{}
		}
		sample[name][int32(tp[1])] = true
	}
	return sample
}

// waitAllReadable fetches every partition of pending (which it empties)
// from offset 0 until each has returned its one record.
func waitAllReadable(t *testing.T, client *kgo.Client, srv *server, pending map[string]map[int32]bool, ids map[string][16]byte, deadline time.Time) {
	t.Helper()
	names := make([]string, 0, len(pending))
	left := 0
	for name, partitions := range pending {
		names = append(names, name)
		left += len(partitions)
	}
	var last string
	for left > 0 && time.Now().Before(deadline) {
		if !srv.running() {
			t.Fatalf("server exited during restart; log:\n%s", srv.logTail())
		}
		const partitionsPerFetch = 2000
		req, n := kmsg.NewPtrFetchRequest(), 0
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 256<<20
		for _, name := range names {
			if len(pending[name]) == 0 || n >= partitionsPerFetch {
				continue
			}
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = name, ids[name]
			for p := range pending[name] {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, 0, 64<<10
				rt.Partitions = append(rt.Partitions, rp)
				n++
			}
			req.Topics = append(req.Topics, rt)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := req.RequestWith(ctx, client)
		cancel()
		if err != nil {
			last = err.Error()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		byID := map[[16]byte]string{}
		for name, id := range ids {
			byID[id] = name
		}
		progressed := false
		for _, rt := range resp.Topics {
			name := rt.Topic
			if name == "" {
				name = byID[rt.TopicID]
			}
			for _, p := range rt.Partitions {
				if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 1 {
					last = fmt.Sprintf("%s-%d: error %d, %d bytes, high watermark %d", name, p.Partition, p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
					continue
				}
				if pending[name][p.Partition] {
					delete(pending[name], p.Partition)
					left--
					progressed = true
				}
			}
		}
		if !progressed {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if left > 0 {
		t.Fatalf("%d partitions not readable at the deadline: %s", left, last)
	}
}
