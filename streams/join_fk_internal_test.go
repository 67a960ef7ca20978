package streams

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestDecodeResponseEntryRejectsHugeLength: a corrupt response-store value
// whose key length is near 2^64 is an error, not a panic.
func TestDecodeResponseEntryRejectsHugeLength(t *testing.T) {
	b := binary.AppendUvarint(nil, math.MaxUint64-3)
	b = append(b, make([]byte, fkHashLen+4)...)
	if _, err := decodeResponseEntry(b); err == nil {
		t.Fatal("a huge key length decoded")
	}
	ok := responseEntry{fk: []byte("c1"), hash: make([]byte, fkHashLen), state: fkAnswered, right: []byte("r")}
	if e, err := decodeResponseEntry(ok.encode()); err != nil || string(e.fk) != "c1" || string(e.right) != "r" {
		t.Fatalf("round trip: %+v %v", e, err)
	}
}
