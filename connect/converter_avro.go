package connect

// AvroConverter is Confluent's io.confluent.connect.avro.AvroConverter
// (short name "avro"): records are Avro binary in Confluent's wire format,
// their schemas in a schema registry (Strata's, package registry, or
// Confluent's), through registry/serde's client.
//
// FromConnect, for a source's records:
//
//  1. a nil value is a nil record (a tombstone); nothing is registered;
//  2. the Connect schema becomes an Avro schema as Confluent's AvroData
//     makes it (avro_data.go), cached by the *Schema;
//  3. the subject is named by key.subject.name.strategy or
//     value.subject.name.strategy (TopicNameStrategy: <topic>-key or
//     <topic>-value; RecordNameStrategy: the record's full name;
//     TopicRecordNameStrategy: <topic>-<full name>);
//  4. the schema's id: with use.latest.version the subject's latest
//     version is written instead (with latest.compatibility.strict, the
//     default, only if it can read the record's own schema); else with
//     auto.register.schemas (the default) the schema is registered (an id
//     the subject already has is reused), else looked up, and a schema the
//     subject lacks fails the record;
//  5. the value is encoded with hamba/avro and framed: magic byte 0, the
//     id as 4 bytes big-endian, the Avro binary (registry/wire).
//
// ToConnect, for a sink's records: a nil record is a nil value with no
// schema; otherwise the header's id names the writer's schema (fetched
// once per id), the payload is decoded with it (registry/serde's reader,
// which bounds lengths and block counts by the payload), and the Avro schema and
// value are mapped back to Connect (also cached per id). A record without
// the magic byte, an unknown id, a schema of another type or a payload
// that does not decode fails with ErrConversion.
//
// Settings (the converter's own, "key.converter."/"value.converter."
// removed):
//
//	schema.registry.url                      required; of several comma-separated URLs
//	                                         only the first is used (no failover)
//	auto.register.schemas                    true
//	use.latest.version                       false
//	latest.compatibility.strict              true
//	latest.cache.ttl.sec                     -1: the latest version is cached for the
//	                                         converter's life; n: for n seconds
//	key.subject.name.strategy,               TopicNameStrategy; Confluent's class names
//	value.subject.name.strategy              or the short names
//	basic.auth.credentials.source            URL (credentials in the URL) or USER_INFO
//	basic.auth.user.info                     user:password for USER_INFO (never logged)
//	schema.registry.ssl.truststore.location  a PEM file of CA certificates for https
//	                                         (truststore.type PEM; JKS and PKCS12 are refused)
//
// Errors wrap ErrConversion; when the registry cannot be reached the error
// is also a *RetriableError. Registry calls are bounded by a 30 s timeout.

import (
	"fmt"

	"github.com/hamba/avro/v2"

	avroformat "github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// AvroConverterClass is Confluent's class name of the Avro converter.
const AvroConverterClass = "io.confluent.connect.avro.AvroConverter"

// AvroConverter is Confluent's AvroConverter; build it with
// NewConverterFor (or NewConverter for a value converter).
type AvroConverter struct {
	registry *registryConverter
	written  formCache[*Schema, *avroWriteSchema] // Connect schema → its Avro form
	read     formCache[int, *avroReadSchema]      // id → the writer's schema and its Connect form
}

// avroWriteSchema is the Avro schema of a Connect schema.
type avroWriteSchema struct {
	text   string
	parsed schema.Parsed
	hamba  avro.Schema
}

type avroReadSchema struct {
	parsed  schema.Parsed
	hamba   avro.Schema
	connect *Schema
}

// newAvroConverter reads the converter's settings; it makes no request.
func newAvroConverter(props map[string]string, isKey bool) (*AvroConverter, error) {
	r, err := newRegistryConverter("AvroConverter", avroformat.New(), props, isKey)
	if err != nil {
		return nil, err
	}
	c := &AvroConverter{registry: r}
	c.written.onReset = r.forgetWritten
	return c, nil
}

// FromConnect implements Converter.
func (c *AvroConverter) FromConnect(topic string, s *Schema, value any) ([]byte, error) {
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
	hamba := w.hamba
	if target.Parsed != nil && c.registry.useLatest {
		hamba = avroformat.Schema(target.Parsed)
	}
	native, err := avroValue(s, hamba, value)
	if err != nil {
		return nil, err
	}
	payload, err := avro.Marshal(hamba, native)
	if err != nil {
		return nil, fmt.Errorf("%w: Avro encoding: %v", ErrConversion, err)
	}
	out := make([]byte, 0, wire.HeaderSize+len(payload))
	out = wire.AppendHeader(out, int32(target.ID))
	return append(out, payload...), nil
}

// writeSchema is the Avro form of s, cached by pointer.
func (c *AvroConverter) writeSchema(s *Schema) (*avroWriteSchema, error) {
	return c.written.get(s, func() (*avroWriteSchema, error) {
		text, err := avroSchemaText(s)
		if err != nil {
			return nil, err
		}
		parsed, err := avroformat.New().Parse(text, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: the Avro schema made of the Connect schema does not parse: %v", ErrConversion, err)
		}
		return &avroWriteSchema{text: text, parsed: parsed, hamba: avroformat.Schema(parsed)}, nil
	})
}

// ToConnect implements Converter.
func (c *AvroConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	id, payload, err := parseFramed(data)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.readSchema(id)
	if err != nil {
		return nil, nil, err
	}
	decoded, err := decodeAvroPayload(r.parsed, payload)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	v, err := connectValueFromAvro(r.connect, r.hamba, decoded)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return r.connect, v, nil
}

// readSchema is the writer's schema of an id and its Connect form, cached.
func (c *AvroConverter) readSchema(id int) (*avroReadSchema, error) {
	return c.read.get(id, func() (*avroReadSchema, error) {
		s, err := c.registry.schemaByID(id)
		if err != nil {
			return nil, err
		}
		h := avroformat.Schema(s.Parsed)
		cs, err := connectSchemaFromAvro(h)
		if err != nil {
			return nil, fmt.Errorf("schema id %d: %w", id, err)
		}
		return &avroReadSchema{parsed: s.Parsed, hamba: h, connect: cs}, nil
	})
}
