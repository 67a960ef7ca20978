package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

func TestIcebergTopicE2E(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node", "apt-get install -y nodejs npm")
	kcat := requireTool(t, "kcat", kcatInstall)
	if _, err := os.Stat(filepath.Join(moduleRoot, "e2e", "iceberg", "node_modules", "icebird", "package.json")); err != nil {
		missingTool(t, "icebird and @duckdb/node-api", "cd e2e/iceberg && npm ci")
	}
	store := miniotest.New(t)
	const prefix, topic = "iceberg-e2e", "orders"
	// The readers fetch objects anonymously, as from a public bucket.
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/%s/*"]}]}`, miniotest.Bucket, prefix)
	if err := store.Client().SetBucketPolicy(context.Background(), miniotest.Bucket, policy); err != nil {
		t.Fatal(err)
	}
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
	if err != nil || resp.StatusCode != http.StatusOK || load.MetadataLocation != tableURL+"/metadata/v2.metadata.json" {
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
}
