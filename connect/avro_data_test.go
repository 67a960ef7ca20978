package connect

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	avroformat "github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// parseAvro parses schema text as the registry does (registry/avro, into
// a cache of its own); it gives the parsed form and hamba's schema.
func parseAvro(text string) (schema.Parsed, avro.Schema, error) {
	p, err := avroformat.New().Parse(text, nil)
	if err != nil {
		return nil, nil, err
	}
	return p, avroformat.Schema(p), nil
}

func decimalSchema(scale string, extra ...string) *Schema {
	p := map[string]string{"scale": scale}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i]] = extra[i+1]
	}
	return &Schema{Type: TypeBytes, Name: LogicalDecimal, Version: 1, Parameters: p}
}

func structSchema(name string, fields ...Field) *Schema {
	for i := range fields {
		fields[i].Index = i
	}
	return &Schema{Type: TypeStruct, Name: name, Fields: fields}
}

func optional(s *Schema) *Schema { c := *s; c.Optional = true; return &c }

var (
	avroDate      = &Schema{Type: TypeInt32, Name: LogicalDate, Version: 1}
	avroTime      = &Schema{Type: TypeInt32, Name: LogicalTime, Version: 1}
	avroTimestamp = &Schema{Type: TypeInt64, Name: LogicalTimestamp, Version: 1}
	innerStruct   = structSchema("com.example.Inner", Field{Name: "n", Schema: &Schema{Type: TypeInt32}})
)

// TestAvroDataMapping pins the Avro schema Confluent's AvroData writes for
// each Connect schema, and checks that the Avro schema maps back to the
// same Connect schema and that a value survives Connect → Avro binary
// (hamba) → Connect.
func TestAvroDataMapping(t *testing.T) {
	tests := []struct {
		name   string
		schema *Schema
		value  any
		avro   string
	}{
		{"int8", &Schema{Type: TypeInt8}, int8(-5), `{"type":"int","connect.type":"int8"}`},
		{"int16", &Schema{Type: TypeInt16}, int16(300), `{"type":"int","connect.type":"int16"}`},
		{"int32", &Schema{Type: TypeInt32}, int32(-70000), `"int"`},
		{"int64", &Schema{Type: TypeInt64}, int64(1) << 40, `"long"`},
		{"float", &Schema{Type: TypeFloat32}, float32(1.5), `"float"`},
		{"double", &Schema{Type: TypeFloat64}, 2.25, `"double"`},
		{"boolean", &Schema{Type: TypeBoolean}, true, `"boolean"`},
		{"string", &Schema{Type: TypeString}, "héllo", `"string"`},
		{"bytes", &Schema{Type: TypeBytes}, []byte{0, 1, 255}, `"bytes"`},
		{"optional string", &Schema{Type: TypeString, Optional: true}, "x", `["null","string"]`},
		{"optional null", &Schema{Type: TypeString, Optional: true}, nil, `["null","string"]`},
		{"decimal", decimalSchema("2"), big.NewRat(-12345, 100),
			`{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`},
		{"decimal with precision", decimalSchema("3", paramDecimalPrecision, "10"), big.NewRat(1, 8),
			`{"type":"bytes","scale":3,"precision":10,"connect.version":1,"connect.parameters":{"scale":"3","connect.decimal.precision":"10"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`},
		{"date", avroDate, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
			`{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}`},
		{"date before 1970", avroDate, time.Date(1969, 7, 20, 0, 0, 0, 0, time.UTC),
			`{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}`},
		{"time", avroTime, time.Date(1970, 1, 1, 13, 45, 7, 123e6, time.UTC),
			`{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}`},
		{"timestamp", avroTimestamp, time.Date(2024, 11, 3, 5, 6, 7, 891e6, time.UTC),
			`{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}`},
		{"array", &Schema{Type: TypeArray, Items: &Schema{Type: TypeInt16}}, []any{int16(1), int16(-2)},
			`{"type":"array","items":{"type":"int","connect.type":"int16"}}`},
		{"array of optional", &Schema{Type: TypeArray, Items: &Schema{Type: TypeString, Optional: true}}, []any{"a", nil},
			`{"type":"array","items":["null","string"]}`},
		{"map string keys", &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeInt64}},
			map[string]any{"a": int64(1), "b": int64(2)}, `{"type":"map","values":"long"}`},
		{"map int keys", &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeInt32}, ValueType: &Schema{Type: TypeString, Optional: true}},
			map[any]any{int32(1): "one", int32(2): nil},
			`{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"int"},{"name":"value","type":["null","string"]}],"connect.internal.type":"MapEntry"}}`},
		{"unnamed struct", structSchema("", Field{Name: "a", Schema: &Schema{Type: TypeInt32}}),
			&Struct{Values: []any{int32(3)}},
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":"int"}]}`},
		{"struct", structSchema("com.example.Row",
			Field{Name: "id", Schema: &Schema{Type: TypeInt64}},
			Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
			Field{Name: "amount", Schema: optional(decimalSchema("2"))},
			Field{Name: "day", Schema: optional(avroDate)},
			Field{Name: "at", Schema: avroTimestamp},
			Field{Name: "inner", Schema: optional(innerStruct)},
			Field{Name: "tags", Schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeString}}},
			Field{Name: "more", Schema: optional(innerStruct)},
			Field{Name: "unnamed", Schema: structSchema("", Field{Name: "x", Schema: &Schema{Type: TypeBoolean}})},
			Field{Name: "withDefault", Schema: &Schema{Type: TypeInt32, Optional: true, Default: int32(7)}},
		),
			&Struct{Values: []any{int64(1), nil, big.NewRat(5, 4), time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
				time.UnixMilli(1_700_000_000_123).UTC(), &Struct{Schema: innerStruct, Values: []any{int32(9)}},
				[]any{"a", "b"}, nil, &Struct{Values: []any{true}}, int32(8)}},
			`{"type":"record","name":"Row","namespace":"com.example","fields":[` +
				`{"name":"id","type":"long"},` +
				`{"name":"name","type":["null","string"],"default":null},` +
				`{"name":"amount","type":["null",{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},` +
				`{"name":"day","type":["null",{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}],"default":null},` +
				`{"name":"at","type":{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}},` +
				`{"name":"inner","type":["null",{"type":"record","name":"Inner","namespace":"com.example","fields":[{"name":"n","type":"int"}],"connect.name":"com.example.Inner"}],"default":null},` +
				`{"name":"tags","type":{"type":"array","items":"string"}},` +
				`{"name":"more","type":["null","com.example.Inner"],"default":null},` +
				`{"name":"unnamed","type":{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"x","type":"boolean"}]}},` +
				`{"name":"withDefault","type":["int","null"],"default":7}` +
				`],"connect.name":"com.example.Row"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := avroSchemaText(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			if text != tc.avro {
				t.Fatalf("Avro schema\n got: %s\nwant: %s", text, tc.avro)
			}
			reg, parsed, err := parseAvro(text)
			if err != nil {
				t.Fatalf("hamba cannot parse %s: %v", text, err)
			}
			back, err := connectSchemaFromAvro(parsed)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.schema) {
				t.Errorf("Connect schema back from Avro\n got: %s\nwant: %s", dumpSchema(back), dumpSchema(tc.schema))
			}

			native, err := avroValue(tc.schema, parsed, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			bin, err := avro.Marshal(parsed, native)
			if err != nil {
				t.Fatalf("hamba cannot encode %#v: %v", native, err)
			}
			decoded, err := decodeAvroPayload(reg, bin)
			if err != nil {
				t.Fatal(err)
			}
			got, err := connectValueFromAvro(back, parsed, decoded)
			if err != nil {
				t.Fatal(err)
			}
			if !sameConnectValue(got, tc.value) {
				t.Errorf("value back from Avro\n got: %#v\nwant: %#v", got, tc.value)
			}
		})
	}
}

// sameConnectValue compares Connect values, *big.Rat by value and structs
// by their values.
func sameConnectValue(a, b any) bool {
	switch x := a.(type) {
	case *big.Rat:
		y, ok := b.(*big.Rat)
		return ok && x.Cmp(y) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *Struct:
		y, ok := b.(*Struct)
		if !ok || len(x.Values) != len(y.Values) {
			return false
		}
		for i := range x.Values {
			if !sameConnectValue(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameConnectValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func dumpSchema(s *Schema) string {
	sj, err := encodeSchema(s, false)
	if err != nil {
		return err.Error()
	}
	out, err := json.Marshal(sj)
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// TestAvroDataForeignSchemas: Avro schemas another producer wrote (no
// connect.* properties) map to sensible Connect schemas and values.
func TestAvroDataForeignSchemas(t *testing.T) {
	text := `{"type":"record","name":"Order","namespace":"shop","doc":"an order","fields":[
		{"name":"id","type":"long"},
		{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
		{"name":"hash","type":{"type":"fixed","name":"Hash","size":2}},
		{"name":"price","type":{"type":"fixed","name":"Price","size":4,"logicalType":"decimal","precision":9,"scale":2}},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-micros"}},
		{"name":"note","type":["null","string"],"default":null},
		{"name":"either","type":["int","string"]},
		{"name":"qty","type":"int","default":1}
	]}`
	reg, parsed, err := parseAvro(text)
	if err != nil {
		t.Fatal(err)
	}
	s, err := connectSchemaFromAvro(parsed)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","optional":false,"name":"shop.Order","doc":"an order","fields":[` +
		`{"field":"id","type":"int64","optional":false},` +
		`{"field":"status","type":"string","optional":false,"name":"shop.Status"},` +
		`{"field":"hash","type":"bytes","optional":false,"name":"shop.Hash"},` +
		`{"field":"price","type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"connect.decimal.precision":"9","scale":"2"}},` +
		`{"field":"at","type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},` +
		`{"field":"note","type":"string","optional":true},` +
		`{"field":"either","type":"struct","optional":false,"name":"io.confluent.connect.avro.Union","fields":[{"field":"int","type":"int32","optional":true},{"field":"string","type":"string","optional":true}]},` +
		`{"field":"qty","type":"int32","optional":false,"default":1}]}`
	if got := dumpSchema(s); got != want {
		t.Fatalf("Connect schema\n got: %s\nwant: %s", got, want)
	}
	value := map[string]any{"id": int64(7), "status": "PAID", "hash": [2]byte{1, 2},
		"price": big.NewRat(1999, 100), "at": time.UnixMicro(1_700_000_000_123_456).UTC(),
		"note": nil, "either": map[string]any{"string": "s"}, "qty": 3}
	bin, err := avro.Marshal(parsed, value)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := decodeAvroPayload(reg, bin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := connectValueFromAvro(s, parsed, decoded)
	if err != nil {
		t.Fatal(err)
	}
	either := s.Fields[6].Schema
	wantValue := &Struct{Schema: s, Values: []any{int64(7), "PAID", []byte{1, 2}, big.NewRat(1999, 100),
		time.UnixMilli(1_700_000_000_123).UTC(), nil, &Struct{Schema: either, Values: []any{nil, "s"}}, int32(3)}}
	if !sameConnectValue(got, wantValue) {
		t.Fatalf("value\n got: %#v\nwant: %#v", got, wantValue)
	}
	// The union struct writes back as its branch.
	back, err := avroValue(either, parsed.(*avro.RecordSchema).Fields()[6].Type(), got.(*Struct).Values[6])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, map[string]any{"string": "s"}) {
		t.Fatalf("union back to Avro: %#v", back)
	}
}

// TestAvroDataErrors: values that do not fit their schema, schemas Avro
// cannot hold.
func TestAvroDataErrors(t *testing.T) {
	row := structSchema("r", Field{Name: "a", Schema: &Schema{Type: TypeInt8}})
	cases := []struct {
		name   string
		schema *Schema
		value  any
		want   string
	}{
		{"int8 overflow", &Schema{Type: TypeInt8}, 300, "out of int8 range"},
		{"required null", row, &Struct{Schema: row, Values: []any{nil}}, "field a: connect: conversion error: null for a required int8"},
		{"wrong type", &Schema{Type: TypeString}, 5, "string needs a string"},
		{"decimal text", decimalSchema("2"), "abc", "not a number"},
	}
	for _, tc := range cases {
		_, err := avroValue(tc.schema, nil, tc.value)
		if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConversion with %q", tc.name, err, tc.want)
		}
	}
	twoDifferent := structSchema("r",
		Field{Name: "a", Schema: structSchema("x.Same", Field{Name: "p", Schema: &Schema{Type: TypeInt32}})},
		Field{Name: "b", Schema: structSchema("x.Same", Field{Name: "q", Schema: &Schema{Type: TypeInt32}})})
	if _, err := avroSchemaText(twoDifferent); !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), `two different struct schemas named "x.Same"`) {
		t.Errorf("two structs of one name: %v", err)
	}
	if _, err := avroSchemaText(nil); !errors.Is(err, ErrConversion) {
		t.Errorf("no schema: %v", err)
	}
}

// FuzzAvroToConnect: Avro payloads from a topic never panic ToConnect, and
// what it accepts it writes back; the writer's schema (id 1) is in the
// converter's cache, so no registry is asked.
func FuzzAvroToConnect(f *testing.F) {
	schema := structSchema("f.Row",
		Field{Name: "id", Schema: &Schema{Type: TypeInt8}},
		Field{Name: "amount", Schema: optional(decimalSchema("2"))},
		Field{Name: "day", Schema: optional(avroDate)},
		Field{Name: "tags", Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeInt32}, ValueType: &Schema{Type: TypeString}}},
		Field{Name: "either", Schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeString}}})
	text, err := avroSchemaText(schema)
	if err != nil {
		f.Fatal(err)
	}
	reg, parsed, err := parseAvro(text)
	if err != nil {
		f.Fatal(err)
	}
	back, err := connectSchemaFromAvro(parsed)
	if err != nil {
		f.Fatal(err)
	}
	c := &AvroConverter{}
	c.read.entries = map[int]*avroReadSchema{1: {parsed: reg, hamba: parsed, connect: back}}
	f.Add([]byte{2, 2, 4, 7, 207, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 255, 15})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, payload []byte) {
		data := append(wire.AppendHeader(nil, 1), payload...) // the id in the cache
		if s, v, err := c.ToConnect("t", data); err == nil {
			if _, err := avroValue(s, parsed, v); err != nil {
				t.Errorf("decoded %x to %#v but cannot write it back: %v", payload, v, err)
			}
		} else if !errors.Is(err, ErrConversion) {
			t.Errorf("%x: %v does not wrap ErrConversion", payload, err)
		}
	})
}
