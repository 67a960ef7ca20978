package connect

// Connect ↔ Avro, as Confluent's AvroData (io.confluent.connect.avro)
// maps them, so that records written here read the same with Confluent's
// AvroConverter and the other way round. Pure: no registry, no I/O.
//
// Schemas, Connect → Avro:
//
//	Connect                      Avro
//	int8, int16                  "int" + "connect.type":"int8"|"int16"
//	int32, int64                 "int", "long"
//	float, double                "float", "double"
//	boolean, string, bytes       the same
//	Decimal (scale s)            "bytes" + "scale":s, "precision":p, "logicalType":"decimal"
//	                             (p from the parameter connect.decimal.precision, else 64)
//	Date, Time, Timestamp        "int"+"date", "int"+"time-millis", "long"+"timestamp-millis"
//	array                        "array" of the items
//	map, string keys             "map" of the values
//	map, other keys              "array" of record io.confluent.connect.avro.MapEntry {key, value}
//	struct named "a.b.C"         record C in namespace a.b; unnamed: io.confluent.connect.avro.ConnectDefault
//	                             (ConnectDefault2, 3, … for further unnamed structs in one schema)
//	optional                     union ["null", T] (fields: default null); with a default, [T, "null"]
//
// Every non-union type also carries Confluent's metadata properties, in
// Confluent's order: connect.doc, connect.version, connect.parameters,
// connect.name, then the logicalType. Struct field defaults become Avro
// field defaults (connect.default is not written).
//
// Avro → Connect is the inverse; a schema another producer wrote, without
// connect.* properties, maps as: int → int32, long → int64, enum → string,
// fixed → bytes, the logical types date, time-millis/micros,
// timestamp-millis/micros and decimal (bytes or fixed) → Date, Time,
// Timestamp and Decimal (micros cut to milliseconds), a record → a struct
// named by its full name, ["null", T] → optional T, and any other union →
// a struct named io.confluent.connect.avro.Union with one optional field
// per branch (named after the branch's type: its name for named types),
// exactly one of them set in a value.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"
)

// Names and properties Confluent's AvroData uses.
const (
	avroNamespace           = "io.confluent.connect.avro"
	avroDefaultName         = "ConnectDefault"
	avroMapEntryName        = "MapEntry"
	avroUnionName           = avroNamespace + ".Union"
	propConnectName         = "connect.name"
	propConnectVersion      = "connect.version"
	propConnectDoc          = "connect.doc"
	propConnectParameters   = "connect.parameters"
	propConnectType         = "connect.type"
	propConnectInternal     = "connect.internal.type"
	paramDecimalPrecision   = "connect.decimal.precision"
	defaultDecimalPrecision = 64
)

// avroSchemaText returns the Avro schema (JSON text) Confluent's AvroData
// makes of a Connect schema.
func avroSchemaText(s *Schema) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%w: Avro needs a schema (a schemaless value cannot be written as Avro)", ErrConversion)
	}
	b := &avroSchemaBuilder{defined: map[string]*Schema{}}
	tree, err := b.build(s, false)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrConversion, err)
	}
	return string(out), nil
}

type avroSchemaBuilder struct {
	defined   map[string]*Schema // full name → the Connect schema defined under it
	generated map[string]int     // uses of a generated name (ConnectDefault, MapEntry)
}

// splitAvroName splits "a.b.C" into namespace "a.b" and name "C".
func splitAvroName(full string) (namespace, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

func (b *avroSchemaBuilder) build(s *Schema, ignoreOptional bool) (any, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: a field, item, key or value without a schema", ErrConversion)
	}
	obj := orderedObject{}
	set := func(k string, v any) { obj = append(obj, objectMember{k, v}) }
	switch s.Type {
	case TypeInt8, TypeInt16:
		set("type", "int")
		set(propConnectType, s.Type)
	case TypeInt32:
		set("type", "int")
	case TypeInt64:
		set("type", "long")
	case TypeFloat32:
		set("type", "float")
	case TypeFloat64:
		set("type", "double")
	case TypeBoolean:
		set("type", "boolean")
	case TypeString:
		set("type", "string")
	case TypeBytes:
		set("type", "bytes")
		if s.Name == LogicalDecimal {
			scale, err := decimalScale(s)
			if err != nil {
				return nil, err
			}
			precision := defaultDecimalPrecision
			if p, ok := s.Parameters[paramDecimalPrecision]; ok {
				if precision, err = strconv.Atoi(p); err != nil || precision <= 0 {
					return nil, fmt.Errorf("%w: Decimal %s %q", ErrConversion, paramDecimalPrecision, p)
				}
			}
			set("scale", scale)
			set("precision", precision)
		}
	case TypeArray:
		items, err := b.build(s.Items, false)
		if err != nil {
			return nil, fmt.Errorf("array items: %w", err)
		}
		set("type", "array")
		set("items", items)
	case TypeMap:
		if s.KeyType == nil || s.ValueType == nil {
			return nil, fmt.Errorf("%w: map schema without keys or values", ErrConversion)
		}
		if s.KeyType.Type == TypeString && !s.KeyType.Optional && s.KeyType.Name == "" {
			values, err := b.build(s.ValueType, false)
			if err != nil {
				return nil, fmt.Errorf("map values: %w", err)
			}
			set("type", "map")
			set("values", values)
			break
		}
		key, err := b.build(s.KeyType, false)
		if err != nil {
			return nil, fmt.Errorf("map keys: %w", err)
		}
		value, err := b.build(s.ValueType, false)
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		name := avroMapEntryName
		if n := b.countName(avroNamespace + "." + avroMapEntryName); n > 1 {
			name += strconv.Itoa(n)
		}
		entry := orderedObject{
			{"type", "record"}, {"name", name}, {"namespace", avroNamespace},
			{"fields", []any{
				orderedObject{{"name", "key"}, {"type", key}},
				orderedObject{{"name", "value"}, {"type", value}},
			}},
			{propConnectInternal, avroMapEntryName},
		}
		set("type", "array")
		set("items", entry)
	case TypeStruct:
		namespace, name := avroNamespace, avroDefaultName
		if s.Name != "" {
			namespace, name = splitAvroName(s.Name)
		} else if n := b.countName(avroNamespace + "." + avroDefaultName); n > 1 {
			name += strconv.Itoa(n)
		}
		full := name
		if namespace != "" {
			full = namespace + "." + name
		}
		if prev, ok := b.defined[full]; ok {
			// A second use of a named struct refers to the first
			// definition, as Avro requires; another struct of the same
			// name cannot be written.
			if !sameSchema(prev, s) {
				return nil, fmt.Errorf("%w: two different struct schemas named %q", ErrConversion, full)
			}
			return b.optional(full, s, ignoreOptional), nil
		}
		b.defined[full] = s
		fields := make([]any, 0, len(s.Fields))
		for _, f := range s.Fields {
			ft, err := b.build(f.Schema, false)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			field := orderedObject{{"name", f.Name}, {"type", ft}}
			if f.Schema.Doc != "" {
				field = append(field, objectMember{"doc", f.Schema.Doc})
			}
			switch {
			case f.Schema.Default != nil:
				def, err := avroDefaultJSON(f.Schema, f.Schema.Default)
				if err != nil {
					return nil, fmt.Errorf("field %s default: %w", f.Name, err)
				}
				field = append(field, objectMember{"default", def})
			case f.Schema.Optional:
				field = append(field, objectMember{"default", nil})
			}
			fields = append(fields, field)
		}
		set("type", "record")
		set("name", name)
		if namespace != "" {
			set("namespace", namespace)
		}
		if s.Doc != "" {
			set("doc", s.Doc)
		}
		set("fields", fields)
	default:
		return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
	}

	// Confluent's metadata properties, in its order.
	if s.Doc != "" {
		set(propConnectDoc, s.Doc)
	}
	if s.Version != 0 {
		set(propConnectVersion, s.Version)
	}
	if len(s.Parameters) > 0 {
		params := orderedObject{}
		if v, ok := s.Parameters["scale"]; ok { // Decimal.builder puts it first
			params = append(params, objectMember{"scale", v})
		}
		for _, k := range sortedMapKeys(s.Parameters) {
			if k != "scale" {
				params = append(params, objectMember{k, s.Parameters[k]})
			}
		}
		set(propConnectParameters, params)
	}
	if s.Name != "" {
		set(propConnectName, s.Name)
	}
	switch s.Name {
	case LogicalDecimal:
		set("logicalType", "decimal")
	case LogicalDate:
		set("logicalType", "date")
	case LogicalTime:
		set("logicalType", "time-millis")
	case LogicalTimestamp:
		set("logicalType", "timestamp-millis")
	}
	var out any = obj
	if len(obj) == 1 { // {"type":"int"} is written "int"
		out = obj[0].Value
	}
	return b.optional(out, s, ignoreOptional), nil
}

// countName counts a generated name's uses and returns the count.
func (b *avroSchemaBuilder) countName(base string) int {
	if b.generated == nil {
		b.generated = map[string]int{}
	}
	b.generated[base]++
	return b.generated[base]
}

func (b *avroSchemaBuilder) optional(t any, s *Schema, ignoreOptional bool) any {
	if ignoreOptional || !s.Optional {
		return t
	}
	if s.Default != nil {
		return []any{t, "null"}
	}
	return []any{"null", t}
}

// sameSchema reports whether two Connect schemas describe the same type.
func sameSchema(a, b *Schema) bool {
	if a == b {
		return true
	}
	ta, errA := avroSchemaText(&Schema{Type: TypeArray, Items: a})
	tb, errB := avroSchemaText(&Schema{Type: TypeArray, Items: b})
	return errA == nil && errB == nil && ta == tb && a.Optional == b.Optional
}

// connectSchemaFromAvro is the Connect schema of an Avro schema, reading
// Confluent's connect.* properties where they are.
func connectSchemaFromAvro(as avro.Schema) (*Schema, error) {
	return (&connectSchemaBuilder{named: map[string]*Schema{}}).build(as)
}

type connectSchemaBuilder struct {
	named map[string]*Schema // records converted so far, by full name (nil while in progress)
}

func (b *connectSchemaBuilder) build(as avro.Schema) (*Schema, error) {
	if r, ok := as.(*avro.RefSchema); ok {
		as = r.Schema()
	}
	var s *Schema
	var props map[string]any
	switch t := as.(type) {
	case *avro.PrimitiveSchema:
		props = t.Props()
		var err error
		if s, err = primitiveFromAvro(t); err != nil {
			return nil, err
		}
	case *avro.FixedSchema:
		props = t.Props()
		s = &Schema{Type: TypeBytes, Name: t.FullName()}
		if d, ok := t.Logical().(*avro.DecimalLogicalSchema); ok {
			s = decimalSchemaFromAvro(d)
		}
	case *avro.EnumSchema:
		props = t.Props()
		s = &Schema{Type: TypeString, Name: t.FullName(), Doc: t.Doc()}
	case *avro.ArraySchema:
		props = t.Props()
		if r, ok := derefAvro(t.Items()).(*avro.RecordSchema); ok && isMapEntry(r) {
			k, err := b.build(r.Fields()[0].Type())
			if err != nil {
				return nil, err
			}
			v, err := b.build(r.Fields()[1].Type())
			if err != nil {
				return nil, err
			}
			s = &Schema{Type: TypeMap, KeyType: k, ValueType: v}
			break
		}
		items, err := b.build(t.Items())
		if err != nil {
			return nil, fmt.Errorf("array items: %w", err)
		}
		s = &Schema{Type: TypeArray, Items: items}
	case *avro.MapSchema:
		props = t.Props()
		v, err := b.build(t.Values())
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		s = &Schema{Type: TypeMap, KeyType: &Schema{Type: TypeString}, ValueType: v}
	case *avro.RecordSchema:
		if prev, seen := b.named[t.FullName()]; seen {
			if prev == nil {
				return nil, fmt.Errorf("%w: record %s refers to itself; Connect schemas cannot be recursive", ErrConversion, t.FullName())
			}
			return prev, nil
		}
		b.named[t.FullName()] = nil
		props = t.Props()
		s = &Schema{Type: TypeStruct, Doc: t.Doc()}
		if !isDefaultRecordName(t.FullName()) {
			s.Name = t.FullName()
		}
		for i, f := range t.Fields() {
			fs, err := b.build(f.Type())
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name(), err)
			}
			if f.Doc() != "" || (f.HasDefault() && f.Default() != nil) {
				c := *fs
				fs = &c
				if f.Doc() != "" {
					fs.Doc = f.Doc()
				}
				if f.HasDefault() && f.Default() != nil {
					// A default this cannot read is left out rather
					// than failing the schema.
					if d, err := connectValueFromAvro(fs, f.Type(), defaultFromAvro(f.Type(), f.Default())); err == nil {
						fs.Default = d
					}
				}
			}
			s.Fields = append(s.Fields, Field{Name: f.Name(), Index: i, Schema: fs})
		}
		b.named[t.FullName()] = s
	case *avro.UnionSchema:
		var branches []avro.Schema
		for _, bt := range t.Types() {
			if bt.Type() != avro.Null {
				branches = append(branches, bt)
			}
		}
		nullable := len(branches) < len(t.Types())
		if len(branches) == 1 && nullable {
			inner, err := b.build(branches[0])
			if err != nil {
				return nil, err
			}
			c := *inner
			c.Optional = true
			return &c, nil
		}
		if len(branches) == 0 {
			return nil, fmt.Errorf("%w: a union of only null has no Connect type", ErrConversion)
		}
		s = &Schema{Type: TypeStruct, Name: avroUnionName, Optional: nullable}
		for i, bt := range branches {
			fs, err := b.build(bt)
			if err != nil {
				return nil, fmt.Errorf("union branch %d: %w", i, err)
			}
			c := *fs
			c.Optional = true
			s.Fields = append(s.Fields, Field{Name: unionFieldName(bt), Index: i, Schema: &c})
		}
		return s, nil
	default:
		return nil, fmt.Errorf("%w: Avro type %s has no Connect type", ErrConversion, as.Type())
	}
	if err := applyConnectProps(s, props); err != nil {
		return nil, err
	}
	return s, nil
}

// isDefaultRecordName tells the names AvroData gives unnamed structs
// (ConnectDefault, ConnectDefault2, …), which map back to no name.
func isDefaultRecordName(full string) bool {
	rest, ok := strings.CutPrefix(full, avroNamespace+"."+avroDefaultName)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(rest)
	return rest == "" || err == nil
}

// isMapEntry tells the record Confluent writes for maps with non-string
// keys from other records.
func isMapEntry(r *avro.RecordSchema) bool {
	if len(r.Fields()) != 2 || r.Fields()[0].Name() != "key" || r.Fields()[1].Name() != "value" {
		return false
	}
	if v, ok := r.Prop(propConnectInternal).(string); ok && v == avroMapEntryName {
		return true
	}
	return r.FullName() == avroNamespace+"."+avroMapEntryName
}

func unionFieldName(t avro.Schema) string {
	t = derefAvro(t)
	if n, ok := t.(avro.NamedSchema); ok {
		return n.Name()
	}
	return string(t.Type())
}

func primitiveFromAvro(t *avro.PrimitiveSchema) (*Schema, error) {
	var logical avro.LogicalType
	if l := t.Logical(); l != nil {
		logical = l.Type()
	}
	switch t.Type() {
	case avro.Int:
		switch logical {
		case avro.Date:
			return &Schema{Type: TypeInt32, Name: LogicalDate, Version: 1}, nil
		case avro.TimeMillis:
			return &Schema{Type: TypeInt32, Name: LogicalTime, Version: 1}, nil
		}
		switch t.Prop(propConnectType) {
		case TypeInt8:
			return &Schema{Type: TypeInt8}, nil
		case TypeInt16:
			return &Schema{Type: TypeInt16}, nil
		}
		return &Schema{Type: TypeInt32}, nil
	case avro.Long:
		switch logical {
		case avro.TimestampMillis, avro.TimestampMicros:
			return &Schema{Type: TypeInt64, Name: LogicalTimestamp, Version: 1}, nil
		case avro.TimeMicros:
			return &Schema{Type: TypeInt32, Name: LogicalTime, Version: 1}, nil
		}
		return &Schema{Type: TypeInt64}, nil
	case avro.Float:
		return &Schema{Type: TypeFloat32}, nil
	case avro.Double:
		return &Schema{Type: TypeFloat64}, nil
	case avro.Boolean:
		return &Schema{Type: TypeBoolean}, nil
	case avro.String:
		return &Schema{Type: TypeString}, nil
	case avro.Bytes:
		if d, ok := t.Logical().(*avro.DecimalLogicalSchema); ok {
			return decimalSchemaFromAvro(d), nil
		}
		return &Schema{Type: TypeBytes}, nil
	}
	return nil, fmt.Errorf("%w: Avro type %s has no Connect type", ErrConversion, t.Type())
}

func decimalSchemaFromAvro(d *avro.DecimalLogicalSchema) *Schema {
	s := &Schema{Type: TypeBytes, Name: LogicalDecimal, Version: 1,
		Parameters: map[string]string{"scale": strconv.Itoa(d.Scale())}}
	if d.Precision() != defaultDecimalPrecision {
		s.Parameters[paramDecimalPrecision] = strconv.Itoa(d.Precision())
	}
	return s
}

// applyConnectProps reads connect.name, connect.version, connect.doc and
// connect.parameters into s.
func applyConnectProps(s *Schema, props map[string]any) error {
	if name, ok := props[propConnectName].(string); ok && name != "" {
		s.Name = name
	}
	if v, ok := props[propConnectVersion]; ok {
		n, ok := jsonInt(v)
		if !ok {
			return fmt.Errorf("%w: %s %v is not an integer", ErrConversion, propConnectVersion, v)
		}
		s.Version = int(n)
	}
	if doc, ok := props[propConnectDoc].(string); ok {
		s.Doc = doc
	}
	if raw, ok := props[propConnectParameters]; ok {
		params, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s is not an object", ErrConversion, propConnectParameters)
		}
		merged := map[string]string{}
		for k, v := range s.Parameters {
			merged[k] = v
		}
		for k, v := range params {
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("%w: %s.%s is not a string", ErrConversion, propConnectParameters, k)
			}
			merged[k] = str
		}
		s.Parameters = merged
	}
	return nil
}

func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true
		}
		return 0, false
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return toInt64(v)
}
