package protobuf

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-streaming/strata/registry/schema"
)

// mustParse parses a schema a test relies on being valid.
func mustParse(t testing.TB, text string, refs ...schema.Resolved) schema.Parsed {
	t.Helper()
	p, err := New().Parse(text, refs)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	return p
}

func TestType(t *testing.T) {
	if got := New().Type(); got != schema.Protobuf {
		t.Fatalf("Type() = %q, want %q", got, schema.Protobuf)
	}
}

// validSchemas are texts every test of the printer and the fuzz seeds
// also use: each must parse without references.
var validSchemas = map[string]string{
	"proto3 basics": `syntax = "proto3";
package shop.v1;

message Order {
  string id = 1;
  repeated Item items = 2;
  map<string, string> labels = 3;
  optional int64 placed_at = 4;
  Status status = 5;
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
}
`,
	"proto2 with required, defaults, groups and extensions": `syntax = "proto2";
package legacy;

message Record {
  required int32 id = 1 [default = -1];
  optional string name = 2 [default = "none"];
  optional bytes blob = 3 [default = "\000\377"];
  optional double ratio = 4 [default = inf];
  optional Kind kind = 5 [default = KIND_B];
  repeated int32 samples = 6 [packed = true];
  optional group Extra = 7 {
    optional string note = 1;
  }
  extensions 100 to 199;
  enum Kind {
    KIND_A = 1;
    KIND_B = 2;
  }
}

extend Record {
  optional int32 revision = 100;
}
`,
	"no syntax statement is proto2": `message Bare { optional int32 x = 1; }`,
	"services and streaming": `syntax = "proto3";
package rpc;
message Req { string q = 1; }
message Res { repeated string hits = 1; }
service Search {
  rpc Find(Req) returns (Res);
  rpc Watch(Req) returns (stream Res) { option deprecated = true; }
  rpc Upload(stream Req) returns (Res);
}
`,
	"reserved ranges and names": `syntax = "proto3";
message Slots {
  reserved 2, 15, 9 to 11, 1000 to max;
  reserved "old", "older";
  int32 keep = 1;
  enum Mode {
    MODE_UNSPECIFIED = 0;
    reserved 5 to 7, 100 to max;
    reserved "GONE";
  }
}
`,
	"well-known types": `syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/any.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/field_mask.proto";
message Event {
  google.protobuf.Timestamp at = 1;
  google.protobuf.Duration took = 2;
  google.protobuf.Any detail = 3;
  google.protobuf.Struct attrs = 4;
  google.protobuf.StringValue note = 5;
  google.protobuf.Empty nothing = 6;
  google.protobuf.FieldMask mask = 7;
}
`,
	"confluent meta and decimal": `syntax = "proto3";
package money;
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
option (confluent.file_meta) = { doc: "amounts" tags: "pii" params: [{key: "owner", value: "billing"}, {key: "env", value: "prod"}] };
message Amount {
  option (confluent.message_meta).doc = "an amount";
  confluent.type.Decimal value = 1 [(confluent.field_meta) = { doc: "the value", tags: "sensitive" }];
  string currency = 2 [json_name = "ccy", deprecated = true];
}
`,
	"custom options declared in the file": `syntax = "proto2";
package opts;
import "google/protobuf/descriptor.proto";
message Tag { optional string name = 1; repeated int32 codes = 2; }
extend google.protobuf.FieldOptions {
  optional Tag tag = 50001;
  optional string label = 50002;
  repeated int32 levels = 50003;
}
message Use {
  optional int32 x = 1 [(tag) = { name: "t" codes: 1 codes: 2 }, (label) = "l\"q", (levels) = 3, (levels) = 1];
}
`,
	"option values of every kind": `syntax = "proto3";
package kinds;
import "google/protobuf/descriptor.proto";
enum Level { LOW = 0; HIGH = 1; }
message Value {
  map<int32, string> by_number = 1;
  map<bool, string> by_flag = 2;
  map<uint64, string> by_unsigned = 3;
  float f = 4;
  double d = 5;
  bytes raw = 6;
  Level level = 7;
  sint64 delta = 8;
  uint64 big = 9;
  bool on = 10;
  repeated Value nested = 11;
}
extend google.protobuf.MessageOptions { Value value = 50000; }
message Use {
  option (value) = {
    by_number: [{key: 10, value: "ten"}, {key: -2, value: "minus two"}]
    by_flag: [{key: true, value: "yes"}, {key: false, value: "no"}]
    by_unsigned: [{key: 18446744073709551615, value: "max"}, {key: 1, value: "one"}]
    f: 0.25 d: -inf raw: "\x00\xff" level: HIGH delta: -9 big: 18446744073709551615 on: true
    nested: [{f: nan}, {}]
  };
}
`,
	"editions": `edition = "2023";
package ed;
message Node {
  int32 implicit = 1 [features.field_presence = IMPLICIT];
  Node child = 2 [features.message_encoding = DELIMITED];
  repeated int32 values = 3;
  reserved gone;
}
`,
}

func TestParseValid(t *testing.T) {
	for name, text := range validSchemas {
		t.Run(name, func(t *testing.T) {
			p := mustParse(t, text)
			fd := Descriptor(p)
			if fd == nil || fd.Messages().Len() == 0 {
				t.Fatalf("Descriptor() = %v, want a file with messages", fd)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		refs []schema.Resolved
		want []string // substrings of the error
	}{
		{
			name: "empty",
			text: " \n\t",
			want: []string{"empty"},
		},
		{
			name: "missing semicolon names line and column",
			text: "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n",
			want: []string{"schema.proto:4:1", "syntax error"},
		},
		{
			name: "unknown type",
			text: "syntax = \"proto3\";\nmessage A {\n  Missing m = 1;\n}\n",
			want: []string{"schema.proto:3:3", "unknown type Missing"},
		},
		{
			name: "duplicate field number",
			text: "syntax = \"proto3\";\nmessage A {\n  int32 x = 1;\n  int32 y = 1;\n}\n",
			want: []string{"schema.proto:4:13", "fields x and y both have the same tag 1"},
		},
		{
			name: "proto3 enum must start at zero",
			text: "syntax = \"proto3\";\nenum E {\n  ONE = 1;\n}\n",
			want: []string{"schema.proto:3:", "zero"},
		},
		{
			name: "proto3 required is not allowed",
			text: "syntax = \"proto3\";\nmessage A {\n  required int32 x = 1;\n}\n",
			want: []string{"schema.proto:3:", "required"},
		},
		{
			name: "import without a reference names the import",
			text: "syntax = \"proto3\";\nimport \"common/address.proto\";\nmessage A {}\n",
			want: []string{"schema.proto:2:", `import "common/address.proto": no schema reference has that name`},
		},
		{
			name: "a reference's own missing import",
			text: "syntax = \"proto3\";\nimport \"a.proto\";\nmessage A { a.A a = 1; }\n",
			refs: []schema.Resolved{{Name: "a.proto", Schema: "syntax = \"proto3\";\npackage a;\nimport \"b.proto\";\nmessage A {}\n"}},
			want: []string{"a.proto:3:", `import "b.proto": no schema reference`},
		},
		{
			name: "a broken reference names its file",
			text: "syntax = \"proto3\";\nimport \"a.proto\";\nmessage A {}\n",
			refs: []schema.Resolved{{Name: "a.proto", Schema: "syntax = \"proto3\";\nmessage {\n"}},
			want: []string{"a.proto:2:", "syntax error"},
		},
		{
			name: "import cycle",
			text: "syntax = \"proto3\";\nimport \"a.proto\";\nmessage A {}\n",
			refs: []schema.Resolved{
				{Name: "a.proto", Schema: "syntax = \"proto3\";\nimport \"b.proto\";\n"},
				{Name: "b.proto", Schema: "syntax = \"proto3\";\nimport \"a.proto\";\n"},
			},
			want: []string{"cycle"},
		},
		{
			name: "one reference name with two texts",
			text: "syntax = \"proto3\";\nimport \"a.proto\";\nmessage A {}\n",
			refs: []schema.Resolved{
				{Name: "a.proto", Schema: "syntax = \"proto3\";\nmessage X {}\n", References: []schema.Resolved{
					{Name: "a.proto", Schema: "syntax = \"proto3\";\nmessage Y {}\n"},
				}},
			},
			want: []string{`reference "a.proto" is given twice`},
		},
		{
			name: "a reference without a name",
			text: "syntax = \"proto3\";\nmessage A {}\n",
			refs: []schema.Resolved{{Schema: "syntax = \"proto3\";\n"}},
			want: []string{"no name"},
		},
		{
			name: "a type of an import that is not imported",
			text: "syntax = \"proto3\";\nmessage A { google.protobuf.Timestamp at = 1; }\n",
			want: []string{"schema.proto:2:", "unknown type google.protobuf.Timestamp"},
		},
		{
			name: "not a proto file at all",
			text: `{"type": "record", "name": "A", "fields": []}`,
			want: []string{"schema.proto:1:1", "syntax error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New().Parse(tt.text, tt.refs)
			if err == nil {
				t.Fatalf("Parse succeeded (normalized %q), want an error", p.Normalized())
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("error %q does not wrap ErrInvalidSchema", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestParseReferences(t *testing.T) {
	address := schema.Resolved{Name: "common/address.proto", Schema: `syntax = "proto3";
package common;
message Address { string city = 1; }
`}
	country := schema.Resolved{Name: "geo/country.proto", Schema: `syntax = "proto3";
package geo;
message Country { string code = 1; }
`}
	located := schema.Resolved{Name: "common/located.proto", Schema: `syntax = "proto3";
package common;
import "geo/country.proto";
message Located { geo.Country country = 1; }
`, References: []schema.Resolved{country}}

	tests := []struct {
		name string
		text string
		refs []schema.Resolved
		// field of the first message → full name of its message type
		wantTypes map[string]string
	}{
		{
			name: "one reference",
			text: `syntax = "proto3";
import "common/address.proto";
message Person { common.Address home = 1; }
`,
			refs:      []schema.Resolved{address},
			wantTypes: map[string]string{"home": "common.Address"},
		},
		{
			name: "a reference with its own reference",
			text: `syntax = "proto3";
import "common/located.proto";
message Shop { common.Located where = 1; }
`,
			refs:      []schema.Resolved{located},
			wantTypes: map[string]string{"where": "common.Located"},
		},
		{
			name: "the same file reached twice (diamond)",
			text: `syntax = "proto3";
import "common/located.proto";
import "geo/country.proto";
message Shop { common.Located where = 1; geo.Country origin = 2; }
`,
			refs:      []schema.Resolved{located, country},
			wantTypes: map[string]string{"where": "common.Located", "origin": "geo.Country"},
		},
		{
			name: "unused references are ignored",
			text: `syntax = "proto3";
message Lone { string x = 1; }
`,
			refs: []schema.Resolved{address, {Name: "broken.proto", Schema: "not proto"}},
		},
		{
			name: "a reference named schema.proto does not clash with the schema itself",
			text: `syntax = "proto3";
import "schema.proto";
message Outer { inner.Inner in = 1; }
`,
			refs:      []schema.Resolved{{Name: "schema.proto", Schema: "syntax = \"proto3\";\npackage inner;\nmessage Inner {}\n"}},
			wantTypes: map[string]string{"in": "inner.Inner"},
		},
		{
			name: "a reference takes precedence over a built-in file of the same path",
			text: `syntax = "proto3";
import "confluent/type/decimal.proto";
message Price { confluent.type.Decimal amount = 1; }
`,
			refs:      []schema.Resolved{{Name: "confluent/type/decimal.proto", Schema: "syntax = \"proto3\";\npackage confluent.type;\nmessage Decimal { string text = 1; }\n"}},
			wantTypes: map[string]string{"amount": "confluent.type.Decimal"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := Descriptor(mustParse(t, tt.text, tt.refs...))
			md := fd.Messages().Get(0)
			for field, want := range tt.wantTypes {
				f := md.Fields().ByName(protoreflect.Name(field))
				if f == nil || f.Message() == nil {
					t.Fatalf("field %s missing or not a message", field)
				}
				if got := string(f.Message().FullName()); got != want {
					t.Errorf("field %s has type %s, want %s", field, got, want)
				}
			}
		})
	}

	t.Run("the reference's text, not the built-in one, is compiled", func(t *testing.T) {
		fd := Descriptor(mustParse(t, tests[len(tests)-1].text, tests[len(tests)-1].refs...))
		decimal := fd.Messages().Get(0).Fields().Get(0).Message()
		if decimal.Fields().ByName("text") == nil || decimal.Fields().ByName("value") != nil {
			t.Errorf("Decimal has fields %v, want the reference's (text)", decimal.Fields())
		}
	})
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{
			name: "declaration order kept: imports, fields, oneof members; comments and layout go; options by number, names fully qualified",
			text: `// The comment goes.
syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/any.proto";
option go_package = "g";   option java_package = "j";
message A {
  int32 z = 3; /* so does this one */
  oneof o { string q = 5; string p = 4; }
  optional int32 y = 2;
  message Inner { bool b = 1; }
  int32 x = 1;
  google.protobuf.Any a = 6;
  google.protobuf.Timestamp t = 7;
  Inner inner = 8;
}
`,
			want: `syntax = "proto3";

import "google/protobuf/timestamp.proto";
import "google/protobuf/any.proto";

option java_package = "j";
option go_package = "g";

message A {
  int32 z = 3;
  oneof o {
    string q = 5;
    string p = 4;
  }
  optional int32 y = 2;
  int32 x = 1;
  .google.protobuf.Any a = 6;
  .google.protobuf.Timestamp t = 7;
  .A.Inner inner = 8;
  message Inner {
    bool b = 1;
  }
}`,
		},
		{
			name: "ranges, reserved names and extensions as declared",
			text: `syntax = "proto2";
message A {
  extensions 10 to 20;
  extensions 5 [declaration = {number: 5, full_name: ".x", type: "int32"}, verification = DECLARATION];
  extensions 1 to 3;
  reserved 30, 25 to 27;
  reserved "z", "a";
}
message B { extensions 1 to 5; }
enum E { X = 1; reserved 9, 3 to 4; }
extend A { optional int32 a = 11; }
extend B { optional int32 b = 1; }
extend A { optional int32 c = 10; }
`,
			want: `syntax = "proto2";

message A {
  extensions 10 to 20;
  extensions 5 [declaration = { number: 5 full_name: ".x" type: "int32" }, verification = DECLARATION];
  extensions 1 to 3;
  reserved 30, 25 to 27;
  reserved "z", "a";
}

message B {
  extensions 1 to 5;
}

enum E {
  X = 1;
  reserved 9, 3 to 4;
}

extend .A {
  optional int32 a = 11;
}
extend .B {
  optional int32 b = 1;
}
extend .A {
  optional int32 c = 10;
}`,
		},
		{
			name: "CRLF line endings, tabs, blank lines and a missing syntax statement",
			text: "\r\n\r\nmessage A {\t\r\n  optional int32 x = 1;  \r\n}\r\n\r\n",
			want: "syntax = \"proto2\";\n\nmessage A {\n  optional int32 x = 1;\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.text)
			if got := p.Canonical(); got != tt.want {
				t.Errorf("Canonical() =\n%s\nwant\n%s", got, tt.want)
			}
			again := mustParse(t, p.Canonical())
			if again.Canonical() != p.Canonical() {
				t.Errorf("Canonical of the canonical text changed:\n%s", again.Canonical())
			}
			if again.Normalized() != p.Normalized() {
				t.Errorf("the canonical text normalizes to\n%s\nwant\n%s", again.Normalized(), p.Normalized())
			}
		})
	}
}

// TestCanonicalReparses: the canonical text of every valid schema is
// itself a valid schema whose canonical text is the same (a fixed point),
// with the same normalized text and the same message indexes.
func TestCanonicalReparses(t *testing.T) {
	for name, text := range validSchemas {
		t.Run(name, func(t *testing.T) {
			checkCanonical(t, text, mustParse(t, text))
		})
	}
}

// checkCanonical checks what TestCanonicalReparses says of p, parsed from
// text; FuzzParse checks it of every text that parses.
func checkCanonical(t *testing.T, text string, p schema.Parsed) {
	t.Helper()
	again, err := New().Parse(p.Canonical(), nil)
	if err != nil {
		t.Fatalf("the canonical text does not parse: %v\n%s\nfrom\n%s", err, p.Canonical(), text)
	}
	if again.Canonical() != p.Canonical() {
		t.Fatalf("the canonical text is not a fixed point:\n%s\nthen\n%s\nfrom\n%s", p.Canonical(), again.Canonical(), text)
	}
	if again.Normalized() != p.Normalized() {
		t.Fatalf("the canonical text normalizes to\n%s\nwant\n%s\nfrom\n%s", again.Normalized(), p.Normalized(), text)
	}
	var walk func(protoreflect.MessageDescriptors)
	walk = func(messages protoreflect.MessageDescriptors) {
		for i := range messages.Len() {
			md := messages.Get(i)
			name := string(md.FullName())
			want, wantErr := MessageIndexes(p, name)
			got, gotErr := MessageIndexes(again, name)
			if (wantErr == nil) != (gotErr == nil) || !slices.Equal(got, want) {
				t.Fatalf("message %s has indexes %v (%v) in the canonical text, %v (%v) in\n%s", name, got, gotErr, want, wantErr, text)
			}
			walk(md.Messages())
		}
	}
	walk(Descriptor(p).Messages())
}

func TestForeignParsed(t *testing.T) {
	var foreign schema.Parsed = foreignParsed{}
	if Descriptor(foreign) != nil {
		t.Error("Descriptor of a foreign Parsed is not nil")
	}
	if _, err := MessageIndexes(foreign, "A"); !errors.Is(err, ErrNotProtobuf) {
		t.Errorf("MessageIndexes error = %v, want ErrNotProtobuf", err)
	}
	if _, err := MessageByIndexes(foreign, []int{0}); !errors.Is(err, ErrNotProtobuf) {
		t.Errorf("MessageByIndexes error = %v, want ErrNotProtobuf", err)
	}
	p := mustParse(t, `syntax = "proto3"; message A {}`)
	for _, problems := range [][]string{New().Compatible(p, foreign), New().Compatible(foreign, p)} {
		if len(problems) != 1 || !strings.Contains(problems[0], "not parsed by the protobuf format") {
			t.Errorf("Compatible with a foreign schema = %q, want one problem saying so", problems)
		}
	}
}

type foreignParsed struct{}

func (foreignParsed) Canonical() string  { return "{}" }
func (foreignParsed) Normalized() string { return "{}" }
