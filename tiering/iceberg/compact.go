package iceberg

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// CompactResult says what a Compact committed.
type CompactResult struct {
	// Version is the metadata version written (the current one if nothing
	// was compacted).
	Version    int
	SnapshotID int64
	// FilesRewritten are the small files the replace snapshot removed,
	// FilesWritten the files that hold their rows now.
	FilesRewritten int
	FilesWritten   int
	Rows           int64
	// BytesRewritten and BytesWritten are the sizes of those files.
	BytesRewritten int64
	BytesWritten   int64
	// MetadataFilesDeleted counts the old metadata versions the replace
	// commit deleted (Config.MetadataDeleteAfterCommit).
	MetadataFilesDeleted int
}

// Compact rewrites small data files into larger ones and commits the swap
// as a "replace" snapshot. A file is small below half of TargetFileSize; a
// partition value (a directory of data/) with at least minInputFiles small
// files of the current schema has them merged, in runs of about
// TargetFileSize bytes of input, into new files. The replace snapshot lists
// the old files DELETED, the new ones ADDED and every other live file
// EXISTING in one manifest, and carries the parent's summary offsets
// (SummaryLastOffsets) unchanged: the rows are the same, so where each
// partition resumes is too. The commit is the same compare-and-swap of the
// next metadata version as Append's: if an append lands first, Compact
// commits the files it rewrote on top of the new state (an append
// removes no file; the append's files stay EXISTING, nothing is lost, no
// data file is written again), and if another compaction took some of its
// inputs it starts over from the new state. minInputFiles below 2 is an error. Nothing to compact commits
// nothing, and a Compact of the same snapshot after one that found
// nothing returns at once, having read only the metadata.
func (t *Table) Compact(ctx context.Context, minInputFiles int) (CompactResult, error) {
	if minInputFiles < 2 {
		return CompactResult{}, fmt.Errorf("iceberg: compaction needs at least 2 input files, not %d", minInputFiles)
	}
	var lastErr error
	for range appendAttempts {
		res, err := t.compactOnce(ctx, minInputFiles)
		if !errors.Is(err, ErrConflict) {
			return res, err
		}
		lastErr = err
	}
	return CompactResult{}, lastErr
}

func (t *Table) compactOnce(ctx context.Context, minInputFiles int) (CompactResult, error) {
	st, err := t.Load(ctx)
	if err != nil {
		return CompactResult{}, err
	}
	res := CompactResult{Version: st.Version}
	if st.Version == 0 {
		return res, nil // no table yet
	}
	parent := st.Metadata.CurrentSnapshot()
	if parent == nil {
		return res, nil
	}
	res.SnapshotID = parent.SnapshotID
	if t.compactedBefore(parent.SnapshotID, minInputFiles) {
		return res, nil
	}
	manifests, err := t.readManifestList(ctx, parent)
	if err != nil {
		return res, err
	}
	live, err := t.liveEntries(ctx, manifests)
	if err != nil {
		return res, err
	}
	// Candidates: small Parquet files, by the directory of their partition
	// value.
	small := map[string][]iceberg.ManifestEntry{}
	for _, e := range live {
		df := e.DataFile()
		if df.ContentType() == iceberg.EntryContentData && df.FileFormat() == iceberg.ParquetFile && df.FileSizeBytes() < t.cfg.TargetFileSize/2 {
			dir := "" // a foreign path with no directory (path.Dir would clean the URI's //)
			if i := strings.LastIndex(df.FilePath(), "/"); i >= 0 {
				dir = df.FilePath()[:i]
			}
			small[dir] = append(small[dir], e)
		}
	}
	dirs := make([]string, 0, len(small))
	for dir, es := range small {
		if len(es) >= minInputFiles {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) == 0 {
		t.setCompactedBefore(parent.SnapshotID, minInputFiles)
		return res, nil
	}
	sort.Strings(dirs)

	md := st.Metadata
	schema := md.CurrentSchema()
	spec := md.PartitionSpec()
	asc, err := arrowSchema(schema)
	if err != nil {
		return res, err
	}
	snapshotID := newSnapshotID()
	commitID := uuid.NewString()
	var added, deleted []iceberg.ManifestEntry
	pace := NewPaceCounter(t.cfg.Pacer)
	for _, dir := range dirs {
		rel, err := t.relOf(dir)
		if err != nil {
			return res, err
		}
		inputs := small[dir]
		sort.Slice(inputs, func(i, j int) bool { return inputs[i].DataFile().FilePath() < inputs[j].DataFile().FilePath() })
		var run []arrow.Table
		var runEntries []iceberg.ManifestEntry
		var runBytes int64
		flush := func() error {
			defer func() {
				for _, tbl := range run {
					tbl.Release()
				}
				run, runEntries, runBytes = nil, nil, 0
			}()
			if len(runEntries) < 2 {
				return nil // one file alone gains nothing
			}
			data, rows, err := concatParquet(ctx, pace, asc, run, runBytes)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("%s/%05d-%s.parquet", rel, res.FilesWritten, commitID)
			df, err := t.writeDataFile(ctx, name, data, schema, spec, md.Properties())
			size := len(data)
			FreeBuffer(data)
			if err != nil {
				return err
			}
			added = append(added, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapshotID, nil, nil, df))
			deleted = append(deleted, runEntries...)
			res.FilesWritten++
			res.BytesWritten += int64(size)
			res.FilesRewritten += len(runEntries)
			res.BytesRewritten += runBytes
			res.Rows += rows
			return nil
		}
		for _, e := range inputs {
			tbl, err := t.readDataFile(ctx, pace, e.DataFile())
			if err != nil {
				return res, err
			}
			if !tbl.Schema().Equal(asc) {
				// Written before the schema changed: left as it is.
				tbl.Release()
				continue
			}
			if runBytes > 0 && runBytes+e.DataFile().FileSizeBytes() > t.cfg.TargetFileSize {
				if err := flush(); err != nil {
					return res, err
				}
			}
			run = append(run, tbl)
			runEntries = append(runEntries, e)
			runBytes += e.DataFile().FileSizeBytes()
		}
		if err := flush(); err != nil {
			return res, err
		}
	}
	if len(added) == 0 {
		t.setCompactedBefore(parent.SnapshotID, minInputFiles)
		return CompactResult{Version: st.Version, SnapshotID: parent.SnapshotID}, nil
	}

	gone := make(map[string]bool, len(deleted))
	for _, e := range deleted {
		gone[e.DataFile().FilePath()] = true
	}
	for attempt := 1; ; attempt++ {
		version, metadataDeleted, err := t.commitReplace(ctx, st, live, gone, added, deleted, snapshotID, res)
		if err == nil {
			res.Version, res.SnapshotID, res.MetadataFilesDeleted = version, snapshotID, metadataDeleted
			return res, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == appendAttempts {
			return res, err
		}
		// Another writer committed first. An append only adds files: if
		// every file rewritten is still live and the schema and spec are
		// the same, the rewritten files go in on top of the new state as
		// they are (no data file is written again); else start over.
		if st, err = t.Load(ctx); err != nil {
			return res, err
		}
		if st.Metadata.CurrentSchema().ID != schema.ID || st.Metadata.DefaultPartitionSpec() != md.DefaultPartitionSpec() {
			return res, ErrConflict
		}
		if live, err = t.currentLiveEntries(ctx, st); err != nil {
			return res, err
		}
		stillLive := 0
		for _, e := range live {
			if gone[e.DataFile().FilePath()] {
				stillLive++
			}
		}
		if stillLive != len(gone) {
			return res, ErrConflict // another compaction took some of them
		}
	}
}

// currentLiveEntries are the live entries of st's current snapshot.
func (t *Table) currentLiveEntries(ctx context.Context, st State) ([]iceberg.ManifestEntry, error) {
	parent := st.Metadata.CurrentSnapshot()
	if parent == nil {
		return nil, nil
	}
	manifests, err := t.readManifestList(ctx, parent)
	if err != nil {
		return nil, err
	}
	return t.liveEntries(ctx, manifests)
}

// commitReplace commits, on top of st (whose current snapshot's live
// entries are live), the replace snapshot id that swaps the files gone
// (deleted) for added: one manifest, every other live file EXISTING, the
// summary's totals adjusted from the parent's and its offsets copied.
func (t *Table) commitReplace(ctx context.Context, st State, live []iceberg.ManifestEntry, gone map[string]bool, added, deleted []iceberg.ManifestEntry, snapshotID int64, res CompactResult) (version, metadataDeleted int, err error) {
	md := st.Metadata
	parent := md.CurrentSnapshot()
	var existing []iceberg.ManifestEntry
	for _, e := range live {
		if !gone[e.DataFile().FilePath()] {
			existing = append(existing, e)
		}
	}
	// A name of its own per attempt: a manifest is never rewritten.
	commitID := uuid.NewString()
	mf, err := t.writeManifest(ctx, commitID, md.PartitionSpec(), md.CurrentSchema(), snapshotID, manifestEntries{added: added, existing: existing, deleted: deleted})
	if err != nil {
		return 0, 0, err
	}
	props := iceberg.Properties{
		"added-data-files":   strconv.Itoa(res.FilesWritten),
		"added-records":      strconv.FormatInt(res.Rows, 10),
		"added-files-size":   strconv.FormatInt(res.BytesWritten, 10),
		"deleted-data-files": strconv.Itoa(res.FilesRewritten),
		"deleted-records":    strconv.FormatInt(res.Rows, 10),
		"removed-files-size": strconv.FormatInt(res.BytesRewritten, 10),
		"total-delete-files": "0",
	}
	if parent.Summary != nil {
		props["total-data-files"] = strconv.FormatInt(summaryInt(parent.Summary, "total-data-files")+int64(res.FilesWritten-res.FilesRewritten), 10)
		props["total-records"] = strconv.FormatInt(summaryInt(parent.Summary, "total-records"), 10)
		props["total-files-size"] = strconv.FormatInt(summaryInt(parent.Summary, "total-files-size")+res.BytesWritten-res.BytesRewritten, 10)
		if offsets, ok := parent.Summary.Properties[SummaryLastOffsets]; ok {
			props[SummaryLastOffsets] = offsets
		}
	}
	parentID := parent.SnapshotID
	return t.commitSnapshot(ctx, st, snapshotCommit{
		id: snapshotID, parentID: &parentID, seq: md.LastSequenceNumber() + 1, commitID: commitID,
		manifests: []iceberg.ManifestFile{mf}, schema: md.CurrentSchema(),
		summary: table.Summary{Operation: table.OpReplace, Properties: props},
	})
}

// compactedBefore reports whether a Compact with minInputFiles found
// nothing to do in snapshot id (the last one that did).
func (t *Table) compactedBefore(id int64, minInputFiles int) bool {
	t.compactChecked.Lock()
	defer t.compactChecked.Unlock()
	return t.compactChecked.snapshotID == id && t.compactChecked.minInputFiles == minInputFiles
}

func (t *Table) setCompactedBefore(id int64, minInputFiles int) {
	t.compactChecked.Lock()
	defer t.compactChecked.Unlock()
	t.compactChecked.snapshotID, t.compactChecked.minInputFiles = id, minInputFiles
}

// relOf maps a location inside the table to its path relative to the
// table's location.
func (t *Table) relOf(location string) (string, error) {
	key, err := t.keyOf(location)
	if err != nil {
		return "", err
	}
	return key[len(t.cfg.Prefix)+1:], nil
}

// readDataFile reads one data file of the table as an arrow table.
func (t *Table) readDataFile(ctx context.Context, pace *PaceCounter, df iceberg.DataFile) (arrow.Table, error) {
	data, err := t.getLocation(ctx, df.FilePath())
	if err != nil {
		return nil, fmt.Errorf("iceberg: read data file %s: %w", df.FilePath(), err)
	}
	tbl, err := readParquet(ctx, pace, data)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: data file %s: %v", ErrCorruptTable, df.FilePath(), err)
	}
	return tbl, nil
}

// concatParquet writes the rows of tables, in order, as one Parquet file of
// schema sc, and returns it with its row count.
func concatParquet(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, tables []arrow.Table, sizeHint int64) ([]byte, int64, error) {
	var rows int64
	columns := make([]arrow.Column, sc.NumFields())
	for i := range columns {
		var chunks []arrow.Array
		for _, tbl := range tables {
			chunks = append(chunks, tbl.Column(i).Data().Chunks()...)
		}
		chunked := arrow.NewChunked(sc.Field(i).Type, chunks)
		columns[i] = *arrow.NewColumn(sc.Field(i), chunked)
		chunked.Release()
	}
	for _, tbl := range tables {
		rows += tbl.NumRows()
	}
	all := array.NewTable(sc, columns, rows)
	defer all.Release()
	for i := range columns {
		columns[i].Release()
	}
	data, err := writeParquet(ctx, pace, sc, all, sizeHint)
	return data, rows, err
}
