package serde

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// Errors of Encode and Decode wrap one of these (Decode's header errors
// wrap wire.ErrShort or wire.ErrBadMagic; an unknown id is the registry's
// *Error with Code 40403).
var (
	// ErrEncode: the value does not fit the schema.
	ErrEncode = errors.New("serde: value does not fit the schema")
	// ErrDecode: the payload does not decode with the schema its id names.
	ErrDecode = errors.New("serde: payload does not decode")
	// ErrNotParsed: a Schema without Parsed (not from a Client).
	ErrNotParsed = errors.New("serde: schema has not been parsed")
)

// Encode serializes value with s in Confluent's wire format: the magic
// byte, s.ID, for Protobuf the message indexes of the schema's first
// message, and the payload. value has the shapes encoding/json produces
// (map[string]any, []any, string, float64 or json.Number, bool, nil), or
// int and int64 for integers and []byte for Avro bytes; see the package
// documentation for each format's rules.
func Encode(s Schema, value any) ([]byte, error) {
	if s.Type == schema.Protobuf {
		return EncodeMessage(s, "", value)
	}
	if s.Parsed == nil {
		return nil, ErrNotParsed
	}
	out := wire.AppendHeader(nil, int32(s.ID))
	switch s.Type {
	case schema.Avro:
		b, err := encodeAvro(out, avro.Schema(s.Parsed), value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEncode, err)
		}
		return b, nil
	case schema.JSON:
		doc, text, err := jsonDocument(value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEncode, err)
		}
		if err := jsonschema.Validate(s.Parsed, doc); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEncode, err)
		}
		return append(out, text...), nil
	}
	return nil, fmt.Errorf("serde: %w %q", schema.ErrUnknownType, s.Type)
}

// jsonDocument is value as JSON text and as the document that text
// decodes to (numbers as json.Number).
func jsonDocument(value any) (any, []byte, error) {
	text, err := json.Marshal(value)
	if err != nil {
		return nil, nil, err
	}
	doc, err := decodeJSON(text)
	return doc, text, err
}

// decodeJSON decodes exactly one JSON value, numbers as json.Number.
func decodeJSON(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return doc, nil
}

// EncodeMessage is Encode for a Protobuf schema, of the message fullName
// ("pkg.Outer.Inner"; "" for the schema's first message): its message
// indexes go between the id and the payload. value is converted with
// protojson from its JSON, so field names may be the .proto names or
// their lowerCamelCase JSON names, 64-bit integers may be numbers or
// strings and bytes base64 strings (or []byte, which encoding/json writes
// as base64).
func EncodeMessage(s Schema, fullName string, value any) ([]byte, error) {
	if s.Type != schema.Protobuf {
		return nil, fmt.Errorf("serde: EncodeMessage takes a PROTOBUF schema, not %s", s.Type)
	}
	if s.Parsed == nil {
		return nil, ErrNotParsed
	}
	indexes := []int{0}
	if fullName != "" {
		var err error
		if indexes, err = protobuf.MessageIndexes(s.Parsed, fullName); err != nil {
			return nil, err
		}
	}
	md, err := protobuf.MessageByIndexes(s.Parsed, indexes)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEncode, err)
	}
	msg := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(text, msg); err != nil {
		return nil, fmt.Errorf("%w: message %s: %w", ErrEncode, md.FullName(), err)
	}
	payload, err := proto.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: message %s: %w", ErrEncode, md.FullName(), err)
	}
	out := wire.AppendHeader(nil, int32(s.ID))
	out = protobuf.AppendMessageIndexes(out, indexes)
	return append(out, payload...), nil
}

// Decode reads a value in Confluent's wire format: it fetches the schema
// its id names from c (cached) and decodes the payload to natural values
// as the package documentation describes. It returns the schema too.
func Decode(ctx context.Context, c *Client, data []byte) (value any, s Schema, err error) {
	id, payload, err := wire.ParseHeader(data)
	if err != nil {
		return nil, Schema{}, err
	}
	s, err = c.SchemaByID(ctx, int(id))
	if err != nil {
		return nil, Schema{}, err
	}
	value, err = DecodePayload(s, payload)
	return value, s, err
}

// DecodePayload decodes what follows the 5-byte header with s.
func DecodePayload(s Schema, payload []byte) (any, error) {
	if s.Parsed == nil {
		return nil, ErrNotParsed
	}
	switch s.Type {
	case schema.Avro:
		v, err := decodeAvro(avro.Schema(s.Parsed), payload)
		if err != nil {
			return nil, fmt.Errorf("%w: Avro, schema id %d: %w", ErrDecode, s.ID, err)
		}
		return v, nil
	case schema.JSON:
		v, err := decodeJSON(payload)
		if err != nil {
			return nil, fmt.Errorf("%w: JSON, schema id %d: %w", ErrDecode, s.ID, err)
		}
		return v, nil
	case schema.Protobuf:
		return decodeProtobuf(s, payload)
	}
	return nil, fmt.Errorf("serde: %w %q", schema.ErrUnknownType, s.Type)
}

// decodeProtobuf reads the message indexes and the message they name.
func decodeProtobuf(s Schema, payload []byte) (any, error) {
	indexes, n, err := protobuf.ReadMessageIndexes(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", ErrDecode, s.ID, err)
	}
	md, err := protobuf.MessageByIndexes(s.Parsed, indexes)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", ErrDecode, s.ID, err)
	}
	msg, err := protobuf.UnmarshalDynamic(md, payload[n:])
	if err != nil {
		return nil, fmt.Errorf("%w: message %s, schema id %d: %w", ErrDecode, md.FullName(), s.ID, err)
	}
	text, err := protojson.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: message %s, schema id %d: %w", ErrDecode, md.FullName(), s.ID, err)
	}
	v, err := decodeJSON(text)
	if err != nil {
		return nil, fmt.Errorf("%w: message %s: %w", ErrDecode, md.FullName(), err)
	}
	return v, nil
}
