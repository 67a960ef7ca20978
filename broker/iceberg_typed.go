package broker

// Typed Iceberg modes (ARCHITECTURE.md, "Iceberg topics"), Redpanda's:
//
//	iceberg.mode=value_schema_id_prefix  each value is in Confluent's wire
//	                                     format (magic byte 0, 4-byte schema
//	                                     id); the id's schema decodes it
//	iceberg.mode=value_schema_latest     each value is a bare payload decoded
//	                                     with the latest schema of
//	                                     iceberg.value.subject (default
//	                                     <topic>-value)
//
// The schemas come from the node's schema registry (package registry,
// schema.registry.enable=true), asked through IcebergSchemaRegistry from
// its in-memory view (CatchUp alone reads the schemas topic's end). Avro,
// JSON Schema and Protobuf values become typed columns (tiering/iceberg's
// AvroStruct, JSONSchemaStruct, ProtobufStruct; a bare Protobuf value of
// value_schema_latest is the schema's first message); the table's schema
// evolves by name as new schema ids appear. A record that does not decode
// (not framed, an unknown id, a payload that does not match its schema, a
// schema with no table layout or whose change Iceberg does not allow)
// goes to the dead-letter table <topic>~dlq (Redpanda's
// name) in the key_value layout. The dead-letter table is committed first,
// then the main table with every offset read (even when all went to the
// dead-letter table), so the main table's offsets are where the next
// commit resumes and the two tables together hold every offset once.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	icebergschema "github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/reflect/protoreflect"

	registryavro "github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
	"github.com/strata-streaming/strata/tiering/iceberg"
)

// icebergValueSubjectConfig names the subject of value_schema_latest.
const icebergValueSubjectConfig = "iceberg.value.subject"

// icebergDLQSuffix names a topic's dead-letter table: <topic>~dlq, beside
// the topic's own (a topic name never holds '~').
const icebergDLQSuffix = "~dlq"

// IcebergSchemaRegistry is what the typed Iceberg modes need of the node's
// schema registry. The registry given to SetSchemaValidator satisfies it
// (package registry: ParsedSchema, LatestSchemaID); both answer from
// memory, with no network I/O.
type IcebergSchemaRegistry interface {
	// ParsedSchema is the schema id names, parsed with its references.
	ParsedSchema(id int) (schema.Type, schema.Parsed, error)
	// LatestSchemaID is the id of subject's latest live version.
	LatestSchemaID(subject string) (int, error)
	// CatchUp waits until the registry knows every schema registered
	// before the call (through any node); it reads the schemas topic's
	// end offset, so it is network I/O.
	CatchUp(ctx context.Context) error
}

// icebergCatchUpTimeout bounds one CatchUp of the registry.
const icebergCatchUpTimeout = 10 * time.Second

// validateIcebergSubject accepts "" (<topic>-value) or a subject name.
func validateIcebergSubject(v string) error {
	if len(v) > 255 || strings.ContainsAny(v, "\x00\n") {
		return fmt.Errorf("%q is not a subject name", v)
	}
	return nil
}

func icebergTyped(cfg effectiveTopicConfig) bool {
	mode := cfg.values[icebergModeConfig]
	return mode == icebergModeSchemaIDPrefix || mode == icebergModeSchemaLatest
}

// icebergValueSchema is one registry schema as the typed modes use it.
type icebergValueSchema struct {
	id     int
	schema serde.Schema
	avro   avro.Schema               // Avro only
	value  *icebergschema.StructType // Avro and JSON Schema; Protobuf: messages
	// messages are the structs of the Protobuf messages values named (by
	// their message indexes) so far.
	messages map[protoreflect.FullName]*icebergschema.StructType
}

// maxIcebergValueSchemas bounds the committer's cache of value schemas.
const maxIcebergValueSchemas = 1024

// valueSchema returns the schema id names, from the cache or the registry.
// Only schemas that work are cached: an unknown id may be registered
// later (the registry's view trails its topic by a moment).
func (c *icebergCommitter) valueSchema(reg IcebergSchemaRegistry, id int) (*icebergValueSchema, error) {
	if vs := c.valueSchemas[id]; vs != nil {
		return vs, nil
	}
	typ, parsed, err := reg.ParsedSchema(id)
	if err != nil {
		return nil, err
	}
	vs := &icebergValueSchema{id: id, schema: serde.Schema{ID: id, Type: typ, Parsed: parsed}}
	switch typ {
	case schema.Avro:
		vs.avro = registryavro.Schema(parsed)
		if vs.avro == nil {
			return nil, fmt.Errorf("schema id %d is not an Avro schema", id)
		}
		vs.value, err = iceberg.AvroStruct(vs.avro)
	case schema.JSON:
		vs.value, err = iceberg.JSONSchemaStruct(parsed.Canonical())
	case schema.Protobuf:
		vs.messages = map[protoreflect.FullName]*icebergschema.StructType{}
	default:
		err = fmt.Errorf("schema id %d is %s: typed Iceberg tables are built for Avro, JSON Schema and Protobuf values", id, typ)
	}
	if err != nil {
		return nil, err
	}
	if len(c.valueSchemas) >= maxIcebergValueSchemas {
		clear(c.valueSchemas)
	}
	c.valueSchemas[id] = vs
	return vs, nil
}

// decode turns a payload into the value's columns and returns the struct
// they fit (a Protobuf schema has one per message).
func (vs *icebergValueSchema) decode(payload []byte, framed bool) (map[string]any, *icebergschema.StructType, error) {
	if vs.messages != nil {
		return vs.decodeProtobuf(payload, framed)
	}
	v, err := serde.DecodePayload(vs.schema, payload)
	if err != nil {
		return nil, nil, err
	}
	if vs.avro != nil {
		v = iceberg.NormalizeAvro(vs.avro, v)
	}
	fields, err := iceberg.CoerceValue(vs.value, v)
	return fields, vs.value, err
}

// decodeProtobuf reads the message indexes and the message they name; a
// bare payload (not framed) is the schema's first message.
func (vs *icebergValueSchema) decodeProtobuf(payload []byte, framed bool) (map[string]any, *icebergschema.StructType, error) {
	indexes, n := []int{0}, 0
	if framed {
		var err error
		if indexes, n, err = protobuf.ReadMessageIndexes(payload); err != nil {
			return nil, nil, err
		}
	}
	md, err := protobuf.MessageByIndexes(vs.schema.Parsed, indexes)
	if err != nil {
		return nil, nil, err
	}
	st := vs.messages[md.FullName()]
	if st == nil {
		if st, err = iceberg.ProtobufStruct(md); err != nil {
			return nil, nil, err
		}
		vs.messages[md.FullName()] = st
	}
	msg, err := protobuf.UnmarshalDynamic(md, payload[n:])
	if err != nil {
		return nil, nil, err
	}
	fields, err := iceberg.CoerceValue(st, iceberg.ProtobufValue(msg))
	return fields, st, err
}

// icebergDeadLetter is a record for the dead-letter table and why.
type icebergDeadLetter struct {
	record iceberg.Record
	reason string
}

// decodeTyped decodes the values of records for a typed table whose
// current schema is cur (lastColumnID its last field ID): rows gets the
// records that decode, in order, with Fields set; dead the others;
// valueTypes the value schemas the rows were decoded with, in id order,
// each one an evolution Iceberg allows of the table and the ones before.
// An error (no registry on this node, a subject without a version) leaves
// every record where it is: the commit fails and is retried.
func (c *icebergCommitter) decodeTyped(ctx context.Context, topic string, cfg effectiveTopicConfig, cur *icebergschema.Schema, lastColumnID int, records []iceberg.Record) (rows []iceberg.Record, dead []icebergDeadLetter, valueTypes []*icebergschema.StructType, err error) {
	reg, _ := c.s.schemaValidatorNow().(IcebergSchemaRegistry)
	if reg == nil {
		return nil, nil, nil, fmt.Errorf("iceberg.mode=%s needs this node's schema registry (schema.registry.enable=true)", cfg.values[icebergModeConfig])
	}
	prefixed := cfg.values[icebergModeConfig] == icebergModeSchemaIDPrefix
	// The registry may trail a schema registered through another node a
	// moment ago: value_schema_latest catches up before it picks the
	// latest version, value_schema_id_prefix before it calls an id
	// unknown. A registry that cannot catch up fails the commit (retried):
	// no record becomes a dead letter for a lagging registry.
	caughtUp := false
	catchUp := func() error {
		if caughtUp {
			return nil
		}
		caughtUp = true
		cctx, cancel := context.WithTimeout(ctx, icebergCatchUpTimeout)
		defer cancel()
		if err := reg.CatchUp(cctx); err != nil {
			return fmt.Errorf("schema registry: %w", err)
		}
		return nil
	}
	latest := 0
	if !prefixed {
		if err := catchUp(); err != nil {
			return nil, nil, nil, err
		}
		subject := cfg.values[icebergValueSubjectConfig]
		if subject == "" {
			subject = topic + "-value"
		}
		if latest, err = reg.LatestSchemaID(subject); err != nil {
			return nil, nil, nil, fmt.Errorf("iceberg.mode=%s: %w", icebergModeSchemaLatest, err)
		}
	}
	// The struct each record's value was decoded with (nil: a tombstone,
	// a row whose value columns are null), or why it is a dead letter.
	types := make([]*icebergschema.StructType, len(records))
	reasons := map[int]string{}
	used := map[*icebergschema.StructType]int{} // the schema id of each struct
	pace := iceberg.NewPaceCounter(icebergCtxPacer{})
	for i := range records {
		r := &records[i]
		if err := pace.Add(ctx, 1, len(r.Value)); err != nil {
			return nil, nil, nil, err
		}
		if r.Value == nil {
			continue
		}
		id, payload := latest, r.Value
		if prefixed {
			id32, rest, perr := wire.ParseHeader(r.Value)
			if perr != nil {
				reasons[i] = "not in Confluent's wire format (magic byte 0, 4-byte schema id)"
				continue
			}
			id, payload = int(id32), rest
		}
		vs, verr := c.valueSchema(reg, id)
		if verr != nil && !caughtUp {
			if err := catchUp(); err != nil {
				return nil, nil, nil, err
			}
			vs, verr = c.valueSchema(reg, id)
		}
		if verr != nil {
			reasons[i] = verr.Error()
			continue
		}
		fields, st, derr := vs.decode(payload, prefixed)
		if derr != nil {
			reasons[i] = fmt.Sprintf("schema id %d: %v", id, derr)
			continue
		}
		r.Fields, types[i] = fields, st
		used[st] = id
	}
	// Evolve in id order (registration order); a schema whose change
	// Iceberg does not allow sends its records to the dead-letter table.
	order := make([]*icebergschema.StructType, 0, len(used))
	for st := range used {
		order = append(order, st)
	}
	sort.SliceStable(order, func(i, j int) bool { return used[order[i]] < used[order[j]] })
	refused := map[*icebergschema.StructType]string{}
	for _, st := range order {
		next, changed, eerr := iceberg.EvolveSchema(cur, lastColumnID, st)
		if eerr != nil {
			refused[st] = fmt.Sprintf("schema id %d: %v", used[st], eerr)
			continue
		}
		if changed {
			cur, lastColumnID = next, next.HighestFieldID()
		}
		valueTypes = append(valueTypes, st)
	}
	for i, r := range records {
		if reason, ok := refused[types[i]]; ok && types[i] != nil {
			reasons[i] = reason
		}
		if reason, ok := reasons[i]; ok {
			r.Fields = nil
			dead = append(dead, icebergDeadLetter{record: r, reason: reason})
			continue
		}
		rows = append(rows, r)
	}
	return rows, dead, valueTypes, nil
}

// errIcebergModeChanged: the table was made for another iceberg.mode.
var errIcebergModeChanged = errors.New("iceberg.mode cannot change once the table exists")
