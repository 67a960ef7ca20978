package iceberg_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	iceberg "github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

// structText renders a struct's columns as "name type" lines (types as
// Iceberg prints them), nested fields indented.
func structText(st *iceberg.StructType) string {
	var lines []string
	for _, f := range st.FieldList {
		lines = append(lines, fmt.Sprintf("%s %s", f.Name, f.Type))
	}
	return strings.Join(lines, "\n")
}

const ordersV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
 {"name":"ship","type":["null",{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},{"name":"zip","type":["null","string"]}]}]},
 {"name":"digest","type":{"type":"fixed","name":"MD5","size":4}},
 {"name":"ok","type":"boolean"},
 {"name":"weight","type":"float"}
]}`

// ordersV2 adds an optional field and widens qty to long and weight to
// double, as a BACKWARD-compatible evolution may.
var ordersV2 = strings.Replace(strings.Replace(strings.Replace(ordersV1,
	`{"name":"qty","type":"int"}`, `{"name":"qty","type":"long"}`, 1),
	`{"name":"weight","type":"float"}`, `{"name":"weight","type":"double"}`, 1),
	`{"name":"ok","type":"boolean"},`, `{"name":"ok","type":"boolean"},{"name":"note","type":["null","string"],"default":null},`, 1)

func TestAvroStructMapping(t *testing.T) {
	st, err := AvroStruct(avro.MustParse(ordersV1))
	if err != nil {
		t.Fatal(err)
	}
	want := `id long
qty int
price decimal(9, 2)
at timestamptz
day date
tags list<string>
attrs map<string, long>
status string
ship struct<0: city: optional string, 0: zip: optional string>
digest fixed[4]
ok boolean
weight float`
	if got := structText(st); got != want {
		t.Fatalf("columns:\n%s\nwant:\n%s", got, want)
	}
	for _, f := range st.FieldList {
		if f.Required {
			t.Fatalf("column %s is required; every value column must be optional", f.Name)
		}
	}
	for _, bad := range []string{
		`{"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]}]}`,
		`{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}`,
		`{"type":"record","name":"R","fields":[{"name":"kafka","type":"int"}]}`,
		`"string"`,
	} {
		if _, err := AvroStruct(avro.MustParse(bad)); !errors.Is(err, ErrUnsupportedSchema) {
			t.Fatalf("AvroStruct(%s) = %v, want ErrUnsupportedSchema", bad, err)
		}
	}
}

func TestJSONSchemaStructMapping(t *testing.T) {
	st, err := JSONSchemaStruct(`{"type":"object","properties":{
	  "id":{"type":"integer"},
	  "name":{"type":["null","string"]},
	  "score":{"type":"number"},
	  "at":{"type":"string","format":"date-time"},
	  "born":{"type":"string","format":"date"},
	  "tags":{"type":"array","items":{"type":"string"}},
	  "labels":{"type":"object","additionalProperties":{"type":"integer"}},
	  "home":{"$ref":"#/definitions/Address"},
	  "any":{"oneOf":[{"type":"string"},{"type":"integer"}]},
	  "maybe":{"anyOf":[{"type":"null"},{"type":"boolean"}]}
	},"definitions":{"Address":{"type":"object","properties":{"city":{"type":"string"}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `any string
at timestamptz
born date
home struct<0: city: optional string>
id long
labels map<string, long>
maybe boolean
name string
score double
tags list<string>`
	if got := structText(st); got != want {
		t.Fatalf("columns:\n%s\nwant:\n%s", got, want)
	}
	if _, err := JSONSchemaStruct(`{"type":"string"}`); !errors.Is(err, ErrUnsupportedSchema) {
		t.Fatalf("a string schema: %v, want ErrUnsupportedSchema", err)
	}
	v, err := CoerceValue(st, map[string]any{"id": json.Number("7"), "at": "2026-12-04T10:00:00Z", "any": json.Number("3")})
	if err != nil {
		t.Fatal(err)
	}
	if v["id"] != int64(7) || v["at"] != time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMicro() || v["any"] != "3" {
		t.Fatalf("coerced %v", v)
	}
	if _, err := CoerceValue(st, map[string]any{"id": "seven"}); !errors.Is(err, ErrValue) {
		t.Fatalf("a string for an integer column: %v, want ErrValue", err)
	}
}

// orderValue is an order as registry/serde decodes Avro (ints as int64,
// timestamps as stored numbers, decimals as json.Number).
func orderValue(id int64, note any) map[string]any {
	v := map[string]any{
		"id": id, "qty": int64(3), "price": json.Number("12.50"),
		"at":   time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMilli() + id,
		"day":  int64(20791), // 2026-12-04
		"tags": []any{"a", "b"}, "attrs": map[string]any{"x": int64(1)}, "status": "PAID",
		"ship": map[string]any{"city": "Oslo", "zip": nil}, "digest": []byte{1, 2, 3, 4},
		"ok": true, "weight": float32(1.5),
	}
	if note != nil {
		v["note"] = note
	}
	return v
}

func typedRecords(t *testing.T, schema avro.Schema, st *iceberg.StructType, from, to int64, note any) []Record {
	t.Helper()
	var out []Record
	for off := from; off < to; off++ {
		fields, err := CoerceValue(st, NormalizeAvro(schema, orderValue(off, note)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Record{Partition: 0, Offset: off, Timestamp: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC),
			Key: fmt.Appendf(nil, "k%d", off), Fields: fields})
	}
	return out
}

// typedOrdersTable is an empty typed table on a FileStore, with the orders
// schemas v1 and v2 and their structs.
func typedOrdersTable(t *testing.T) (tbl *Table, v1, v2 avro.Schema, st1, st2 *iceberg.StructType) {
	t.Helper()
	dir := t.TempDir()
	store, err := tiering.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = Open(Config{Store: store, Prefix: "iceberg/strata/orders", Location: "file://" + filepath.Join(dir, "iceberg/strata/orders"), Layout: LayoutTyped})
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 = avro.MustParse(ordersV1), avro.MustParse(ordersV2)
	if st1, err = AvroStruct(v1); err != nil {
		t.Fatal(err)
	}
	if st2, err = AvroStruct(v2); err != nil {
		t.Fatal(err)
	}
	return tbl, v1, v2, st1, st2
}

// TestTypedAppendEvolvesSchema: a typed table gets the value's columns
// from the first schema; a second, evolved schema adds a column with a new
// field ID, keeps every existing column's ID (a promoted column keeps its
// ID too), and rows written before read null in the new column.
func TestTypedAppendEvolvesSchema(t *testing.T) {
	ctx := context.Background()
	tbl, v1, v2, st1, st2 := typedOrdersTable(t)
	if _, err := tbl.AppendWith(ctx, typedRecords(t, v1, st1, 0, 3, nil), nil, AppendOptions{ValueTypes: []*iceberg.StructType{st1}}); err != nil {
		t.Fatal(err)
	}
	first, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids1 := fieldIDs(first.Metadata.CurrentSchema())
	if ids1["kafka.offset"] == 0 || ids1["ship.city"] == 0 || ids1["id"] == 0 {
		t.Fatalf("schema after the first append: %s", first.Metadata.CurrentSchema())
	}
	if _, err := tbl.AppendWith(ctx, typedRecords(t, v2, st2, 3, 5, "gift"), nil, AppendOptions{ValueTypes: []*iceberg.StructType{st2}}); err != nil {
		t.Fatal(err)
	}
	second, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := second.Metadata.CurrentSchema()
	if len(second.Metadata.Schemas()) != 3 || sc.ID != first.Metadata.CurrentSchema().ID+1 {
		t.Fatalf("schemas %d, current %d: want 3 (kafka only, v1, v2) and the newest current", len(second.Metadata.Schemas()), sc.ID)
	}
	ids2 := fieldIDs(sc)
	for name, id := range ids1 {
		if ids2[name] != id {
			t.Fatalf("column %s changed id %d -> %d", name, id, ids2[name])
		}
	}
	if ids2["note"] <= first.Metadata.LastColumnID() {
		t.Fatalf("new column note has id %d, not above the last column id %d", ids2["note"], first.Metadata.LastColumnID())
	}
	if f, _ := sc.FindFieldByName("qty"); !f.Type.Equals(iceberg.PrimitiveTypes.Int64) {
		t.Fatalf("qty is %s after int -> long", f.Type)
	}

	rows := icebergtest.JSONRows(t, tbl)
	sort.Slice(rows, func(i, j int) bool { return rows[i]["id"].(float64) < rows[j]["id"].(float64) })
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	for i, row := range rows {
		wantNote := any(nil)
		if i >= 3 {
			wantNote = "gift"
		}
		kafka := row["kafka"].(map[string]any)
		if row["note"] != wantNote || kafka["offset"] != float64(i) || fmt.Sprint(row["price"]) != "12.5" || row["qty"] != float64(3) ||
			row["status"] != "PAID" || row["ship"].(map[string]any)["city"] != "Oslo" || row["day"] != "2026-12-04" {
			t.Fatalf("row %d: %v", i, row)
		}
	}

	// A type change Iceberg does not allow is refused, and the table stays.
	bad, err := AvroStruct(avro.MustParse(strings.Replace(ordersV1, `{"name":"id","type":"long"}`, `{"name":"id","type":"string"}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendWith(ctx, typedRecords(t, v2, st2, 5, 6, nil), nil, AppendOptions{ValueTypes: []*iceberg.StructType{bad}}); !errors.Is(err, ErrUnsupportedSchema) {
		t.Fatalf("long -> string: %v, want ErrUnsupportedSchema", err)
	}
}

// TestCommitProgressMovesOffsets: with CommitProgress, a commit with no
// row (every record went to the dead-letter table) still moves the
// table's offsets, adding no data file.
func TestCommitProgressMovesOffsets(t *testing.T) {
	ctx := context.Background()
	tbl, _ := fileTable(t)
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if _, err := tbl.Append(ctx, testRecords(0, 0, 1, start), nil); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.Append(ctx, nil, map[int32]int64{0: 5})
	if err != nil || res.LastOffsets[0] != 1 {
		t.Fatalf("without CommitProgress: %+v %v, want offsets unchanged", res, err)
	}
	res, err = tbl.AppendWith(ctx, nil, map[int32]int64{0: 5}, AppendOptions{CommitProgress: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 0 || st.LastOffsets[0] != 5 {
		t.Fatalf("with CommitProgress: files %d, offsets %v; want 0 files and offset 5", res.Files, st.LastOffsets)
	}
	if rows := icebergtest.Rows(t, tbl); len(rows) != 2 {
		t.Fatalf("rows %v, want the 2 appended first", rows)
	}
}

// fieldIDs names every field of sc by its dotted path.
func fieldIDs(sc *iceberg.Schema) map[string]int {
	out := map[string]int{}
	for id := 1; id <= sc.HighestFieldID(); id++ {
		if name, ok := sc.FindColumnName(id); ok {
			out[name] = id
		}
	}
	return out
}

const ordersProto = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message Order {
  int64 id = 1;
  string item = 2;
  int32 qty = 3;
  uint64 big = 4;
  Status status = 5;
  google.protobuf.Timestamp at = 6;
  repeated string tags = 7;
  map<string, int64> attrs = 8;
  Address ship = 9;
  optional string note = 10;
  google.protobuf.StringValue label = 11;
  bytes digest = 12;
}
enum Status { NEW = 0; PAID = 1; }
message Address { string city = 1; }`

func TestProtobufStructMapping(t *testing.T) {
	parsed, err := protobuf.New().Parse(ordersProto, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := protobuf.Descriptor(parsed).Messages().ByName("Order")
	st, err := ProtobufStruct(md)
	if err != nil {
		t.Fatal(err)
	}
	want := `id long
item string
qty int
big decimal(20, 0)
status string
at timestamptz
tags list<string>
attrs map<string, long>
ship struct<0: city: optional string>
note string
label string
digest binary`
	if got := structText(st); got != want {
		t.Fatalf("columns:\n%s\nwant:\n%s", got, want)
	}
	msg := dynamicpb.NewMessage(md)
	msg.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(7))
	msg.Set(md.Fields().ByName("big"), protoreflect.ValueOfUint64(1<<63))
	msg.Set(md.Fields().ByName("status"), protoreflect.ValueOfEnum(1))
	at := dynamicpb.NewMessage(md.Fields().ByName("at").Message())
	at.Set(at.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).Unix()))
	msg.Set(md.Fields().ByName("at"), protoreflect.ValueOfMessage(at))
	v, err := CoerceValue(st, ProtobufValue(msg))
	if err != nil {
		t.Fatal(err)
	}
	// Unset proto3 scalars read their defaults; unset optional and message
	// fields read null.
	if v["id"] != int64(7) || v["item"] != "" || v["qty"] != int32(0) || v["status"] != "PAID" || v["note"] != nil || v["ship"] != nil ||
		v["at"] != time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMicro() || v["big"].(decimal128.Num).BigInt().String() != "9223372036854775808" {
		t.Fatalf("coerced %v", v)
	}
	recursive, err := protobuf.New().Parse(`syntax = "proto3"; message Node { Node next = 1; }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ProtobufStruct(protobuf.Descriptor(recursive).Messages().ByName("Node")); !errors.Is(err, ErrUnsupportedSchema) {
		t.Fatalf("a recursive message: %v, want ErrUnsupportedSchema", err)
	}
}

// Compacting a typed table merges the files of the current schema and
// leaves a file from before the schema evolved as it is; every row reads
// the same.
func TestTypedCompactionKeepsFilesOfOlderSchemas(t *testing.T) {
	ctx := context.Background()
	tbl, v1, v2, st1, st2 := typedOrdersTable(t)
	if _, err := tbl.AppendWith(ctx, typedRecords(t, v1, st1, 0, 3, nil), nil, AppendOptions{ValueTypes: []*iceberg.StructType{st1}}); err != nil {
		t.Fatal(err)
	}
	for r := range int64(3) {
		if _, err := tbl.AppendWith(ctx, typedRecords(t, v2, st2, 3+2*r, 5+2*r, "gift"), nil, AppendOptions{ValueTypes: []*iceberg.StructType{st2}}); err != nil {
			t.Fatal(err)
		}
	}
	byOffset := func(rows []map[string]any) string {
		sort.Slice(rows, func(i, j int) bool { return rows[i]["id"].(float64) < rows[j]["id"].(float64) })
		return fmt.Sprint(rows)
	}
	before := byOffset(icebergtest.JSONRows(t, tbl))
	res, err := tbl.Compact(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRewritten != 3 || res.FilesWritten != 1 || res.Rows != 6 {
		t.Fatalf("compaction: %+v (want the 3 files of the current schema into 1)", res)
	}
	if files := icebergtest.DataFiles(t, tbl); len(files) != 2 {
		t.Fatalf("data files after compaction: %v", files)
	}
	if after := byOffset(icebergtest.JSONRows(t, tbl)); after != before || !strings.Contains(after, "gift") {
		t.Fatalf("rows after compaction\n got %s\nwant %s", after, before)
	}
}
