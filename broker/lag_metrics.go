package broker

// Consumer lag for people: the lag monitor watches the group coordinator's
// committed offsets, feeds every new commit to the lag evaluator (package
// lag, Burrow's rules), and answers in two forms: Prometheus series per
// group partition (this file) and the admin HTTP API (lag_http.go).
//
//	strata_group_committed_offset{group,topic,partition}  last committed offset
//	strata_group_lag_records{group,topic,partition}       high watermark - committed (>= 0)
//	strata_group_lag_seconds{group,topic,partition}       now - timestamp of the record at the committed offset
//	                                                      (absent when that record has no timestamp)
//	strata_group_status{group}                            lag.Status: 0 OK, 1 WARN, 2 STOP, 3 STALL, 4 REWIND
//
// Commits reach the evaluator two ways. The coordinator calls
// observeCommits for every accepted OffsetCommit. And the monitor samples
// the coordinator's snapshot every lagSampleInterval and before every
// scrape and HTTP answer: that records the log end offsets the STOP rule
// needs, picks up offsets loaded from __consumer_offsets at start, and
// notices deleted groups and offsets. A commit counts once: it is new when
// its commit timestamp differs from the last one seen for the partition.

import (
	"errors"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/lag"
	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
)

const (
	// lagSampleInterval is how often the monitor samples the coordinator
	// and the log end offsets (commits themselves arrive by the hook).
	lagSampleInterval = 5 * time.Second
	// remoteLagTimeout bounds the questions the lag API asks the cluster.
	remoteLagTimeout = 10 * time.Second
	// recordTimeCacheTTL bounds how long a looked-up record timestamp is
	// trusted (compaction may remove the record at an offset) and how long
	// an unused one is kept.
	recordTimeCacheTTL = time.Minute
)

// lagMonitor owns the evaluator and the record-timestamp cache.
type lagMonitor struct {
	topics    *topicManager
	logger    *slog.Logger
	snapshots func() []groupSnapshot // the coordinator's groups (groupCoordinator.snapshot)
	eval      *lag.Evaluator
	cluster   *clusterGroups // the other nodes' groups (lag_remote.go); nil in unit tests
	now       func() time.Time

	mu struct {
		sync.Mutex
		lastCommit map[lagGroupPartition]seenCommit // the commit last fed to eval
		hookCalls  uint64                           // observeCommits calls so far
		recordTime map[recordTimeKey]recordTime     // timestamp of the record at an offset
	}
}

// seenCommit is the last commit of a group partition fed to the evaluator.
type seenCommit struct {
	at       time.Time // its commit timestamp
	hookCall uint64    // the observeCommits call that fed it; 0 for the sampler
}

// lagGroupPartition names one partition of one group.
type lagGroupPartition struct {
	group     string
	topic     string
	partition int32
}

// recordTimeKey is a partition (by identity: a re-created topic has new
// partitions) and an offset in it.
type recordTimeKey struct {
	p      *partition
	offset int64
}

type recordTime struct {
	timestamp int64 // ms
	loaded    time.Time
}

func newLagMonitor(topics *topicManager, logger *slog.Logger, snapshots func() []groupSnapshot, cfg lag.Config) *lagMonitor {
	m := &lagMonitor{topics: topics, logger: logger, snapshots: snapshots, eval: lag.New(cfg), now: time.Now}
	m.mu.lastCommit = map[lagGroupPartition]seenCommit{}
	m.mu.recordTime = map[recordTimeKey]recordTime{}
	return m
}

// run samples every interval until done is closed.
func (m *lagMonitor) run(done <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			m.sample()
		}
	}
}

// observeCommits feeds the commits of one accepted OffsetCommit to the
// evaluator. It is the coordinator's hook, called after the commit is
// durable and outside the coordinator's locks; m may be nil (no admin
// listener, no lag reporting).
func (m *lagMonitor) observeCommits(group string, offsets []groups.CommitOffset) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.hookCalls++
	for _, o := range offsets {
		logEnd := o.Offset // topic gone: no lag to speak of
		if p := m.topics.partition(o.Topic, o.Partition); p != nil {
			logEnd = p.HighWatermark()
		}
		at := time.UnixMilli(o.CommitTimestamp)
		m.mu.lastCommit[lagGroupPartition{group, o.Topic, o.Partition}] = seenCommit{at: at, hookCall: m.mu.hookCalls}
		m.eval.Observe(group, o.Topic, o.Partition, lag.Commit{Offset: o.Offset, LogEndOffset: logEnd, Time: at})
	}
}

// liveGroups returns the coordinator's groups that exist (not Dead).
func (m *lagMonitor) liveGroups() []groupSnapshot {
	all := m.snapshots()
	live := all[:0:0]
	for _, g := range all {
		if g.State != "Dead" {
			live = append(live, g)
		}
	}
	return live
}

// sample feeds new commits and current log end offsets to the evaluator,
// forgets groups and partitions the coordinator no longer has, and returns
// the snapshot it used. What the hook reported after the snapshot was taken
// is newer than the snapshot and never forgotten for missing from it.
func (m *lagMonitor) sample() []groupSnapshot {
	now := m.now()
	m.mu.Lock()
	hookCallsBefore := m.mu.hookCalls
	m.mu.Unlock()
	snaps := m.liveGroups()
	current := make(map[lagGroupPartition]struct{})
	watched := make(map[lag.TopicPartition]int64)
	m.mu.Lock()
	for _, g := range snaps {
		for _, o := range g.Offsets {
			key := lagGroupPartition{g.Group, o.Topic, o.Partition}
			current[key] = struct{}{}
			logEnd := int64(-1)
			if p := m.topics.partition(o.Topic, o.Partition); p != nil {
				logEnd = p.HighWatermark()
				watched[lag.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = logEnd
			}
			if last, ok := m.mu.lastCommit[key]; ok && last.at.Equal(o.CommitTimestamp) {
				continue
			}
			m.mu.lastCommit[key] = seenCommit{at: o.CommitTimestamp}
			if logEnd < 0 {
				logEnd = o.Offset // topic gone: no lag to speak of
			}
			m.eval.Observe(g.Group, o.Topic, o.Partition, lag.Commit{
				Offset:       o.Offset,
				LogEndOffset: logEnd,
				Time:         o.CommitTimestamp,
			})
		}
	}
	live := make(map[string]bool, len(snaps))
	for _, g := range snaps {
		live[g.Group] = true
	}
	var forgotten []lagGroupPartition
	for key, seen := range m.mu.lastCommit {
		switch _, ok := current[key]; {
		case ok:
		case seen.hookCall > hookCallsBefore:
			live[key.group] = true // committed after the snapshot
		default:
			delete(m.mu.lastCommit, key)
			forgotten = append(forgotten, key)
		}
	}
	m.mu.Unlock()

	for _, key := range forgotten {
		if live[key.group] {
			m.eval.ForgetPartition(key.group, key.topic, key.partition) // offset deleted or expired
		}
	}
	for _, group := range m.eval.Groups() {
		if !live[group] {
			m.eval.Forget(group) // group deleted
		}
	}
	for tp, logEnd := range watched {
		m.eval.ObserveLogEnd(tp.Topic, tp.Partition, logEnd, now)
	}
	m.eval.Expire(now)
	m.sweepRecordTimes(now)
	return snaps
}

// logEnds gives the evaluator the current high watermarks.
func (m *lagMonitor) logEnds(topic string, partition int32) (int64, bool) {
	if p := m.topics.partition(topic, partition); p != nil {
		return p.HighWatermark(), true
	}
	return 0, false
}

// partitionLag is the lag of one group partition, as metrics and HTTP show it.
type partitionLag struct {
	topic      string
	partition  int32
	committed  int64
	logEnd     int64 // -1 when the topic is gone
	lagRecords int64
	lagSeconds float64 // NaN when the record's timestamp is unknown
	known      bool    // the partition exists
}

// lagOf measures one committed offset against its partition now.
func (m *lagMonitor) lagOf(o committedOffset, now time.Time) partitionLag {
	pl := partitionLag{topic: o.Topic, partition: o.Partition, committed: o.Offset, logEnd: -1}
	p := m.topics.partition(o.Topic, o.Partition)
	if p == nil {
		return pl
	}
	pl.known = true
	pl.logEnd = p.HighWatermark()
	pl.lagRecords = max(pl.logEnd-o.Offset, 0)
	if pl.lagRecords == 0 {
		return pl
	}
	if ts, ok := m.recordTimestamp(p, o.Offset, pl.logEnd, now); ok {
		pl.lagSeconds = max(now.Sub(time.UnixMilli(ts)).Seconds(), 0)
	} else {
		pl.lagSeconds = math.NaN() // no timestamp to measure from
	}
	return pl
}

// recordTimestamp returns the timestamp of the next record a consumer at
// offset reads (the log start's if offset is below it), from the cache or
// by reading the batch holding it. ok is false when there is no such record
// below highWatermark or the log cannot be read.
func (m *lagMonitor) recordTimestamp(p *partition, offset, highWatermark int64, now time.Time) (int64, bool) {
	offset = max(offset, p.Log().LogStartOffset())
	if offset >= highWatermark {
		return 0, false
	}
	key := recordTimeKey{p, offset}
	m.mu.Lock()
	cached, ok := m.mu.recordTime[key]
	m.mu.Unlock()
	if ok && now.Sub(cached.loaded) < recordTimeCacheTTL {
		return cached.timestamp, true
	}
	ts, err := readRecordTimestamp(p.Log(), offset, highWatermark)
	if err == nil && ts < 0 {
		err = errNoTimestamp
	}
	if err != nil {
		if !errors.Is(err, storage.ErrOffsetOutOfRange) && !errors.Is(err, storage.ErrClosed) && !errors.Is(err, errNoRecord) && !errors.Is(err, errNoTimestamp) {
			m.logger.Warn("lag: cannot read record timestamp", "dir", p.Log().Dir(), "offset", offset, "err", err)
		}
		return 0, false
	}
	m.mu.Lock()
	m.mu.recordTime[key] = recordTime{timestamp: ts, loaded: now}
	m.mu.Unlock()
	return ts, true
}

// sweepRecordTimes drops cache entries not refreshed within the TTL.
func (m *lagMonitor) sweepRecordTimes(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.mu.recordTime {
		if now.Sub(v.loaded) >= recordTimeCacheTTL {
			delete(m.mu.recordTime, k)
		}
	}
}

var (
	errNoRecord    = errors.New("broker: no record at or after the offset")
	errNoTimestamp = errors.New("broker: record without a timestamp")
)

// readRecordTimestamp reads the batch holding offset and returns the
// timestamp of its first record at or after offset.
func readRecordTimestamp(l replica.LocalLog, offset, highWatermark int64) (int64, error) {
	chunk, err := l.Read(offset, 1, highWatermark, true)
	if err != nil {
		return 0, err
	}
	batch, err := chunk.ReadAll()
	if err != nil {
		return 0, err
	}
	if len(batch) == 0 {
		return 0, errNoRecord
	}
	records, err := storage.DecodeRecords(batch)
	if err != nil {
		return 0, err
	}
	for _, r := range records {
		if r.Offset >= offset {
			return r.Timestamp, nil
		}
	}
	return 0, errNoRecord
}

// lagCollector reports the lag series at scrape time.
type lagCollector struct {
	monitor                                  *lagMonitor
	committed, lagRecords, lagSeconds, group *prometheus.Desc
}

func newLagCollector(m *lagMonitor) *lagCollector {
	labels := []string{"group", "topic", "partition"}
	return &lagCollector{
		monitor: m,
		committed: prometheus.NewDesc("strata_group_committed_offset",
			"Last offset the group committed on the partition (the next record it will read).", labels, nil),
		lagRecords: prometheus.NewDesc("strata_group_lag_records",
			"Records between the group's committed offset and the high watermark.", labels, nil),
		lagSeconds: prometheus.NewDesc("strata_group_lag_seconds",
			"Age of the next record the group will read (now minus its timestamp); 0 when caught up.", labels, nil),
		group: prometheus.NewDesc("strata_group_status",
			"Burrow-style lag status of the group over its recent commits: 0 OK, 1 WARN, 2 STOP, 3 STALL, 4 REWIND.", []string{"group"}, nil),
	}
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.committed
	ch <- c.lagRecords
	ch <- c.lagSeconds
	ch <- c.group
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.monitor
	snaps := m.sample()
	now := m.now()
	for _, g := range snaps {
		for _, o := range g.Offsets {
			labels := []string{g.Group, o.Topic, strconv.Itoa(int(o.Partition))}
			ch <- prometheus.MustNewConstMetric(c.committed, prometheus.GaugeValue, float64(o.Offset), labels...)
			pl := m.lagOf(o, now)
			if !pl.known {
				continue
			}
			ch <- prometheus.MustNewConstMetric(c.lagRecords, prometheus.GaugeValue, float64(pl.lagRecords), labels...)
			if !math.IsNaN(pl.lagSeconds) {
				ch <- prometheus.MustNewConstMetric(c.lagSeconds, prometheus.GaugeValue, pl.lagSeconds, labels...)
			}
		}
		status := lag.StatusOK
		if gs, ok := m.eval.Evaluate(g.Group, now, m.logEnds); ok {
			status = gs.Status
		}
		ch <- prometheus.MustNewConstMetric(c.group, prometheus.GaugeValue, float64(status), g.Group)
	}
}
