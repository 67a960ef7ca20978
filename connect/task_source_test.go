package connect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSourceStateCommittable: an offset is persisted only when its record
// and every earlier record of its source partition were acknowledged; a
// failed record (a cancellation included) blocks its partition.
func TestSourceStateCommittable(t *testing.T) {
	st := newSourceState(true)
	rec := func(part string, pos int) *SourceRecord {
		return &SourceRecord{Topic: "t", SourcePartition: map[string]any{"p": part}, SourceOffset: map[string]any{"pos": pos}}
	}
	a1, a2, a3 := st.track(rec("a", 1)), st.track(rec("a", 2)), st.track(rec("a", 3))
	b1, b2 := st.track(rec("b", 1)), st.track(rec("b", 2))
	if st.track(&SourceRecord{Topic: "t"}) != nil {
		t.Fatal("a record without a source offset was tracked")
	}
	st.ack(a1, nil)
	st.ack(a3, nil)
	st.ack(b1, context.Canceled)
	st.ack(b2, nil)
	got := st.takeCommittable()
	if len(got) != 1 || got[0].Partition["p"] != "a" || got[0].Offset["pos"] != 1 {
		t.Fatalf("committable %v, want only a@1", got)
	}
	if !errors.Is(st.firstErr(), context.Canceled) {
		t.Fatalf("first error %v, want the cancellation", st.firstErr())
	}
	st.ack(a2, nil)
	got = st.takeCommittable()
	if len(got) != 1 || got[0].Offset["pos"] != 3 {
		t.Fatalf("committable %v, want a@3", got)
	}
	if !st.hasPending() {
		t.Fatal("b's records are still pending")
	}
	if got := st.takeCommittable(); len(got) != 0 {
		t.Fatalf("b's offsets committable after a failed record: %v", got)
	}
}

// stopOnPollTask returns one batch and cancels the task's context as it
// does, as a pause, rebalance or restart would right after a poll.
type stopOnPollTask struct {
	n      int
	topic  string
	part   int32
	cancel context.CancelFunc
	polled bool
}

func (s *stopOnPollTask) Start(context.Context, Config, OffsetReader) error { return nil }
func (s *stopOnPollTask) Commit(context.Context) error                      { return nil }
func (s *stopOnPollTask) Stop() error                                       { return nil }
func (s *stopOnPollTask) Poll(ctx context.Context) ([]SourceRecord, error) {
	if s.polled {
		<-ctx.Done()
		return nil, nil
	}
	s.polled = true
	out := make([]SourceRecord, s.n)
	for i := range out {
		out[i] = SourceRecord{Topic: s.topic, SourcePartition: map[string]any{"src": "one"},
			SourceOffset: map[string]any{"pos": i}, ValueSchema: &Schema{Type: TypeString}, Value: fmt.Sprint(i)}
		if i%2 == 1 {
			out[i].Partition = &s.part
		}
	}
	s.cancel()
	return out, nil
}

// TestSourceStopKeepsOffsetsHonest: a task stopped right after a poll must
// not persist the offsets of records that were never written (they would be
// skipped after a restart), and SourceRecord.Partition is honoured.
func TestSourceStopKeepsOffsetsHonest(t *testing.T) {
	b := startBroker(t)
	w := startWorker(t, testWorkerProps(b.Addr))
	adm, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 3, 1, nil, "honest"); err != nil {
		t.Fatal(err)
	}
	const n = 400
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	task := &stopOnPollTask{n: n, topic: "honest", part: 2, cancel: stop}
	id := TaskID{"honest-src", 0}
	r := &runner{unit: unit{id.Connector, id.Task}}
	cfg := Config{"connector.class": "x", "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
	if err := w.runSourceTask(runCtx, r, id, cfg, Config{}, task); err != nil {
		t.Fatal(err)
	}
	if err := w.store.sync(ctx); err != nil {
		t.Fatal(err)
	}
	off, _ := offsetReader{w.store, id.Connector}.Offset(map[string]any{"src": "one"})
	if off == nil {
		t.Fatal("no offset persisted although the records were acknowledged")
	}
	pos := int(off["pos"].(int64))
	recs := readTopic(t, b.Addr, "honest", pos+1)
	seen := map[string]bool{}
	for _, kr := range recs {
		seen[string(kr.Value)] = true
		var i int
		fmt.Sscan(string(kr.Value), &i)
		if i%2 == 1 && kr.Partition != 2 {
			t.Fatalf("record %d with Partition=2 landed on partition %d", i, kr.Partition)
		}
	}
	for i := 0; i <= pos; i++ {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("offset pos=%d persisted but record %d was never written", pos, i)
		}
	}
	if pos != n-1 {
		t.Fatalf("persisted pos=%d, want %d (every record was produced)", pos, n-1)
	}
}

func TestSourcePartitioner(t *testing.T) {
	tp := sourcePartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")
	ref := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	explicit := &kgo.Record{Partition: 4, Key: []byte("k")}
	if got := tp.Partition(explicit, 6); got != 4 || !tp.RequiresConsistency(explicit) {
		t.Fatalf("explicit partition: %d", got)
	}
	keyed := &kgo.Record{Partition: -1, Key: []byte("some key")}
	if got, want := tp.Partition(keyed, 6), ref.Partition(keyed, 6); got != want {
		t.Fatalf("keyed record on %d, want %d (murmur2)", got, want)
	}
	if tp.RequiresConsistency(&kgo.Record{Partition: -1}) {
		t.Fatal("a keyless record need not be consistent")
	}
	if _, ok := tp.(kgo.TopicPartitionerOnNewBatch); !ok {
		t.Fatal("sticky batches lost: OnNewBatch not forwarded")
	}
}

// TestRetriableRetriedUntilStopped: Poll/Put/Flush RetriableErrors are
// retried regardless of errors.retry.timeout (default 0), and a batch is
// never split up or dead-lettered because of one.
func TestRetriableRetriedUntilStopped(t *testing.T) {
	p, _ := parseErrorPolicy(Config{"errors.tolerance": "all", "errors.retry.delay.max.ms": "20"})
	calls := 0
	err := p.retryRetriable(context.Background(), func() error {
		calls++
		if calls <= 5 {
			return &RetriableError{Err: errors.New("db down")}
		}
		return nil
	})
	if err != nil || calls != 6 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	calls = 0
	if err := p.retryRetriable(context.Background(), func() error { calls++; return errors.New("bad") }); err == nil || calls != 1 {
		t.Fatalf("non-retriable: err %v, %d calls", err, calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := p.retryRetriable(ctx, func() error { return &RetriableError{Err: errors.New("down")} }); err == nil {
		t.Fatal("retrying ended without error when the context ended")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("retrying outlived its context: %s", time.Since(start))
	}

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	w := &Worker{log: logger, taskLog: logger}
	sink := &flakySink{failures: 3}
	p.logErrors = true
	batch := []SinkRecord{{Topic: "t", Offset: 0}, {Topic: "t", Offset: 1}, {Topic: "t", Offset: 2}}
	origin := []*kgo.Record{{Topic: "t", Offset: 0}, {Topic: "t", Offset: 1}, {Topic: "t", Offset: 2}}
	if err := w.putBatch(context.Background(), sink, TaskID{"c", 0}, p, nil, batch, origin); err != nil {
		t.Fatal(err)
	}
	if sink.singles != 0 || sink.stored != 3 {
		t.Fatalf("batch split into %d single puts, %d records stored", sink.singles, sink.stored)
	}
	if strings.Contains(logs.String(), "tolerated record failure") {
		t.Fatalf("a retriable failure was treated as a tolerated (dead-lettered) one: %s", logs.String())
	}
}

type flakySink struct {
	failures int
	singles  int
	stored   int
}

func (f *flakySink) Start(context.Context, Config) error { return nil }
func (f *flakySink) Flush(context.Context) error         { return nil }
func (f *flakySink) Stop() error                         { return nil }
func (f *flakySink) Put(_ context.Context, recs []SinkRecord) error {
	if len(recs) == 1 {
		f.singles++
	}
	if f.failures > 0 {
		f.failures--
		return &RetriableError{Err: errors.New("connection refused")}
	}
	f.stored += len(recs)
	return nil
}

// TestStopRunnersAbandonsStuckTask: a unit that ignores its context is
// abandoned after task.shutdown.graceful.timeout.ms with a log line.
func TestStopRunnersAbandonsStuckTask(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	w := &Worker{cfg: WorkerConfig{TaskShutdownTimeout: 200 * time.Millisecond},
		log: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))}
	stuck := &runner{unit: unit{"c", 0}, cancel: func() {}, done: make(chan struct{})}
	defer close(stuck.done)
	okCtx, okCancel := context.WithCancel(context.Background())
	good := &runner{unit: unit{"c", 1}, cancel: okCancel, done: make(chan struct{})}
	go func() { <-okCtx.Done(); close(good.done) }()
	start := time.Now()
	w.stopRunners([]*runner{stuck, good})
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("stopRunners took %s", d)
	}
	select {
	case <-good.done:
	default:
		t.Fatal("the well-behaved unit was not stopped")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "abandoning") || !strings.Contains(logs.String(), "c-0") {
		t.Fatalf("no abandonment log line: %s", logs.String())
	}
	if strings.Count(logs.String(), "abandoning") != 1 {
		t.Fatalf("the stopped unit was reported abandoned: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// rejectingSink buffers in Put and, in Flush, fails the whole buffer when
// it holds a record with Offset bad; it forgets the buffer on failure.
type rejectingSink struct {
	bad     int64
	buffer  []SinkRecord
	written []int64
}

func (s *rejectingSink) Start(context.Context, Config) error { return nil }
func (s *rejectingSink) Stop() error                         { return nil }
func (s *rejectingSink) Put(_ context.Context, recs []SinkRecord) error {
	s.buffer = append(s.buffer, recs...)
	return nil
}
func (s *rejectingSink) Flush(context.Context) error {
	defer func() { s.buffer = nil }()
	for _, r := range s.buffer {
		if r.Offset == s.bad {
			return errors.New("duplicate key value violates unique constraint")
		}
	}
	for _, r := range s.buffer {
		s.written = append(s.written, r.Offset)
	}
	return nil
}

// TestFlushFailureToleratedRecordByRecord: under errors.tolerance=all a
// non-retriable Flush failure writes the batch one record at a time and
// drops only the bad record; under none it fails the task.
func TestFlushFailureToleratedRecordByRecord(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	w := &Worker{log: logger, taskLog: logger}
	batch := []SinkRecord{{Topic: "t", Offset: 0}, {Topic: "t", Offset: 1}, {Topic: "t", Offset: 2}}
	origin := []*kgo.Record{{Topic: "t", Offset: 0}, {Topic: "t", Offset: 1}, {Topic: "t", Offset: 2}}

	strict, _ := parseErrorPolicy(Config{})
	sink := &rejectingSink{bad: 1}
	_ = sink.Put(context.Background(), batch)
	if err := w.flushBatch(context.Background(), sink, TaskID{"c", 0}, strict, nil, batch, origin); err == nil {
		t.Fatal("tolerance=none: a failed flush did not fail the task")
	}

	tolerant, _ := parseErrorPolicy(Config{"errors.tolerance": "all", "errors.log.enable": "true"})
	sink = &rejectingSink{bad: 1}
	_ = sink.Put(context.Background(), batch)
	if err := w.flushBatch(context.Background(), sink, TaskID{"c", 0}, tolerant, nil, batch, origin); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sink.written) != "[0 2]" {
		t.Fatalf("written %v, want [0 2]", sink.written)
	}
	if !strings.Contains(logs.String(), "tolerated record failure") || !strings.Contains(logs.String(), "offset=1") {
		t.Fatalf("the bad record was not reported as tolerated: %s", logs.String())
	}
}
