package serde

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// jsonValue decodes a JSON literal as a caller of Encode would have it.
func jsonValue(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("test value %s: %v", text, err)
	}
	return v
}

// roundTrip encodes value with s, checks the header, decodes it through
// the registry and returns the decoded value.
func roundTrip(t *testing.T, c *Client, s Schema, value any) any {
	t.Helper()
	b, err := Encode(s, value)
	if err != nil {
		t.Fatalf("encode %v: %v", value, err)
	}
	id, _, err := wire.ParseHeader(b)
	if err != nil || int(id) != s.ID {
		t.Fatalf("header: id %d, %v; want id %d", id, err, s.ID)
	}
	got, gotSchema, err := Decode(testContext(t), c, b)
	if err != nil {
		t.Fatalf("decode %x: %v", b, err)
	}
	if gotSchema.ID != s.ID {
		t.Fatalf("decoded with schema %d, want %d", gotSchema.ID, s.ID)
	}
	return got
}

func TestAvroRoundTrip(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	for _, tc := range []struct {
		name, schema, value string
		want                any // nil: want the value as decoded by JSON with json.Number
		wantErr             string
	}{
		{name: "primitive string", schema: `"string"`, value: `"hi"`, want: "hi"},
		{name: "long from float64", schema: `"long"`, value: `42`, want: int64(42)},
		{name: "int out of range", schema: `"int"`, value: `3000000000`, wantErr: "out of range"},
		{name: "int not whole", schema: `"int"`, value: `1.5`, wantErr: "whole number"},
		{name: "record", schema: `{"type":"record","name":"R","fields":[
			{"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"f","type":"float"},{"name":"d","type":"double"},
			{"name":"s","type":"string"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
			{"name":"a","type":{"type":"array","items":"long"}},{"name":"m","type":{"type":"map","values":"string"}},
			{"name":"by","type":"bytes"},{"name":"fx","type":{"type":"fixed","name":"F","size":2}}]}`,
			value: `{"b":true,"i":-7,"f":1.5,"d":2.25,"s":"x","e":"B","a":[1,2],"m":{"k":"v"},"by":"\u00ff\u0001","fx":"ab"}`,
			want: map[string]any{"b": true, "i": int64(-7), "f": float32(1.5), "d": 2.25, "s": "x", "e": "B",
				"a": []any{int64(1), int64(2)}, "m": map[string]any{"k": "v"}, "by": []byte{0xff, 1}, "fx": []byte("ab")}},
		{name: "missing field takes its default", schema: `{"type":"record","name":"R","fields":[
			{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"n","type":"int","default":5},
			{"name":"tags","type":{"type":"array","items":"string"},"default":["x"]}]}`,
			value: `{"id":1}`, want: map[string]any{"id": int64(1), "note": nil, "n": int64(5), "tags": []any{"x"}}},
		{name: "missing field without default", schema: `{"type":"record","name":"R","fields":[{"name":"id","type":"long"}]}`,
			value: `{}`, wantErr: ".id: missing"},
		{name: "unknown field", schema: `{"type":"record","name":"R","fields":[{"name":"id","type":"long"}]}`,
			value: `{"id":1,"idd":2}`, wantErr: `no field "idd"`},
		{name: "nullable union takes the bare value", schema: `["null","string"]`, value: `"x"`, want: "x"},
		{name: "nullable union null", schema: `["null","string"]`, value: `null`, want: nil},
		{name: "nullable union in Avro JSON form", schema: `["null","string"]`, value: `{"string":"x"}`, want: "x"},
		{name: "union of several types, named", schema: `["null","long","string"]`, value: `{"string":"7"}`, want: map[string]any{"string": "7"}},
		{name: "union of several types, first that fits", schema: `["null","long","string"]`, value: `7`, want: map[string]any{"long": int64(7)}},
		{name: "union of records by full name", schema: `[{"type":"record","name":"A","namespace":"n","fields":[{"name":"x","type":"int"}]},
			{"type":"record","name":"B","namespace":"n","fields":[{"name":"y","type":"int"}]}]`,
			value: `{"n.B":{"y":1}}`, want: map[string]any{"n.B": map[string]any{"y": int64(1)}}},
		{name: "union without a fitting branch", schema: `["null","long","boolean"]`, value: `"x"`, wantErr: "fits no branch"},
		{name: "enum with an unknown symbol", schema: `{"type":"enum","name":"E","symbols":["A"]}`, value: `"Z"`, wantErr: "not a symbol"},
		{name: "decimal from a string", schema: `{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}`, value: `"-12.5"`, want: json.Number("-12.50")},
		{name: "decimal from a number", schema: `{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}`, value: `1234.56`, want: json.Number("1234.56")},
		{name: "decimal too precise", schema: `{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}`, value: `"1.234"`, wantErr: "decimal places"},
		{name: "decimal too many digits", schema: `{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`, value: `"123.45"`, wantErr: "precision"},
		{name: "decimal on fixed", schema: `{"type":"fixed","name":"D","size":4,"logicalType":"decimal","precision":8,"scale":3}`, value: `"-0.001"`, want: json.Number("-0.001")},
		{name: "date from a string", schema: `{"type":"int","logicalType":"date"}`, value: `"1970-01-11"`, want: int64(10)},
		{name: "date from a number", schema: `{"type":"int","logicalType":"date"}`, value: `19000`, want: int64(19000)},
		{name: "timestamp-millis from RFC 3339", schema: `{"type":"long","logicalType":"timestamp-millis"}`, value: `"2024-01-02T03:04:05.678Z"`, want: int64(1704164645678)},
		{name: "timestamp-micros with an offset", schema: `{"type":"long","logicalType":"timestamp-micros"}`, value: `"1970-01-01T01:00:00.000001+01:00"`, want: int64(1)},
		{name: "timestamp not a time", schema: `{"type":"long","logicalType":"timestamp-millis"}`, value: `"yesterday"`, wantErr: "RFC 3339"},
		{name: "uuid", schema: `{"type":"string","logicalType":"uuid"}`, value: `"c8a8e5d2-5d0b-4a5e-8f6a-3f4a4b1c2d3e"`, want: "c8a8e5d2-5d0b-4a5e-8f6a-3f4a4b1c2d3e"},
		{name: "bytes beyond latin-1", schema: `"bytes"`, value: `"€"`, wantErr: "U+00FF"},
		{name: "recursive record", schema: `{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}`,
			value: `{"v":1,"next":{"v":2,"next":null}}`, want: map[string]any{"v": int64(1), "next": map[string]any{"v": int64(2), "next": nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustRegister(t, c, "avro-"+strings.ReplaceAll(tc.name, " ", "-"), Text{Schema: tc.schema})
			value := jsonValue(t, tc.value)
			if tc.wantErr != "" {
				_, err := Encode(s, value)
				if !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("encode error %v, want ErrEncode saying %q", err, tc.wantErr)
				}
				return
			}
			if got := roundTrip(t, c, s, value); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decoded %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestAvroNativeValues(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	s := mustRegister(t, c, "native", Text{Schema: `{"type":"record","name":"R","fields":[
		{"name":"i","type":"int"},{"name":"l","type":"long"},{"name":"b","type":"bytes"},{"name":"n","type":"long"}]}`})
	got := roundTrip(t, c, s, map[string]any{"i": 3, "l": int64(1) << 40, "b": []byte{0, 1}, "n": json.Number("-9")})
	want := map[string]any{"i": int64(3), "l": int64(1) << 40, "b": []byte{0, 1}, "n": int64(-9)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %#v, want %#v", got, want)
	}
}

// TestAvroReference: a record whose field is a type registered under
// another subject.
func TestAvroReference(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	mustRegister(t, c, "address", Text{Schema: `{"type":"record","name":"Address","namespace":"acme","fields":[{"name":"city","type":"string"}]}`})
	person := mustRegister(t, c, "person-value", Text{
		Schema:     `{"type":"record","name":"Person","namespace":"acme","fields":[{"name":"name","type":"string"},{"name":"home","type":"acme.Address"}]}`,
		References: []schema.Reference{{Name: "acme.Address", Subject: "address", Version: 1}},
	})
	if len(person.References) != 1 || person.References[0].Subject != "address" {
		t.Fatalf("references = %+v", person.References)
	}
	value := jsonValue(t, `{"name":"Ann","home":{"city":"Oslo"}}`)
	want := map[string]any{"name": "Ann", "home": map[string]any{"city": "Oslo"}}
	if got := roundTrip(t, c, person, value); !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %#v", got)
	}
	// A fresh client resolves the reference when it fetches by id.
	fresh, _ := newTestClient(t, c.URL())
	b, _ := Encode(person, value)
	if got, _, err := Decode(testContext(t), fresh, b); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("fresh client: %#v, %v", got, err)
	}
}

const (
	commonProto = `syntax = "proto3";
package acme.common;
message Money { string currency = 1; int64 units = 2; }
`
	orderProto = `syntax = "proto3";
package acme;
import "acme/common.proto";
message Order {
  string id = 1;
  acme.common.Money total = 2;
  repeated Line lines = 3;
  map<string, string> labels = 4;
  message Line { string sku = 1; int32 qty = 2; }
  enum Status { NEW = 0; PAID = 1; }
  Status status = 5;
  bytes blob = 6;
}
message Refund { string order_id = 1; }
`
)

func TestProtobufRoundTrip(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	mustRegister(t, c, "common", Text{Type: schema.Protobuf, Schema: commonProto})
	order := mustRegister(t, c, "orders-value", Text{Type: schema.Protobuf, Schema: orderProto,
		References: []schema.Reference{{Name: "acme/common.proto", Subject: "common", Version: 1}}})
	if order.Type != schema.Protobuf {
		t.Fatalf("type %s", order.Type)
	}

	value := jsonValue(t, `{"id":"o1","total":{"currency":"EUR","units":12},"lines":[{"sku":"a","qty":2}],
		"labels":{"k":"v"},"status":"PAID","blob":"AAE="}`)
	b, err := Encode(order, value)
	if err != nil {
		t.Fatal(err)
	}
	if b[wire.HeaderSize] != 0 {
		t.Fatalf("first message's indexes = %x, want 00", b[wire.HeaderSize])
	}
	got, _, err := Decode(testContext(t), c, b)
	if err != nil {
		t.Fatal(err)
	}
	// protojson's rendering: int64 as a string, bytes as base64.
	want := jsonValue(t, `{"id":"o1","total":{"currency":"EUR","units":"12"},"lines":[{"sku":"a","qty":2}],
		"labels":{"k":"v"},"status":"PAID","blob":"AAE="}`)
	if !reflect.DeepEqual(normalizeNumbers(got), want) {
		t.Fatalf("decoded %#v\nwant %#v", got, want)
	}

	// The second top-level message and a nested one: their indexes.
	for _, tc := range []struct {
		name, value string
		indexes     []byte
	}{
		{"acme.Refund", `{"orderId":"o1"}`, []byte{2, 2}},
		{"acme.Order.Line", `{"sku":"x","qty":1}`, []byte{4, 0, 0}},
	} {
		b, err := EncodeMessage(order, tc.name, jsonValue(t, tc.value))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := b[wire.HeaderSize : wire.HeaderSize+len(tc.indexes)]; string(got) != string(tc.indexes) {
			t.Errorf("%s: indexes %x, want %x", tc.name, got, tc.indexes)
		}
		got, _, err := Decode(testContext(t), c, b)
		if err != nil || !reflect.DeepEqual(normalizeNumbers(got), jsonValue(t, tc.value)) {
			t.Errorf("%s: decoded %#v, %v", tc.name, got, err)
		}
	}
	if _, err := EncodeMessage(order, "acme.Nope", map[string]any{}); err == nil {
		t.Error("unknown message encoded")
	}
	if _, err := Encode(order, map[string]any{"nope": 1}); !errors.Is(err, ErrEncode) {
		t.Errorf("unknown field: %v", err)
	}
}

// normalizeNumbers turns json.Number into float64, as jsonValue has them.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
	}
	return v
}

func TestJSONSchemaRoundTrip(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	mustRegister(t, c, "address-json", Text{Type: schema.JSON, Schema: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`})
	s := mustRegister(t, c, "people-value", Text{Type: schema.JSON,
		Schema:     `{"title":"Person","type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"home":{"$ref":"address.json"}},"required":["name"]}`,
		References: []schema.Reference{{Name: "address.json", Subject: "address-json", Version: 1}}})
	got := roundTrip(t, c, s, jsonValue(t, `{"name":"Ann","age":41,"home":{"city":"Oslo"}}`))
	want := map[string]any{"name": "Ann", "age": json.Number("41"), "home": map[string]any{"city": "Oslo"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %#v", got)
	}
	// Go values other than encoding/json's are marshalled first.
	if got := roundTrip(t, c, s, map[string]any{"name": "Bo", "age": 7}); !reflect.DeepEqual(got, map[string]any{"name": "Bo", "age": json.Number("7")}) {
		t.Fatalf("decoded %#v", got)
	}
	for _, bad := range []string{`{"age":1}`, `{"name":"x","age":-1}`, `{"name":"x","home":{}}`, `"str"`} {
		if _, err := Encode(s, jsonValue(t, bad)); !errors.Is(err, ErrEncode) {
			t.Errorf("encode %s: %v, want ErrEncode", bad, err)
		}
	}
	if name, err := RecordNameStrategy(s); err != nil || name != "Person" {
		t.Errorf("record name = %q, %v", name, err)
	}
}
