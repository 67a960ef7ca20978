// Package icebergtest reads a table written by tiering/iceberg back through
// iceberg-go's own scanner, for tests: metadata, manifest list, manifests,
// Parquet files.
package icebergtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/strata-streaming/strata/tiering/iceberg"
)

// Rows scans a table on the local filesystem (a file:// location) and
// returns its rows as "partition/offset/key", sorted.
func Rows(t testing.TB, tbl *iceberg.Table) []string {
	t.Helper()
	return TableRows(t, localTable(t, tbl))
}

// TableRows is Rows of a key_value table as iceberg-go opened it (from a
// catalog, say), read through its own IO.
func TableRows(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	var rows []string
	scanTable(t, tbl, func(rec arrow.RecordBatch) {
		keys, ok1 := rec.Column(0).(*array.Binary)
		parts, ok2 := rec.Column(3).(*array.Int32)
		offs, ok3 := rec.Column(4).(*array.Int64)
		if !ok1 || !ok2 || !ok3 {
			t.Fatalf("unexpected columns: %s", rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			rows = append(rows, fmt.Sprintf("%d/%d/%s", parts.Value(i), offs.Value(i), keys.Value(i)))
		}
	})
	sort.Strings(rows)
	return rows
}

// JSONRows scans a table on the local filesystem like Rows and returns
// each row as arrow's JSON of it (columns by name, the current schema's:
// rows of files written before a column existed show it as null), in the
// scan's order.
func JSONRows(t testing.TB, tbl *iceberg.Table) []map[string]any {
	t.Helper()
	return TableJSONRows(t, localTable(t, tbl))
}

// TableJSONRows is JSONRows of a table as iceberg-go opened it (from a
// catalog, say), read through its own IO.
func TableJSONRows(t testing.TB, tbl *table.Table) []map[string]any {
	t.Helper()
	var rows []map[string]any
	scanTable(t, tbl, func(rec arrow.RecordBatch) {
		var buf bytes.Buffer
		if err := array.RecordToJSON(rec, &buf); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&buf)
		for dec.More() {
			var row map[string]any
			if err := dec.Decode(&row); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row)
		}
	})
	return rows
}

// DataFiles lists the locations of the data files the table's current
// snapshot reads, as iceberg-go's scan planner finds them, sorted.
func DataFiles(t testing.TB, tbl *iceberg.Table) []string {
	t.Helper()
	tasks, err := localTable(t, tbl).Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	sort.Strings(out)
	return out
}

// localTable is tbl's current metadata as an iceberg-go table reading the
// local filesystem.
func localTable(t testing.TB, tbl *iceberg.Table) *table.Table {
	t.Helper()
	st, err := tbl.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return table.New(table.Identifier{"strata", "t"}, st.Metadata, st.MetadataLocation,
		func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }, nil)
}

// scanTable reads the table's current snapshot with iceberg-go's scanner
// and hands each record batch to f.
func scanTable(t testing.TB, tbl *table.Table, f func(arrow.RecordBatch)) {
	t.Helper()
	ctx := context.Background()
	arrTbl, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arrTbl.Release()
	rdr := array.NewTableReader(arrTbl, 1024)
	defer rdr.Release()
	for rdr.Next() {
		f(rdr.RecordBatch())
	}
}
