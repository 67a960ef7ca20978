package broker

// The Iceberg writer's CPU budget (iceberg.writer.cpu.min.fraction). The
// committer (iceberg.go) converts on one goroutine, locked to its thread;
// tiering/iceberg and the record decoding here call Pace between pieces of
// a few milliseconds of work. Every window (icebergPaceWindow, or the time
// since the last Pace when longer) the pacer compares two counters, in
// cores:
//
//   - this process's CPU time (getrusage RUSAGE_SELF), against GOMAXPROCS
//     (which follows a container's CPU limit), and
//   - the host's busy time in /proc/stat, against its CPUs: it also sees a
//     producer, consumer or anything else in another process on the same
//     host, which compete with produce for the same cores,
//
// each minus the writer's own thread (RUSAGE_THREAD): what the rest of the
// node uses. The writer may use, per window, a share of one core: all of it
// when the rest leaves about a core idle in both views, and otherwise the
// floor. What the rest leaves idle below a core is not the writer's to
// take: produce is latency-bound (a client waits for its acks before it
// sends more), so a producer that averages 1.5 of 2 cores still needs the
// other half in bursts; handing the writer what it leaves idle (less a
// quarter core) cost produce 10% where the floor costs 5% on 2 cores
// (README, Performance, "Iceberg topics"). Past its
// share (its thread's CPU time since the window began, divided by the
// share, ahead of the wall time) Pace sleeps, so a busy node runs the
// writer as a duty cycle at the floor, and the table still progresses,
// its lag visible, until the node is idle again. Without the counters
// (not Linux) the writer runs unthrottled.

import (
	"context"
	"log/slog"
	"runtime"
	"time"
)

const (
	icebergWriterCPUMinFractionConfig = "iceberg.writer.cpu.min.fraction"
	// icebergDefaultWriterCPUMinFraction is measured with
	// BenchmarkProduceIceberg (README, Performance, "Iceberg topics").
	icebergDefaultWriterCPUMinFraction = 0.1
	// icebergMinWriterCPUFraction is the lowest floor allowed: a compaction
	// of a 128 MiB file takes about a second of CPU, and must fit in
	// icebergCommitTimeout at the floor.
	icebergMinWriterCPUFraction = 0.05
	icebergPaceWindow           = 100 * time.Millisecond
	// A view with less than this idle (cores), used by others than the
	// writer, is saturated: the others may want the writer's CPU too.
	icebergPaceSaturatedIdle = 0.1
	// Others using less than this (cores) are nobody to make room for.
	icebergPaceOthersPresent = 0.1
	// The writer runs unthrottled when the rest of the node leaves at least
	// 1 - icebergPaceTolerance cores idle.
	icebergPaceTolerance = 0.1
	// The host's view counts while the rest of this process uses at least
	// this (cores): the broker serves clients, whose produce competes with
	// the host's other work.
	icebergPaceServing = 0.25
)

// cpuTimes are cumulative CPU counters read at one moment.
type cpuTimes struct {
	process time.Duration // this process, user + system
	writer  time.Duration // the calling (writer's) thread, user + system
	// systemBusy and systemTotal are /proc/stat's jiffies over all CPUs;
	// systemCPUs is 0 when the host's counters are unknown.
	systemBusy, systemTotal uint64
	systemCPUs              int
}

// cpuLoad is one view of the node over a window, in cores: what it has
// and what was used of it (the writer included).
type cpuLoad struct {
	capacity, busy float64
}

// cpuLoads turns two readings elapsed apart into the views of the node
// (the process against procs cores; the host, when known) and the cores
// the writer's thread used.
func cpuLoads(a, b cpuTimes, elapsed time.Duration, procs int) (views []cpuLoad, writer float64) {
	secs := elapsed.Seconds()
	if secs <= 0 {
		return nil, 0
	}
	writer = max((b.writer-a.writer).Seconds()/secs, 0)
	process := max((b.process-a.process).Seconds()/secs, writer)
	views = append(views, cpuLoad{capacity: float64(procs), busy: process})
	if b.systemCPUs > 0 && a.systemCPUs > 0 && b.systemTotal > a.systemTotal && b.systemBusy >= a.systemBusy {
		cpus := float64(b.systemCPUs)
		busy := float64(b.systemBusy-a.systemBusy) / float64(b.systemTotal-a.systemTotal) * cpus
		views = append(views, cpuLoad{capacity: cpus, busy: max(busy, writer)})
	}
	return views, writer
}

// writerShare is the share of one core the writer may use in the next
// window, 1 or floor, given how busy each view of the node was
// over the last one (the process first, then the host) and what the
// writer used of it. The host view counts only while the process serves
// (its others use icebergPaceServing or more): a host busy with other
// work while the broker idles does not hold the writer back.
func writerShare(views []cpuLoad, writer, floor float64) float64 {
	for i, v := range views {
		others := max(v.busy-writer, 0)
		if i > 0 && max(views[0].busy-writer, 0) < icebergPaceServing {
			break
		}
		idle := max(v.capacity-v.busy, 0)
		without := v.capacity - others // idle but for the writer
		saturated := idle < icebergPaceSaturatedIdle && others >= icebergPaceOthersPresent
		if saturated || without < 1-icebergPaceTolerance {
			return floor
		}
	}
	return 1
}

// icebergPacer is the iceberg.Pacer of the node's Iceberg tables. It is
// used by the committer's goroutine only, which is locked to its thread so
// that the thread's CPU time is the writer's.
type icebergPacer struct {
	logger *slog.Logger
	floor  func() float64 // iceberg.writer.cpu.min.fraction now
	read   func() (cpuTimes, error)
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	procs  func() int

	windowStart time.Time
	atStart     cpuTimes
	share       float64
	// paused is the time Pace slept, in all.
	paused   time.Duration
	readFail bool // logged once
}

func newIcebergPacer(logger *slog.Logger, floor func() float64) *icebergPacer {
	return &icebergPacer{
		logger: logger, floor: floor, read: readCPUTimes, now: time.Now, sleep: sleepCtx,
		procs: func() int { return runtime.GOMAXPROCS(0) },
	}
}

// Pace sleeps as long as the writer is ahead of its share of the window;
// ctx's error if ctx ends first.
func (p *icebergPacer) Pace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	floor := p.floor()
	if floor >= 1 {
		return nil
	}
	now := p.now()
	cur, ok := p.readCPU()
	if !ok {
		return nil
	}
	if p.windowStart.IsZero() {
		// Nothing measured yet: the first window is paced at the floor.
		p.windowStart, p.atStart, p.share = now, cur, floor
		return nil
	}
	elapsed := now.Sub(p.windowStart)
	if p.share < 1 {
		used := cur.writer - p.atStart.writer
		if wait := time.Duration(float64(used)/p.share) - elapsed; wait > 0 {
			if err := p.sleep(ctx, wait); err != nil {
				return err
			}
			p.paused += wait
			now = p.now()
			if cur, ok = p.readCPU(); !ok {
				return nil
			}
			elapsed = now.Sub(p.windowStart)
		}
	}
	if elapsed >= icebergPaceWindow {
		views, writer := cpuLoads(p.atStart, cur, elapsed, p.procs())
		p.windowStart, p.atStart, p.share = now, cur, writerShare(views, writer, floor)
	}
	return nil
}

// readCPU reads the counters; false (the writer runs unthrottled, said
// once) when they cannot be.
func (p *icebergPacer) readCPU() (cpuTimes, bool) {
	cur, err := p.read()
	if err != nil {
		if !p.readFail {
			p.readFail = true
			p.logger.Warn("iceberg writer runs unthrottled: no CPU counters", "config", icebergWriterCPUMinFractionConfig, "err", err)
		}
		return cpuTimes{}, false
	}
	return cur, true
}

// sleepCtx sleeps d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// icebergPacerKey carries the *icebergPacer of the goroutine doing the work
// (the commit loop's or the maintenance goroutine's) in its context.
type icebergPacerKey struct{}

func withIcebergPacer(ctx context.Context, p *icebergPacer) context.Context {
	return context.WithValue(ctx, icebergPacerKey{}, p)
}

// icebergCtxPacer is the tables' Pacer: it paces with the pacer in the
// context, so the commit loop and the maintenance goroutine, which share a
// node's tables, each measure their own thread (a context without one is
// never paused).
type icebergCtxPacer struct{}

func (icebergCtxPacer) Pace(ctx context.Context) error {
	if p, ok := ctx.Value(icebergPacerKey{}).(*icebergPacer); ok && p != nil {
		return p.Pace(ctx)
	}
	return ctx.Err()
}
