package lag

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Defaults of Config's zero fields.
const (
	DefaultWindow      = 10
	DefaultMinDistance = time.Second
	DefaultMinSpan     = time.Minute
	DefaultExpire      = 7 * 24 * time.Hour

	// maxWindow bounds the memory a misconfiguration can take.
	maxWindow = 10000
)

// Config tunes an Evaluator. Zero fields take the defaults; a negative
// MinDistance, MinSpan or Expire turns that feature off.
type Config struct {
	// Window is how many commits are kept per group partition (Burrow's
	// "intervals"). With a commit every 5 s, 10 commits judge the last
	// 50 s of the consumer's life.
	Window int
	// MinDistance: a commit less than this after the previous one replaces
	// it rather than taking a slot of the window (Burrow's "min-distance").
	MinDistance time.Duration
	// MinSpan is the least time without commits that can count as STOP,
	// however close together the window's commits are: a window of one
	// commit spans nothing, and a consumer must not be called stopped a
	// millisecond after its first commit.
	MinSpan time.Duration
	// Expire drops a group partition whose last commit is older than this
	// (Burrow's "expire-group").
	Expire time.Duration
}

// ErrInvalidConfig reports a Config that Validate refuses.
var ErrInvalidConfig = errors.New("lag: invalid config")

// WithDefaults fills zero fields with the defaults.
func (c Config) WithDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MinDistance == 0 {
		c.MinDistance = DefaultMinDistance
	}
	if c.MinSpan == 0 {
		c.MinSpan = DefaultMinSpan
	}
	if c.Expire == 0 {
		c.Expire = DefaultExpire
	}
	return c
}

// Validate checks a Config after defaults.
func (c Config) Validate() error {
	c = c.WithDefaults()
	if c.Window < 1 || c.Window > maxWindow {
		return fmt.Errorf("%w: window %d not in [1, %d]", ErrInvalidConfig, c.Window, maxWindow)
	}
	return nil
}

// Commit is one observed offset commit of a group partition.
type Commit struct {
	Offset       int64     // committed offset: the next record the group will read
	LogEndOffset int64     // the partition's log end offset when the commit was seen
	Time         time.Time // when the group committed
}

// Lag is how many records the commit left unread (never negative).
func (c Commit) Lag() int64 { return max(c.LogEndOffset-c.Offset, 0) }

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// LogEnds returns a partition's current log end offset; ok is false when it
// is unknown (the topic was deleted, say).
type LogEnds func(topic string, partition int32) (logEnd int64, ok bool)

// PartitionStatus is the verdict on one partition of a group.
type PartitionStatus struct {
	Topic           string
	Partition       int32
	Status          Status
	CommittedOffset int64     // last committed offset
	LastCommit      time.Time // when it was committed
	LogEndOffset    int64     // current log end offset
	Lag             int64     // LogEndOffset - CommittedOffset, at least 0
	Window          []Commit  // the commits judged, oldest first
	Complete        float64   // how full the window is, 0..1
}

// GroupStatus is the verdict on a group: its worst partition, and each one.
type GroupStatus struct {
	Group      string
	Status     Status
	TotalLag   int64
	Partitions []PartitionStatus // by topic, then partition
}

// Severity is Burrow's group-level status: OK, WARN or ERR.
func (g GroupStatus) Severity() Severity { return g.Status.Severity() }

// MaxLag returns the partition with the most lag (the first on ties); ok is
// false for a group without partitions.
func (g GroupStatus) MaxLag() (PartitionStatus, bool) {
	best := -1
	for i, p := range g.Partitions {
		if best < 0 || p.Lag > g.Partitions[best].Lag {
			best = i
		}
	}
	if best < 0 {
		return PartitionStatus{}, false
	}
	return g.Partitions[best], true
}

// logEndSample is a log end offset and the last time it was seen.
type logEndSample struct {
	logEnd int64
	seen   time.Time
}

// Evaluator keeps the commit windows of every group and judges them. It is
// safe for concurrent use; it never blocks on anything but its own mutex.
type Evaluator struct {
	cfg Config

	mu struct {
		sync.Mutex
		groups  map[string]map[TopicPartition][]Commit // oldest first, at most cfg.Window
		logEnds map[TopicPartition][]logEndSample      // distinct values, oldest first, at most cfg.Window
	}
}

// New returns an empty Evaluator. It panics on a config Validate refuses;
// check it first where it comes from a user.
func New(cfg Config) *Evaluator {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	e := &Evaluator{cfg: cfg.WithDefaults()}
	e.mu.groups = map[string]map[TopicPartition][]Commit{}
	e.mu.logEnds = map[TopicPartition][]logEndSample{}
	return e
}

// Config returns the configuration in effect (defaults filled in).
func (e *Evaluator) Config() Config { return e.cfg }

// Observe records a commit of group on topic/partition. A commit older than
// the partition's last one is ignored, as is a negative offset (no offset).
func (e *Evaluator) Observe(group, topic string, partition int32, c Commit) {
	if c.Offset < 0 {
		return
	}
	tp := TopicPartition{topic, partition}
	e.mu.Lock()
	defer e.mu.Unlock()
	parts := e.mu.groups[group]
	if parts == nil {
		parts = map[TopicPartition][]Commit{}
		e.mu.groups[group] = parts
	}
	parts[tp] = pushCommit(parts[tp], c, e.cfg.Window, e.cfg.MinDistance)
}

// pushCommit appends c to window, replacing the last commit when c follows
// it within minDistance and dropping the oldest when the window is full.
func pushCommit(window []Commit, c Commit, size int, minDistance time.Duration) []Commit {
	if n := len(window); n > 0 {
		last := window[n-1]
		switch {
		case c.Time.Before(last.Time):
			return window // stale: a newer commit is already known
		case c.Time.Equal(last.Time) || (minDistance > 0 && c.Time.Sub(last.Time) < minDistance):
			window[n-1] = c
			return window
		}
	}
	if len(window) < size {
		return append(window, c)
	}
	copy(window, window[1:])
	window[len(window)-1] = c
	return window
}

// ObserveLogEnd records the log end offset of a partition seen at now. The
// evaluator keeps the last Window distinct values with the last time each
// was seen; STOP uses them to tell how long a consumer has had work.
func (e *Evaluator) ObserveLogEnd(topic string, partition int32, logEnd int64, now time.Time) {
	tp := TopicPartition{topic, partition}
	e.mu.Lock()
	defer e.mu.Unlock()
	samples := e.mu.logEnds[tp]
	if n := len(samples); n > 0 && samples[n-1].logEnd == logEnd {
		if now.After(samples[n-1].seen) {
			samples[n-1].seen = now
		}
		return
	}
	if n := len(samples); n > 0 && now.Before(samples[n-1].seen) {
		return // stale
	}
	s := logEndSample{logEnd: logEnd, seen: now}
	if len(samples) < e.cfg.Window {
		e.mu.logEnds[tp] = append(samples, s)
		return
	}
	copy(samples, samples[1:])
	samples[len(samples)-1] = s
}

// Forget drops everything known about group (it was deleted).
func (e *Evaluator) Forget(group string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.mu.groups, group)
	e.dropUnwatchedLogEndsLocked()
}

// ForgetPartition drops one partition of group (its offset was deleted).
func (e *Evaluator) ForgetPartition(group, topic string, partition int32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if parts := e.mu.groups[group]; parts != nil {
		delete(parts, TopicPartition{topic, partition})
		if len(parts) == 0 {
			delete(e.mu.groups, group)
		}
	}
	e.dropUnwatchedLogEndsLocked()
}

// Expire drops group partitions whose last commit is older than
// Config.Expire, and groups left without partitions.
func (e *Evaluator) Expire(now time.Time) {
	if e.cfg.Expire < 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for group, parts := range e.mu.groups {
		for tp, window := range parts {
			if now.Sub(window[len(window)-1].Time) > e.cfg.Expire {
				delete(parts, tp)
			}
		}
		if len(parts) == 0 {
			delete(e.mu.groups, group)
		}
	}
	e.dropUnwatchedLogEndsLocked()
}

// dropUnwatchedLogEndsLocked forgets log end samples of partitions no group
// has committed on. Needs mu.
func (e *Evaluator) dropUnwatchedLogEndsLocked() {
	for tp := range e.mu.logEnds {
		watched := false
		for _, parts := range e.mu.groups {
			if _, ok := parts[tp]; ok {
				watched = true
				break
			}
		}
		if !watched {
			delete(e.mu.logEnds, tp)
		}
	}
}

// Groups returns the groups with at least one observed commit, sorted.
func (e *Evaluator) Groups() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.mu.groups))
	for g := range e.mu.groups {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Evaluate judges group at now. logEnds, if not nil, gives the current log
// end offsets; without it (or for a partition it does not know) the latest
// ObserveLogEnd value, else the last commit's, stands in. ok is false when
// no commit of the group was observed.
func (e *Evaluator) Evaluate(group string, now time.Time, logEnds LogEnds) (GroupStatus, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	parts, ok := e.mu.groups[group]
	if !ok {
		return GroupStatus{Group: group}, false
	}
	return e.evaluateLocked(group, parts, now, logEnds), true
}

// EvaluateAll judges every group with observed commits, sorted by name.
func (e *Evaluator) EvaluateAll(now time.Time, logEnds LogEnds) []GroupStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]GroupStatus, 0, len(e.mu.groups))
	for group, parts := range e.mu.groups {
		out = append(out, e.evaluateLocked(group, parts, now, logEnds))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

func (e *Evaluator) evaluateLocked(group string, parts map[TopicPartition][]Commit, now time.Time, logEnds LogEnds) GroupStatus {
	gs := GroupStatus{Group: group, Partitions: make([]PartitionStatus, 0, len(parts))}
	for tp, window := range parts {
		samples := e.mu.logEnds[tp]
		last := window[len(window)-1]
		logEnd := last.LogEndOffset
		if n := len(samples); n > 0 {
			logEnd = samples[n-1].logEnd
		}
		if logEnds != nil {
			if v, ok := logEnds(tp.Topic, tp.Partition); ok {
				logEnd = v
			}
		}
		ps := PartitionStatus{
			Topic:           tp.Topic,
			Partition:       tp.Partition,
			CommittedOffset: last.Offset,
			LastCommit:      last.Time,
			LogEndOffset:    logEnd,
			Lag:             max(logEnd-last.Offset, 0),
			Window:          append([]Commit(nil), window...),
			Complete:        float64(len(window)) / float64(e.cfg.Window),
		}
		ps.Status = judge(window, samples, ps.Lag, now, e.cfg.MinSpan)
		gs.Partitions = append(gs.Partitions, ps)
		gs.TotalLag += ps.Lag
		gs.Status = max(gs.Status, ps.Status)
	}
	sort.Slice(gs.Partitions, func(i, j int) bool {
		a, b := gs.Partitions[i], gs.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return gs
}

// judge applies the rules of the package documentation, in order, to one
// partition's window (oldest first, not empty).
func judge(window []Commit, logEnds []logEndSample, currentLag int64, now time.Time, minSpan time.Duration) Status {
	if currentLag == 0 {
		return StatusOK
	}
	first, last := window[0], window[len(window)-1]
	if isStopped(first, last, logEnds, now, minSpan) {
		return StatusStop
	}
	if isRewound(window) {
		return StatusRewind
	}
	for _, c := range window {
		if c.Lag() == 0 {
			return StatusOK
		}
	}
	if len(window) < 2 {
		return StatusOK
	}
	if isStalled(window) {
		return StatusStall
	}
	if lagNeverDecreases(window) {
		return StatusWarn
	}
	return StatusOK
}

// isStopped: the consumer has had work for longer than its window spans
// (at least minSpan) without committing. It has had work since its last
// commit, or since the last time the log end was seen at or below the
// committed offset, whichever is later.
func isStopped(first, last Commit, logEnds []logEndSample, now time.Time, minSpan time.Duration) bool {
	workSince := last.Time
	for _, s := range logEnds {
		if s.logEnd <= last.Offset && s.seen.After(workSince) {
			workSince = s.seen
		}
	}
	span := max(last.Time.Sub(first.Time), minSpan)
	return now.Sub(workSince) > span
}

// isRewound: an offset of the window is below its predecessor and the last
// commit is still below the highest offset committed before that drop.
func isRewound(window []Commit) bool {
	peak, high := int64(-1), window[0].Offset
	for i := 1; i < len(window); i++ {
		if window[i].Offset < window[i-1].Offset {
			peak = high
		}
		high = max(high, window[i].Offset)
	}
	return peak >= 0 && window[len(window)-1].Offset < peak
}

// isStalled: every commit of the window has the same offset.
func isStalled(window []Commit) bool {
	for _, c := range window[1:] {
		if c.Offset != window[0].Offset {
			return false
		}
	}
	return true
}

// lagNeverDecreases: from each commit to the next the lag stayed or grew.
func lagNeverDecreases(window []Commit) bool {
	for i := 1; i < len(window); i++ {
		if window[i].Lag() < window[i-1].Lag() {
			return false
		}
	}
	return true
}
