package iceberg_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

// countingPacer counts Pace calls and fails the one numbered failAt (1-based,
// 0: never) with context.Canceled, as a stopping server's pacer does.
type countingPacer struct {
	calls, failAt int
}

func (p *countingPacer) Pace(ctx context.Context) error {
	p.calls++
	if p.calls == p.failAt {
		return context.Canceled
	}
	return ctx.Err()
}

// Append and Compact call the Pacer as they go: about every PaceRows rows
// while the Arrow columns are built and after every piece of Parquet
// written or read back. A Pacer's error (the server stopping) fails the
// commit, which then references nothing: the table is as before.
func TestConversionPaces(t *testing.T) {
	ctx := context.Background()
	pacer := &countingPacer{}
	tbl, store, _ := configuredTable(t, Config{Pacer: pacer})
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	// 10,000 rows of 200 bytes: 19 pieces of 512 rows to build, 3 of 4096
	// to write.
	recs := incompressibleRecords(0, 0, 9_999, start.Add(-5000*time.Second), 200)
	res, err := tbl.Append(ctx, recs, nil)
	if err != nil || res.Rows != 10_000 {
		t.Fatalf("append: %+v %v", res, err)
	}
	if pacer.calls < 10_000/PaceRows {
		t.Fatalf("Pace called %d times for 10,000 rows, want at least %d", pacer.calls, 10_000/PaceRows)
	}

	// A pacer that fails midway: nothing is committed.
	before, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failing := &countingPacer{failAt: 3}
	tbl2, err := Open(Config{Store: store, Prefix: tablePrefix, Location: tbl.Location(), Pacer: failing})
	if err != nil {
		t.Fatal(err)
	}
	more := incompressibleRecords(0, 10_000, 12_999, start.Add(-10000*time.Second), 200)
	if _, err := tbl2.Append(ctx, more, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a failing pacer: %v, want context.Canceled", err)
	}
	after, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.LastOffsets[0] != 9_999 {
		t.Fatalf("a canceled append moved the table: v%d -> v%d, offsets %v", before.Version, after.Version, after.LastOffsets)
	}

	// Compaction reads the files back and writes them again, pacing both.
	for r := range 3 {
		if _, err := tbl.Append(ctx, incompressibleRecords(0, int64(10_000+r*1000), int64(10_999+r*1000), start.Add(-10000*time.Second), 200), nil); err != nil {
			t.Fatal(err)
		}
	}
	pacer.calls = 0
	cres, err := tbl.Compact(ctx, 2)
	if err != nil || cres.FilesRewritten < 2 {
		t.Fatalf("compact: %+v %v", cres, err)
	}
	if pacer.calls < 2 {
		t.Fatalf("Pace called %d times by a compaction of %d files", pacer.calls, cres.FilesRewritten)
	}
	rows := icebergtest.Rows(t, tbl)
	slices.Sort(rows)
	if n := len(slices.Compact(rows)); len(rows) != 13_000 || n != 13_000 {
		t.Fatalf("%d rows (%d distinct) after the appends and the compaction, want 13,000", len(rows), n)
	}
}
