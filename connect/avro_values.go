package connect

// Connect values ↔ the Go values hamba/avro encodes and decodes for the
// Avro schemas avro_data.go maps (see there for the schema mapping).
// Connect → hamba: a struct is a map[string]any, int8/16/32 are int32,
// Decimal a *big.Rat of the schema's scale, Date and Timestamp time.Time,
// Time a time.Duration since midnight, a map with non-string keys a list
// of {"key","value"} maps, and a value in a union {branch name: value}.
// Decoding goes through registry/serde's bounded reader
// (decodeAvroPayload), not hamba's generic decoding, which trusts a
// payload's block counts; connectValueFromAvro maps its values back.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
)

// avroDefaultJSON is a Connect default value as an Avro field default:
// the JSON form of the Avro value, bytes as ISO-8859-1 text.
func avroDefaultJSON(s *Schema, v any) (any, error) {
	a, err := avroValue(s, nil, v)
	if err != nil {
		return nil, err
	}
	return defaultJSON(a), nil
}

func defaultJSON(a any) any {
	switch x := a.(type) {
	case []byte:
		r := make([]rune, len(x))
		for i, c := range x {
			r[i] = rune(c)
		}
		return string(r)
	case *big.Rat:
		return defaultJSON(twosComplement(new(big.Int).Quo(x.Num(), x.Denom())))
	case time.Time:
		return x.UnixMilli()
	case time.Duration:
		return x.Milliseconds()
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = defaultJSON(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = defaultJSON(item)
		}
		return out
	}
	return a
}

// avroValue turns a Connect value of schema s into the Go value hamba
// encodes with the Avro schema avroSchemaText(s) gave. as is that schema
// parsed (nil when only the value is wanted, as for defaults); where it is
// a union, the value is wrapped as {branch name: value}, hamba's form.
func avroValue(s *Schema, as avro.Schema, v any) (any, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: value without a schema", ErrConversion)
	}
	if v == nil && s.Default != nil {
		v = s.Default
	}
	branch, union := avroNonNullBranch(as)
	if v == nil {
		if !s.Optional {
			return nil, fmt.Errorf("%w: null for a required %s", ErrConversion, describeSchema(s))
		}
		return nil, nil
	}
	if union {
		if s.Type == TypeStruct && s.Name == avroUnionName {
			return avroUnionValue(s, as.(*avro.UnionSchema), v)
		}
		a, err := avroPlainValue(s, branch, v)
		if err != nil {
			return nil, err
		}
		return map[string]any{avroTypeName(branch): a}, nil
	}
	return avroPlainValue(s, as, v)
}

// avroNonNullBranch returns the non-null branch of a ["null", T] union,
// and whether as is a union at all.
func avroNonNullBranch(as avro.Schema) (avro.Schema, bool) {
	u, ok := as.(*avro.UnionSchema)
	if !ok {
		return as, false
	}
	for _, t := range u.Types() {
		if t.Type() != avro.Null {
			return t, true
		}
	}
	return nil, true
}

// avroTypeName is the name hamba gives a union branch in its
// {name: value} form.
func avroTypeName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		name += "." + string(l.Logical().Type())
	}
	return name
}

func derefAvro(as avro.Schema) avro.Schema {
	if r, ok := as.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return as
}

func describeSchema(s *Schema) string {
	if s.Name != "" {
		return s.Type + " " + s.Name
	}
	return s.Type
}

func avroPlainValue(s *Schema, as avro.Schema, v any) (any, error) {
	as = derefAvro(as)
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
		return new(big.Rat).SetFrac(unscaled, pow10(scale)), nil
	case LogicalDate:
		switch x := v.(type) {
		case time.Time:
			days := math.Floor(float64(x.Unix()) / 86400)
			return time.Unix(int64(days)*86400, 0).UTC(), nil
		}
		if n, ok := toInt64(v); ok {
			return time.Unix(n*86400, 0).UTC(), nil
		}
		return nil, fmt.Errorf("%w: Date needs a time.Time, got %T", ErrConversion, v)
	case LogicalTime:
		switch x := v.(type) {
		case time.Time:
			x = x.UTC()
			ms := x.Hour()*3600000 + x.Minute()*60000 + x.Second()*1000 + x.Nanosecond()/1e6
			return time.Duration(ms) * time.Millisecond, nil
		case time.Duration:
			return x.Truncate(time.Millisecond), nil
		}
		if n, ok := toInt64(v); ok {
			return time.Duration(n) * time.Millisecond, nil
		}
		return nil, fmt.Errorf("%w: Time needs a time.Time, got %T", ErrConversion, v)
	case LogicalTimestamp:
		if x, ok := v.(time.Time); ok {
			return time.UnixMilli(x.UnixMilli()).UTC(), nil
		}
		if n, ok := toInt64(v); ok {
			return time.UnixMilli(n).UTC(), nil
		}
		return nil, fmt.Errorf("%w: Timestamp needs a time.Time, got %T", ErrConversion, v)
	}
	switch s.Type {
	case TypeInt8, TypeInt16, TypeInt32:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs an integer, got %T", ErrConversion, s.Type, v)
		}
		if _, err := intOfType(n, s.Type); err != nil {
			return nil, err
		}
		return int32(n), nil // Avro's int holds all three
	case TypeInt64:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: int64 needs an integer, got %T", ErrConversion, v)
		}
		return n, nil
	case TypeFloat32, TypeFloat64:
		var f float64
		switch x := v.(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			n, ok := toInt64(v)
			if !ok {
				return nil, fmt.Errorf("%w: %s needs a float, got %T", ErrConversion, s.Type, v)
			}
			f = float64(n)
		}
		if s.Type == TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%w: boolean needs a bool, got %T", ErrConversion, v)
	case TypeString:
		if str, ok := v.(string); ok {
			return str, nil
		}
		return nil, fmt.Errorf("%w: string needs a string, got %T", ErrConversion, v)
	case TypeBytes:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%w: bytes needs []byte, got %T", ErrConversion, v)
	case TypeArray:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: array needs []any, got %T", ErrConversion, v)
		}
		var itemSchema avro.Schema
		if a, ok := as.(*avro.ArraySchema); ok {
			itemSchema = a.Items()
		}
		out := make([]any, len(items))
		for i, item := range items {
			a, err := avroValue(s.Items, itemSchema, item)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = a
		}
		return out, nil
	case TypeMap:
		return avroMapValue(s, as, v)
	case TypeStruct:
		st, ok := v.(*Struct)
		if !ok {
			return nil, fmt.Errorf("%w: struct needs *Struct, got %T", ErrConversion, v)
		}
		var fieldSchemas map[string]avro.Schema
		if r, ok := as.(*avro.RecordSchema); ok {
			fieldSchemas = make(map[string]avro.Schema, len(r.Fields()))
			for _, f := range r.Fields() {
				fieldSchemas[f.Name()] = f.Type()
			}
		}
		out := make(map[string]any, len(s.Fields))
		for i, f := range s.Fields {
			fv := st.fieldValue(s, i)
			a, err := avroValue(f.Schema, fieldSchemas[f.Name], fv)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[f.Name] = a
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
}

func avroMapValue(s *Schema, as avro.Schema, v any) (any, error) {
	if s.KeyType.Type == TypeString && !s.KeyType.Optional && s.KeyType.Name == "" {
		var values avro.Schema
		if m, ok := as.(*avro.MapSchema); ok {
			values = m.Values()
		}
		out := map[string]any{}
		add := func(k string, val any) error {
			a, err := avroValue(s.ValueType, values, val)
			if err != nil {
				return fmt.Errorf("map value %q: %w", k, err)
			}
			out[k] = a
			return nil
		}
		switch m := v.(type) {
		case map[string]any:
			for k, val := range m {
				if err := add(k, val); err != nil {
					return nil, err
				}
			}
			return out, nil
		case map[any]any:
			for k, val := range m {
				ks, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("%w: map key %T, want string", ErrConversion, k)
				}
				if err := add(ks, val); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		return nil, fmt.Errorf("%w: map needs map[string]any or map[any]any, got %T", ErrConversion, v)
	}
	var keySchema, valueSchema avro.Schema
	if a, ok := as.(*avro.ArraySchema); ok {
		if r, ok := derefAvro(a.Items()).(*avro.RecordSchema); ok && len(r.Fields()) == 2 {
			keySchema, valueSchema = r.Fields()[0].Type(), r.Fields()[1].Type()
		}
	}
	var out []any
	add := func(k, val any) error {
		ka, err := avroValue(s.KeyType, keySchema, k)
		if err != nil {
			return fmt.Errorf("map key: %w", err)
		}
		va, err := avroValue(s.ValueType, valueSchema, val)
		if err != nil {
			return fmt.Errorf("map value: %w", err)
		}
		out = append(out, map[string]any{"key": ka, "value": va})
		return nil
	}
	switch m := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(m) {
			if err := add(k, m[k]); err != nil {
				return nil, err
			}
		}
	case map[any]any:
		for k, val := range m {
			if err := add(k, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: map needs map[string]any or map[any]any, got %T", ErrConversion, v)
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

// avroUnionValue writes the one set field of a Union struct as its branch.
func avroUnionValue(s *Schema, u *avro.UnionSchema, v any) (any, error) {
	st, ok := v.(*Struct)
	if !ok {
		return nil, fmt.Errorf("%w: union struct needs *Struct, got %T", ErrConversion, v)
	}
	for i, f := range s.Fields {
		fv, _ := st.Get(f.Name)
		if fv == nil {
			continue
		}
		for _, t := range u.Types() {
			if t.Type() != avro.Null && unionFieldName(t) == f.Name {
				a, err := avroPlainValue(&Schema{Type: f.Schema.Type, Name: f.Schema.Name, Version: f.Schema.Version,
					Parameters: f.Schema.Parameters, Fields: f.Schema.Fields, Items: f.Schema.Items,
					KeyType: f.Schema.KeyType, ValueType: f.Schema.ValueType}, t, fv)
				if err != nil {
					return nil, fmt.Errorf("union branch %s: %w", f.Name, err)
				}
				return map[string]any{avroTypeName(t): a}, nil
			}
		}
		return nil, fmt.Errorf("%w: union has no branch for field %d %s", ErrConversion, i, f.Name)
	}
	if s.Optional {
		return nil, nil
	}
	return nil, fmt.Errorf("%w: union struct with no field set", ErrConversion)
}

// defaultFromAvro turns hamba's form of a field default (JSON-ish: numbers
// as float64, bytes as text) into the form its decoder gives values in.
func defaultFromAvro(as avro.Schema, d any) any {
	as = derefAvro(as)
	if u, ok := as.(*avro.UnionSchema); ok {
		// A union's default is of its first branch.
		if len(u.Types()) > 0 {
			return defaultFromAvro(u.Types()[0], d)
		}
		return d
	}
	switch as.Type() {
	case avro.Bytes, avro.Fixed:
		var raw []byte
		switch x := d.(type) {
		case string:
			for _, r := range x {
				raw = append(raw, byte(r))
			}
		case []byte:
			raw = x
		default:
			return d
		}
		var logical avro.LogicalSchema
		if l, ok := as.(avro.LogicalTypeSchema); ok {
			logical = l.Logical()
		}
		if dec, ok := logical.(*avro.DecimalLogicalSchema); ok {
			return new(big.Rat).SetFrac(fromTwosComplement(raw), pow10(dec.Scale()))
		}
		return raw
	case avro.Int, avro.Long:
		if n, ok := jsonInt(d); ok {
			var logical avro.LogicalType
			if l, ok := as.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
				logical = l.Logical().Type()
			}
			switch logical {
			case avro.Date:
				return time.Unix(n*86400, 0).UTC()
			case avro.TimeMillis:
				return time.Duration(n) * time.Millisecond
			case avro.TimeMicros:
				return time.Duration(n) * time.Microsecond
			case avro.TimestampMillis:
				return time.UnixMilli(n).UTC()
			case avro.TimestampMicros:
				return time.UnixMicro(n).UTC()
			}
			return n
		}
	case avro.Float, avro.Double:
		if f, ok := d.(float64); ok {
			return f
		}
	case avro.Array:
		if items, ok := d.([]any); ok {
			out := make([]any, len(items))
			for i, item := range items {
				out[i] = defaultFromAvro(as.(*avro.ArraySchema).Items(), item)
			}
			return out
		}
	case avro.Map:
		if m, ok := d.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, item := range m {
				out[k] = defaultFromAvro(as.(*avro.MapSchema).Values(), item)
			}
			return out
		}
	case avro.Record:
		if m, ok := d.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for _, f := range as.(*avro.RecordSchema).Fields() {
				if v, ok := m[f.Name()]; ok {
					out[f.Name()] = defaultFromAvro(f.Type(), v)
				}
			}
			return out
		}
	}
	return d
}

// decodeAvroPayload decodes an Avro payload with registry/serde's reader,
// which checks every length and block count against the payload's size
// before allocating or looping (hamba's generic decoding trusts them).
// Values come in serde's natural forms: records as map[string]any, ints
// as int64, decimals as json.Number, the date and time logical types as
// their stored numbers, a union with one non-null branch bare, other
// unions as {"branch name": value}.
func decodeAvroPayload(p schema.Parsed, payload []byte) (any, error) {
	v, err := serde.DecodePayload(serde.Schema{Type: schema.Avro, Parsed: p}, payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConversion, err)
	}
	return v, nil
}

// connectValueFromAvro turns a decoded Avro value (decodeAvroPayload's
// forms; for defaults also time.Time, time.Duration and *big.Rat) into
// the Connect value of s, the schema connectSchemaFromAvro made of as.
func connectValueFromAvro(s *Schema, as avro.Schema, v any) (any, error) {
	as = derefAvro(as)
	if v == nil {
		if !s.Optional && s.Default == nil {
			return nil, fmt.Errorf("%w: null for a required %s", ErrConversion, describeSchema(s))
		}
		return nil, nil
	}
	if u, ok := as.(*avro.UnionSchema); ok {
		if s.Type == TypeStruct && s.Name == avroUnionName {
			return connectUnionFromAvro(s, u, v)
		}
		branch, _ := avroNonNullBranch(u)
		as = derefAvro(branch)
	}
	var logical avro.LogicalType
	if l, ok := as.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		logical = l.Logical().Type()
	}
	switch s.Name {
	case LogicalDecimal:
		switch x := v.(type) {
		case *big.Rat:
			return x, nil
		case json.Number:
			if r, ok := new(big.Rat).SetString(x.String()); ok {
				return r, nil
			}
		case []byte:
			scale, err := decimalScale(s)
			if err != nil {
				return nil, err
			}
			return new(big.Rat).SetFrac(fromTwosComplement(x), pow10(scale)), nil
		}
		return nil, fmt.Errorf("%w: Decimal from Avro %T %v", ErrConversion, v, v)
	case LogicalDate, LogicalTimestamp, LogicalTime:
		if x, ok := v.(time.Time); ok {
			return time.UnixMilli(x.UnixMilli()).UTC(), nil
		}
		if x, ok := v.(time.Duration); ok {
			return time.UnixMilli(x.Milliseconds()).UTC(), nil
		}
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: %s from Avro %T", ErrConversion, s.Name, v)
		}
		switch {
		case logical == avro.Date || s.Name == LogicalDate && logical == "":
			return time.Unix(n*86400, 0).UTC(), nil
		case logical == avro.TimestampMicros || logical == avro.TimeMicros:
			return time.UnixMilli(floorDiv(n, 1000)).UTC(), nil
		}
		return time.UnixMilli(n).UTC(), nil
	}
	switch s.Type {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("%w: %s from Avro %T", ErrConversion, s.Type, v)
		}
		return intOfType(n, s.Type)
	case TypeFloat32:
		switch x := v.(type) {
		case float32:
			return x, nil
		case float64:
			return float32(x), nil
		}
	case TypeFloat64:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case TypeString:
		if str, ok := v.(string); ok {
			return str, nil
		}
	case TypeBytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
		// hamba gives a fixed as a byte array ([n]byte).
		if b, ok := fixedBytes(v); ok {
			return b, nil
		}
	case TypeArray:
		items, ok := v.([]any)
		if !ok {
			break
		}
		var itemSchema avro.Schema
		if a, ok := as.(*avro.ArraySchema); ok {
			itemSchema = a.Items()
		}
		out := make([]any, len(items))
		for i, item := range items {
			c, err := connectValueFromAvro(s.Items, itemSchema, item)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = c
		}
		return out, nil
	case TypeMap:
		return connectMapFromAvro(s, as, v)
	case TypeStruct:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		r, _ := as.(*avro.RecordSchema)
		st := &Struct{Schema: s, Values: make([]any, len(s.Fields))}
		for i, f := range s.Fields {
			var fa avro.Schema
			if r != nil && i < len(r.Fields()) {
				fa = r.Fields()[i].Type()
			}
			c, err := connectValueFromAvro(f.Schema, fa, m[f.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			st.Values[i] = c
		}
		return st, nil
	}
	return nil, fmt.Errorf("%w: %s from Avro %T", ErrConversion, describeSchema(s), v)
}

func connectMapFromAvro(s *Schema, as avro.Schema, v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		var values avro.Schema
		if m, ok := as.(*avro.MapSchema); ok {
			values = m.Values()
		}
		out := make(map[string]any, len(x))
		for k, item := range x {
			c, err := connectValueFromAvro(s.ValueType, values, item)
			if err != nil {
				return nil, fmt.Errorf("map value %q: %w", k, err)
			}
			out[k] = c
		}
		return out, nil
	case []any:
		var keySchema, valueSchema avro.Schema
		if a, ok := as.(*avro.ArraySchema); ok {
			if r, ok := derefAvro(a.Items()).(*avro.RecordSchema); ok && len(r.Fields()) == 2 {
				keySchema, valueSchema = r.Fields()[0].Type(), r.Fields()[1].Type()
			}
		}
		stringKeys := s.KeyType.Type == TypeString
		strOut := map[string]any{}
		anyOut := map[any]any{}
		for _, e := range x {
			entry, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: map entry %T", ErrConversion, e)
			}
			k, err := connectValueFromAvro(s.KeyType, keySchema, entry["key"])
			if err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			val, err := connectValueFromAvro(s.ValueType, valueSchema, entry["value"])
			if err != nil {
				return nil, fmt.Errorf("map value: %w", err)
			}
			if ks, ok := k.(string); ok && stringKeys {
				strOut[ks] = val
				continue
			}
			if !comparableKey(k) {
				return nil, fmt.Errorf("%w: map key of type %T cannot be a Go map key", ErrConversion, k)
			}
			anyOut[k] = val
		}
		if stringKeys && len(anyOut) == 0 {
			return strOut, nil
		}
		return anyOut, nil
	}
	return nil, fmt.Errorf("%w: map from Avro %T", ErrConversion, v)
}

func comparableKey(k any) bool {
	switch k.(type) {
	case []byte, []any, map[string]any, map[any]any:
		return false
	}
	return true
}

func connectUnionFromAvro(s *Schema, u *avro.UnionSchema, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf("%w: union value %T", ErrConversion, v)
	}
	for name, inner := range m {
		for _, t := range u.Types() {
			if t.Type() == avro.Null || avroBranchName(t) != name {
				continue
			}
			st := &Struct{Schema: s, Values: make([]any, len(s.Fields))}
			for i, f := range s.Fields {
				if f.Name == unionFieldName(t) {
					c, err := connectValueFromAvro(f.Schema, t, inner)
					if err != nil {
						return nil, fmt.Errorf("union branch %s: %w", f.Name, err)
					}
					st.Values[i] = c
					return st, nil
				}
			}
		}
		return nil, fmt.Errorf("%w: union branch %q not in the schema", ErrConversion, name)
	}
	return nil, nil // not reached: m has one entry
}

// avroBranchName is the name a union branch has in decodeAvroPayload's
// {name: value}: a named type's full name, else its type.
func avroBranchName(t avro.Schema) string {
	t = derefAvro(t)
	if n, ok := t.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(t.Type())
}

// floorDiv is a/b rounded towards negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func fixedBytes(v any) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Array || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	out := make([]byte, rv.Len())
	reflect.Copy(reflect.ValueOf(out), rv)
	return out, true
}
