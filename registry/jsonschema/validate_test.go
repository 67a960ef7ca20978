package jsonschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

// decode decodes a JSON document the two ways callers do: with float64
// numbers and with json.Number.
func decode(t *testing.T, text string) (plain, numbers any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), &plain); err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&numbers); err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	return plain, numbers
}

func TestValidate(t *testing.T) {
	person := `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "minLength": 1},
			"age": {"type": "integer", "minimum": 0},
			"email": {"type": "string", "format": "email"},
			"address": {"$ref": "address.json"}
		},
		"required": ["name"],
		"additionalProperties": false
	}`
	refs := []schema.Resolved{ref("address.json",
		`{"type":"object","properties":{"zip":{"$ref":"zip.json"}}}`,
		ref("zip.json", `{"type":"string","pattern":"^[0-9]{5}$"}`))}
	p, err := New().Parse(person, refs)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tests := []struct {
		name string
		doc  string
		// problems the error lists, each "#<pointer>: ..." (none: valid)
		problems []string
	}{
		{name: "minimal", doc: `{"name":"Ada"}`},
		{name: "complete", doc: `{"name":"Ada","age":36,"email":"ada@example.com","address":{"zip":"12345"}}`},
		{name: "an integer written as 36.0 is an integer", doc: `{"name":"Ada","age":36.0}`},
		{name: "missing required property", doc: `{"age":1}`, problems: []string{"#: missing property 'name'"}},
		{name: "wrong type", doc: `{"name":"Ada","age":"old"}`, problems: []string{"#/age: got string, want integer"}},
		{name: "fraction for an integer", doc: `{"name":"Ada","age":1.5}`, problems: []string{"#/age: got number, want integer"}},
		{name: "below minimum", doc: `{"name":"Ada","age":-1}`, problems: []string{"#/age: minimum"}},
		{name: "empty string", doc: `{"name":""}`, problems: []string{"#/name: minLength"}},
		{name: "additional property", doc: `{"name":"Ada","nick":"A"}`, problems: []string{"#: additional properties 'nick' not allowed"}},
		{name: "format is asserted in draft 7", doc: `{"name":"Ada","email":"nope"}`, problems: []string{"#/email: 'nope' is not valid email"}},
		{name: "through two references", doc: `{"name":"Ada","address":{"zip":"1234"}}`, problems: []string{"#/address/zip: '1234' does not match pattern"}},
		{name: "several problems", doc: `{"age":"x","nick":1}`, problems: []string{"#: missing property 'name'", "#/age: got string, want integer", "'nick' not allowed"}},
		{name: "not an object", doc: `[]`, problems: []string{"#: got array, want object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, numbers := decode(t, tt.doc)
			for _, doc := range []any{plain, numbers} {
				err := Validate(p, doc)
				if len(tt.problems) == 0 {
					if err != nil {
						t.Fatalf("Validate(%T) = %v, want nil", doc, err)
					}
					continue
				}
				var de *DocumentError
				if !errors.As(err, &de) || !errors.Is(err, ErrInvalidDocument) {
					t.Fatalf("Validate(%T) = %v, want a *DocumentError", doc, err)
				}
				for _, want := range tt.problems {
					found := false
					for _, got := range de.Problems {
						found = found || strings.Contains(got, want)
					}
					if !found {
						t.Errorf("problems %q lack %q", de.Problems, want)
					}
				}
			}
		})
	}
}

func TestValidateBooleanSchemas(t *testing.T) {
	for text, valid := range map[string]bool{`true`: true, `{}`: true, `false`: false} {
		p, err := New().Parse(text, nil)
		if err != nil {
			t.Fatalf("Parse(%s): %v", text, err)
		}
		if err := Validate(p, map[string]any{"a": 1.0}); (err == nil) != valid {
			t.Errorf("Validate against %s = %v, want valid=%v", text, err, valid)
		}
	}
}

type foreignParsed struct{}

func (foreignParsed) Canonical() string  { return "" }
func (foreignParsed) Normalized() string { return "" }

func TestValidateRefusesForeignSchemas(t *testing.T) {
	if err := Validate(foreignParsed{}, nil); !errors.Is(err, ErrNotJSONSchema) {
		t.Fatalf("Validate(foreign) = %v, want ErrNotJSONSchema", err)
	}
	if err := Validate(nil, nil); !errors.Is(err, ErrNotJSONSchema) {
		t.Fatalf("Validate(nil) = %v, want ErrNotJSONSchema", err)
	}
}
