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
// text, and its canonical text parses too.
func FuzzParse(f *testing.F) {
	for _, text := range validSchemas {
		f.Add(text)
	}
	f.Add(indexedSchema)
	f.Add(`syntax = "proto3"; message A { int32 x = 1 }`)
	f.Add(`syntax = "proto3"; import "missing.proto"; message A {}`)
	f.Add("")
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
		if _, err := New().Parse(p.Canonical(), nil); err != nil {
			t.Fatalf("the canonical text does not parse: %v\n%q", err, p.Canonical())
		}
		_ = New().Compatible(p, normalized)
	})
}
