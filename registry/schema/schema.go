// Package schema is what the registry needs of a schema format (Avro,
// Protobuf, JSON Schema): parse a schema's text with the schemas it
// references, give its canonical and normalized text, and say whether a
// reader schema can read what a writer schema wrote. Each format lives in
// its own package (registry/avro, registry/protobuf, registry/jsonschema)
// and implements Format; the registry holds them by Type.
//
// Compatibility levels are the registry's: BACKWARD asks whether the new
// schema (reader) reads data of the previous one (writer), FORWARD the
// other way, FULL both; the _TRANSITIVE levels ask it of every earlier
// version. A format answers one question, Compatible(reader, writer).
package schema

import "errors"

// Type is Confluent's schemaType: AVRO (the default when a request
// omits it), PROTOBUF or JSON.
type Type string

// The types Confluent's registry knows.
const (
	Avro     Type = "AVRO"
	Protobuf Type = "PROTOBUF"
	JSON     Type = "JSON"
)

// Reference is a schema that another imports: Name is how the importing
// schema names it (Avro: the full name of the referenced type; Protobuf:
// the import path; JSON Schema: the $ref URL), Subject and Version where
// the registry holds it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Resolved is a referenced schema's text, found by the registry.
type Resolved struct {
	Name   string // the Reference's name
	Schema string // its text
	// References of the referenced schema itself, resolved in turn: a
	// format resolves the whole tree.
	References []Resolved
}

// Parsed is one schema, parsed with its references.
type Parsed interface {
	// Canonical is the text the registry stores and returns: equivalent
	// to what was registered, without insignificant whitespace; two
	// registrations of the same schema with different spacing give the
	// same Canonical. (Confluent's canonicalString.)
	Canonical() string
	// Normalized is the text when a client asks for normalize=true:
	// Canonical with the format's further normalization (Avro: Parsing
	// Canonical Form ordering of attributes kept meaningful; Protobuf:
	// options and fields in a fixed order; JSON Schema: keys sorted), so
	// that semantically equal schemas compare equal.
	Normalized() string
}

// Format is one schema format.
type Format interface {
	Type() Type
	// Parse parses text with the schemas it references; refs are already
	// resolved (and hold their own references). A malformed schema, or one
	// naming an unknown type, gives an error saying what is wrong:
	// the registry answers it as 42201 (invalid schema).
	Parse(text string, refs []Resolved) (Parsed, error)
	// Compatible lists why reader cannot read what writer wrote, one
	// message per incompatibility naming the field or type at fault (e.g.
	// "reader field 'age' has no default and is missing from the writer");
	// none means compatible. Both were parsed by this Format.
	Compatible(reader, writer Parsed) []string
}

// ErrUnknownType: a schemaType the registry has no Format for.
var ErrUnknownType = errors.New("schema: unknown schema type")
