package iceberg

import (
	"fmt"
	"math"
	"time"

	iceberg "github.com/apache/iceberg-go"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ProtobufStruct maps a Protobuf message to the Iceberg struct of its
// columns (field IDs 0), named as the .proto names the fields:
//
//	Protobuf                                     Iceberg
//	bool                                         boolean
//	int32, sint32, sfixed32                      int
//	int64, sint64, sfixed64, uint32, fixed32     long
//	uint64, fixed64                              decimal(20, 0)
//	float, double                                float, double
//	string, enum (its value's name)              string
//	bytes                                        binary
//	message                                      struct
//	google.protobuf.Timestamp                    timestamptz
//	google.protobuf.*Value wrappers              the wrapped type
//	repeated                                     list
//	map<K, V>                                    map<string, V> (keys as text)
//
// Every column is optional. A message that contains itself is refused
// (ErrUnsupportedSchema).
func ProtobufStruct(md protoreflect.MessageDescriptor) (*iceberg.StructType, error) {
	t, err := protobufMessageType(md, nil)
	if err != nil {
		return nil, err
	}
	st, ok := t.(*iceberg.StructType)
	if !ok {
		return nil, fmt.Errorf("%w: message %s is a well-known scalar, not a record", ErrUnsupportedSchema, md.FullName())
	}
	for _, f := range st.FieldList {
		if f.Name == KafkaColumn {
			return nil, fmt.Errorf("%w: a value field named %q (the column of the Kafka coordinates)", ErrUnsupportedSchema, KafkaColumn)
		}
	}
	return st, nil
}

const protobufTimestamp = "google.protobuf.Timestamp"

// protobufWrapper reports whether md is one of google.protobuf's wrappers
// (StringValue, Int64Value, …), whose one field "value" is the value.
func protobufWrapper(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile() != nil && md.ParentFile().Path() == "google/protobuf/wrappers.proto"
}

func protobufMessageType(md protoreflect.MessageDescriptor, seen []protoreflect.FullName) (iceberg.Type, error) {
	switch {
	case md.FullName() == protobufTimestamp:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case protobufWrapper(md):
		return protobufKindType(md.Fields().ByName("value"), seen)
	}
	for _, name := range seen {
		if name == md.FullName() {
			return nil, fmt.Errorf("%w: message %s contains itself", ErrUnsupportedSchema, name)
		}
	}
	seen = append(seen, md.FullName())
	st := &iceberg.StructType{}
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		t, err := protobufFieldType(f, seen)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", md.Name(), f.Name(), err)
		}
		st.FieldList = append(st.FieldList, iceberg.NestedField{Name: string(f.Name()), Type: t})
	}
	return st, nil
}

func protobufFieldType(f protoreflect.FieldDescriptor, seen []protoreflect.FullName) (iceberg.Type, error) {
	switch {
	case f.IsMap():
		value, err := protobufKindType(f.MapValue(), seen)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.String, ValueType: value}, nil
	case f.IsList():
		elem, err := protobufKindType(f, seen)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: elem}, nil
	}
	return protobufKindType(f, seen)
}

// protobufKindType is the column type of one value of f (an element of a
// repeated field).
func protobufKindType(f protoreflect.FieldDescriptor, seen []protoreflect.FullName) (iceberg.Type, error) {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return iceberg.PrimitiveTypes.Bool, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return iceberg.PrimitiveTypes.Int32, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return iceberg.PrimitiveTypes.Int64, nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return iceberg.DecimalTypeOf(20, 0), nil
	case protoreflect.FloatKind:
		return iceberg.PrimitiveTypes.Float32, nil
	case protoreflect.DoubleKind:
		return iceberg.PrimitiveTypes.Float64, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return iceberg.PrimitiveTypes.String, nil
	case protoreflect.BytesKind:
		return iceberg.PrimitiveTypes.Binary, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protobufMessageType(f.Message(), seen)
	}
	return nil, fmt.Errorf("%w: Protobuf kind %s has no column type", ErrUnsupportedSchema, f.Kind())
}

// ProtobufValue turns a decoded message into the values CoerceValue takes
// for the columns of ProtobufStruct (by .proto field name). A field
// without presence reads its default (proto3 scalars: 0, "", false, the
// first enum value); an unset message or optional field reads null.
func ProtobufValue(msg protoreflect.Message) map[string]any {
	out := map[string]any{}
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.HasPresence() && !msg.Has(f) {
			out[string(f.Name())] = nil
			continue
		}
		out[string(f.Name())] = protobufFieldValue(f, msg.Get(f))
	}
	return out
}

func protobufFieldValue(f protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch {
	case f.IsMap():
		m := map[string]any{}
		v.Map().Range(func(k protoreflect.MapKey, item protoreflect.Value) bool {
			m[k.String()] = protobufScalar(f.MapValue(), item)
			return true
		})
		return m
	case f.IsList():
		list := v.List()
		items := make([]any, list.Len())
		for i := range items {
			items[i] = protobufScalar(f, list.Get(i))
		}
		return items
	}
	return protobufScalar(f, v)
}

// protobufScalar is one value of f (an element of a repeated field).
func protobufScalar(f protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(v.Uint())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return fmt.Sprint(v.Uint()) // a decimal(20, 0)
	case protoreflect.FloatKind:
		return float32(v.Float())
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.EnumKind:
		if ev := f.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return fmt.Sprint(int32(v.Enum()))
	case protoreflect.BytesKind:
		return v.Bytes()
	case protoreflect.MessageKind, protoreflect.GroupKind:
		msg := v.Message()
		md := msg.Descriptor()
		switch {
		case md.FullName() == protobufTimestamp:
			fields := md.Fields()
			secs, nanos := msg.Get(fields.ByName("seconds")).Int(), msg.Get(fields.ByName("nanos")).Int()
			if secs > math.MaxInt64/1_000_000-1 || secs < math.MinInt64/1_000_000+1 {
				return nil
			}
			return time.Unix(secs, nanos).UTC()
		case protobufWrapper(md):
			return protobufScalar(md.Fields().ByName("value"), msg.Get(md.Fields().ByName("value")))
		}
		if !msg.IsValid() {
			return nil
		}
		return ProtobufValue(msg)
	}
	return nil
}
