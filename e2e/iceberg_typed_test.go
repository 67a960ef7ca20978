package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"
	"github.com/minio/minio-go/v7"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/miniotest"
	"github.com/strata-streaming/strata/internal/pgtest"
)

// Typed Iceberg tables end to end (iceberg.mode=value_schema_id_prefix):
// Avro records framed by franz-go's sr.Serde with ids of the server's own
// schema registry; the subject evolves mid-stream (an optional field
// added); a few records are malformed. icebird (through the metadata) and
// DuckDB (the Parquet files, by column name) must read typed values equal
// to what was produced, null in the new column for rows written before it,
// and the dead-letter table <topic>~dlq exactly the malformed records; the
// offsets of both tables together are every offset of the topic once.

const (
	e2eOrderV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[
	  {"name":"id","type":"long"},{"name":"item","type":"string"},{"name":"qty","type":"int"},
	  {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
	  {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}`
	e2eOrderColumns = "id,item,qty,price,at,note"
)

// e2eOrderV2 adds an optional field, a BACKWARD-compatible change.
var e2eOrderV2 = strings.Replace(e2eOrderV1, `]}`, `,{"name":"note","type":["null","string"],"default":null}]}`, 1)

type e2eOrder struct {
	ID    int64     `avro:"id"`
	Item  string    `avro:"item"`
	Qty   int32     `avro:"qty"`
	Price []byte    `avro:"price"` // two's complement, scale 2
	At    time.Time `avro:"at"`
	Note  *string   `avro:"note"`
}

type e2eOrderV1Fields struct {
	ID    int64     `avro:"id"`
	Item  string    `avro:"item"`
	Qty   int32     `avro:"qty"`
	Price []byte    `avro:"price"`
	At    time.Time `avro:"at"`
}

func TestIcebergTypedE2E(t *testing.T) {
	t.Parallel()
	const prefix, topic = "iceberg-typed", "orders"
	node, _, store := icebergE2ESetup(t, prefix)
	registry := freeAddr(t)
	srv := startServerEnv(t, store.AWSEnv(), "--object-store", store.StoreURL(prefix), "--set", "iceberg.catalog.listen=",
		"--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+registry)
	mustRun(t, time.Minute, "", strataBin, "topic", "create", topic, "-p", "2", "-b", srv.addr,
		"-c", "iceberg.enabled=true", "-c", "iceberg.commit.interval.ms=3600000", "-c", "iceberg.mode=value_schema_id_prefix")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg, err := sr.NewClient(sr.URLs("http://" + registry))
	if err != nil {
		t.Fatal(err)
	}
	var v1 sr.SubjectSchema
	waitFor(t, 30*time.Second, "the schema registry registering", func() (bool, string) {
		v1, err = reg.CreateSchema(ctx, topic+"-value", sr.Schema{Schema: e2eOrderV1, Type: sr.TypeAvro})
		return err == nil, fmt.Sprint(err)
	})
	serde := sr.NewSerde()
	v1Schema := hamba.MustParse(e2eOrderV1)
	serde.Register(v1.ID, e2eOrderV1Fields{}, sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(v1Schema, v) }))
	cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic))
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	want := map[string]string{} // key -> the row the readers must print, less partition/offset
	produce := func(key string, value []byte) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	order := func(i int) (e2eOrderV1Fields, string) {
		o := e2eOrderV1Fields{ID: int64(i), Item: fmt.Sprintf("item-%d", i), Qty: int32(i % 7),
			Price: []byte{byte(i), 0x0a}, At: start.Add(time.Duration(i) * time.Second)}
		cents := i*256 + 10
		return o, fmt.Sprintf("%d/item-%d/%d/%d.%02d/%s", i, i, i%7, cents/100, cents%100, o.At.Format("2006-01-02T15:04:05Z"))
	}
	for i := range 40 {
		o, row := order(i)
		value, err := serde.Encode(o)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("k%03d", i)
		produce(key, value)
		want[key] = row + "/null"
	}
	mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)
	// The subject evolves mid-stream: v2 adds the optional field note.
	v2, err := reg.CreateSchema(ctx, topic+"-value", sr.Schema{Schema: e2eOrderV2, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	v2Schema := hamba.MustParse(e2eOrderV2)
	serde.Register(v2.ID, e2eOrder{}, sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(v2Schema, v) }))
	for i := 40; i < 80; i++ {
		o1, row := order(i)
		note := fmt.Sprintf("note-%d", i)
		value, err := serde.Encode(e2eOrder{ID: o1.ID, Item: o1.Item, Qty: o1.Qty, Price: o1.Price, At: o1.At, Note: &note})
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("k%03d", i)
		produce(key, value)
		want[key] = row + "/" + note
	}
	// Malformed: no magic byte, an id the registry does not have, a payload
	// that does not match its schema (truncated).
	malformed := map[string][]byte{
		"bad-magic":   []byte("plain text"),
		"unknown-id":  {0, 0, 0x0f, 0x42, 0x3f, 0x02},
		"bad-payload": {0, byte(v2.ID >> 24), byte(v2.ID >> 16), byte(v2.ID >> 8), byte(v2.ID), 0x02},
	}
	for key, value := range malformed {
		produce(key, value)
	}
	mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)

	// The metadata: the table's first schema (the kafka column), v1's
	// columns, then v2's note (a new field id) as the current schema.
	md := icebergMetadataOf(t, store, prefix+"/iceberg/strata/"+topic)
	if len(md.Schemas) != 3 || md.CurrentSchemaID != md.Schemas[2].ID {
		t.Fatalf("metadata: %d schemas, current %d: want 3, the last current", len(md.Schemas), md.CurrentSchemaID)
	}
	ids1, ids2 := md.Schemas[1].ids(), md.Schemas[2].ids()
	if ids1["id"] == 0 || ids1["id"] != ids2["id"] || ids1["price"] != ids2["price"] || ids1["note"] != 0 || ids2["note"] <= ids1["at"] {
		t.Fatalf("field ids: v1 %v, v2 %v: existing ones kept, note new", ids1, ids2)
	}

	// Every offset of the topic, by key, as a consumer sees them.
	all := readCommittedRows(t, srv.addr, topic, 83) // partition/offset/key
	coords := map[string]string{}                    // key -> partition/offset
	for _, r := range all {
		parts := strings.SplitN(r, "/", 3)
		coords[parts[2]] = parts[0] + "/" + parts[1]
	}
	var wantMain, wantDLQ []string
	for key, row := range want {
		wantMain = append(wantMain, coords[key]+"/"+row)
	}
	for key := range malformed {
		wantDLQ = append(wantDLQ, coords[key]+"/"+key)
	}
	sort.Strings(wantMain)
	sort.Strings(wantDLQ)

	tableURL := fmt.Sprintf("s3://%s/%s/iceberg/strata/%s", miniotest.Bucket, prefix, topic)
	got := checkTypedReaders(t, node, tableURL, store.Endpoint(), e2eOrderColumns, wantMain)
	t.Logf("icebird and DuckDB read the %d typed rows (v1 rows with a null note) from %d data files", len(wantMain), got.Files)
	dlq := readIcebergTable(t, node, tableURL+"~dlq", store.Endpoint())
	checkIcebergReaders(t, dlq, wantDLQ)

	// Together the two tables hold every offset once.
	var offsets []string
	for _, r := range append(append([]string(nil), wantMain...), wantDLQ...) {
		parts := strings.SplitN(r, "/", 3)
		offsets = append(offsets, parts[0]+"/"+parts[1])
	}
	var allOffsets []string
	for _, r := range all {
		parts := strings.SplitN(r, "/", 3)
		allOffsets = append(allOffsets, parts[0]+"/"+parts[1])
	}
	sort.Strings(offsets)
	sort.Strings(allOffsets)
	if strings.Join(offsets, ",") != strings.Join(allOffsets, ",") {
		t.Fatalf("offsets of the table and its dead-letter table: %s", firstLineDiff(strings.Join(offsets, "\n"), strings.Join(allOffsets, "\n")))
	}

	// Counted in the status and the metrics.
	status := mustRun(t, time.Minute, "", strataBin, "iceberg", "status", "--admin", srv.httpAddr, "--json")
	var sts []struct {
		Topic string `json:"topic"`
		Rows  int64  `json:"rows_committed"`
		DLQ   int64  `json:"dlq_rows_committed"`
	}
	if err := json.Unmarshal([]byte(status.stdout), &sts); err != nil || len(sts) != 1 || sts[0].Rows != 80 || sts[0].DLQ != 3 {
		t.Fatalf("iceberg status: %v %s", err, status.stdout)
	}
	if m := regexp.MustCompile(`strata_iceberg_dlq_rows_committed_total\{topic="orders"\} (\d+)`).FindStringSubmatch(srv.metrics(t)); m == nil || m[1] != "3" {
		t.Fatalf("/metrics: strata_iceberg_dlq_rows_committed_total for orders is %v, want 3", m)
	}
}

// checkTypedReaders reads a typed table with read.mjs (columns: the value
// columns, comma-separated) and checks that icebird and DuckDB both print
// want, sorted, after normalizeReaderRow.
func checkTypedReaders(t *testing.T, node, tableURL, endpoint, columns string, want []string) icebergReaders {
	t.Helper()
	res := mustRun(t, 2*time.Minute, "", node, filepath.Join(moduleRoot, "e2e", "iceberg", "read.mjs"), tableURL, endpoint, columns)
	var got icebergReaders
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("read.mjs: %v\nstdout: %s\nstderr: %s", err, clip(res.stdout, 2000), clip(res.stderr, 2000))
	}
	for name, rows := range map[string][]string{"icebird": got.Icebird, "duckdb": got.DuckDB} {
		normalized := make([]string, len(rows))
		for i, r := range rows {
			normalized[i] = normalizeReaderRow(r)
		}
		sort.Strings(normalized)
		if strings.Join(normalized, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s read %d typed rows, want %d: %s", name, len(normalized), len(want), firstLineDiff(strings.Join(normalized, "\n"), strings.Join(want, "\n")))
		}
	}
	return got
}

// icebergMetadata is the part of a table's metadata JSON the typed test
// checks.
type icebergMetadata struct {
	CurrentSchemaID int                     `json:"current-schema-id"`
	Schemas         []icebergMetadataSchema `json:"schemas"`
}

type icebergMetadataSchema struct {
	ID     int `json:"schema-id"`
	Fields []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	} `json:"fields"`
}

// ids are the top-level field ids by name.
func (s icebergMetadataSchema) ids() map[string]int {
	out := map[string]int{}
	for _, f := range s.Fields {
		out[f.Name] = f.ID
	}
	return out
}

// icebergMetadataOf reads the current metadata of the table at prefix
// straight from the bucket (version-hint.text, then that version).
func icebergMetadataOf(t *testing.T, store *miniotest.Server, prefix string) icebergMetadata {
	t.Helper()
	get := func(key string) []byte {
		obj, err := store.Client().GetObject(context.Background(), miniotest.Bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		data, err := io.ReadAll(obj)
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		return data
	}
	version := strings.TrimSpace(string(get(prefix + "/metadata/version-hint.text")))
	var md icebergMetadata
	if err := json.Unmarshal(get(prefix+"/metadata/v"+version+".metadata.json"), &md); err != nil {
		t.Fatal(err)
	}
	return md
}

// normalizeReaderRow writes the readers' renderings of one typed row the
// same way: timestamps as RFC 3339 in UTC with a Z, the decimal price with
// its scale (icebird gives decimals as JavaScript numbers: 51.300000000000004).
func normalizeReaderRow(row string) string {
	fields := strings.Split(row, "/")
	const price = 5 // partition/offset/id/item/qty/price/…
	if len(fields) > price {
		if f, err := strconv.ParseFloat(fields[price], 64); err == nil {
			fields[price] = strconv.FormatFloat(f, 'f', 2, 64)
		}
	}
	for i, f := range fields {
		for _, layout := range []string{"2006-01-02 15:04:05-07", "2006-01-02 15:04:05Z07:00", time.RFC3339Nano, "Mon Jan 02 2006 15:04:05 GMT-0700 (Coordinated Universal Time)"} {
			if ts, err := time.Parse(layout, f); err == nil {
				fields[i] = ts.UTC().Format("2006-01-02T15:04:05Z")
				break
			}
		}
	}
	return strings.Join(fields, "/")
}

// TestIcebergJDBCAvroEvolutionE2E: the JDBC source connector of `strata
// server` (connect.enable) reads a PostgreSQL table with Confluent's
// AvroConverter into an iceberg.mode=value_schema_id_prefix topic; a column
// is added to the table mid-stream, the source registers the evolved
// schema, and the Iceberg table gains the column: icebird and DuckDB read
// the rows from before with null in it, those after with the value.
func TestIcebergJDBCAvroEvolutionE2E(t *testing.T) {
	t.Parallel()
	const prefix, topic = "iceberg-jdbc", "jdbc_items"
	node, _, store := icebergE2ESetup(t, prefix)
	pg := pgtest.Start(t)
	db := pg.Open(t)
	mustExecSQL := func(query string) {
		t.Helper()
		if _, err := db.Exec(query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	mustExecSQL(`CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL)`)
	mustExecSQL(`INSERT INTO items (name, at) SELECT 'name-' || g, timestamptz '2026-12-04 10:00:00+00' + g * interval '1 second' FROM generate_series(1, 20) g`)

	registry, rest := freeAddr(t), freeAddr(t)
	srv := startServerEnv(t, store.AWSEnv(), "--object-store", store.StoreURL(prefix), "--set", "iceberg.catalog.listen=",
		"--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+registry,
		"--set", "connect.enable=true", "--set", "connect.rest.listen="+rest, "--set", "group.initial.rebalance.delay.ms=0")
	mustRun(t, time.Minute, "", strataBin, "topic", "create", topic, "-p", "1", "-b", srv.addr,
		"-c", "iceberg.enabled=true", "-c", "iceberg.commit.interval.ms=3600000", "-c", "iceberg.mode=value_schema_id_prefix")
	def, err := json.Marshal(map[string]any{"name": "items-source", "config": map[string]string{
		"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "connection.url": pg.DSN,
		"mode": "incrementing", "incrementing.column.name": "id", "table.whitelist": "items", "topic.prefix": "jdbc_",
		"poll.interval.ms": "100",
		"key.converter":    "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":  "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": "http://" + registry,
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the connector created through the REST API", func() (bool, string) {
		resp, err := http.Post("http://"+rest+"/connectors", "application/json", bytes.NewReader(def))
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusCreated, resp.Status
	})
	readCommittedRows(t, srv.addr, topic, 20)
	mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)

	// The table evolves while the connector runs.
	mustExecSQL(`ALTER TABLE items ADD COLUMN note text`)
	mustExecSQL(`INSERT INTO items (name, at, note) SELECT 'name-' || g, timestamptz '2026-12-04 10:00:00+00' + g * interval '1 second', 'note-' || g FROM generate_series(21, 30) g`)
	readCommittedRows(t, srv.addr, topic, 30)
	mustRun(t, time.Minute, "", strataBin, "iceberg", "commit", topic, "--admin", srv.httpAddr)

	var want []string
	for i := 1; i <= 30; i++ {
		note := "null"
		if i > 20 {
			note = fmt.Sprintf("note-%d", i)
		}
		at := time.Date(2026, 12, 4, 10, 0, i, 0, time.UTC).Format("2006-01-02T15:04:05Z")
		want = append(want, fmt.Sprintf("0/%d/%d/name-%d/%s/%s", i-1, i, i, at, note))
	}
	sort.Strings(want)
	tableURL := fmt.Sprintf("s3://%s/%s/iceberg/strata/%s", miniotest.Bucket, prefix, topic)
	checkTypedReaders(t, node, tableURL, store.Endpoint(), "id,name,at,note", want)
	md := icebergMetadataOf(t, store, prefix+"/iceberg/strata/"+topic)
	if len(md.Schemas) != 3 || md.CurrentSchemaID != md.Schemas[2].ID || md.Schemas[1].ids()["note"] != 0 || md.Schemas[2].ids()["note"] == 0 {
		t.Fatalf("metadata schemas %+v, current %d: want the kafka column, the table's first columns, then note added", md.Schemas, md.CurrentSchemaID)
	}
	t.Logf("icebird and DuckDB read the 30 rows of the JDBC source; the 20 from before the new column read null in it")
}
