package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func twoLogDirs(t *testing.T) (string, string, func(*Config)) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	return a, b, func(c *Config) { c.DataDir = a + "," + b }
}

// logDirOf is the log dir DescribeLogDirs (kadm) reports the partition
// in, not counting a future copy, or "" when none does.
func logDirOf(t *testing.T, adm *kadm.Client, node int32, topic string, partition int32) (dir string, future bool) {
	t.Helper()
	all, err := adm.DescribeAllLogDirs(testContext(t), kadm.TopicsSet{topic: {partition: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for d, ld := range all[node] {
		if p, ok := ld.Topics[topic][partition]; ok {
			if p.IsFuture {
				future = true
				continue
			}
			dir = d
		}
	}
	return dir, future
}

// TestJBODPlacementMoveRestart: with two log dirs, new partitions spread
// over both (fewest partitions first) and DescribeLogDirs lists both with
// their volume; AlterReplicaLogDirs (kadm) moves a partition to the
// other dir while a producer keeps writing, and every acknowledged record
// is there afterwards, in order; a restart finds the partition in its
// new dir; errors for an unknown dir and an unknown partition.
func TestJBODPlacementMoveRestart(t *testing.T) {
	dirA, dirB, tune := twoLogDirs(t)
	tb := startTestBroker(t, tune, func(c *Config) { c.LogSegmentBytes = 64 << 10 })
	ctx := testContext(t)
	adm := tb.admin()
	node := tb.srv.cfg.NodeID
	if _, err := adm.CreateTopics(ctx, 4, 1, nil, "jbod"); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for p := int32(0); p < 4; p++ {
		d, _ := logDirOf(t, adm, node, "jbod", p)
		counts[d]++
		// A partition not written yet has no directory (it is made by
		// the first append), and none in the other dir either.
		for _, any := range []string{dirA, dirB} {
			if _, err := os.Stat(filepath.Join(any, "jbod-"+strconv.Itoa(int(p)))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("partition %d (reported in %s) before any write: directory in %s: %v", p, d, any, err)
			}
		}
	}
	if counts[dirA] != 2 || counts[dirB] != 2 {
		t.Fatalf("placement: %v", counts)
	}
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all[node]) != 2 {
		t.Fatalf("log dirs: %+v", all[node])
	}
	for d, ld := range all[node] {
		if ld.Err != nil || ld.TotalBytes <= 0 || ld.UsableBytes <= 0 {
			t.Fatalf("dir %s: %+v", d, ld)
		}
	}

	from, _ := logDirOf(t, adm, node, "jbod", 0)
	to := dirA
	if from == dirA {
		to = dirB
	}
	// A producer writes partition 0 all along the move.
	cl := tb.client(kgo.DefaultProduceTopic("jbod"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := randomValue(t, 1024)
	for i := range 500 { // several sealed segments before the move
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: append([]byte(fmt.Sprintf("%06d", i)), value...)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(from, "jbod-0", "partition.metadata")); err != nil {
		t.Fatalf("partition 0 written: not in its reported dir %s: %v", from, err)
	}
	var (
		mu    sync.Mutex
		acked = 500
		stop  = make(chan struct{})
		done  = make(chan error, 1)
	)
	go func() {
		for i := 500; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: append([]byte(fmt.Sprintf("%06d", i)), value...)}).FirstErr(); err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked = i + 1
			mu.Unlock()
		}
	}()
	var req kadm.AlterReplicaLogDirsReq
	req.Add(to, kadm.TopicsSet{"jbod": {0: {}}})
	resps, err := adm.AlterBrokerReplicaLogDirs(ctx, node, req)
	if err != nil {
		t.Fatal(err)
	}
	resps.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		if r.Err != nil {
			t.Fatalf("alter %s-%d: %v", r.Topic, r.Partition, r.Err)
		}
	})
	waitFor(t, 30*time.Second, "partition 0 moved", func() bool {
		d, future := logDirOf(t, adm, node, "jbod", 0)
		return d == to && !future
	})
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("producing during the move: %v", err)
	}
	if _, err := os.Stat(filepath.Join(from, "jbod-0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old copy still there: %v", err)
	}
	mu.Lock()
	n := acked
	mu.Unlock()
	check := func() {
		t.Helper()
		recs := consumeAll(t, tb, "jbod", int64(n))
		if len(recs) != n {
			t.Fatalf("consumed %d of %d", len(recs), n)
		}
		for i, r := range recs {
			if string(r.Value[:6]) != fmt.Sprintf("%06d", i) || r.Offset != int64(i) {
				t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value[:6])
			}
		}
	}
	check()

	tb.restart()
	adm = tb.admin()
	if d, future := logDirOf(t, adm, node, "jbod", 0); d != to || future {
		t.Fatalf("after restart: partition 0 in %q (future %v), want %s", d, future, to)
	}
	check()

	// Bad requests.
	var bad kadm.AlterReplicaLogDirsReq
	bad.Add("/no/such/dir", kadm.TopicsSet{"jbod": {1: {}}})
	bad.Add(to, kadm.TopicsSet{"nope": {0: {}}})
	resps, err = adm.AlterBrokerReplicaLogDirs(ctx, node, bad)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	resps.Each(func(r kadm.AlterReplicaLogDirsResponse) { got[r.Dir+" "+r.Topic] = r.Err })
	if !errors.Is(got["/no/such/dir jbod"], kerr.LogDirNotFound) || !errors.Is(got[to+" nope"], kerr.UnknownTopicOrPartition) {
		t.Fatalf("errors: %v", got)
	}
}

// TestJBODDirFailure: a log dir replaced by a regular file at run time
// goes offline: its partitions answer KAFKA_STORAGE_ERROR, DescribeLogDirs
// reports it with that error, and the other dir's partitions keep
// serving.
func TestJBODDirFailure(t *testing.T) {
	dirA, dirB, tune := twoLogDirs(t)
	tb := startTestBroker(t, tune)
	ctx := testContext(t)
	adm := tb.admin()
	node := tb.srv.cfg.NodeID
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "fail"); err != nil {
		t.Fatal(err)
	}
	inB := int32(-1)
	for p := int32(0); p < 2; p++ {
		if d, _ := logDirOf(t, adm, node, "fail", p); d == dirB {
			inB = p
		}
	}
	if inB < 0 {
		t.Fatal("no partition in the second dir")
	}
	inA := 1 - inB
	// The first dir holds the metadata log: fail the second.
	if err := os.Rename(dirB, dirB+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirB, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	produce := func(p int32) error {
		cl := tb.client(kgo.DefaultProduceTopic("fail"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(0), kgo.RequestRetries(0))
		defer cl.Close()
		return cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("v")}).FirstErr()
	}
	waitFor(t, 15*time.Second, "storage error on the failed dir's partition", func() bool {
		return errors.Is(produce(inB), kerr.KafkaStorageError)
	})
	if err := produce(inA); err != nil {
		t.Fatalf("partition in the healthy dir: %v", err)
	}
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(all[node][dirB].Err, kerr.KafkaStorageError) || all[node][dirA].Err != nil {
		t.Fatalf("describe: %+v", all[node])
	}
	if _, ok := all[node].Lookup(dirA, "fail", inA); !ok {
		t.Fatalf("healthy partition missing: %+v", all[node][dirA])
	}
}
