package registry

import (
	"errors"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

const (
	orderAvro  = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`
	orderJSON  = `{"title":"shop.OrderJSON","type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`
	orderProto = `syntax = "proto3"; package shop; message Other { string x = 1; } message OrderPB { int64 id = 1; string item = 2; }`
)

func framed(id int, payload []byte) []byte {
	return append(wire.AppendHeader(nil, int32(id)), payload...)
}

// TestCheckRecord: the id check and the decode check of each format, and
// the messages a producer sees.
func TestCheckRecord(t *testing.T) {
	r := startRegistry(t, NewMemoryLog())
	a := newAPI(t, r)
	avroID := a.register("orders-value", orderAvro)
	jsonID := a.register("orders-json-value", map[string]any{"schema": orderJSON, "schemaType": "JSON"})
	protoID := a.register("orders-pb-value", map[string]any{"schema": orderProto, "schemaType": "PROTOBUF"})
	otherID := a.register("other-value", `"string"`)

	avroSchema := hamba.MustParse(orderAvro)
	good, err := hamba.Marshal(avroSchema, map[string]any{"id": int64(7), "item": "book"})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := r.formats[schema.Protobuf].Parse(orderProto, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := protobuf.Descriptor(parsed).Messages().ByName("OrderPB")
	msg := dynamicpb.NewMessage(md)
	msg.Set(md.Fields().ByName("id"), protoreflectInt(7))
	pb, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	pbFramed := framed(protoID, append(protobuf.AppendMessageIndexes(nil, []int{1}), pb...))

	for _, tc := range []struct {
		name    string
		subject string
		data    []byte
		decode  bool
		kind    error // nil: accepted
		message string
	}{
		{"avro id", "orders-value", framed(avroID, good), false, nil, ""},
		{"avro decodes", "orders-value", framed(avroID, good), true, nil, ""},
		{"garbage passes the id check", "orders-value", framed(avroID, []byte{0xff}), false, nil, ""},
		{"avro truncated", "orders-value", framed(avroID, good[:2]), true, ErrUndecodable, "does not decode with schema id"},
		{"avro bytes left", "orders-value", framed(avroID, append(good, 1)), true, ErrUndecodable, "bytes left"},
		{"unknown id", "orders-value", framed(9999, good), false, ErrUnknownSchemaID, "schema id 9999 is not registered"},
		{"other subject's id", "orders-value", framed(otherID, good), false, ErrWrongSubject, "is not registered under subject 'orders-value' (it is under 'other-value')"},
		{"no magic", "orders-value", append([]byte{1}, framed(avroID, good)[1:]...), false, ErrNotFramed, "first byte is 0x01"},
		{"short", "orders-value", []byte{0, 0, 1}, false, ErrNotFramed, "3 bytes"},
		{"empty", "orders-value", []byte{}, false, ErrNotFramed, "0 bytes"},
		{"json ok", "orders-json-value", framed(jsonID, []byte(`{"id":3}`)), true, nil, ""},
		{"json schema refuses", "orders-json-value", framed(jsonID, []byte(`{"id":"x"}`)), true, ErrUndecodable, "does not match"},
		{"json not json", "orders-json-value", framed(jsonID, []byte(`{"id":`)), true, ErrUndecodable, "not JSON"},
		{"json two values", "orders-json-value", framed(jsonID, []byte(`{"id":1} {}`)), true, ErrUndecodable, "more than one"},
		{"protobuf ok", "orders-pb-value", pbFramed, true, nil, ""},
		{"protobuf bad index", "orders-pb-value", framed(protoID, append(protobuf.AppendMessageIndexes(nil, []int{5}), pb...)), true, ErrUndecodable, "no such message"},
		{"protobuf bad message", "orders-pb-value", framed(protoID, []byte{2, 2, 0x0a, 0x05, 'a'}), true, ErrUndecodable, "does not decode"},
	} {
		err := r.CheckRecord(tc.subject, tc.data, tc.decode)
		switch {
		case tc.kind == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.kind != nil && !errors.Is(err, tc.kind):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.kind)
		case tc.kind != nil && !strings.Contains(err.Error(), tc.message):
			t.Errorf("%s: message %q lacks %q", tc.name, err, tc.message)
		}
	}

	// A soft-deleted version no longer validates; its id under another
	// subject still does there.
	a.register("orders2-value", orderAvro)
	a.ok("DELETE", "/subjects/orders-value/versions/1", nil, nil)
	if err := r.CheckRecord("orders-value", framed(avroID, good), false); !errors.Is(err, ErrWrongSubject) || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("soft-deleted: %v", err)
	}
	if err := r.CheckRecord("orders2-value", framed(avroID, good), true); err != nil {
		t.Errorf("same id, other subject: %v", err)
	}
}

// TestRecordName: the name RecordNameStrategy puts in a subject.
func TestRecordName(t *testing.T) {
	r := startRegistry(t, NewMemoryLog())
	a := newAPI(t, r)
	avroID := a.register("a", orderAvro)
	primitiveID := a.register("p", `"string"`)
	jsonID := a.register("j", map[string]any{"schema": orderJSON, "schemaType": "JSON"})
	untitledID := a.register("u", map[string]any{"schema": `{"type":"object"}`, "schemaType": "JSON"})
	protoID := a.register("pb", map[string]any{"schema": orderProto, "schemaType": "PROTOBUF"})
	for _, tc := range []struct {
		data []byte
		want string
		kind error
	}{
		{framed(avroID, nil), "shop.Order", nil},
		{framed(primitiveID, nil), "string", nil},
		{framed(jsonID, nil), "shop.OrderJSON", nil},
		{framed(untitledID, nil), "", ErrNoRecordName},
		{framed(protoID, []byte{0}), "shop.Other", nil},
		{framed(protoID, protobuf.AppendMessageIndexes(nil, []int{1})), "shop.OrderPB", nil},
		{framed(protoID, nil), "", ErrUndecodable},
		{framed(4242, nil), "", ErrUnknownSchemaID},
		{[]byte{7}, "", ErrNotFramed},
	} {
		got, err := r.RecordName(tc.data)
		if got != tc.want || (tc.kind == nil) != (err == nil) || (tc.kind != nil && !errors.Is(err, tc.kind)) {
			t.Errorf("RecordName(%x) = %q, %v; want %q, %v", tc.data, got, err, tc.want, tc.kind)
		}
	}
}

// TestCheckRecordCachesParsedSchemas: decode parses each schema once.
func TestCheckRecordCachesParsedSchemas(t *testing.T) {
	r := startRegistry(t, NewMemoryLog())
	id := newAPI(t, r).register("orders-value", orderAvro)
	data := framed(id, must(hamba.Marshal(hamba.MustParse(orderAvro), map[string]any{"id": int64(1), "item": "x"})))
	if err := r.CheckRecord("orders-value", data, true); err != nil {
		t.Fatal(err)
	}
	r.schemaCache.mu.Lock()
	first := r.schemaCache.byID[id]
	r.schemaCache.mu.Unlock()
	allocs := testing.AllocsPerRun(100, func() {
		if err := r.CheckRecord("orders-value", data, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("the id check allocates %v times per record", allocs)
	}
	if err := r.CheckRecord("orders-value", data, true); err != nil {
		t.Fatal(err)
	}
	r.schemaCache.mu.Lock()
	again := r.schemaCache.byID[id]
	r.schemaCache.mu.Unlock()
	if first == nil || first != again {
		t.Fatalf("cache entry %p then %p", first, again)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func protoreflectInt(n int64) protoreflect.Value { return protoreflect.ValueOfInt64(n) }
