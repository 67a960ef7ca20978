package streams_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// windowedTopology counts and sums each key's Int64 values per one-second
// tumbling window with two seconds of grace, writing every update to
// countOut and sumOut.
func windowedTopology(in, countOut, sumOut string) *streams.Topology {
	top := streams.NewTopology()
	s := streams.From(top, streams.String, streams.Int64, []string{in})
	wg := streams.WindowedBy(s.GroupByKey(streams.String, streams.Int64),
		streams.TumblingWindows(time.Second).Grace(2*time.Second))
	wk := streams.WindowedSerde(streams.String)
	wg.Count(streams.Named("wcount")).ToStream().To(countOut, wk, streams.Int64)
	streams.AggregateWindows(wg, func() int64 { return 0 }, func(_ string, v, sum int64) (int64, error) { return sum + v, nil },
		streams.Int64, streams.Named("wsum")).ToStream().To(sumOut, wk, streams.Int64)
	return top
}

// windowInput describes the records of windowed tests: record i has key
// k<i*7919 mod keys>, value i mod 100 and a timestamp 1 ms after record
// i-1's, minus up to 1.5 s of disorder (within the 2 s grace), except every
// lateEvery-th record, which is a minute late and must be dropped.
type windowInput struct {
	n, keys, lateEvery int
}

var windowBase = time.UnixMilli(1_700_000_000_000)

func (w windowInput) record(topic string, i int) *kgo.Record {
	ts := windowBase.Add(time.Duration(i)*time.Millisecond - time.Duration(i*31337%1500)*time.Millisecond)
	if w.late(i) {
		ts = windowBase.Add(time.Duration(i)*time.Millisecond - time.Minute)
	}
	v, _ := streams.Int64.Encode(int64(i % 100))
	return &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i*7919%w.keys), Value: v, Timestamp: ts}
}

func (w windowInput) late(i int) bool { return w.lateEvery > 0 && i > 0 && i%w.lateEvery == 0 }

// expected computes the final count and sum of every window in memory,
// keyed like the output (windowed key bytes).
func (w windowInput) expected() (counts, sums map[string]int64) {
	counts, sums = map[string]int64{}, map[string]int64{}
	wk := streams.WindowedSerde(streams.String)
	for i := 0; i < w.n; i++ {
		if w.late(i) {
			continue
		}
		r := w.record("", i)
		start := r.Timestamp.UnixMilli() / 1000 * 1000
		k, _ := wk.Encode(streams.Windowed[string]{Key: string(r.Key), Start: time.UnixMilli(start), End: time.UnixMilli(start + 1000)})
		counts[string(k)]++
		sums[string(k)] += int64(i % 100)
	}
	return counts, sums
}

func (w windowInput) produce(t testing.TB, addr, topic string, from, to int) {
	t.Helper()
	if err := produceEach(addr, from, to, func(i int) *kgo.Record { return w.record(topic, i) }); err != nil {
		t.Fatal(err)
	}
}

// windowResults reads committed updates of a windowed count and sum.
type windowResults struct {
	cl     *kgo.Client
	counts map[string]int64
	sums   map[string]int64
	// outOfSequence counts count updates that were not the window's
	// previous count + 1 (a record counted twice, or an update lost).
	outOfSequence int
	countTopic    string
}

func newWindowResults(t *testing.T, addr, countTopic, sumTopic string) *windowResults {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(countTopic, sumTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &windowResults{cl: cl, counts: map[string]int64{}, sums: map[string]int64{}, countTopic: countTopic}
}

// until polls until the results equal the expected ones or the timeout.
func (w *windowResults) until(t *testing.T, counts, sums map[string]int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !(equalMaps(w.counts, counts) && equalMaps(w.sums, sums)) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d/%d windows counted, %d/%d summed; %d differ",
				timeout, len(w.counts), len(counts), len(w.sums), len(sums), diffCount(w.counts, counts)+diffCount(w.sums, sums))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		w.cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			v := int64(binary.BigEndian.Uint64(r.Value))
			if r.Topic == w.countTopic {
				if v != w.counts[string(r.Key)]+1 {
					w.outOfSequence++
				}
				w.counts[string(r.Key)] = v
				return
			}
			w.sums[string(r.Key)] = v
		})
		cancel()
	}
}

func equalMaps(a, b map[string]int64) bool { return len(a) == len(b) && diffCount(a, b) == 0 }

func diffCount(a, b map[string]int64) int {
	n := 0
	for k, v := range b {
		if a[k] != v {
			n++
		}
	}
	return n
}

func runApp(t *testing.T, app *streams.App) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestWindowedCountAndSumOverBroker: a windowed count and sum over 1M
// records with out-of-order timestamps (and some too late) equal the
// in-memory computation; the App is stopped half way, its state directory
// deleted, and the second run restores the stores from their changelogs
// before it goes on with the rest.
func TestWindowedCountAndSumOverBroker(t *testing.T) {
	b := startBroker(t)
	in := windowInput{n: 1_000_000, keys: 200, lateEvery: 9973}
	createTopic(t, b.Addr, "win-in", 3)
	half := in.n / 2
	in.produce(t, b.Addr, "win-in", 0, half)
	stateDir := t.TempDir()
	newApp := func() *streams.App {
		app, err := streams.NewApp(windowedTopology("win-in", "win-count", "win-sum"),
			streams.Brokers(b.Addr), streams.ApplicationID("windows"), streams.StateDir(stateDir),
			streams.CommitInterval(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	results := newWindowResults(t, b.Addr, "win-count", "win-sum")
	first := newApp()
	stop := runApp(t, first)
	counts, sums := windowInput{n: half, keys: in.keys, lateEvery: in.lateEvery}.expected()
	t0 := time.Now()
	results.until(t, counts, sums, 180*time.Second)
	t.Logf("first half (%d windows) in %v", len(counts), time.Since(t0))
	stop()
	lateRecords := (half - 1) / in.lateEvery // i > 0 with i % lateEvery == 0
	if s := first.Stats(); s.LateDropped != uint64(2*lateRecords) || s.RestoredRecords != 0 {
		t.Errorf("first run: %d late (want %d: %d of %d records, in two aggregations), %d restored (want 0)",
			s.LateDropped, 2*lateRecords, lateRecords, half, s.RestoredRecords)
	}

	if err := os.RemoveAll(filepath.Join(stateDir, "windows")); err != nil {
		t.Fatal(err)
	}
	in.produce(t, b.Addr, "win-in", half, in.n)
	second := newApp()
	runApp(t, second)
	counts, sums = in.expected()
	results.until(t, counts, sums, 180*time.Second)
	s := second.Stats()
	if s.RestoredRecords < uint64(len(counts)/2) || s.RestoredBytes == 0 {
		t.Errorf("second run restored %d records (%d bytes), want at least the first half's windows", s.RestoredRecords, s.RestoredBytes)
	}
	if results.outOfSequence != 0 {
		t.Errorf("%d count updates out of sequence", results.outOfSequence)
	}
	t.Logf("%d windows; restore: %d records, %d bytes in %v", len(counts), s.RestoredRecords, s.RestoredBytes, s.RestoreTime)
}

// TestExactlyOnceWindowedCountSurvivesCrashes: under exactly-once, an
// instance killed with SIGKILL three times mid-stream (once with its state
// directory deleted too) leaves committed windowed counts that count every
// record exactly once: each window's updates are 1, 2, …, n with nothing
// repeated or skipped, and the finals equal the in-memory computation.
func TestExactlyOnceWindowedCountSurvivesCrashes(t *testing.T) {
	b := startBroker(t)
	in := windowInput{n: 60_000, keys: 150, lateEvery: 7919}
	createTopic(t, b.Addr, "win-in", 3)
	in.produce(t, b.Addr, "win-in", 0, in.n)
	stateDir := t.TempDir()
	counts, sums := in.expected()
	totalUpdates := 2 * (in.n - in.n/in.lateEvery)

	uncommitted, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("win-count", "win-sum"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer uncommitted.Close()
	seen := 0
	for crash := 1; crash <= 3; crash++ {
		tc := time.Now()
		if crash == 3 {
			if err := os.RemoveAll(filepath.Join(stateDir, "win-eos")); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envHelperBrokers+"="+b.Addr, envHelperGuarantee+"=exactly_once",
			envHelperInstance+"=0", envHelperApp+"=win-eos", envHelperStateDir+"="+stateDir)
		logFile, err := os.Create(filepath.Join(t.TempDir(), fmt.Sprintf("child-%d.log", crash)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(exited)
		}()
		// Kill once the output (uncommitted included) has grown by a
		// quarter of the whole stream's updates.
		target := seen + totalUpdates/4
		deadline := time.Now().Add(60 * time.Second)
		for running := true; running && seen < target && time.Now().Before(deadline); {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			seen += uncommitted.PollFetches(ctx).NumRecords()
			cancel()
			select {
			case <-exited:
				running = false
			default:
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		logFile.Close()
		// Count what was in flight towards this child, so the next
		// one is measured by its own output.
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			n := uncommitted.PollFetches(ctx).NumRecords()
			cancel()
			if n == 0 {
				break
			}
			seen += n
		}
		data, _ := os.ReadFile(logFile.Name())
		if seen < target {
			t.Fatalf("child %d made no progress (%d/%d updates):\n%s", crash, seen, target, tail(data, 3000))
		}
		t.Logf("child %d killed after %v", crash, time.Since(tc))
		if crash == 3 && !strings.Contains(string(data), "restored stores") {
			t.Fatalf("child 3 did not restore its deleted stores:\n%s", tail(data, 3000))
		}
	}

	app, err := streams.NewApp(windowedTopology("win-in", "win-count", "win-sum"),
		streams.Brokers(b.Addr), streams.ApplicationID("win-eos"), streams.InstanceID("0"), streams.StateDir(stateDir),
		streams.WithGuarantee(streams.ExactlyOnceV2), streams.TransactionTimeout(4*time.Second),
		streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond),
			kgo.InstanceID("static-0")))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	runApp(t, app)
	results := newWindowResults(t, b.Addr, "win-count", "win-sum")
	results.until(t, counts, sums, 60*time.Second)
	if results.outOfSequence != 0 {
		t.Errorf("%d committed count updates out of sequence (counted twice or lost)", results.outOfSequence)
	}
	t.Logf("%d windows exact after 3 kills; %d updates seen uncommitted; last run restored %d records, finished in %v",
		len(counts), seen, app.Stats().RestoredRecords, time.Since(t0))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// TestStoresMoveWithTheirPartitions: a second instance joining mid-stream
// takes over some partitions (exactly-once); it restores their stores from
// the changelogs written by the first, so the committed counts stay exact
// and in sequence across the handover, and both instances processed input.
func TestStoresMoveWithTheirPartitions(t *testing.T) {
	b := startBroker(t)
	in := windowInput{n: 40_000, keys: 100}
	createTopic(t, b.Addr, "win-in", 4)
	half := in.n / 2
	in.produce(t, b.Addr, "win-in", 0, half)
	newApp := func(instance string) *streams.App {
		app, err := streams.NewApp(windowedTopology("win-in", "win-count", "win-sum"),
			streams.Brokers(b.Addr), streams.ApplicationID("moving"), streams.InstanceID(instance),
			streams.StateDir(t.TempDir()), streams.WithGuarantee(streams.ExactlyOnceV2),
			streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	results := newWindowResults(t, b.Addr, "win-count", "win-sum")
	first := newApp("a")
	runApp(t, first)
	counts, sums := windowInput{n: half, keys: in.keys}.expected()
	results.until(t, counts, sums, 60*time.Second)

	second := newApp("b")
	runApp(t, second)
	waitAssigned(t, b.Addr, "moving", "win-in", 2, 4) // both own some (cooperative: two rounds)
	in.produce(t, b.Addr, "win-in", half, in.n)
	counts, sums = in.expected()
	results.until(t, counts, sums, 60*time.Second)
	s1, s2 := first.Stats(), second.Stats()
	t.Logf("first: %d in, %d aborted; second: %d in after restoring %d records in %v",
		s1.RecordsIn, s1.Aborted, s2.RecordsIn, s2.RestoredRecords, s2.RestoreTime)
	if results.outOfSequence != 0 {
		t.Errorf("%d committed count updates out of sequence", results.outOfSequence)
	}
	if s2.RestoredRecords == 0 || s1.RecordsIn <= uint64(half) || s2.RecordsIn == 0 {
		t.Errorf("first processed %d, second %d after restoring %d records; want both to share the second half after a restore",
			s1.RecordsIn, s2.RecordsIn, s2.RestoredRecords)
	}
}

// TestGroupByCountOverBroker: GroupBy re-keys through a repartition topic
// whose partitions are the count's tasks; the changelog gets as many
// partitions, and the counts are exact (exactly-once).
func TestGroupByCountOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "words", 3)
	const n, words = 3000, 30
	if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "words", Key: fmt.Appendf(nil, "%d", i), Value: fmt.Appendf(nil, "word%d", i%words)}
	}); err != nil {
		t.Fatal(err)
	}
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"words"})
	streams.GroupBy(in, func(_ string, w string) (string, error) { return w, nil }, streams.String, streams.String, streams.Named("by-word")).
		Count(streams.Named("word-count")).ToStream().To("word-counts", streams.String, streams.Int64)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("wc"), streams.StateDir(t.TempDir()),
		streams.WithGuarantee(streams.ExactlyOnceV2), streams.RepartitionPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	runApp(t, app)
	last := map[string]int64{}
	want := map[string]int64{}
	for i := 0; i < words; i++ {
		want[fmt.Sprintf("word%d", i)] = n / words
	}
	readAllRecords(t, b.Addr, "word-counts", n, func(r *kgo.Record) {
		last[string(r.Key)] = int64(binary.BigEndian.Uint64(r.Value))
	})
	if !equalMaps(last, want) {
		t.Fatalf("counts %v, want %d of each of %d words", last, n/words, words)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(context.Background(), "wc-word-count-changelog")
	if err != nil || len(topics["wc-word-count-changelog"].Partitions) != 4 {
		t.Fatalf("changelog: %v %v, want 4 partitions like the repartition topic", topics, err)
	}
}
