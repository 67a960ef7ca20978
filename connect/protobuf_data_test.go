package connect

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/protobuf"
)

// protoRow has every Connect type a field can have.
var protoRow = structSchema("shop.Row",
	Field{Name: "i8", Schema: &Schema{Type: TypeInt8}},
	Field{Name: "i16", Schema: &Schema{Type: TypeInt16}},
	Field{Name: "i32", Schema: &Schema{Type: TypeInt32}},
	Field{Name: "i64", Schema: &Schema{Type: TypeInt64}},
	Field{Name: "f32", Schema: &Schema{Type: TypeFloat32}},
	Field{Name: "f64", Schema: &Schema{Type: TypeFloat64}},
	Field{Name: "ok", Schema: &Schema{Type: TypeBoolean}},
	Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
	Field{Name: "raw", Schema: &Schema{Type: TypeBytes}},
	Field{Name: "amount", Schema: optional(decimalSchema("2"))},
	Field{Name: "day", Schema: optional(avroDate)},
	Field{Name: "clock", Schema: optional(avroTime)},
	Field{Name: "at", Schema: optional(avroTimestamp)},
	Field{Name: "tags", Schema: &Schema{Type: TypeArray, Optional: true, Items: &Schema{Type: TypeString}}},
	Field{Name: "attrs", Schema: &Schema{Type: TypeMap, Optional: true, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeInt64}}},
	Field{Name: "by_day", Schema: &Schema{Type: TypeMap, Optional: true, KeyType: avroDate, ValueType: &Schema{Type: TypeString}}},
	Field{Name: "inner", Schema: optional(innerStruct)},
	Field{Name: "inners", Schema: &Schema{Type: TypeArray, Optional: true, Items: innerStruct}},
)

const protoRowText = `syntax = "proto3";

package shop;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/protobuf/timestamp.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";

message Row {
  int32 i8 = 1 [(confluent.field_meta) = { params: [ { key: "connect.type", value: "int8" } ] }];
  int32 i16 = 2 [(confluent.field_meta) = { params: [ { key: "connect.type", value: "int16" } ] }];
  int32 i32 = 3;
  int64 i64 = 4;
  float f32 = 5;
  double f64 = 6;
  bool ok = 7;
  optional string name = 8;
  bytes raw = 9;
  confluent.type.Decimal amount = 10 [(confluent.field_meta) = { params: [ { key: "scale", value: "2" } ] }];
  google.type.Date day = 11;
  google.type.TimeOfDay clock = 12;
  google.protobuf.Timestamp at = 13;
  repeated string tags = 14;
  map<string, int64> attrs = 15;
  repeated ByDayEntry by_day = 16;
  Inner inner = 17;
  repeated Inner inners = 18;

  message ByDayEntry {
    google.type.Date key = 1;
    string value = 2;
  }
  message Inner {
    int32 n = 1;
  }
}
`

func protoRowValue() *Struct {
	return &Struct{Schema: protoRow, Values: []any{int8(-5), int16(300), int32(-70000), int64(1) << 40, float32(1.5), 2.25, true,
		"héllo", []byte{0, 1, 255}, big.NewRat(-12345, 100), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.UnixMilli(45_296_789).UTC(), time.UnixMilli(-1_730_610_000_123).UTC(), []any{"a", "b"},
		map[string]any{"x": int64(1)}, map[any]any{time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC): "jan 2"},
		&Struct{Schema: innerStruct, Values: []any{int32(2)}},
		[]any{&Struct{Schema: innerStruct, Values: []any{int32(3)}}}}}
}

// TestProtobufDataMapping pins the .proto ProtobufData writes for every
// Connect type, compiles it with registry/protobuf, maps the descriptor
// back, and carries a value through dynamicpb and the Protobuf binary.
func TestProtobufDataMapping(t *testing.T) {
	text, fullName, err := protoSchemaText(protoRow)
	if err != nil {
		t.Fatal(err)
	}
	if text != protoRowText || fullName != "shop.Row" {
		t.Fatalf("proto (%s)\n%s\nwant\n%s", fullName, text, protoRowText)
	}
	parsed, err := protobuf.New().Parse(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := protobuf.MessageByIndexes(parsed, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	back, err := connectSchemaFromProto(md)
	if err != nil {
		t.Fatal(err)
	}
	// What reads back differs from what was written where Protobuf cannot
	// say it: message-typed fields (logical types, structs) are optional,
	// nested messages are named by their full name.
	inner := structSchema("shop.Row.Inner", Field{Name: "n", Schema: &Schema{Type: TypeInt32}})
	want := structSchema("shop.Row", append([]Field{}, protoRow.Fields...)...)
	want.Fields[16] = Field{Name: "inner", Index: 16, Schema: optional(inner)}
	want.Fields[17] = Field{Name: "inners", Index: 17, Schema: &Schema{Type: TypeArray, Optional: true, Items: inner}}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("schema back\n got: %s\nwant: %s", dumpSchema(back), dumpSchema(want))
	}
	msg, err := protoMessage(md, protoRow, protoRowValue(), 0)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	decoded := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(payload, decoded); err != nil {
		t.Fatal(err)
	}
	got, err := connectValueFromProto(back, decoded)
	if err != nil {
		t.Fatal(err)
	}
	if !sameConnectValue(got, protoRowValue()) {
		t.Errorf("value back\n got: %#v\nwant: %#v", got.Values, protoRowValue().Values)
	}

	// Nulls: optional fields unset read back nil; arrays and maps empty.
	empty := &Struct{Schema: protoRow, Values: make([]any, len(protoRow.Fields))}
	copy(empty.Values, protoRowValue().Values[:7])
	empty.Values[8] = []byte{}
	msg, err = protoMessage(md, protoRow, empty, 0)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ = proto.Marshal(msg)
	decoded = dynamicpb.NewMessage(md)
	_ = proto.Unmarshal(payload, decoded)
	got, err = connectValueFromProto(back, decoded)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Values[9:] {
		switch v.(type) {
		case nil, []any, map[string]any, map[any]any:
		default:
			t.Errorf("field %s: %#v, want null or empty", protoRow.Fields[9+i].Name, v)
		}
	}
	if got.Values[7] != nil {
		t.Errorf("optional string: %#v", got.Values[7])
	}
}

// TestProtobufDataSchemas: names, defaults and refusals.
func TestProtobufDataSchemas(t *testing.T) {
	unnamed := structSchema("", Field{Name: "a", Schema: structSchema("", Field{Name: "b", Schema: &Schema{Type: TypeInt32}})},
		Field{Name: "Inner", Schema: innerStruct})
	text, fullName, err := protoSchemaText(unnamed)
	if err != nil {
		t.Fatal(err)
	}
	if fullName != "ConnectDefault1" || !strings.Contains(text, "message ConnectDefault1 {") ||
		!strings.Contains(text, "ConnectDefault2 a = 1;") || !strings.Contains(text, "InnerMessage Inner = 2;") {
		t.Errorf("unnamed structs (%s):\n%s", fullName, text)
	}
	if _, err := protobuf.New().Parse(text, nil); err != nil {
		t.Errorf("%s: %v", text, err)
	}
	for _, bad := range []*Schema{
		{Type: TypeInt32},
		structSchema("x", Field{Name: "a", Schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeArray, Items: &Schema{Type: TypeInt32}}}}),
		structSchema("x", Field{Name: "a", Schema: innerStruct}, Field{Name: "b", Schema: structSchema("com.example.Inner")}),
	} {
		if _, _, err := protoSchemaText(bad); err == nil {
			t.Errorf("%s: no error", dumpSchema(bad))
		}
	}
}
