package protobuf

import "testing"

func TestNormalizedText(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{
			name: "proto3: fields by number, oneof at its first field, types fully qualified",
			text: validSchemas["proto3 basics"],
			want: `syntax = "proto3";
package shop.v1;

message Order {
  string id = 1;
  repeated .shop.v1.Order.Item items = 2;
  map<string, string> labels = 3;
  optional int64 placed_at = 4;
  .shop.v1.Order.Status status = 5;
  oneof payment {
    string card = 6;
    string voucher = 7;
  }
  message Item {
    string sku = 1;
    uint32 quantity = 2;
  }
  enum Status {
    STATUS_UNSPECIFIED = 0;
    STATUS_PAID = 1;
  }
}`,
		},
		{
			name: "proto2: labels, defaults, groups, extensions",
			text: validSchemas["proto2 with required, defaults, groups and extensions"],
			want: `syntax = "proto2";
package legacy;

message Record {
  required int32 id = 1 [default = -1];
  optional string name = 2 [default = "none"];
  optional bytes blob = 3 [default = "\000\377"];
  optional double ratio = 4 [default = inf];
  optional .legacy.Record.Kind kind = 5 [default = KIND_B];
  repeated int32 samples = 6 [packed = true];
  optional group Extra = 7 {
    optional string note = 1;
  }
  enum Kind {
    KIND_A = 1;
    KIND_B = 2;
  }
  extensions 100 to 199;
}

extend .legacy.Record {
  optional int32 revision = 100;
}`,
		},
		{
			name: "custom options: sorted by number, aggregates sorted, maps by key",
			text: validSchemas["confluent meta and decimal"],
			want: `syntax = "proto3";
package money;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option (.confluent.file_meta) = { doc: "amounts" params { key: "env" value: "prod" } params { key: "owner" value: "billing" } tags: "pii" };

message Amount {
  option (.confluent.message_meta) = { doc: "an amount" };
  .confluent.type.Decimal value = 1 [(.confluent.field_meta) = { doc: "the value" tags: "sensitive" }];
  string currency = 2 [json_name = "ccy", deprecated = true];
}`,
		},
		{
			name: "repeated custom options keep their order; message and string values escaped",
			text: validSchemas["custom options declared in the file"],
			want: `syntax = "proto2";
package opts;

import "google/protobuf/descriptor.proto";

message Tag {
  optional string name = 1;
  repeated int32 codes = 2;
}

message Use {
  optional int32 x = 1 [(.opts.tag) = { name: "t" codes: 1 codes: 2 }, (.opts.label) = "l\"q", (.opts.levels) = 3, (.opts.levels) = 1];
}

extend .google.protobuf.FieldOptions {
  optional .opts.Tag tag = 50001;
  optional string label = 50002;
  repeated int32 levels = 50003;
}`,
		},
		{
			name: "option values of every kind; map entries by key",
			text: validSchemas["option values of every kind"],
			want: `syntax = "proto3";
package kinds;

import "google/protobuf/descriptor.proto";

message Value {
  map<int32, string> by_number = 1;
  map<bool, string> by_flag = 2;
  map<uint64, string> by_unsigned = 3;
  float f = 4;
  double d = 5;
  bytes raw = 6;
  .kinds.Level level = 7;
  sint64 delta = 8;
  uint64 big = 9;
  bool on = 10;
  repeated .kinds.Value nested = 11;
}

message Use {
  option (.kinds.value) = { by_number { key: -2 value: "minus two" } by_number { key: 10 value: "ten" } by_flag { key: false value: "no" } by_flag { key: true value: "yes" } by_unsigned { key: 1 value: "one" } by_unsigned { key: 18446744073709551615 value: "max" } f: 0.25 d: -inf raw: "\000\377" level: HIGH delta: -9 big: 18446744073709551615 on: true nested { f: nan } nested { } };
}

enum Level {
  LOW = 0;
  HIGH = 1;
}

extend .google.protobuf.MessageOptions {
  .kinds.Value value = 50000;
}`,
		},
		{
			name: "reserved: ranges sorted, max, names sorted",
			text: validSchemas["reserved ranges and names"],
			want: `syntax = "proto3";

message Slots {
  int32 keep = 1;
  enum Mode {
    MODE_UNSPECIFIED = 0;
    reserved 5 to 7, 100 to max;
    reserved "GONE";
  }
  reserved 2, 9 to 11, 15, 1000 to max;
  reserved "old", "older";
}`,
		},
		{
			name: "services keep their methods in order",
			text: validSchemas["services and streaming"],
			want: `syntax = "proto3";
package rpc;

message Req {
  string q = 1;
}

message Res {
  repeated string hits = 1;
}

service Search {
  rpc Find(.rpc.Req) returns (.rpc.Res);
  rpc Watch(.rpc.Req) returns (stream .rpc.Res) {
    option deprecated = true;
  }
  rpc Upload(stream .rpc.Req) returns (.rpc.Res);
}`,
		},
		{
			name: "editions: presence and encoding are feature options",
			text: validSchemas["editions"],
			want: `edition = "2023";
package ed;

message Node {
  int32 implicit = 1 [features = { field_presence: IMPLICIT }];
  .ed.Node child = 2 [features = { message_encoding: DELIMITED }];
  repeated int32 values = 3;
  reserved gone;
}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.text).Normalized(); got != tt.want {
				t.Errorf("Normalized() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestNormalizedReparses: the normalized text is itself a valid schema,
// normalizes to itself, and is compatible both ways with the original.
func TestNormalizedReparses(t *testing.T) {
	for name, text := range validSchemas {
		t.Run(name, func(t *testing.T) {
			original := mustParse(t, text)
			again := mustParse(t, original.Normalized())
			if again.Normalized() != original.Normalized() {
				t.Errorf("normalizing twice changed the text:\n%s\nthen\n%s", original.Normalized(), again.Normalized())
			}
			if problems := New().Compatible(again, original); len(problems) > 0 {
				t.Errorf("normalized cannot read the original: %q", problems)
			}
			if problems := New().Compatible(original, again); len(problems) > 0 {
				t.Errorf("original cannot read the normalized: %q", problems)
			}
		})
	}
}

// TestTextEquality: which differences between two texts Normalized and
// Canonical erase. Canonical erases what the descriptor does not keep
// (layout, comments, how a name or a number is written, the order of
// options); Normalized erases besides the order of what can be declared
// in any order (fields, imports, reserved ranges and names).
func TestTextEquality(t *testing.T) {
	meta := `import "confluent/meta.proto";`
	tests := []struct {
		name string
		a, b string
		// Whether the normalized texts, and the canonical texts, are equal.
		normalized, canonical bool
	}{
		{
			name:       "whitespace and comments",
			a:          "syntax = \"proto3\";\nmessage A {\n  int32 x = 1;\n}\n",
			b:          "// A holds x.\nsyntax=\"proto3\";message A{/* the x */int32 x=1;}",
			normalized: true, canonical: true,
		},
		{
			name:       "layout and comments, one line or many",
			a:          "syntax = \"proto3\";\r\npackage p;\r\n\r\n// Order.\r\nmessage Order {\r\n\tstring id = 1; // the id\r\n\tmessage Line { int32 n = 1; }\r\n}\r\n",
			b:          `syntax="proto3";package p;message Order{string id=1;message Line{int32 n=1;}}`,
			normalized: true, canonical: true,
		},
		{
			name:       "a nested message declared before or after the fields",
			a:          `syntax = "proto3"; message A { message B {} int32 x = 1; }`,
			b:          `syntax = "proto3"; message A { int32 x = 1; message B {} }`,
			normalized: true, canonical: true,
		},
		{
			name:       "field order",
			a:          `syntax = "proto3"; message A { int32 x = 1; string y = 2; bool z = 3; }`,
			b:          `syntax = "proto3"; message A { bool z = 3; int32 x = 1; string y = 2; }`,
			normalized: true,
		},
		{
			name:       "field order inside a oneof and the oneof's place",
			a:          `syntax = "proto3"; message A { int32 x = 1; oneof o { string p = 2; string q = 3; } }`,
			b:          `syntax = "proto3"; message A { oneof o { string q = 3; string p = 2; } int32 x = 1; }`,
			normalized: true,
		},
		{
			name:       "option order",
			a:          `syntax = "proto3"; message A { repeated int32 x = 1 [packed = false, deprecated = true]; }`,
			b:          `syntax = "proto3"; message A { repeated int32 x = 1 [deprecated = true, packed = false]; }`,
			normalized: true, canonical: true,
		},
		{
			name:       "file option order",
			a:          `syntax = "proto3"; option java_package = "p"; option go_package = "g"; message A {}`,
			b:          `syntax = "proto3"; option go_package = "g"; option java_package = "p"; message A {}`,
			normalized: true, canonical: true,
		},
		{
			name:       "import order",
			a:          `syntax = "proto3"; import "google/protobuf/timestamp.proto"; import "google/protobuf/any.proto"; message A { google.protobuf.Any a = 1; google.protobuf.Timestamp t = 2; }`,
			b:          `syntax = "proto3"; import "google/protobuf/any.proto"; import "google/protobuf/timestamp.proto"; message A { google.protobuf.Any a = 1; google.protobuf.Timestamp t = 2; }`,
			normalized: true,
		},
		{
			name:       "how a type name is qualified",
			a:          `syntax = "proto3"; package p; message A { B b = 1; message B {} }`,
			b:          `syntax = "proto3"; package p; message A { .p.A.B b = 1; message B {} }`,
			normalized: true, canonical: true,
		},
		{
			name:       "reserved order",
			a:          `syntax = "proto3"; message A { reserved 5, 2 to 3; reserved "b", "a"; }`,
			b:          `syntax = "proto3"; message A { reserved 2 to 3; reserved 5; reserved "a"; reserved "b"; }`,
			normalized: true,
		},
		{
			name:       "a json_name equal to the default one",
			a:          `syntax = "proto3"; message A { int32 user_id = 1 [json_name = "userId"]; }`,
			b:          `syntax = "proto3"; message A { int32 user_id = 1; }`,
			normalized: true, canonical: true,
		},
		{
			name:       "aggregate option fields in another order, or set one by one",
			a:          `syntax = "proto3"; ` + meta + ` message A { int32 x = 1 [(confluent.field_meta) = { tags: "t" doc: "d" }]; }`,
			b:          `syntax = "proto3"; ` + meta + ` message A { int32 x = 1 [(confluent.field_meta).doc = "d", (confluent.field_meta).tags = "t"]; }`,
			normalized: true, canonical: true,
		},
		{
			name:       "integer literal base",
			a:          `syntax = "proto2"; message A { optional int32 x = 1 [default = 0x10]; }`,
			b:          `syntax = "proto2"; message A { optional int32 x = 1 [default = 16]; }`,
			normalized: true, canonical: true,
		},
		{
			name: "a field's number",
			a:    `syntax = "proto3"; message A { int32 x = 1; }`,
			b:    `syntax = "proto3"; message A { int32 x = 2; }`,
		},
		{
			name: "a field's type",
			a:    `syntax = "proto3"; message A { int32 x = 1; }`,
			b:    `syntax = "proto3"; message A { sint32 x = 1; }`,
		},
		{
			name: "proto3 optional",
			a:    `syntax = "proto3"; message A { int32 x = 1; }`,
			b:    `syntax = "proto3"; message A { optional int32 x = 1; }`,
		},
		{
			name: "a json_name of its own",
			a:    `syntax = "proto3"; message A { int32 user_id = 1; }`,
			b:    `syntax = "proto3"; message A { int32 user_id = 1 [json_name = "uid"]; }`,
		},
		{
			name: "message order (it gives the message indexes)",
			a:    `syntax = "proto3"; message A {} message B {}`,
			b:    `syntax = "proto3"; message B {} message A {}`,
		},
		{
			name: "enum value order (the first is the proto2 default)",
			a:    `syntax = "proto2"; enum E { X = 1; Y = 2; }`,
			b:    `syntax = "proto2"; enum E { Y = 2; X = 1; }`,
		},
		{
			name: "package",
			a:    `syntax = "proto3"; package a; message A {}`,
			b:    `syntax = "proto3"; package b; message A {}`,
		},
		{
			name: "syntax",
			a:    `syntax = "proto2"; message A {}`,
			b:    `syntax = "proto3"; message A {}`,
		},
		{
			name: "an option's value",
			a:    `syntax = "proto3"; message A { int32 x = 1 [deprecated = true]; }`,
			b:    `syntax = "proto3"; message A { int32 x = 1 [deprecated = false]; }`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			if equal := a.Normalized() == b.Normalized(); equal != tt.normalized {
				t.Errorf("normalized texts equal = %v, want %v:\n%s\n--\n%s", equal, tt.normalized, a.Normalized(), b.Normalized())
			}
			if equal := a.Canonical() == b.Canonical(); equal != tt.canonical {
				t.Errorf("canonical texts equal = %v, want %v:\n%s\n--\n%s", equal, tt.canonical, a.Canonical(), b.Canonical())
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		in    string
		bytes bool
		want  string
	}{
		{in: `plain`, want: `"plain"`},
		{in: "q\"b\\n\n\r\t", want: `"q\"b\\n\n\r\t"`},
		{in: "\x00\x1f\x7f", want: `"\000\037\177"`},
		{in: "é", want: `"é"`},
		{in: "é", bytes: true, want: `"\303\251"`},
		{in: "\xff", want: `"\377"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in, tt.bytes); got != tt.want {
			t.Errorf("quote(%q, %v) = %s, want %s", tt.in, tt.bytes, got, tt.want)
		}
		// The literal means the same bytes to the compiler.
		text := "syntax = \"proto2\"; message A { optional bytes b = 1 [default = " + quote(tt.in, tt.bytes) + "]; }"
		fd := Descriptor(mustParse(t, text))
		if got := string(fd.Messages().Get(0).Fields().Get(0).Default().Bytes()); got != tt.in {
			t.Errorf("the compiler reads %s as %q, want %q", quote(tt.in, tt.bytes), got, tt.in)
		}
	}
}

func TestJSONCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"user_id": "userId", "a__b": "aB", "_x": "X", "x_": "x", "x_1": "x1", "HTTP_code": "HTTPCode",
	} {
		if got := jsonCamelCase(in); got != want {
			t.Errorf("jsonCamelCase(%q) = %q, want %q", in, got, want)
		}
	}
}
