package broker

// Iceberg topics (ARCHITECTURE.md, "Iceberg topics"): a topic with
// iceberg.enabled=true is also an Iceberg v2 table in the object store,
// written by tiering/iceberg. One loop per node (icebergCommitter.loop, a
// server task) commits, for each such topic, the committed records of the
// partitions this node leads: every iceberg.commit.interval.ms, back to
// back while a commit stops at its read budget with records left, and at
// once when asked (POST /v1/iceberg/topics/{topic}/commit, `strata
// iceberg commit`). Each partition resumes from the last offset the table's
// current snapshot records for it, so a restart or a new leader continues
// exactly where the table ends. Produce never waits for it: it reads the
// log like a read_committed consumer, up to the last stable offset, and a
// store outage only delays the next commit.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	icebergschema "github.com/apache/iceberg-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/tiering/iceberg"
)

// The Iceberg topic configs.
const (
	icebergEnabledConfig        = "iceberg.enabled"
	icebergModeConfig           = "iceberg.mode"
	icebergIntervalConfig       = "iceberg.commit.interval.ms"
	icebergTableLocationConfig  = "iceberg.table.location"
	icebergNamespaceConfig      = "iceberg.namespace"
	icebergRetentionConfig      = "iceberg.retention.ms"
	icebergPartitionSpecConfig  = "iceberg.partition.spec"
	icebergTargetFileSizeConfig = "iceberg.target.file.size.bytes"
	icebergCompactionMinConfig  = "iceberg.compaction.min.input.files"
	// Iceberg's write.metadata.previous-versions-max and
	// write.metadata.delete-after-commit.enabled, in Strata's style.
	icebergMetadataVersionsMaxConfig  = "iceberg.metadata.previous.versions.max"
	icebergMetadataDeleteAfterConfig  = "iceberg.metadata.delete.after.commit.enabled"
	icebergDefaultMetadataVersionsMax = "100" // Iceberg's default
	// icebergDefaultMetadataDelete: unlike Iceberg (false), on. Strata is
	// the only writer of these vN.metadata.json files, readers find the
	// table through the hint or the catalog, which name the newest, and
	// time travel goes by snapshot (iceberg.retention.ms), not by old
	// metadata file: kept, a table committed every minute grows 1,440
	// files a day, each holding the whole snapshot list.
	icebergDefaultMetadataDelete = "true"
	// icebergMaintenanceTimeout bounds one maintenance round of a topic
	// (compaction and, hourly, the orphan sweep) on the maintenance
	// goroutine; below iceberg.DefaultMetadataMinAge, as deleting old
	// metadata versions requires of every commit attempt.
	icebergMaintenanceTimeout = 5 * time.Minute
	// icebergManifestCacheEntries bounds the node's cache of decoded
	// manifests (about 450 bytes an entry for a key_value table).
	icebergManifestCacheEntries = 50_000
	icebergDefaultTargetSize    = "134217728" // 128 MiB, Iceberg's write.target-file-size-bytes
	icebergDefaultCompactionMin = "10"
	// icebergOrphanMinAge is the youngest an unreferenced file of a table
	// may be to be deleted (at least 3 commit intervals): far longer than a
	// commit, bounded by icebergCommitTimeout, takes between writing its
	// files and the metadata that references them.
	icebergOrphanMinAge = time.Hour
	// icebergOrphanSweepEvery is how often the leader of partition 0 lists
	// a table's files for orphans.
	icebergOrphanSweepEvery   = time.Hour
	icebergDefaultRetentionMs = "604800000" // 7 days of snapshots
	icebergTopicIDProperty    = "strata.topic-id"
	// icebergPieceBytes is the log bytes a commit reads (all the topic's
	// led partitions together) before it writes them and reads the next
	// piece.
	icebergPieceBytes           = 32 << 20
	icebergMinBytesPerPartition = 1 << 20 // even past the budget, each partition moves on
	// A commit reads and writes pieces of icebergPieceBytes until
	// caught up, but at most this many, or for this long: a commit that
	// grew without bound would only be lost whole to a failure or a
	// leader change, and the table would wait for it.
	icebergMaxPiecesPerCommit = 32
	icebergMaxCommitWork      = 30 * time.Second
	// icebergCommitReserve is the time kept, before a commit's deadline
	// (icebergCommitTimeout), for its manifests and metadata.
	icebergCommitReserve        = 20 * time.Second
	icebergLoopTick             = 250 * time.Millisecond
	icebergCommitTimeout        = 2 * time.Minute
	icebergRetryAfterFailure    = 5 * time.Second
	icebergDefaultNamespace     = "strata"
	icebergDefaultCommitMs      = "60000"
	icebergModeKeyValue         = "key_value"
	icebergModeSchemaIDPrefix   = "value_schema_id_prefix"
	icebergModeSchemaLatest     = "value_schema_latest"
	icebergTablePrefixRoot      = "iceberg"
	icebergStatusPath           = "/v1/iceberg/topics"
	icebergCommitPathSuffix     = "/commit"
	icebergMaxNamespaceOrPrefix = 200
)

func validateIcebergMode(v string) error {
	switch v {
	case icebergModeKeyValue, icebergModeSchemaIDPrefix, icebergModeSchemaLatest:
		return nil
	}
	return fmt.Errorf("%q is not one of key_value, value_schema_id_prefix, value_schema_latest", v)
}

// validateIcebergPrefix accepts "" (the default location) or a relative key
// prefix inside the object store.
func validateIcebergPrefix(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > icebergMaxNamespaceOrPrefix || strings.HasPrefix(v, "/") || strings.Contains(v, "://") || strings.Contains(v, "..") || strings.ContainsAny(v, "\\\x00") {
		return fmt.Errorf("%q is not a relative key prefix inside the object store (like lake/orders)", v)
	}
	return nil
}

// validateIcebergCompactionMin accepts 0 (compaction off) or 2 and more.
func validateIcebergCompactionMin(v string) error {
	if err := validateLong(0)(v); err != nil {
		return err
	}
	if n, _ := strconv.ParseInt(v, 10, 64); n == 1 {
		return fmt.Errorf("1 small file is nothing to compact: use 0 (off) or 2 and more")
	}
	return nil
}

func validateIcebergNamespace(v string) error {
	if v == "" || len(v) > icebergMaxNamespaceOrPrefix || !legalTopicName.MatchString(v) || v == "." || v == ".." {
		return fmt.Errorf("%q is not a namespace: use letters, digits, '.', '_' or '-'", v)
	}
	return nil
}

// icebergTopicEnabled reports the iceberg.enabled config.
func icebergTopicEnabled(cfg effectiveTopicConfig) bool {
	return cfg.values[icebergEnabledConfig] == "true"
}

// icebergCommitRequest asks the loop to commit a topic now.
type icebergCommitRequest struct {
	topic string
	reply chan icebergCommitReply
}

type icebergCommitReply struct {
	status icebergTopicStatus
	err    error
}

// icebergTopicStatus is what `strata iceberg status` shows of one topic
// (counters are this node's since it started).
type icebergTopicStatus struct {
	Topic           string `json:"topic"`
	Location        string `json:"location"`
	MetadataVersion int    `json:"metadata_version"`
	SnapshotID      int64  `json:"snapshot_id,omitempty"`
	RowsCommitted   int64  `json:"rows_committed"`
	// DLQRowsCommitted counts the records of typed modes that did not
	// decode, committed to the dead-letter table DLQLocation.
	DLQRowsCommitted int64  `json:"dlq_rows_committed"`
	DLQLocation      string `json:"dlq_location,omitempty"`
	DLQLastReason    string `json:"dlq_last_reason,omitempty"`
	FilesCommitted   int64  `json:"files_committed"`
	// Compactions counts the replace snapshots this node committed (it
	// compacts the topics whose partition 0 it leads), FilesCompacted the
	// small files they rewrote, OrphansDeleted the unreferenced files it
	// deleted; LastMaintenanceError is the last failure of either (they are
	// tried again after the next commit). Maintenance runs after a commit,
	// on its own goroutine: a commit's reply does not include it.
	Compactions    int64 `json:"compactions"`
	FilesCompacted int64 `json:"files_compacted"`
	OrphansDeleted int64 `json:"orphan_files_deleted"`
	// MetadataFilesDeleted counts the old vN.metadata.json files this
	// node's commits and compactions deleted
	// (iceberg.metadata.delete.after.commit.enabled; those the orphan
	// sweep deletes count as orphans).
	MetadataFilesDeleted int64                    `json:"metadata_files_deleted"`
	LastMaintenanceError string                   `json:"last_maintenance_error,omitempty"`
	BytesCommitted       int64                    `json:"bytes_committed"`
	Commits              int64                    `json:"commits"`
	LastCommit           *time.Time               `json:"last_commit,omitempty"`
	LastError            string                   `json:"last_error,omitempty"`
	LagOffsets           int64                    `json:"lag_offsets"`
	LagSeconds           float64                  `json:"lag_seconds"`
	Partitions           []icebergPartitionStatus `json:"partitions"`
	lastAttempt          time.Time
	lastSuccessOrNew     time.Time

	// CatalogMetadataVersion is the metadata version of the table in the
	// bucket that the external catalog (iceberg.catalog.uri) was last made
	// to match by this node, LastCatalogError the last failure of that
	// sync (iceberg_external.go; retried).
	CatalogMetadataVersion int    `json:"catalog_metadata_version,omitempty"`
	LastCatalogError       string `json:"last_catalog_error,omitempty"`
	// WriterPausedSeconds is the time the writer paused during this
	// topic's commits and maintenance to leave the CPU to a busy node
	// (iceberg.writer.cpu.min.fraction).
	WriterPausedSeconds float64 `json:"writer_paused_seconds"`
	// behind: the last commit read up to its byte budget and left
	// committed records behind, so the next is due at once, not an
	// interval later: a topic produced faster than the budget per
	// interval keeps up instead of falling further behind.
	behind bool
}

// icebergPartitionStatus compares the table with the log of one partition
// this node leads.
type icebergPartitionStatus struct {
	Partition int32 `json:"partition"`
	// TableNextOffset is the first offset the table does not hold yet.
	TableNextOffset  int64 `json:"table_next_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
}

// icebergCommitter runs the node's Iceberg commits (one server task).
type icebergCommitter struct {
	s        *Server
	requests chan icebergCommitRequest
	tables   map[string]*icebergTables // by topic; loop goroutine only
	// arena holds a commit round's records (loop goroutine only).
	arena icebergArena
	// valueSchemas caches the registry schemas of typed modes by id (loop
	// goroutine only).
	valueSchemas map[int]*icebergValueSchema
	// external syncs the external REST catalog, nil without iceberg.catalog.uri.
	external *icebergExternalCatalog
	// manifests caches decoded manifests for every table of the node.
	manifests *iceberg.ManifestCache
	// maintenance holds the topics whose maintenance is due, by topic,
	// for the maintenance goroutine (maintenanceLoop); maintenanceDue
	// wakes it.
	maintenance struct {
		sync.Mutex
		due map[string]icebergMaintenanceJob
	}
	maintenanceDue chan struct{}
	// pieceBytes and minBytesPerPartition are icebergPieceBytes and
	// icebergMinBytesPerPartition; tests lower them.
	pieceBytes, minBytesPerPartition atomic.Int64
	// pacer keeps the commits' conversion within its CPU budget
	// (iceberg_pacer.go; loop goroutine only, found in the commit's
	// context by icebergCtxPacer).
	pacer *icebergPacer
	// maintPacer is the maintenance goroutine's (maintenanceLoop).
	maintPacer *icebergPacer

	mu struct {
		sync.Mutex
		status map[string]*icebergTopicStatus
	}

	rows, files, bytes, failures, dlqRows *prometheus.CounterVec
	compactions, filesCompacted, orphans  *prometheus.CounterVec
	metadataDeleted                       *prometheus.CounterVec
	paused                                *prometheus.CounterVec
	lagOffsets, lagSeconds                *prometheus.GaugeVec
}

func newIcebergCommitter(s *Server) *icebergCommitter {
	c := &icebergCommitter{
		s:        s,
		requests: make(chan icebergCommitRequest),
		tables:   map[string]*icebergTables{},

		valueSchemas:   map[int]*icebergValueSchema{},
		manifests:      iceberg.NewManifestCache(icebergManifestCacheEntries),
		maintenanceDue: make(chan struct{}, 1),
		pacer:          newIcebergPacer(s.logger, func() float64 { return s.conf().IcebergWriterCPUMinFraction }),
		maintPacer:     newIcebergPacer(s.logger, func() float64 { return s.conf().IcebergWriterCPUMinFraction }),
		paused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_writer_paused_seconds_total", Help: "Seconds this node's Iceberg writer paused to leave the CPU to the rest of a busy node (iceberg.writer.cpu.min.fraction), per topic.",
		}, []string{"topic"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_rows_committed_total", Help: "Rows committed to Iceberg tables by this node, per topic.",
		}, []string{"topic"}),
		files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_files_committed_total", Help: "Parquet data files committed to Iceberg tables by this node, per topic.",
		}, []string{"topic"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_bytes_committed_total", Help: "Parquet bytes committed to Iceberg tables by this node, per topic.",
		}, []string{"topic"}),
		dlqRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_dlq_rows_committed_total", Help: "Records of typed Iceberg modes that did not decode, committed to the topic's dead-letter table (<topic>~dlq) by this node, per topic.",
		}, []string{"topic"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_commit_errors_total", Help: "Failed Iceberg commits, per topic (retried).",
		}, []string{"topic"}),
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_compactions_total", Help: "Replace snapshots that rewrote small data files of Iceberg tables, committed by this node, per topic.",
		}, []string{"topic"}),
		filesCompacted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_files_compacted_total", Help: "Small data files of Iceberg tables rewritten into larger ones by this node, per topic.",
		}, []string{"topic"}),
		orphans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_orphan_files_deleted_total", Help: "Files of Iceberg tables no retained snapshot referenced, deleted by this node, per topic.",
		}, []string{"topic"}),
		metadataDeleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_metadata_files_deleted_total", Help: "Old metadata versions (vN.metadata.json) of Iceberg tables deleted by this node's commits, per topic.",
		}, []string{"topic"}),
		lagOffsets: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "strata_iceberg_commit_lag_offsets", Help: "Committed offsets of the partitions this node leads that the Iceberg table does not hold yet, per topic.",
		}, []string{"topic"}),
		lagSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "strata_iceberg_commit_lag_seconds", Help: "Seconds since the Iceberg table last held every committed offset of the partitions this node leads, per topic (0 when it does).",
		}, []string{"topic"}),
	}
	c.mu.status = map[string]*icebergTopicStatus{}
	c.pieceBytes.Store(icebergPieceBytes)
	c.minBytesPerPartition.Store(icebergMinBytesPerPartition)
	if s.cfg.IcebergCatalogURI != "" {
		c.external = newIcebergExternalCatalog(s)
	}
	c.maintenance.due = map[string]icebergMaintenanceJob{}
	s.metrics.registry.MustRegister(c.rows, c.files, c.bytes, c.dlqRows, c.failures, c.lagOffsets, c.lagSeconds,
		c.compactions, c.filesCompacted, c.orphans, c.metadataDeleted, c.paused)
	return c
}

// loop commits due topics until the server stops. A commit runs on this
// goroutine, one at a time, and holds no lock while it reads the log or
// talks to the store. Maintenance runs on a goroutine of its own
// (maintenanceLoop), which loop starts and waits for: a long compaction or
// orphan sweep delays no commit.
func (c *icebergCommitter) loop() {
	// The pacer reads this thread's CPU time as the writer's: every
	// commit runs here, so the goroutine keeps its thread (which exits
	// with it).
	runtime.LockOSThread()
	maintenanceDone := make(chan struct{})
	go func() {
		defer close(maintenanceDone)
		c.maintenanceLoop()
	}()
	defer func() { <-maintenanceDone }()
	ticker := time.NewTicker(icebergLoopTick)
	defer ticker.Stop()
	for {
		select {
		case <-c.s.ctx.Done():
			return
		case req := <-c.requests:
			st, err := c.commitTopic(req.topic, true)
			req.reply <- icebergCommitReply{status: st, err: err}
		case now := <-ticker.C:
			c.forgetDeletedTopics()
			for _, t := range c.s.topics.all() {
				if c.s.ctx.Err() != nil {
					return
				}
				cfg := c.s.topics.topicConfig(t)
				if !icebergTopicEnabled(cfg) {
					c.forget(t.name)
					continue
				}
				if c.due(t.name, cfg, now) {
					_, _ = c.commitTopic(t.name, false)
				}
			}
		}
	}
}

// due reports whether a topic's interval has passed since its last attempt
// (a failed one retries sooner, one that left records behind at its byte
// budget goes on at once).
func (c *icebergCommitter) due(topic string, cfg effectiveTopicConfig, now time.Time) bool {
	interval := time.Duration(cfg.int64(icebergIntervalConfig)) * time.Millisecond
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.mu.status[topic]
	if st == nil || st.behind {
		return true
	}
	if st.LastError != "" {
		interval = min(interval, icebergRetryAfterFailure)
	}
	return now.Sub(st.lastAttempt) >= interval
}

// forgetDeletedTopics drops the status and table of topics that no longer
// exist (the table stays in the bucket).
func (c *icebergCommitter) forgetDeletedTopics() {
	c.mu.Lock()
	var gone []string
	for topic := range c.mu.status {
		if c.s.topics.get(topic) == nil {
			gone = append(gone, topic)
		}
	}
	c.mu.Unlock()
	for _, topic := range gone {
		c.forget(topic)
	}
}

func (c *icebergCommitter) forget(topic string) {
	c.mu.Lock()
	_, had := c.mu.status[topic]
	delete(c.mu.status, topic)
	c.mu.Unlock()
	delete(c.tables, topic)
	c.external.forget(topic)
	c.maintenance.Lock()
	delete(c.maintenance.due, topic)
	c.maintenance.Unlock()
	if had {
		c.lagOffsets.DeleteLabelValues(topic)
		c.lagSeconds.DeleteLabelValues(topic)
	}
}

// tableLocation is where a topic's table lives: its key prefix in the
// object store and the URI readers use for it.
func (c *icebergCommitter) tableLocation(topic string, cfg effectiveTopicConfig) (prefix, location string, err error) {
	prefix = cfg.values[icebergTableLocationConfig]
	if prefix == "" {
		prefix = icebergTablePrefixRoot + "/" + cfg.values[icebergNamespaceConfig] + "/" + topic
	}
	prefix = strings.Trim(prefix, "/")
	base, err := objectStoreBaseURI(c.s.cfg.ObjectStore)
	if err != nil {
		return "", "", err
	}
	return prefix, base + "/" + prefix, nil
}

// objectStoreBaseURI is the URI of the store's root as Iceberg readers
// name files: file:///abs/dir or s3://bucket/prefix.
func objectStoreBaseURI(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("iceberg: object store URL: %w", err)
	}
	switch u.Scheme {
	case "file":
		p := u.Path
		if u.Host == "." {
			p = "." + p
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		return "file://" + strings.TrimRight(filepath.ToSlash(abs), "/"), nil
	case "s3":
		return strings.TrimRight("s3://"+u.Host+"/"+strings.Trim(u.Path, "/"), "/"), nil
	case "mem":
		return "mem://", nil
	}
	return "", fmt.Errorf("iceberg: object store scheme %q has no Iceberg location", u.Scheme)
}

// commitTopic commits what the partitions this node leads hold beyond the
// table. Errors are recorded in the topic's status (and returned).
func (c *icebergCommitter) commitTopic(topic string, requested bool) (icebergTopicStatus, error) {
	now := time.Now()
	t := c.s.topics.get(topic)
	if t == nil {
		return icebergTopicStatus{}, fmt.Errorf("unknown topic %q", topic)
	}
	parts, cfg, meta := c.s.topics.snapshot(t)
	if !icebergTopicEnabled(cfg) {
		return icebergTopicStatus{}, fmt.Errorf("topic %q does not have iceberg.enabled=true", topic)
	}
	var led []*partition
	for _, p := range parts {
		if p != nil && p.IsLeader() {
			led = append(led, p)
		}
	}
	if len(led) == 0 {
		if requested {
			return icebergTopicStatus{}, fmt.Errorf("this node leads no partition of %q: ask its leaders", topic)
		}
		c.forget(topic)
		return icebergTopicStatus{}, nil
	}
	ctx, cancel := context.WithTimeout(withIcebergPacer(c.s.ctx, c.pacer), icebergCommitTimeout)
	defer cancel()
	pausedBefore := c.pacer.paused
	status, err := c.commitPartitions(ctx, topic, cfg, meta.ID.String(), led)
	c.external.afterCommit(topic, cfg, c.tables[topic], status.RowsCommitted > 0 || status.DLQRowsCommitted > 0)
	paused := (c.pacer.paused - pausedBefore).Seconds()
	c.mu.Lock()
	st := c.mu.status[topic]
	if st == nil {
		st = &icebergTopicStatus{Topic: topic, lastSuccessOrNew: now}
		c.mu.status[topic] = st
	}
	st.lastAttempt = now
	if status.Location != "" {
		st.Location = status.Location
	}
	st.DLQLocation = status.DLQLocation
	// Dead letters count once committed, even when the main table's
	// commit after them failed (the retry finds them in the table).
	st.DLQRowsCommitted += status.DLQRowsCommitted
	if status.DLQLastReason != "" {
		st.DLQLastReason = status.DLQLastReason
	}
	st.MetadataFilesDeleted += int64(status.MetadataFilesDeleted)
	st.WriterPausedSeconds += paused
	if err != nil {
		st.LastError = err.Error()
		c.failures.WithLabelValues(topic).Inc()
		// The table is as it was: the lag grows with the log.
		st.LagOffsets = 0
		for i := range st.Partitions {
			if p := c.s.topics.partition(topic, st.Partitions[i].Partition); p != nil {
				st.Partitions[i].LastStableOffset = p.LastStableOffset()
			}
			st.LagOffsets += max(st.Partitions[i].LastStableOffset-st.Partitions[i].TableNextOffset, 0)
		}
		st.behind = false
	} else {
		st.LastError = ""
		st.behind = status.behind
		st.MetadataVersion, st.SnapshotID, st.Partitions = status.MetadataVersion, status.SnapshotID, status.Partitions
		st.RowsCommitted += status.RowsCommitted
		st.FilesCommitted += status.FilesCommitted
		st.BytesCommitted += status.BytesCommitted
		if status.RowsCommitted > 0 {
			st.Commits++
			at := now
			st.LastCommit = &at
		}
		st.LagOffsets = 0
		for _, ps := range st.Partitions {
			st.LagOffsets += max(ps.LastStableOffset-ps.TableNextOffset, 0)
		}
		if st.LagOffsets == 0 {
			st.lastSuccessOrNew = now
		}
	}
	st.LagSeconds = time.Since(st.lastSuccessOrNew).Seconds()
	if st.LagOffsets == 0 && err == nil {
		st.LagSeconds = 0
	}
	out := *st
	out.Partitions = append([]icebergPartitionStatus(nil), st.Partitions...)
	c.mu.Unlock()
	c.external.status(&out)
	if err == nil && len(parts) > 0 && parts[0] != nil && parts[0].IsLeader() {
		// After the status exists: the round adds to it.
		c.scheduleMaintenance(topic, cfg)
	}
	c.rows.WithLabelValues(topic).Add(float64(status.RowsCommitted))
	c.files.WithLabelValues(topic).Add(float64(status.FilesCommitted))
	c.bytes.WithLabelValues(topic).Add(float64(status.BytesCommitted))
	c.dlqRows.WithLabelValues(topic).Add(float64(status.DLQRowsCommitted))
	c.metadataDeleted.WithLabelValues(topic).Add(float64(status.MetadataFilesDeleted))
	c.paused.WithLabelValues(topic).Add(paused)
	c.lagOffsets.WithLabelValues(topic).Set(float64(out.LagOffsets))
	c.lagSeconds.WithLabelValues(topic).Set(out.LagSeconds)
	if err != nil {
		c.s.logger.Warn("iceberg commit failed; will retry", "topic", topic, "err", err)
	}
	return out, err
}

// icebergMaintenanceJob is a topic's maintenance, due after a commit of
// the leader of its partition 0.
type icebergMaintenanceJob struct {
	topic     string
	tables    *icebergTables
	minInputs int // iceberg.compaction.min.input.files
	// orphanMinAge is the youngest an unreferenced file may be to go:
	// icebergOrphanMinAge, or 3 commit intervals if longer.
	orphanMinAge time.Duration
}

// icebergMaintenance is what one round of maintain did.
type icebergMaintenance struct {
	compactions, filesCompacted, orphansDeleted, metadataDeleted int64
	paused                                                       float64 // seconds the writer paused (maintPacer)
}

// scheduleMaintenance makes the topic's maintenance due (once: a topic
// already waiting gets the newer settings) and wakes the maintenance
// goroutine. Loop goroutine only (it reads c.tables).
func (c *icebergCommitter) scheduleMaintenance(topic string, cfg effectiveTopicConfig) {
	tables := c.tables[topic]
	if tables == nil {
		return
	}
	job := icebergMaintenanceJob{topic: topic, tables: tables, minInputs: int(cfg.int64(icebergCompactionMinConfig)),
		orphanMinAge: max(icebergOrphanMinAge, 3*time.Duration(cfg.int64(icebergIntervalConfig))*time.Millisecond)}
	c.maintenance.Lock()
	c.maintenance.due[topic] = job
	c.maintenance.Unlock()
	select {
	case c.maintenanceDue <- struct{}{}:
	default: // already woken
	}
}

// maintenanceLoop runs the due maintenance rounds, one topic at a time,
// each within icebergMaintenanceTimeout, until the server stops. It runs
// beside the commits (loop): a maintenance round's compaction and a
// commit of the same table meet only at the metadata compare-and-swap,
// as commits of two nodes do.
func (c *icebergCommitter) maintenanceLoop() {
	// Its own pacer reads this thread's CPU time, as the loop's does.
	runtime.LockOSThread()
	for {
		select {
		case <-c.s.ctx.Done():
			return
		case <-c.maintenanceDue:
		}
		c.maintenance.Lock()
		due := c.maintenance.due
		c.maintenance.due = map[string]icebergMaintenanceJob{}
		c.maintenance.Unlock()
		topics := make([]string, 0, len(due))
		for topic := range due {
			topics = append(topics, topic)
		}
		sort.Strings(topics)
		for _, topic := range topics {
			if c.s.ctx.Err() != nil {
				return
			}
			ctx, cancel := context.WithTimeout(withIcebergPacer(c.s.ctx, c.maintPacer), icebergMaintenanceTimeout)
			pausedBefore := c.maintPacer.paused
			res, err := c.maintain(ctx, due[topic], time.Now())
			cancel()
			res.paused = (c.maintPacer.paused - pausedBefore).Seconds()
			c.recordMaintenance(topic, res, err)
			if res.compactions > 0 {
				c.external.tablesChanged(topic) // the catalog follows the replace snapshot
			}
		}
	}
}

// maintain compacts the small files of the topic's tables (the main one
// and the dead-letter table) and, every icebergOrphanSweepEvery, deletes
// the files none of their retained snapshots references that are older
// than the job's orphanMinAge (and the old metadata versions commits
// left). The leader of partition 0 runs it after its commits, so one node
// per topic does; a commit racing with a compaction (of this node or
// another) costs a retry, never a row (the compare-and-swap of
// Table.Compact). Compact of a table unchanged since a round that found
// nothing to compact reads no manifest. Maintenance goroutine only.
func (c *icebergCommitter) maintain(ctx context.Context, job icebergMaintenanceJob, now time.Time) (icebergMaintenance, error) {
	var out icebergMaintenance
	tables := job.tables
	sweep := now.Sub(tables.lastOrphanSweep) >= icebergOrphanSweepEvery
	if sweep {
		// Also when the sweep fails: a failing sweep backs off for the
		// interval instead of taking every commit round.
		tables.lastOrphanSweep = now
	}
	for _, tbl := range []*iceberg.Table{tables.main, tables.dlq} {
		if tbl == nil {
			continue
		}
		if job.minInputs >= 2 {
			res, err := tbl.Compact(ctx, job.minInputs)
			out.metadataDeleted += int64(res.MetadataFilesDeleted)
			if err != nil {
				return out, fmt.Errorf("compact %s: %w", tbl.Location(), err)
			}
			if res.FilesRewritten > 0 {
				out.compactions++
				out.filesCompacted += int64(res.FilesRewritten)
				c.s.logger.Info("iceberg: compacted small data files", "topic", job.topic, "table", tbl.Location(),
					"files", res.FilesRewritten, "into", res.FilesWritten, "rows", res.Rows, "version", res.Version)
			}
		}
		if sweep {
			n, err := tbl.RemoveOrphans(ctx, now.Add(-job.orphanMinAge))
			out.orphansDeleted += int64(n)
			if err != nil {
				return out, fmt.Errorf("remove orphans of %s: %w", tbl.Location(), err)
			}
		}
	}
	return out, nil
}

// recordMaintenance adds a maintenance round's outcome to the topic's
// status (if this node still commits it) and metrics.
func (c *icebergCommitter) recordMaintenance(topic string, res icebergMaintenance, err error) {
	c.mu.Lock()
	if st := c.mu.status[topic]; st != nil {
		st.Compactions += res.compactions
		st.FilesCompacted += res.filesCompacted
		st.OrphansDeleted += res.orphansDeleted
		st.MetadataFilesDeleted += res.metadataDeleted
		st.WriterPausedSeconds += res.paused
		st.LastMaintenanceError = ""
		if err != nil {
			st.LastMaintenanceError = err.Error()
		}
	}
	c.mu.Unlock()
	c.compactions.WithLabelValues(topic).Add(float64(res.compactions))
	c.filesCompacted.WithLabelValues(topic).Add(float64(res.filesCompacted))
	c.orphans.WithLabelValues(topic).Add(float64(res.orphansDeleted))
	c.metadataDeleted.WithLabelValues(topic).Add(float64(res.metadataDeleted))
	c.paused.WithLabelValues(topic).Add(res.paused)
	if err != nil {
		c.s.logger.Warn("iceberg compaction or orphan cleanup failed; will retry", "topic", topic, "err", err)
	}
}

func (c *icebergCommitter) commitPartitions(ctx context.Context, topic string, cfg effectiveTopicConfig, topicID string, led []*partition) (icebergTopicStatus, error) {
	var out icebergTopicStatus
	tables, err := c.openTables(topic, cfg, topicID)
	if err != nil {
		return out, err
	}
	tbl := tables.main
	out.Location = tbl.Location()
	if tables.dlq != nil {
		out.DLQLocation = tables.dlq.Location()
		// The catalog lists <topic>~dlq with the topic: it exists (empty)
		// from the first commit on.
		if !tables.dlqCreated {
			if _, err := tables.dlq.Create(ctx); err != nil {
				return out, fmt.Errorf("dead-letter table: %w", err)
			}
			tables.dlqCreated = true
		}
	}
	pending, err := tbl.Begin(ctx)
	if err != nil {
		return out, err
	}
	st := pending.State()
	if owner := st.Metadata.Properties()[icebergTopicIDProperty]; owner != "" && owner != topicID {
		return out, fmt.Errorf("the table at %s belongs to an earlier topic %q (id %s); delete it or set iceberg.table.location", tbl.Location(), topic, owner)
	}
	if _, hasKafka := st.Metadata.CurrentSchema().FindFieldByName(iceberg.KafkaColumn); hasKafka != (tables.dlq != nil) {
		return out, fmt.Errorf("%w: the table at %s was made for another mode than iceberg.mode=%s (delete it or set iceberg.table.location)", errIcebergModeChanged, tbl.Location(), cfg.values[icebergModeConfig])
	}
	// The commit reads the log in pieces of the byte budget, writes each
	// piece's files and lets its records go, and commits the files of
	// all pieces as one snapshot: a backlog costs the memory of one piece,
	// not a snapshot per piece. It stops when caught up, or at
	// icebergMaxPiecesPerCommit or icebergMaxCommitWork; then the next
	// commit is due at once (behind).
	arena := &c.arena
	defer arena.release()
	next := make(map[int32]int64, len(led))
	for _, p := range led {
		// A partition new to the table starts at the local log: history
		// that only the remote log holds is not backfilled. Once in the
		// table, a partition goes on from its last offset, from the remote
		// log if local retention deleted it meanwhile: never a gap.
		next[p.index] = p.Log().LogStartOffset()
		if last, ok := st.LastOffsets[p.index]; ok {
			next[p.index] = last + 1
		}
	}
	read := map[int32]int64{}
	lsos := map[int32]int64{}
	typed := tables.dlq != nil
	began := time.Now()
	var slowest time.Duration
	for piece := 1; ; piece++ {
		pieceStart := time.Now()
		behind, err := c.writePiece(ctx, topic, cfg, tables, pending, led, next, read, lsos, &out)
		arena.release()
		if err != nil {
			return out, err
		}
		slowest = max(slowest, time.Since(pieceStart))
		// Another piece only if two more as slow as the slowest, and the
		// commit, fit well before the commit's deadline: a commit that
		// times out loses all its pieces.
		deadline, _ := ctx.Deadline()
		roomy := deadline.IsZero() || time.Until(deadline) > 2*slowest+icebergCommitReserve
		if !behind || piece >= icebergMaxPiecesPerCommit || time.Since(began) >= icebergMaxCommitWork || !roomy {
			out.behind = behind
			break
		}
	}
	for _, p := range led {
		out.Partitions = append(out.Partitions, icebergPartitionStatus{Partition: p.index, TableNextOffset: next[p.index], LastStableOffset: lsos[p.index]})
	}
	// Offsets read past the last record (markers, aborted transactions)
	// are committed alone only in the typed modes (their records may all
	// have gone to the dead-letter table) or when the commit stopped behind:
	// a run of such batches longer than a commit reads must not be read
	// again and again.
	res, err := pending.Commit(ctx, read, typed || out.behind)
	if err != nil {
		return out, err
	}
	sort.Slice(out.Partitions, func(i, j int) bool { return out.Partitions[i].Partition < out.Partitions[j].Partition })
	out.MetadataVersion, out.SnapshotID = res.Version, res.SnapshotID
	out.RowsCommitted, out.FilesCommitted, out.BytesCommitted = res.Rows, int64(res.Files), res.Bytes
	out.MetadataFilesDeleted += int64(res.MetadataFilesDeleted)
	return out, nil
}

// writePiece reads, for each partition of led from next on, up to the
// byte budget of committed records (all partitions together; each at
// least minBytesPerPartition), and writes them into pending's files; in
// the typed modes, records that do not decode go to the dead-letter table
// first. It moves next and read (the last offset read) on, and records
// each partition's last stable offset in lsos; behind is whether a
// partition has committed records left past what it read. The records are
// in c.arena, which the caller releases.
func (c *icebergCommitter) writePiece(ctx context.Context, topic string, cfg effectiveTopicConfig, tables *icebergTables, pending *iceberg.Pending,
	led []*partition, next, read, lsos map[int32]int64, out *icebergTopicStatus) (behind bool, err error) {
	arena := &c.arena
	records := arena.records[:0]
	budget := int(c.pieceBytes.Load())
	minBytes := int(c.minBytesPerPartition.Load())
	for _, p := range led {
		from := next[p.index]
		n := len(records)
		var readTo, lso int64
		records, readTo, lso, err = readCommittedRecords(ctx, p, from, max(budget, minBytes), arena, records)
		arena.records = records
		if err != nil {
			return false, fmt.Errorf("partition %d: %w", p.index, err)
		}
		for _, r := range records[n:] {
			budget -= len(r.Key) + len(r.Value) + 64
		}
		lsos[p.index] = lso
		if readTo > from {
			read[p.index] = readTo - 1
			next[p.index] = readTo
			// Stopped at the budget with committed records left.
			behind = behind || readTo < lso
		}
		// Past what the table holds, only control batches and aborted
		// transactions are left below readTo: nothing is behind.
	}
	var valueTypes []*icebergschema.StructType
	if tables.dlq != nil {
		schema, lastColumnID := pending.Schema()
		rows, dead, types, err := c.decodeTyped(ctx, topic, cfg, schema, lastColumnID, records)
		if err != nil {
			return false, err
		}
		if len(dead) > 0 {
			// The dead-letter table first: the main table's offsets, where
			// the next commit resumes, move only once these are in.
			letters := make([]iceberg.Record, len(dead))
			for i, d := range dead {
				letters[i] = d.record
			}
			res, err := tables.dlq.Append(ctx, letters, nil)
			if err != nil {
				return false, fmt.Errorf("dead-letter table: %w", err)
			}
			out.DLQRowsCommitted += res.Rows
			out.MetadataFilesDeleted += int64(res.MetadataFilesDeleted)
			last := dead[len(dead)-1]
			out.DLQLastReason = fmt.Sprintf("%d/%d: %s", last.record.Partition, last.record.Offset, last.reason)
			if res.Rows > 0 {
				c.s.logger.Warn("iceberg: records that do not decode went to the dead-letter table", "topic", topic, "records", res.Rows, "last", out.DLQLastReason)
			}
		}
		records, valueTypes = rows, types
	}
	return behind, pending.Write(ctx, records, valueTypes)
}

// icebergTables are a topic's tables: the main one and, in the typed
// modes, the dead-letter table.
type icebergTables struct {
	settings   icebergTableSettings // what they were opened with
	main, dlq  *iceberg.Table
	dlqCreated bool // dlq exists in the store
	// lastOrphanSweep is when maintain last looked for orphans
	// (maintenance goroutine only).
	lastOrphanSweep time.Time
}

// icebergTableSettings are the topic configs a topic's tables are opened
// with: a change of one opens them again.
type icebergTableSettings struct {
	mode, partitioning         string
	targetFileSize, retention  int64
	metadataVersionsMax        int64
	metadataDeleteAfterCommits bool
}

// openTables returns the topic's tables, opened again when their settings
// changed.
func (c *icebergCommitter) openTables(topic string, cfg effectiveTopicConfig, topicID string) (*icebergTables, error) {
	settings := icebergTableSettings{
		mode:                       cfg.values[icebergModeConfig],
		partitioning:               strings.TrimSuffix(cfg.values[icebergPartitionSpecConfig], "(timestamp)"),
		targetFileSize:             cfg.int64(icebergTargetFileSizeConfig),
		retention:                  cfg.int64(icebergRetentionConfig),
		metadataVersionsMax:        cfg.int64(icebergMetadataVersionsMaxConfig),
		metadataDeleteAfterCommits: cfg.values[icebergMetadataDeleteAfterConfig] == "true",
	}
	if tables := c.tables[topic]; tables != nil && tables.settings == settings {
		return tables, nil
	}
	prefix, location, err := c.tableLocation(topic, cfg)
	if err != nil {
		return nil, err
	}
	open := func(prefix, location string, layout iceberg.Layout, props map[string]string) (*iceberg.Table, error) {
		return iceberg.Open(iceberg.Config{
			Store: c.s.objects, Prefix: prefix, Location: location, Properties: props, Layout: layout,
			SnapshotRetention:           time.Duration(settings.retention) * time.Millisecond,
			Partitioning:                settings.partitioning,
			TargetFileSize:              settings.targetFileSize,
			MetadataPreviousVersionsMax: int(settings.metadataVersionsMax),
			MetadataDeleteAfterCommit:   settings.metadataDeleteAfterCommits,
			ManifestCache:               c.manifests,
			Pacer:                       icebergCtxPacer{},
		})
	}
	tables := &icebergTables{settings: settings}
	layout := iceberg.LayoutKeyValue
	if icebergTyped(cfg) {
		layout = iceberg.LayoutTyped
		tables.dlq, err = open(prefix+icebergDLQSuffix, location+icebergDLQSuffix, iceberg.LayoutKeyValue,
			map[string]string{icebergTopicIDProperty: topicID, "strata.topic": topic, "strata.dead-letter-of": topic})
		if err != nil {
			return nil, err
		}
	}
	tables.main, err = open(prefix, location, layout, map[string]string{icebergTopicIDProperty: topicID, "strata.topic": topic})
	if err != nil {
		return nil, err
	}
	c.tables[topic] = tables
	return tables, nil
}

// readCommittedRecords reads the records of p from offset from up to its
// last stable offset, as a read_committed consumer sees them: control
// batches and the batches of aborted transactions are left out. It stops
// after about maxBytes of batches, and returns the offset it read up to
// (exclusive). Offsets below the local log start are read from the remote
// log when the partition is tiered, so retention deleting local segments
// before the table got them leaves no gap; only what neither log holds
// any more (deleted by retention everywhere, or a non-tiered partition's)
// is skipped. Decoding paces with the pacer in ctx (icebergCtxPacer).
// The records are appended to dst (returned as it is on an error), and
// live in arena (nil: the heap).
func readCommittedRecords(ctx context.Context, p *partition, from int64, maxBytes int, arena *icebergArena, dst []iceberg.Record) (records []iceberg.Record, readTo, lso int64, err error) {
	lso = p.LastStableOffset()
	if from >= lso {
		return dst, from, lso, nil
	}
	log := p.Log()
	start := from
	out := dst
	read := 0
	pace := iceberg.NewPaceCounter(icebergCtxPacer{})
	for from < lso && read < maxBytes {
		var data []byte
		var aborted []storage.AbortedTxn
		if local := log.LogStartOffset(); from < local {
			if p.remote.unavailable() {
				// Tiered, but the manifest is not loaded (yet): what the
				// remote log holds is unknown, so nothing may be skipped.
				return dst, from, lso, fmt.Errorf("read offset %d: %w", from, errManifestNotLoaded)
			}
			remoteStart, _, remote := p.remote.readable()
			if !remote || from < remoteStart {
				// Gone from both logs: the table goes on from what is left.
				if remote && remoteStart < local {
					from = remoteStart
				} else {
					from = local
				}
				continue
			}
			data, aborted, err = readRemoteBatches(ctx, p.remote, from, maxBytes-read)
			if errors.Is(err, errNotRemote) {
				// The remote log moved under the read: from is past its
				// end (the local log goes on), or retention removed the
				// segment holding it (the top of the loop moves to the
				// new remote start). Never further: that would skip
				// records the remote log still holds.
				if rs, next, ok := p.remote.readable(); ok && from >= next {
					from = local
					continue
				} else if ok && from < rs {
					continue
				}
				return dst, from, lso, fmt.Errorf("read offset %d: %w", from, err)
			}
		} else {
			data, aborted, err = readLocalBatches(log, from, maxBytes-read, lso, arena)
		}
		if err != nil {
			return dst, from, lso, fmt.Errorf("read offset %d: %w", from, err)
		}
		if len(data) == 0 {
			break
		}
		read += len(data)
		next, recs, err := committedRecordsOf(ctx, pace, p.index, data, from, start, lso, aborted, arena, out)
		if err != nil {
			return dst, from, lso, err
		}
		out = recs
		if next <= from {
			break
		}
		from = next
	}
	return out, from, lso, nil
}

// readLocalBatches reads up to maxBytes of the local log's batches from
// offset from, and the aborted transactions overlapping [from, lso).
func readLocalBatches(log replica.LocalLog, from int64, maxBytes int, lso int64, arena *icebergArena) ([]byte, []storage.AbortedTxn, error) {
	chunk, err := log.Read(from, maxBytes, lso, true)
	if err != nil || chunk.Len <= 0 {
		return nil, nil, err
	}
	data, err := arena.read(chunk)
	if err != nil {
		return nil, nil, err
	}
	aborted, err := log.AbortedTxns(from, lso)
	return data, aborted, err
}

// readRemoteBatches reads up to maxBytes of the remote log's batches from
// offset from (within one remote segment, through the chunk cache: loaded
// first, then read), and the aborted transactions a read_committed fetch
// of them needs. errNotRemote if from is not in the remote log.
func readRemoteBatches(ctx context.Context, r *remoteLog, from int64, maxBytes int) ([]byte, []storage.AbortedTxn, error) {
	for attempt := 0; ; attempt++ {
		if _, err := (remoteReader{r: r, ctx: ctx, wait: true}).read(from, maxBytes, true); err != nil {
			return nil, nil, err
		}
		chunks, err := remoteReader{r: r, ctx: ctx}.read(from, maxBytes, true)
		if errors.Is(err, errNotCached) && attempt < 3 {
			continue // evicted between the load and the read
		}
		if err != nil {
			return nil, nil, err
		}
		var data []byte
		for _, c := range chunks {
			b, rerr := c.ReadAll()
			c.File.Close()
			if rerr != nil && err == nil {
				err = rerr
			}
			data = append(data, b...)
		}
		if err != nil {
			return nil, nil, err
		}
		aborted, err := r.abortedFor(remoteReader{r: r, ctx: ctx, wait: true}, from)
		return data, aborted, err
	}
}

// committedRecordsOf decodes the whole batches of data (read at offset
// from) that a read_committed consumer gets, keeping records in [start,
// lso), and returns the offset after the last batch it went past. It
// paces after every batch. The records are appended to dst (returned as it
// is on an error) and live in arena (nil: the heap).
func committedRecordsOf(ctx context.Context, pace *iceberg.PaceCounter, partition int32, data []byte, from, start, lso int64, aborted []storage.AbortedTxn, arena *icebergArena, dst []iceberg.Record) (int64, []iceberg.Record, error) {
	out := dst
	for len(data) >= storage.BatchHeaderSize {
		h, err := storage.ParseBatchHeader(data)
		if err != nil {
			return from, dst, err
		}
		if h.Size() > len(data) {
			break // cut at maxBytes: the next read starts here
		}
		batch := data[:h.Size()]
		data = data[h.Size():]
		if h.BaseOffset >= lso {
			return lso, out, nil
		}
		if next := h.LastOffset() + 1; next > from {
			from = next
		}
		if h.IsControl() || (h.IsTransactional() && isAborted(aborted, h.ProducerID, h.BaseOffset)) {
			continue
		}
		recs, err := arena.decode(batch)
		if err != nil {
			return from, dst, fmt.Errorf("decode batch at offset %d: %w", h.BaseOffset, err)
		}
		for _, r := range recs {
			if r.Offset >= start && r.Offset < lso {
				out = append(out, toIcebergRecord(partition, r))
			}
		}
		if err := pace.Add(ctx, len(recs), h.Size()); err != nil {
			return from, dst, err
		}
	}
	return from, out, nil
}

func isAborted(aborted []storage.AbortedTxn, producerID, offset int64) bool {
	for _, a := range aborted {
		if a.ProducerID == producerID && offset >= a.FirstOffset && offset <= a.LastOffset {
			return true
		}
	}
	return false
}

func toIcebergRecord(partition int32, r storage.Record) iceberg.Record {
	out := iceberg.Record{
		Partition: partition,
		Offset:    r.Offset,
		Timestamp: time.UnixMilli(r.Timestamp).UTC(),
		Key:       r.Key,
		Value:     r.Value,
	}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, iceberg.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

// statuses lists the topics this node commits, by name.
func (c *icebergCommitter) statuses() []icebergTopicStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]icebergTopicStatus, 0, len(c.mu.status))
	for _, st := range c.mu.status {
		cp := *st
		cp.Partitions = append([]icebergPartitionStatus(nil), st.Partitions...)
		if cp.LagOffsets > 0 {
			cp.LagSeconds = time.Since(st.lastSuccessOrNew).Seconds()
		}
		out = append(out, cp)
	}
	for i := range out {
		c.external.status(&out[i]) // lock order: c.mu, then its own
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// mountIcebergRoutes adds GET /v1/iceberg/topics (status) and POST
// /v1/iceberg/topics/{topic}/commit (commit now) to the admin listener.
func (c *icebergCommitter) mountIcebergRoutes(mux *http.ServeMux) {
	mux.HandleFunc(icebergStatusPath, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeAdminJSON(w, http.StatusMethodNotAllowed, adminErrorJSON{Error: "method " + r.Method + " not allowed"})
			return
		}
		writeAdminJSON(w, http.StatusOK, c.statuses())
	})
	mux.HandleFunc(icebergStatusPath+"/{topic}"+icebergCommitPathSuffix, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeAdminJSON(w, http.StatusMethodNotAllowed, adminErrorJSON{Error: "method " + r.Method + " not allowed"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), icebergCommitTimeout+10*time.Second)
		defer cancel()
		st, err := c.commitNow(ctx, r.PathValue("topic"))
		switch {
		case errors.Is(err, errIcebergCommitterBusy):
			writeAdminJSON(w, http.StatusServiceUnavailable, adminErrorJSON{Error: err.Error()})
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			writeAdminJSON(w, http.StatusGatewayTimeout, adminErrorJSON{Error: "the commit did not finish in time; it goes on in the background"})
		case err != nil && st.Topic == "":
			writeAdminJSON(w, http.StatusBadRequest, adminErrorJSON{Error: err.Error()})
		case err != nil:
			writeAdminJSON(w, http.StatusInternalServerError, adminErrorJSON{Error: err.Error()})
		default:
			writeAdminJSON(w, http.StatusOK, st)
		}
	})
}

// errIcebergCommitterBusy: the loop did not take a commit request in time
// (a long commit in progress) or the server is stopping.
var errIcebergCommitterBusy = errors.New("the Iceberg committer is busy or stopping")

// commitNow has the loop commit topic at once and waits for the outcome.
func (c *icebergCommitter) commitNow(ctx context.Context, topic string) (icebergTopicStatus, error) {
	reply := make(chan icebergCommitReply, 1)
	select {
	case c.requests <- icebergCommitRequest{topic: topic, reply: reply}:
	case <-ctx.Done():
		return icebergTopicStatus{}, errIcebergCommitterBusy
	case <-c.s.ctx.Done():
		return icebergTopicStatus{}, errIcebergCommitterBusy
	}
	select {
	case rep := <-reply:
		return rep.status, rep.err
	case <-ctx.Done():
		return icebergTopicStatus{}, ctx.Err()
	}
}
