package iceberg

// Typed tables (iceberg.mode=value_schema_id_prefix and
// value_schema_latest): the record value's fields, decoded with a schema of
// the schema registry, become typed columns; the Kafka coordinates go in
// one struct column, KafkaColumn, as Redpanda keeps them in its `redpanda`
// struct. The broker decodes; this file maps schemas to Iceberg types
// (AvroStruct, JSONSchemaStruct), checks and converts decoded values
// (CoerceValue) and evolves a table's schema by name (EvolveSchema).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	iceberg "github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"
)

// KafkaColumn is the struct column of a typed table that holds each row's
// Kafka partition, offset, timestamp, key and headers. A value field of
// that name is refused (ErrUnsupportedSchema).
const KafkaColumn = "kafka"

// ErrUnsupportedSchema: a value schema that has no Iceberg table layout
// (not a record at the top, a union of several non-null types, a recursive
// type) or that changes a column's type in a way Iceberg does not allow.
var ErrUnsupportedSchema = errors.New("iceberg: schema not supported")

// ErrValue: a decoded value does not fit its schema's columns.
var ErrValue = errors.New("iceberg: value does not fit the schema")

// Layout is how a table stores records.
type Layout int

const (
	// LayoutKeyValue: key and value as binary columns (KeyValueSchema).
	LayoutKeyValue Layout = iota
	// LayoutTyped: the value's fields as columns, evolved with the value
	// schemas (TypedSchema), and the Kafka coordinates in KafkaColumn.
	LayoutTyped
)

// kafkaStruct is the type of KafkaColumn (field IDs assigned by the caller).
func kafkaStruct() *iceberg.StructType {
	header := &iceberg.StructType{FieldList: []iceberg.NestedField{
		{Name: "key", Type: iceberg.PrimitiveTypes.String},
		{Name: "value", Type: iceberg.PrimitiveTypes.Binary},
	}}
	return &iceberg.StructType{FieldList: []iceberg.NestedField{
		{Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		{Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{Name: "timestamp", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		{Name: "key", Type: iceberg.PrimitiveTypes.Binary},
		{Name: "headers", Type: &iceberg.ListType{Element: header, ElementRequired: true}},
	}}
}

// TypedSchema is the schema a typed table starts with, before any value
// schema is merged in: only KafkaColumn (field IDs from 1).
func TypedSchema() *iceberg.Schema {
	sc, err := iceberg.AssignFreshSchemaIDs(iceberg.NewSchema(0,
		iceberg.NestedField{Name: KafkaColumn, Type: kafkaStruct(), Required: true}), nil)
	if err != nil {
		panic(err) // a fixed schema
	}
	return sc
}

// kafkaTimestampColumn is the partition source of typed tables.
const kafkaTimestampColumn = KafkaColumn + ".timestamp"

// AvroStruct maps an Avro record schema to the Iceberg struct of its
// columns (field IDs 0: the table assigns them):
//
//	Avro                                  Iceberg
//	boolean, int, long, float, double     boolean, int, long, float, double
//	string, enum, string/uuid             string
//	bytes, fixed                          binary, fixed(n)
//	decimal (bytes or fixed)              decimal(p, s)
//	date                                  date
//	time-millis, time-micros              time
//	timestamp-millis, timestamp-micros    timestamptz
//	local-timestamp-millis/-micros        timestamp
//	record                                struct
//	array                                 list
//	map                                   map<string, …>
//	union of null and one type            that type (every column is optional anyway)
//
// Every column is optional: a field a later schema removes reads null in
// new rows. Unions of several non-null types and recursive records are
// refused (ErrUnsupportedSchema).
func AvroStruct(s avro.Schema) (*iceberg.StructType, error) {
	rec, ok := derefAvro(s).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("%w: the value schema is an Avro %s, not a record", ErrUnsupportedSchema, s.Type())
	}
	t, err := avroType(rec, nil)
	if err != nil {
		return nil, err
	}
	st := t.(*iceberg.StructType)
	for _, f := range st.FieldList {
		if f.Name == KafkaColumn {
			return nil, fmt.Errorf("%w: a value field named %q (the column of the Kafka coordinates)", ErrUnsupportedSchema, KafkaColumn)
		}
	}
	return st, nil
}

func derefAvro(s avro.Schema) avro.Schema {
	if ref, ok := s.(*avro.RefSchema); ok {
		return ref.Schema()
	}
	return s
}

func avroType(s avro.Schema, records []string) (iceberg.Type, error) {
	s = derefAvro(s)
	switch s := s.(type) {
	case *avro.RecordSchema:
		for _, name := range records {
			if name == s.FullName() {
				return nil, fmt.Errorf("%w: record %s contains itself", ErrUnsupportedSchema, name)
			}
		}
		records = append(records, s.FullName())
		st := &iceberg.StructType{}
		for _, f := range s.Fields() {
			t, err := avroType(f.Type(), records)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", s.Name(), f.Name(), err)
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{Name: f.Name(), Type: t, Doc: f.Doc()})
		}
		return st, nil
	case *avro.UnionSchema:
		var branch avro.Schema
		for _, b := range s.Types() {
			if b.Type() == avro.Null {
				continue
			}
			if branch != nil {
				return nil, fmt.Errorf("%w: a union of several non-null types (%s)", ErrUnsupportedSchema, s)
			}
			branch = b
		}
		if branch == nil {
			return nil, fmt.Errorf("%w: a union of null alone", ErrUnsupportedSchema)
		}
		return avroType(branch, records)
	case *avro.ArraySchema:
		elem, err := avroType(s.Items(), records)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: elem}, nil
	case *avro.MapSchema:
		value, err := avroType(s.Values(), records)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.String, ValueType: value}, nil
	case *avro.EnumSchema:
		return iceberg.PrimitiveTypes.String, nil
	case *avro.FixedSchema:
		if dec, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return decimalType(dec)
		}
		return iceberg.FixedTypeOf(s.Size()), nil
	case *avro.PrimitiveSchema:
		if l := s.Logical(); l != nil {
			switch l.Type() {
			case avro.Decimal:
				return decimalType(l.(*avro.DecimalLogicalSchema))
			case avro.Date:
				return iceberg.PrimitiveTypes.Date, nil
			case avro.TimeMillis, avro.TimeMicros:
				return iceberg.PrimitiveTypes.Time, nil
			case avro.TimestampMillis, avro.TimestampMicros:
				return iceberg.PrimitiveTypes.TimestampTz, nil
			case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
				return iceberg.PrimitiveTypes.Timestamp, nil
			}
		}
		switch s.Type() {
		case avro.Boolean:
			return iceberg.PrimitiveTypes.Bool, nil
		case avro.Int:
			return iceberg.PrimitiveTypes.Int32, nil
		case avro.Long:
			return iceberg.PrimitiveTypes.Int64, nil
		case avro.Float:
			return iceberg.PrimitiveTypes.Float32, nil
		case avro.Double:
			return iceberg.PrimitiveTypes.Float64, nil
		case avro.String:
			return iceberg.PrimitiveTypes.String, nil
		case avro.Bytes:
			return iceberg.PrimitiveTypes.Binary, nil
		}
	}
	return nil, fmt.Errorf("%w: Avro type %s has no column type", ErrUnsupportedSchema, s.Type())
}

func decimalType(dec *avro.DecimalLogicalSchema) (iceberg.Type, error) {
	if dec.Precision() > 38 {
		return nil, fmt.Errorf("%w: decimal precision %d (Iceberg allows 38)", ErrUnsupportedSchema, dec.Precision())
	}
	return iceberg.DecimalTypeOf(dec.Precision(), dec.Scale()), nil
}

// NormalizeAvro turns a value as registry/serde decodes Avro (date, time
// and timestamps as the stored number) into the values CoerceValue takes
// for their columns: time.Time for dates and timestamps, time.Duration
// for times. Maps and slices are changed in place.
func NormalizeAvro(s avro.Schema, v any) any {
	if v == nil {
		return nil
	}
	s = derefAvro(s)
	switch s := s.(type) {
	case *avro.RecordSchema:
		if m, ok := v.(map[string]any); ok {
			for _, f := range s.Fields() {
				m[f.Name()] = NormalizeAvro(f.Type(), m[f.Name()])
			}
		}
	case *avro.UnionSchema:
		for _, b := range s.Types() {
			if b.Type() != avro.Null {
				return NormalizeAvro(b, v)
			}
		}
	case *avro.ArraySchema:
		if items, ok := v.([]any); ok {
			for i := range items {
				items[i] = NormalizeAvro(s.Items(), items[i])
			}
		}
	case *avro.MapSchema:
		if m, ok := v.(map[string]any); ok {
			for k := range m {
				m[k] = NormalizeAvro(s.Values(), m[k])
			}
		}
	case *avro.PrimitiveSchema:
		n, ok := v.(int64)
		if !ok || s.Logical() == nil {
			return v
		}
		switch s.Logical().Type() {
		case avro.Date:
			return time.Unix(n*86400, 0).UTC()
		case avro.TimeMillis:
			return time.Duration(n) * time.Millisecond
		case avro.TimeMicros:
			return time.Duration(n) * time.Microsecond
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			return time.UnixMilli(n).UTC()
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return time.UnixMicro(n).UTC()
		}
	}
	return v
}

// JSONSchemaStruct maps a JSON Schema (its text) whose top is an object
// to the Iceberg struct of its columns (field IDs 0):
//
//	JSON Schema                                Iceberg
//	boolean, integer, number, string           boolean, long, double, string
//	string with format date-time, date         timestamptz, date
//	object with properties                     struct (columns in name order)
//	object with only additionalProperties      map<string, …>
//	array with items                           list
//	["null", T], anyOf/oneOf of null and T     T
//	local $ref (#/definitions/…, #/$defs/…)    what it names
//	anything else (several types, no type)     string: the value's JSON text
//
// Every column is optional.
func JSONSchemaStruct(text string) (*iceberg.StructType, error) {
	var doc any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%w: JSON Schema: %v", ErrUnsupportedSchema, err)
	}
	t, err := jsonType(doc, doc, 0)
	if err != nil {
		return nil, err
	}
	st, ok := t.(*iceberg.StructType)
	if !ok {
		return nil, fmt.Errorf("%w: the JSON Schema does not describe an object with properties", ErrUnsupportedSchema)
	}
	for _, f := range st.FieldList {
		if f.Name == KafkaColumn {
			return nil, fmt.Errorf("%w: a value property named %q (the column of the Kafka coordinates)", ErrUnsupportedSchema, KafkaColumn)
		}
	}
	return st, nil
}

const maxJSONSchemaDepth = 32

func jsonType(root, node any, depth int) (iceberg.Type, error) {
	if depth > maxJSONSchemaDepth {
		return nil, fmt.Errorf("%w: JSON Schema nested deeper than %d (a recursive $ref?)", ErrUnsupportedSchema, maxJSONSchemaDepth)
	}
	obj, ok := node.(map[string]any)
	if !ok {
		return iceberg.PrimitiveTypes.String, nil // true, false: anything
	}
	if ref, ok := obj["$ref"].(string); ok {
		target, err := jsonPointer(root, ref)
		if err != nil {
			return nil, err
		}
		return jsonType(root, target, depth+1)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := obj[key].([]any); ok {
			var nonNull []any
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] == "null" {
					continue
				}
				nonNull = append(nonNull, a)
			}
			if len(nonNull) == 1 {
				return jsonType(root, nonNull[0], depth+1)
			}
			return iceberg.PrimitiveTypes.String, nil
		}
	}
	typ, _ := obj["type"].(string)
	if types, ok := obj["type"].([]any); ok {
		var nonNull []string
		for _, t := range types {
			if s, ok := t.(string); ok && s != "null" {
				nonNull = append(nonNull, s)
			}
		}
		if len(nonNull) == 1 {
			typ = nonNull[0]
		}
	}
	switch typ {
	case "boolean":
		return iceberg.PrimitiveTypes.Bool, nil
	case "integer":
		return iceberg.PrimitiveTypes.Int64, nil
	case "number":
		return iceberg.PrimitiveTypes.Float64, nil
	case "string":
		switch obj["format"] {
		case "date-time":
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case "date":
			return iceberg.PrimitiveTypes.Date, nil
		}
		return iceberg.PrimitiveTypes.String, nil
	case "array":
		items, ok := obj["items"]
		if !ok {
			return &iceberg.ListType{Element: iceberg.PrimitiveTypes.String}, nil
		}
		elem, err := jsonType(root, items, depth+1)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: elem}, nil
	case "object":
		props, _ := obj["properties"].(map[string]any)
		if len(props) == 0 {
			if extra, ok := obj["additionalProperties"].(map[string]any); ok {
				value, err := jsonType(root, extra, depth+1)
				if err != nil {
					return nil, err
				}
				return &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.String, ValueType: value}, nil
			}
			return iceberg.PrimitiveTypes.String, nil
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		st := &iceberg.StructType{}
		for _, name := range names {
			t, err := jsonType(root, props[name], depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			doc, _ := props[name].(map[string]any)["description"].(string)
			st.FieldList = append(st.FieldList, iceberg.NestedField{Name: name, Type: t, Doc: doc})
		}
		return st, nil
	}
	return iceberg.PrimitiveTypes.String, nil
}

// jsonPointer resolves a local $ref ("#/definitions/x").
func jsonPointer(root any, ref string) (any, error) {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("%w: $ref %q is not local to the schema", ErrUnsupportedSchema, ref)
	}
	node := root
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: $ref %q names nothing", ErrUnsupportedSchema, ref)
		}
		if node, ok = obj[part]; !ok {
			return nil, fmt.Errorf("%w: $ref %q names nothing", ErrUnsupportedSchema, ref)
		}
	}
	return node, nil
}

// EvolveSchema merges value (a struct from AvroStruct or JSONSchemaStruct)
// into cur, a typed table's schema, by name: a column cur has keeps its
// field ID (and its type, or the wider one where Iceberg allows the
// promotion: int to long, float to double, a decimal's precision up); a
// column new to cur gets new IDs above lastColumnID; a column value lacks
// stays (old rows keep it; new ones read null). changed says whether the
// result differs from cur. A type change Iceberg does not allow is
// ErrUnsupportedSchema.
func EvolveSchema(cur *iceberg.Schema, lastColumnID int, value *iceberg.StructType) (next *iceberg.Schema, changed bool, err error) {
	nextID := func() int {
		lastColumnID++
		return lastColumnID
	}
	top := &iceberg.StructType{FieldList: cur.Fields()}
	merged, changed, err := mergeStruct(top, value, nextID, "")
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return cur, false, nil
	}
	return iceberg.NewSchema(cur.ID+1, merged.FieldList...), true, nil
}

func mergeStruct(cur, in *iceberg.StructType, nextID func() int, path string) (*iceberg.StructType, bool, error) {
	out := &iceberg.StructType{FieldList: make([]iceberg.NestedField, 0, len(cur.FieldList))}
	changed := false
	byName := make(map[string]iceberg.NestedField, len(in.FieldList))
	for _, f := range in.FieldList {
		byName[f.Name] = f
	}
	for _, f := range cur.FieldList {
		if g, ok := byName[f.Name]; ok {
			t, c, err := mergeType(f.Type, g.Type, nextID, path+f.Name)
			if err != nil {
				return nil, false, err
			}
			f.Type = t
			changed = changed || c
			delete(byName, f.Name)
		}
		out.FieldList = append(out.FieldList, f)
	}
	for _, g := range in.FieldList {
		if _, ok := byName[g.Name]; !ok {
			continue
		}
		fresh, err := iceberg.AssignFreshSchemaIDs(iceberg.NewSchema(0, g), nextID)
		if err != nil {
			return nil, false, fmt.Errorf("iceberg: new column %s%s: %w", path, g.Name, err)
		}
		f := fresh.Field(0)
		f.Required = false
		out.FieldList = append(out.FieldList, f)
		changed = true
	}
	return out, changed, nil
}

func mergeType(cur, in iceberg.Type, nextID func() int, path string) (iceberg.Type, bool, error) {
	switch c := cur.(type) {
	case *iceberg.StructType:
		if i, ok := in.(*iceberg.StructType); ok {
			return mergeStruct(c, i, nextID, path+".")
		}
	case *iceberg.ListType:
		if i, ok := in.(*iceberg.ListType); ok {
			elem, changed, err := mergeType(c.Element, i.Element, nextID, path+".element")
			if err != nil || !changed {
				return cur, false, err
			}
			return &iceberg.ListType{ElementID: c.ElementID, Element: elem, ElementRequired: c.ElementRequired}, true, nil
		}
	case *iceberg.MapType:
		if i, ok := in.(*iceberg.MapType); ok && c.KeyType.Equals(i.KeyType) {
			value, changed, err := mergeType(c.ValueType, i.ValueType, nextID, path+".value")
			if err != nil || !changed {
				return cur, false, err
			}
			return &iceberg.MapType{KeyID: c.KeyID, KeyType: c.KeyType, ValueID: c.ValueID, ValueType: value, ValueRequired: c.ValueRequired}, true, nil
		}
	default:
		if cur.Equals(in) {
			return cur, false, nil
		}
		if promoted(cur, in) {
			return in, true, nil
		}
		if promoted(in, cur) {
			return cur, false, nil // the column is already wider
		}
	}
	return nil, false, fmt.Errorf("%w: column %s is %s in the table and %s in the new schema (Iceberg allows only int to long, float to double and a wider decimal)", ErrUnsupportedSchema, path, cur, in)
}

// promoted reports whether Iceberg lets a column of type from become to.
func promoted(from, to iceberg.Type) bool {
	switch {
	case from.Equals(iceberg.PrimitiveTypes.Int32) && to.Equals(iceberg.PrimitiveTypes.Int64),
		from.Equals(iceberg.PrimitiveTypes.Float32) && to.Equals(iceberg.PrimitiveTypes.Float64):
		return true
	}
	f, ok1 := from.(iceberg.DecimalType)
	t, ok2 := to.(iceberg.DecimalType)
	return ok1 && ok2 && f.Scale() == t.Scale() && t.Precision() > f.Precision()
}

// The values CoerceValue returns, one Go type per column type:
//
//	boolean bool, int int32, long int64, float float32, double float64,
//	decimal decimal128.Num, string string, binary and fixed []byte,
//	date int32 (days), time int64 (µs), timestamp(tz) int64 (µs),
//	struct map[string]any, list []any, map []mapEntry (by key).
type mapEntry struct {
	key   string
	value any
}

// CoerceValue checks that v (a decoded value: the shapes registry/serde
// gives, after NormalizeAvro for Avro) fits t and returns it in the Go
// types the Parquet writer takes. A value that does not fit is ErrValue.
func CoerceValue(t *iceberg.StructType, v any) (map[string]any, error) {
	out, err := coerce(t, v, "")
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("%w: the value is null, not a record", ErrValue)
	}
	return out.(map[string]any), nil
}

func coerce(t iceberg.Type, v any, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) {
		return nil, fmt.Errorf("%w: %s: %T %.40v for a %s column", ErrValue, strings.TrimPrefix(path, "."), v, v, t)
	}
	switch t := t.(type) {
	case *iceberg.StructType:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(t.FieldList))
		for _, f := range t.FieldList {
			c, err := coerce(f.Type, m[f.Name], path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			out[f.Name] = c
		}
		return out, nil
	case *iceberg.ListType:
		items, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(items))
		for i, item := range items {
			c, err := coerce(t.Element, item, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *iceberg.MapType:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make([]mapEntry, 0, len(m))
		for k, item := range m {
			c, err := coerce(t.ValueType, item, path+"."+k)
			if err != nil {
				return nil, err
			}
			out = append(out, mapEntry{k, c})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
		return out, nil
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case iceberg.Int32Type:
		if n, ok := wholeNumber(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), nil
		}
	case iceberg.Int64Type:
		if n, ok := wholeNumber(v); ok {
			return n, nil
		}
	case iceberg.Float32Type:
		if f, ok := realNumber(v); ok {
			return float32(f), nil
		}
	case iceberg.Float64Type:
		if f, ok := realNumber(v); ok {
			return f, nil
		}
	case iceberg.DecimalType:
		var text string
		switch d := v.(type) {
		case json.Number:
			text = d.String()
		case string:
			text = d
		}
		if text != "" {
			if n, err := decimal128.FromString(text, int32(t.Precision()), int32(t.Scale())); err == nil {
				return n, nil
			}
		}
	case iceberg.StringType:
		switch s := v.(type) {
		case string:
			return s, nil
		case json.Number:
			return s.String(), nil
		}
		// A value of no single type (JSON Schema without one): its JSON.
		if raw, err := json.Marshal(v); err == nil {
			return string(raw), nil
		}
	case iceberg.BinaryType:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	case iceberg.FixedType:
		if b, ok := v.([]byte); ok && len(b) == t.Len() {
			return b, nil
		}
	case iceberg.DateType:
		switch d := v.(type) {
		case time.Time:
			return int32(floorDiv(d.Unix(), 86400)), nil
		case string:
			if day, err := time.Parse(time.DateOnly, d); err == nil {
				return int32(floorDiv(day.Unix(), 86400)), nil
			}
		}
	case iceberg.TimeType:
		if d, ok := v.(time.Duration); ok && d >= 0 && d < 24*time.Hour {
			return d.Microseconds(), nil
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		switch ts := v.(type) {
		case time.Time:
			return ts.UnixMicro(), nil
		case string:
			if parsed, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				return parsed.UnixMicro(), nil
			}
		}
	}
	return bad()
}

func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

func realNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		if f, ok := new(big.Float).SetString(n.String()); ok {
			x, _ := f.Float64()
			return x, true
		}
	}
	return 0, false
}
