package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// Iceberg topics end to end: kcat and a transactional franz-go producer
// write to an iceberg.enabled topic on a `strata server` whose object store
// is a real MinIO; `strata iceberg commit` commits; then two readers that
// share no code with Strata's writer read the table from the bucket
// (e2e/iceberg/read.mjs): icebird through the table's metadata, and DuckDB
// over the Parquet files the current snapshot's manifests list. Both must
// see exactly what a read_committed consumer sees. Then the broker is
// killed (SIGKILL) between timed commits, restarted, and the table must
// still hold every committed record exactly once.

// icebergReaders is read.mjs's output.
type icebergReaders struct {
	Files   int      `json:"files"`
	Icebird []string `json:"icebird"`
	DuckDB  []string `json:"duckdb"`
}

func readIcebergTable(t *testing.T, node, tableURL, endpoint string) icebergReaders {
	t.Helper()
	res := mustRun(t, 2*time.Minute, "", node, filepath.Join(moduleRoot, "e2e", "iceberg", "read.mjs"), tableURL, endpoint)
	var out icebergReaders
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("read.mjs: %v\nstdout: %s\nstderr: %s", err, clip(res.stdout, 2000), clip(res.stderr, 2000))
	}
	sort.Strings(out.Icebird)
	sort.Strings(out.DuckDB)
	return out
}

// readCommittedRows is what a read_committed consumer sees of topic, as
// "partition/offset/key" rows, sorted.
func readCommittedRows(t *testing.T, addr, topic string, want int) []string {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rows []string
	for len(rows) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s", len(rows), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { rows = append(rows, fmt.Sprintf("%d/%d/%s", r.Partition, r.Offset, r.Key)) })
	}
	sort.Strings(rows)
	return rows
}

func checkIcebergReaders(t *testing.T, got icebergReaders, want []string) {
	t.Helper()
	for name, rows := range map[string][]string{"icebird": got.Icebird, "duckdb": got.DuckDB} {
		if strings.Join(rows, ",") != strings.Join(want, ",") {
			t.Fatalf("%s read %d rows, want the %d committed: %s", name, len(rows), len(want), firstLineDiff(strings.Join(rows, "\n"), strings.Join(want, "\n")))
		}
		for _, r := range rows {
			if strings.Contains(r, "aborted") {
				t.Fatalf("%s read an aborted record: %s", name, r)
			}
		}
	}
}

// icebergE2ESetup finds node, kcat and the readers' npm packages, and
// starts a MinIO whose objects under prefix anyone may read (the readers
// fetch them anonymously, as from a public bucket).
func icebergE2ESetup(t *testing.T, prefix string) (node, kcat string, store *miniotest.Server) {
	t.Helper()
	node = requireTool(t, "node", "apt-get install -y nodejs npm")
	kcat = requireTool(t, "kcat", kcatInstall)
	if _, err := os.Stat(filepath.Join(moduleRoot, "e2e", "iceberg", "node_modules", "icebird", "package.json")); err != nil {
		missingTool(t, "icebird and @duckdb/node-api", "cd e2e/iceberg && npm ci")
	}
	store = miniotest.New(t)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/%s/*"]}]}`, miniotest.Bucket, prefix)
	if err := store.Client().SetBucketPolicy(context.Background(), miniotest.Bucket, policy); err != nil {
		t.Fatal(err)
	}
	return node, kcat, store
}

func TestIcebergTopicE2E(t *testing.T) {
	t.Parallel()
	const prefix, topic = "iceberg-e2e", "orders"
	node, kcat, store := icebergE2ESetup(t, prefix)
	catalog := freeAddr(t)
	srv := startServerEnv(t, store.AWSEnv(), "--object-store", store.StoreURL(prefix), "--set", "iceberg.catalog.listen="+catalog)
	mustRun(t, time.Minute, "", strataBin, "topic", "create", topic, "-p", "3", "-b", srv.addr,
		"-c", "iceberg.enabled=true", "-c", "iceberg.commit.interval.ms=3600000")

	var lines strings.Builder
	for i := range 300 {
		fmt.Fprintf(&lines, "k%04d:value-%d\n", i, i)
	}
	mustRun(t, time.Minute, lines.String(), kcat, "-P", "-b", srv.addr, "-t", topic, "-K:")
	txp := newClient(t, srv.addr, kgo.TransactionalID("iceberg-e2e"), kgo.DefaultProduceTopic(topic))
	ctx := context.Background()
	for _, commit := range []bool{true, false} {
		if err := txp.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			key := fmt.Sprintf("txn-committed-%02d", j)
			if !commit {
				key = fmt.Sprintf("txn-aborted-%02d", j)
			}
			if err := txp.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txp.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)
	t.Logf("%s", strings.TrimSpace(res.stdout))

	tableURL := fmt.Sprintf("s3://%s/%s/iceberg/strata/%s", miniotest.Bucket, prefix, topic)
	want := readCommittedRows(t, srv.addr, topic, 320)
	got := readIcebergTable(t, node, tableURL, store.Endpoint())
	checkIcebergReaders(t, got, want)
	t.Logf("icebird and DuckDB read the %d committed rows (%d data files); 20 aborted left out", len(want), got.Files)

	// The catalog answers loadTable with the same metadata.
	resp, err := http.Get("http://" + catalog + "/v1/namespaces/strata/tables/" + topic)
	if err != nil {
		t.Fatal(err)
	}
	var load struct {
		MetadataLocation string `json:"metadata-location"`
	}
	err = json.NewDecoder(resp.Body).Decode(&load)
	resp.Body.Close()
	// The table's current version: the one `strata iceberg commit` printed
	// (a timed commit may have come first, so not always v2).
	version := regexp.MustCompile(`at metadata (v\d+) `).FindStringSubmatch(res.stdout)
	if version == nil {
		t.Fatalf("no metadata version in %q", res.stdout)
	}
	if err != nil || resp.StatusCode != http.StatusOK || load.MetadataLocation != tableURL+"/metadata/"+version[1]+".metadata.json" {
		t.Fatalf("loadTable: %s %+v %v", resp.Status, load, err)
	}

	// Timed commits every 200 ms while kcat produces; SIGKILL, restart,
	// produce more, commit: every committed record exactly once.
	mustRun(t, time.Minute, "", strataBin, "topic", "alter-config", topic, "-b", srv.addr, "-c", "iceberg.commit.interval.ms=200")
	lines.Reset()
	for i := 300; i < 800; i++ {
		fmt.Fprintf(&lines, "k%04d:value-%d\n", i, i)
	}
	mustRun(t, time.Minute, lines.String(), kcat, "-P", "-b", srv.addr, "-t", topic, "-K:")
	time.Sleep(300 * time.Millisecond)
	srv.kill()
	srv.restart()
	lines.Reset()
	for i := 800; i < 900; i++ {
		fmt.Fprintf(&lines, "k%04d:value-%d\n", i, i)
	}
	mustRun(t, time.Minute, lines.String(), kcat, "-P", "-b", srv.addr, "-t", topic, "-K:")
	mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)
	status := mustRun(t, time.Minute, "", strataBin, "iceberg", "status", "--admin", srv.httpAddr)
	t.Logf("after kill -9 and restart:\n%s", status.stdout)
	want = readCommittedRows(t, srv.addr, topic, 920)
	got = readIcebergTable(t, node, tableURL, store.Endpoint())
	checkIcebergReaders(t, got, want)
	t.Logf("after kill -9 and restart icebird and DuckDB read the %d committed rows exactly once (%d data files)", len(want), got.Files)

	// 40 more commits of one record each: past 32 manifests the writer
	// merges them (EXISTING entries); both readers still see every row once.
	mustRun(t, time.Minute, "", strataBin, "topic", "alter-config", topic, "-b", srv.addr, "-c", "iceberg.commit.interval.ms=3600000")
	cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic))
	for i := range 40 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "m%02d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://"+srv.httpAddr+"/v1/iceberg/topics/"+topic+"/commit", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("commit %d: %s", i, resp.Status)
		}
	}
	want = readCommittedRows(t, srv.addr, topic, 960)
	// Those commits added a file each to the current hour: past
	// iceberg.compaction.min.input.files (10) small ones the committer's
	// maintenance goroutine rewrites them into one (replace snapshots)
	// after the commits, so the readers read fewer files than commits,
	// each row once.
	var st icebergStatusJSON
	waitFor(t, 2*time.Minute, "the compaction of the one-record commits", func() (bool, string) {
		st = icebergStatusJSONOf(t, srv.httpAddr, topic)
		if st.Compactions < 1 || st.FilesCompacted < 10 {
			return false, fmt.Sprintf("%d compactions of %d files", st.Compactions, st.FilesCompacted)
		}
		got = readIcebergTable(t, node, tableURL, store.Endpoint())
		return got.Files <= 2*9, fmt.Sprintf("%d compactions of %d files, %d data files left", st.Compactions, st.FilesCompacted, got.Files)
	})
	checkIcebergReaders(t, got, want)
	t.Logf("after 40 more commits (manifests merged) icebird and DuckDB read the %d rows exactly once (%d data files)", len(want), got.Files)
	t.Logf("%d compactions rewrote %d small files; the table has %d data files", st.Compactions, st.FilesCompacted, got.Files)
}

// icebergStatusJSON is one topic of `strata iceberg status --json`.
type icebergStatusJSON struct {
	Topic          string `json:"topic"`
	LastError      string `json:"last_error"`
	LagOffsets     int64  `json:"lag_offsets"`
	RowsCommitted  int64  `json:"rows_committed"`
	Compactions    int64  `json:"compactions"`
	FilesCompacted int64  `json:"files_compacted"`
}

// icebergStatusJSONOf reads one topic of `strata iceberg status --json`
// (LagOffsets -1: the topic is not listed).
func icebergStatusJSONOf(t *testing.T, admin, topic string) icebergStatusJSON {
	t.Helper()
	res := mustRun(t, time.Minute, "", strataBin, "iceberg", "status", "--admin", admin, "--json")
	var sts []icebergStatusJSON
	if err := json.Unmarshal([]byte(res.stdout), &sts); err != nil {
		t.Fatalf("iceberg status --json: %v: %s", err, res.stdout)
	}
	for _, st := range sts {
		if st.Topic == topic {
			return st
		}
	}
	return icebergStatusJSON{LagOffsets: -1}
}

// icebergStatusOf reads one topic of `strata iceberg status --json`.
func icebergStatusOf(t *testing.T, admin, topic string) (lastError string, lagOffsets int64, rows int64) {
	t.Helper()
	st := icebergStatusJSONOf(t, admin, topic)
	return st.LastError, st.LagOffsets, st.RowsCommitted
}

// TestIcebergMinIOOutage: with the store down, produce still succeeds at
// once, commits fail and report it with a growing lag; once the store is
// back the backlog is committed and the table holds every record once.
func TestIcebergMinIOOutage(t *testing.T) {
	t.Parallel()
	const prefix, topic = "iceberg-outage", "outage"
	node, kcat, store := icebergE2ESetup(t, prefix)
	srv := startServerEnv(t, store.AWSEnv(), "--object-store", store.StoreURL(prefix), "--set", "iceberg.catalog.listen=")
	mustRun(t, time.Minute, "", strataBin, "topic", "create", topic, "-p", "2", "-b", srv.addr,
		"-c", "iceberg.enabled=true", "-c", "iceberg.commit.interval.ms=200")
	produce := func(from, to int) time.Duration {
		var lines strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&lines, "k%04d:value-%d\n", i, i)
		}
		start := time.Now()
		mustRun(t, time.Minute, lines.String(), kcat, "-P", "-b", srv.addr, "-t", topic, "-K:", "-X", "acks=all")
		return time.Since(start)
	}
	produce(0, 100)
	waitFor(t, 30*time.Second, "first commit", func() (bool, string) {
		errText, lag, rows := icebergStatusOf(t, srv.httpAddr, topic)
		return rows == 100 && lag == 0, fmt.Sprintf("rows %d lag %d err %q", rows, lag, errText)
	})

	if err := store.Kill(); err != nil {
		t.Fatal(err)
	}
	took := produce(100, 600)
	t.Logf("500 records produced with the store down in %s", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Fatalf("producing with the store down took %s", took)
	}
	waitFor(t, 60*time.Second, "a failing commit with a lag", func() (bool, string) {
		errText, lag, _ := icebergStatusOf(t, srv.httpAddr, topic)
		return errText != "" && lag == 500, fmt.Sprintf("lag %d err %q", lag, errText)
	})
	if err := store.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "commits caught up", func() (bool, string) {
		errText, lag, rows := icebergStatusOf(t, srv.httpAddr, topic)
		return errText == "" && lag == 0 && rows == 600, fmt.Sprintf("rows %d lag %d err %q", rows, lag, errText)
	})
	want := readCommittedRows(t, srv.addr, topic, 600)
	got := readIcebergTable(t, node, fmt.Sprintf("s3://%s/%s/iceberg/strata/%s", miniotest.Bucket, prefix, topic), store.Endpoint())
	checkIcebergReaders(t, got, want)
}
