package connect

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustConverter(t *testing.T, class string, props map[string]string) Converter {
	t.Helper()
	c, err := NewConverter(class, props)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var personSchema = &Schema{Type: TypeStruct, Name: "person", Fields: []Field{
	{Name: "id", Index: 0, Schema: &Schema{Type: TypeInt32}},
	{Name: "name", Index: 1, Schema: &Schema{Type: TypeString, Optional: true}},
	{Name: "score", Index: 2, Schema: &Schema{Type: TypeFloat64}},
	{Name: "active", Index: 3, Schema: &Schema{Type: TypeBoolean}},
}}

// TestJSONConverterWireFormat pins the exact bytes Kafka's JsonConverter
// writes, with and without the schema envelope.
func TestJSONConverterWireFormat(t *testing.T) {
	withSchemas := mustConverter(t, JSONConverterClass, nil)
	plain := mustConverter(t, "json", map[string]string{"schemas.enable": "false"})
	numeric := mustConverter(t, JSONConverterClass, map[string]string{"decimal.format": "NUMERIC"})
	decimal := &Schema{Type: TypeBytes, Name: LogicalDecimal, Version: 1, Parameters: map[string]string{"scale": "2"}}
	tests := []struct {
		name   string
		conv   Converter
		schema *Schema
		value  any
		want   string
	}{
		{"string", withSchemas, &Schema{Type: TypeString}, "hi",
			`{"schema":{"type":"string","optional":false},"payload":"hi"}`},
		{"string plain", plain, &Schema{Type: TypeString}, "hi", `"hi"`},
		{"int64", withSchemas, &Schema{Type: TypeInt64, Optional: true}, int64(-7),
			`{"schema":{"type":"int64","optional":true},"payload":-7}`},
		{"null optional", withSchemas, &Schema{Type: TypeInt32, Optional: true}, nil,
			`{"schema":{"type":"int32","optional":true},"payload":null}`},
		{"struct", withSchemas, personSchema, &Struct{Schema: personSchema, Values: []any{int32(1), "ann", 2.5, true}},
			`{"schema":{"type":"struct","optional":false,"name":"person","fields":[{"field":"id","type":"int32","optional":false},{"field":"name","type":"string","optional":true},{"field":"score","type":"double","optional":false},{"field":"active","type":"boolean","optional":false}]},"payload":{"id":1,"name":"ann","score":2.5,"active":true}}`},
		{"struct plain", plain, personSchema, &Struct{Schema: personSchema, Values: []any{int32(1), nil, 2.5, false}},
			`{"id":1,"name":null,"score":2.5,"active":false}`},
		{"decimal base64", withSchemas, decimal, big.NewRat(-12345, 100),
			`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"z8c="}`},
		{"decimal numeric", numeric, decimal, "123.45",
			`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":123.45}`},
		{"bytes", plain, &Schema{Type: TypeBytes}, []byte{0, 1, 2}, `"AAEC"`},
		{"array", plain, &Schema{Type: TypeArray, Items: &Schema{Type: TypeInt16}}, []any{int16(1), int16(2)}, `[1,2]`},
		{"map string keys", plain, &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeInt32}},
			map[string]any{"b": 2, "a": 1}, `{"a":1,"b":2}`},
		{"timestamp", plain, &Schema{Type: TypeInt64, Name: LogicalTimestamp}, time.UnixMilli(1700000000123), `1700000000123`},
		{"date", plain, &Schema{Type: TypeInt32, Name: LogicalDate}, time.Date(1970, 1, 3, 0, 0, 0, 0, time.UTC), `2`},
		{"schemaless map", plain, nil, map[string]any{"x": 1, "y": []any{"a", true}}, `{"x":1,"y":["a",true]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.conv.FromConnect("t", tt.schema, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestJSONConverterRoundTrip writes and reads back every schema type.
func TestJSONConverterRoundTrip(t *testing.T) {
	decimal := &Schema{Type: TypeBytes, Name: LogicalDecimal, Parameters: map[string]string{"scale": "3"}}
	nested := &Schema{Type: TypeStruct, Name: "outer", Fields: []Field{
		{Name: "p", Index: 0, Schema: personSchema},
		{Name: "tags", Index: 1, Schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeString}, Optional: true}},
		{Name: "amount", Index: 2, Schema: decimal},
		{Name: "at", Index: 3, Schema: &Schema{Type: TypeInt64, Name: LogicalTimestamp}},
		{Name: "counts", Index: 4, Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeInt32}, ValueType: &Schema{Type: TypeInt64}}},
		{Name: "small", Index: 5, Schema: &Schema{Type: TypeInt8}},
		{Name: "f", Index: 6, Schema: &Schema{Type: TypeFloat32}},
		{Name: "raw", Index: 7, Schema: &Schema{Type: TypeBytes}},
	}}
	value := &Struct{Schema: nested, Values: []any{
		&Struct{Schema: personSchema, Values: []any{int32(7), "bo", 1.25, true}},
		[]any{"x", "y"},
		big.NewRat(-1000001, 1000),
		time.UnixMilli(1234567890123).UTC(),
		map[any]any{int32(1): int64(10)},
		int8(-3),
		float32(0.5),
		[]byte("raw"),
	}}
	for _, format := range []string{"BASE64", "NUMERIC"} {
		t.Run(format, func(t *testing.T) {
			c := mustConverter(t, JSONConverterClass, map[string]string{"decimal.format": format})
			data, err := c.FromConnect("t", nested, value)
			if err != nil {
				t.Fatal(err)
			}
			schema, got, err := c.ToConnect("t", data)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			st := got.(*Struct)
			if !reflect.DeepEqual(schemaShape(schema), schemaShape(nested)) {
				t.Fatalf("schema changed:\n%+v\n%+v", schemaShape(schema), schemaShape(nested))
			}
			if amount := st.Values[2].(*big.Rat); amount.Cmp(big.NewRat(-1000001, 1000)) != 0 {
				t.Fatalf("amount %v", amount)
			}
			if !st.Values[3].(time.Time).Equal(time.UnixMilli(1234567890123)) {
				t.Fatalf("at %v", st.Values[3])
			}
			inner := st.Values[0].(*Struct)
			if !reflect.DeepEqual(inner.Values, []any{int32(7), "bo", 1.25, true}) {
				t.Fatalf("inner %v", inner.Values)
			}
			if !reflect.DeepEqual(st.Values[4], map[any]any{int32(1): int64(10)}) || st.Values[5] != int8(-3) ||
				st.Values[6] != float32(0.5) || string(st.Values[7].([]byte)) != "raw" {
				t.Fatalf("values %v", st.Values)
			}
		})
	}
}

// schemaShape drops Field.Index pointers for comparison.
func schemaShape(s *Schema) any {
	if s == nil {
		return nil
	}
	out := map[string]any{"type": s.Type, "optional": s.Optional, "name": s.Name, "params": s.Parameters}
	var fields []any
	for _, f := range s.Fields {
		fields = append(fields, []any{f.Name, f.Index, schemaShape(f.Schema)})
	}
	out["fields"], out["items"], out["keys"], out["values"] = fields, schemaShape(s.Items), schemaShape(s.KeyType), schemaShape(s.ValueType)
	return out
}

func TestTwosComplementMatchesJava(t *testing.T) {
	// BigInteger.valueOf(n).toByteArray() in Java.
	tests := map[int64][]byte{0: {0}, 1: {1}, 127: {0x7f}, 128: {0, 0x80}, 255: {0, 0xff}, 256: {1, 0},
		-1: {0xff}, -128: {0x80}, -129: {0xff, 0x7f}, -256: {0xff, 0}, -12345: {0xcf, 0xc7}}
	for n, want := range tests {
		got := twosComplement(big.NewInt(n))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d: got % x, want % x", n, got, want)
		}
		if back := fromTwosComplement(got); back.Int64() != n {
			t.Errorf("%d: read back %v", n, back)
		}
	}
}

func TestJSONConverterRejectsBadInput(t *testing.T) {
	c := mustConverter(t, JSONConverterClass, nil)
	for _, in := range []string{`not json`, `{"payload":1}`, `{"schema":{"type":"int8"},"payload":1000}`,
		`{"schema":{"type":"nope"},"payload":1}`, `{"schema":{"type":"string"},"payload":null}`,
		`{"schema":{"type":"array"},"payload":[]}`, `{"schema":{"type":"bytes"},"payload":"%%%"}`, `{"schema":{"type":"int32"},"payload":1,"x":2}`} {
		if _, _, err := c.ToConnect("t", []byte(in)); !errors.Is(err, ErrConversion) {
			t.Errorf("%s: err %v, want ErrConversion", in, err)
		}
	}
	if _, err := c.FromConnect("t", &Schema{Type: TypeInt32}, "x"); !errors.Is(err, ErrConversion) {
		t.Errorf("string for int32: %v", err)
	}
	if _, err := c.FromConnect("t", &Schema{Type: TypeString}, nil); !errors.Is(err, ErrConversion) {
		t.Errorf("null for required: %v", err)
	}
	if _, err := NewConverter("com.example.Avro", nil); err == nil || !strings.Contains(err.Error(), "unknown converter") {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := NewConverter("json", map[string]string{"schemas.enable": "maybe"}); err == nil {
		t.Error("schemas.enable=maybe accepted")
	}
}

func TestStringAndBytesConverters(t *testing.T) {
	s := mustConverter(t, StringConverterClass, nil)
	b := mustConverter(t, ByteArrayConverterClass, nil)
	if got, _ := s.FromConnect("t", nil, int64(42)); string(got) != "42" {
		t.Errorf("string of 42: %q", got)
	}
	if schema, v, _ := s.ToConnect("t", []byte("hey")); v != "hey" || schema.Type != TypeString {
		t.Errorf("string read: %v %v", schema, v)
	}
	if _, v, _ := s.ToConnect("t", nil); v != nil {
		t.Errorf("null read: %v", v)
	}
	if got, _ := b.FromConnect("t", nil, []byte{9}); !reflect.DeepEqual(got, []byte{9}) {
		t.Errorf("bytes: %v", got)
	}
	if _, err := b.FromConnect("t", nil, "str"); !errors.Is(err, ErrConversion) {
		t.Errorf("bytes of a string: %v", err)
	}
	// Schemaless JSON reads numbers as int64 or float64, as Kafka does.
	plain := mustConverter(t, "json", map[string]string{"schemas.enable": "false"})
	_, v, err := plain.ToConnect("t", []byte(`{"a":1,"b":1.5,"c":[true]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(1), "b": 1.5, "c": []any{true}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v", v)
	}
	raw, _ := json.Marshal(v)
	if string(raw) != `{"a":1,"b":1.5,"c":[true]}` {
		t.Errorf("re-encoded %s", raw)
	}
}
