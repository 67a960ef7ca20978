package protobuf

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// indexedSchema has enums, map entries and a group between its messages,
// none of which count in an index path.
const indexedSchema = `syntax = "proto2";
package idx;

enum Before { B = 1; }
message First {
  map<string, int32> counts = 1;
  optional group Body = 2 { optional int32 x = 1; }
  message Inner {
    enum Deep { D = 1; }
    message Innermost {}
  }
  message Second {}
}
message Last {
  message Only {}
}
`

func TestMessageIndexes(t *testing.T) {
	p := mustParse(t, indexedSchema)
	tests := []struct {
		name    string
		indexes []int
	}{
		{"idx.First", []int{0}},
		{"idx.First.Inner", []int{0, 0}},
		{"idx.First.Inner.Innermost", []int{0, 0, 0}},
		{"idx.First.Second", []int{0, 1}},
		{"idx.Last", []int{1}},
		{"idx.Last.Only", []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MessageIndexes(p, tt.name)
			if err != nil || !slices.Equal(got, tt.indexes) {
				t.Fatalf("MessageIndexes(%s) = %v, %v; want %v", tt.name, got, err, tt.indexes)
			}
			if dotted, err := MessageIndexes(p, "."+tt.name); err != nil || !slices.Equal(dotted, tt.indexes) {
				t.Errorf("MessageIndexes(.%s) = %v, %v; want %v", tt.name, dotted, err, tt.indexes)
			}
			md, err := MessageByIndexes(p, tt.indexes)
			if err != nil || string(md.FullName()) != tt.name {
				t.Errorf("MessageByIndexes(%v) = %v, %v; want %s", tt.indexes, md, err, tt.name)
			}
		})
	}

	t.Run("an empty path is the first message", func(t *testing.T) {
		md, err := MessageByIndexes(p, nil)
		if err != nil || md.FullName() != "idx.First" {
			t.Errorf("MessageByIndexes(nil) = %v, %v; want idx.First", md, err)
		}
	})

	for _, name := range []string{"idx.Missing", "idx.Before", "idx.First.CountsEntry", "idx.First.Body", "First", "", "google.protobuf.Timestamp"} {
		t.Run("no message "+name, func(t *testing.T) {
			if got, err := MessageIndexes(p, name); !errors.Is(err, ErrNoSuchMessage) {
				t.Errorf("MessageIndexes(%q) = %v, %v; want ErrNoSuchMessage", name, got, err)
			}
		})
	}
	for _, indexes := range [][]int{{2}, {-1}, {0, 2}, {0, 0, 0, 0}, {1, 1}} {
		if md, err := MessageByIndexes(p, indexes); !errors.Is(err, ErrNoSuchMessage) {
			t.Errorf("MessageByIndexes(%v) = %v, %v; want ErrNoSuchMessage", indexes, md, err)
		}
	}

	t.Run("a schema without messages", func(t *testing.T) {
		empty := mustParse(t, `syntax = "proto3"; enum E { Z = 0; }`)
		if md, err := MessageByIndexes(empty, nil); !errors.Is(err, ErrNoSuchMessage) {
			t.Errorf("MessageByIndexes = %v, %v; want ErrNoSuchMessage", md, err)
		}
	})
}

func TestMessageIndexesEncoding(t *testing.T) {
	tests := []struct {
		name    string
		indexes []int
		encoded []byte
	}{
		{"the first message is one zero byte", []int{0}, []byte{0x00}},
		{"second top-level message", []int{1}, []byte{0x02, 0x02}},
		{"first nested message of the second", []int{1, 0}, []byte{0x04, 0x02, 0x00}},
		{"nested under the first", []int{0, 0}, []byte{0x04, 0x00, 0x00}},
		{"a two-byte varint", []int{64}, []byte{0x02, 0x80, 0x01}},
		{"the largest int32", []int{2147483647}, []byte{0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("id")
			got := AppendMessageIndexes(prefix, tt.indexes)
			if !bytes.Equal(got[len(prefix):], tt.encoded) || !bytes.Equal(got[:len(prefix)], prefix) {
				t.Errorf("AppendMessageIndexes(%v) = % x, want id + % x", tt.indexes, got, tt.encoded)
			}
			payload := append(slices.Clone(tt.encoded), "payload"...)
			indexes, n, err := ReadMessageIndexes(payload)
			if err != nil || n != len(tt.encoded) || !slices.Equal(indexes, tt.indexes) {
				t.Errorf("ReadMessageIndexes(% x) = %v, %d, %v; want %v, %d", payload, indexes, n, err, tt.indexes, len(tt.encoded))
			}
		})
	}

	t.Run("an empty path encodes as the first message", func(t *testing.T) {
		if got := AppendMessageIndexes(nil, nil); !bytes.Equal(got, []byte{0}) {
			t.Errorf("AppendMessageIndexes(nil) = % x, want 00", got)
		}
	})
	t.Run("an explicit count of one zero reads as [0]", func(t *testing.T) {
		indexes, n, err := ReadMessageIndexes([]byte{0x02, 0x00})
		if err != nil || n != 2 || !slices.Equal(indexes, []int{0}) {
			t.Errorf("ReadMessageIndexes(02 00) = %v, %d, %v", indexes, n, err)
		}
	})
	t.Run("the longest path", func(t *testing.T) {
		long := make([]int, MaxMessageIndexes)
		indexes, _, err := ReadMessageIndexes(AppendMessageIndexes(nil, long))
		if err != nil || len(indexes) != MaxMessageIndexes {
			t.Errorf("ReadMessageIndexes of %d indexes = %d, %v", MaxMessageIndexes, len(indexes), err)
		}
	})
}

func TestReadMessageIndexesMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"nothing", nil},
		{"a truncated count", []byte{0x80}},
		{"a negative count", []byte{0x01}},
		{"a count above the limit", []byte{0xca, 0x01}}, // 101
		{"a huge count", []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{"fewer indexes than counted", []byte{0x04, 0x02}},
		{"a truncated index", []byte{0x02, 0x80}},
		{"a negative index", []byte{0x02, 0x03}},
		{"a count longer than 32 bits", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{"a count of 33 bits in five bytes", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}},
		{"an index longer than 32 bits", []byte{0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"a varint that never ends", bytes.Repeat([]byte{0xff}, 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indexes, n, err := ReadMessageIndexes(tt.in)
			if !errors.Is(err, ErrMessageIndexes) {
				t.Fatalf("ReadMessageIndexes(% x) = %v, %d, %v; want ErrMessageIndexes", tt.in, indexes, n, err)
			}
			if indexes != nil || n != 0 {
				t.Errorf("on error got %v, %d; want nil, 0", indexes, n)
			}
		})
	}
}

// TestUnmarshalDynamic: a payload of the message decodes; bytes that are
// not one are an error (the runtime's panics on malformed map entries are
// covered by connect's FuzzProtobufToConnect seed).
func TestUnmarshalDynamic(t *testing.T) {
	p, err := New().Parse("syntax = \"proto3\";\nmessage M { map<string, int32> m = 1; string s = 2; }\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := MessageByIndexes(p, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	// s = "hi": field 2, wire type 2.
	msg, err := UnmarshalDynamic(md, []byte{0x12, 0x02, 'h', 'i'})
	if err != nil || msg.Get(md.Fields().ByName("s")).String() != "hi" {
		t.Fatalf("valid payload: %v %v", msg, err)
	}
	if _, err := UnmarshalDynamic(md, []byte{0x0a, 0x05, 0x0a}); err == nil {
		t.Fatal("truncated map entry: no error")
	}
}
