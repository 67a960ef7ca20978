package connect

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
)

// protoRead is what ToConnect gives for a Connect schema written with
// ProtobufConverter: the same but for maps, arrays and structs, which
// read back optional (Protobuf cannot tell).
func protoRead(s *Schema) *Schema {
	out := *s
	out.Fields = make([]Field, len(s.Fields))
	for i, f := range s.Fields {
		fs := *f.Schema
		if fs.Type == TypeMap || fs.Type == TypeArray || fs.Type == TypeStruct || isLogical(&fs) {
			fs.Optional = true
		}
		out.Fields[i] = Field{Name: f.Name, Index: i, Schema: &fs}
	}
	return &out
}

// TestProtobufConverterRoundTrip: a value and a key through a real
// registry: subjects, schema type PROTOBUF, the message index byte; a
// fresh converter reads both back; tombstones and bad bytes.
func TestProtobufConverterRoundTrip(t *testing.T) {
	url := startTestRegistry(t)
	value := converterOf(t, "protobuf", false, "schema.registry.url", url)
	key := converterOf(t, ProtobufConverterClass, true, "schema.registry.url", url)
	keySchema := structSchema("shop.OrderKey", Field{Name: "id", Schema: &Schema{Type: TypeInt64}})
	b, err := value.FromConnect("orders", rowV1, rowV1Value(7))
	if err != nil {
		t.Fatal(err)
	}
	kb, err := key.FromConnect("orders", keySchema, &Struct{Schema: keySchema, Values: []any{int64(7)}})
	if err != nil {
		t.Fatal(err)
	}
	client := registryClient(t, url)
	subjects, err := client.Subjects(testCtx(t), "", false)
	if err != nil || !reflect.DeepEqual(subjects, []string{"orders-key", "orders-value"}) {
		t.Fatalf("subjects %v, %v", subjects, err)
	}
	latest, err := client.Version(testCtx(t), "orders-value", -1)
	id, payload, _ := wire.ParseHeader(b)
	if err != nil || latest.ID != int(id) || latest.Type != schema.Protobuf || payload[0] != 0 {
		t.Fatalf("orders-value latest: %+v, %v; the record's id %d, indexes byte %x", latest, err, id, payload[0])
	}
	reader := converterOf(t, "protobuf", false, "schema.registry.url", url)
	s, v, err := reader.ToConnect("orders", b)
	if err != nil {
		t.Fatal(err)
	}
	if want := protoRead(rowV1); !reflect.DeepEqual(s, want) || !sameConnectValue(v, rowV1Value(7)) {
		t.Errorf("read back %s\nwant %s\n%#v", dumpSchema(s), dumpSchema(want), v)
	}
	if ks, kv, err := reader.ToConnect("orders", kb); err != nil || !reflect.DeepEqual(ks, keySchema) || !sameConnectValue(kv, &Struct{Values: []any{int64(7)}}) {
		t.Errorf("key: %s %#v %v", dumpSchema(ks), kv, err)
	}
	if out, err := value.FromConnect("other", rowV1, nil); out != nil || err != nil {
		t.Errorf("tombstone: %x, %v", out, err)
	}
	for _, bad := range [][]byte{[]byte("plain"), wire.AppendHeader(nil, 999), append(wire.AppendHeader(nil, int32(id)), 2, 8),
		append(wire.AppendHeader(nil, int32(id)), 0, 0xff)} {
		if _, _, err := reader.ToConnect("orders", bad); !errors.Is(err, ErrConversion) {
			t.Errorf("%x: %v, want ErrConversion", bad, err)
		}
	}
	if _, err := value.FromConnect("orders", &Schema{Type: TypeString}, "x"); !errors.Is(err, ErrConversion) {
		t.Errorf("a string schema: %v", err)
	}
}

// TestProtobufConverterEvolution: a new optional field registers version
// 2 under BACKWARD; both versions read back with their own schemas;
// auto.register.schemas=false fails an unregistered schema.
func TestProtobufConverterEvolution(t *testing.T) {
	url := startTestRegistry(t)
	conv := converterOf(t, "protobuf", false, "schema.registry.url", url)
	b1, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if err != nil {
		t.Fatal(err)
	}
	v2 := &Struct{Schema: rowV2, Values: append(append([]any{}, rowV1Value(2).Values...), "hello")}
	b2, err := conv.FromConnect("orders", rowV2, v2)
	if err != nil {
		t.Fatal(err)
	}
	client := registryClient(t, url)
	versions, err := client.Versions(testCtx(t), "orders-value", false)
	if err != nil || !reflect.DeepEqual(versions, []int{1, 2}) {
		t.Fatalf("versions %v, %v", versions, err)
	}
	for _, tc := range []struct {
		b      []byte
		schema *Schema
		value  *Struct
	}{{b1, rowV1, rowV1Value(1)}, {b2, rowV2, v2}} {
		s, v, err := conv.ToConnect("orders", tc.b)
		if err != nil || !reflect.DeepEqual(s, protoRead(tc.schema)) || !sameConnectValue(v, tc.value) {
			t.Errorf("read back: %s %#v %v", dumpSchema(s), v, err)
		}
	}

	strict := converterOf(t, "protobuf", false, "schema.registry.url", url, "auto.register.schemas", "false")
	_, err = strict.FromConnect("other", rowV1, rowV1Value(1))
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "not registered under subject other-value and auto.register.schemas=false") {
		t.Fatalf("unregistered schema: %v", err)
	}
	text, _, _ := protoSchemaText(rowV1)
	if _, err := client.Register(testCtx(t), "other-value", serde.Text{Type: schema.Protobuf, Schema: text}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.FromConnect("other", rowV1, rowV1Value(1)); err != nil {
		t.Fatal(err)
	}
	// use.latest.version writes a v1 record with version 2's message.
	latest := converterOf(t, "protobuf", false, "schema.registry.url", url, "use.latest.version", "true", "auto.register.schemas", "false")
	b, err := latest.FromConnect("orders", rowV1, rowV1Value(3))
	if err != nil {
		t.Fatal(err)
	}
	if s, _, err := conv.ToConnect("orders", b); err != nil || len(s.Fields) != len(rowV2.Fields) {
		t.Fatalf("use.latest.version: %s, %v", dumpSchema(s), err)
	}
}

// TestProtobufConverterIndependentCodecs: franz-go's pkg/sr Serde with
// dynamicpb and sr.Index(0) decodes what ProtobufConverter writes and
// frames a message ToConnect reads.
func TestProtobufConverterIndependentCodecs(t *testing.T) {
	url := startTestRegistry(t)
	s := structSchema("shop.Order",
		Field{Name: "id", Schema: &Schema{Type: TypeInt64}},
		Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
		Field{Name: "amount", Schema: optional(decimalSchema("2"))},
		Field{Name: "at", Schema: optional(avroTimestamp)})
	at := time.UnixMilli(1_730_610_000_123).UTC()
	conv := converterOf(t, "protobuf", false, "schema.registry.url", url)
	b, err := conv.FromConnect("orders", s, &Struct{Schema: s, Values: []any{int64(1) << 40, "Ann", big.NewRat(1999, 100), at}})
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := wire.ParseHeader(b)
	franz, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	got, err := franz.SchemaByID(testCtx(t), int(id))
	if err != nil || got.Type != sr.TypeProtobuf {
		t.Fatalf("franz-go: schema %d: %+v, %v", id, got, err)
	}
	parsed, err := protobuf.New().Parse(got.Schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := protobuf.Descriptor(parsed).Messages().ByName("Order")
	var srSerde sr.Serde
	srSerde.Register(int(id), &dynamicpb.Message{}, sr.Index(0),
		sr.EncodeFn(func(v any) ([]byte, error) { return proto.Marshal(v.(*dynamicpb.Message)) }),
		sr.DecodeFn(func(b []byte, v any) error { return proto.Unmarshal(b, v.(*dynamicpb.Message)) }))
	msg := dynamicpb.NewMessage(md)
	if err := srSerde.Decode(b, msg); err != nil {
		t.Fatal(err)
	}
	field := func(m protoreflect.Message, name string) protoreflect.Value {
		return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	amount := field(msg, "amount").Message()
	ts := field(msg, "at").Message()
	if field(msg, "id").Int() != 1<<40 || field(msg, "name").String() != "Ann" ||
		fromTwosComplement(field(amount, "value").Bytes()).Int64() != 1999 || field(amount, "scale").Int() != 2 ||
		field(ts, "seconds").Int() != at.Unix() || field(ts, "nanos").Int() != 123_000_000 {
		t.Fatalf("franz-go decoded %v", msg)
	}

	// franz-go frames a message of its own (no name, no amount).
	own := dynamicpb.NewMessage(md)
	own.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(5))
	fb, err := srSerde.Encode(own)
	if err != nil {
		t.Fatal(err)
	}
	rs, v, err := converterOf(t, "protobuf", false, "schema.registry.url", url).ToConnect("orders", fb)
	if err != nil {
		t.Fatal(err)
	}
	if want := protoRead(s); !reflect.DeepEqual(rs, want) || !sameConnectValue(v, &Struct{Values: []any{int64(5), nil, nil, nil}}) {
		t.Fatalf("ToConnect of franz-go's bytes: %s %#v", dumpSchema(rs), v)
	}
}
