package jsonschema

import (
	"errors"
	"strings"
	"testing"
)

// fuzzSeeds are schemas, valid and not, that reach the different paths
// of Parse and Compatible.
var fuzzSeeds = []string{
	``,
	`{`,
	`[]`,
	`true`,
	`{}`,
	`{"type":"string"}`,
	`{"type":["integer","null"],"minimum":0,"exclusiveMaximum":10,"multipleOf":0.5}`,
	`{"type":"object","properties":{"a":{"type":"string","maxLength":3,"pattern":"^x"}},"required":["a"],"additionalProperties":false}`,
	`{"type":"object","patternProperties":{"^x_":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
	`{"type":"array","items":[{"type":"string"}],"additionalItems":false,"minItems":1,"uniqueItems":true}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"const":1}],"items":{"enum":[1,"a",null]}}`,
	`{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"a":{"type":"string"}},"$ref":"#/$defs/a","minLength":2}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","maximum":3,"exclusiveMaximum":true}`,
	`{"definitions":{"n":{"properties":{"c":{"items":{"$ref":"#/definitions/n"}}}}},"$ref":"#/definitions/n"}`,
	`{"oneOf":[{"type":"string"},{"anyOf":[{"type":"integer"},{"allOf":[{"type":"null"}]}]}]}`,
	`{"$ref":"missing.json"}`,
	`{"properties":{"a":{"$ref":"#/definitions/none"}}}`,
	`{"type":"strin"}`,
	`{"pattern":"(?=x)"}`,
	`{"a":"\u0000\ud800","b":1e400,"a":[[[[]]]]}`,
}

// FuzzParse: whatever the text, Parse returns a schema or an error that
// wraps one of the package's errors, and never panics. A schema it
// accepts gives back its canonical and normalized texts when they are
// parsed, and is compatible with itself.
func FuzzParse(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := New().Parse(text, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformedJSON) && !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnresolvedReference) {
				t.Fatalf("Parse(%q) = %v, which wraps none of the package's errors", text, err)
			}
			return
		}
		again, err := New().Parse(p.Canonical(), nil)
		if err != nil {
			t.Fatalf("Parse(Canonical %q) = %v", p.Canonical(), err)
		}
		if again.Canonical() != p.Canonical() || again.Normalized() != p.Normalized() {
			t.Fatalf("texts changed on parsing the canonical text:\n%s\n%s", p.Canonical(), again.Canonical())
		}
		for _, msg := range New().Compatible(again, p) {
			if !strings.Contains(msg, "(TOO_DEEP)") && !strings.Contains(msg, "(TOO_COMPLEX)") {
				t.Fatalf("%s is not compatible with itself: %s", p.Canonical(), msg)
			}
		}
		for _, doc := range []any{nil, "x", 1.5, map[string]any{"a": []any{1.0}}} {
			_ = Validate(p, doc)
		}
	})
}

// FuzzCompatible: any two schemas compare without a panic.
func FuzzCompatible(f *testing.F) {
	for i, w := range fuzzSeeds {
		f.Add(w, fuzzSeeds[(i+5)%len(fuzzSeeds)])
	}
	f.Fuzz(func(t *testing.T, writer, reader string) {
		w, err := New().Parse(writer, nil)
		if err != nil {
			return
		}
		r, err := New().Parse(reader, nil)
		if err != nil {
			return
		}
		New().Compatible(r, w)
		New().Compatible(w, r)
	})
}
