package connect

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/registry/jsonschema"
)

// TestJSONSchemaDataMapping pins the JSON Schema Confluent's
// JsonSchemaData writes for each Connect schema, checks that the
// registry's JSON Schema package parses it and maps back to the same
// Connect schema, and that a value validates and survives Connect → JSON
// → Connect.
func TestJSONSchemaDataMapping(t *testing.T) {
	intMap := &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeInt32}, ValueType: &Schema{Type: TypeString}}
	outer := structSchema("com.example.Outer",
		Field{Name: "a", Schema: &Schema{Type: TypeInt32}},
		Field{Name: "inner", Schema: optional(innerStruct)})
	tests := []struct {
		name   string
		schema *Schema
		value  any
		json   string
	}{
		{"int8", &Schema{Type: TypeInt8}, int8(-5), `{"type":"integer","connect.type":"int8"}`},
		{"int16", &Schema{Type: TypeInt16}, int16(300), `{"type":"integer","connect.type":"int16"}`},
		{"int32", &Schema{Type: TypeInt32}, int32(-70000), `{"type":"integer","connect.type":"int32"}`},
		{"int64", &Schema{Type: TypeInt64}, int64(1) << 60, `{"type":"integer","connect.type":"int64"}`},
		{"float", &Schema{Type: TypeFloat32}, float32(1.5), `{"type":"number","connect.type":"float32"}`},
		{"double", &Schema{Type: TypeFloat64}, 2.25, `{"type":"number","connect.type":"float64"}`},
		{"boolean", &Schema{Type: TypeBoolean}, true, `{"type":"boolean"}`},
		{"string", &Schema{Type: TypeString}, "héllo", `{"type":"string"}`},
		{"bytes", &Schema{Type: TypeBytes}, []byte{0, 1, 255}, `{"type":"string","connect.type":"bytes"}`},
		{"optional string", &Schema{Type: TypeString, Optional: true}, "x", `{"oneOf":[{"type":"null"},{"type":"string"}]}`},
		{"optional null", &Schema{Type: TypeInt64, Optional: true}, nil, `{"oneOf":[{"type":"null"},{"type":"integer","connect.type":"int64"}]}`},
		{"doc and default", &Schema{Type: TypeString, Doc: "d", Default: "x"}, "y", `{"type":"string","description":"d","default":"x"}`},
		{"decimal", decimalSchema("2"), big.NewRat(-12345, 100),
			`{"type":"string","connect.type":"bytes","title":"org.apache.kafka.connect.data.Decimal","connect.version":1,"connect.parameters":{"scale":"2"}}`},
		{"date", avroDate, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
			`{"type":"integer","connect.type":"int32","title":"org.apache.kafka.connect.data.Date","connect.version":1}`},
		{"time", avroTime, time.UnixMilli(45_296_789).UTC(),
			`{"type":"integer","connect.type":"int32","title":"org.apache.kafka.connect.data.Time","connect.version":1}`},
		{"timestamp", avroTimestamp, time.UnixMilli(1_730_610_000_123).UTC(),
			`{"type":"integer","connect.type":"int64","title":"org.apache.kafka.connect.data.Timestamp","connect.version":1}`},
		{"array", &Schema{Type: TypeArray, Items: &Schema{Type: TypeInt32}}, []any{int32(1), int32(2)},
			`{"type":"array","items":{"type":"integer","connect.type":"int32"}}`},
		{"map, string keys", &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeInt64}},
			map[string]any{"a": int64(1), "b": int64(2)},
			`{"type":"object","additionalProperties":{"type":"integer","connect.type":"int64"},"connect.type":"map"}`},
		{"map, int keys", intMap, map[any]any{int32(1): "one", int32(-2): "minus two"},
			`{"type":"array","items":{"type":"object","properties":{"key":{"type":"integer","connect.type":"int32","connect.index":0},"value":{"type":"string","connect.index":1}}},"connect.type":"map"}`},
		{"nested struct", outer, &Struct{Schema: outer, Values: []any{int32(1), &Struct{Schema: innerStruct, Values: []any{int32(2)}}}},
			`{"type":"object","properties":{"a":{"type":"integer","connect.type":"int32","connect.index":0},"inner":{"oneOf":[{"type":"null"},{"type":"object","properties":{"n":{"type":"integer","connect.type":"int32","connect.index":0}},"title":"com.example.Inner"}],"connect.index":1}},"title":"com.example.Outer"}`},
		{"nested struct, null", outer, &Struct{Schema: outer, Values: []any{int32(1), nil}}, ""},
		{"row", rowV1, rowV1Value(7), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := jsonSchemaText(tc.schema, jsonSchemaOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.json != "" && text != tc.json {
				t.Errorf("JSON schema\n got: %s\nwant: %s", text, tc.json)
			}
			parsed, err := jsonschema.New().Parse(text, nil)
			if err != nil {
				t.Fatalf("registry refuses %s: %v", text, err)
			}
			back, err := connectSchemaFromJSON(parsed.Canonical())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.schema) {
				t.Errorf("schema back\n got: %s\nwant: %s", dumpSchema(back), dumpSchema(tc.schema))
			}
			doc, err := jsonSchemaValue(tc.schema, tc.value, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := json.Marshal(doc)
			var raw any
			if err := unmarshalNumber(payload, &raw); err != nil {
				t.Fatal(err)
			}
			if err := jsonschema.Validate(parsed, raw); err != nil {
				t.Fatalf("%s does not validate against %s: %v", payload, text, err)
			}
			got, err := connectValueFromJSONSchema(back, raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.value
			if want == nil && tc.schema.Default != nil {
				want = tc.schema.Default
			}
			if !sameConnectValue(got, want) {
				t.Errorf("value back (%s)\n got: %#v\nwant: %#v", payload, got, want)
			}
		})
	}
}

// TestJSONSchemaDataValues pins the JSON of logical types and maps.
func TestJSONSchemaDataValues(t *testing.T) {
	s := structSchema("v",
		Field{Name: "d", Schema: decimalSchema("2")},
		Field{Name: "day", Schema: avroDate},
		Field{Name: "at", Schema: avroTimestamp},
		Field{Name: "b", Schema: &Schema{Type: TypeBytes}},
		Field{Name: "m", Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeInt8}, ValueType: &Schema{Type: TypeBoolean}}})
	v := &Struct{Schema: s, Values: []any{big.NewRat(-12345, 100), time.Date(1970, 1, 3, 0, 0, 0, 0, time.UTC),
		time.UnixMilli(1500).UTC(), []byte("hi"), map[any]any{int8(2): true}}}
	doc, err := jsonSchemaValue(s, v, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc)
	want := `{"d":"z8c=","day":2,"at":1500,"b":"aGk=","m":[{"key":2,"value":true}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	numeric, _ := jsonSchemaValue(s, v, true, 0)
	if got, _ := json.Marshal(numeric); !strings.HasPrefix(string(got), `{"d":-123.45,`) {
		t.Errorf("decimal.format=NUMERIC: %s", got)
	}
	if text, _ := jsonSchemaText(s, jsonSchemaOptions{decimalNumeric: true}); !strings.Contains(text, `"d":{"type":"number","connect.type":"bytes"`) {
		t.Errorf("decimal.format=NUMERIC schema: %s", text)
	}
}

// TestJSONSchemaDataForeignSchemas: schemas another producer wrote, without
// connect.* annotations, map sensibly; what has no Connect form is an
// error.
func TestJSONSchemaDataForeignSchemas(t *testing.T) {
	text := `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Order","type":"object",
		"properties":{
			"id":{"type":"integer"},
			"price":{"type":"number","description":"in euros"},
			"status":{"enum":["NEW","PAID"]},
			"note":{"type":["string","null"]},
			"tags":{"type":"array","items":{"type":"string"}},
			"attrs":{"type":"object","additionalProperties":{"type":"boolean"}},
			"customer":{"$ref":"#/definitions/Customer"}
		},
		"required":["id","status","tags","attrs"],
		"definitions":{"Customer":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	s, err := connectSchemaFromJSON(text)
	if err != nil {
		t.Fatal(err)
	}
	customer := &Schema{Type: TypeStruct, Optional: true, Fields: []Field{{Name: "name", Schema: &Schema{Type: TypeString}}}}
	want := &Schema{Type: TypeStruct, Name: "Order", Fields: []Field{
		{Name: "id", Index: 0, Schema: &Schema{Type: TypeInt64}},
		{Name: "price", Index: 1, Schema: &Schema{Type: TypeFloat64, Optional: true, Doc: "in euros"}},
		{Name: "status", Index: 2, Schema: &Schema{Type: TypeString}},
		{Name: "note", Index: 3, Schema: &Schema{Type: TypeString, Optional: true}},
		{Name: "tags", Index: 4, Schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeString}}},
		{Name: "attrs", Index: 5, Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeBoolean}}},
		{Name: "customer", Index: 6, Schema: customer},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got  %s\nwant %s", dumpSchema(s), dumpSchema(want))
	}
	var raw any
	_ = unmarshalNumber([]byte(`{"id":7,"status":"NEW","tags":["a"],"attrs":{"x":true},"customer":{"name":"Ann"},"extra":1}`), &raw)
	v, err := connectValueFromJSONSchema(s, raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantValue := &Struct{Values: []any{int64(7), nil, "NEW", nil, []any{"a"}, map[string]any{"x": true}, &Struct{Values: []any{"Ann"}}}}
	if !sameConnectValue(v, wantValue) {
		t.Errorf("value %#v", v)
	}

	for _, bad := range []string{
		`{}`, `true`, `{"type":["string","integer"]}`, `{"allOf":[{"type":"string"}]}`,
		`{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{"type":"array"}`,
		`{"$ref":"#/definitions/a","definitions":{"a":{"type":"object","properties":{"x":{"$ref":"#/definitions/a"}}}}}`,
		`{"$ref":"other.json"}`, `{"type":"string","title":"org.apache.kafka.connect.data.Decimal"}`,
		strings.Repeat(`{"type":"array","items":`, 300) + `{"type":"string"}` + strings.Repeat(`}`, 300),
	} {
		if _, err := connectSchemaFromJSON(bad); !errors.Is(err, ErrConversion) {
			t.Errorf("%.80s: %v, want ErrConversion", bad, err)
		}
	}
}
