package iceberg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/strata-streaming/strata/tiering"
)

// SummaryLastOffsets is the snapshot-summary property that carries, as a
// JSON object from Kafka partition to offset, the last offset of each
// partition the table holds. Every snapshot carries the whole map forward,
// so the current snapshot alone says where each partition resumes.
const SummaryLastOffsets = "strata.kafka.last-offsets"

// Sentinel errors.
var (
	// ErrConflict: another writer committed the version this one was about
	// to write. Append retries on it; it surfaces only when retries run out.
	ErrConflict = errors.New("iceberg: concurrent commit")
	// ErrCorruptTable: the table's metadata cannot be read as Iceberg.
	ErrCorruptTable = errors.New("iceberg: corrupt table metadata")
)

// Config says where a table lives.
type Config struct {
	// Store holds the table's objects.
	Store tiering.ObjectStore
	// Prefix is the table's key prefix in Store, e.g. "iceberg/strata/orders".
	Prefix string
	// Location is the URI readers use for Prefix, written into the metadata,
	// e.g. "s3://bucket/p/iceberg/strata/orders" or "file:///data/objects/iceberg/strata/orders".
	Location string
	// Properties are the table properties set when the table is created.
	Properties map[string]string
	// Partitioning is the partition spec of a table this creates: "hour"
	// (hour(timestamp), the default when empty), "day" (day(timestamp)) or
	// "none". An existing table keeps its spec.
	Partitioning string
	// SnapshotRetention, if > 0, expires snapshots older than this at each
	// commit (the current one always stays): metadata stops growing with
	// the number of commits. Rows stay: every data file is still listed by
	// the current snapshot, since commits only append. No file is deleted.
	SnapshotRetention time.Duration
	// Layout is how rows are stored: LayoutKeyValue (the default) or
	// LayoutTyped, whose table starts with only KafkaColumn and gains the
	// value's columns from the value schemas of AppendWith.
	Layout Layout
	// TargetFileSize is about the largest data file a commit or a
	// compaction writes, in bytes: the rows of one partition value past it
	// go to further files. 0 means DefaultTargetFileSize.
	TargetFileSize int64
	// MetadataPreviousVersionsMax is how many previous metadata versions
	// each version's metadata-log lists (Iceberg's
	// write.metadata.previous-versions-max, which every commit sets as that
	// table property). 0 means DefaultMetadataPreviousVersionsMax.
	MetadataPreviousVersionsMax int
	// MetadataDeleteAfterCommit deletes, after each commit, the
	// vK.metadata.json files that left the metadata-log (Iceberg's
	// write.metadata.delete-after-commit.enabled, also set as that table
	// property), and has RemoveOrphans delete those a commit left behind:
	// the store keeps the current version and the
	// MetadataPreviousVersionsMax before it. Only files of this writer's
	// naming (vK.metadata.json) are deleted, never another writer's.
	MetadataDeleteAfterCommit bool
	// MetadataMinAge: a previous version younger than this is not deleted,
	// even past MetadataPreviousVersionsMax. It must be longer than any
	// writer's commit attempt of the table can take (from its Load to its
	// PutIfAbsent of the next version; see deleteOldVersions). 0 means
	// DefaultMetadataMinAge.
	MetadataMinAge time.Duration
	// ManifestCache keeps decoded manifests and manifest lists (immutable
	// once written) for Compact, RemoveOrphans and merging appends; one
	// cache may serve many tables. nil gives the table a cache of its own
	// of DefaultManifestCacheEntries.
	ManifestCache *ManifestCache
	// Pacer, if set, is called between pieces of the CPU-heavy work of
	// Append and Compact (Arrow columns, Parquet encoding, reading files
	// back) and may sleep: how the broker keeps the writer from taking
	// the CPU produce needs.
	Pacer Pacer
}

// Defaults for the metadata versions a table keeps: Iceberg's count, and
// an age below which Strata deletes none.
const (
	DefaultMetadataPreviousVersionsMax = table.MetadataPreviousVersionsMaxDefault // 100
	// DefaultMetadataMinAge is well past the longest commit attempt of
	// Strata's writers (the broker bounds a commit by 2 minutes and a
	// maintenance round by 5).
	DefaultMetadataMinAge = 15 * time.Minute
)

// DefaultTargetFileSize is the target data file size when Config has none
// (Iceberg's write.target-file-size-bytes default for Parquet).
const DefaultTargetFileSize = 128 << 20

// maxManifests bounds the manifests a snapshot lists: a commit that would
// exceed it merges them all into its own (merge-append).
const maxManifests = 32

// Table writes one Iceberg v2 table. A Table is not safe for concurrent
// Appends (the broker runs one committer per table per node), but Compact
// and RemoveOrphans may run beside an Append (the broker's maintenance
// goroutine); Tables of one location on several nodes are: each commit is
// a compare-and-swap of the next metadata version, retried on a lost race.
type Table struct {
	cfg Config
	// compactChecked is the snapshot and minInputFiles of the last Compact
	// that found nothing to do: the same snapshot has the same files, so a
	// Compact of it again reads no manifest.
	compactChecked struct {
		sync.Mutex
		snapshotID    int64
		minInputFiles int
	}
	// fileSizeRatio is the size of the last data file cut at the target
	// per byte of recordSize's estimate of its rows (1 at first): the
	// next commit's files are cut at TargetFileSize/fileSizeRatio
	// estimated bytes, so they come out at about the target.
	fileSizeRatio float64
}

// Open returns the table at cfg; nothing is read or written until Load,
// Create or Append.
func Open(cfg Config) (*Table, error) {
	if cfg.Store == nil {
		return nil, errors.New("iceberg: no object store")
	}
	cfg.Prefix = strings.Trim(cfg.Prefix, "/")
	cfg.Location = strings.TrimRight(cfg.Location, "/")
	if cfg.Prefix == "" || cfg.Location == "" {
		return nil, errors.New("iceberg: a table needs a prefix and a location")
	}
	if cfg.TargetFileSize < 0 {
		return nil, fmt.Errorf("iceberg: target file size %d is negative", cfg.TargetFileSize)
	}
	if cfg.TargetFileSize == 0 {
		cfg.TargetFileSize = DefaultTargetFileSize
	}
	if cfg.MetadataPreviousVersionsMax < 0 || cfg.MetadataMinAge < 0 {
		return nil, fmt.Errorf("iceberg: metadata versions to keep (%d) and their minimum age (%s) must not be negative", cfg.MetadataPreviousVersionsMax, cfg.MetadataMinAge)
	}
	if cfg.MetadataPreviousVersionsMax == 0 {
		cfg.MetadataPreviousVersionsMax = DefaultMetadataPreviousVersionsMax
	}
	if cfg.MetadataMinAge == 0 {
		cfg.MetadataMinAge = DefaultMetadataMinAge
	}
	if cfg.ManifestCache == nil {
		cfg.ManifestCache = NewManifestCache(DefaultManifestCacheEntries)
	}
	return &Table{cfg: cfg, fileSizeRatio: 1}, nil
}

// Location is the table's URI.
func (t *Table) Location() string { return t.cfg.Location }

// State is a table as of one metadata version.
type State struct {
	// Version is N of metadata/vN.metadata.json; 0 means no table yet.
	Version          int
	MetadataLocation string
	Metadata         table.Metadata
	// MetadataJSON is the metadata file as stored.
	MetadataJSON []byte
	// LastOffsets is, per Kafka partition, the last offset the current
	// snapshot holds. A partition absent has nothing in the table.
	LastOffsets map[int32]int64
}

func (t *Table) metadataKey(version int) string {
	return fmt.Sprintf("%s/metadata/v%d.metadata.json", t.cfg.Prefix, version)
}

func (t *Table) metadataLocation(version int) string {
	return fmt.Sprintf("%s/metadata/v%d.metadata.json", t.cfg.Location, version)
}

// versionOfKey is N if key is this table's metadata/vN.metadata.json, as
// this writer names it (no sign, no leading zero); another writer's
// metadata file (an engine's NNNNN-<uuid>.metadata.json) is not.
func (t *Table) versionOfKey(key string) (int, bool) {
	name, ok := strings.CutPrefix(key, t.cfg.Prefix+"/metadata/v")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 9 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.Atoi(digits)
	return v, err == nil
}

func (t *Table) hintKey() string { return t.cfg.Prefix + "/metadata/version-hint.text" }

// keyOf maps a location inside the table back to its object key.
func (t *Table) keyOf(location string) (string, error) {
	rest, ok := strings.CutPrefix(location, t.cfg.Location+"/")
	if !ok {
		return "", fmt.Errorf("%w: %q is outside the table's location %q", ErrCorruptTable, location, t.cfg.Location)
	}
	return t.cfg.Prefix + "/" + rest, nil
}

func (t *Table) getAll(ctx context.Context, key string) ([]byte, error) {
	rc, err := t.cfg.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// getLocation reads the whole object at a location inside the table.
func (t *Table) getLocation(ctx context.Context, location string) ([]byte, error) {
	key, err := t.keyOf(location)
	if err != nil {
		return nil, err
	}
	return t.getAll(ctx, key)
}

func (t *Table) put(ctx context.Context, key string, data []byte) error {
	return t.cfg.Store.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
}

// Load reads the table's current metadata: version-hint.text names a
// version, and any later vN.metadata.json (a writer that stopped between
// the metadata and the hint) wins. Without a hint, or when the version it
// names is gone (deleted as an old version while the hint lagged behind),
// the newest vN.metadata.json listed is where the search starts. No table
// is State{Version: 0}.
func (t *Table) Load(ctx context.Context) (State, error) {
	version, hinted, err := t.readHint(ctx)
	if err != nil {
		return State{}, err
	}
	if !hinted {
		if version, err = t.newestListedVersion(ctx); err != nil {
			return State{}, err
		}
	}
	version, raw, err := t.readFrom(ctx, version)
	if errors.Is(err, tiering.ErrNotFound) && hinted {
		// The hinted version is no more: start from what is there.
		hintedVersion := version
		if version, err = t.newestListedVersion(ctx); err != nil {
			return State{}, err
		}
		if version == 0 {
			return State{}, fmt.Errorf("%w: version-hint.text names v%d, and no metadata version is left", ErrCorruptTable, hintedVersion)
		}
		version, raw, err = t.readFrom(ctx, version)
	}
	if err != nil {
		return State{}, err
	}
	if version == 0 {
		return State{LastOffsets: map[int32]int64{}}, nil
	}
	md, err := table.ParseMetadataBytes(raw)
	if err != nil {
		return State{}, fmt.Errorf("%w: v%d: %v", ErrCorruptTable, version, err)
	}
	offsets, err := lastOffsets(md.CurrentSnapshot())
	if err != nil {
		return State{}, err
	}
	return State{
		Version:          version,
		MetadataLocation: t.metadataLocation(version),
		Metadata:         md,
		MetadataJSON:     raw,
		LastOffsets:      offsets,
	}, nil
}

// readHint returns the version version-hint.text names; hinted is false
// when there is none (a writer may have stopped after v1 but before the
// hint).
func (t *Table) readHint(ctx context.Context) (version int, hinted bool, err error) {
	hint, err := t.getAll(ctx, t.hintKey())
	if errors.Is(err, tiering.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("iceberg: read version hint: %w", err)
	}
	v, perr := strconv.Atoi(strings.TrimSpace(string(hint)))
	if perr != nil || v < 1 {
		return 0, false, fmt.Errorf("%w: version-hint.text holds %q", ErrCorruptTable, hint)
	}
	return v, true, nil
}

// readFrom looks for versions after version and reads the last one there
// is (nothing for version 0 with none after it). A missing version is an
// error wrapping tiering.ErrNotFound.
func (t *Table) readFrom(ctx context.Context, version int) (int, []byte, error) {
	for {
		_, err := t.cfg.Store.Head(ctx, t.metadataKey(version+1))
		if errors.Is(err, tiering.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("iceberg: look for metadata v%d: %w", version+1, err)
		}
		version++
	}
	if version == 0 {
		return 0, nil, nil
	}
	raw, err := t.getAll(ctx, t.metadataKey(version))
	if err != nil {
		return version, nil, fmt.Errorf("iceberg: read metadata v%d: %w", version, err)
	}
	return version, raw, nil
}

// newestListedVersion is the highest N of the table's vN.metadata.json
// files (0 if none). Only the keys starting with metadata/v are listed:
// the versions and the hint, not the manifests.
func (t *Table) newestListedVersion(ctx context.Context) (int, error) {
	objects, err := t.cfg.Store.List(ctx, t.cfg.Prefix+"/metadata/v")
	if err != nil {
		return 0, fmt.Errorf("iceberg: list metadata versions: %w", err)
	}
	newest := 0
	for _, o := range objects {
		if v, ok := t.versionOfKey(o.Key); ok {
			newest = max(newest, v)
		}
	}
	return newest, nil
}

func lastOffsets(snap *table.Snapshot) (map[int32]int64, error) {
	out := map[int32]int64{}
	if snap == nil || snap.Summary == nil {
		return out, nil
	}
	raw, ok := snap.Summary.Properties[SummaryLastOffsets]
	if !ok {
		return out, nil
	}
	var byName map[string]int64
	if err := json.Unmarshal([]byte(raw), &byName); err != nil {
		return nil, fmt.Errorf("%w: snapshot %d: %s: %v", ErrCorruptTable, snap.SnapshotID, SummaryLastOffsets, err)
	}
	for name, off := range byName {
		p, err := strconv.ParseInt(name, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("%w: snapshot %d: partition %q", ErrCorruptTable, snap.SnapshotID, name)
		}
		out[int32(p)] = off
	}
	return out, nil
}

// writeVersion stores metadata as version v and points the hint at it. It
// refuses (ErrConflict) if v exists already: with a store that is a
// tiering.ConditionalPutter (all three of Strata's) through PutIfAbsent, so
// of two writers racing for v exactly one wins; with another store by a
// Head first, which leaves a small window.
func (t *Table) writeVersion(ctx context.Context, v int, md table.Metadata) ([]byte, error) {
	raw, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("iceberg: encode metadata: %w", err)
	}
	key := t.metadataKey(v)
	if cp, ok := t.cfg.Store.(tiering.ConditionalPutter); ok {
		err := cp.PutIfAbsent(ctx, key, bytes.NewReader(raw), int64(len(raw)))
		if errors.Is(err, tiering.ErrExists) {
			return nil, fmt.Errorf("%w: v%d exists", ErrConflict, v)
		}
		if err != nil {
			return nil, fmt.Errorf("iceberg: write metadata v%d: %w", v, err)
		}
	} else {
		if _, err := t.cfg.Store.Head(ctx, key); err == nil {
			return nil, fmt.Errorf("%w: v%d exists", ErrConflict, v)
		} else if !errors.Is(err, tiering.ErrNotFound) {
			return nil, fmt.Errorf("iceberg: check metadata v%d: %w", v, err)
		}
		if err := t.put(ctx, key, raw); err != nil {
			return nil, fmt.Errorf("iceberg: write metadata v%d: %w", v, err)
		}
	}
	// The hint is a convenience for readers without a catalog; Load looks
	// past it, so a failure here loses nothing.
	if err := t.put(ctx, t.hintKey(), []byte(strconv.Itoa(v))); err != nil {
		return raw, fmt.Errorf("%w: metadata v%d written, version hint not: %w", errHintOnly, v, err)
	}
	return raw, nil
}

// errHintOnly marks a commit whose metadata landed but whose hint did not.
var errHintOnly = errors.New("iceberg: version hint not updated")

// Create makes the table (key_value schema, or for LayoutTyped
// TypedSchema; partitioned by hour(timestamp) unless Partitioning says
// otherwise) if it does not exist, and returns its state.
func (t *Table) Create(ctx context.Context) (State, error) {
	st, err := t.Load(ctx)
	if err != nil || st.Version > 0 {
		return st, err
	}
	schema, timestampID := KeyValueSchema(), fieldTimestamp
	if t.cfg.Layout == LayoutTyped {
		schema = TypedSchema()
		f, _ := schema.FindFieldByName(kafkaTimestampColumn)
		timestampID = f.ID
	}
	spec, err := partitionSpecOn(timestampID, t.cfg.Partitioning)
	if err != nil {
		return State{}, err
	}
	props := iceberg.Properties{table.PropertyFormatVersion: "2", "write.format.default": "parquet"}
	maps.Copy(props, t.cfg.Properties)
	maps.Copy(props, t.metadataProperties())
	md, err := table.NewMetadata(schema, &spec, table.UnsortedSortOrder, t.cfg.Location, props)
	if err != nil {
		return State{}, fmt.Errorf("iceberg: new table metadata: %w", err)
	}
	if _, err := t.writeVersion(ctx, 1, md); err != nil && !errors.Is(err, ErrConflict) {
		return State{}, err
	}
	return t.Load(ctx)
}

// CommitResult says what an Append committed.
type CommitResult struct {
	// Version is the metadata version written (the one before if nothing was).
	Version    int
	SnapshotID int64
	Rows       int64
	Files      int
	Bytes      int64
	// LastOffsets is the table's per-partition last offset after the commit.
	LastOffsets map[int32]int64
	// MetadataFilesDeleted counts the old metadata versions the commit
	// deleted (Config.MetadataDeleteAfterCommit).
	MetadataFilesDeleted int
}

// appendAttempts bounds the retries of a commit that lost a race.
const appendAttempts = 5

// Append commits records as one snapshot: Parquet files, one per hour the
// records span (more when an hour's rows pass Config.TargetFileSize), a manifest, a manifest list, metadata vN+1 and the hint.
// Records at or below a partition's last offset in the table are dropped
// first, so appending the same records again (a retry after a failure whose
// outcome was unknown, or a new leader re-reading) never duplicates a row.
// Within a partition the records must be in offset order. read, if not
// nil, is per partition the last offset the caller read (control batches
// and aborted transactions past the last record included): the summary
// records it when a snapshot is written, so the next reader starts after
// it.
func (t *Table) Append(ctx context.Context, records []Record, read map[int32]int64) (CommitResult, error) {
	return t.AppendWith(ctx, records, read, AppendOptions{})
}

// AppendOptions are the choices of AppendWith beyond Append's.
type AppendOptions struct {
	// ValueTypes (LayoutTyped): the structs (AvroStruct, JSONSchemaStruct)
	// of the schemas the records' values were decoded with. Each is merged
	// into the table's schema by name before the rows are written: new
	// columns get new field IDs, existing ones keep theirs, and if the
	// schema changed the commit adds it and makes it current.
	ValueTypes []*iceberg.StructType
	// CommitProgress: commit a snapshot even with no new row when read
	// takes a partition past the table's last offset (its records went to
	// another table, the dead-letter table), so the table's offsets, where
	// the next read resumes, move on.
	CommitProgress bool
}

// AppendWith is Append with options.
func (t *Table) AppendWith(ctx context.Context, records []Record, read map[int32]int64, opts AppendOptions) (CommitResult, error) {
	var lastErr error
	for range appendAttempts {
		res, err := t.appendOnce(ctx, records, read, opts)
		if !errors.Is(err, ErrConflict) {
			return res, err
		}
		lastErr = err
	}
	return CommitResult{}, lastErr
}

func (t *Table) appendOnce(ctx context.Context, records []Record, read map[int32]int64, opts AppendOptions) (CommitResult, error) {
	p, err := t.Begin(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	if err := p.Write(ctx, records, opts.ValueTypes); err != nil {
		return CommitResult{}, err
	}
	return p.Commit(ctx, read, opts.CommitProgress)
}

// A Pending is an append in progress on the table's state when Begin
// loaded it: Write writes data files, any number of times, and Commit
// makes them all one snapshot. Until then no reader sees them; files of a
// Pending never committed are orphans (DeleteOrphans). A caller that
// reads its records in pieces writes each piece and lets it go, so a
// commit of any size takes the memory of one piece.
type Pending struct {
	t             *Table
	st            State
	schema        *iceberg.Schema
	schemaChanged bool
	lastColumnID  int
	asc           *arrow.Schema // of schema, nil until needed
	spec          iceberg.PartitionSpec
	snapshotID    int64
	commitID      string
	// newLast is per partition the last offset in the table or written.
	newLast map[int32]int64
	// written are the partitions Write wrote records of.
	written map[int32]bool
	entries []iceberg.ManifestEntry
	rows    int64
	files   int
	bytes   int64
	pace    *PaceCounter
}

// Begin starts an append on the table's current state (creating the table
// if it does not exist).
func (t *Table) Begin(ctx context.Context) (*Pending, error) {
	st, err := t.Create(ctx)
	if err != nil {
		return nil, err
	}
	md := st.Metadata
	newLast := make(map[int32]int64, len(st.LastOffsets))
	maps.Copy(newLast, st.LastOffsets)
	return &Pending{
		t: t, st: st, schema: md.CurrentSchema(), lastColumnID: md.LastColumnID(), spec: md.PartitionSpec(),
		snapshotID: newSnapshotID(), commitID: uuid.NewString(), newLast: newLast, written: map[int32]bool{}, pace: NewPaceCounter(t.cfg.Pacer),
	}, nil
}

// State is the table's state the append started from.
func (p *Pending) State() State { return p.st }

// Schema is the schema the append's files are written with so far
// (LayoutTyped: evolved by Write's value types), and the highest column
// ID assigned.
func (p *Pending) Schema() (*iceberg.Schema, int) { return p.schema, p.lastColumnID }

// Write writes records' data files: one per partition value of the
// table's spec and run of about TargetFileSize bytes. Records at or below
// a partition's last offset, in the table or written before by this
// append, are dropped first; within a partition they must be in offset
// order. valueTypes (LayoutTyped) are merged into the schema first, as
// AppendOptions.ValueTypes says. records may be reused once Write
// returns. After an error, the Pending is of no more use: begin again.
func (p *Pending) Write(ctx context.Context, records []Record, valueTypes []*iceberg.StructType) error {
	t := p.t
	// fresh is records without those the table holds, copied only when
	// there are such.
	fresh := records
	filtered := false
	for i, r := range records {
		if last, ok := p.newLast[r.Partition]; ok && r.Offset <= last {
			if !filtered {
				fresh, filtered = append(make([]Record, 0, len(records)), records[:i]...), true
			}
			continue
		}
		if filtered {
			fresh = append(fresh, r)
		}
		p.newLast[r.Partition] = r.Offset
		p.written[r.Partition] = true
	}
	if t.cfg.Layout == LayoutTyped {
		for _, vt := range valueTypes {
			next, changed, err := EvolveSchema(p.schema, p.lastColumnID, vt)
			if err != nil {
				return err
			}
			if changed {
				next.ID = maxSchemaID(p.st.Metadata) + 1
				p.schema, p.schemaChanged, p.lastColumnID, p.asc = next, true, next.HighestFieldID(), nil
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if p.asc == nil {
		asc, err := arrowSchema(p.schema)
		if err != nil {
			return err
		}
		p.asc = asc
	}
	groups, byGroup := groupRecords(p.spec, fresh)
	md := p.st.Metadata
	for _, g := range groups {
		for pending := byGroup[g]; len(pending) > 0; {
			rows, rest, estimate := cutByBudget(pending, int64(float64(t.cfg.TargetFileSize)/t.fileSizeRatio))
			pending = rest
			data, err := encodeParquet(ctx, p.pace, p.asc, t.cfg.Layout, rows, int64(float64(estimate)*t.fileSizeRatio))
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				// A file cut at the budget: learn how large files come
				// out per estimated byte (compression, footer).
				t.fileSizeRatio = min(max(float64(len(data))/float64(estimate), 0.01), 10)
			}
			df, err := t.writeDataFile(ctx, dataFileRel(p.spec, g, p.files, p.commitID), data, p.schema, p.spec, md.Properties())
			size := len(data)
			FreeBuffer(data)
			if err != nil {
				return err
			}
			p.entries = append(p.entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &p.snapshotID, nil, nil, df))
			p.rows += int64(len(rows))
			p.files++
			p.bytes += int64(size)
		}
	}
	return nil
}

// Commit makes the files written one snapshot. If another writer
// committed since Begin without moving the offsets of the partitions this
// append wrote or read, nor the schema (a compaction, or the leader of
// other partitions of the topic), the snapshot goes on top of its (up to
// appendAttempts times); if it moved them, ErrConflict, and the files are
// orphans: the caller begins again. read, if not nil, is per partition
// the last offset the caller read (control batches and aborted
// transactions past the last record included): the summary records it
// when a snapshot is written, so the next reader starts after it.
// progress commits a snapshot even with no file when read takes a
// partition past the table's last offset (AppendOptions.CommitProgress).
// Nothing written and no progress: nothing is committed.
func (p *Pending) Commit(ctx context.Context, read map[int32]int64, progress bool) (CommitResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := p.commitOnce(ctx, read, progress)
		if !errors.Is(err, ErrConflict) || attempt == appendAttempts {
			return res, err
		}
		if err := p.rebase(ctx, read); err != nil {
			return CommitResult{}, err
		}
	}
}

// rebase moves the append onto the table's current state, unless that
// state holds other offsets for a partition this append wrote or read, or
// another schema or spec than the one the files were written for
// (ErrConflict). The other partitions take the state's offsets: another
// node's commit of the partitions it leads stays.
func (p *Pending) rebase(ctx context.Context, read map[int32]int64) error {
	st, err := p.t.Load(ctx)
	if err != nil {
		return err
	}
	was, now := p.st.Metadata, st.Metadata
	if now == nil || now.CurrentSchema().ID != was.CurrentSchema().ID || now.DefaultPartitionSpec() != was.DefaultPartitionSpec() ||
		(p.schemaChanged && now.LastColumnID() != was.LastColumnID()) {
		return fmt.Errorf("%w: the table's schema moved since the files were written", ErrConflict)
	}
	moved := func(part int32) bool {
		a, aok := p.st.LastOffsets[part]
		b, bok := st.LastOffsets[part]
		return aok != bok || a != b
	}
	for part := range p.written {
		if moved(part) {
			return fmt.Errorf("%w: partition %d moved since the files were written", ErrConflict, part)
		}
	}
	for part := range read {
		if moved(part) {
			return fmt.Errorf("%w: partition %d moved since it was read", ErrConflict, part)
		}
	}
	newLast := make(map[int32]int64, len(st.LastOffsets))
	maps.Copy(newLast, st.LastOffsets)
	for part := range p.written {
		newLast[part] = p.newLast[part]
	}
	p.st, p.newLast = st, newLast
	return nil
}

func (p *Pending) commitOnce(ctx context.Context, read map[int32]int64, progress bool) (CommitResult, error) {
	t, st, md := p.t, p.st, p.st.Metadata
	newLast := maps.Clone(p.newLast)
	moved := false
	if len(p.entries) > 0 || progress {
		for part, o := range read {
			if last, ok := newLast[part]; !ok || o > last {
				newLast[part] = o
				moved = true
			}
		}
	}
	res := CommitResult{Version: st.Version, LastOffsets: newLast, Rows: p.rows, Files: p.files, Bytes: p.bytes}
	if cur := md.CurrentSnapshot(); cur != nil {
		res.SnapshotID = cur.SnapshotID
	}
	if len(p.entries) == 0 && !moved {
		return res, nil
	}
	seq := md.LastSequenceNumber() + 1

	// The new manifest, then the manifest list: the new manifest first, the
	// parent snapshot's manifests after it.
	var old []iceberg.ManifestFile
	var parentID *int64
	totalRows, totalFiles, totalBytes := res.Rows, int64(res.Files), res.Bytes
	var err error
	if parent := md.CurrentSnapshot(); parent != nil {
		id := parent.SnapshotID
		parentID = &id
		if old, err = t.readManifestList(ctx, parent); err != nil {
			return CommitResult{}, err
		}
		if parent.Summary != nil {
			totalRows += summaryInt(parent.Summary, "total-records")
			totalFiles += summaryInt(parent.Summary, "total-data-files")
			totalBytes += summaryInt(parent.Summary, "total-files-size")
		}
	}
	// Merge: past maxManifests, the new manifest also carries every live
	// entry of the parent's manifests (as EXISTING), so readers open a
	// bounded number of manifests however many commits there were.
	kept := old
	var existing []iceberg.ManifestEntry
	if len(p.entries) > 0 && len(old)+1 > maxManifests {
		if existing, err = t.liveEntries(ctx, old); err != nil {
			return CommitResult{}, err
		}
		kept = nil
	}
	manifests := kept
	if len(p.entries) > 0 {
		mf, err := t.writeManifest(ctx, p.commitID, p.spec, p.schema, p.snapshotID, manifestEntries{added: p.entries, existing: existing})
		if err != nil {
			return CommitResult{}, err
		}
		manifests = append([]iceberg.ManifestFile{mf}, kept...)
	}
	offsetsJSON, err := encodeOffsets(newLast)
	if err != nil {
		return CommitResult{}, err
	}
	version, metadataDeleted, err := t.commitSnapshot(ctx, st, snapshotCommit{
		id: p.snapshotID, parentID: parentID, seq: seq, commitID: p.commitID,
		manifests: manifests, schema: p.schema, schemaChanged: p.schemaChanged,
		summary: table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties{
			"added-data-files":   strconv.Itoa(res.Files),
			"added-records":      strconv.FormatInt(res.Rows, 10),
			"added-files-size":   strconv.FormatInt(res.Bytes, 10),
			"total-data-files":   strconv.FormatInt(totalFiles, 10),
			"total-records":      strconv.FormatInt(totalRows, 10),
			"total-files-size":   strconv.FormatInt(totalBytes, 10),
			"total-delete-files": "0",
			SummaryLastOffsets:   offsetsJSON,
		}},
	})
	if err != nil {
		return CommitResult{}, err
	}
	res.Version = version
	res.SnapshotID = p.snapshotID
	res.MetadataFilesDeleted = metadataDeleted
	return res, nil
}

// groupRecords splits records by their partition value in spec (in hours
// or days since 1970; 0 for an unpartitioned spec), and returns the values
// in order. Records of one value, as most commits' are, stay in their
// slice: not copied.
func groupRecords(spec iceberg.PartitionSpec, records []Record) ([]int64, map[int64][]Record) {
	grain, _, _ := partitionGrain(spec)
	group := func(r *Record) int64 {
		if grain > 0 {
			return floorDiv(r.Timestamp.Unix(), grain)
		}
		return 0
	}
	if len(records) == 0 {
		return nil, nil
	}
	first := group(&records[0])
	one := true
	for i := range records {
		if group(&records[i]) != first {
			one = false
			break
		}
	}
	if one {
		return []int64{first}, map[int64][]Record{first: records}
	}
	byGroup := map[int64][]Record{}
	for i := range records {
		g := group(&records[i])
		byGroup[g] = append(byGroup[g], records[i])
	}
	groups := make([]int64, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i] < groups[j] })
	return groups, byGroup
}

// snapshotCommit is a snapshot whose manifests are written, ready to be
// committed on top of a State.
type snapshotCommit struct {
	id            int64
	parentID      *int64
	seq           int64
	commitID      string
	manifests     []iceberg.ManifestFile
	schema        *iceberg.Schema
	schemaChanged bool // add schema and make it current
	summary       table.Summary
}

// commitSnapshot writes c's manifest list and the metadata version after
// st's that makes c the current snapshot (expiring snapshots past
// SnapshotRetention), deletes the old metadata versions that fell out of
// its metadata-log (deleteOldVersions), and returns that version and how
// many it deleted; ErrConflict if another writer took it first.
func (t *Table) commitSnapshot(ctx context.Context, st State, c snapshotCommit) (version, metadataDeleted int, err error) {
	listRel := fmt.Sprintf("metadata/snap-%d-1-%s.avro", c.id, c.commitID)
	var listBuf bytes.Buffer
	if err := iceberg.WriteManifestList(2, &listBuf, c.id, c.parentID, &c.seq, 0, c.manifests); err != nil {
		return 0, 0, fmt.Errorf("iceberg: encode manifest list: %w", err)
	}
	listBytes, err := uncompressedAvro(listBuf.Bytes())
	if err != nil {
		return 0, 0, err
	}
	if err := t.put(ctx, t.cfg.Prefix+"/"+listRel, listBytes); err != nil {
		return 0, 0, fmt.Errorf("iceberg: write manifest list: %w", err)
	}
	md := st.Metadata
	builder, err := table.MetadataBuilderFromBase(md, st.MetadataLocation)
	if err != nil {
		return 0, 0, fmt.Errorf("iceberg: metadata builder: %w", err)
	}
	if c.schemaChanged {
		if err := builder.AddSchema(c.schema); err != nil {
			return 0, 0, fmt.Errorf("iceberg: add schema: %w", err)
		}
		if err := builder.SetCurrentSchemaID(c.schema.ID); err != nil {
			return 0, 0, fmt.Errorf("iceberg: set current schema: %w", err)
		}
	}
	schemaID := c.schema.ID
	summary := c.summary
	snap := table.Snapshot{
		SnapshotID:       c.id,
		ParentSnapshotID: c.parentID,
		SequenceNumber:   c.seq,
		TimestampMs:      time.Now().UnixMilli(),
		ManifestList:     t.cfg.Location + "/" + listRel,
		SchemaID:         &schemaID,
		Summary:          &summary,
	}
	if err := builder.AddSnapshot(&snap); err != nil {
		return 0, 0, fmt.Errorf("iceberg: add snapshot: %w", err)
	}
	if err := builder.SetSnapshotRef(table.MainBranch, c.id, table.BranchRef); err != nil {
		return 0, 0, fmt.Errorf("iceberg: set main branch: %w", err)
	}
	if expired := expiredSnapshots(md, t.cfg.SnapshotRetention, snap.TimestampMs); len(expired) > 0 {
		if err := builder.RemoveSnapshots(expired, false); err != nil {
			return 0, 0, fmt.Errorf("iceberg: expire snapshots: %w", err)
		}
	}
	// The metadata-log: the builder trims it to the table's
	// write.metadata.previous-versions-max, set here from the Config.
	if err := builder.SetProperties(t.metadataPropertyUpdates(md.Properties())); err != nil {
		return 0, 0, fmt.Errorf("iceberg: set metadata properties: %w", err)
	}
	next, err := builder.Build()
	if err != nil {
		return 0, 0, fmt.Errorf("iceberg: build metadata: %w", err)
	}
	if _, err := t.writeVersion(ctx, st.Version+1, next); err != nil && !isHintOnly(err) {
		return 0, 0, err
	}
	return st.Version + 1, t.deleteOldVersions(ctx, md, next), nil
}

// metadataProperties are the table properties that say how many metadata
// versions the table keeps, in Iceberg's names: set when the table is
// created and by every commit whose Config they do not match.
func (t *Table) metadataProperties() iceberg.Properties {
	return iceberg.Properties{
		table.MetadataPreviousVersionsMaxKey:      strconv.Itoa(t.cfg.MetadataPreviousVersionsMax),
		table.MetadataDeleteAfterCommitEnabledKey: strconv.FormatBool(t.cfg.MetadataDeleteAfterCommit),
	}
}

// metadataPropertyUpdates are those of metadataProperties that props
// does not hold yet (none: no update).
func (t *Table) metadataPropertyUpdates(props iceberg.Properties) iceberg.Properties {
	out := iceberg.Properties{}
	for k, v := range t.metadataProperties() {
		if props[k] != v {
			out[k] = v
		}
	}
	return out
}

// deleteOldVersions deletes, with MetadataDeleteAfterCommit, the previous
// versions base's metadata-log lists and next's does not (Iceberg's
// delete-after-commit): this writer's vK.metadata.json files (another
// writer's are left alone) older than MetadataMinAge, oldest first,
// stopping at the first failure so that the versions left stay one run
// without a gap. It returns how many it deleted. A failure fails nothing:
// the commit has landed, and RemoveOrphans deletes what is left later.
//
// Why deleting an old version never lets a racing writer's
// compare-and-swap succeed wrongly: a PutIfAbsent of a deleted vK (K at
// most N-1-MetadataPreviousVersionsMax, N the version just written) could
// only succeed for a writer that loaded v(K-1) as the current version, so
// one whose Load ran before vK was written. vK is deleted only once its
// last-updated-ms (set just before it was written) is MetadataMinAge old,
// so that writer's attempt would have had to run longer than
// MetadataMinAge, which no attempt of Strata's does: the broker bounds a
// commit by 2 minutes and a maintenance round by 5 (minutes to spare for
// clocks of two nodes that disagree). Every version a
// current writer can aim at (after one it loaded within its attempt) is
// younger, so still there, or not written yet and taken by exactly one
// PutIfAbsent. Readers: Load starts at the hint, which names the newest
// version but for a failed hint write, and when that version is gone it
// starts from the newest one listed.
func (t *Table) deleteOldVersions(ctx context.Context, base, next table.Metadata) int {
	if !t.cfg.MetadataDeleteAfterCommit {
		return 0
	}
	kept := map[string]bool{}
	for e := range next.PreviousFiles() {
		kept[e.MetadataFile] = true
	}
	cutoff := time.Now().Add(-t.cfg.MetadataMinAge).UnixMilli()
	var versions []int
	for e := range base.PreviousFiles() {
		if kept[e.MetadataFile] || e.TimestampMs > cutoff {
			continue
		}
		key, err := t.keyOf(e.MetadataFile)
		if err != nil {
			continue // outside the table: not ours
		}
		if v, ok := t.versionOfKey(key); ok {
			versions = append(versions, v)
		}
	}
	n, _ := t.deleteVersions(ctx, versions)
	return n
}

// deleteVersions deletes the metadata versions, oldest first, and stops at
// the first failure; it returns how many it deleted.
func (t *Table) deleteVersions(ctx context.Context, versions []int) (int, error) {
	sort.Ints(versions)
	for i, v := range versions {
		if err := t.cfg.Store.Delete(ctx, t.metadataKey(v)); err != nil {
			return i, fmt.Errorf("iceberg: delete metadata v%d: %w", v, err)
		}
	}
	return len(versions), nil
}

// readManifestList reads the manifests snap lists (through the cache).
func (t *Table) readManifestList(ctx context.Context, snap *table.Snapshot) ([]iceberg.ManifestFile, error) {
	if c, ok := t.cfg.ManifestCache.get(snap.ManifestList); ok {
		return c.files, nil
	}
	raw, err := t.getLocation(ctx, snap.ManifestList)
	if err != nil {
		return nil, fmt.Errorf("iceberg: read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	list, err := iceberg.ReadManifestList(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: manifest list of snapshot %d: %v", ErrCorruptTable, snap.SnapshotID, err)
	}
	t.cfg.ManifestCache.add(&cachedManifest{location: snap.ManifestList, files: list})
	return list, nil
}

// readLiveManifest reads the entries of one manifest (through the cache),
// those of the files it deletes left out.
func (t *Table) readLiveManifest(ctx context.Context, m iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	if c, ok := t.cfg.ManifestCache.get(m.FilePath()); ok {
		return c.entries, nil
	}
	raw, err := t.getLocation(ctx, m.FilePath())
	if err != nil {
		return nil, fmt.Errorf("iceberg: read manifest: %w", err)
	}
	es, err := iceberg.ReadManifest(m, bytes.NewReader(raw), true)
	if err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %v", ErrCorruptTable, m.FilePath(), err)
	}
	t.cfg.ManifestCache.add(&cachedManifest{location: m.FilePath(), entries: es})
	return es, nil
}

// liveEntries are the entries of the data files manifests hold (those they
// delete left out).
func (t *Table) liveEntries(ctx context.Context, manifests []iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	var out []iceberg.ManifestEntry
	for _, m := range manifests {
		es, err := t.readLiveManifest(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// writeDataFile stores a Parquet file at rel (inside the table) and
// describes it for a manifest.
func (t *Table) writeDataFile(ctx context.Context, rel string, data []byte, schema *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties) (iceberg.DataFile, error) {
	if err := t.put(ctx, t.cfg.Prefix+"/"+rel, data); err != nil {
		return nil, fmt.Errorf("iceberg: write data file %s: %w", rel, err)
	}
	return dataFile(ctx, t.cfg.Location+"/"+rel, data, schema, spec, props)
}

// dataFileRel is where the n-th data file of a commit goes: under its
// partition value's directory (group is the value, in hours or days since
// 1970) when spec has one.
func dataFileRel(spec iceberg.PartitionSpec, group int64, n int, commitID string) string {
	grain, name, format := partitionGrain(spec)
	if grain == 0 {
		return fmt.Sprintf("data/%05d-%s.parquet", n, commitID)
	}
	value := time.Unix(group*grain, 0).UTC().Format(format)
	return fmt.Sprintf("data/%s=%s/%05d-%s.parquet", name, value, n, commitID)
}

// manifestEntries are the entries of a manifest a commit writes: the files
// it adds, the live files it carries over, and the files it removes.
type manifestEntries struct {
	added, existing, deleted []iceberg.ManifestEntry
}

// writeManifest writes the manifest of one commit: its new data files
// (ADDED), when it merges or compacts the parent's live ones (EXISTING),
// and when it compacts the files it rewrote (DELETED).
func (t *Table) writeManifest(ctx context.Context, commitID string, spec iceberg.PartitionSpec, schema *iceberg.Schema, snapshotID int64, entries manifestEntries) (iceberg.ManifestFile, error) {
	manifestRel := fmt.Sprintf("metadata/%s-m0.avro", commitID)
	var manifestBuf bytes.Buffer
	mw, err := iceberg.NewManifestWriter(2, &manifestBuf, spec, schema, snapshotID)
	if err != nil {
		return nil, fmt.Errorf("iceberg: manifest writer: %w", err)
	}
	for _, e := range entries.added {
		if err := mw.Add(e); err != nil {
			return nil, fmt.Errorf("iceberg: manifest entry: %w", err)
		}
	}
	for _, e := range entries.existing {
		if err := mw.Existing(e); err != nil {
			return nil, fmt.Errorf("iceberg: existing manifest entry: %w", err)
		}
	}
	for _, e := range entries.deleted {
		if err := mw.Delete(e); err != nil {
			return nil, fmt.Errorf("iceberg: deleted manifest entry: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("iceberg: encode manifest: %w", err)
	}
	manifestBytes, err := uncompressedAvro(manifestBuf.Bytes())
	if err != nil {
		return nil, err
	}
	mf, err := mw.ToManifestFile(t.cfg.Location+"/"+manifestRel, int64(len(manifestBytes)))
	if err != nil {
		return nil, fmt.Errorf("iceberg: manifest file: %w", err)
	}
	if err := t.put(ctx, t.cfg.Prefix+"/"+manifestRel, manifestBytes); err != nil {
		return nil, fmt.Errorf("iceberg: write manifest: %w", err)
	}
	return mf, nil
}

// maxSchemaID is the largest schema ID md holds.
func maxSchemaID(md table.Metadata) int {
	id := 0
	for _, s := range md.Schemas() {
		id = max(id, s.ID)
	}
	return id
}

// partitionGrain is the width in seconds of one partition value of spec
// (hour or day of timestamp; 0 for an unpartitioned table), with the
// partition field's name and how its value is written in paths.
func partitionGrain(spec iceberg.PartitionSpec) (seconds int64, name, format string) {
	for _, f := range spec.Fields() {
		switch f.Transform.(type) {
		case iceberg.HourTransform:
			return 3600, f.Name, "2006-01-02-15"
		case iceberg.DayTransform:
			return 86400, f.Name, "2006-01-02"
		}
	}
	return 0, "", ""
}

// floorDiv is a/b rounded down (Unix times before 1970 are negative).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// expiredSnapshots are the snapshots of md older than retention at nowMs;
// none without a retention. The caller's new snapshot becomes current, so
// every old one may go.
func expiredSnapshots(md table.Metadata, retention time.Duration, nowMs int64) []int64 {
	if retention <= 0 {
		return nil
	}
	var out []int64
	for _, s := range md.Snapshots() {
		if nowMs-s.TimestampMs > retention.Milliseconds() {
			out = append(out, s.SnapshotID)
		}
	}
	return out
}

func isHintOnly(err error) bool { return errors.Is(err, errHintOnly) }

func summaryInt(s *table.Summary, key string) int64 {
	v, _ := strconv.ParseInt(s.Properties[key], 10, 64)
	return v
}

func encodeOffsets(m map[int32]int64) (string, error) {
	byName := make(map[string]int64, len(m))
	for p, o := range m {
		byName[strconv.Itoa(int(p))] = o
	}
	raw, err := json.Marshal(byName)
	return string(raw), err
}

// newSnapshotID is a random positive int64, as Iceberg writers use.
func newSnapshotID() int64 {
	return rand.Int64N(1<<62) + 1
}

// dataFile describes a Parquet file for the manifest: counts, sizes and
// column bounds from its footer, and its partition value (iceberg-go infers
// hour(timestamp) from the timestamp bounds, all in one hour by design).
func dataFile(ctx context.Context, location string, data []byte, schema *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties) (iceberg.DataFile, error) {
	const name = "file.parquet"
	fsys := iceio.FSPreProcName(fstest.MapFS{name: &fstest.MapFile{Data: data, Mode: fs.ModePerm}}, func(string) string { return name })
	df, err := table.FileToDataFile(ctx, fsys, location, schema, spec, 0, props)
	if err != nil {
		return nil, fmt.Errorf("iceberg: describe data file %s: %w", location, err)
	}
	return df, nil
}
