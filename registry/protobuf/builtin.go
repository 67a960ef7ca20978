package protobuf

// builtinImports are the files Confluent's registry lets a schema import
// without a reference, beyond the google/protobuf ones protocompile
// carries (google/type/date.proto and timeofday.proto are the two of
// Google's common types Confluent's ProtobufConverter writes for the
// Date and Time logical types). The texts are written for this package: what matters to a
// schema that imports them is their package, message and field names and
// numbers, and the extension numbers of the options, which follow
// Confluent's published files.
var builtinImports = map[string]string{
	"confluent/meta.proto":         confluentMeta,
	"confluent/type/decimal.proto": confluentDecimal,
	"google/type/date.proto":       googleDate,
	"google/type/timeofday.proto":  googleTimeOfDay,
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

// googleDate is google.type.Date: a calendar date (year 0 and month 0 or
// day 0 stand for "not given").
const googleDate = `syntax = "proto3";

package google.type;

message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
`

// googleTimeOfDay is google.type.TimeOfDay: a time of day, no date or
// time zone.
const googleTimeOfDay = `syntax = "proto3";

package google.type;

message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
`
