package protobuf

import (
	"slices"
	"testing"
)

// FuzzReadMessageIndexes: any bytes give indexes or an error, never a
// panic; what is read re-encodes to bytes that read the same.
func FuzzReadMessageIndexes(f *testing.F) {
	for _, seed := range [][]byte{
		{0x00}, {0x02, 0x02}, {0x04, 0x02, 0x00}, {0x01}, {0x80}, {0xca, 0x01},
		{0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f}, {0xff, 0xff, 0xff, 0xff, 0x1f}, nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		indexes, n, err := ReadMessageIndexes(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("read %d bytes of %d", n, len(b))
		}
		if len(indexes) == 0 || len(indexes) > MaxMessageIndexes {
			t.Fatalf("read %d indexes", len(indexes))
		}
		again, m, err := ReadMessageIndexes(AppendMessageIndexes(nil, indexes))
		if err != nil || !slices.Equal(again, indexes) {
			t.Fatalf("re-encoded %v reads as %v (%d bytes), %v", indexes, again, m, err)
		}
	})
}

// FuzzParse: any text parses or gives an error, never a panic; a schema
// that parses normalizes to a text that parses to the same normalized
// text, and its canonical text parses to the same canonical text (a
// fixed point), the same normalized text and the same message indexes.
func FuzzParse(f *testing.F) {
	for _, text := range validSchemas {
		f.Add(text)
	}
	f.Add(indexedSchema)
	f.Add(`syntax = "proto3"; message A { int32 x = 1 }`)
	f.Add(`syntax = "proto3"; import "missing.proto"; message A {}`)
	f.Add("")
	// Declaration orders the canonical text keeps and must reparse to:
	// groups in a oneof, nested and top-level extensions in several
	// blocks, unsorted reserved ranges and names, unsorted imports.
	f.Add(`syntax = "proto2"; message A { extensions 100 to 200; message N {} oneof o { group G = 2 { optional int32 y = 1; } string s = 1; } optional int32 x = 3; extend A { optional int32 e = 101; } message M {} map<string, N> m = 4; }
extend A { optional group TG = 150 { optional int32 z = 1; } } message Z {} extend A { repeated int32 r = 102 [packed = true]; }`)
	f.Add(`edition = "2023"; message A { A child = 1 [features.message_encoding = DELIMITED]; message B {} int32 x = 2; reserved 7, 3; reserved foo, bar; }`)
	f.Add(`syntax = "proto3"; package p.q; import public "google/protobuf/any.proto"; import "google/protobuf/empty.proto"; message A { google.protobuf.Any a = 2; google.protobuf.Empty e = 1; }`)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := New().Parse(text, nil)
		if err != nil {
			return
		}
		normalized, err := New().Parse(p.Normalized(), nil)
		if err != nil {
			t.Fatalf("the normalized text does not parse: %v\n%s\nfrom\n%s", err, p.Normalized(), text)
		}
		if normalized.Normalized() != p.Normalized() {
			t.Fatalf("normalizing twice changed the text:\n%s\nthen\n%s", p.Normalized(), normalized.Normalized())
		}
		checkCanonical(t, text, p)
		_ = New().Compatible(p, normalized)
	})
}
