package protobuf

import (
	"slices"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

// compatCase is one rule of the compatibility table: can reader read
// what writer wrote, and if not, what each problem says (one substring
// per expected problem, in order).
type compatCase struct {
	name           string
	writer, reader string
	refsWriter     []schema.Resolved
	refsReader     []schema.Resolved
	want           []string
}

const p3 = `syntax = "proto3"; package p; `
const p2 = `syntax = "proto2"; package p; `

func TestCompatible(t *testing.T) {
	addressIn := func(pkg, fields string) []schema.Resolved {
		return []schema.Resolved{{Name: "address.proto", Schema: `syntax = "proto3"; package ` + pkg + `; message Address { ` + fields + ` }`}}
	}
	tests := []compatCase{
		// Compatible changes.
		{name: "identical", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { int32 x = 1; }`},
		{name: "field added", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { int32 x = 1; string y = 2; }`},
		{name: "field removed", writer: p3 + `message A { int32 x = 1; string y = 2; }`, reader: p3 + `message A { int32 x = 1; }`},
		{name: "field renamed", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { int32 renamed = 1; }`},
		{name: "varint group: int32 to int64", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { int64 x = 1; }`},
		{name: "varint group: uint64 to bool", writer: p3 + `message A { uint64 x = 1; }`, reader: p3 + `message A { bool x = 1; }`},
		{name: "varint group: int32 to enum", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { E x = 1; } enum E { Z = 0; }`},
		{name: "varint group: one enum for another", writer: p3 + `message A { E x = 1; } enum E { Z = 0; }`, reader: p3 + `message A { F x = 1; } enum F { Y = 0; }`},
		{name: "zigzag group: sint32 to sint64", writer: p3 + `message A { sint32 x = 1; }`, reader: p3 + `message A { sint64 x = 1; }`},
		{name: "fixed32 group: fixed32 to sfixed32", writer: p3 + `message A { fixed32 x = 1; }`, reader: p3 + `message A { sfixed32 x = 1; }`},
		{name: "fixed64 group: sfixed64 to fixed64", writer: p3 + `message A { sfixed64 x = 1; }`, reader: p3 + `message A { fixed64 x = 1; }`},
		{name: "length-delimited group: string to bytes", writer: p3 + `message A { string x = 1; }`, reader: p3 + `message A { bytes x = 1; }`},
		{name: "string to repeated string", writer: p3 + `message A { string x = 1; }`, reader: p3 + `message A { repeated string x = 1; }`},
		{name: "repeated bytes to bytes", writer: p3 + `message A { repeated bytes x = 1; }`, reader: p3 + `message A { bytes x = 1; }`},
		{name: "message to repeated message", writer: p3 + `message A { B b = 1; } message B {}`, reader: p3 + `message A { repeated B b = 1; } message B {}`},
		{name: "map value in its group", writer: p3 + `message A { map<string, int32> m = 1; }`, reader: p3 + `message A { map<string, uint64> m = 1; }`},
		{name: "message added", writer: p3 + `message A {}`, reader: p3 + `message A {} message B {}`},
		{name: "messages reordered", writer: p3 + `message A {} message B {}`, reader: p3 + `message B {} message A {}`},
		{name: "enum added and enum removed", writer: p3 + `message A {} enum E { Z = 0; }`, reader: p3 + `message A {} enum F { Z = 0; }`},
		{name: "enum constants added, removed, renamed", writer: p3 + `message A {} enum E { Z = 0; ONE = 1; TWO = 2; }`, reader: p3 + `message A {} enum E { Z = 0; UNO = 1; THREE = 3; }`},
		{name: "one field moved into a new oneof", writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { oneof o { int32 x = 1; string s = 2; } }`},
		{name: "a whole oneof deleted", writer: p3 + `message A { int32 x = 1; oneof o { int32 p = 2; int32 q = 3; } }`, reader: p3 + `message A { int32 x = 1; }`},
		{name: "a oneof renamed", writer: p3 + `message A { oneof o { int32 p = 1; int32 q = 2; } }`, reader: p3 + `message A { oneof choice { int32 p = 1; int32 q = 2; } }`},
		{name: "a field moved out of its oneof", writer: p3 + `message A { oneof o { int32 p = 1; int32 q = 2; } }`, reader: p3 + `message A { int32 p = 1; oneof o { int32 q = 2; } }`},
		{name: "a optional field added to a oneof", writer: p3 + `message A { oneof o { int32 p = 1; } }`, reader: p3 + `message A { oneof o { int32 p = 1; int32 q = 2; } }`},
		{name: "syntax changed (not a rule)", writer: p2 + `message A { optional string s = 1; }`, reader: p3 + `message A { string s = 1; }`},
		{name: "required kept", writer: p2 + `message A { required int32 x = 1; }`, reader: p2 + `message A { required int32 x = 1; }`},
		{name: "optional field added in proto2", writer: p2 + `message A { required int32 x = 1; }`, reader: p2 + `message A { required int32 x = 1; optional int32 y = 2; }`},
		{
			name:       "a referenced message moved to another package, same local name",
			writer:     p3 + `import "address.proto"; message A { a.Address home = 1; }`,
			refsWriter: addressIn("a", "string city = 1;"),
			reader:     p3 + `import "address.proto"; message A { b.Address home = 1; }`,
			refsReader: addressIn("b", "string city = 1; string zip = 2;"),
		},
		{name: "recursive types", writer: p3 + `message Node { Node next = 1; int32 v = 2; }`, reader: p3 + `message Node { Node next = 1; int64 v = 2; }`},

		// Incompatible changes.
		{
			name:   "package changed",
			writer: `syntax = "proto3"; package a; message A {}`, reader: `syntax = "proto3"; package b; message A {}`,
			want: []string{"package changed from 'a' to 'b'"},
		},
		{
			name:   "package added",
			writer: `syntax = "proto3"; message A {}`, reader: `syntax = "proto3"; package b; message A {}`,
			want: []string{"package changed from none to 'b'"},
		},
		{
			name:   "the first message removed",
			writer: p3 + `message A {} message B {}`, reader: p3 + `message B {}`,
			want: []string{"message 'p.A' removed"},
		},
		{
			name:   "another message removed",
			writer: p3 + `message A {} message B {}`, reader: p3 + `message A {}`,
			want: []string{"message 'p.B' removed"},
		},
		{
			name:   "a nested message removed",
			writer: p3 + `message A { message N {} }`, reader: p3 + `message A {}`,
			want: []string{"message 'p.A.N' removed"},
		},
		{
			name:   "int32 to string",
			writer: p3 + `message Person { int32 age = 3; }`, reader: p3 + `message Person { string age = 3; }`,
			want: []string{"field 'p.Person.age' (number 3): type changed from int32 to string"},
		},
		{
			name:   "int32 to sint32 (varint to zigzag)",
			writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { sint32 x = 1; }`,
			want: []string{"field 'p.A.x' (number 1): type changed from int32 to sint32"},
		},
		{
			name:   "fixed32 to fixed64",
			writer: p3 + `message A { fixed32 x = 1; }`, reader: p3 + `message A { fixed64 x = 1; }`,
			want: []string{"type changed from fixed32 to fixed64"},
		},
		{
			name:   "float to double",
			writer: p3 + `message A { float x = 1; }`, reader: p3 + `message A { double x = 1; }`,
			want: []string{"type changed from float to double"},
		},
		{
			name:   "enum to string",
			writer: p3 + `message A { E x = 1; } enum E { Z = 0; }`, reader: p3 + `message A { string x = 1; } enum E { Z = 0; }`,
			want: []string{"type changed from enum p.E to string"},
		},
		{
			name:   "scalar to message",
			writer: p3 + `message A { int32 x = 1; } message B {}`, reader: p3 + `message A { B x = 1; } message B {}`,
			want: []string{"field 'p.A.x' (number 1): type changed from int32 to message p.B"},
		},
		{
			name:   "message to map",
			writer: p3 + `message A { B x = 1; } message B {}`, reader: p3 + `message A { map<string, B> x = 1; } message B {}`,
			want: []string{"type changed from message p.B to map<string, message p.B>"},
		},
		{
			name:   "message type renamed",
			writer: p3 + `message A { B x = 1; } message B {} message C {}`, reader: p3 + `message A { C x = 1; } message B {} message C {}`,
			want: []string{"field 'p.A.x' (number 1): type changed from message p.B to message p.C"},
		},
		{
			name:   "a field of a message-typed field's type changed",
			writer: p3 + `message A { B b = 1; } message B { int32 x = 1; }`, reader: p3 + `message A { B b = 1; } message B { string x = 1; }`,
			want: []string{"field 'p.B.x' (number 1): type changed from int32 to string"},
		},
		{
			name:       "a field of a referenced message changed",
			writer:     p3 + `import "address.proto"; message A { a.Address home = 1; }`,
			refsWriter: addressIn("a", "string city = 1;"),
			reader:     p3 + `import "address.proto"; message A { a.Address home = 1; }`,
			refsReader: addressIn("a", "int64 city = 1;"),
			want:       []string{"field 'a.Address.city' (number 1): type changed from string to int64"},
		},
		{
			name:   "int32 to repeated int32",
			writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { repeated int32 x = 1; }`,
			want: []string{"field 'p.A.x' (number 1): label changed from no label to repeated"},
		},
		{
			name:   "repeated enum to enum",
			writer: p3 + `message A { repeated E x = 1; } enum E { Z = 0; }`, reader: p3 + `message A { E x = 1; } enum E { Z = 0; }`,
			want: []string{"label changed from repeated to no label"},
		},
		{
			name:   "proto3 optional added to a number, as Confluent counts it",
			writer: p3 + `message A { int32 x = 1; }`, reader: p3 + `message A { optional int32 x = 1; }`,
			want: []string{"label changed from no label to optional"},
		},
		{
			name:   "proto2 optional number made required",
			writer: p2 + `message A { optional int32 x = 1; }`, reader: p2 + `message A { required int32 x = 1; }`,
			want: []string{"label changed from optional to required"},
		},
		{
			name:   "required field added",
			writer: p2 + `message A { optional int32 x = 1; }`, reader: p2 + `message A { optional int32 x = 1; required string y = 2; }`,
			want: []string{"field 'p.A.y' (number 2): required in the reader but missing from the writer"},
		},
		{
			name:   "required field removed",
			writer: p2 + `message A { optional int32 x = 1; required string y = 2; }`, reader: p2 + `message A { optional int32 x = 1; }`,
			want: []string{"field 'p.A.y' (number 2): required in the writer but missing from the reader"},
		},
		{
			name:   "a field removed from a oneof that stays",
			writer: p3 + `message A { oneof o { int32 p = 1; int32 q = 2; } }`, reader: p3 + `message A { oneof o { int32 p = 1; } }`,
			want: []string{"field 'p.A.q' (number 2) of oneof 'o': missing from the reader"},
		},
		{
			name:   "several fields moved into a new oneof",
			writer: p3 + `message A { int32 x = 1; int32 y = 2; }`, reader: p3 + `message A { oneof o { int32 x = 1; int32 y = 2; } }`,
			want: []string{"oneof 'p.A.o' joins fields the writer could set together: 'x' (number 1) was a field of its own; 'y' (number 2) was a field of its own"},
		},
		{
			name:   "a field moved into an existing oneof",
			writer: p3 + `message A { int32 x = 1; oneof o { int32 p = 2; } }`, reader: p3 + `message A { oneof o { int32 x = 1; int32 p = 2; } }`,
			want: []string{"oneof 'p.A.o' joins fields the writer could set together: 'x' (number 1) was a field of its own; 'p' (number 2) of writer oneof 'o'"},
		},
		{
			name:   "two writer oneofs merged",
			writer: p3 + `message A { oneof o { int32 p = 1; } oneof q { int32 r = 2; } }`, reader: p3 + `message A { oneof o { int32 p = 1; int32 r = 2; } }`,
			want: []string{"'p' (number 1) of writer oneof 'o'; 'r' (number 2) of writer oneof 'q'"},
		},
		{
			name:   "map key type changed",
			writer: p3 + `message A { map<string, int32> m = 1; }`, reader: p3 + `message A { map<int32, int32> m = 1; }`,
			want: []string{"field 'p.A.m' (number 1): map key type changed from string to int32"},
		},
		{
			name:   "map value type changed",
			writer: p3 + `message A { map<string, int32> m = 1; }`, reader: p3 + `message A { map<string, string> m = 1; }`,
			want: []string{"map value type changed from int32 to string"},
		},
		{
			name:   "map value message's field changed",
			writer: p3 + `message A { map<string, B> m = 1; } message B { int32 x = 1; }`, reader: p3 + `message A { map<string, B> m = 1; } message B { bool x = 1; double y = 2; }`,
			// bool is in int32's group: the change that breaks is in B, found once.
			want: nil,
		},
		{
			name:   "a recursive type's field changed, reported once",
			writer: p3 + `message Node { Node next = 1; int32 v = 2; }`, reader: p3 + `message Node { Node next = 1; string v = 2; }`,
			want: []string{"field 'p.Node.v' (number 2): type changed from int32 to string"},
		},
		{
			name:   "several problems, in declaration and number order",
			writer: `syntax = "proto3"; package a; message A { int32 x = 1; string y = 2; } message B {}`,
			reader: `syntax = "proto3"; package b; message A { string x = 1; int32 y = 2; }`,
			want: []string{
				"package changed from 'a' to 'b'",
				"field 'b.A.x' (number 1): type changed from int32 to string",
				"field 'b.A.y' (number 2): type changed from string to int32",
				"message 'a.B' removed",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writer := mustParse(t, tt.writer, tt.refsWriter...)
			reader := mustParse(t, tt.reader, tt.refsReader...)
			got := New().Compatible(reader, writer)
			if len(got) != len(tt.want) {
				t.Fatalf("Compatible = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}

// TestCompatibleDirections: the registry asks both ways for FULL; a
// change that only one direction forbids shows in that one.
func TestCompatibleDirections(t *testing.T) {
	old := mustParse(t, p2+`message A { optional int32 x = 1; }`)
	withRequired := mustParse(t, p2+`message A { optional int32 x = 1; required int32 y = 2; }`)
	backward := New().Compatible(withRequired, old) // new reads old
	forward := New().Compatible(old, withRequired)  // old reads new
	if len(backward) != 1 || !strings.Contains(backward[0], "required in the reader") {
		t.Errorf("backward = %q, want the added required field", backward)
	}
	if len(forward) != 1 || !strings.Contains(forward[0], "required in the writer") {
		t.Errorf("forward = %q, want the removed required field", forward)
	}
}

// TestCompatibleDeterministic: the same question gives the same answer,
// in the same order.
func TestCompatibleDeterministic(t *testing.T) {
	writer := mustParse(t, p3+`message A { int32 a = 1; int32 b = 2; int32 c = 3; int32 d = 4; oneof o { int32 e = 5; } } message B {} message C {}`)
	reader := mustParse(t, p3+`message A { string a = 1; string b = 2; oneof n { int32 c = 3; int32 d = 4; } string e = 6; }`)
	first := New().Compatible(reader, writer)
	if len(first) < 5 {
		t.Fatalf("Compatible = %q, want at least 5 problems", first)
	}
	for range 20 {
		if again := New().Compatible(reader, writer); !slices.Equal(again, first) {
			t.Fatalf("Compatible changed its answer:\n%q\nthen\n%q", first, again)
		}
	}
}
