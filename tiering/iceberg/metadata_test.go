package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

// foreignMetadata are metadata files another writer (an engine with a
// catalog of its own) may put in the table's metadata directory, and a
// name that only looks like one of Strata's versions.
var foreignMetadata = []string{
	tablePrefix + "/metadata/00001-0f8fad5b-d9cb-469f-a165-70867728950e.metadata.json",
	tablePrefix + "/metadata/00002-7c9e6679-7425-40de-944b-e07fc1f90ae7.metadata.json",
	tablePrefix + "/metadata/v01.metadata.json",
}

// metadataVersions are the N of the table's vN.metadata.json objects,
// ascending.
func metadataVersions(t *testing.T, store tiering.ObjectStore) []int {
	t.Helper()
	objects, err := store.List(context.Background(), tablePrefix+"/metadata/")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, o := range objects {
		var v int
		name := strings.TrimPrefix(o.Key, tablePrefix+"/metadata/")
		if _, err := fmt.Sscanf(name, "v%d.metadata.json", &v); err == nil && name == fmt.Sprintf("v%d.metadata.json", v) {
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out
}

func versionRange(from, to int) []int {
	var out []int
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// metadataLog is the version numbers the current metadata's metadata-log
// lists, in its order.
func metadataLog(t *testing.T, tbl *Table) []int {
	t.Helper()
	st, err := tbl.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for e := range st.Metadata.PreviousFiles() {
		var v int
		if _, err := fmt.Sscanf(filepath.Base(e.MetadataFile), "v%d.metadata.json", &v); err != nil {
			t.Fatalf("metadata-log entry %q", e.MetadataFile)
		}
		out = append(out, v)
	}
	return out
}

func putForeignMetadata(t *testing.T, store tiering.ObjectStore) {
	t.Helper()
	for _, key := range foreignMetadata {
		put(t, store, key, []byte(`{"format-version":2}`))
	}
}

func assertForeignMetadataKept(t *testing.T, store tiering.ObjectStore) {
	t.Helper()
	for _, key := range foreignMetadata {
		if _, err := store.Head(context.Background(), key); err != nil {
			t.Errorf("another writer's %s: %v", key, err)
		}
	}
}

// With delete-after-commit, a commit deletes the version that fell out of
// the metadata-log: past MetadataPreviousVersionsMax+some commits only the
// current version and MetadataPreviousVersionsMax before it are left, the
// metadata-log lists exactly those, and another writer's metadata files in
// the same directory stay.
func TestOldMetadataVersionsAreDeletedAfterCommit(t *testing.T) {
	ctx := context.Background()
	const keep, commits = 3, 10
	tbl, store, _ := configuredTable(t, Config{MetadataPreviousVersionsMax: keep, MetadataDeleteAfterCommit: true, MetadataMinAge: time.Nanosecond})
	putForeignMetadata(t, store)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var all [][]Record
	deleted := 0
	for r := range commits {
		recs := incompressibleRecords(0, int64(r*10), int64(r*10+9), start, 10)
		all = append(all, recs)
		res, err := tbl.Append(ctx, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		deleted += res.MetadataFilesDeleted
		// v1 is the empty table: commit r writes v(r+2).
		if got, want := metadataVersions(t, store), versionRange(max(1, r+2-keep), r+2); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after commit %d: versions %v, want %v", r, got, want)
		}
	}
	if want := commits - keep; deleted != want {
		t.Errorf("commits reported %d versions deleted, want %d", deleted, want)
	}
	if got, want := metadataLog(t, tbl), versionRange(commits+1-keep, commits); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metadata-log %v, want %v", got, want)
	}
	st, err := tbl.Load(ctx)
	if err != nil || st.Version != commits+1 {
		t.Fatalf("load: version %d, %v", st.Version, err)
	}
	props := st.Metadata.Properties()
	if props[table.MetadataPreviousVersionsMaxKey] != "3" || props[table.MetadataDeleteAfterCommitEnabledKey] != "true" {
		t.Errorf("table properties %v", props)
	}
	assertForeignMetadataKept(t, store)
	if got, want := icebergtest.Rows(t, tbl), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	// A sweep finds no version left to delete, and keeps the foreign files.
	if n, err := tbl.RemoveOrphans(ctx, time.Now().Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("sweep: %d deleted, %v", n, err)
	}
	assertForeignMetadataKept(t, store)
}

// Without delete-after-commit (Iceberg's default) every version stays, and
// the metadata-log is bounded all the same.
func TestMetadataLogIsBoundedWithoutDeletion(t *testing.T) {
	const keep = 2
	tbl, store, _ := configuredTable(t, Config{MetadataPreviousVersionsMax: keep, MetadataMinAge: time.Nanosecond})
	appendCommits(t, tbl, 6, time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC))
	if got, want := metadataVersions(t, store), versionRange(1, 7); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	if got, want := metadataLog(t, tbl), versionRange(5, 6); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("metadata-log %v, want %v", got, want)
	}
	if n, err := tbl.RemoveOrphans(context.Background(), time.Now().Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("sweep: %d deleted, %v", n, err)
	}
}

// A hint that names a deleted version (its writer's hint write failed, or
// a crash between the metadata and the hint, while later commits deleted
// it), or no hint at all: Load finds the newest version, and the next
// commit follows it rather than forking an old one.
func TestLoadWhenTheHintNamesADeletedVersion(t *testing.T) {
	ctx := context.Background()
	tbl, store, _ := configuredTable(t, Config{MetadataPreviousVersionsMax: 2, MetadataDeleteAfterCommit: true, MetadataMinAge: time.Nanosecond})
	putForeignMetadata(t, store)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	all := appendCommits(t, tbl, 6, start) // v1..v7, v5..v7 left
	for _, hint := range []string{"2", ""} {
		if hint == "" {
			if err := store.Delete(ctx, hintKey); err != nil {
				t.Fatal(err)
			}
		} else {
			put(t, store, hintKey, []byte(hint))
		}
		st, err := tbl.Load(ctx)
		if err != nil || st.Version != 7 || st.LastOffsets[0] != 59 {
			t.Fatalf("hint %q: load version %d offsets %v, %v", hint, st.Version, st.LastOffsets, err)
		}
	}
	recs := incompressibleRecords(0, 60, 69, start, 10)
	res, err := tbl.Append(ctx, recs, nil)
	if err != nil || res.Version != 8 || res.Rows != 10 {
		t.Fatalf("append after the hint went: %+v %v", res, err)
	}
	if got, want := icebergtest.Rows(t, tbl), rowNames(append(all, recs)...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	// A hint whose version is gone with no version left at all is a
	// broken table, not an empty one to create again.
	for _, v := range metadataVersions(t, store) {
		if err := store.Delete(ctx, fmt.Sprintf("%s/metadata/v%d.metadata.json", tablePrefix, v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Load(ctx); !errors.Is(err, ErrCorruptTable) {
		t.Fatalf("load with no version left: %v, want ErrCorruptTable", err)
	}
}

// A table that kept every version (deletion was off) has them deleted by
// RemoveOrphans once deletion is on: all but the newest ones kept, the
// young ones and another writer's files stay.
func TestRemoveOrphansDeletesOldMetadataVersions(t *testing.T) {
	ctx := context.Background()
	tbl, store, dir := configuredTable(t, Config{})
	putForeignMetadata(t, store)
	appendCommits(t, tbl, 8, time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)) // v1..v9
	// Versions 1..6 were written two hours ago, 7..9 now.
	old := time.Now().Add(-2 * time.Hour)
	for v := 1; v <= 6; v++ {
		if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("%s/metadata/v%d.metadata.json", tablePrefix, v)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range foreignMetadata {
		if err := os.Chtimes(filepath.Join(dir, key), old, old); err != nil {
			t.Fatal(err)
		}
	}
	cleaner, err := Open(Config{Store: store, Prefix: tablePrefix, Location: tbl.Location(),
		MetadataPreviousVersionsMax: 2, MetadataDeleteAfterCommit: true, MetadataMinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Keeping 2 previous versions leaves v7..v9.
	n, err := cleaner.RemoveOrphans(ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 6 {
		t.Fatalf("sweep: %d deleted, %v; want 6", n, err)
	}
	if got, want := metadataVersions(t, store), versionRange(7, 9); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	assertForeignMetadataKept(t, store)
	if st, err := cleaner.Load(ctx); err != nil || st.Version != 9 {
		t.Fatalf("load: %d %v", st.Version, err)
	}
	// Versions younger than MetadataMinAge stay however many there are.
	young, err := Open(Config{Store: store, Prefix: tablePrefix, Location: tbl.Location(),
		MetadataPreviousVersionsMax: 1, MetadataDeleteAfterCommit: true, MetadataMinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := young.RemoveOrphans(ctx, time.Now().Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("sweep keeping 1: %d deleted, %v; want none (v7 is young)", n, err)
	}
	if got, want := metadataVersions(t, store), versionRange(7, 9); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
}

// A writer whose commit attempt is overtaken by more than
// MetadataPreviousVersionsMax commits of another one: the version it
// aims at was deleted as old, but only once older than MetadataMinAge, so
// within an attempt it is still there, the compare-and-swap fails and the
// writer retries on the new state. (Without the age bound its PutIfAbsent
// of the deleted version would succeed and its rows would go to a fork no
// reader sees.)
func TestDeletedVersionsCannotBeCommittedAgain(t *testing.T) {
	ctx := context.Background()
	cfg := Config{MetadataPreviousVersionsMax: 1, MetadataDeleteAfterCommit: true, MetadataMinAge: time.Hour}
	fast, store, _ := configuredTable(t, cfg)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	all := appendCommits(t, fast, 1, start) // v2
	var overtaken atomic.Bool
	hooked := &hookedStore{ObjectStore: store, beforeCAS: func() {
		// The slow writer loaded v2 and is about to write v3: meanwhile
		// the fast one commits v3..v6.
		all = append(all, appendCommitsFrom(t, fast, 1, 4, start)...)
		overtaken.Store(true)
	}}
	cfg.Store, cfg.Prefix, cfg.Location = hooked, tablePrefix, fast.Location()
	slow, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	late := incompressibleRecords(1, 0, 9, start, 10)
	res, err := slow.Append(ctx, late, nil)
	if err != nil || !overtaken.Load() || res.Version != 7 {
		t.Fatalf("slow append: %+v %v (want v7 after the fast writer's v3..v6)", res, err)
	}
	all = append(all, late)
	if got, want := icebergtest.Rows(t, fast), rowNames(all...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
}

// appendCommitsFrom is appendCommits starting at commit from.
func appendCommitsFrom(t *testing.T, tbl *Table, from, n int, start time.Time) [][]Record {
	t.Helper()
	var all [][]Record
	for r := from; r < from+n; r++ {
		recs := incompressibleRecords(0, int64(r*10), int64(r*10+9), start, 10)
		all = append(all, recs)
		if _, err := tbl.Append(context.Background(), recs, nil); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// countingStore counts the reads of manifests and manifest lists (.avro).
type countingStore struct {
	tiering.ObjectStore
	avroReads atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasSuffix(key, ".avro") {
		s.avroReads.Add(1)
	}
	return s.ObjectStore.Get(ctx, key)
}

func (s *countingStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	return s.ObjectStore.(tiering.ConditionalPutter).PutIfAbsent(ctx, key, r, size)
}

// countedTables are a table with three commits of one file each, and a
// second Table of it (with cache, nil for its own) whose manifest reads
// are counted.
func countedTables(t *testing.T, cache *ManifestCache) (writer *Table, counting *countingStore, counted *Table) {
	t.Helper()
	writer, store, _ := configuredTable(t, Config{})
	appendCommits(t, writer, 3, time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC))
	counting = &countingStore{ObjectStore: store}
	counted, err := Open(Config{Store: counting, Prefix: tablePrefix, Location: writer.Location(), ManifestCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	return writer, counting, counted
}

// Maintenance of an unchanged table reads no manifest: a Compact of the
// snapshot an earlier Compact found nothing to do in stops after the
// metadata, and decoded manifests and manifest lists are cached (they are
// never rewritten), so after a commit only its new ones are read.
func TestMaintenanceOfAnUnchangedTableReadsNoManifest(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	writer, counting, maint := countedTables(t, nil)
	round := func(name string, wantReads int64) {
		t.Helper()
		counting.avroReads.Store(0)
		if res, err := maint.Compact(ctx, 10); err != nil || res.FilesRewritten != 0 {
			t.Fatalf("%s: compact %+v %v", name, res, err)
		}
		// Every file is a candidate: the sweep reads what references them.
		if _, err := maint.RemoveOrphans(ctx, time.Now().Add(time.Minute)); err != nil {
			t.Fatalf("%s: sweep %v", name, err)
		}
		if got := counting.avroReads.Load(); got != wantReads {
			t.Fatalf("%s: %d manifests and lists read, want %d", name, got, wantReads)
		}
	}
	// The first round reads the current snapshot's list and its three
	// manifests; the sweep reads the two older snapshots' lists.
	round("first round", 3+3)
	round("unchanged table", 0)
	appendCommitsFrom(t, writer, 3, 1, start)
	// The new snapshot's list and manifest; the other three are cached.
	round("after one commit", 2)
	// Without a cache, a second Compact of an unchanged snapshot still
	// reads nothing: it knows that snapshot has nothing to compact.
	uncached, err := Open(Config{Store: counting, Prefix: tablePrefix, Location: writer.Location(), ManifestCache: NewManifestCache(0)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{1 + 4, 0} {
		counting.avroReads.Store(0)
		if res, err := uncached.Compact(ctx, 10); err != nil || res.FilesRewritten != 0 || counting.avroReads.Load() != want {
			t.Fatalf("uncached compaction %d: %+v %v, %d reads, want %d", i, res, err, counting.avroReads.Load(), want)
		}
	}
	// Compaction of the same snapshot with another threshold looks again
	// (from the cache).
	counting.avroReads.Store(0)
	if res, err := maint.Compact(ctx, 4); err != nil || res.FilesRewritten != 4 || counting.avroReads.Load() != 0 {
		t.Fatalf("compact with 4: %+v %v, %d reads", res, err, counting.avroReads.Load())
	}
}

// The cache keeps at most its bound of entries, least recently used out
// first, and still answers correctly past it.
func TestManifestCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	// Room for one manifest list of 3 manifests and one manifest of one
	// file: each sweep reads again what it evicted itself.
	_, counting, maint := countedTables(t, NewManifestCache(4))
	for range 2 {
		counting.avroReads.Store(0)
		if _, err := maint.RemoveOrphans(ctx, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got := counting.avroReads.Load(); got != 3+3 {
			t.Fatalf("%d reads, want 6 (3 lists, 3 manifests: a bound of 4 entries keeps none across a sweep)", got)
		}
	}
}
