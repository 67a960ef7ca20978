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
// starts again from the new state (the append's files stay, nothing is
// lost). minInputFiles below 2 is an error. Nothing to compact commits
// nothing.
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
	parent := st.Metadata.CurrentSnapshot()
	if parent == nil {
		return res, nil
	}
	res.SnapshotID = parent.SnapshotID
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
	seq := md.LastSequenceNumber() + 1
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
			if err != nil {
				return err
			}
			added = append(added, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapshotID, nil, nil, df))
			deleted = append(deleted, runEntries...)
			res.FilesWritten++
			res.BytesWritten += int64(len(data))
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
		return CompactResult{Version: st.Version, SnapshotID: parent.SnapshotID}, nil
	}

	gone := make(map[string]bool, len(deleted))
	for _, e := range deleted {
		gone[e.DataFile().FilePath()] = true
	}
	var existing []iceberg.ManifestEntry
	for _, e := range live {
		if !gone[e.DataFile().FilePath()] {
			existing = append(existing, e)
		}
	}
	mf, err := t.writeManifest(ctx, commitID, spec, schema, snapshotID, manifestEntries{added: added, existing: existing, deleted: deleted})
	if err != nil {
		return res, err
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
	version, err := t.commitSnapshot(ctx, st, snapshotCommit{
		id: snapshotID, parentID: &parentID, seq: seq, commitID: commitID,
		manifests: []iceberg.ManifestFile{mf}, schema: schema,
		summary: table.Summary{Operation: table.OpReplace, Properties: props},
	})
	if err != nil {
		return res, err
	}
	res.Version, res.SnapshotID = version, snapshotID
	return res, nil
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
