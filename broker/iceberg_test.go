package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/tiering"
	"github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

// icebergCommitNow asks the node's admin listener to commit topic now.
func icebergCommitNow(t *testing.T, tb *testBroker, topic string) icebergTopicStatus {
	t.Helper()
	resp, err := http.Post("http://"+tb.srv.httpAddr+icebergStatusPath+"/"+topic+icebergCommitPathSuffix, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st icebergTopicStatus
	if resp.StatusCode != http.StatusOK {
		var e adminErrorJSON
		_ = json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("commit %s: %s: %s", topic, resp.Status, e.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// icebergRows reads the topic's table with iceberg-go's scanner.
func icebergRows(t *testing.T, storeDir, topic string) []string {
	t.Helper()
	return icebergtest.Rows(t, openTestTable(t, storeDir, topic))
}

// committedRows is what a read_committed consumer sees, in icebergRows' form.
func committedRows(t *testing.T, tb *testBroker, topic string, want int) []string {
	t.Helper()
	cl := tb.client(kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rows []string
	for len(rows) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(rows), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			rows = append(rows, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key))
		})
	}
	sort.Strings(rows)
	return rows
}

func TestIcebergTopicCommitsCommittedRecordsExactlyOnce(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("ice", 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("ice"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := &kgo.Record{Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%03d", i), Value: []byte(strings.Repeat("v", 100)),
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 40)
	// A committed and an aborted transaction on partition 0.
	txp := tb.client(kgo.TransactionalID("ice-tx"), kgo.DefaultProduceTopic("ice"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, commit := range []bool{true, false} {
		if err := txp.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if err := txp.ProduceSync(ctx, &kgo.Record{Partition: 0, Key: fmt.Appendf(nil, "tx-%v-%d", commit, j)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txp.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	st := icebergCommitNow(t, tb, "ice")
	if st.RowsCommitted != 45 || st.LastError != "" || st.LagOffsets != 0 {
		t.Fatalf("first commit: %+v", st)
	}
	want := committedRows(t, tb, "ice", 45)
	if got := icebergRows(t, storeDir, "ice"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows\n got %v\nwant %v", got, want)
	}
	for _, r := range icebergRows(t, storeDir, "ice") {
		if strings.Contains(r, "tx-false") {
			t.Fatalf("aborted record %s in the table", r)
		}
	}

	// A restart: the committer resumes from the table's offsets.
	tb.restart()
	produce(40, 60)
	st = icebergCommitNow(t, tb, "ice")
	if st.RowsCommitted != 20 {
		t.Fatalf("commit after restart: %+v", st)
	}
	// Nothing new: nothing committed. (The loop may have committed part of
	// the 20 on its own: its first round after a start is due at once.)
	if idle := icebergCommitNow(t, tb, "ice"); idle.MetadataVersion != st.MetadataVersion || idle.RowsCommitted != 20 {
		t.Fatalf("idle commit: %+v after %+v", idle, st)
	}
	want = committedRows(t, tb, "ice", 65)
	if got := icebergRows(t, storeDir, "ice"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows after restart\n got %v\nwant %v", got, want)
	}
}

func TestIcebergTopicConfigsAreValidated(t *testing.T) {
	for _, bad := range []map[string]string{
		{icebergEnabledConfig: "yes please"},
		{icebergModeConfig: "columns"},
		{icebergValueSubjectConfig: "a\nb"},
		{icebergIntervalConfig: "5"},
		{icebergTableLocationConfig: "/abs"},
		{icebergTableLocationConfig: "s3://x/y"},
		{icebergNamespaceConfig: "a/b"},
		{icebergPartitionSpecConfig: "minute(timestamp)"},
		{icebergTargetFileSizeConfig: "0"},
		{icebergCompactionMinConfig: "1"},
		{icebergCompactionMinConfig: "-1"},
		{icebergCompactionMinConfig: "many"},
	} {
		if err := validateTopicConfigs(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	for _, mode := range []string{icebergModeKeyValue, icebergModeSchemaIDPrefix, icebergModeSchemaLatest} {
		if err := validateTopicConfigs(map[string]string{icebergEnabledConfig: "true", icebergModeConfig: mode, icebergIntervalConfig: "1000", icebergTableLocationConfig: "lake/t", icebergNamespaceConfig: "lake", icebergValueSubjectConfig: "orders-value",
			icebergTargetFileSizeConfig: "1048576", icebergCompactionMinConfig: "0"}); err != nil {
			t.Fatal(err)
		}
	}
}

func (tb *testBroker) createTopicWithPartitions(name string, partitions int32, configs map[string]string) {
	tb.t.Helper()
	cfgs := make(map[string]*string, len(configs))
	for k, v := range configs {
		cfgs[k] = ptr(v)
	}
	tb.createTopic(name, partitions, cfgs)
}

func catalogGet(t *testing.T, base, path string, wantCode int, out any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s: %s, want %d", path, resp.Status, wantCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
}

func TestIcebergRESTCatalog(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("events", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000", icebergNamespaceConfig: "lake"})
	tb.createTopicWithPartitions("plain", 1, nil)
	if err := tb.client().ProduceSync(testContext(t), &kgo.Record{Topic: "events", Key: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"http://" + tb.srv.icebergCatalogAddr, "http://" + tb.srv.httpAddr + icebergCatalogPrefix} {
		var cfg map[string]any
		catalogGet(t, base, "/v1/config", http.StatusOK, &cfg)
		if _, ok := cfg["defaults"]; !ok {
			t.Fatalf("config %v", cfg)
		}
		// Before the first commit the table has no metadata.
		catalogGet(t, base, "/v1/namespaces/lake/tables/events", http.StatusNotFound, nil)
	}
	icebergCommitNow(t, tb, "events")
	base := "http://" + tb.srv.icebergCatalogAddr
	var nss struct{ Namespaces [][]string }
	catalogGet(t, base, "/v1/namespaces", http.StatusOK, &nss)
	if fmt.Sprint(nss.Namespaces) != "[[lake]]" {
		t.Fatalf("namespaces %v", nss.Namespaces)
	}
	var ids struct {
		Identifiers []struct {
			Namespace []string
			Name      string
		}
	}
	catalogGet(t, base, "/v1/namespaces/lake/tables", http.StatusOK, &ids)
	if len(ids.Identifiers) != 1 || ids.Identifiers[0].Name != "events" {
		t.Fatalf("tables %+v", ids)
	}
	var load struct {
		MetadataLocation string          `json:"metadata-location"`
		Metadata         json.RawMessage `json:"metadata"`
	}
	catalogGet(t, base, "/v1/namespaces/lake/tables/events", http.StatusOK, &load)
	if !strings.HasSuffix(load.MetadataLocation, "/iceberg/lake/events/metadata/v2.metadata.json") {
		t.Fatalf("metadata-location %s", load.MetadataLocation)
	}
	md, err := table.ParseMetadataBytes(load.Metadata)
	if err != nil || md.CurrentSnapshot() == nil {
		t.Fatalf("loadTable metadata: %v", err)
	}
	catalogGet(t, base, "/v1/namespaces/lake/tables/plain", http.StatusNotFound, nil)
	catalogGet(t, base, "/v1/namespaces/nope/tables", http.StatusNotFound, nil)
	resp, err := http.Post(base+"/v1/namespaces/lake/tables", "application/json", strings.NewReader(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	var e icebergRESTError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || e.Error.Type != "ForbiddenException" || e.Error.Code != 403 {
		t.Fatalf("createTable: %s %+v", resp.Status, e)
	}
}

// A leader change in a three-node cluster sharing one store: the new leader
// resumes from the table's offsets, so the table holds every committed
// record exactly once.
func TestIcebergLeaderChangeResumesFromTheTable(t *testing.T) {
	storeDir := t.TempDir()
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.ObjectStore = "file://" + storeDir
		cfg.IcebergCatalogListen = ""
	})
	ctx := testContext(t)
	cl := c.client(kgo.DefaultProduceTopic("ice3"), kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	enabled, interval := "true", "3600000"
	resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{icebergEnabledConfig: &enabled, icebergIntervalConfig: &interval}, "ice3")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%03d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	commitOn := func(id int32) icebergTopicStatus {
		t.Helper()
		st, err := c.node(id).srv.iceberg.commitNow(ctx, "ice3")
		if err != nil {
			t.Fatalf("commit on node %d: %v", id, err)
		}
		return st
	}
	produce(0, 50)
	first, _ := leaderOf(ctx, adm, "ice3", 0)
	if st := commitOn(first); st.RowsCommitted != 50 {
		t.Fatalf("first commit on node %d: %+v", first, st)
	}
	produce(50, 80) // committed to the log, not yet to the table
	c.node(first).stop()
	var next int32
	waitUntil(t, 30*time.Second, "a new leader", func() bool {
		next, _ = leaderOf(ctx, adm, "ice3", 0)
		return next > 0 && next != first
	})
	produce(80, 100)
	if st := commitOn(next); st.RowsCommitted != 50 || st.Partitions[0].TableNextOffset != 100 {
		t.Fatalf("commit on the new leader %d: %+v", next, st)
	}
	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("0/%d/k%03d", i, i))
	}
	sort.Strings(want)
	if got := icebergRows(t, storeDir, "ice3"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows after a leader change\n got %v\nwant %v", got, want)
	}
}

// A deleted topic leaves the status (its table stays in the bucket).
func TestIcebergStatusForgetsDeletedTopics(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("gone", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	icebergCommitNow(t, tb, "gone")
	if n := len(tb.srv.iceberg.statuses()); n != 1 {
		t.Fatalf("%d statuses, want 1", n)
	}
	if _, err := kadm.NewClient(tb.client()).DeleteTopics(testContext(t), "gone"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the deleted topic's status gone", func() bool { return len(tb.srv.iceberg.statuses()) == 0 })
}

// TestIcebergCommitsBackToBackWhileBehind: a commit reads the log in pieces
// of its byte budget, writes each piece's files and commits them all as
// one snapshot, up to icebergMaxPiecesPerCommit pieces; when that leaves
// committed records behind, the next commit follows at once rather than an
// interval later, so a topic produced faster than a commit takes catches
// up instead of falling behind for ever. Here the interval is an hour and
// a piece a few records.
func TestIcebergCommitsBackToBackWhileBehind(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.srv.iceberg.pieceBytes.Store(1 << 10)
	tb.srv.iceberg.minBytesPerPartition.Store(1 << 10)
	tb.createTopicWithPartitions("behind", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("behind"))
	const n = 400 // a record a batch, about 6 a piece: more than 32 pieces
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%03d", i), Value: []byte(strings.Repeat("v", 100))}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	icebergCommitNow(t, tb, "behind")
	var st icebergTopicStatus
	waitUntil(t, 20*time.Second, "the table holding every record", func() bool {
		sts := tb.srv.iceberg.statuses()
		if len(sts) != 1 || len(sts[0].Partitions) != 1 {
			return false
		}
		st = sts[0]
		return st.Partitions[0].TableNextOffset == n
	})
	// A snapshot a commit, a file a piece: far fewer snapshots than the
	// 60-odd pieces.
	if st.LagOffsets != 0 || st.RowsCommitted != n || st.Commits < 2 || st.Commits > 6 || st.FilesCommitted < 10*st.Commits {
		t.Fatalf("status after catching up: %+v", st)
	}
	rows := icebergRows(t, storeDir, "behind")
	if len(rows) != n || len(slices.Compact(slices.Clone(rows))) != n {
		t.Fatalf("%d rows (%d distinct), want %d", len(rows), len(slices.Compact(slices.Clone(rows))), n)
	}
}

// TestIcebergMovesPastLongAbortedRuns: past the table's last row, more
// batches of aborted transactions than a commit reads hold no row to
// write; the commit still records the offsets it read, so the next one
// goes on from there instead of reading the same batches again and again.
func TestIcebergMovesPastLongAbortedRuns(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.srv.iceberg.pieceBytes.Store(200)
	tb.srv.iceberg.minBytesPerPartition.Store(200)
	tb.createTopicWithPartitions("aborted", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	ctx := testContext(t)
	txp := tb.client(kgo.TransactionalID("ice-aborted"), kgo.DefaultProduceTopic("aborted"))
	if err := txp.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // a batch each: more than 32 pieces of 200 bytes
		r := &kgo.Record{Key: fmt.Appendf(nil, "a%03d", i), Value: []byte(strings.Repeat("x", 100))}
		if err := txp.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := txp.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	if err := tb.client(kgo.DefaultProduceTopic("aborted")).ProduceSync(ctx, &kgo.Record{Key: []byte("kept")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	end := tb.srv.topics.partition("aborted", 0).LastStableOffset()
	icebergCommitNow(t, tb, "aborted")
	waitUntil(t, 20*time.Second, "the table past the aborted run", func() bool {
		sts := tb.srv.iceberg.statuses()
		return len(sts) == 1 && len(sts[0].Partitions) == 1 && sts[0].Partitions[0].TableNextOffset == end && sts[0].RowsCommitted == 1
	})
	if rows := icebergRows(t, storeDir, "aborted"); len(rows) != 1 || !strings.HasSuffix(rows[0], "/kept") {
		t.Fatalf("rows %v, want the one committed record", rows)
	}
}

// The leader of partition 0 compacts the small files of each commit into
// one (a replace snapshot: same rows, one file) and deletes the table's
// files no snapshot references once they are old; young ones stay.
func TestIcebergCompactionAndOrphanCleanup(t *testing.T) {
	storeDir := t.TempDir()
	// A crashed commit's leftovers from before: one old, one recent.
	dataDir := filepath.Join(storeDir, "iceberg/strata/icec/data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	oldOrphan, youngOrphan := filepath.Join(dataDir, "00000-crashed.parquet"), filepath.Join(dataDir, "00000-running.parquet")
	for _, f := range []string{oldOrphan, youngOrphan} {
		if err := os.WriteFile(f, []byte("PAR1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Older than 3 commit intervals (the safety age of a 1 h interval).
	longAgo := time.Now().Add(-4 * time.Hour)
	if err := os.Chtimes(oldOrphan, longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("icec", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000",
		icebergPartitionSpecConfig: "none", icebergCompactionMinConfig: "3"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("icec"))
	var st icebergTopicStatus
	for round := range 3 {
		for i := range 5 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d-%d", round, i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		st = icebergCommitNow(t, tb, "icec")
	}
	// The third commit made the third small file: all of them became one,
	// on the maintenance goroutine after the commit.
	waitUntil(t, 20*time.Second, "the compaction after the third commit", func() bool {
		st = tb.srv.iceberg.statuses()[0]
		return st.Compactions > 0
	})
	if st.Compactions != 1 || st.FilesCompacted < 3 || st.LastMaintenanceError != "" {
		t.Fatalf("status after three commits: %+v", st)
	}
	tbl := openTestTable(t, storeDir, "icec")
	if files := icebergtest.DataFiles(t, tbl); len(files) != 1 {
		t.Fatalf("data files after compaction: %v", files)
	}
	want := committedRows(t, tb, "icec", 15)
	if got := icebergtest.Rows(t, tbl); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows after compaction\n got %v\nwant %v", got, want)
	}
	loaded, err := tbl.Load(ctx)
	if err != nil || loaded.Metadata.CurrentSnapshot().Summary.Operation != table.OpReplace || loaded.LastOffsets[0] != 14 {
		t.Fatalf("current snapshot after compaction: %+v offsets %v (%v)", loaded.Metadata.CurrentSnapshot().Summary, loaded.LastOffsets, err)
	}
	// The first round swept for orphans: the old leftover went.
	if st.OrphansDeleted != 1 {
		t.Fatalf("orphans deleted %d, want 1", st.OrphansDeleted)
	}
	if _, err := os.Stat(oldOrphan); !os.IsNotExist(err) {
		t.Fatalf("the old orphan is still there: %v", err)
	}
	if _, err := os.Stat(youngOrphan); err != nil {
		t.Fatalf("the young orphan went: %v", err)
	}
	// The next commit resumes after the compaction, exactly once.
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if st := icebergCommitNow(t, tb, "icec"); st.Partitions[0].TableNextOffset != 16 {
		t.Fatalf("commit after compaction: %+v", st)
	}
	if got := icebergtest.Rows(t, tbl); len(got) != 16 {
		t.Fatalf("%d rows after the next commit, want 16: %v", len(got), got)
	}
}

// The metadata-version topic configs reach the table as Iceberg's table
// properties (which bound its metadata-log), also when altered later.
func TestIcebergMetadataVersionConfigs(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("icem", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000",
		icebergMetadataVersionsMaxConfig: "2"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("icem"))
	commit := func(key string) {
		t.Helper()
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(key)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		icebergCommitNow(t, tb, "icem")
	}
	for i := range 4 {
		commit(fmt.Sprint("k", i))
	}
	tbl := openTestTable(t, storeDir, "icem")
	check := func(versionsMax, deleteAfter string, logLen int) {
		t.Helper()
		st, err := tbl.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		props := st.Metadata.Properties()
		if props[table.MetadataPreviousVersionsMaxKey] != versionsMax || props[table.MetadataDeleteAfterCommitEnabledKey] != deleteAfter {
			t.Fatalf("table properties %v, want previous-versions-max %s, delete-after-commit %s", props, versionsMax, deleteAfter)
		}
		if n := len(slices.Collect(st.Metadata.PreviousFiles())); n != logLen {
			t.Fatalf("metadata-log of v%d has %d entries, want %d", st.Version, n, logLen)
		}
	}
	check("2", "true", 2)
	adm := kadm.NewClient(tb.client())
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: icebergMetadataVersionsMaxConfig, Value: kadm.StringPtr("5")},
		{Op: kadm.SetConfig, Name: icebergMetadataDeleteAfterConfig, Value: kadm.StringPtr("false")},
	}, "icem"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the altered config applied", func() bool {
		return tb.srv.topics.topicConfig(tb.srv.topics.get("icem")).values[icebergMetadataDeleteAfterConfig] == "false"
	})
	commit("after")
	check("5", "false", 3)
}

// stuckStore blocks every Get until released (or its context ends),
// and says when the first one started.
type stuckStore struct {
	tiering.ObjectStore
	entered chan struct{} // closed at the first Get
	once    sync.Once
	release chan struct{}
}

func (s *stuckStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.ObjectStore.Get(ctx, key)
}

// A maintenance round that hangs on the store (a slow sweep of a large
// table) delays no commit: maintenance has a goroutine of its own.
func TestIcebergMaintenanceNeverDelaysCommits(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("icefast", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	files, err := tiering.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stuck := &stuckStore{ObjectStore: files, entered: make(chan struct{}), release: make(chan struct{})}
	defer close(stuck.release)
	slow, err := iceberg.Open(iceberg.Config{Store: stuck, Prefix: "iceberg/strata/slow", Location: "file:///nowhere/slow"})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.srv.iceberg
	c.maintenance.Lock()
	c.maintenance.due["slow"] = icebergMaintenanceJob{topic: "slow", tables: &icebergTables{main: slow}, minInputs: 2, orphanMinAge: time.Hour}
	c.maintenance.Unlock()
	c.maintenanceDue <- struct{}{}
	select {
	case <-stuck.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the maintenance round never reached the store")
	}
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("icefast"))
	for i := range 3 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Append(nil, "k", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if st := icebergCommitNow(t, tb, "icefast"); st.Partitions[0].TableNextOffset != int64(i+1) || st.LastError != "" {
			t.Fatalf("commit %d while maintenance hangs: %+v", i, st)
		}
	}
}

// tieredIcebergTopic starts a tiered broker with a one-partition Iceberg
// topic whose table holds its first 10 records (committed on demand only),
// and returns the object store's directory and an uncompressed producer of
// small batches.
func tieredIcebergTopic(t *testing.T, topic string) (*testBroker, string, *kgo.Client) {
	t.Helper()
	tb := tieredBroker(t)
	storeDir := strings.TrimPrefix(tb.srv.cfg.ObjectStore, "file://")
	tb.createTopic(topic, 1, tieredTopicConfigs(icebergEnabledConfig, "true", icebergIntervalConfig, "3600000"))
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	produceValues(t, cl, topic, 10)
	if st := icebergCommitNow(t, tb, topic); st.Partitions[0].TableNextOffset != 10 {
		t.Fatalf("first commit: %+v", st)
	}
	return tb, storeDir, cl
}

// Local retention of a tiered topic deletes segments the table has not
// got yet: the committer reads them back from the remote log (a committed
// and an aborted transaction among them), so the table holds every
// committed offset once, no gap.
func TestIcebergReadsRecordsOnlyInTheRemoteLog(t *testing.T) {
	tb, storeDir, cl := tieredIcebergTopic(t, "icer")
	ctx := testContext(t)
	txp := tb.client(kgo.TransactionalID("icer-tx"), kgo.DefaultProduceTopic("icer"))
	for _, commit := range []bool{true, false} {
		if err := txp.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if err := txp.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "tx-%v-%d", commit, j)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txp.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	produceValues(t, cl, "icer", 4000) // ≈ 900 KiB, 14 segments; local retention keeps 128 KiB
	p := tb.srv.topics.partition("icer", 0)
	waitFor(t, 20*time.Second, "local retention to delete offsets the table lacks", func() bool { return p.Log().LogStartOffset() > 1000 })
	const end = 10 + 12 + 4000 // two transactions of 5 records and a marker
	for {
		st := icebergCommitNow(t, tb, "icer")
		if st.LastError != "" {
			t.Fatalf("commit: %+v", st)
		}
		if st.Partitions[0].TableNextOffset == end {
			break
		}
	}
	want := committedRows(t, tb, "icer", end-7)
	if got := icebergRows(t, storeDir, "icer"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows (%d) differ from the %d committed records: %s", len(got), len(want), firstDiff(got, want))
	}
	if !strings.Contains(fmt.Sprint(want), "tx-true-4") || strings.Contains(fmt.Sprint(want), "tx-false") {
		t.Fatalf("the committed records are not what the transactions left: %v", want[:20])
	}
}

// firstDiff describes where two sorted row lists first differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d rows vs %d", len(got), len(want))
}

// TestIcebergWaitsForTheRemoteManifest: a tiered partition whose remote
// manifest is not loaded (yet, after a start whose load failed) does not
// let the committer skip what only the remote log holds: the read fails
// (the commit is retried) until the manifest is back, and the table ends
// with every committed record.
func TestIcebergWaitsForTheRemoteManifest(t *testing.T) {
	tb, storeDir, cl := tieredIcebergTopic(t, "icer")
	produceValues(t, cl, "icer", 4000)
	p := tb.srv.topics.partition("icer", 0)
	waitFor(t, 20*time.Second, "local retention", func() bool { return p.Log().LogStartOffset() > 1000 })
	p.remote.manifest.Store(nil) // as after a start whose manifest load failed
	if recs, readTo, _, err := readCommittedRecords(testContext(t), p, 10, 32<<20, nil, nil); !errors.Is(err, errManifestNotLoaded) {
		t.Fatalf("read from 10 without the manifest: %d records to %d, err %v; want errManifestNotLoaded", len(recs), readTo, err)
	}
	// The partition's tiering task loads it again on its next run.
	if _, err := p.remote.load(testContext(t)); err != nil {
		t.Fatal(err)
	}
	const end = 10 + 4000
	if st := icebergCommitNow(t, tb, "icer"); st.Partitions[0].TableNextOffset != end {
		t.Fatalf("commit with the manifest back: %+v", st)
	}
	want := committedRows(t, tb, "icer", end)
	if got := icebergRows(t, storeDir, "icer"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows (%d) differ from the %d committed records: %s", len(got), len(want), firstDiff(got, want))
	}
}
