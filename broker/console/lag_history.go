package console

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The lag history: every group's total lag over the last hour, for the
// group page's chart. The console's sampler (one goroutine, started by New
// and stopped by Close) measures every group each LagHistoryInterval, and
// a look at a group's page adds what it measured, so a watched group's
// chart moves at the page's pace. Memory is bounded: at most
// maxHistoryGroups groups (the least recently measured one goes first), a
// point per minHistorySpacing slot of time (the slot's last measurement),
// none older than historySpan.

const (
	defaultLagHistoryInterval = 30 * time.Second
	historySpan               = time.Hour
	minHistorySpacing         = 5 * time.Second
	maxHistoryGroups          = 1000
	// sampleTimeout bounds one sampling round's Kafka round trips.
	sampleTimeout = 20 * time.Second
)

// lagPoint is one measurement of a group's lag.
type lagPoint struct {
	Time    int64   `json:"t"`       // ms since the epoch
	Records int64   `json:"records"` // total lag in records
	Seconds float64 `json:"seconds"` // the largest lag in seconds; -1: unknown
}

// lagHistory holds the points of each group, oldest first.
type lagHistory struct {
	mu struct {
		sync.Mutex
		groups map[string][]lagPoint
	}
}

func newLagHistory() *lagHistory {
	h := &lagHistory{}
	h.mu.groups = map[string][]lagPoint{}
	return h
}

// add records p for group: a point replaces the last one when both fall
// in the same minHistorySpacing slot of time, and points older than
// historySpan go.
func (h *lagHistory) add(group string, p lagPoint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	points, ok := h.mu.groups[group]
	if !ok && len(h.mu.groups) >= maxHistoryGroups {
		h.evictOldestLocked()
	}
	slot := func(t int64) int64 { return t / minHistorySpacing.Milliseconds() }
	if n := len(points); n > 0 {
		switch last := points[n-1].Time; {
		case p.Time < last:
			return // older than what is there
		case slot(p.Time) == slot(last):
			points = points[:n-1]
		}
	}
	points = append(points, p)
	cut := sort.Search(len(points), func(i int) bool { return points[i].Time >= p.Time-historySpan.Milliseconds() })
	if cut > 0 {
		points = append(points[:0:0], points[cut:]...)
	}
	h.mu.groups[group] = points
}

// evictOldestLocked drops the group whose last point is the oldest.
func (h *lagHistory) evictOldestLocked() {
	oldest, at := "", int64(1<<63-1)
	for g, points := range h.mu.groups {
		if last := points[len(points)-1].Time; last < at {
			oldest, at = g, last
		}
	}
	delete(h.mu.groups, oldest)
}

// get returns a copy of group's points no older than historySpan at now.
func (h *lagHistory) get(group string, now time.Time) []lagPoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	from := now.Add(-historySpan).UnixMilli()
	out := []lagPoint{}
	for _, p := range h.mu.groups[group] {
		if p.Time >= from {
			out = append(out, p)
		}
	}
	return out
}

// retain forgets every group not in live (deleted groups).
func (h *lagHistory) retain(live map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for g := range h.mu.groups {
		if !live[g] {
			delete(h.mu.groups, g)
		}
	}
}

func (h *lagHistory) forget(group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.mu.groups, group)
}

// sampleLag measures every group each interval until ctx ends.
func (c *Console) sampleLag(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.sampleLagOnce(ctx)
		}
	}
}

// sampleLagOnce adds a point for each of the cluster's groups (at most
// maxHistoryGroups of them, by name) and forgets the groups that are gone.
func (c *Console) sampleLagOnce(ctx context.Context) {
	cl, err := c.client()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		c.cfg.Logger.Debug("console: sampling lag: listing groups", "err", err)
		return
	}
	names := listed.Groups()
	sort.Strings(names)
	live := make(map[string]bool, len(names))
	for _, n := range names {
		live[n] = true
	}
	c.history.retain(live)
	names = names[:min(len(names), maxHistoryGroups)]
	if len(names) == 0 {
		return
	}
	lags, err := adm.Lag(ctx, names...)
	if err != nil {
		c.cfg.Logger.Debug("console: sampling lag", "err", err)
		return
	}
	for _, gl := range lags.Sorted() {
		if gl.Error() != nil {
			continue
		}
		seconds := -1.0
		if ev, ok := c.evaluatorLag(ctx, gl.Group); ok {
			seconds = ev.maxSeconds()
		}
		c.history.add(gl.Group, lagPoint{Time: time.Now().UnixMilli(), Records: totalLag(gl.Lag), Seconds: seconds})
	}
}

// totalLag sums the known, positive lags of a group's partitions, as
// getGroup does.
func totalLag(l kadm.GroupLag) int64 {
	var total int64
	for _, ml := range l.Sorted() {
		if ml.Err == nil && ml.Lag > 0 {
			total += ml.Lag
		}
	}
	return total
}
