package connect

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/registrytest"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
)

func startTestRegistry(t testing.TB) string { return registrytest.Start(t) }

func avroConverter(t *testing.T, isKey bool, props ...string) Converter {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(props); i += 2 {
		m[props[i]] = props[i+1]
	}
	c, err := NewConverterFor(AvroConverterClass, m, isKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func registryClient(t *testing.T, url string) *serde.Client {
	t.Helper()
	c, err := serde.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rowV1 is a JDBC-like row: the types a database table gives.
var rowV1 = structSchema("shop.orders",
	Field{Name: "id", Schema: &Schema{Type: TypeInt64}},
	Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
	Field{Name: "amount", Schema: optional(decimalSchema("2"))},
	Field{Name: "day", Schema: optional(avroDate)},
	Field{Name: "at", Schema: optional(avroTimestamp)},
	Field{Name: "small", Schema: &Schema{Type: TypeInt16}},
	Field{Name: "tags", Schema: &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: &Schema{Type: TypeString}}},
)

var rowV2 = structSchema("shop.orders", append(append([]Field{}, rowV1.Fields...),
	Field{Name: "note", Schema: &Schema{Type: TypeString, Optional: true}})...)

func rowV1Value(id int64) *Struct {
	return &Struct{Schema: rowV1, Values: []any{id, "name", big.NewRat(-12345, 100),
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.UnixMilli(1_730_610_000_123).UTC(), int16(-3),
		map[string]any{"k": "v"}}}
}

// TestAvroConverterRoundTrip: a value and a key through a real registry:
// the bytes are framed (magic, id), the subjects are <topic>-value and
// <topic>-key, and ToConnect gives back the schema and the value.
func TestAvroConverterRoundTrip(t *testing.T) {
	url := startTestRegistry(t)
	value := avroConverter(t, false, "schema.registry.url", url+",http://127.0.0.1:1")
	key := avroConverter(t, true, "schema.registry.url", url)
	keySchema := structSchema("shop.orders.Key", Field{Name: "id", Schema: &Schema{Type: TypeInt64}})

	b, err := value.FromConnect("orders", rowV1, rowV1Value(7))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := wire.ParseHeader(b)
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
	if err != nil || latest.ID != int(id) {
		t.Fatalf("orders-value latest: %+v, %v; the record's id %d", latest, err, id)
	}

	// A fresh converter (another worker) reads both back.
	reader := avroConverter(t, false, "schema.registry.url", url)
	s, v, err := reader.ToConnect("orders", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, rowV1) {
		t.Errorf("schema\n got: %s\nwant: %s", dumpSchema(s), dumpSchema(rowV1))
	}
	if !sameConnectValue(v, rowV1Value(7)) {
		t.Errorf("value %#v", v)
	}
	ks, kv, err := reader.ToConnect("orders", kb)
	if err != nil || !reflect.DeepEqual(ks, keySchema) || !sameConnectValue(kv, &Struct{Values: []any{int64(7)}}) {
		t.Errorf("key: %s %#v %v", dumpSchema(ks), kv, err)
	}

	// Tombstones stay nil both ways and register nothing.
	if out, err := value.FromConnect("other", rowV1, nil); out != nil || err != nil {
		t.Errorf("tombstone: %x, %v", out, err)
	}
	if s, v, err := reader.ToConnect("orders", nil); s != nil || v != nil || err != nil {
		t.Errorf("nil record: %v %v %v", s, v, err)
	}

	// Bytes that are not Confluent's, and an id the registry lacks.
	for _, bad := range [][]byte{[]byte(`{"id":1}`), {0, 0}, wire.AppendHeader(nil, 999)} {
		_, _, err := reader.ToConnect("orders", bad)
		if !errors.Is(err, ErrConversion) {
			t.Errorf("%x: %v, want ErrConversion", bad, err)
		}
	}
	_, _, err = reader.ToConnect("orders", wire.AppendHeader(nil, 999))
	if err == nil || !strings.Contains(err.Error(), "schema id 999 is not in the registry") {
		t.Errorf("unknown id: %v", err)
	}
	_, _, err = reader.ToConnect("orders", []byte("plain text"))
	if err == nil || !strings.Contains(err.Error(), "magic byte") {
		t.Errorf("no magic byte: %v", err)
	}
	// A value that does not fit its schema.
	bad := rowV1Value(8)
	bad.Values[5] = 1 << 20
	if _, err := value.FromConnect("orders", rowV1, bad); !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "field small") {
		t.Errorf("int16 overflow: %v", err)
	}
}

// TestAvroConverterSchemaEvolution: a new optional field registers version
// 2 under BACKWARD; a new required field is refused with the registry's
// reason; records of both versions read back with their own schemas.
func TestAvroConverterSchemaEvolution(t *testing.T) {
	url := startTestRegistry(t)
	conv := avroConverter(t, false, "schema.registry.url", url)
	client := registryClient(t, url)
	if level, err := client.Config(testCtx(t), ""); err != nil || level != "BACKWARD" {
		t.Fatalf("global compatibility %q, %v", level, err)
	}
	b1, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if err != nil {
		t.Fatal(err)
	}
	v2 := &Struct{Schema: rowV2, Values: append(append([]any{}, rowV1Value(2).Values...), "hello")}
	b2, err := conv.FromConnect("orders", rowV2, v2)
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil || !reflect.DeepEqual(s, tc.schema) || !sameConnectValue(v, tc.value) {
			t.Errorf("read back: %s %#v %v", dumpSchema(s), v, err)
		}
	}

	required := structSchema("shop.orders", append(append([]Field{}, rowV2.Fields...),
		Field{Name: "must", Schema: &Schema{Type: TypeInt32}})...)
	_, err = conv.FromConnect("orders", required, &Struct{Schema: required, Values: append(append([]any{}, v2.Values...), int32(1))})
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "error code 409") || !strings.Contains(err.Error(), "must") {
		t.Fatalf("a new required field: %v", err)
	}
}

// TestAvroConverterNoAutoRegister: auto.register.schemas=false fails a
// record whose schema the subject lacks, naming the subject, and works
// once the schema is registered; use.latest.version writes with the
// subject's latest version; RecordNameStrategy names subjects by record.
func TestAvroConverterNoAutoRegister(t *testing.T) {
	url := startTestRegistry(t)
	client := registryClient(t, url)
	conv := avroConverter(t, false, "schema.registry.url", url, "auto.register.schemas", "false")
	_, err := conv.FromConnect("orders", rowV1, rowV1Value(1))
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "not registered under subject orders-value and auto.register.schemas=false") {
		t.Fatalf("unregistered schema: %v", err)
	}
	text, err := avroSchemaText(rowV1)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := client.Register(testCtx(t), "orders-value", serde.Text{Schema: text}, false)
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

	// use.latest.version: version 2 has the optional note; a v1 record is
	// written with it (note null).
	text2, _ := avroSchemaText(rowV2)
	v2, err := client.Register(testCtx(t), "orders-value", serde.Text{Schema: text2}, false)
	if err != nil {
		t.Fatal(err)
	}
	latest := avroConverter(t, false, "schema.registry.url", url, "auto.register.schemas", "false", "use.latest.version", "true")
	b, err = latest.FromConnect("orders", rowV1, rowV1Value(3))
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := latest.ToConnect("orders", b)
	if id, _, _ := wire.ParseHeader(b); int(id) != v2.ID || err != nil || !reflect.DeepEqual(s, rowV2) || v.(*Struct).Values[7] != nil {
		t.Fatalf("use.latest.version: id %d (v2 %d), %s, %v", id, v2.ID, dumpSchema(s), err)
	}

	byRecord := avroConverter(t, false, "schema.registry.url", url,
		"value.subject.name.strategy", "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy")
	if _, err := byRecord.FromConnect("orders", rowV1, rowV1Value(4)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Version(testCtx(t), "orders-shop.orders", -1); err != nil {
		t.Fatalf("TopicRecordNameStrategy subject: %v", err)
	}

	if _, err := NewConverterFor("avro", map[string]string{}, false); err == nil || !strings.Contains(err.Error(), "schema.registry.url") {
		t.Errorf("no URL: %v", err)
	}
	if _, err := NewConverterFor("avro", map[string]string{"schema.registry.url": url,
		"basic.auth.credentials.source": "USER_INFO"}, false); err == nil || !strings.Contains(err.Error(), "basic.auth.user.info") {
		t.Errorf("USER_INFO without user info: %v", err)
	}
}

// franzOrder is a record for hamba's struct codec through franz-go's Serde.
// (hamba decodes a nullable decimal into **big.Rat; into *big.Rat it
// gives 0.)
type franzOrder struct {
	ID     int64     `avro:"id"`
	Name   *string   `avro:"name"`
	Amount **big.Rat `avro:"amount"`
	At     time.Time `avro:"at"`
}

// TestAvroConverterIndependentCodecs: what AvroConverter writes decodes
// with franz-go's pkg/sr Serde and hamba's struct codec, and with
// registry/serde; what pkg/sr frames decodes with ToConnect.
func TestAvroConverterIndependentCodecs(t *testing.T) {
	url := startTestRegistry(t)
	schema := structSchema("shop.Order",
		Field{Name: "id", Schema: &Schema{Type: TypeInt64}},
		Field{Name: "name", Schema: &Schema{Type: TypeString, Optional: true}},
		Field{Name: "amount", Schema: optional(decimalSchema("2"))},
		Field{Name: "at", Schema: avroTimestamp})
	at := time.UnixMilli(1_730_610_000_123).UTC()
	conv := avroConverter(t, false, "schema.registry.url", url)
	b, err := conv.FromConnect("orders", schema, &Struct{Schema: schema, Values: []any{int64(1) << 40, "Ann", big.NewRat(1999, 100), at}})
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := wire.ParseHeader(b)

	franz, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	got, err := franz.SchemaByID(testCtx(t), int(id))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := avro.Parse(got.Schema)
	if err != nil {
		t.Fatal(err)
	}
	var srSerde sr.Serde
	srSerde.Register(int(id), franzOrder{},
		sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(hs, v) }),
		sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(hs, b, v) }))
	var o franzOrder
	if err := srSerde.Decode(b, &o); err != nil {
		t.Fatal(err)
	}
	if o.ID != 1<<40 || o.Name == nil || *o.Name != "Ann" || o.Amount == nil || (*o.Amount).Cmp(big.NewRat(1999, 100)) != 0 || !o.At.Equal(at) {
		t.Fatalf("franz-go decoded %+v", o)
	}
	if again, err := srSerde.Encode(o); err != nil || string(again) != string(b) {
		t.Fatalf("franz-go's bytes of the same record %x (%v), ours %x", again, err, b)
	}
	natural, _, err := serde.Decode(testCtx(t), registryClient(t, url), b)
	if err != nil {
		t.Fatal(err)
	}
	if m := natural.(map[string]any); m["id"] != int64(1)<<40 || m["name"] != "Ann" || m["at"] != at.UnixMilli() ||
		fmt.Sprint(m["amount"]) != "19.99" {
		t.Fatalf("serde.Decode: %#v", natural)
	}

	// franz-go encodes (no name, another amount), ToConnect reads.
	quarter := big.NewRat(-1, 4)
	fb, err := srSerde.Encode(franzOrder{ID: 5, Amount: &quarter, At: at})
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := avroConverter(t, false, "schema.registry.url", url).ToConnect("orders", fb)
	if err != nil {
		t.Fatal(err)
	}
	want := &Struct{Values: []any{int64(5), nil, big.NewRat(-1, 4), at}}
	if !reflect.DeepEqual(s, schema) || !sameConnectValue(v, want) {
		t.Fatalf("ToConnect of franz-go's bytes: %s %#v", dumpSchema(s), v)
	}
}
