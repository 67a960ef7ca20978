// Package wire is Confluent's framing of a serialized record value or
// key, which every Confluent serializer writes and every deserializer
// expects:
//
//	+-------+---------------------------+---------------------------+
//	| magic |  schema id (int32, big    |  payload (Avro binary;    |
//	| 0x00  |  endian, the registry's)  |  Protobuf: message-index  |
//	|       |                           |  varints, then the bytes) |
//	+-------+---------------------------+---------------------------+
//	 byte 0   bytes 1-4                   bytes 5-
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic is the first byte of a framed value.
const Magic byte = 0

// HeaderSize is the length of the magic byte and the schema id.
const HeaderSize = 5

// Errors ParseHeader returns.
var (
	ErrShort    = errors.New("wire: shorter than the 5-byte header")
	ErrBadMagic = errors.New("wire: first byte is not the magic byte 0")
)

// AppendHeader appends the magic byte and id to b.
func AppendHeader(b []byte, id int32) []byte {
	b = append(b, Magic)
	return binary.BigEndian.AppendUint32(b, uint32(id))
}

// ParseHeader splits a framed value into its schema id and payload.
func ParseHeader(b []byte) (id int32, rest []byte, err error) {
	if len(b) < HeaderSize {
		return 0, nil, fmt.Errorf("%w: %d bytes", ErrShort, len(b))
	}
	if b[0] != Magic {
		return 0, nil, fmt.Errorf("%w: 0x%02x", ErrBadMagic, b[0])
	}
	return int32(binary.BigEndian.Uint32(b[1:HeaderSize])), b[HeaderSize:], nil
}
