package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestSchemaIDHeader(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		id      int32
		rest    []byte
		wantErr error
	}{
		{"id 1", []byte{0, 0, 0, 0, 1, 'x'}, 1, []byte("x"), nil},
		{"large id, empty payload", []byte{0, 0x7f, 0xff, 0xff, 0xff}, 1<<31 - 1, []byte{}, nil},
		{"short", []byte{0, 0, 0, 1}, 0, nil, ErrShort},
		{"empty", nil, 0, nil, ErrShort},
		{"bad magic", []byte{1, 0, 0, 0, 1, 'x'}, 0, nil, ErrBadMagic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, rest, err := ParseHeader(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if id != tc.id || !bytes.Equal(rest, tc.rest) {
				t.Fatalf("got id %d rest %q, want %d %q", id, rest, tc.id, tc.rest)
			}
		})
	}
	if got := AppendHeader([]byte("p"), 258); !bytes.Equal(got, []byte{'p', 0, 0, 0, 1, 2}) {
		t.Fatalf("AppendHeader = %v", got)
	}
}

func FuzzSchemaIDHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 7, 1, 2})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, rest, err := ParseHeader(b)
		if err != nil {
			return
		}
		again := append(AppendHeader(nil, id), rest...)
		if !bytes.Equal(again, b) {
			t.Fatalf("re-framed %x, want %x", again, b)
		}
	})
}
