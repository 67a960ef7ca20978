package iceberg

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/strata-streaming/strata/tiering"
)

func testRecords(partition int32, from, to int64, start time.Time) []Record {
	var out []Record
	for off := from; off <= to; off++ {
		out = append(out, Record{
			Partition: partition,
			Offset:    off,
			// Ten minutes apart: a run of records spans several hours.
			Timestamp: start.Add(time.Duration(off) * 10 * time.Minute),
			Key:       fmt.Appendf(nil, "k-%d-%d", partition, off),
			Value:     fmt.Appendf(nil, "v-%d-%d", partition, off),
			Headers:   []Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: []byte("2")}},
		})
	}
	return out
}

func fileTable(t *testing.T) (*Table, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := tiering.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(Config{Store: store, Prefix: "iceberg/strata/orders", Location: "file://" + filepath.Join(dir, "iceberg/strata/orders")})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, dir
}

// scanRows reads the table back through iceberg-go's own scanner (metadata,
// manifest list, manifests, Parquet), returning "partition/offset/key" rows.
func scanRows(t *testing.T, tbl *Table) []string {
	t.Helper()
	ctx := context.Background()
	st, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it := table.New(table.Identifier{"strata", "orders"}, st.Metadata, st.MetadataLocation,
		func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }, nil)
	arrTbl, err := it.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arrTbl.Release()
	rdr := array.NewTableReader(arrTbl, 1024)
	defer rdr.Release()
	var rows []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		keys := rec.Column(0).(*array.Binary)
		parts := rec.Column(3).(*array.Int32)
		offs := rec.Column(4).(*array.Int64)
		for i := range int(rec.NumRows()) {
			rows = append(rows, fmt.Sprintf("%d/%d/%s", parts.Value(i), offs.Value(i), keys.Value(i)))
		}
	}
	sort.Strings(rows)
	return rows
}

func TestAppendIsReadableAndExactlyOnce(t *testing.T) {
	ctx := context.Background()
	tbl, _ := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

	st, err := tbl.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 1 || len(st.LastOffsets) != 0 {
		t.Fatalf("new table: version %d offsets %v", st.Version, st.LastOffsets)
	}

	batch := append(testRecords(0, 0, 9, start), testRecords(1, 0, 4, start)...)
	res, err := tbl.Append(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	// Partition 0 spans 10:00..11:30 (2 hours), partition 1 10:00..10:40: 2 files.
	if res.Version != 2 || res.Rows != 15 || res.Files != 2 {
		t.Fatalf("first append: %+v", res)
	}

	// A retry of the same records plus new ones: only the new ones land.
	again := append(testRecords(0, 5, 12, start), testRecords(1, 0, 4, start)...)
	res, err = tbl.Append(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || res.LastOffsets[0] != 12 || res.LastOffsets[1] != 4 {
		t.Fatalf("second append: %+v", res)
	}
	// Nothing new: no commit.
	res, err = tbl.Append(ctx, testRecords(1, 0, 4, start))
	if err != nil || res.Version != 3 || res.Rows != 0 {
		t.Fatalf("empty append: %+v %v", res, err)
	}

	st, err = tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 3 || st.LastOffsets[0] != 12 || st.LastOffsets[1] != 4 {
		t.Fatalf("loaded: version %d offsets %v", st.Version, st.LastOffsets)
	}
	if got := st.Metadata.CurrentSnapshot().Summary.Properties["total-records"]; got != "18" {
		t.Fatalf("total-records %s, want 18", got)
	}
	rows := scanRows(t, tbl)
	var want []string
	for _, r := range append(testRecords(0, 0, 12, start), testRecords(1, 0, 4, start)...) {
		want = append(want, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key))
	}
	sort.Strings(want)
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", rows, want)
	}
}

// A writer that stopped after writing vN.metadata.json but before the hint:
// Load finds vN anyway, so the next commit writes vN+1, not a second vN.
func TestLoadLooksPastAStaleHint(t *testing.T) {
	ctx := context.Background()
	tbl, _ := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if _, err := tbl.Append(ctx, testRecords(0, 0, 2, start)); err != nil {
		t.Fatal(err)
	}
	if err := tbl.put(ctx, tbl.hintKey(), []byte("1")); err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Load(ctx)
	if err != nil || st.Version != 2 || st.LastOffsets[0] != 2 {
		t.Fatalf("load: version %d offsets %v err %v", st.Version, st.LastOffsets, err)
	}
}

func TestLoadRejectsGarbage(t *testing.T) {
	ctx := context.Background()
	tbl, _ := fileTable(t)
	if err := tbl.put(ctx, tbl.hintKey(), []byte("zz")); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Load(ctx); err == nil {
		t.Fatal("a garbage hint loaded")
	}
	if err := tbl.put(ctx, tbl.hintKey(), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := tbl.put(ctx, tbl.metadataKey(1), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Load(ctx); err == nil {
		t.Fatal("garbage metadata loaded")
	}
}
