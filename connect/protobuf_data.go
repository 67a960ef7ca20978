package connect

// Connect ↔ Protobuf, as Confluent's ProtobufData
// (io.confluent.connect.protobuf) maps them. Pure: no registry, no I/O.
//
// Schemas, Connect → .proto (proto3):
//
//	Connect                   Protobuf
//	struct named "a.b.C"      package a.b; message C (unnamed: ConnectDefault1, nested
//	                          unnamed structs ConnectDefault2, 3, …); fields numbered 1, 2, …
//	                          in Connect order (or by the parameter io.confluent.connect.protobuf.Tag)
//	int8, int16               int32 [(confluent.field_meta) = { params: [{key: "connect.type", value: "int8"}] }]
//	int32, int64              int32, int64
//	float, double             float, double
//	boolean, string, bytes    bool, string, bytes
//	Decimal                   confluent.type.Decimal, params scale (and precision from
//	                          connect.decimal.precision)
//	Date, Time, Timestamp     google.type.Date, google.type.TimeOfDay, google.protobuf.Timestamp
//	array                     repeated T (arrays of arrays or maps are refused, as Confluent)
//	map, int/string/bool keys map<K, V>
//	map, other keys           repeated <Field>Entry, a nested message {key = 1; value = 2}
//	nested struct             a nested message named after the struct (its last name part)
//	optional scalar           proto3 "optional" (Confluent's optional.for.nullables=true;
//	                          Confluent's default writes a plain field and null is lost)
//
// Protobuf → Connect: a message is a struct named by its full name
// (Confluent's enhanced.protobuf.schema.support), fields in declaration
// order; int32, sint32, sfixed32 → int32 (int8/int16 by the connect.type
// parameter), the other integers → int64, float, double, bool, string,
// bytes as themselves, an enum → string (the symbol), the four types above
// → Decimal, Date, Time, Timestamp, the wrapper types
// (google.protobuf.StringValue, …) → their optional scalar, another
// message → an optional struct, repeated → an optional array, map → an
// optional map. A scalar field with presence (proto3 optional, proto2
// optional, a oneof member: oneofs are flattened into their fields) is
// optional, a plain proto3 scalar is required. A recursive message has no
// Connect form.

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Names Confluent's ProtobufData uses.
const (
	protoDefaultName  = "ConnectDefault"
	protoTagParameter = "io.confluent.connect.protobuf.Tag"
	protoDecimalType  = "confluent.type.Decimal"
	protoDateType     = "google.type.Date"
	protoTimeType     = "google.type.TimeOfDay"
	protoTimestamp    = "google.protobuf.Timestamp"
	protoFieldMetaExt = 1088 // (confluent.field_meta)
)

var protoImports = map[string]string{
	protoDecimalType: "confluent/type/decimal.proto",
	protoDateType:    "google/type/date.proto",
	protoTimeType:    "google/type/timeofday.proto",
	protoTimestamp:   "google/protobuf/timestamp.proto",
}

// protoSchemaText returns the .proto text Confluent's ProtobufData makes
// of a Connect struct schema, and the full name of its message.
func protoSchemaText(s *Schema) (text, fullName string, err error) {
	if s == nil || s.Type != TypeStruct {
		return "", "", fmt.Errorf("%w: Protobuf needs a struct schema (a message)", ErrConversion)
	}
	b := &protoBuilder{imports: map[string]bool{}}
	pkg, name := splitAvroName(s.Name)
	if s.Name == "" {
		name = b.defaultName()
	}
	name = protoIdent(name)
	var msg strings.Builder
	if err := b.message(&msg, s, name, "", 0); err != nil {
		return "", "", err
	}
	var out strings.Builder
	out.WriteString("syntax = \"proto3\";\n")
	if pkg != "" {
		parts := strings.Split(pkg, ".")
		for i := range parts {
			parts[i] = protoIdent(parts[i])
		}
		pkg = strings.Join(parts, ".")
		fmt.Fprintf(&out, "\npackage %s;\n", pkg)
	}
	if len(b.imports) > 0 {
		out.WriteString("\n")
		for _, imp := range sortedMapKeys(b.imports) {
			fmt.Fprintf(&out, "import %q;\n", imp)
		}
	}
	out.WriteString("\n")
	out.WriteString(msg.String())
	fullName = name
	if pkg != "" {
		fullName = pkg + "." + name
	}
	return out.String(), fullName, nil
}

type protoBuilder struct {
	imports  map[string]bool
	defaults int
}

func (b *protoBuilder) defaultName() string {
	b.defaults++
	return protoDefaultName + strconv.Itoa(b.defaults)
}

// protoIdent makes name a valid identifier: other characters become _.
func protoIdent(name string) string {
	out := []byte(name)
	for i, c := range out {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			out[i] = '_'
		}
	}
	if len(out) == 0 {
		return "_"
	}
	return string(out)
}

// camel is a field name as protoc names its map entry: FooBar for foo_bar.
func camel(name string) string {
	var sb strings.Builder
	up := true
	for _, c := range name {
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		sb.WriteRune(c)
	}
	return sb.String()
}

func (b *protoBuilder) message(out *strings.Builder, s *Schema, name, indent string, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%w: schema nested deeper than %d", ErrConversion, maxSchemaDepth)
	}
	fmt.Fprintf(out, "%smessage %s {\n", indent, name)
	inner := indent + "  "
	nested := map[string]*Schema{}
	var nestedText strings.Builder
	number := 1
	for _, f := range s.Fields {
		fs := f.Schema
		if fs == nil {
			return fmt.Errorf("%w: field %s without a schema", ErrConversion, f.Name)
		}
		tag := number
		if t, ok := fs.Parameters[protoTagParameter]; ok {
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 || n > 536870911 {
				return fmt.Errorf("%w: field %s: %s %q", ErrConversion, f.Name, protoTagParameter, t)
			}
			tag = n
		} else {
			number++
		}
		fieldName := protoIdent(f.Name)
		// defineStruct declares a nested message for a struct and gives its name.
		defineStruct := func(st *Schema) (string, error) {
			_, n := splitAvroName(st.Name)
			if st.Name == "" {
				n = b.defaultName()
			}
			n = protoIdent(n)
			if n == fieldName {
				n += "Message"
			}
			if prev, ok := nested[n]; ok {
				a, b := *prev, *st
				a.Optional, b.Optional = false, false
				if !sameSchema(&a, &b) {
					return "", fmt.Errorf("%w: two different struct schemas named %q in message %s", ErrConversion, n, name)
				}
				return n, nil
			}
			nested[n] = st
			return n, b.message(&nestedText, st, n, inner, depth+1)
		}
		typeOf := func(t *Schema, params map[string]string) (string, error) {
			if t.Type == TypeStruct && !isLogical(t) {
				return defineStruct(t)
			}
			if t.Type == TypeArray || t.Type == TypeMap {
				return "", fmt.Errorf("%w: field %s: arrays and maps cannot nest in Protobuf", ErrConversion, f.Name)
			}
			return b.scalar(t, params)
		}
		params := map[string]string{}
		var line string
		switch fs.Type {
		case TypeArray:
			if fs.Items == nil {
				return fmt.Errorf("%w: field %s: array without items", ErrConversion, f.Name)
			}
			t, err := typeOf(fs.Items, params)
			if err != nil {
				return err
			}
			line = fmt.Sprintf("repeated %s %s = %d", t, fieldName, tag)
		case TypeMap:
			if fs.KeyType == nil || fs.ValueType == nil {
				return fmt.Errorf("%w: field %s: map without keys or values", ErrConversion, f.Name)
			}
			valueParams := map[string]string{}
			v, err := typeOf(fs.ValueType, valueParams)
			if err != nil {
				return err
			}
			switch fs.KeyType.Type {
			case TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeString, TypeBoolean:
				if !isLogical(fs.KeyType) {
					k, _ := b.scalar(fs.KeyType, map[string]string{})
					line = fmt.Sprintf("map<%s, %s> %s = %d", k, v, fieldName, tag)
					break
				}
				fallthrough
			default:
				keyParams := map[string]string{}
				k, err := typeOf(fs.KeyType, keyParams)
				if err != nil {
					return err
				}
				entry := camel(fieldName) + "Entry"
				fmt.Fprintf(&nestedText, "%smessage %s {\n%s  %s key = 1%s;\n%s  %s value = 2%s;\n%s}\n",
					inner, entry, inner, k, b.meta(keyParams), inner, v, b.meta(valueParams), inner)
				line = fmt.Sprintf("repeated %s %s = %d", entry, fieldName, tag)
			}
		default:
			t, err := typeOf(fs, params)
			if err != nil {
				return err
			}
			label := ""
			if fs.Optional && !strings.Contains(t, ".") && !(fs.Type == TypeStruct && !isLogical(fs)) {
				label = "optional "
			}
			line = fmt.Sprintf("%s%s %s = %d", label, t, fieldName, tag)
		}
		fmt.Fprintf(out, "%s%s%s;\n", inner, line, b.meta(params))
	}
	if nestedText.Len() > 0 {
		out.WriteString("\n")
		out.WriteString(nestedText.String())
	}
	fmt.Fprintf(out, "%s}\n", indent)
	return nil
}

func isLogical(s *Schema) bool {
	switch s.Name {
	case LogicalDecimal, LogicalDate, LogicalTime, LogicalTimestamp:
		return true
	}
	return false
}

// scalar is the Protobuf type of a non-struct, non-container schema;
// params collects the field_meta parameters it needs.
func (b *protoBuilder) scalar(s *Schema, params map[string]string) (string, error) {
	switch s.Name {
	case LogicalDecimal:
		scale, err := decimalScale(s)
		if err != nil {
			return "", err
		}
		params["scale"] = strconv.Itoa(scale)
		if p, ok := s.Parameters[paramDecimalPrecision]; ok {
			params["precision"] = p
		}
		b.imports[protoImports[protoDecimalType]] = true
		return protoDecimalType, nil
	case LogicalDate, LogicalTime, LogicalTimestamp:
		t := map[string]string{LogicalDate: protoDateType, LogicalTime: protoTimeType, LogicalTimestamp: protoTimestamp}[s.Name]
		b.imports[protoImports[t]] = true
		return t, nil
	}
	switch s.Type {
	case TypeInt8, TypeInt16:
		params["connect.type"] = s.Type
		return "int32", nil
	case TypeInt32:
		return "int32", nil
	case TypeInt64:
		return "int64", nil
	case TypeFloat32:
		return "float", nil
	case TypeFloat64:
		return "double", nil
	case TypeBoolean:
		return "bool", nil
	case TypeString:
		return "string", nil
	case TypeBytes:
		return "bytes", nil
	}
	return "", fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
}

// meta is the field option carrying params, or "".
func (b *protoBuilder) meta(params map[string]string) string {
	if len(params) == 0 {
		return ""
	}
	b.imports["confluent/meta.proto"] = true
	entries := make([]string, 0, len(params))
	for _, k := range sortedMapKeys(params) {
		entries = append(entries, fmt.Sprintf("{ key: %q, value: %q }", k, params[k]))
	}
	return " [(confluent.field_meta) = { params: [ " + strings.Join(entries, ", ") + " ] }]"
}

// fieldMetaParams reads the (confluent.field_meta) params of a field from
// its options' wire form, whether or not the extension is known to the
// runtime.
func fieldMetaParams(fd protoreflect.FieldDescriptor) map[string]string {
	opts := fd.Options()
	if opts == nil {
		return nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	if err != nil {
		return nil
	}
	var params map[string]string
	eachField(raw, func(num protowire.Number, meta []byte) {
		if num != protoFieldMetaExt {
			return
		}
		eachField(meta, func(num protowire.Number, entry []byte) {
			if num != 2 { // Meta.params
				return
			}
			var k, v string
			eachField(entry, func(num protowire.Number, b []byte) {
				switch num {
				case 1:
					k = string(b)
				case 2:
					v = string(b)
				}
			})
			if params == nil {
				params = map[string]string{}
			}
			params[k] = v
		})
	})
	return params
}

// eachField calls fn with every length-delimited field of a message's
// wire form; it stops at the first malformed field.
func eachField(b []byte, fn func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return
			}
			fn(num, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return
		}
		b = b[m:]
	}
}

// connectSchemaFromProto maps a message to a Connect struct schema.
func connectSchemaFromProto(md protoreflect.MessageDescriptor) (*Schema, error) {
	return protoMessageSchema(md, map[protoreflect.FullName]bool{}, 0)
}

func protoMessageSchema(md protoreflect.MessageDescriptor, open map[protoreflect.FullName]bool, depth int) (*Schema, error) {
	if open[md.FullName()] || depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: message %s is recursive, which has no Connect form", ErrConversion, md.FullName())
	}
	open[md.FullName()] = true
	defer delete(open, md.FullName())
	s := &Schema{Type: TypeStruct, Name: string(md.FullName())}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		fs, err := protoFieldSchema(fd, open, depth)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fd.Name(), err)
		}
		s.Fields = append(s.Fields, Field{Name: string(fd.Name()), Index: i, Schema: fs})
	}
	return s, nil
}

func protoFieldSchema(fd protoreflect.FieldDescriptor, open map[protoreflect.FullName]bool, depth int) (*Schema, error) {
	if fd.IsMap() {
		k, err := protoKindSchema(fd.MapKey(), open, depth)
		if err != nil {
			return nil, err
		}
		v, err := protoKindSchema(fd.MapValue(), open, depth)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: TypeMap, Optional: true, KeyType: k, ValueType: v}, nil
	}
	item, err := protoKindSchema(fd, open, depth)
	if err != nil {
		return nil, err
	}
	if fd.IsList() {
		if entry := fd.Message(); entry != nil && strings.HasSuffix(string(entry.Name()), "Entry") && isEntryMessage(entry) {
			key := *item.Fields[0].Schema
			key.Optional = false // a map key is never null
			return &Schema{Type: TypeMap, Optional: true, KeyType: &key, ValueType: item.Fields[1].Schema}, nil
		}
		item.Optional = false
		return &Schema{Type: TypeArray, Optional: true, Items: item}, nil
	}
	if fd.HasPresence() {
		item.Optional = true
	}
	return item, nil
}

// isEntryMessage: a message of exactly key = 1 and value = 2, what
// ProtobufData writes for maps whose keys cannot be map<> keys.
func isEntryMessage(md protoreflect.MessageDescriptor) bool {
	f := md.Fields()
	return f.Len() == 2 && f.Get(0).Name() == "key" && f.Get(0).Number() == 1 &&
		f.Get(1).Name() == "value" && f.Get(1).Number() == 2
}

func protoKindSchema(fd protoreflect.FieldDescriptor, open map[protoreflect.FullName]bool, depth int) (*Schema, error) {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		switch fieldMetaParams(fd)["connect.type"] {
		case TypeInt8:
			return &Schema{Type: TypeInt8}, nil
		case TypeInt16:
			return &Schema{Type: TypeInt16}, nil
		}
		return &Schema{Type: TypeInt32}, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return &Schema{Type: TypeInt64}, nil
	case protoreflect.FloatKind:
		return &Schema{Type: TypeFloat32}, nil
	case protoreflect.DoubleKind:
		return &Schema{Type: TypeFloat64}, nil
	case protoreflect.BoolKind:
		return &Schema{Type: TypeBoolean}, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return &Schema{Type: TypeString}, nil
	case protoreflect.BytesKind:
		return &Schema{Type: TypeBytes}, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		switch md.FullName() {
		case protoDecimalType:
			p := fieldMetaParams(fd)
			scale := p["scale"]
			if _, err := strconv.Atoi(scale); err != nil {
				scale = "0"
			}
			s := &Schema{Type: TypeBytes, Name: LogicalDecimal, Version: 1, Optional: true, Parameters: map[string]string{"scale": scale}}
			if prec, ok := p["precision"]; ok {
				s.Parameters[paramDecimalPrecision] = prec
			}
			return s, nil
		case protoDateType:
			return &Schema{Type: TypeInt32, Name: LogicalDate, Version: 1, Optional: true}, nil
		case protoTimeType:
			return &Schema{Type: TypeInt32, Name: LogicalTime, Version: 1, Optional: true}, nil
		case protoTimestamp:
			return &Schema{Type: TypeInt64, Name: LogicalTimestamp, Version: 1, Optional: true}, nil
		}
		if w := protoWrapped(md); w != nil {
			inner, err := protoKindSchema(w, open, depth)
			if err != nil {
				return nil, err
			}
			inner.Optional = true
			return inner, nil
		}
		s, err := protoMessageSchema(md, open, depth+1)
		if err != nil {
			return nil, err
		}
		s.Optional = true
		return s, nil
	}
	return nil, fmt.Errorf("%w: Protobuf kind %s", ErrConversion, fd.Kind())
}

// protoWrapped is the value field of a google.protobuf wrapper type.
func protoWrapped(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if md.ParentFile() == nil || md.ParentFile().Package() != "google.protobuf" || !strings.HasSuffix(string(md.Name()), "Value") {
		return nil
	}
	if f := md.Fields(); f.Len() == 1 && f.Get(0).Name() == "value" {
		return f.Get(0)
	}
	return nil
}

// protoMessage builds the message md of a Connect struct value, fields
// matched by name (md may be a later version of the record's schema).
func protoMessage(md protoreflect.MessageDescriptor, s *Schema, v any, depth int) (*dynamicpb.Message, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d", ErrConversion, maxSchemaDepth)
	}
	st, ok := v.(*Struct)
	if !ok {
		return nil, fmt.Errorf("%w: struct schema needs *Struct, got %T", ErrConversion, v)
	}
	msg := dynamicpb.NewMessage(md)
	for i, f := range s.Fields {
		fv := st.fieldValue(s, i)
		if fv == nil {
			fv = f.Schema.Default
		}
		fd := md.Fields().ByName(protoreflect.Name(protoIdent(f.Name)))
		if fd == nil {
			if fv != nil {
				return nil, fmt.Errorf("%w: field %s: message %s has no such field", ErrConversion, f.Name, md.FullName())
			}
			continue
		}
		if fv == nil {
			if !f.Schema.Optional {
				return nil, fmt.Errorf("%w: field %s: null value for a required %s schema", ErrConversion, f.Name, f.Schema.Type)
			}
			continue
		}
		if err := setProtoField(msg, fd, f.Schema, fv, depth); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return msg, nil
}

func setProtoField(msg *dynamicpb.Message, fd protoreflect.FieldDescriptor, s *Schema, v any, depth int) error {
	switch {
	case fd.IsMap():
		if s.Type != TypeMap {
			return fmt.Errorf("%w: a map field needs a map schema, not %s", ErrConversion, s.Type)
		}
		entries, err := mapEntries(v)
		if err != nil {
			return err
		}
		m := msg.Mutable(fd).Map()
		for _, e := range entries {
			k, err := protoValue(msg, fd.MapKey(), s.KeyType, e.key, depth)
			if err != nil {
				return fmt.Errorf("map key %v: %w", e.key, err)
			}
			if e.value == nil {
				return fmt.Errorf("%w: map value of key %v is null, which Protobuf cannot write", ErrConversion, e.key)
			}
			val, err := protoValue(msg, fd.MapValue(), s.ValueType, e.value, depth)
			if err != nil {
				return fmt.Errorf("map value %v: %w", e.key, err)
			}
			m.Set(k.MapKey(), val)
		}
	case fd.IsList():
		list := msg.Mutable(fd).List()
		if s.Type == TypeMap {
			entries, err := mapEntries(v)
			if err != nil {
				return err
			}
			entry := fd.Message()
			for _, e := range entries {
				em := dynamicpb.NewMessage(entry)
				for _, kv := range []struct {
					name   protoreflect.Name
					schema *Schema
					value  any
				}{{"key", s.KeyType, e.key}, {"value", s.ValueType, e.value}} {
					if kv.value == nil {
						continue
					}
					if err := setProtoField(em, entry.Fields().ByName(kv.name), kv.schema, kv.value, depth+1); err != nil {
						return fmt.Errorf("map %s: %w", kv.name, err)
					}
				}
				list.Append(protoreflect.ValueOfMessage(em))
			}
			return nil
		}
		items, ok := v.([]any)
		if !ok || s.Type != TypeArray {
			return fmt.Errorf("%w: a repeated field needs an array ([]any), got %T", ErrConversion, v)
		}
		for i, item := range items {
			if item == nil {
				return fmt.Errorf("%w: item %d is null, which Protobuf cannot write", ErrConversion, i)
			}
			pv, err := protoValue(msg, fd, s.Items, item, depth)
			if err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
			list.Append(pv)
		}
	default:
		pv, err := protoValue(msg, fd, s, v, depth)
		if err != nil {
			return err
		}
		msg.Set(fd, pv)
	}
	return nil
}

// protoValue is one Connect value as a value of fd's kind.
func protoValue(parent *dynamicpb.Message, fd protoreflect.FieldDescriptor, s *Schema, v any, depth int) (protoreflect.Value, error) {
	if s == nil {
		return protoreflect.Value{}, fmt.Errorf("%w: no schema", ErrConversion)
	}
	var none protoreflect.Value
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		m := dynamicpb.NewMessage(md)
		set := func(name string, x protoreflect.Value) { m.Set(md.Fields().ByName(protoreflect.Name(name)), x) }
		switch md.FullName() {
		case protoDecimalType:
			scale, err := decimalScale(s)
			if err != nil {
				return none, err
			}
			unscaled, err := decimalUnscaled(v, scale)
			if err != nil {
				return none, err
			}
			set("value", protoreflect.ValueOfBytes(twosComplement(unscaled)))
			set("precision", protoreflect.ValueOfUint32(uint32(len(new(big.Int).Abs(unscaled).String()))))
			set("scale", protoreflect.ValueOfInt32(int32(scale)))
			return protoreflect.ValueOfMessage(m), nil
		case protoDateType, protoTimeType, protoTimestamp:
			t, ok := v.(time.Time)
			if !ok {
				return none, fmt.Errorf("%w: %s needs a time.Time, got %T", ErrConversion, md.FullName(), v)
			}
			t = t.UTC()
			switch md.FullName() {
			case protoDateType:
				set("year", protoreflect.ValueOfInt32(int32(t.Year())))
				set("month", protoreflect.ValueOfInt32(int32(t.Month())))
				set("day", protoreflect.ValueOfInt32(int32(t.Day())))
			case protoTimeType:
				set("hours", protoreflect.ValueOfInt32(int32(t.Hour())))
				set("minutes", protoreflect.ValueOfInt32(int32(t.Minute())))
				set("seconds", protoreflect.ValueOfInt32(int32(t.Second())))
				set("nanos", protoreflect.ValueOfInt32(int32(t.Nanosecond()/1e6*1e6)))
			default:
				ms := t.UnixMilli()
				set("seconds", protoreflect.ValueOfInt64(floorDiv(ms, 1000)))
				set("nanos", protoreflect.ValueOfInt32(int32((ms-floorDiv(ms, 1000)*1000)*1e6)))
			}
			return protoreflect.ValueOfMessage(m), nil
		}
		if w := protoWrapped(md); w != nil {
			inner, err := protoValue(m, w, s, v, depth+1)
			if err != nil {
				return none, err
			}
			m.Set(w, inner)
			return protoreflect.ValueOfMessage(m), nil
		}
		if s.Type != TypeStruct {
			return none, fmt.Errorf("%w: message %s needs a struct, not %s", ErrConversion, md.FullName(), s.Type)
		}
		sub, err := protoMessage(md, s, v, depth+1)
		if err != nil {
			return none, err
		}
		return protoreflect.ValueOfMessage(sub), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, ok := toInt64(v)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return none, fmt.Errorf("%w: %s field needs a 32-bit integer, got %v (%T)", ErrConversion, fd.Kind(), v, v)
		}
		if _, err := intOfType(n, s.Type); err != nil {
			return none, err
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, ok := toInt64(v)
		if !ok {
			return none, fmt.Errorf("%w: %s field needs an integer, got %T", ErrConversion, fd.Kind(), v)
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, ok := toInt64(v)
		if !ok || n < 0 || n > math.MaxUint32 {
			return none, fmt.Errorf("%w: %s field needs an unsigned 32-bit integer, got %v", ErrConversion, fd.Kind(), v)
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, ok := toInt64(v)
		if !ok || n < 0 {
			return none, fmt.Errorf("%w: %s field needs an unsigned integer, got %v", ErrConversion, fd.Kind(), v)
		}
		return protoreflect.ValueOfUint64(uint64(n)), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		var f float64
		switch x := v.(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			n, ok := toInt64(v)
			if !ok {
				return none, fmt.Errorf("%w: %s field needs a number, got %T", ErrConversion, fd.Kind(), v)
			}
			f = float64(n)
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.BoolKind:
		b, ok := v.(bool)
		if !ok {
			return none, fmt.Errorf("%w: bool field needs a bool, got %T", ErrConversion, v)
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.StringKind:
		str, ok := v.(string)
		if !ok {
			return none, fmt.Errorf("%w: string field needs a string, got %T", ErrConversion, v)
		}
		return protoreflect.ValueOfString(str), nil
	case protoreflect.BytesKind:
		b, ok := v.([]byte)
		if !ok {
			return none, fmt.Errorf("%w: bytes field needs []byte, got %T", ErrConversion, v)
		}
		return protoreflect.ValueOfBytes(b), nil
	case protoreflect.EnumKind:
		str, _ := v.(string)
		ev := fd.Enum().Values().ByName(protoreflect.Name(str))
		if ev == nil {
			return none, fmt.Errorf("%w: enum %s has no symbol %q", ErrConversion, fd.Enum().FullName(), str)
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	}
	return none, fmt.Errorf("%w: Protobuf kind %s", ErrConversion, fd.Kind())
}

// connectValueFromProto reads a message as a Connect struct of s (made
// of the message's descriptor by connectSchemaFromProto).
func connectValueFromProto(s *Schema, msg protoreflect.Message) (*Struct, error) {
	fields := msg.Descriptor().Fields()
	st := &Struct{Schema: s, Values: make([]any, len(s.Fields))}
	for i, f := range s.Fields {
		fd := fields.ByName(protoreflect.Name(f.Name))
		if fd == nil {
			return nil, fmt.Errorf("%w: message %s has no field %s", ErrConversion, msg.Descriptor().FullName(), f.Name)
		}
		v, err := connectFieldFromProto(f.Schema, fd, msg)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		st.Values[i] = v
	}
	return st, nil
}

func connectFieldFromProto(s *Schema, fd protoreflect.FieldDescriptor, msg protoreflect.Message) (any, error) {
	switch {
	case fd.IsMap():
		pm := msg.Get(fd).Map()
		stringKeys := s.KeyType.Type == TypeString
		strOut, anyOut := map[string]any{}, map[any]any{}
		var err error
		pm.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var kv, vv any
			if kv, err = connectScalarFromProto(s.KeyType, fd.MapKey(), k.Value()); err != nil {
				return false
			}
			if vv, err = connectScalarFromProto(s.ValueType, fd.MapValue(), v); err != nil {
				return false
			}
			if stringKeys {
				strOut[kv.(string)] = vv
			} else {
				anyOut[kv] = vv
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		if stringKeys {
			return strOut, nil
		}
		return anyOut, nil
	case fd.IsList():
		list := msg.Get(fd).List()
		if s.Type == TypeMap {
			out := map[any]any{}
			entry := fd.Message()
			for i := 0; i < list.Len(); i++ {
				em := list.Get(i).Message()
				k, err := connectFieldFromProto(s.KeyType, entry.Fields().ByNumber(1), em)
				if err != nil {
					return nil, err
				}
				if !comparableKey(k) {
					return nil, fmt.Errorf("%w: map key of type %s cannot be a Go map key", ErrConversion, s.KeyType.Type)
				}
				v, err := connectFieldFromProto(s.ValueType, entry.Fields().ByNumber(2), em)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}
		out := make([]any, list.Len())
		for i := range out {
			v, err := connectScalarFromProto(s.Items, fd, list.Get(i))
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
	if fd.HasPresence() && !msg.Has(fd) {
		return nil, nil
	}
	return connectScalarFromProto(s, fd, msg.Get(fd))
}

// connectScalarFromProto reads one value of fd's kind (a list item, a map
// key or value, or a singular field).
func connectScalarFromProto(s *Schema, fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m := v.Message()
		md := m.Descriptor()
		get := func(name string) protoreflect.Value { return m.Get(md.Fields().ByName(protoreflect.Name(name))) }
		switch md.FullName() {
		case protoDecimalType:
			scale := get("scale").Int()
			if scale < 0 || scale > 1000 {
				return nil, fmt.Errorf("%w: decimal scale %d", ErrConversion, scale)
			}
			return new(big.Rat).SetFrac(fromTwosComplement(get("value").Bytes()), pow10(int(scale))), nil
		case protoDateType:
			return time.Date(int(get("year").Int()), time.Month(get("month").Int()), int(get("day").Int()), 0, 0, 0, 0, time.UTC), nil
		case protoTimeType:
			ms := ((get("hours").Int()*60+get("minutes").Int())*60+get("seconds").Int())*1000 + get("nanos").Int()/1e6
			return time.UnixMilli(ms).UTC(), nil
		case protoTimestamp:
			sec, nanos := get("seconds").Int(), get("nanos").Int()
			if sec < -62135596800 || sec > 253402300799 {
				return nil, fmt.Errorf("%w: timestamp seconds %d out of range", ErrConversion, sec)
			}
			return time.UnixMilli(sec*1000 + nanos/1e6).UTC(), nil
		}
		if w := protoWrapped(md); w != nil {
			return connectScalarFromProto(s, w, m.Get(w))
		}
		return connectValueFromProto(s, m)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return intOfType(v.Int(), s.Type)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(v.Uint()), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if v.Uint() > math.MaxInt64 {
			return nil, fmt.Errorf("%w: %d does not fit int64", ErrConversion, v.Uint())
		}
		return int64(v.Uint()), nil
	case protoreflect.FloatKind:
		return float32(v.Float()), nil
	case protoreflect.DoubleKind:
		return v.Float(), nil
	case protoreflect.BoolKind:
		return v.Bool(), nil
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BytesKind:
		return append([]byte{}, v.Bytes()...), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return strconv.Itoa(int(v.Enum())), nil
	}
	return nil, fmt.Errorf("%w: Protobuf kind %s", ErrConversion, fd.Kind())
}
