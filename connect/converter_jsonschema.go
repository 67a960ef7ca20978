package connect

// JSONSchemaConverter is Confluent's
// io.confluent.connect.json.JsonSchemaConverter (short name
// "json_schema"): records are JSON text in Confluent's wire format, their
// schemas JSON Schemas in a schema registry, through registry/serde's
// client (the registry half is converter_registry.go's, shared with
// AvroConverter and ProtobufConverter).
//
// FromConnect, for a source's records:
//
//  1. a nil value is a nil record (a tombstone); nothing is registered;
//  2. the Connect schema becomes a JSON Schema as Confluent's
//     JsonSchemaData makes it (jsonschema_data.go), cached by the
//     *Schema; a nil schema (a schemaless value) fails the record;
//  3. the subject and id are chosen as for AvroConverter
//     (subject name strategies, auto.register.schemas,
//     use.latest.version with latest.compatibility.strict);
//  4. the value is written as JsonSchemaData writes it (bytes and
//     Decimal base64, Date as days, Time and Timestamp as milliseconds,
//     maps with non-string keys as [{"key":…,"value":…}]), validated
//     against the schema the record is framed with (jsonschema.Validate:
//     a value the schema refuses fails the record, as Confluent's
//     json.fail.invalid.schema=true), and framed: magic byte 0, the id as
//     4 bytes big-endian, the JSON text.
//
// ToConnect, for a sink's records: a nil record is a nil value with no
// schema; otherwise the header's id names the writer's JSON Schema
// (fetched and mapped to Connect once per id), and the JSON payload is
// read with it (not validated: what the producer validated is trusted,
// as Confluent's deserializer does by default). A schema written by
// another producer, without connect.* annotations, maps as
// jsonschema_data.go describes; one with no Connect form (allOf, a union
// of several types, {}) fails with ErrConversion, as does a record
// without the magic byte, an unknown id or a payload that does not fit.
//
// Settings: those of AvroConverter (schema.registry.url,
// auto.register.schemas, use.latest.version, latest.compatibility.strict,
// latest.cache.ttl.sec, key/value.subject.name.strategy, basic auth,
// truststore), decimal.format (BASE64, the default, or NUMERIC) and
// object.additional.properties (true, the default: structs are open
// content models, to which the registry, as Confluent's, refuses to add
// a property under BACKWARD — PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL; false
// writes "additionalProperties":false, and a new optional field then
// registers as a new version). Not supported: Confluent's
// use.optional.for.nonrequired, generalized sum types, $id references
// between Connect schemas, JSON Schema references to other subjects
// (their schemas are fetched and parsed, but a $ref into them fails).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// JSONSchemaConverterClass is Confluent's class name of the JSON Schema
// converter.
const JSONSchemaConverterClass = "io.confluent.connect.json.JsonSchemaConverter"

// JSONSchemaConverter is Confluent's JsonSchemaConverter; build it with
// NewConverterFor (or NewConverter for a value converter).
type JSONSchemaConverter struct {
	registry *registryConverter
	options  jsonSchemaOptions
	written  formCache[*Schema, *jsonWriteSchema] // Connect schema → its JSON Schema
	read     formCache[int, *Schema]              // id → the Connect form of its JSON Schema
}

type jsonWriteSchema struct {
	text   string
	parsed schema.Parsed
}

// newJSONSchemaConverter reads the converter's settings; it makes no
// request.
func newJSONSchemaConverter(props map[string]string, isKey bool) (*JSONSchemaConverter, error) {
	r, err := newRegistryConverter("JsonSchemaConverter", jsonschema.New(), props, isKey)
	if err != nil {
		return nil, err
	}
	c := &JSONSchemaConverter{registry: r}
	c.written.onReset = r.forgetWritten
	switch f := strings.ToUpper(strings.TrimSpace(props["decimal.format"])); f {
	case "", "BASE64":
	case "NUMERIC":
		c.options.decimalNumeric = true
	default:
		return nil, fmt.Errorf("connect: decimal.format %q: want BASE64 or NUMERIC", f)
	}
	if v, ok := props["object.additional.properties"]; ok {
		open, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("connect: object.additional.properties %q: want true or false", v)
		}
		c.options.closed = !open
	}
	return c, nil
}

// FromConnect implements Converter.
func (c *JSONSchemaConverter) FromConnect(topic string, s *Schema, value any) ([]byte, error) {
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
	doc, err := jsonSchemaValue(s, value, c.options.decimalNumeric, 0)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConversion, err)
	}
	var decoded any
	if err := unmarshalNumber(text, &decoded); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConversion, err)
	}
	if err := jsonschema.Validate(target.Parsed, decoded); err != nil {
		return nil, fmt.Errorf("%w: the value does not match the JSON schema of id %d: %v", ErrConversion, target.ID, err)
	}
	out := make([]byte, 0, wire.HeaderSize+len(text))
	out = wire.AppendHeader(out, int32(target.ID))
	return append(out, text...), nil
}

// writeSchema is the JSON Schema of s, cached by pointer.
func (c *JSONSchemaConverter) writeSchema(s *Schema) (*jsonWriteSchema, error) {
	return c.written.get(s, func() (*jsonWriteSchema, error) {
		text, err := jsonSchemaText(s, c.options)
		if err != nil {
			return nil, err
		}
		parsed, err := jsonschema.New().Parse(text, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: the JSON schema made of the Connect schema does not parse: %v", ErrConversion, err)
		}
		return &jsonWriteSchema{text: text, parsed: parsed}, nil
	})
}

// ToConnect implements Converter.
func (c *JSONSchemaConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	id, payload, err := parseFramed(data)
	if err != nil {
		return nil, nil, err
	}
	cs, err := c.readSchema(id)
	if err != nil {
		return nil, nil, err
	}
	var raw any
	if err := unmarshalNumber(payload, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: schema id %d: the payload is not JSON: %v", ErrConversion, id, err)
	}
	v, err := connectValueFromJSONSchema(cs, raw, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return cs, v, nil
}

// readSchema is the Connect form of an id's JSON Schema, cached.
func (c *JSONSchemaConverter) readSchema(id int) (*Schema, error) {
	return c.read.get(id, func() (*Schema, error) {
		s, err := c.registry.schemaByID(id)
		if err != nil {
			return nil, err
		}
		cs, err := connectSchemaFromJSON(s.Text)
		if err != nil {
			return nil, fmt.Errorf("schema id %d: %w", id, err)
		}
		return cs, nil
	})
}
