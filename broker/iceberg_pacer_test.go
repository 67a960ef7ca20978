package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fakeNode is a node of procs cores for the pacer: a fake clock, and CPU
// counters for the writer and for the rest of the node, which wants
// demand cores and gets what the writer leaves of them.
type fakeNode struct {
	procs   int
	demand  float64
	now     time.Time
	writer  time.Duration
	others  time.Duration
	slept   time.Duration
	sleeps  int
	systemT bool // also report the host view (/proc/stat), in jiffies
}

func (n *fakeNode) pass(d time.Duration, writerRuns bool) {
	free := float64(n.procs)
	if writerRuns {
		n.writer += d
		free--
	}
	n.others += time.Duration(min(n.demand, free) * float64(d))
	n.now = n.now.Add(d)
}

func (n *fakeNode) pacer(floor float64) *icebergPacer {
	p := newIcebergPacer(slog.New(slog.DiscardHandler), func() float64 { return floor })
	p.now = func() time.Time { return n.now }
	p.procs = func() int { return n.procs }
	p.read = func() (cpuTimes, error) {
		ct := cpuTimes{process: n.writer + n.others, writer: n.writer}
		if n.systemT {
			jiffy := 10 * time.Millisecond
			ct.systemBusy = uint64((n.writer + n.others) / jiffy)
			ct.systemTotal = uint64(time.Duration(n.procs) * n.now.Sub(time.Unix(0, 0)) / jiffy)
			ct.systemCPUs = n.procs
		}
		return ct, nil
	}
	p.sleep = func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n.sleeps++
		n.slept += d
		n.pass(d, false)
		return nil
	}
	return p
}

// convert has the writer work for d of fake time in 2 ms pieces, pacing
// after each, and returns the share of one core it got.
func (n *fakeNode) convert(t *testing.T, p *icebergPacer, d time.Duration) float64 {
	t.Helper()
	start, cpu := n.now, n.writer
	for n.now.Sub(start) < d {
		n.pass(2*time.Millisecond, true)
		if err := p.Pace(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return float64(n.writer-cpu) / float64(n.now.Sub(start))
}

// The pacer's decisions on a fake node: a saturated node (by the process,
// or the host while the process serves), or one that leaves less than
// about a core idle, gets a duty cycle at the floor, one that leaves about
// a core idle an unthrottled writer, and a floor of 1 never pauses.
func TestIcebergPacerDutyCycle(t *testing.T) {
	for _, tc := range []struct {
		name          string
		procs         int
		demand, floor float64
		system        bool
		min, max      float64 // the writer's share after the first second
	}{
		{"saturated", 2, 4, 0.1, false, 0.08, 0.13},
		{"saturated, host view", 2, 4, 0.1, true, 0.08, 0.13},
		{"saturated, higher floor", 2, 4, 0.3, false, 0.27, 0.33},
		{"saturated one core", 1, 1, 0.1, false, 0.08, 0.13},
		{"idle", 2, 0, 0.1, false, 0.999, 1},
		{"idle one core", 1, 0, 0.1, false, 0.999, 1},
		{"a core idle", 2, 0.8, 0.1, true, 0.999, 1},
		{"busy, less than a core idle", 2, 1.3, 0.1, true, 0.08, 0.13},
		{"pacing off", 2, 4, 1, false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &fakeNode{procs: tc.procs, demand: tc.demand, now: time.Unix(1e6, 0), systemT: tc.system}
			p := n.pacer(tc.floor)
			n.convert(t, p, time.Second)
			sleptBefore := n.slept
			got := n.convert(t, p, 3*time.Second)
			if got < tc.min || got > tc.max {
				t.Fatalf("the writer got %.3f of a core, want %.2f..%.2f (slept %v in %d sleeps)", got, tc.min, tc.max, n.slept, n.sleeps)
			}
			if paused := n.slept - sleptBefore; (tc.max < 1) != (paused > 0) || p.paused != n.slept {
				t.Fatalf("paused %v (pacer says %v) at a share of %.3f", paused, p.paused, got)
			}
		})
	}
}

// writerShare's table: by how busy each view was and what the writer used.
func TestIcebergWriterShare(t *testing.T) {
	for _, tc := range []struct {
		views  []cpuLoad
		writer float64
		want   float64
	}{
		{[]cpuLoad{{2, 0.05}}, 0, 1},            // idle
		{[]cpuLoad{{2, 1.2}}, 1, 1},             // the writer alone and a bit
		{[]cpuLoad{{2, 2}}, 1, 0.1},             // saturated: the others may want the writer's core
		{[]cpuLoad{{2, 2}}, 0.1, 0.1},           // still saturated at the floor
		{[]cpuLoad{{2, 1.3}}, 0.1, 0.1},         // others at 1.2 leave 0.8 idle but for the writer: not a core
		{[]cpuLoad{{2, 1.0}}, 0.1, 1},           // others at 0.9 leave more than 0.9 idle
		{[]cpuLoad{{1, 1}}, 1, 1},               // one core, the writer alone
		{[]cpuLoad{{2, 0.6}, {2, 2}}, 0.1, 0.1}, // the broker serves, the host is saturated (a producer in another process)
		{[]cpuLoad{{2, 0.2}, {2, 2}}, 0.1, 1},   // the host is busy with other work while the broker idles
		{[]cpuLoad{{8, 1}, {4, 3.4}}, 0.2, 0.1}, // the host leaves 0.8 idle but for the writer
		{nil, 0, 1},
	} {
		if got := writerShare(tc.views, tc.writer, 0.1); fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", tc.want) {
			t.Errorf("writerShare(%v, writer %.2f) = %.3f, want %.3f", tc.views, tc.writer, got, tc.want)
		}
	}
}

// A pause ends as soon as its context does (the server stops).
func TestIcebergPacerStopsWithContext(t *testing.T) {
	n := &fakeNode{procs: 2, demand: 4, now: time.Unix(1e6, 0)}
	p := n.pacer(0.1)
	sleeping := make(chan struct{})
	p.sleep = func(ctx context.Context, d time.Duration) error {
		close(sleeping)
		return sleepCtx(ctx, d)
	}
	if err := p.Pace(context.Background()); err != nil { // the first window, at the floor
		t.Fatal(err)
	}
	n.pass(time.Second, true) // a second of work within the window: 9 s to wait
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Pace(ctx) }()
	<-sleeping
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Pace returned %v, want context.Canceled", err)
		}
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("Pace returned %v after the cancel", waited)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pace did not return after its context was canceled")
	}
}

// With the node saturated (the process's CPU counter says every core is
// busy besides the writer), a commit still lands every row: the writer
// runs at the floor, and the time it paused shows in the status and the
// metric.
func TestIcebergCommitCompletesWhilePaced(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBrokerHooked(t, nil, func(s *Server) {
		start := time.Now()
		s.iceberg.pacer.read = func() (cpuTimes, error) {
			ct, err := readCPUTimes()
			ct.process += time.Duration(runtime.GOMAXPROCS(0)) * time.Since(start)
			ct.systemCPUs = 0
			return ct, err
		}
	}, func(c *Config) {
		c.ObjectStore = "file://" + storeDir
		c.IcebergWriterCPUMinFraction = 0.25
	})
	tb.createTopicWithPartitions("paced", 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("paced"), kgo.ProducerLinger(5*time.Millisecond))
	const n = 8000
	value := []byte(strings.Repeat("v", 1000))
	results := make(chan error, n)
	for i := range n {
		prod.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%05d", i), Value: value}, func(_ *kgo.Record, err error) { results <- err })
	}
	for range n {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	st := icebergCommitNow(t, tb, "paced")
	if st.RowsCommitted != n || st.LagOffsets != 0 || st.LastError != "" {
		t.Fatalf("commit while paced: %+v", st)
	}
	if st.WriterPausedSeconds <= 0 {
		t.Fatalf("the writer never paused on a saturated node: %+v", st)
	}
	if rows := icebergRows(t, storeDir, "paced"); len(rows) != n {
		t.Fatalf("%d rows in the table, want %d", len(rows), n)
	}
	if got := testutil.ToFloat64(tb.srv.iceberg.paused.WithLabelValues("paced")); got != st.WriterPausedSeconds {
		t.Fatalf("strata_iceberg_writer_paused_seconds_total = %v, status says %v", got, st.WriterPausedSeconds)
	}
	t.Logf("%d rows committed at a floor of 0.25 after %.2f s of pauses", n, st.WriterPausedSeconds)
}
