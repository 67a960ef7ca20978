// Package icebergtest reads a table written by tiering/iceberg back through
// iceberg-go's own scanner, for tests: metadata, manifest list, manifests,
// Parquet files.
package icebergtest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/strata-streaming/strata/tiering/iceberg"
)

// Rows scans a table on the local filesystem (a file:// location) and
// returns its rows as "partition/offset/key", sorted.
func Rows(t testing.TB, tbl *iceberg.Table) []string {
	t.Helper()
	ctx := context.Background()
	st, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it := table.New(table.Identifier{"strata", "t"}, st.Metadata, st.MetadataLocation,
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
		keys, ok1 := rec.Column(0).(*array.Binary)
		parts, ok2 := rec.Column(3).(*array.Int32)
		offs, ok3 := rec.Column(4).(*array.Int64)
		if !ok1 || !ok2 || !ok3 {
			t.Fatalf("unexpected columns: %s", rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			rows = append(rows, fmt.Sprintf("%d/%d/%s", parts.Value(i), offs.Value(i), keys.Value(i)))
		}
	}
	sort.Strings(rows)
	return rows
}
