package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

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
	store, err := tiering.NewFileStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := iceberg.Open(iceberg.Config{Store: store, Prefix: "iceberg/strata/" + topic, Location: "file://" + storeDir + "/iceberg/strata/" + topic})
	if err != nil {
		t.Fatal(err)
	}
	return icebergtest.Rows(t, tbl)
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
	// Nothing new: nothing committed.
	if st = icebergCommitNow(t, tb, "ice"); st.MetadataVersion != 3 {
		t.Fatalf("idle commit: %+v", st)
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
		{icebergModeConfig: icebergModeSchemaLatest},
		{icebergIntervalConfig: "5"},
		{icebergTableLocationConfig: "/abs"},
		{icebergTableLocationConfig: "s3://x/y"},
		{icebergNamespaceConfig: "a/b"},
	} {
		if err := validateTopicConfigs(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if err := validateTopicConfigs(map[string]string{icebergEnabledConfig: "true", icebergModeConfig: "key_value", icebergIntervalConfig: "1000", icebergTableLocationConfig: "lake/t", icebergNamespaceConfig: "lake"}); err != nil {
		t.Fatal(err)
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
