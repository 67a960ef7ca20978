package broker

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	registryavro "github.com/strata-streaming/strata/registry/avro"
	registryjsonschema "github.com/strata-streaming/strata/registry/jsonschema"
	registryprotobuf "github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
	"github.com/strata-streaming/strata/tiering"
	"github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

const (
	typedOrderV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`
	typedOrderV2 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`
)

type typedOrder struct {
	ID   int64   `avro:"id"`
	Item string  `avro:"item"`
	Note *string `avro:"note"`
}

// encodeTypedOrder is o in Confluent's wire format under schema id id,
// Avro-encoded with text (typedOrderV1 or typedOrderV2).
func encodeTypedOrder(t *testing.T, id int, text string, o typedOrder) []byte {
	t.Helper()
	s := hamba.MustParse(text)
	var payload []byte
	var err error
	if text == typedOrderV1 {
		payload, err = hamba.Marshal(s, struct {
			ID   int64  `avro:"id"`
			Item string `avro:"item"`
		}{o.ID, o.Item})
	} else {
		payload, err = hamba.Marshal(s, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return append(wire.AppendHeader(nil, int32(id)), payload...)
}

func openTestTable(t *testing.T, storeDir, name string) *iceberg.Table {
	t.Helper()
	store, err := tiering.NewFileStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := iceberg.Open(iceberg.Config{Store: store, Prefix: "iceberg/strata/" + name, Location: "file://" + storeDir + "/iceberg/strata/" + name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestIcebergTypedModes: value_schema_id_prefix decodes each value with the
// schema its id names; the subject evolves mid-stream (a new optional
// field) and the table gains the column, keeping the others' field IDs;
// records that do not decode land in <topic>~dlq; the offsets of both
// tables together are every offset once. value_schema_latest decodes bare
// values with the subject's latest schema.
func TestIcebergTypedModes(t *testing.T) {
	storeDir := t.TempDir()
	tb := startTestBroker(t, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	_, cl := startSchemaRegistry(t, tb)
	ctx := testContext(t)
	tb.createTopicWithPartitions("typed", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000", icebergModeConfig: icebergModeSchemaIDPrefix})
	v1 := registerSchema(t, cl, "typed-value", typedOrderV1, sr.TypeAvro)
	prod := tb.client(kgo.DefaultProduceTopic("typed"))
	produce := func(values ...[]byte) {
		t.Helper()
		for _, v := range values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: v}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	encode := func(id int, text string, o typedOrder) []byte { return encodeTypedOrder(t, id, text, o) }
	produce(encode(v1, typedOrderV1, typedOrder{ID: 0, Item: "a"}), encode(v1, typedOrderV1, typedOrder{ID: 1, Item: "b"}))
	produce([]byte("not framed")) // offset 2
	if st := icebergCommitNow(t, tb, "typed"); st.RowsCommitted != 2 || st.DLQRowsCommitted != 1 || st.LagOffsets != 0 {
		t.Fatalf("first commit: %+v", st)
	}
	main := openTestTable(t, storeDir, "typed")
	first, err := main.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idOf := func(st iceberg.State, name string) int {
		f, ok := st.Metadata.CurrentSchema().FindFieldByName(name)
		if !ok {
			t.Fatalf("no column %s in %s", name, st.Metadata.CurrentSchema())
		}
		return f.ID
	}

	v2 := registerSchema(t, cl, "typed-value", typedOrderV2, sr.TypeAvro)
	gift := "gift"
	produce(encode(v2, typedOrderV2, typedOrder{ID: 3, Item: "c", Note: &gift}), // offset 3
		append(wire.AppendHeader(nil, 9999), 0),                // 4: unknown id
		encode(v1, typedOrderV1, typedOrder{ID: 5, Item: "d"}), // 5: the old schema still
		append(wire.AppendHeader(nil, int32(v2)), 0x02),        // 6: truncated
		encode(v2, typedOrderV2, typedOrder{ID: 7, Item: "e"})) // 7
	st := icebergCommitNow(t, tb, "typed")
	if st.RowsCommitted != 5 || st.DLQRowsCommitted != 3 || st.LagOffsets != 0 || !strings.Contains(st.DLQLastReason, "6:") {
		t.Fatalf("second commit: %+v", st)
	}
	second, err := main.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"id", "item", "kafka.offset"} {
		if idOf(first, name) != idOf(second, name) {
			t.Fatalf("column %s changed its field id", name)
		}
	}
	if idOf(second, "note") <= first.Metadata.LastColumnID() {
		t.Fatalf("note has field id %d, not a new one above %d", idOf(second, "note"), first.Metadata.LastColumnID())
	}
	var rows []string
	var offsets []int64
	for _, r := range icebergtest.JSONRows(t, main) {
		kafka := r["kafka"].(map[string]any)
		rows = append(rows, fmt.Sprintf("%v/%v/%v/%v", kafka["offset"], r["id"], r["item"], r["note"]))
		offsets = append(offsets, int64(kafka["offset"].(float64)))
	}
	sort.Strings(rows)
	if want := "0/0/a/<nil> 1/1/b/<nil> 3/3/c/gift 5/5/d/<nil> 7/7/e/<nil>"; strings.Join(rows, " ") != want {
		t.Fatalf("main table rows %v, want %s", rows, want)
	}
	for _, r := range icebergtest.Rows(t, openTestTable(t, storeDir, "typed~dlq")) {
		var p int32
		var off int64
		if _, err := fmt.Sscanf(r, "%d/%d/", &p, &off); err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, off)
	}
	slices.Sort(offsets)
	if fmt.Sprint(offsets) != "[0 1 2 3 4 5 6 7]" {
		t.Fatalf("offsets of both tables %v, want each of 0-7 once", offsets)
	}

	// value_schema_latest: bare Avro values, the subject's latest schema.
	tb.createTopicWithPartitions("plain", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000",
		icebergModeConfig: icebergModeSchemaLatest, icebergValueSubjectConfig: "typed-value"})
	prod = tb.client(kgo.DefaultProduceTopic("plain"))
	produce(encode(v2, typedOrderV2, typedOrder{ID: 10, Item: "x", Note: &gift})[wire.HeaderSize:], []byte{0xff})
	if st := icebergCommitNow(t, tb, "plain"); st.RowsCommitted != 1 || st.DLQRowsCommitted != 1 {
		t.Fatalf("value_schema_latest commit: %+v", st)
	}
	got := icebergtest.JSONRows(t, openTestTable(t, storeDir, "plain"))
	if len(got) != 1 || got[0]["item"] != "x" || got[0]["note"] != "gift" {
		t.Fatalf("value_schema_latest rows: %v", got)
	}

	// JSON Schema values: typed columns; a value of the wrong type is a
	// dead letter.
	tb.createTopicWithPartitions("jsontyped", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000", icebergModeConfig: icebergModeSchemaIDPrefix})
	js := registerSchema(t, cl, "jsontyped-value", `{"type":"object","properties":{"id":{"type":"integer"},"at":{"type":"string","format":"date-time"},"tags":{"type":"array","items":{"type":"string"}}}}`, sr.TypeJSON)
	prod = tb.client(kgo.DefaultProduceTopic("jsontyped"))
	produce(append(wire.AppendHeader(nil, int32(js)), `{"id":7,"at":"2026-12-04T10:00:00Z","tags":["a","b"]}`...),
		append(wire.AppendHeader(nil, int32(js)), `{"id":"seven"}`...))
	if st := icebergCommitNow(t, tb, "jsontyped"); st.RowsCommitted != 1 || st.DLQRowsCommitted != 1 {
		t.Fatalf("JSON Schema commit: %+v", st)
	}
	got = icebergtest.JSONRows(t, openTestTable(t, storeDir, "jsontyped"))
	if len(got) != 1 || got[0]["id"] != float64(7) || got[0]["at"] != "2026-12-04T10:00:00Z" || fmt.Sprint(got[0]["tags"]) != "[a b]" {
		t.Fatalf("JSON Schema rows: %v", got)
	}

	// Protobuf values: the message its indexes name, columns by .proto
	// field name.
	tb.createTopicWithPartitions("pbtyped", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000", icebergModeConfig: icebergModeSchemaIDPrefix})
	const pbText = `syntax = "proto3"; package shop; message Other { string x = 1; } message OrderPB { int64 order_id = 1; string item = 2; repeated string tags = 3; }`
	pbID := registerSchema(t, cl, "pbtyped-value", pbText, sr.TypeProtobuf)
	parsed, err := registryprotobuf.New().Parse(pbText, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := registryprotobuf.Descriptor(parsed).Messages().ByName("OrderPB")
	msg := dynamicpb.NewMessage(md)
	msg.Set(md.Fields().ByName("order_id"), protoreflect.ValueOfInt64(42))
	msg.Set(md.Fields().ByName("item"), protoreflect.ValueOfString("pen"))
	payload, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	framedPB := registryprotobuf.AppendMessageIndexes(wire.AppendHeader(nil, int32(pbID)), []int{1})
	prod = tb.client(kgo.DefaultProduceTopic("pbtyped"))
	produce(append(framedPB, payload...), append(registryprotobuf.AppendMessageIndexes(wire.AppendHeader(nil, int32(pbID)), []int{7}), payload...))
	if st := icebergCommitNow(t, tb, "pbtyped"); st.RowsCommitted != 1 || st.DLQRowsCommitted != 1 {
		t.Fatalf("Protobuf commit: %+v", st)
	}
	got = icebergtest.JSONRows(t, openTestTable(t, storeDir, "pbtyped"))
	if len(got) != 1 || got[0]["order_id"] != float64(42) || got[0]["item"] != "pen" || fmt.Sprint(got[0]["tags"]) != "[]" {
		t.Fatalf("Protobuf rows: %v", got)
	}
	// value_schema_latest with Protobuf: a bare payload is the first message.
	tb.createTopicWithPartitions("pblatest", 1, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "3600000",
		icebergModeConfig: icebergModeSchemaLatest, icebergValueSubjectConfig: "pbtyped-value"})
	other := dynamicpb.NewMessage(registryprotobuf.Descriptor(parsed).Messages().ByName("Other"))
	other.Set(other.Descriptor().Fields().ByName("x"), protoreflect.ValueOfString("hi"))
	if payload, err = proto.Marshal(other); err != nil {
		t.Fatal(err)
	}
	prod = tb.client(kgo.DefaultProduceTopic("pblatest"))
	produce(payload)
	if st := icebergCommitNow(t, tb, "pblatest"); st.RowsCommitted != 1 || st.DLQRowsCommitted != 0 {
		t.Fatalf("Protobuf value_schema_latest commit: %+v", st)
	}
	if got = icebergtest.JSONRows(t, openTestTable(t, storeDir, "pblatest")); len(got) != 1 || got[0]["x"] != "hi" {
		t.Fatalf("Protobuf value_schema_latest rows: %v", got)
	}
	// The dead-letter table exists, empty, from the first commit on (the
	// catalog lists it with the topic).
	if st, err := openTestTable(t, storeDir, "pblatest~dlq").Load(ctx); err != nil || st.Version != 1 || st.Metadata.CurrentSnapshot() != nil {
		t.Fatalf("pblatest~dlq: version %d, snapshot %v, %v; want an empty table", st.Version, st.Metadata, err)
	}
}

// FuzzIcebergTypedDecode: whatever the bytes, decoding a value for a typed
// table returns columns or an error (a dead letter), never a panic, for
// Avro, JSON Schema and Protobuf schemas.
func FuzzIcebergTypedDecode(f *testing.F) {
	type format struct {
		typ  schema.Type
		text string
	}
	formats := []format{
		{schema.Avro, typedOrderV2},
		{schema.Avro, `{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},{"name":"t","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"m","type":{"type":"map","values":{"type":"array","items":"int"}}}]}`},
		{schema.JSON, `{"type":"object","properties":{"id":{"type":"integer"},"at":{"type":"string","format":"date-time"},"n":{"type":"object","properties":{"x":{"type":"number"}}}}}`},
		{schema.Protobuf, `syntax = "proto3"; import "google/protobuf/timestamp.proto"; message M { int64 a = 1; repeated string b = 2; map<string, M2> c = 3; google.protobuf.Timestamp t = 4; uint64 u = 5; } message M2 { bytes d = 1; }`},
	}
	var schemas []*icebergValueSchema
	for i, fm := range formats {
		var parsed schema.Parsed
		var err error
		switch fm.typ {
		case schema.Avro:
			parsed, err = registryavro.New().Parse(fm.text, nil)
		case schema.JSON:
			parsed, err = registryjsonschema.New().Parse(fm.text, nil)
		case schema.Protobuf:
			parsed, err = registryprotobuf.New().Parse(fm.text, nil)
		}
		if err != nil {
			f.Fatal(err)
		}
		reg := fakeIcebergRegistry{typ: fm.typ, parsed: parsed}
		c := &icebergCommitter{valueSchemas: map[int]*icebergValueSchema{}}
		vs, err := c.valueSchema(reg, i+1)
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, vs)
	}
	f.Add(byte(0), []byte{0x02, 0x02, 'a', 0x02, 'b', 0x00})
	f.Add(byte(2), []byte(`{"id":1,"at":"2026-12-04T10:00:00Z","n":{"x":1.5}}`))
	f.Add(byte(3), []byte{0x00, 0x08, 0x01, 0x12, 0x01, 'x', 0x28, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, which byte, payload []byte) {
		vs := schemas[int(which)%len(schemas)]
		for _, framed := range []bool{true, false} {
			fields, st, err := vs.decode(payload, framed)
			if err == nil && (fields == nil || st == nil) {
				t.Fatalf("no error and no columns for %x", payload)
			}
		}
	})
}

type fakeIcebergRegistry struct {
	typ    schema.Type
	parsed schema.Parsed
}

func (r fakeIcebergRegistry) ParsedSchema(int) (schema.Type, schema.Parsed, error) {
	return r.typ, r.parsed, nil
}
func (fakeIcebergRegistry) LatestSchemaID(string) (int, error) { return 1, nil }
func (fakeIcebergRegistry) CatchUp(context.Context) error      { return nil }
