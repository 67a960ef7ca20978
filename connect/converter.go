package connect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrConversion marks a record a converter could not turn into bytes or back;
// errors.tolerance decides whether it fails the task or is skipped.
var ErrConversion = errors.New("connect: conversion error")

// Converter turns Connect data into record bytes and back: Kafka Connect's
// key.converter / value.converter.
type Converter interface {
	FromConnect(topic string, schema *Schema, value any) ([]byte, error)
	ToConnect(topic string, data []byte) (*Schema, any, error)
}

// Converter class names Kafka Connect uses; the short names json, string and
// bytes work too (avro, json_schema and protobuf for Confluent's).
const (
	JSONConverterClass      = "org.apache.kafka.connect.json.JsonConverter"
	StringConverterClass    = "org.apache.kafka.connect.storage.StringConverter"
	ByteArrayConverterClass = "org.apache.kafka.connect.converters.ByteArrayConverter"
)

// NewConverter builds a value converter by class name. props are the
// converter's own settings with the "value.converter." prefix removed
// (schemas.enable, decimal.format, schema.registry.url, …).
func NewConverter(class string, props map[string]string) (Converter, error) {
	return NewConverterFor(class, props, false)
}

// NewConverterFor builds a converter by class name for keys (isKey) or
// values, as Kafka's Converter.configure(configs, isKey): the Avro
// converter names its subjects <topic>-key or <topic>-value by it. props
// are the converter's own settings, prefix removed.
func NewConverterFor(class string, props map[string]string, isKey bool) (Converter, error) {
	switch strings.TrimSpace(class) {
	case AvroConverterClass, "avro", "AvroConverter":
		return newAvroConverter(props, isKey)
	case JSONSchemaConverterClass, "json_schema", "JsonSchemaConverter":
		return newJSONSchemaConverter(props, isKey)
	case ProtobufConverterClass, "protobuf", "ProtobufConverter":
		return newProtobufConverter(props, isKey)
	case JSONConverterClass, "json", "JsonConverter":
		c := &JSONConverter{SchemasEnable: true}
		if v, ok := props["schemas.enable"]; ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("connect: schemas.enable %q: want true or false", v)
			}
			c.SchemasEnable = b
		}
		switch f := strings.ToUpper(strings.TrimSpace(props["decimal.format"])); f {
		case "", "BASE64":
		case "NUMERIC":
			c.DecimalNumeric = true
		default:
			return nil, fmt.Errorf("connect: decimal.format %q: want BASE64 or NUMERIC", f)
		}
		return c, nil
	case StringConverterClass, "string", "StringConverter":
		return StringConverter{}, nil
	case ByteArrayConverterClass, "bytes", "ByteArrayConverter":
		return ByteArrayConverter{}, nil
	}
	return nil, fmt.Errorf("connect: unknown converter class %q (want %s, %s, %s, %s, %s or %s)", class,
		JSONConverterClass, AvroConverterClass, JSONSchemaConverterClass, ProtobufConverterClass, StringConverterClass, ByteArrayConverterClass)
}

// StringConverter writes values as UTF-8 text and reads every record as an
// optional string.
type StringConverter struct{}

// FromConnect implements Converter.
func (StringConverter) FromConnect(_ string, _ *Schema, value any) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case fmt.Stringer:
		return []byte(v.String()), nil
	default:
		return []byte(fmt.Sprint(v)), nil
	}
}

// ToConnect implements Converter.
func (StringConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return &Schema{Type: TypeString, Optional: true}, nil, nil
	}
	return &Schema{Type: TypeString, Optional: true}, string(data), nil
}

// ByteArrayConverter passes bytes through unchanged.
type ByteArrayConverter struct{}

// FromConnect implements Converter.
func (ByteArrayConverter) FromConnect(_ string, _ *Schema, value any) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	default:
		return nil, fmt.Errorf("%w: ByteArrayConverter needs []byte, got %T", ErrConversion, value)
	}
}

// ToConnect implements Converter.
func (ByteArrayConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return &Schema{Type: TypeBytes, Optional: true}, nil, nil
	}
	return &Schema{Type: TypeBytes, Optional: true}, data, nil
}

// JSONConverter is Kafka Connect's JsonConverter: with SchemasEnable each
// record is {"schema":{…},"payload":…}; without, the bare JSON value.
// Decimals are base64 of the unscaled two's-complement integer unless
// DecimalNumeric (decimal.format=NUMERIC).
type JSONConverter struct {
	SchemasEnable  bool
	DecimalNumeric bool

	// Schemas repeat from record to record: both directions keep the last
	// schemaCacheSize conversions (Kafka's schemas.cache.size).
	cache struct {
		sync.Mutex
		encoded map[*Schema][]byte // schema → its JSON
		decoded map[string]*Schema // schema JSON → schema
	}
}

const schemaCacheSize = 1000

func (c *JSONConverter) encodedSchema(s *Schema) ([]byte, error) {
	c.cache.Lock()
	b, ok := c.cache.encoded[s]
	c.cache.Unlock()
	if ok {
		return b, nil
	}
	sj, err := encodeSchema(s, c.DecimalNumeric)
	if err != nil {
		return nil, err
	}
	if b, err = json.Marshal(sj); err != nil {
		return nil, err
	}
	c.cache.Lock()
	if c.cache.encoded == nil || len(c.cache.encoded) >= schemaCacheSize {
		c.cache.encoded = map[*Schema][]byte{}
	}
	c.cache.encoded[s] = b
	c.cache.Unlock()
	return b, nil
}

func (c *JSONConverter) decodedSchema(raw []byte) (*Schema, error) {
	c.cache.Lock()
	s, ok := c.cache.decoded[string(raw)]
	c.cache.Unlock()
	if ok {
		return s, nil
	}
	var sj *schemaJSON
	if err := json.Unmarshal(raw, &sj); err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrConversion, err)
	}
	s, err := decodeSchema(sj)
	if err != nil {
		return nil, err
	}
	c.cache.Lock()
	if c.cache.decoded == nil || len(c.cache.decoded) >= schemaCacheSize {
		c.cache.decoded = map[string]*Schema{}
	}
	c.cache.decoded[string(raw)] = s
	c.cache.Unlock()
	return s, nil
}

// FromConnect implements Converter.
func (c *JSONConverter) FromConnect(_ string, schema *Schema, value any) ([]byte, error) {
	if value == nil && (schema == nil || !c.SchemasEnable) {
		return nil, nil
	}
	payload, err := valueToJSON(schema, value, c.DecimalNumeric)
	if err != nil {
		return nil, err
	}
	if !c.SchemasEnable {
		return json.Marshal(payload)
	}
	sj := []byte("null")
	if schema != nil {
		if sj, err = c.encodedSchema(schema); err != nil {
			return nil, err
		}
	}
	pj, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConversion, err)
	}
	out := make([]byte, 0, len(sj)+len(pj)+24)
	out = append(out, `{"schema":`...)
	out = append(out, sj...)
	out = append(out, `,"payload":`...)
	out = append(out, pj...)
	return append(out, '}'), nil
}

// ToConnect implements Converter.
func (c *JSONConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	if !c.SchemasEnable {
		var raw any
		if err := unmarshalNumber(data, &raw); err != nil {
			return nil, nil, fmt.Errorf("%w: not JSON: %v", ErrConversion, err)
		}
		v, err := valueFromJSON(nil, raw)
		return nil, v, err
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, nil, fmt.Errorf("%w: JsonConverter with schemas.enable requires a JSON object with \"schema\" and \"payload\": %v", ErrConversion, err)
	}
	rawSchema, okS := env["schema"]
	rawPayload, okP := env["payload"]
	if !okS || !okP || len(env) != 2 {
		return nil, nil, fmt.Errorf("%w: JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields; set schemas.enable=false for plain JSON", ErrConversion)
	}
	var schema *Schema
	if string(bytes.TrimSpace(rawSchema)) != "null" {
		var err error
		if schema, err = c.decodedSchema(rawSchema); err != nil {
			return nil, nil, err
		}
	}
	var raw any
	if err := unmarshalNumber(rawPayload, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: payload: %v", ErrConversion, err)
	}
	v, err := valueFromJSON(schema, raw)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

func unmarshalNumber(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// valueToJSON turns a Connect value into something encoding/json writes as
// Kafka's JsonConverter would.
func valueToJSON(s *Schema, v any, decimalNumeric bool) (any, error) {
	if s == nil {
		return schemalessToJSON(v)
	}
	if v == nil {
		if s.Default != nil {
			v = s.Default
		} else if !s.Optional {
			return nil, fmt.Errorf("%w: null value for a required %s schema", ErrConversion, s.Type)
		} else {
			return nil, nil
		}
	}
	switch s.Name {
	case LogicalDecimal:
		scale, err := decimalScale(s)
		if err != nil {
			return nil, err
		}
		unscaled, err := decimalUnscaled(v, scale)
		if err != nil {
			return nil, err
		}
		if decimalNumeric {
			return json.Number(formatDecimal(unscaled, scale)), nil
		}
		return base64.StdEncoding.EncodeToString(twosComplement(unscaled)), nil
	case LogicalDate:
		if t, ok := v.(time.Time); ok {
			return t.UTC().Unix() / 86400, nil
		}
	case LogicalTime:
		if t, ok := v.(time.Time); ok {
			t = t.UTC()
			return int64(t.Hour()*3600000 + t.Minute()*60000 + t.Second()*1000 + t.Nanosecond()/1e6), nil
		}
	case LogicalTimestamp:
		if t, ok := v.(time.Time); ok {
			return t.UnixMilli(), nil
		}
	}
	switch s.Type {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: %s schema needs an integer, got %T", ErrConversion, s.Type, v)
		}
		return n, nil
	case TypeFloat32, TypeFloat64:
		switch f := v.(type) {
		case float32:
			return float64(f), nil
		case float64:
			return f, nil
		}
		if n, ok := toInt64(v); ok {
			return float64(n), nil
		}
		return nil, fmt.Errorf("%w: %s schema needs a float, got %T", ErrConversion, s.Type, v)
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%w: boolean schema needs a bool, got %T", ErrConversion, v)
		}
		return b, nil
	case TypeString:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: string schema needs a string, got %T", ErrConversion, v)
		}
		return str, nil
	case TypeBytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, fmt.Errorf("%w: bytes schema needs []byte, got %T", ErrConversion, v)
		}
		return base64.StdEncoding.EncodeToString(b), nil
	case TypeArray:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: array schema needs []any, got %T", ErrConversion, v)
		}
		out := make([]any, len(items))
		for i, item := range items {
			j, err := valueToJSON(s.Items, item, decimalNumeric)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = j
		}
		return out, nil
	case TypeMap:
		return mapToJSON(s, v, decimalNumeric)
	case TypeStruct:
		st, ok := v.(*Struct)
		if !ok {
			return nil, fmt.Errorf("%w: struct schema needs *Struct, got %T", ErrConversion, v)
		}
		obj := make(orderedObject, 0, len(s.Fields))
		for i, f := range s.Fields {
			fv := st.fieldValue(s, i)
			j, err := valueToJSON(f.Schema, fv, decimalNumeric)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			obj = append(obj, objectMember{f.Name, j})
		}
		return obj, nil
	}
	return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
}

func mapToJSON(s *Schema, v any, decimalNumeric bool) (any, error) {
	stringKeys := s.KeyType != nil && s.KeyType.Type == TypeString
	switch m := v.(type) {
	case map[string]any:
		if stringKeys {
			obj := make(orderedObject, 0, len(m))
			for _, k := range sortedMapKeys(m) {
				j, err := valueToJSON(s.ValueType, m[k], decimalNumeric)
				if err != nil {
					return nil, fmt.Errorf("map value %q: %w", k, err)
				}
				obj = append(obj, objectMember{k, j})
			}
			return obj, nil
		}
		pairs := make([]any, 0, len(m))
		for _, k := range sortedMapKeys(m) {
			kj, err := valueToJSON(s.KeyType, k, decimalNumeric)
			if err != nil {
				return nil, err
			}
			vj, err := valueToJSON(s.ValueType, m[k], decimalNumeric)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, []any{kj, vj})
		}
		return pairs, nil
	case map[any]any:
		pairs := make([]any, 0, len(m))
		for k, val := range m {
			kj, err := valueToJSON(s.KeyType, k, decimalNumeric)
			if err != nil {
				return nil, err
			}
			vj, err := valueToJSON(s.ValueType, val, decimalNumeric)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, []any{kj, vj})
		}
		return pairs, nil
	}
	return nil, fmt.Errorf("%w: map schema needs map[string]any or map[any]any, got %T", ErrConversion, v)
}

// schemalessToJSON handles values without a schema (schemas.enable=false on
// a source, or records with no schema).
func schemalessToJSON(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, float32, float64, json.Number:
		return x, nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case time.Time:
		return x.UnixMilli(), nil
	case *big.Rat:
		return json.Number(x.FloatString(decimalDigits(x))), nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			j, err := schemalessToJSON(item)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[string]any:
		obj := make(orderedObject, 0, len(x))
		for _, k := range sortedMapKeys(x) {
			j, err := schemalessToJSON(x[k])
			if err != nil {
				return nil, err
			}
			obj = append(obj, objectMember{k, j})
		}
		return obj, nil
	case *Struct:
		if x.Schema == nil {
			return nil, fmt.Errorf("%w: struct without schema", ErrConversion)
		}
		return valueToJSON(x.Schema, x, false)
	}
	if n, ok := toInt64(v); ok {
		return n, nil
	}
	return nil, fmt.Errorf("%w: cannot write %T as JSON", ErrConversion, v)
}

// valueFromJSON reads a decoded JSON value (numbers as json.Number) with an
// optional schema into Connect's Go types: int8…int64, float32/float64,
// bool, string, []byte, []any, map[string]any (or map[any]any for non-string
// keys), *Struct, *big.Rat for Decimal and time.Time for Date, Time and
// Timestamp.
func valueFromJSON(s *Schema, raw any) (any, error) {
	if s == nil {
		return schemalessFromJSON(raw), nil
	}
	if raw == nil {
		if s.Default != nil {
			return s.Default, nil
		}
		if !s.Optional {
			return nil, fmt.Errorf("%w: null for a required %s field", ErrConversion, s.Type)
		}
		return nil, nil
	}
	switch s.Name {
	case LogicalDecimal:
		scale, err := decimalScale(s)
		if err != nil {
			return nil, err
		}
		switch x := raw.(type) {
		case string:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("%w: decimal: %v", ErrConversion, err)
			}
			return new(big.Rat).SetFrac(fromTwosComplement(b), pow10(scale)), nil
		case json.Number:
			r, ok := new(big.Rat).SetString(x.String())
			if !ok {
				return nil, fmt.Errorf("%w: decimal %q", ErrConversion, x)
			}
			return r, nil
		}
		return nil, fmt.Errorf("%w: decimal needs a base64 string or a number, got %T", ErrConversion, raw)
	case LogicalDate, LogicalTime, LogicalTimestamp:
		n, ok := raw.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs a number", ErrConversion, s.Name)
		}
		i, err := n.Int64()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConversion, s.Name, err)
		}
		if s.Name == LogicalDate {
			return time.Unix(i*86400, 0).UTC(), nil
		}
		return time.UnixMilli(i).UTC(), nil
	}
	switch s.Type {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		n, ok := raw.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs a number, got %T", ErrConversion, s.Type, raw)
		}
		i, err := n.Int64()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConversion, s.Type, err)
		}
		return intOfType(i, s.Type)
	case TypeFloat32, TypeFloat64:
		n, ok := raw.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs a number, got %T", ErrConversion, s.Type, raw)
		}
		f, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConversion, s.Type, err)
		}
		if s.Type == TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case TypeBoolean:
		b, ok := raw.(bool)
		if !ok {
			return nil, fmt.Errorf("%w: boolean needs true or false, got %T", ErrConversion, raw)
		}
		return b, nil
	case TypeString:
		str, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("%w: string needs a JSON string, got %T", ErrConversion, raw)
		}
		return str, nil
	case TypeBytes:
		str, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("%w: bytes need a base64 string, got %T", ErrConversion, raw)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return nil, fmt.Errorf("%w: bytes: %v", ErrConversion, err)
		}
		return b, nil
	case TypeArray:
		items, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: array needs a JSON array, got %T", ErrConversion, raw)
		}
		out := make([]any, len(items))
		for i, item := range items {
			v, err := valueFromJSON(s.Items, item)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	case TypeMap:
		if obj, ok := raw.(map[string]any); ok && s.KeyType != nil && s.KeyType.Type == TypeString {
			out := make(map[string]any, len(obj))
			for k, item := range obj {
				v, err := valueFromJSON(s.ValueType, item)
				if err != nil {
					return nil, fmt.Errorf("map value %q: %w", k, err)
				}
				out[k] = v
			}
			return out, nil
		}
		pairs, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: map needs an object or an array of [key, value] pairs", ErrConversion)
		}
		out := make(map[any]any, len(pairs))
		for _, p := range pairs {
			kv, ok := p.([]any)
			if !ok || len(kv) != 2 {
				return nil, fmt.Errorf("%w: map entry is not a [key, value] pair", ErrConversion)
			}
			k, err := valueFromJSON(s.KeyType, kv[0])
			if err != nil {
				return nil, err
			}
			v, err := valueFromJSON(s.ValueType, kv[1])
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case TypeStruct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: struct needs a JSON object, got %T", ErrConversion, raw)
		}
		st := &Struct{Schema: s, Values: make([]any, len(s.Fields))}
		for i, f := range s.Fields {
			v, err := valueFromJSON(f.Schema, obj[f.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			st.Values[i] = v
		}
		return st, nil
	}
	return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
}

// schemalessFromJSON maps JSON numbers to int64 when integral, else float64,
// as Kafka's JsonConverter does without schemas.
func schemalessFromJSON(raw any) any {
	switch x := raw.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = schemalessFromJSON(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = schemalessFromJSON(x[k])
		}
		return x
	}
	return raw
}

// intOfType is n as the Go type of an integer schema type (int8 for
// TypeInt8, …), or an error when it does not fit.
func intOfType(n int64, typ string) (any, error) {
	switch typ {
	case TypeInt8:
		if n < math.MinInt8 || n > math.MaxInt8 {
			return nil, fmt.Errorf("%w: %d out of int8 range", ErrConversion, n)
		}
		return int8(n), nil
	case TypeInt16:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, fmt.Errorf("%w: %d out of int16 range", ErrConversion, n)
		}
		return int16(n), nil
	case TypeInt32:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("%w: %d out of int32 range", ErrConversion, n)
		}
		return int32(n), nil
	}
	return n, nil
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return int64(n), true
		}
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func decimalScale(s *Schema) (int, error) {
	raw, ok := s.Parameters["scale"]
	if !ok {
		return 0, fmt.Errorf("%w: Decimal schema without a scale parameter", ErrConversion)
	}
	scale, err := strconv.Atoi(raw)
	if err != nil || scale < 0 || scale > 1000 {
		return 0, fmt.Errorf("%w: Decimal scale %q", ErrConversion, raw)
	}
	return scale, nil
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// decimalUnscaled returns v·10^scale as an integer; v may be *big.Rat,
// *big.Int, *big.Float, a numeric string, json.Number, float64 or an integer.
func decimalUnscaled(v any, scale int) (*big.Int, error) {
	r := new(big.Rat)
	switch x := v.(type) {
	case *big.Rat:
		r.Set(x)
	case big.Rat:
		r.Set(&x)
	case *big.Int:
		r.SetInt(x)
	case *big.Float:
		x.Rat(r)
	case string:
		if _, ok := r.SetString(strings.TrimSpace(x)); !ok {
			return nil, fmt.Errorf("%w: decimal %q is not a number", ErrConversion, x)
		}
	case json.Number:
		if _, ok := r.SetString(x.String()); !ok {
			return nil, fmt.Errorf("%w: decimal %q is not a number", ErrConversion, x)
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: decimal %v", ErrConversion, x)
		}
		r.SetFloat64(x)
	case float32:
		r.SetFloat64(float64(x))
	default:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: decimal needs a number, got %T", ErrConversion, v)
		}
		r.SetInt64(n)
	}
	r.Mul(r, new(big.Rat).SetInt(pow10(scale)))
	// Round half away from zero, like BigDecimal.setScale(HALF_UP) would.
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() != 0 {
		twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
		if twice.Cmp(den) >= 0 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
	}
	return q, nil
}

func formatDecimal(unscaled *big.Int, scale int) string {
	return new(big.Rat).SetFrac(unscaled, pow10(scale)).FloatString(scale)
}

func decimalDigits(r *big.Rat) int {
	if r.IsInt() {
		return 0
	}
	// Enough digits for any terminating decimal of reasonable size.
	for d := 1; d <= 64; d++ {
		x := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow10(d)))
		if x.IsInt() {
			return d
		}
	}
	return 64
}

// twosComplement is Java's BigInteger.toByteArray: minimal big-endian two's
// complement.
func twosComplement(n *big.Int) []byte {
	if n.Sign() == 0 {
		return []byte{0}
	}
	if n.Sign() > 0 {
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Java's length for a negative n: bitLength(-n-1)/8 + 1 bytes.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	length := m.BitLen()/8 + 1
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*length))
	b := new(big.Int).Add(mod, n).Bytes()
	for len(b) < length {
		b = append([]byte{0}, b...)
	}
	return b
}

func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// orderedObject is a JSON object that keeps its members' order (struct
// fields in schema order).
type orderedObject []objectMember

type objectMember struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
