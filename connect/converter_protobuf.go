package connect

// ProtobufConverter is Confluent's
// io.confluent.connect.protobuf.ProtobufConverter (short name
// "protobuf"): records are Protobuf binary in Confluent's wire format,
// their schemas .proto files in a schema registry, through
// registry/serde's client (the registry half is converter_registry.go's,
// shared with AvroConverter and JsonSchemaConverter).
//
// FromConnect, for a source's records:
//
//  1. a nil value is a nil record (a tombstone); nothing is registered;
//  2. the Connect schema, which must be a struct, becomes a proto3 file
//     as Confluent's ProtobufData makes it (protobuf_data.go: message
//     named after the schema, ConnectDefault1 when unnamed, fields
//     numbered from 1 in Connect order, optional scalars as proto3
//     "optional" — Confluent's optional.for.nullables=true; its default,
//     a plain field, would turn null into 0 or ""), compiled by
//     registry/protobuf, cached by the *Schema;
//  3. the subject and id are chosen as for AvroConverter; with
//     use.latest.version the value is written with the latest version's
//     message of the same full name (else its first message), fields
//     matched by name;
//  4. the value is built as a dynamicpb message of that descriptor,
//     marshalled, and framed: magic byte 0, the id as 4 bytes big-endian,
//     the message indexes ([0], one 0x00 byte, for the first message),
//     the Protobuf binary.
//
// ToConnect, for a sink's records: a nil record is a nil value with no
// schema; otherwise the id names the writer's .proto (fetched once per
// id), the message indexes the message in it, the payload is unmarshalled
// into a dynamicpb message of that descriptor and mapped to Connect as
// protobuf_data.go describes (the Connect schema cached per id and
// indexes). A record without the magic byte, an unknown id, a schema of
// another type, indexes naming no message or a payload that does not
// unmarshal fails with ErrConversion.
//
// Settings: those of AvroConverter (schema.registry.url,
// auto.register.schemas, use.latest.version, latest.compatibility.strict,
// latest.cache.ttl.sec, key/value.subject.name.strategy, basic auth,
// truststore). Not supported: Confluent's wrapper.for.nullables,
// generalized sum types and enums, oneofs as Connect unions (a oneof's
// fields read as optional fields of the message), references to other
// subjects' .proto files in a written schema.

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// ProtobufConverterClass is Confluent's class name of the Protobuf
// converter.
const ProtobufConverterClass = "io.confluent.connect.protobuf.ProtobufConverter"

// ProtobufConverter is Confluent's ProtobufConverter; build it with
// NewConverterFor (or NewConverter for a value converter).
type ProtobufConverter struct {
	registry *registryConverter
	written  formCache[*Schema, *protoWriteSchema] // Connect schema → its .proto
	read     formCache[protoReadKey, *Schema]      // id and message indexes → the Connect form
}

type protoWriteSchema struct {
	text     string
	fullName string
	parsed   schema.Parsed
}

type protoReadKey struct {
	id      int
	indexes string
}

// newProtobufConverter reads the converter's settings; it makes no
// request.
func newProtobufConverter(props map[string]string, isKey bool) (*ProtobufConverter, error) {
	r, err := newRegistryConverter("ProtobufConverter", protobuf.New(), props, isKey)
	if err != nil {
		return nil, err
	}
	c := &ProtobufConverter{registry: r}
	c.written.onReset = r.forgetWritten
	return c, nil
}

// FromConnect implements Converter.
func (c *ProtobufConverter) FromConnect(topic string, s *Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	w, err := c.writeSchema(s)
	if err != nil {
		return nil, err
	}
	target, err := c.registry.target(topic, w, w.text, w.parsed)
	if err != nil {
		return nil, err
	}
	indexes, err := protobuf.MessageIndexes(target.Parsed, w.fullName)
	if err != nil {
		indexes = []int{0}
	}
	md, err := protobuf.MessageByIndexes(target.Parsed, indexes)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %v", ErrConversion, target.ID, err)
	}
	msg, err := protoMessage(md, s, value, 0)
	if err != nil {
		return nil, err
	}
	payload, err := proto.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: Protobuf encoding: %v", ErrConversion, err)
	}
	out := make([]byte, 0, wire.HeaderSize+1+len(payload))
	out = wire.AppendHeader(out, int32(target.ID))
	out = protobuf.AppendMessageIndexes(out, indexes)
	return append(out, payload...), nil
}

// writeSchema is the .proto of s, cached by pointer.
func (c *ProtobufConverter) writeSchema(s *Schema) (*protoWriteSchema, error) {
	return c.written.get(s, func() (*protoWriteSchema, error) {
		text, fullName, err := protoSchemaText(s)
		if err != nil {
			return nil, err
		}
		parsed, err := protobuf.New().Parse(text, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: the .proto made of the Connect schema does not compile: %v", ErrConversion, err)
		}
		return &protoWriteSchema{text: text, fullName: fullName, parsed: parsed}, nil
	})
}

// ToConnect implements Converter.
func (c *ProtobufConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	id, rest, err := parseFramed(data)
	if err != nil {
		return nil, nil, err
	}
	indexes, n, err := protobuf.ReadMessageIndexes(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: schema id %d: %v", ErrConversion, id, err)
	}
	s, err := c.registry.schemaByID(id)
	if err != nil {
		return nil, nil, err
	}
	md, err := protobuf.MessageByIndexes(s.Parsed, indexes)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: schema id %d: %v", ErrConversion, id, err)
	}
	cs, err := c.read.get(protoReadKey{id, indexesKey(indexes)}, func() (*Schema, error) {
		cs, err := connectSchemaFromProto(md)
		if err != nil {
			return nil, fmt.Errorf("schema id %d: %w", id, err)
		}
		return cs, nil
	})
	if err != nil {
		return nil, nil, err
	}
	msg, err := protobuf.UnmarshalDynamic(md, rest[n:])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: schema id %d, message %s: %v", ErrConversion, id, md.FullName(), err)
	}
	v, err := connectValueFromProto(cs, msg)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return cs, v, nil
}

func indexesKey(indexes []int) string {
	parts := make([]string, len(indexes))
	for i, n := range indexes {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
