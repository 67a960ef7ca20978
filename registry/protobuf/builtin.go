package protobuf

// builtinImports are the files Confluent's registry lets a schema import
// without a reference, beyond the google/protobuf ones protocompile
// carries. The texts are written for this package: what matters to a
// schema that imports them is their package, message and field names and
// numbers, and the extension numbers of the options, which follow
// Confluent's published files.
var builtinImports = map[string]string{
	"confluent/meta.proto":         confluentMeta,
	"confluent/type/decimal.proto": confluentDecimal,
}

// confluentMeta declares the (confluent.*_meta) options that carry
// documentation, parameters and tags on a file, message, field, enum or
// enum value.
const confluentMeta = `syntax = "proto3";

package confluent;

import "google/protobuf/descriptor.proto";

// Meta is the value of every confluent meta option.
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}

extend google.protobuf.FileOptions {
  Meta file_meta = 1088;
}

extend google.protobuf.MessageOptions {
  Meta message_meta = 1088;
}

extend google.protobuf.FieldOptions {
  Meta field_meta = 1088;
}

extend google.protobuf.EnumOptions {
  Meta enum_meta = 1088;
}

extend google.protobuf.EnumValueOptions {
  Meta enum_value_meta = 1088;
}
`

// confluentDecimal is the decimal logical type: an unscaled two's
// complement big-endian integer with its precision and scale.
const confluentDecimal = `syntax = "proto3";

package confluent.type;

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`
