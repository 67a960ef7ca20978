package connect

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
)

func converterOf(t *testing.T, class string, isKey bool, props ...string) Converter {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(props); i += 2 {
		m[props[i]] = props[i+1]
	}
	c, err := NewConverterFor(class, m, isKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestJSONSchemaConverterRoundTrip: a value and a key through a real
// registry; subjects, framing, schema type JSON; a fresh converter reads
// both back; tombstones; foreign bytes and unknown ids fail.
func TestJSONSchemaConverterRoundTrip(t *testing.T) {
	url := startTestRegistry(t)
	value := converterOf(t, "json_schema", false, "schema.registry.url", url)
	key := converterOf(t, JSONSchemaConverterClass, true, "schema.registry.url", url)
	keySchema := structSchema("shop.orders.Key", Field{Name: "id", Schema: &Schema{Type: TypeInt64}})
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
	if err != nil || latest.ID != int(id) || latest.Type != schema.JSON {
		t.Fatalf("orders-value latest: %+v, %v; the record's id %d", latest, err, id)
	}
	if !json.Valid(payload) || !strings.Contains(string(payload), `"amount":"z8c="`) {
		t.Errorf("payload %s", payload)
	}
	reader := converterOf(t, "json_schema", false, "schema.registry.url", url)
	s, v, err := reader.ToConnect("orders", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, rowV1) || !sameConnectValue(v, rowV1Value(7)) {
		t.Errorf("read back %s %#v", dumpSchema(s), v)
	}
	if ks, kv, err := reader.ToConnect("orders", kb); err != nil || !reflect.DeepEqual(ks, keySchema) || !sameConnectValue(kv, &Struct{Values: []any{int64(7)}}) {
		t.Errorf("key: %s %#v %v", dumpSchema(ks), kv, err)
	}
	if out, err := value.FromConnect("other", rowV1, nil); out != nil || err != nil {
		t.Errorf("tombstone: %x, %v", out, err)
	}
	if s, v, err := reader.ToConnect("orders", nil); s != nil || v != nil || err != nil {
		t.Errorf("nil record: %v %v %v", s, v, err)
	}
	for _, bad := range [][]byte{[]byte(`{"id":1}`), {0, 0}, wire.AppendHeader(nil, 999), append(wire.AppendHeader(nil, int32(id)), "{"...)} {
		if _, _, err := reader.ToConnect("orders", bad); !errors.Is(err, ErrConversion) {
			t.Errorf("%x: %v, want ErrConversion", bad, err)
		}
	}
	if _, err := value.FromConnect("orders", nil, map[string]any{"a": 1}); !errors.Is(err, ErrConversion) {
		t.Errorf("schemaless value: %v", err)
	}
	// An Avro id is refused by the JSON Schema converter.
	ab, err := converterOf(t, "avro", false, "schema.registry.url", url).FromConnect("avro-topic", rowV1, rowV1Value(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reader.ToConnect("avro-topic", ab); err == nil || !strings.Contains(err.Error(), "is AVRO, not JSON") {
		t.Errorf("Avro record: %v", err)
	}
}

// TestJSONSchemaConverterEvolution: with object.additional.properties=false
// a new optional field registers version 2 under BACKWARD, and both
// versions read back; with the default open content model the registry
// refuses it, as Confluent's does.
func TestJSONSchemaConverterEvolution(t *testing.T) {
	url := startTestRegistry(t)
	open := converterOf(t, "json_schema", false, "schema.registry.url", url)
	if _, err := open.FromConnect("open", rowV1, rowV1Value(1)); err != nil {
		t.Fatal(err)
	}
	_, err := open.FromConnect("open", rowV2, &Struct{Schema: rowV2, Values: append(append([]any{}, rowV1Value(2).Values...), "hello")})
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL") {
		t.Fatalf("a new field in an open content model: %v", err)
	}

	conv := converterOf(t, "json_schema", false, "schema.registry.url", url, "object.additional.properties", "false")
	b1, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if err != nil {
		t.Fatal(err)
	}
	v2 := &Struct{Schema: rowV2, Values: append(append([]any{}, rowV1Value(2).Values...), "hello")}
	b2, err := conv.FromConnect("orders", rowV2, v2)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := registryClient(t, url).Versions(testCtx(t), "orders-value", false)
	if err != nil || !reflect.DeepEqual(versions, []int{1, 2}) {
		t.Fatalf("versions %v, %v", versions, err)
	}
	for _, tc := range []struct {
		b      []byte
		schema *Schema
		value  *Struct
	}{{b1, rowV1, rowV1Value(1)}, {b2, rowV2, v2}} {
		s, v, err := conv.ToConnect("orders", tc.b)
		if err != nil || !reflect.DeepEqual(s, tc.schema) || !sameConnectValue(v, tc.value) {
			t.Errorf("read back: %s %#v %v", dumpSchema(s), v, err)
		}
	}
}

// TestJSONSchemaConverterNoAutoRegister: auto.register.schemas=false fails
// an unregistered schema, works once it is registered; with
// use.latest.version a value the latest version refuses fails validation.
func TestJSONSchemaConverterNoAutoRegister(t *testing.T) {
	url := startTestRegistry(t)
	client := registryClient(t, url)
	conv := converterOf(t, "json_schema", false, "schema.registry.url", url, "auto.register.schemas", "false")
	_, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "not registered under subject orders-value and auto.register.schemas=false") {
		t.Fatalf("unregistered schema: %v", err)
	}
	text, err := jsonSchemaText(rowV1, jsonSchemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := client.Register(testCtx(t), "orders-value", serde.Text{Type: schema.JSON, Schema: text}, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := wire.ParseHeader(b); int(id) != v1.ID {
		t.Fatalf("id %d, registered %d", id, v1.ID)
	}

	short := `{"type":"object","properties":{"name":{"type":"string","maxLength":3,"connect.index":0}}}`
	if _, err := client.Register(testCtx(t), "names-value", serde.Text{Type: schema.JSON, Schema: short}, false); err != nil {
		t.Fatal(err)
	}
	latest := converterOf(t, "json_schema", false, "schema.registry.url", url, "use.latest.version", "true",
		"latest.compatibility.strict", "false")
	names := structSchema("", Field{Name: "name", Schema: &Schema{Type: TypeString}})
	if _, err := latest.FromConnect("names", names, &Struct{Schema: names, Values: []any{"Ann"}}); err != nil {
		t.Fatal(err)
	}
	_, err = latest.FromConnect("names", names, &Struct{Schema: names, Values: []any{"Annabel"}})
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "does not match the JSON schema") {
		t.Fatalf("a value the latest version refuses: %v", err)
	}
}

// franzOrderJSON is the record as a JSON client without Connect sees it.
type franzOrderJSON struct {
	ID     int64             `json:"id"`
	Name   *string           `json:"name"`
	Amount string            `json:"amount"` // Decimal: base64 of the unscaled value
	At     int64             `json:"at"`
	Tags   map[string]string `json:"tags"`
}

// TestJSONSchemaConverterIndependentCodecs: franz-go's pkg/sr Serde with
// encoding/json decodes what JsonSchemaConverter writes and produces bytes
// ToConnect reads.
func TestJSONSchemaConverterIndependentCodecs(t *testing.T) {
	url := startTestRegistry(t)
	s := structSchema("shop.Order",
		Field{Name: "id", Schema: &Schema{Type: TypeInt64}},
		Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
		Field{Name: "amount", Schema: decimalSchema("2")},
		Field{Name: "at", Schema: avroTimestamp},
		Field{Name: "tags", Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeString}}})
	at := time.UnixMilli(1_730_610_000_123).UTC()
	conv := converterOf(t, "json_schema", false, "schema.registry.url", url)
	b, err := conv.FromConnect("orders", s, &Struct{Schema: s, Values: []any{int64(1) << 40, "Ann", big.NewRat(1999, 100), at, map[string]any{"k": "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := wire.ParseHeader(b)
	franz, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	got, err := franz.SchemaByID(testCtx(t), int(id))
	if err != nil || got.Type != sr.TypeJSON {
		t.Fatalf("franz-go: schema %d: %+v, %v", id, got, err)
	}
	var srSerde sr.Serde
	srSerde.Register(int(id), franzOrderJSON{}, sr.EncodeFn(json.Marshal), sr.DecodeFn(json.Unmarshal))
	var o franzOrderJSON
	if err := srSerde.Decode(b, &o); err != nil {
		t.Fatal(err)
	}
	if o.ID != 1<<40 || o.Name == nil || *o.Name != "Ann" || o.Amount != "B88=" || o.At != at.UnixMilli() || o.Tags["k"] != "v" {
		t.Fatalf("franz-go decoded %+v", o)
	}
	fb, err := srSerde.Encode(franzOrderJSON{ID: 5, Amount: "/w==", At: at.UnixMilli(), Tags: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	rs, v, err := converterOf(t, "json_schema", false, "schema.registry.url", url).ToConnect("orders", fb)
	if err != nil {
		t.Fatal(err)
	}
	want := &Struct{Values: []any{int64(5), nil, big.NewRat(-1, 100), at, map[string]any{}}}
	if !reflect.DeepEqual(rs, s) || !sameConnectValue(v, want) {
		t.Fatalf("ToConnect of franz-go's bytes: %s %#v", dumpSchema(rs), v)
	}
}
