package connect

import (
	"context"
	"time"
)

// This file is the plugin API every connector implements, in the shape of
// Kafka Connect's (org.apache.kafka.connect.{connector,source,sink}): a
// Connector splits its configuration into task configurations; tasks move
// records. The runtime owns everything else: consumers, producers, offsets,
// converters, error handling and the REST API.

// Config is a connector's or task's configuration: Kafka Connect's string map.
type Config map[string]string

// ConfigError is one invalid setting, reported by Validate and by the REST
// validate endpoint under the setting's name.
type ConfigError struct {
	Name    string
	Message string
}

func (e *ConfigError) Error() string { return e.Name + ": " + e.Message }

// ConfigKey documents one setting for GET /connector-plugins/{type}/config
// and the validate endpoint.
type ConfigKey struct {
	Name          string
	Type          string // STRING, INT, LONG, BOOLEAN, LIST, PASSWORD, CLASS
	Default       string // "" with Required false means "no default"
	Required      bool
	Importance    string // HIGH, MEDIUM, LOW
	Documentation string
}

// Connector is the configuration-level half of a connector.
type Connector interface {
	// Start receives the connector's whole configuration.
	Start(ctx context.Context, cfg Config) error
	// TaskConfigs splits the work into at most maxTasks task configurations.
	TaskConfigs(maxTasks int) ([]Config, error)
	// Stop releases what Start acquired.
	Stop() error
	// ConfigKeys lists the settings the connector understands.
	ConfigKeys() []ConfigKey
	// Validate checks a configuration without starting anything; one error
	// per bad setting.
	Validate(cfg Config) []ConfigError
}

// SourceConnector marks a connector whose tasks are SourceTasks.
type SourceConnector interface {
	Connector
	NewTask() SourceTask
}

// SinkConnector marks a connector whose tasks are SinkTasks.
type SinkConnector interface {
	Connector
	NewTask() SinkTask
}

// OffsetReader gives a source task the last committed offset of each of its
// source partitions (Kafka Connect's OffsetStorageReader). A partition never
// committed returns nil. Offsets travel as JSON (the offset topic's format):
// integral numbers come back as int64, other numbers as float64, nested
// objects as map[string]any.
type OffsetReader interface {
	Offset(partition map[string]any) (map[string]any, error)
}

// SourceTask reads an external system and returns records with their source
// partition and offset; the runtime produces them and persists the offsets
// after the records are acknowledged (or, with exactly-once source support,
// in the same transaction).
type SourceTask interface {
	Start(ctx context.Context, cfg Config, offsets OffsetReader) error
	// Poll returns the next records; it may block until ctx is done and
	// returns (nil, nil) when there is nothing yet.
	Poll(ctx context.Context) ([]SourceRecord, error)
	// Commit is called after the offsets of all records returned so far were
	// persisted.
	Commit(ctx context.Context) error
	Stop() error
}

// SinkTask writes records to an external system.
type SinkTask interface {
	Start(ctx context.Context, cfg Config) error
	// Put hands over records in partition order. An error of type
	// *RetriableError makes the runtime redeliver the same records, with
	// backoff capped at 10 s, until the task stops (as Kafka Connect; not
	// bounded by errors.retry.timeout, never dead-lettered). Flush and a
	// source task's Poll are retried the same way.
	Put(ctx context.Context, records []SinkRecord) error
	// Flush makes everything handed to Put durable; the runtime commits the
	// consumer offsets only after Flush returns nil. After Flush fails with
	// an error that is not a *RetriableError, the task must have forgotten
	// the records handed over since its last successful Flush: under
	// errors.tolerance=all the runtime then hands them over again one at a
	// time (Put of one record, then Flush) and dead-letters those that fail.
	Flush(ctx context.Context) error
	Stop() error
}

// RetriableError wraps an error after which the same operation may succeed.
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string { return "retriable: " + e.Err.Error() }
func (e *RetriableError) Unwrap() error { return e.Err }

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// SourceRecord is a record a source task produced.
type SourceRecord struct {
	SourcePartition map[string]any
	SourceOffset    map[string]any
	Topic           string
	Partition       *int32 // nil: the producer's partitioner decides
	KeySchema       *Schema
	Key             any
	ValueSchema     *Schema
	Value           any // nil value = tombstone
	Timestamp       time.Time
	Headers         []Header
}

// SinkRecord is a record handed to a sink task, already converted.
type SinkRecord struct {
	Topic       string
	Partition   int32
	Offset      int64
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any // nil value = tombstone
	Timestamp   time.Time
	Headers     []Header
}

// Schema types, as Kafka Connect names them in the JSON converter's envelope.
const (
	TypeInt8    = "int8"
	TypeInt16   = "int16"
	TypeInt32   = "int32"
	TypeInt64   = "int64"
	TypeFloat32 = "float"
	TypeFloat64 = "double"
	TypeBoolean = "boolean"
	TypeString  = "string"
	TypeBytes   = "bytes"
	TypeArray   = "array"
	TypeMap     = "map"
	TypeStruct  = "struct"
)

// Logical type names Kafka Connect uses on top of the primitive types.
const (
	LogicalDecimal   = "org.apache.kafka.connect.data.Decimal"   // bytes, parameter "scale"
	LogicalDate      = "org.apache.kafka.connect.data.Date"      // int32 days since epoch
	LogicalTime      = "org.apache.kafka.connect.data.Time"      // int32 ms since midnight
	LogicalTimestamp = "org.apache.kafka.connect.data.Timestamp" // int64 ms since epoch, UTC
)

// Schema is a Kafka Connect schema. A Struct value is a *Struct whose Schema
// lists its fields in order.
//
// Go types of values, as the runtime's converters write and read them:
// int8/int16/int32/int64, float32/float64, bool, string, []byte, []any
// (array), map[string]any (map with string keys; map[any]any otherwise),
// *Struct, nil (null). Logical types: Decimal is *big.Rat (the converters
// also accept *big.Int, *big.Float, a numeric string, json.Number, float64
// or an integer when writing); Date, Time and Timestamp are time.Time (UTC).
// The JSON converter caches a schema's encoding by pointer, so a Schema must
// not be modified once a record carrying it was returned from Poll.
type Schema struct {
	Type       string
	Optional   bool
	Name       string // logical type or record name
	Version    int
	Doc        string
	Parameters map[string]string
	Default    any
	Fields     []Field // struct
	Items      *Schema // array
	KeyType    *Schema // map
	ValueType  *Schema // map
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Struct is a value of a struct schema; Values are in field order.
type Struct struct {
	Schema *Schema
	Values []any
}

// Get returns a field's value by name, and false when the schema has no such
// field.
func (s *Struct) Get(name string) (any, bool) {
	for i, f := range s.Schema.Fields {
		if f.Name == name {
			return s.Values[i], true
		}
	}
	return nil, false
}

// fieldValue is the value of s's field i in st: by position when st has
// that schema (or none), else by the field's name.
func (st *Struct) fieldValue(s *Schema, i int) any {
	if st.Schema != nil && st.Schema != s {
		v, _ := st.Get(s.Fields[i].Name)
		return v
	}
	if i < len(st.Values) {
		return st.Values[i]
	}
	return nil
}

// Plugin is one connector class the runtime can instantiate.
type Plugin struct {
	// Class is the canonical name (e.g. "jdbc-source"); Aliases are other
	// names configs may use in connector.class (e.g. Confluent's class).
	Class   string
	Aliases []string
	Type    string // "source" or "sink"
	Version string
	// Logger names the logger the connector and its tasks get through
	// LoggerFrom (loggers.go); "" is strata.connect.plugin.<Class>.
	Logger string
	New    func() Connector // returns a SourceConnector or a SinkConnector
}

var plugins = map[string]*Plugin{}

// Register makes a connector class available by its class name and aliases.
// Built-in connectors call it from their package's init; a name registered
// twice panics.
func Register(p Plugin) {
	for _, name := range append([]string{p.Class}, p.Aliases...) {
		if _, dup := plugins[name]; dup {
			panic("connect: plugin " + name + " registered twice")
		}
		plugins[name] = &p
	}
}

// LookupPlugin finds a plugin by class name or alias.
func LookupPlugin(class string) (*Plugin, bool) {
	p, ok := plugins[class]
	return p, ok
}

// Plugins lists every registered plugin once, in no particular order.
func Plugins() []*Plugin {
	seen := map[*Plugin]bool{}
	var out []*Plugin
	for _, p := range plugins {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
