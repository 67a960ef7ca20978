package iceberg_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	iceberg "github.com/apache/iceberg-go"

	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
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

const (
	hintKey = "iceberg/strata/orders/metadata/version-hint.text"
	v1Key   = "iceberg/strata/orders/metadata/v1.metadata.json"
)

func put(t *testing.T, store tiering.ObjectStore, key string, data []byte) {
	t.Helper()
	if err := store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

func fileTable(t *testing.T) (*Table, tiering.ObjectStore) {
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
	return tbl, store
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
	res, err := tbl.Append(ctx, batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Partition 0 spans 10:00..11:30 (2 hours), partition 1 10:00..10:40: 2 files.
	if res.Version != 2 || res.Rows != 15 || res.Files != 2 {
		t.Fatalf("first append: %+v", res)
	}

	// A retry of the same records plus new ones: only the new ones land.
	again := append(testRecords(0, 5, 12, start), testRecords(1, 0, 4, start)...)
	res, err = tbl.Append(ctx, again, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || res.LastOffsets[0] != 12 || res.LastOffsets[1] != 4 {
		t.Fatalf("second append: %+v", res)
	}
	// Nothing new: no commit.
	res, err = tbl.Append(ctx, testRecords(1, 0, 4, start), map[int32]int64{1: 9})
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
	rows := icebergtest.Rows(t, tbl)
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
	tbl, store := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if _, err := tbl.Append(ctx, testRecords(0, 0, 2, start), map[int32]int64{0: 5}); err != nil {
		t.Fatal(err)
	}
	put(t, store, hintKey, []byte("1"))
	st, err := tbl.Load(ctx)
	if err != nil || st.Version != 2 || st.LastOffsets[0] != 5 {
		t.Fatalf("load: version %d offsets %v err %v", st.Version, st.LastOffsets, err)
	}
}

func TestLoadRejectsGarbage(t *testing.T) {
	ctx := context.Background()
	tbl, store := fileTable(t)
	put(t, store, hintKey, []byte("zz"))
	if _, err := tbl.Load(ctx); err == nil {
		t.Fatal("a garbage hint loaded")
	}
	put(t, store, hintKey, []byte("1"))
	put(t, store, v1Key, []byte("{not json"))
	if _, err := tbl.Load(ctx); err == nil {
		t.Fatal("garbage metadata loaded")
	}
}

// Two writers of one table (two nodes leading different partitions) commit
// at once: every commit lands exactly once, none is lost to the race.
func TestConcurrentWritersNeverLoseACommit(t *testing.T) {
	ctx := context.Background()
	tbl, store := fileTable(t)
	other, err := Open(Config{Store: store, Prefix: "iceberg/strata/orders", Location: tbl.Location()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	const rounds, per = 8, 5
	errs := make(chan error, 2)
	for w, writer := range []*Table{tbl, other} {
		go func() {
			for r := range rounds {
				recs := testRecords(int32(w), int64(r*per), int64(r*per+per-1), start)
				for {
					_, err := writer.Append(ctx, recs, nil)
					if errors.Is(err, ErrConflict) {
						continue // lost five races in a row: try again
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, r := range append(testRecords(0, 0, rounds*per-1, start), testRecords(1, 0, rounds*per-1, start)...) {
		want = append(want, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key))
	}
	sort.Strings(want)
	if got := icebergtest.Rows(t, tbl); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	st, err := tbl.Load(ctx)
	if err != nil || st.LastOffsets[0] != rounds*per-1 || st.LastOffsets[1] != rounds*per-1 {
		t.Fatalf("offsets %v %v", st.LastOffsets, err)
	}
}

// Snapshots older than the retention leave the metadata; every row stays.
func TestSnapshotRetentionKeepsRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := tiering.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(Config{Store: store, Prefix: "iceberg/strata/orders", Location: "file://" + filepath.Join(dir, "iceberg/strata/orders"),
		SnapshotRetention: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for r := range 4 {
		if _, err := tbl.Append(ctx, testRecords(0, int64(r*3), int64(r*3+2), start), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	st, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Metadata.Snapshots()); n != 1 || st.LastOffsets[0] != 11 {
		t.Fatalf("%d snapshots (want 1), offsets %v", n, st.LastOffsets)
	}
	if rows := icebergtest.Rows(t, tbl); len(rows) != 12 {
		t.Fatalf("%d rows after expiry, want 12: %v", len(rows), rows)
	}
}

// Past 32 manifests a commit merges them into its own: the snapshot lists
// a bounded number of manifests and every row is still read once.
func TestManifestsAreMerged(t *testing.T) {
	ctx := context.Background()
	tbl, store := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	const commits = 40
	for r := range commits {
		if _, err := tbl.Append(ctx, testRecords(int32(r%3), int64(r*2), int64(r*2+1), start), nil); err != nil {
			t.Fatal(err)
		}
	}
	st, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimPrefix(st.Metadata.CurrentSnapshot().ManifestList, tbl.Location()+"/")
	rc, err := store.Get(ctx, "iceberg/strata/orders/"+key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	list, err := iceberg.ReadManifestList(rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) > 32 || len(list) < 2 {
		t.Fatalf("the current snapshot lists %d manifests, want a merged few", len(list))
	}
	var want []string
	for r := range commits {
		for _, rec := range testRecords(int32(r%3), int64(r*2), int64(r*2+1), start) {
			want = append(want, fmt.Sprintf("%d/%d/%s", rec.Partition, rec.Offset, rec.Key))
		}
	}
	sort.Strings(want)
	if got := icebergtest.Rows(t, tbl); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows after merges\n got %v\nwant %v", got, want)
	}
	if got := st.Metadata.CurrentSnapshot().Summary.Properties["total-records"]; got != fmt.Sprint(commits*2) {
		t.Fatalf("total-records %s", got)
	}
}

// The partitioning of a new table decides the files of a commit: one per
// hour, one per day, or one in all.
func TestPartitioning(t *testing.T) {
	start := time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC) // 30 records 10 min apart: 22:00 to next day 02:50
	for _, tc := range []struct {
		partitioning string
		files        int
	}{{"", 5}, {"hour", 5}, {"day", 2}, {"none", 1}} {
		t.Run("partitioning="+tc.partitioning, func(t *testing.T) {
			dir := t.TempDir()
			store, err := tiering.NewFileStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := Open(Config{Store: store, Prefix: "p", Location: "file://" + filepath.Join(dir, "p"), Partitioning: tc.partitioning})
			if err != nil {
				t.Fatal(err)
			}
			recs := testRecords(0, 0, 29, start)
			res, err := tbl.Append(context.Background(), recs, nil)
			if err != nil || res.Files != tc.files {
				t.Fatalf("append: %+v %v, want %d files", res, err, tc.files)
			}
			if rows := icebergtest.Rows(t, tbl); len(rows) != 30 {
				t.Fatalf("%d rows, want 30", len(rows))
			}
		})
	}
	if _, err := PartitionSpecFor("minute"); err == nil {
		t.Fatal("partitioning by minute accepted")
	}
}

// beginWith begins an append on tbl and writes pieces into it.
func beginWith(t *testing.T, tbl *Table, pieces ...[]Record) *Pending {
	t.Helper()
	p, err := tbl.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range pieces {
		if err := p.Write(context.Background(), piece, nil); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// A Pending written in pieces commits them as one snapshot: records a piece
// repeats are dropped, and nobody sees a piece before Commit.
func TestPendingCommitsPiecesAsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	tbl, _ := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if _, err := tbl.Append(ctx, testRecords(0, 0, 4, start), nil); err != nil {
		t.Fatal(err)
	}
	p := beginWith(t, tbl, testRecords(0, 0, 20, start), testRecords(0, 15, 30, start), testRecords(1, 0, 9, start))
	if st, err := tbl.Load(ctx); err != nil || st.Version != 2 {
		t.Fatalf("before Commit: version %d (%v), want 2", st.Version, err)
	}
	res, err := p.Commit(ctx, map[int32]int64{0: 32, 1: 9}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 || res.Rows != 26+10 || res.LastOffsets[0] != 32 || res.LastOffsets[1] != 9 {
		t.Fatalf("commit: %+v", res)
	}
	var want []string
	for _, r := range append(testRecords(0, 0, 30, start), testRecords(1, 0, 9, start)...) {
		want = append(want, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key))
	}
	sort.Strings(want)
	if rows := icebergtest.Rows(t, tbl); fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", rows, want)
	}
}

// A commit that lands after a compaction, or after another writer's
// append to other partitions, goes on top of it; one after an append to a
// partition it wrote does not, and nothing of it is committed.
func TestPendingRebasesOverOtherPartitionsOnly(t *testing.T) {
	ctx := context.Background()
	tbl, store := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range int64(3) {
		if _, err := tbl.Append(ctx, testRecords(0, i*10, i*10+9, start), nil); err != nil {
			t.Fatal(err)
		}
	}
	p := beginWith(t, tbl, testRecords(0, 30, 39, start))
	other, err := Open(Config{Store: store, Prefix: "iceberg/strata/orders", Location: tbl.Location()})
	if err != nil {
		t.Fatal(err)
	}
	if cr, err := other.Compact(ctx, 2); err != nil || cr.FilesRewritten == 0 {
		t.Fatalf("compaction: %+v %v", cr, err)
	}
	res, err := p.Commit(ctx, nil, false)
	if err != nil || res.Rows != 10 || res.LastOffsets[0] != 39 {
		t.Fatalf("commit over a compaction: %+v %v", res, err)
	}
	if rows := icebergtest.Rows(t, tbl); len(rows) != 40 {
		t.Fatalf("%d rows after the rebased commit, want 40", len(rows))
	}

	// The leader of another partition commits meanwhile: its rows and
	// offsets stay, and this commit goes on top.
	p = beginWith(t, tbl, testRecords(0, 40, 44, start))
	if _, err := other.Append(ctx, testRecords(1, 0, 4, start), nil); err != nil {
		t.Fatal(err)
	}
	res, err = p.Commit(ctx, map[int32]int64{0: 44}, false)
	if err != nil || res.LastOffsets[0] != 44 || res.LastOffsets[1] != 4 {
		t.Fatalf("commit over another partition's append: %+v %v", res, err)
	}
	if rows := icebergtest.Rows(t, tbl); len(rows) != 50 {
		t.Fatalf("%d rows after both partitions' commits, want 50", len(rows))
	}

	p = beginWith(t, tbl, testRecords(0, 45, 54, start))
	if _, err := other.Append(ctx, testRecords(0, 45, 49, start), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, nil, false); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit over moved offsets: %v, want ErrConflict", err)
	}
	if rows := icebergtest.Rows(t, tbl); len(rows) != 55 {
		t.Fatalf("%d rows, want 55: the conflicting commit must add none", len(rows))
	}
}
