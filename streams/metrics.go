package streams

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// counters are one App's running totals.
type counters struct {
	in, out, errors, deadLettered, skipped, failed, aborted atomic.Uint64
	restarts                                                atomic.Uint64
	lag                                                     atomic.Int64

	lateDropped                                  atomic.Uint64
	restoredRecords, restoredBytes, restoreNanos atomic.Uint64
	restores, standbyRecords                     atomic.Uint64
	standbyTasks, standbyLag, restoreRemaining   atomic.Int64

	// tasks are the open tasks' metrics (nil maps: not kept, as in the
	// TestDriver).
	tasks taskRegistry
}

// taskRegistry holds the per-task and per-store metrics of an App's open
// tasks: the processing goroutine registers them when it opens a task and
// writes them (atomics), scrapes read them.
type taskRegistry struct {
	mu     sync.Mutex
	tasks  map[topicPartition]*taskStats
	stores map[storePartition]*storeStats
}

// taskStats are one task's metrics.
type taskStats struct {
	lateDropped atomic.Uint64
	// punctuationLag is wall-clock time minus the task's stream time (ms)
	// when a windowed operator last advanced stream time and closed
	// windows; valid once punctuated.
	punctuationLag atomic.Int64
	punctuated     atomic.Bool
}

// storeStats are one store's metrics within its task.
type storeStats struct {
	sizeBytes        atomic.Int64 // pebble's disk space use, at the last commit
	restoreRemaining atomic.Int64 // changelog offsets left to restore
}

func (r *taskRegistry) enable() {
	r.tasks = map[topicPartition]*taskStats{}
	r.stores = map[storePartition]*storeStats{}
}

// open registers a task and its stores, returning their metrics (nil when
// the registry is not enabled).
func (r *taskRegistry) open(tp topicPartition, stores []*store) *taskStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tasks == nil {
		return nil
	}
	ts := &taskStats{}
	r.tasks[tp] = ts
	for _, st := range stores {
		st.stats = &storeStats{}
		r.stores[storePartition{st.spec.name, st.partition}] = st.stats
	}
	return ts
}

// close forgets a task and its stores.
func (r *taskRegistry) close(tp topicPartition, stores []*store) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tasks, tp)
	for _, st := range stores {
		if st != nil {
			delete(r.stores, storePartition{st.spec.name, st.partition})
		}
	}
}

// dropLate counts a (record, window) update dropped because the window had
// closed, for the App and the record's task.
func (c *procCtx) dropLate() {
	c.stats.lateDropped.Add(1)
	if c.task != nil && c.task.stats != nil {
		c.task.stats.lateDropped.Add(1)
	}
}

// punctuate notes the task's punctuation lag as a windowed operator moves
// its stream time (ms) and closes windows.
func (c *procCtx) punctuate(streamTime int64) {
	if c.task != nil && c.task.stats != nil {
		c.task.stats.punctuationLag.Store(time.Now().UnixMilli() - streamTime)
		c.task.stats.punctuated.Store(true)
	}
}

// Stats is a snapshot of a job's counters. When several Apps in one process
// share a job name, Running sums them.
type Stats struct {
	Job          string
	Instances    int
	RecordsIn    uint64 // input records processed (reprocessing counts again)
	RecordsOut   uint64 // output records the brokers acknowledged (dead letters included)
	Errors       uint64 // records whose processing failed
	DeadLettered uint64
	Skipped      uint64
	Failed       uint64 // record errors that stopped the App (ErrorFail mode)
	Aborted      uint64 // exactly-once transactions aborted (rebalance, fencing, errors)
	Restarts     uint64 // times RunWithRestarts ran the App again after an error
	Lag          int64  // records behind the high watermarks of the fetched partitions

	LateDropped      uint64        // (record, window) updates dropped: the window had closed
	RestoredRecords  uint64        // changelog records replayed into state stores
	RestoredBytes    uint64        // their key and value bytes
	RestoreTime      time.Duration // time spent restoring
	Restores         uint64        // restores that replayed changelog records (one per task opening behind its changelog)
	StandbyTasks     int64         // tasks this instance keeps a standby copy of (NumStandbyReplicas)
	StandbyRecords   uint64        // changelog records applied to standby stores
	StandbyLag       int64         // offsets the standby stores are behind their changelogs' ends (as of their last fetch)
	RestoreRemaining int64         // offsets the restores under way have still to read
}

var registry struct {
	sync.Mutex
	apps map[*App]struct{}
}

var registerOnce sync.Once

func register(a *App) {
	registerOnce.Do(func() {
		// A process embedding several registries (the broker) may have
		// registered an equal collector already; that is harmless.
		_ = prometheus.DefaultRegisterer.Register(collector{})
	})
	registry.Lock()
	defer registry.Unlock()
	if registry.apps == nil {
		registry.apps = map[*App]struct{}{}
	}
	registry.apps[a] = struct{}{}
}

func unregister(a *App) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.apps, a)
}

// Running returns the stats of the Apps running in this process, one entry
// per job name, sorted by name.
func Running() []Stats {
	registry.Lock()
	byJob := map[string]*Stats{}
	for a := range registry.apps {
		s := byJob[a.cfg.name]
		if s == nil {
			s = &Stats{Job: a.cfg.name}
			byJob[a.cfg.name] = s
		}
		one := a.Stats()
		s.Instances++
		s.RecordsIn += one.RecordsIn
		s.RecordsOut += one.RecordsOut
		s.Errors += one.Errors
		s.DeadLettered += one.DeadLettered
		s.Skipped += one.Skipped
		s.Failed += one.Failed
		s.Restarts += one.Restarts
		s.Aborted += one.Aborted
		s.Lag += one.Lag
		s.LateDropped += one.LateDropped
		s.RestoredRecords += one.RestoredRecords
		s.RestoredBytes += one.RestoredBytes
		s.RestoreTime += one.RestoreTime
		s.Restores += one.Restores
		s.StandbyTasks += one.StandbyTasks
		s.StandbyRecords += one.StandbyRecords
		s.StandbyLag += one.StandbyLag
		s.RestoreRemaining += one.RestoreRemaining
	}
	registry.Unlock()
	out := make([]Stats, 0, len(byJob))
	for _, s := range byJob {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Job < out[j].Job })
	return out
}

var (
	descIn      = prometheus.NewDesc("strata_stream_records_in_total", "Input records processed by the stream job.", []string{"job"}, nil)
	descOut     = prometheus.NewDesc("strata_stream_records_out_total", "Output records acknowledged for the stream job (dead letters included).", []string{"job"}, nil)
	descErrors  = prometheus.NewDesc("strata_stream_errors_total", "Records whose processing failed, by mode outcome.", []string{"job", "outcome"}, nil)
	descAborted = prometheus.NewDesc("strata_stream_transactions_aborted_total", "Exactly-once transactions aborted.", []string{"job"}, nil)
	descRestart = prometheus.NewDesc("strata_stream_restarts_total", "Times the stream job was restarted after an error.", []string{"job"}, nil)
	descLag     = prometheus.NewDesc("strata_stream_lag_records", "Records behind the high watermark over the job's fetched partitions.", []string{"job"}, nil)
	descLate    = prometheus.NewDesc("strata_stream_late_dropped_total", "Record updates of windows that had closed (stream time past end + grace), dropped.", []string{"job"}, nil)
	descRestRec = prometheus.NewDesc("strata_stream_restored_records_total", "Changelog records replayed into state stores.", []string{"job"}, nil)
	descRestB   = prometheus.NewDesc("strata_stream_restored_bytes_total", "Key and value bytes of the changelog records replayed into state stores.", []string{"job"}, nil)
	descRestSec = prometheus.NewDesc("strata_stream_restore_seconds_total", "Time spent restoring state stores from changelogs.", []string{"job"}, nil)
	descRestN   = prometheus.NewDesc("strata_stream_restores_total", "Task openings that replayed changelog records.", []string{"job"}, nil)
	descSbTasks = prometheus.NewDesc("strata_stream_standby_tasks", "Tasks kept as standby copies by the job's instances here.", []string{"job"}, nil)
	descSbRec   = prometheus.NewDesc("strata_stream_standby_records_total", "Changelog records applied to standby stores.", []string{"job"}, nil)
	descSbLag   = prometheus.NewDesc("strata_stream_standby_lag_offsets", "Offsets the standby stores are behind their changelogs' ends.", []string{"job"}, nil)
	descRestRem = prometheus.NewDesc("strata_stream_restore_remaining_offsets", "Changelog offsets the restores under way have still to read.", []string{"job"}, nil)

	descStoreSize   = prometheus.NewDesc("strata_stream_task_store_size_bytes", "Disk space of a task's state store (pebble: sstables, write-ahead log, manifest), refreshed at each commit.", []string{"job", "store", "partition"}, nil)
	descRestoreLeft = prometheus.NewDesc("strata_stream_task_restore_remaining_records", "Changelog offsets a task's state store has still to restore (0 once restored).", []string{"job", "store", "partition"}, nil)
	descTaskLate    = prometheus.NewDesc("strata_stream_task_late_dropped_total", "Record updates of windows that had closed, dropped, per task (input topic and partition).", []string{"job", "topic", "partition"}, nil)
	descPunctLag    = prometheus.NewDesc("strata_stream_task_punctuation_lag_seconds", "Wall-clock time minus the task's stream time when its windowed operators last advanced stream time and closed windows: how far event-time processing runs behind the clock.", []string{"job", "topic", "partition"}, nil)
)

// collector exposes Running at scrape time.
type collector struct{}

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIn, descOut, descErrors, descAborted, descRestart, descLag, descLate, descRestRec, descRestB, descRestSec,
		descRestN, descSbTasks, descSbRec, descSbLag, descRestRem, descStoreSize, descRestoreLeft, descTaskLate, descPunctLag} {
		ch <- d
	}
}

func (collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range Running() {
		ch <- prometheus.MustNewConstMetric(descIn, prometheus.CounterValue, float64(s.RecordsIn), s.Job)
		ch <- prometheus.MustNewConstMetric(descOut, prometheus.CounterValue, float64(s.RecordsOut), s.Job)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(s.DeadLettered), s.Job, "dead_letter")
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(s.Skipped), s.Job, "skip")
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(s.Failed), s.Job, "fail")
		ch <- prometheus.MustNewConstMetric(descAborted, prometheus.CounterValue, float64(s.Aborted), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestart, prometheus.CounterValue, float64(s.Restarts), s.Job)
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(s.Lag), s.Job)
		ch <- prometheus.MustNewConstMetric(descLate, prometheus.CounterValue, float64(s.LateDropped), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestRec, prometheus.CounterValue, float64(s.RestoredRecords), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestB, prometheus.CounterValue, float64(s.RestoredBytes), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestSec, prometheus.CounterValue, s.RestoreTime.Seconds(), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestN, prometheus.CounterValue, float64(s.Restores), s.Job)
		ch <- prometheus.MustNewConstMetric(descSbTasks, prometheus.GaugeValue, float64(s.StandbyTasks), s.Job)
		ch <- prometheus.MustNewConstMetric(descSbRec, prometheus.CounterValue, float64(s.StandbyRecords), s.Job)
		ch <- prometheus.MustNewConstMetric(descSbLag, prometheus.GaugeValue, float64(s.StandbyLag), s.Job)
		ch <- prometheus.MustNewConstMetric(descRestRem, prometheus.GaugeValue, float64(s.RestoreRemaining), s.Job)
	}
	collectTasks(ch)
}

// collectTasks sends the per-task metrics of every running App. Two Apps of
// a job in one process may briefly both hold a task (a rebalance hands it
// over): their values merge, counters added and gauges the larger.
func collectTasks(ch chan<- prometheus.Metric) {
	type series struct {
		desc   *prometheus.Desc
		labels [3]string
	}
	values := map[series]float64{}
	kinds := map[*prometheus.Desc]prometheus.ValueType{descStoreSize: prometheus.GaugeValue,
		descRestoreLeft: prometheus.GaugeValue, descTaskLate: prometheus.CounterValue, descPunctLag: prometheus.GaugeValue}
	add := func(d *prometheus.Desc, v float64, labels ...string) {
		s := series{desc: d, labels: [3]string(labels)}
		old, seen := values[s]
		switch {
		case !seen:
			values[s] = v
		case kinds[d] == prometheus.CounterValue:
			values[s] = old + v
		default:
			values[s] = max(old, v)
		}
	}
	registry.Lock()
	for a := range registry.apps {
		job, r := a.cfg.name, &a.stats.tasks
		r.mu.Lock()
		for tp, ts := range r.tasks {
			p := strconv.Itoa(int(tp.partition))
			add(descTaskLate, float64(ts.lateDropped.Load()), job, tp.topic, p)
			if ts.punctuated.Load() {
				add(descPunctLag, float64(ts.punctuationLag.Load())/1000, job, tp.topic, p)
			}
		}
		for sp, ss := range r.stores {
			p := strconv.Itoa(int(sp.partition))
			add(descStoreSize, float64(ss.sizeBytes.Load()), job, sp.name, p)
			add(descRestoreLeft, float64(ss.restoreRemaining.Load()), job, sp.name, p)
		}
		r.mu.Unlock()
	}
	registry.Unlock()
	for s, v := range values {
		ch <- prometheus.MustNewConstMetric(s.desc, kinds[s.desc], v, s.labels[:]...)
	}
}
