package broker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	iceberggo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

// startExternalCatalogBroker starts a broker whose object store is a
// new directory (returned) and whose iceberg.catalog.uri is cat, its
// credentials set by auth; its log goes to logTo if not nil.
func startExternalCatalogBroker(t *testing.T, cat *testRESTCatalog, logTo io.Writer, auth func(*Config)) (*testBroker, string) {
	t.Helper()
	storeDir := t.TempDir()
	tune := func(c *Config) {
		c.ObjectStore = "file://" + storeDir
		c.IcebergCatalogURI = cat.srv.URL
		auth(c)
	}
	return startTestBrokerLogging(t, logTo, tune), storeDir
}

// icebergTopicStatusOf returns the node's status of topic.
func icebergTopicStatusOf(tb *testBroker, topic string) icebergTopicStatus {
	for _, st := range tb.srv.iceberg.statuses() {
		if st.Topic == topic {
			return st
		}
	}
	return icebergTopicStatus{}
}

// waitCatalogSynced waits until the node reports the external catalog in
// step with the table's current version in the bucket (after the round's
// compaction, if any), with no error, and returns that state.
func waitCatalogSynced(t *testing.T, tb *testBroker, topic string, bucket *iceberg.Table) iceberg.State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		loaded, err := bucket.Load(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		st := icebergTopicStatusOf(tb, topic)
		if st.LastCatalogError == "" && loaded.Version > 0 && st.CatalogMetadataVersion == loaded.Version {
			return loaded
		}
		if time.Now().After(deadline) {
			t.Fatalf("the external catalog did not catch up with %s in 20s: %+v", topic, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// catalogReaderRows loads ns.name through iceberg-go's REST client from
// the catalog and scans it to Arrow, as a reader of the catalog would.
// Rows are read only if keyValue (the key_value layout).
func catalogReaderRows(t *testing.T, cat *testRESTCatalog, ns, name string, keyValue bool) ([]string, *table.Table) {
	t.Helper()
	ctx := testContext(t)
	opts := []rest.Option{rest.WithOAuthToken(cat.token)}
	if cat.clientID != "" {
		opts = []rest.Option{rest.WithCredential(cat.clientID + ":" + cat.secret)}
	}
	if cat.prefix != "" {
		opts = append(opts, rest.WithWarehouseLocation(cat.prefix))
	}
	cl, err := rest.NewCatalog(ctx, "reader", cat.srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tbl, err := cl.LoadTable(ctx, table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	if !keyValue {
		return nil, tbl
	}
	return icebergtest.TableRows(t, tbl), tbl
}

func snapshotIDs(md table.Metadata) []int64 {
	var ids []int64
	for _, s := range md.Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	slices.Sort(ids)
	return ids
}

// TestIcebergExternalRESTCatalog: with iceberg.catalog.uri a node
// registers its table in an external REST catalog and, after each commit
// (appends, a compaction, expired snapshots), brings it up to date there;
// a reader through the catalog (iceberg-go's REST client) scans every
// committed row exactly once and sees exactly the bucket's snapshots. A
// catalog that is down fails no bucket commit: the status shows the error,
// /metrics counts it, and the catalog catches up when it is back. The
// catalog's own metadata files survive the orphan cleanup.
func TestIcebergExternalRESTCatalog(t *testing.T) {
	cat := newTestRESTCatalog(t, "issued-token-1", "strata", "s3cret-client", "lake")
	tb, storeDir := startExternalCatalogBroker(t, cat, nil, func(c *Config) {
		c.IcebergCatalogWarehouse = "lake"
		c.IcebergCatalogCredential = "strata:s3cret-client"
	})
	// Compaction of 3 small files; snapshots expire at once (the current
	// one stays), so every sync also removes snapshots.
	tb.createTopicWithPartitions("ice", 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000",
		icebergPartitionSpecConfig: "none", icebergCompactionMinConfig: "3", icebergRetentionConfig: "1"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("ice"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	next := 0
	produce := func(n int) {
		for range n {
			r := &kgo.Record{Partition: int32(next % 2), Key: fmt.Appendf(nil, "k%03d", next), Value: []byte("v")}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	bucket := openTestTable(t, storeDir, "ice")
	sawReplace := false
	check := func(what string) {
		t.Helper()
		loaded := waitCatalogSynced(t, tb, "ice", bucket)
		want := committedRows(t, tb, "ice", next)
		got, tbl := catalogReaderRows(t, cat, "strata", "ice", true)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: rows through the catalog\n got %v\nwant %v", what, got, want)
		}
		if g, w := snapshotIDs(tbl.Metadata()), snapshotIDs(loaded.Metadata); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s: catalog snapshots %v, bucket's %v", what, g, w)
		}
		if g, w := tbl.Metadata().CurrentSnapshot().SnapshotID, loaded.Metadata.CurrentSnapshot().SnapshotID; g != w {
			t.Fatalf("%s: catalog main %d, bucket's %d", what, g, w)
		}
		sawReplace = sawReplace || tbl.Metadata().CurrentSnapshot().Summary.Operation == table.OpReplace
		if tbl.Metadata().TableUUID() != loaded.Metadata.TableUUID() {
			t.Fatalf("%s: catalog table uuid %s, bucket's %s", what, tbl.Metadata().TableUUID(), loaded.Metadata.TableUUID())
		}
	}

	// The first commit registers the table (and makes the namespace);
	// the loop's first round, due at once, may have registered it empty.
	produce(10)
	if st := icebergCommitNow(t, tb, "ice"); st.RowsCommitted != 10 || st.LastError != "" {
		t.Fatalf("first commit: %+v", st)
	}
	check("after the first commit")
	cat.mu.Lock()
	requests := slices.Clone(cat.mu.requests)
	cat.mu.Unlock()
	if !slices.Contains(requests, "POST /v1/lake/namespaces") || !slices.Contains(requests, "POST /v1/lake/namespaces/strata/register") {
		t.Fatalf("no namespace creation and registration in %v", requests)
	}

	// The next commits go through commitTable; the third small file
	// makes a compaction.
	commitsBefore := cat.commits()
	for round := range 3 {
		produce(6)
		st := icebergCommitNow(t, tb, "ice")
		if st.LastError != "" || st.LastMaintenanceError != "" {
			t.Fatalf("commit %d: %+v", round+2, st)
		}
		if round == 1 {
			// The third file: the maintenance goroutine compacts after
			// this commit, before the next one.
			waitUntil(t, 20*time.Second, "the compaction after the third commit", func() bool {
				return icebergTopicStatusOf(tb, "ice").Compactions > 0
			})
		}
		check(fmt.Sprintf("after commit %d", round+2))
	}
	if st := icebergTopicStatusOf(tb, "ice"); st.Compactions < 1 || !sawReplace {
		t.Fatalf("want a compaction seen through the catalog: %+v", st)
	}
	if md := cat.table("strata", "ice").metadata; len(md.Snapshots()) != 1 {
		t.Fatalf("the catalog holds %d snapshots, want the current one alone (the others expired)", len(md.Snapshots()))
	}
	if n := cat.commits() - commitsBefore; n < 3 {
		t.Fatalf("%d catalog commits for 3 bucket commits", n)
	}

	// The catalog goes down: bucket commits go on, the status says why.
	cat.setDown(true)
	before := icebergTopicStatusOf(tb, "ice")
	produce(4)
	st := icebergCommitNow(t, tb, "ice")
	if st.MetadataVersion <= before.MetadataVersion || st.LastError != "" {
		t.Fatalf("commit with the catalog down: %+v", st)
	}
	produce(4)
	if st := icebergCommitNow(t, tb, "ice"); st.LastError != "" {
		t.Fatalf("second commit with the catalog down: %+v", st)
	}
	waitFor(t, 20*time.Second, "the catalog error in the status", func() bool {
		return strings.Contains(icebergTopicStatusOf(tb, "ice").LastCatalogError, "unavailable (503)")
	})
	if st := icebergTopicStatusOf(tb, "ice"); st.CatalogMetadataVersion >= st.MetadataVersion {
		t.Fatalf("status claims the catalog in step while it is down: %+v", st)
	}
	if n := scrapeSeries(t, tb, "strata_iceberg_catalog_sync_errors_total")[`strata_iceberg_catalog_sync_errors_total{topic="ice"}`]; n < 1 {
		t.Fatalf("catalog sync errors counted: %v", n)
	}
	// Back: the retry catches up without another commit.
	cat.setDown(false)
	check("after the catalog came back")

	// A conflict (the catalog's table moved on): retried from a fresh load.
	cat.mu.Lock()
	cat.mu.conflicts = 1
	cat.mu.Unlock()
	produce(4)
	if st := icebergCommitNow(t, tb, "ice"); st.LastError != "" {
		t.Fatalf("commit before the conflict: %+v", st)
	}
	check("after a conflict")
	cat.mu.Lock()
	left := cat.mu.conflicts
	cat.mu.Unlock()
	if left != 0 {
		t.Fatal("the sync never met the conflict")
	}

	// The orphan cleanup leaves the catalog's metadata files alone, however old.
	files := catalogMetadataFiles(t, filepath.Join(storeDir, "iceberg/strata/ice"))
	if len(files) < 3 {
		t.Fatalf("the catalog wrote %d metadata files into the table: %v", len(files), files)
	}
	longAgo := time.Now().Add(-24 * time.Hour)
	for _, f := range files {
		if err := os.Chtimes(f, longAgo, longAgo); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bucket.RemoveOrphans(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the orphan cleanup deleted the catalog's %s: %v", f, err)
		}
	}
	check("after the orphan cleanup")
}

// TestIcebergExternalCatalogDenied: a wrong token is a clear error in the
// status (and the bucket commit still succeeds); the token appears in no
// status, error or DescribeConfigs answer.
func TestIcebergExternalCatalogDenied(t *testing.T) {
	cat := newTestRESTCatalog(t, "the-right-token", "", "", "")
	const wrong = "wrong-token-4f9a"
	var logs lockedBuffer
	tb, _ := startExternalCatalogBroker(t, cat, &logs, func(c *Config) { c.IcebergCatalogToken = wrong })
	tb.createTopicWithPartitions("den", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000"})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("den"))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if st := icebergCommitNow(t, tb, "den"); st.RowsCommitted != 1 || st.LastError != "" {
		t.Fatalf("commit: %+v", st)
	}
	var st icebergTopicStatus
	waitFor(t, 20*time.Second, "the denial in the status", func() bool {
		st = icebergTopicStatusOf(tb, "den")
		return st.LastCatalogError != ""
	})
	if !strings.Contains(st.LastCatalogError, "denied") || !strings.Contains(st.LastCatalogError, "iceberg.catalog.token") {
		t.Fatalf("catalog error does not say it was denied: %q", st.LastCatalogError)
	}
	if cat.table("strata", "den") != nil {
		t.Fatal("a denied node registered its table")
	}
	adm := tb.admin()
	configs, err := adm.DescribeBrokerConfigs(ctx, tb.srv.cfg.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	var described bool
	for _, rc := range configs {
		for _, c := range rc.Configs {
			if c.Value != nil && strings.Contains(*c.Value, wrong) {
				t.Fatalf("DescribeConfigs shows the token in %s", c.Key)
			}
			if c.Key == "iceberg.catalog.token" {
				described = c.Sensitive && c.Value == nil
			}
		}
	}
	if !described {
		t.Fatal("iceberg.catalog.token is not described as sensitive")
	}
	for what, text := range map[string]string{"status": fmt.Sprintf("%+v", st), "log": logs.String()} {
		if strings.Contains(text, wrong) {
			t.Fatalf("the token is in the %s", what)
		}
	}
}

// TestIcebergExternalCatalogConfigIsValidated: bad URIs and credentials
// are refused at start, without quoting the secret.
func TestIcebergExternalCatalogConfigIsValidated(t *testing.T) {
	for _, tc := range []struct{ uri, token, credential, want string }{
		{uri: "ftp://catalog:8181", want: "http:// or https://"},
		{uri: "http://user:pw@catalog:8181", want: "must not hold credentials"},
		{uri: "http://catalog:8181", credential: "no-colon-secret", want: "<client_id>:<secret>"},
		{token: "tok-without-uri", want: "need iceberg.catalog.uri"},
	} {
		cfg := DefaultConfig()
		cfg.IcebergCatalogURI, cfg.IcebergCatalogToken, cfg.IcebergCatalogCredential = tc.uri, tc.token, tc.credential
		err := cfg.validateExternalCatalog()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%+v: got %v, want %q", tc, err, tc.want)
		}
		for _, secret := range []string{"no-colon-secret", "tok-without-uri", "pw"} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error quotes a secret: %v", err)
			}
		}
	}
	cfg := DefaultConfig()
	for k, v := range map[string]string{"iceberg.catalog.uri": "https://catalog.example:8181/api/catalog", "iceberg.catalog.credential": "id:secret"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.validateExternalCatalog(); err != nil {
		t.Fatal(err)
	}
}

// TestIcebergExternalCatalogSchemaEvolution: a typed topic's table and its
// dead-letter table are registered; the subject evolves and the catalog's
// table gains the new schema (same field ids, current) with the snapshot
// that needs it, so a reader through the catalog reads the new column.
func TestIcebergExternalCatalogSchemaEvolution(t *testing.T) {
	cat := newTestRESTCatalog(t, "evo-token", "", "", "")
	tb, storeDir := startExternalCatalogBroker(t, cat, nil, func(c *Config) { c.IcebergCatalogToken = "evo-token" })
	_, registryClient := startSchemaRegistry(t, tb)
	ctx := testContext(t)
	tb.createTopicWithPartitions("evo", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000", icebergModeConfig: icebergModeSchemaIDPrefix})
	prod := tb.client(kgo.DefaultProduceTopic("evo"))
	produce := func(v []byte) {
		t.Helper()
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	v1 := registerSchema(t, registryClient, "evo-value", typedOrderV1, sr.TypeAvro)
	produce(encodeTypedOrder(t, v1, typedOrderV1, typedOrder{ID: 0, Item: "a"}))
	produce([]byte("not framed")) // a dead letter
	if st := icebergCommitNow(t, tb, "evo"); st.RowsCommitted != 1 || st.DLQRowsCommitted != 1 {
		t.Fatalf("first commit: %+v", st)
	}
	main, dlq := openTestTable(t, storeDir, "evo"), openTestTable(t, storeDir, "evo"+icebergDLQSuffix)
	waitCatalogSynced(t, tb, "evo", main)
	waitFor(t, 20*time.Second, "the dead-letter table in the catalog", func() bool {
		loaded, err := dlq.Load(ctx)
		c := cat.table("strata", "evo"+icebergDLQSuffix)
		return err == nil && c != nil && c.metadata.CurrentSnapshot() != nil &&
			c.metadata.CurrentSnapshot().SnapshotID == loaded.Metadata.CurrentSnapshot().SnapshotID
	})

	v2 := registerSchema(t, registryClient, "evo-value", typedOrderV2, sr.TypeAvro)
	gift := "gift"
	produce(encodeTypedOrder(t, v2, typedOrderV2, typedOrder{ID: 1, Item: "b", Note: &gift}))
	if st := icebergCommitNow(t, tb, "evo"); st.RowsCommitted != 2 {
		t.Fatalf("second commit: %+v", st)
	}
	bucket := waitCatalogSynced(t, tb, "evo", main)
	_, tbl := catalogReaderRows(t, cat, "strata", "evo", false)
	got, want := tbl.Metadata().CurrentSchema(), bucket.Metadata.CurrentSchema()
	if got.ID != want.ID || !got.Equals(want) || len(tbl.Metadata().Schemas()) != len(bucket.Metadata.Schemas()) {
		t.Fatalf("catalog schema %d %s (of %d)\nbucket schema %d %s (of %d)", got.ID, got, len(tbl.Metadata().Schemas()),
			want.ID, want, len(bucket.Metadata.Schemas()))
	}
	var rows []string
	for _, r := range icebergtest.TableJSONRows(t, tbl) {
		rows = append(rows, fmt.Sprintf("%v/%v/%v", r["id"], r["item"], r["note"]))
	}
	slices.Sort(rows)
	if fmt.Sprint(rows) != "[0/a/<nil> 1/b/gift]" {
		t.Fatalf("rows through the catalog: %v", rows)
	}
}

// icebergHistory returns the metadata of one table after each of n
// appends (snapshot ids 1..n, main at the last).
func icebergHistory(t *testing.T, n int) []table.Metadata {
	t.Helper()
	spec := iceberggo.NewPartitionSpec()
	md, err := table.NewMetadata(iceberg.KeyValueSchema(), &spec, table.UnsortedSortOrder, "file:///lake/t", iceberggo.Properties{table.PropertyFormatVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	out := []table.Metadata{md}
	for i := 1; i <= n; i++ {
		b, err := table.MetadataBuilderFromBase(md, fmt.Sprintf("file:///lake/t/metadata/v%d.metadata.json", i))
		if err != nil {
			t.Fatal(err)
		}
		snap := table.Snapshot{SnapshotID: int64(i), SequenceNumber: int64(i), TimestampMs: time.Now().UnixMilli(),
			ManifestList: fmt.Sprintf("file:///lake/t/metadata/snap-%d.avro", i), Summary: &table.Summary{Operation: table.OpAppend}}
		if i > 1 {
			parent := int64(i - 1)
			snap.ParentSnapshotID = &parent
		}
		if err := b.AddSnapshot(&snap); err != nil {
			t.Fatal(err)
		}
		if err := b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
			t.Fatal(err)
		}
		if md, err = b.Build(); err != nil {
			t.Fatal(err)
		}
		out = append(out, md)
	}
	return out
}

// TestIcebergCatalogUpdates: the commitTable the sync sends for each
// relation of the catalog's table to the bucket's.
func TestIcebergCatalogUpdates(t *testing.T) {
	h := icebergHistory(t, 3)
	actions := func(updates []table.Update) string {
		var names []string
		for _, u := range updates {
			names = append(names, u.Action())
		}
		return strings.Join(names, ",")
	}
	// Behind by two snapshots: both added in order, main moved; the
	// requirements pin the catalog's main.
	reqs, updates, err := icebergCatalogUpdates(h[1], h[3])
	if err != nil || actions(updates) != "add-snapshot,add-snapshot,set-snapshot-ref" || len(reqs) != 2 {
		t.Fatalf("behind: %v %v %v", reqs, actions(updates), err)
	}
	if err := reqs[1].Validate(h[1]); err != nil {
		t.Fatalf("the requirement refuses the catalog's own state: %v", err)
	}
	if err := reqs[1].Validate(h[2]); err == nil {
		t.Fatal("the requirement accepts a catalog that moved on")
	}
	// In step: nothing to send.
	if _, updates, err := icebergCatalogUpdates(h[3], h[3]); err != nil || len(updates) != 0 {
		t.Fatalf("in step: %v %v", actions(updates), err)
	}
	// The catalog is ahead of this (stale) bucket state: left alone.
	if _, _, err := icebergCatalogUpdates(h[3], h[2]); !errors.Is(err, errIcebergCatalogAhead) {
		t.Fatalf("ahead: %v", err)
	}
	// Another table under the same name: refused, not overwritten.
	other := icebergHistory(t, 1)
	if _, _, err := icebergCatalogUpdates(other[1], h[3]); err == nil || !strings.Contains(err.Error(), "another table") {
		t.Fatalf("other table: %v", err)
	}
	// A snapshot the bucket never had (a write through the catalog):
	// refused, not dropped silently.
	fb, err := table.MetadataBuilderFromBase(h[1], "file:///lake/t/metadata/00001-x.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	parent := int64(1)
	foreign := table.Snapshot{SnapshotID: 99, ParentSnapshotID: &parent, SequenceNumber: 2, TimestampMs: time.Now().UnixMilli(),
		ManifestList: "file:///lake/t/metadata/snap-99.avro", Summary: &table.Summary{Operation: table.OpAppend}}
	if err := fb.AddSnapshot(&foreign); err != nil {
		t.Fatal(err)
	}
	if err := fb.SetSnapshotRef(table.MainBranch, 99, table.BranchRef); err != nil {
		t.Fatal(err)
	}
	written, err := fb.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := icebergCatalogUpdates(written, h[3]); err == nil || !strings.Contains(err.Error(), "not in the bucket") {
		t.Fatalf("foreign snapshot: %v", err)
	}
	// Expired in the bucket: removed from the catalog after main moved.
	b, err := table.MetadataBuilderFromBase(h[3], "file:///lake/t/metadata/v4.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveSnapshots([]int64{1, 2}, false); err != nil {
		t.Fatal(err)
	}
	expired, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, updates, err := icebergCatalogUpdates(h[1], expired); err != nil || actions(updates) != "add-snapshot,set-snapshot-ref,remove-snapshots" {
		t.Fatalf("expired: %v %v", actions(updates), err)
	}
}
