package iceberg_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

const tablePrefix = "iceberg/strata/orders"

// configuredTable is a table on a FileStore in a temporary directory, with
// cfg's other settings.
func configuredTable(t *testing.T, cfg Config) (*Table, tiering.ObjectStore, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := tiering.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Prefix, cfg.Location = store, tablePrefix, "file://"+filepath.Join(dir, tablePrefix)
	tbl, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, store, dir
}

// incompressibleRecords are records of partition p, offsets from..to, all
// in the hour of start (a second apart), with size random value bytes.
func incompressibleRecords(p int32, from, to int64, start time.Time, size int) []Record {
	rng := rand.New(rand.NewPCG(uint64(p), uint64(from)))
	var out []Record
	for off := from; off <= to; off++ {
		value := make([]byte, size)
		for i := range value {
			value[i] = byte(rng.Uint32())
		}
		out = append(out, Record{Partition: p, Offset: off, Timestamp: start.Add(time.Duration(off) * time.Second),
			Key: fmt.Appendf(nil, "k-%d-%d", p, off), Value: value})
	}
	return out
}

// appendCommits appends n commits of ten records of partition 0 each (in
// the hour of start) and returns their records.
func appendCommits(t *testing.T, tbl *Table, n int, start time.Time) [][]Record {
	t.Helper()
	var all [][]Record
	for r := range n {
		recs := incompressibleRecords(0, int64(r*10), int64(r*10+9), start, 10)
		all = append(all, recs)
		if _, err := tbl.Append(context.Background(), recs, nil); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

func rowNames(records ...[]Record) []string {
	var out []string
	for _, rs := range records {
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key))
		}
	}
	sort.Strings(out)
	return out
}

// dataFiles are the Parquet objects under the table's data/, key to size.
func dataFiles(t *testing.T, store tiering.ObjectStore) map[string]int64 {
	t.Helper()
	objects, err := store.List(context.Background(), tablePrefix+"/data/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, o := range objects {
		out[o.Key] = o.Size
	}
	return out
}

// A commit's rows of one hour past the target size go to several files,
// each about the target (the first file of a table's first commit teaches
// the writer how large its files come out per estimated byte: it may be a
// quarter over), every row once.
func TestTargetFileSizeRollsDataFiles(t *testing.T) {
	const target = 16 << 10
	tbl, store, _ := configuredTable(t, Config{TargetFileSize: target})
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var all [][]Record
	for hour := range 2 {
		// ~150 KB in one hour: about 9 files.
		recs := incompressibleRecords(0, int64(hour*300), int64(hour*300+299), start.Add(time.Duration(hour)*time.Hour-time.Duration(hour*300)*time.Second), 500)
		all = append(all, recs)
		before := dataFiles(t, store)
		res, err := tbl.Append(context.Background(), recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int64
		for key, size := range dataFiles(t, store) {
			if _, old := before[key]; !old {
				sizes = append(sizes, size)
			}
		}
		slices.Sort(sizes)
		t.Logf("commit %d: %d rows of ~520 bytes, target %d: %d files of %v bytes", hour, len(recs), target, len(sizes), sizes)
		if res.Files < 8 || len(sizes) != res.Files {
			t.Fatalf("%d files committed, %d stored; want about 150 KB / 16 KiB = 9", res.Files, len(sizes))
		}
		limit := int64(target + target/16)
		if hour == 0 {
			limit = target + target/4
		}
		if sizes[len(sizes)-1] > limit {
			t.Errorf("commit %d: files of %v bytes, target %d", hour, sizes, target)
		}
	}
	if got := icebergtest.Rows(t, tbl); fmt.Sprint(got) != fmt.Sprint(rowNames(all...)) {
		t.Fatalf("rows\n got %v\nwant %v", got, rowNames(all...))
	}
	if _, err := Open(Config{Store: store, Prefix: "p", Location: "file:///p", TargetFileSize: -1}); err == nil {
		t.Fatal("a negative target file size was accepted")
	}
}

// Compaction merges the small files of each hour into one, as a replace
// snapshot with the same rows and the same offsets in its summary, and
// exactly-once appends go on from it.
func TestCompactionRewritesSmallFiles(t *testing.T) {
	ctx := context.Background()
	tbl, store, _ := configuredTable(t, Config{})
	start := time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)
	var all [][]Record
	for r := range 6 {
		// Each commit: partition 0 in 10:xx and 11:xx (40 minutes apart), partition 1 in 10:xx.
		recs := []Record{}
		for i, p := range []int32{0, 0, 1} {
			off := int64(r * 2)
			ts := start.Add(time.Duration(r) * time.Minute)
			if i == 1 {
				off, ts = off+1, ts.Add(40*time.Minute)
			}
			recs = append(recs, Record{Partition: p, Offset: off, Timestamp: ts, Key: fmt.Appendf(nil, "k%d-%d", p, off), Value: []byte("v")})
		}
		all = append(all, recs)
		if _, err := tbl.Append(ctx, recs, map[int32]int64{1: int64(r*2) + 1}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dataFiles(t, store)); n != 12 {
		t.Fatalf("%d data files before compaction, want 12 (2 hours x 6 commits)", n)
	}
	if _, err := tbl.Compact(ctx, 1); err == nil {
		t.Fatal("compaction with 1 input file accepted")
	}
	// Seven small files per hour are needed: nothing happens.
	res, err := tbl.Compact(ctx, 7)
	if err != nil || res.FilesRewritten != 0 || res.Version != before.Version {
		t.Fatalf("compact(7): %+v %v", res, err)
	}
	res, err = tbl.Compact(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRewritten != 12 || res.FilesWritten != 2 || res.Rows != 18 || res.Version != before.Version+1 {
		t.Fatalf("compact(6): %+v", res)
	}
	after, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := after.Metadata.CurrentSnapshot()
	if snap.Summary.Operation != table.OpReplace || snap.Summary.Properties["total-data-files"] != "2" ||
		snap.Summary.Properties["total-records"] != "18" || snap.Summary.Properties["deleted-data-files"] != "12" {
		t.Fatalf("replace snapshot summary: %v %v", snap.Summary.Operation, snap.Summary.Properties)
	}
	if fmt.Sprint(after.LastOffsets) != fmt.Sprint(before.LastOffsets) || after.LastOffsets[1] != 11 {
		t.Fatalf("offsets after compaction %v, before %v", after.LastOffsets, before.LastOffsets)
	}
	if got, want := icebergtest.Rows(t, tbl), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows after compaction\n got %v\nwant %v", got, want)
	}
	// The live files are the two new ones (the scan read 18 rows from them).
	if live := icebergtest.DataFiles(t, tbl); len(live) != 2 {
		t.Fatalf("live files after compaction: %v", live)
	}
	// Again: every file is one of its hour now, nothing to do.
	if res, err := tbl.Compact(ctx, 2); err != nil || res.FilesRewritten != 0 {
		t.Fatalf("second compaction: %+v %v", res, err)
	}
	// Exactly once across the replace snapshot: old records are dropped,
	// new ones land.
	more := []Record{{Partition: 0, Offset: 11, Timestamp: start, Key: []byte("dup")}, {Partition: 0, Offset: 12, Timestamp: start, Key: []byte("k0-12")}}
	if res, err := tbl.Append(ctx, more, nil); err != nil || res.Rows != 1 {
		t.Fatalf("append after compaction: %+v %v", res, err)
	}
	if got, want := icebergtest.Rows(t, tbl), rowNames(append(all, more[1:])...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows after the next append\n got %v\nwant %v", got, want)
	}
}

// hookedStore runs beforeCAS once, before the first PutIfAbsent.
type hookedStore struct {
	tiering.ObjectStore
	beforeCAS func()
}

func (s *hookedStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if hook := s.beforeCAS; hook != nil {
		s.beforeCAS = nil
		hook()
	}
	return s.ObjectStore.(tiering.ConditionalPutter).PutIfAbsent(ctx, key, r, size)
}

// An append that commits while a compaction is under way wins the
// metadata version; the compaction commits its rewritten files again on
// top of the new state without writing them again (the append removed
// none of its inputs), and the appended rows are in the table after it.
func TestCompactionLosesNoConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	appender, store, _ := configuredTable(t, Config{})
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	all := appendCommits(t, appender, 4, start)
	late := incompressibleRecords(1, 0, 9, start, 10)
	all = append(all, late)
	hooked := &hookedStore{ObjectStore: store}
	hooked.beforeCAS = func() {
		if _, err := appender.Append(ctx, late, nil); err != nil {
			t.Error(err)
		}
	}
	compactor, err := Open(Config{Store: hooked, Prefix: tablePrefix, Location: appender.Location()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := compactor.Compact(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The retry kept the four files it had rewritten; the appended one
	// stays beside them.
	if res.FilesRewritten != 4 || res.FilesWritten != 1 || res.Version != 7 {
		t.Fatalf("compaction after losing the race: %+v (want 4 files into 1, metadata v7)", res)
	}
	if files := dataFiles(t, store); len(files) != 4+1+1 {
		t.Fatalf("data files %v: want the 4 appended, the late one and one compacted (none written twice)", files)
	}
	if live := icebergtest.DataFiles(t, appender); len(live) != 2 {
		t.Fatalf("live files %v: want the compacted one and the late one", live)
	}
	if got, want := icebergtest.Rows(t, appender), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	st, err := appender.Load(ctx)
	if err != nil || st.LastOffsets[0] != 39 || st.LastOffsets[1] != 9 {
		t.Fatalf("offsets %v %v", st.LastOffsets, err)
	}
}

// Two compactions of the same files: the one that loses the race finds
// its inputs gone and starts over (finding nothing left to do), rather
// than adding their rows a second time.
func TestCompactionRaceWithACompactionDuplicatesNothing(t *testing.T) {
	ctx := context.Background()
	first, store, _ := configuredTable(t, Config{})
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	all := appendCommits(t, first, 4, start)
	hooked := &hookedStore{ObjectStore: store}
	hooked.beforeCAS = func() {
		if res, err := first.Compact(ctx, 2); err != nil || res.FilesRewritten != 4 {
			t.Errorf("the winning compaction: %+v %v", res, err)
		}
	}
	second, err := Open(Config{Store: hooked, Prefix: tablePrefix, Location: first.Location()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := second.Compact(ctx, 2)
	if err != nil || res.FilesRewritten != 0 || res.Version != 6 {
		t.Fatalf("the losing compaction: %+v %v (want nothing more at v6)", res, err)
	}
	if got, want := icebergtest.Rows(t, first), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
}

// Orphan cleanup deletes the files no retained snapshot references (those
// a compaction replaced once their snapshots expired, and a crashed
// commit's leftovers) when they are old enough, and keeps referenced and
// young ones.
func TestRemoveOrphansKeepsReferencedAndYoungFiles(t *testing.T) {
	ctx := context.Background()
	tbl, store, dir := configuredTable(t, Config{SnapshotRetention: time.Millisecond})
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	all := appendCommits(t, tbl, 3, start)
	replaced := dataFiles(t, store)
	if res, err := tbl.Compact(ctx, 2); err != nil || res.FilesRewritten != 3 {
		t.Fatalf("compact: %+v %v", res, err)
	}
	// A commit that crashed after writing its files: never referenced.
	hour := tablePrefix + "/data/timestamp_hour=2026-12-04-10/"
	put(t, store, hour+"00000-crashed.parquet", []byte("PAR1"))
	put(t, store, tablePrefix+"/metadata/crashed-m0.avro", []byte("Obj"))
	// Another table whose location (a user's iceberg.table.location) lies
	// below this one's: the recursive listing sees its files, which are
	// not this table's to delete.
	nestedData := tablePrefix + "/data/other/data/timestamp_hour=2026-12-04-10/00000-x.parquet"
	nestedMeta := tablePrefix + "/metadata/other/metadata/snap-1.avro"
	put(t, store, nestedData, []byte("PAR1"))
	put(t, store, nestedMeta, []byte("Obj"))
	// The next commit expires every earlier snapshot: the replaced files
	// and the old manifests are referenced no more.
	time.Sleep(2 * time.Millisecond)
	next := incompressibleRecords(0, 30, 39, start, 10)
	all = append(all, next)
	if _, err := tbl.Append(ctx, next, nil); err != nil {
		t.Fatal(err)
	}
	// Everything so far is two hours old; a running commit's file is new.
	old := time.Now().Add(-2 * time.Hour)
	err := filepath.Walk(filepath.Join(dir, tablePrefix), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	young := hour + "00000-running.parquet"
	put(t, store, young, []byte("PAR1"))

	deleted, err := tbl.RemoveOrphans(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	left := dataFiles(t, store)
	for key := range replaced {
		if _, ok := left[key]; ok {
			t.Errorf("replaced data file %s is still there", key)
		}
	}
	if _, ok := left[hour+"00000-crashed.parquet"]; ok {
		t.Error("the crashed commit's data file is still there")
	}
	if _, ok := left[young]; !ok {
		t.Error("a young unreferenced file was deleted")
	}
	if _, ok := left[nestedData]; !ok {
		t.Error("a nested table's data file was deleted")
	}
	if nested, err := store.List(ctx, tablePrefix+"/metadata/other/"); err != nil || len(nested) != 1 {
		t.Errorf("a nested table's manifest list: %v %v, want it kept", nested, err)
	}
	live := icebergtest.DataFiles(t, tbl)
	if len(left) != len(live)+2 {
		t.Errorf("data files left %v, live %v (+ the young one and the nested table's)", left, live)
	}
	metadata, err := store.List(ctx, tablePrefix+"/metadata/")
	if err != nil {
		t.Fatal(err)
	}
	var avro, json int
	for _, o := range metadata {
		switch {
		case o.Key == tablePrefix+"/metadata/crashed-m0.avro":
			t.Error("the crashed commit's manifest is still there")
		case o.Key == nestedMeta: // the nested table's, counted above
		case strings.HasSuffix(o.Key, ".avro"):
			avro++
		case strings.HasSuffix(o.Key, ".metadata.json"):
			json++
		}
	}
	// One snapshot is left: its manifest list, its manifest and the
	// replace snapshot's (which lists the compacted file). Every metadata
	// version stays.
	if avro != 3 || json != 6 {
		t.Errorf("%d manifests and lists, %d metadata versions left; want 3 and 6", avro, json)
	}
	// 3 replaced + 1 crashed data files; the 3 lists and 3 manifests of
	// the expired appends, the replace snapshot's list, 1 crashed manifest.
	if deleted != 12 {
		t.Errorf("%d files deleted, want 12", deleted)
	}
	if got, want := icebergtest.Rows(t, tbl), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows after the cleanup\n got %v\nwant %v", got, want)
	}
	// A second round finds nothing more.
	if n, err := tbl.RemoveOrphans(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("second cleanup: %d %v", n, err)
	}
}
