package serde

import (
	"errors"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// malformedRegistry registers one schema of each format: ids 1 (Avro
// record), 2 (Protobuf), 3 (JSON Schema), 4 (Avro array of nulls).
func malformedRegistry(t testing.TB) *Client {
	c, _ := newTestClient(t, startRegistry(t))
	mustRegister(t, c, "a", Text{Schema: `{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"u","type":["null","long","string"]},{"name":"m","type":{"type":"map","values":"bytes"}}]}`})
	mustRegister(t, c, "p", Text{Type: schema.Protobuf, Schema: `syntax = "proto3"; message M { string s = 1; message N { int64 x = 1; } N n = 2; }`})
	mustRegister(t, c, "j", Text{Type: schema.JSON, Schema: `{"type":"object"}`})
	mustRegister(t, c, "n", Text{Schema: `{"type":"array","items":"null"}`})
	return c
}

func TestDecodeMalformed(t *testing.T) {
	c := malformedRegistry(t)
	ctx := testContext(t)
	for _, tc := range []struct {
		name string
		data []byte
		want error // nil: any error wrapping ErrDecode
		code int   // the registry's error_code, if the error is its
	}{
		{"empty", nil, wire.ErrShort, 0},
		{"short header", []byte{0, 0, 0}, wire.ErrShort, 0},
		{"no magic byte", []byte("{\"a\":1}"), wire.ErrBadMagic, 0},
		{"unknown id", []byte{0, 0, 0, 0, 99, 1}, nil, CodeSchemaNotFound},
		{"negative id", []byte{0, 0xff, 0xff, 0xff, 0xff}, nil, CodeSchemaNotFound},
		{"avro: empty payload", []byte{0, 0, 0, 0, 1}, nil, 0},
		{"avro: string longer than the payload", []byte{0, 0, 0, 0, 1, 0x7e, 'a'}, nil, 0},
		{"avro: negative length", []byte{0, 0, 0, 0, 1, 0x01}, nil, 0},
		{"avro: union branch out of range", []byte{0, 0, 0, 0, 1, 0, 0x08}, nil, 0},
		{"avro: huge map block", []byte{0, 0, 0, 0, 1, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x0f}, nil, 0},
		{"avro: bytes left over", []byte{0, 0, 0, 0, 1, 0, 0, 0, 7}, nil, 0},
		{"avro: varint too long", []byte{0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, nil, 0},
		{"avro: billions of nulls", []byte{0, 0, 0, 0, 4, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, nil, 0},
		{"protobuf: bad indexes", []byte{0, 0, 0, 0, 2, 0x03}, nil, 0},
		{"protobuf: no such message", []byte{0, 0, 0, 0, 2, 0x02, 0x08}, nil, 0},
		{"protobuf: truncated field", []byte{0, 0, 0, 0, 2, 0, 0x0a, 0x05, 'a'}, nil, 0},
		{"json: not JSON", []byte{0, 0, 0, 0, 3, '{'}, nil, 0},
		{"json: two values", []byte{0, 0, 0, 0, 3, '1', ' ', '2'}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := Decode(ctx, c, tc.data)
			switch {
			case err == nil:
				t.Fatalf("decoded %#v", v)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("error %v, want %v", err, tc.want)
			case tc.code != 0 && apiCode(err) != tc.code:
				t.Fatalf("error %v, want error_code %d", err, tc.code)
			case tc.want == nil && tc.code == 0 && !errors.Is(err, ErrDecode):
				t.Fatalf("error %v, want ErrDecode", err)
			}
		})
	}
	// Well-formed ones of the same schemas decode.
	for _, data := range [][]byte{
		{0, 0, 0, 0, 1, 2, 'h', 0, 0},
		{0, 0, 0, 0, 2, 0, 0x0a, 0x01, 'a'},
		{0, 0, 0, 0, 2, 0x04, 0x00, 0x00, 0x08, 0x07},
		{0, 0, 0, 0, 3, '{', '}'},
		{0, 0, 0, 0, 4, 0x06, 0},
	} {
		if _, _, err := Decode(ctx, c, data); err != nil {
			t.Errorf("decode %x: %v", data, err)
		}
	}
}

// FuzzDecode: whatever the bytes, Decode returns a value or an error,
// never panics; what decodes as Avro encodes again (JSON is not validated
// when decoded, so it might not).
func FuzzDecode(f *testing.F) {
	c := malformedRegistry(f)
	for _, seed := range [][]byte{
		nil, {0}, {1, 0, 0, 0, 1},
		{0, 0, 0, 0, 1, 2, 'h', 0, 0},
		{0, 0, 0, 0, 1, 2, 'h', 4, 0x02, 'x', 0},
		{0, 0, 0, 0, 1, 0, 2, 4, 1, 2, 'k', 0, 0},
		{0, 0, 0, 0, 2, 0x04, 0x00, 0x00, 0x08, 0x07},
		{0, 0, 0, 0, 2, 0, 0x0a, 0x01, 'a'},
		{0, 0, 0, 0, 3, '{', '"', 'a', '"', ':', '1', '}'},
		{0, 0, 0, 0, 4, 0x06, 0},
		{0, 0, 0, 0, 9},
	} {
		f.Add(seed)
	}
	ctx := testContext(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, s, err := Decode(ctx, c, data)
		if err != nil || s.Type != schema.Avro {
			return
		}
		again, err := Encode(s, v)
		if err != nil {
			t.Fatalf("decoded %#v from %x, which does not encode again: %v", v, data, err)
		}
		v2, _, err := Decode(ctx, c, again)
		if err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", again, err)
		}
		// Avro has one encoding per value but several block layouts
		// (several blocks, negative counts); the value decoded from the
		// re-encoding encodes to the same bytes again.
		third, err := Encode(s, v2)
		if err != nil || string(third) != string(again) {
			t.Fatalf("decoded %#v from %x; re-encoded %x; that decoded to %#v, which encodes to %x (%v)", v, data, again, v2, third, err)
		}
	})
}
