package streams

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Serde turns values of T into record bytes and back. Decode must not keep
// data beyond the call unless it owns it (the client does not reuse record
// buffers, so the built-in Bytes serde returns the slice as is).
type Serde[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(data []byte) (T, error)
}

// String is the UTF-8 string serde; a nil key or value decodes to "".
var String Serde[string] = stringSerde{}

// Bytes passes bytes through unchanged.
var Bytes Serde[[]byte] = bytesSerde{}

// Int64 is Kafka's LongSerializer format: 8 bytes, big-endian. A nil
// payload decodes to 0; any other length is an error.
var Int64 Serde[int64] = int64Serde{}

// JSON returns a serde for T through encoding/json. A nil payload (a
// tombstone or an absent key) decodes to T's zero value.
func JSON[T any]() Serde[T] { return jsonSerde[T]{} }

type stringSerde struct{}

func (stringSerde) Encode(v string) ([]byte, error) { return []byte(v), nil }
func (stringSerde) Decode(b []byte) (string, error) { return string(b), nil }

type bytesSerde struct{}

func (bytesSerde) Encode(v []byte) ([]byte, error) { return v, nil }
func (bytesSerde) Decode(b []byte) ([]byte, error) { return b, nil }

type int64Serde struct{}

func (int64Serde) Encode(v int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(v)), nil
}

func (int64Serde) Decode(b []byte) (int64, error) {
	switch len(b) {
	case 0:
		return 0, nil
	case 8:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("streams: int64 serde: %d bytes, want 8", len(b))
}

type jsonSerde[T any] struct{}

func (jsonSerde[T]) Encode(v T) ([]byte, error) { return json.Marshal(v) }

func (jsonSerde[T]) Decode(b []byte) (T, error) {
	var v T
	if b == nil {
		return v, nil
	}
	err := json.Unmarshal(b, &v)
	return v, err
}
