package jsonschema

import (
	"testing"
)

func TestCanonicalAndNormalized(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		canonical  string
		normalized string
	}{
		{name: "whitespace goes, key order stays",
			text:       "{\n  \"type\" : \"object\",\n  \"properties\" : { \"b\" : {\"type\":\"string\"}, \"a\" : {} }\n}\n",
			canonical:  `{"type":"object","properties":{"b":{"type":"string"},"a":{}}}`,
			normalized: `{"properties":{"a":{},"b":{"type":"string"}},"type":"object"}`},
		{name: "arrays keep their order, required included",
			text:       `{"required":["b","a"],"enum":[3,1,2],"type":["string","integer"]}`,
			canonical:  `{"required":["b","a"],"enum":[3,1,2],"type":["string","integer"]}`,
			normalized: `{"enum":[3,1,2],"required":["b","a"],"type":["string","integer"]}`},
		{name: "keys inside arrays are sorted too",
			text:       `{"anyOf":[{"type":"string","maxLength":3},{"type":"null"}]}`,
			canonical:  `{"anyOf":[{"type":"string","maxLength":3},{"type":"null"}]}`,
			normalized: `{"anyOf":[{"maxLength":3,"type":"string"},{"type":"null"}]}`},
		{name: "numbers are kept as written",
			text:       `{"maximum":1.50,"minimum":-0,"multipleOf":1e-2}`,
			canonical:  `{"maximum":1.50,"minimum":-0,"multipleOf":1e-2}`,
			normalized: `{"maximum":1.50,"minimum":-0,"multipleOf":1e-2}`},
		{name: "strings are escaped minimally, as Jackson writes them",
			text:       `{"description":"\u0041\/\u00e9 \"q\" \\ \t\n\u0001 <&>"}`,
			canonical:  `{"description":"A/é \"q\" \\ \t\n\u0001 <&>"}`,
			normalized: `{"description":"A/é \"q\" \\ \t\n\u0001 <&>"}`},
		{name: "a repeated key keeps its first place and its last value, as in Jackson",
			text:       `{"type":"string","title":"x","type":"integer"}`,
			canonical:  `{"type":"integer","title":"x"}`,
			normalized: `{"title":"x","type":"integer"}`},
		{name: "boolean schema", text: " true ", canonical: `true`, normalized: `true`},
		{name: "non-ASCII keys sort by their UTF-8 bytes",
			text:       `{"properties":{"é":{},"z":{},"A":{}}}`,
			canonical:  `{"properties":{"é":{},"z":{},"A":{}}}`,
			normalized: `{"properties":{"A":{},"z":{},"é":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New().Parse(tt.text, nil)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := p.Canonical(); got != tt.canonical {
				t.Errorf("Canonical() = %s\n want %s", got, tt.canonical)
			}
			if got := p.Normalized(); got != tt.normalized {
				t.Errorf("Normalized() = %s\n want %s", got, tt.normalized)
			}
			// Both are fixed points: parsing them gives them back.
			for _, text := range []string{p.Canonical(), p.Normalized()} {
				again, err := New().Parse(text, nil)
				if err != nil {
					t.Fatalf("Parse(%s): %v", text, err)
				}
				if again.Canonical() != text {
					t.Errorf("Parse(%s).Canonical() = %s", text, again.Canonical())
				}
				if again.Normalized() != p.Normalized() {
					t.Errorf("Parse(%s).Normalized() = %s, want %s", text, again.Normalized(), p.Normalized())
				}
			}
		})
	}
}

// Two registrations that differ in spacing have the same canonical text;
// two that differ in key order differ there but not once normalized.
func TestCanonicalComparesRegistrations(t *testing.T) {
	parse := func(text string) (canonical, normalized string) {
		p, err := New().Parse(text, nil)
		if err != nil {
			t.Fatalf("Parse(%s): %v", text, err)
		}
		return p.Canonical(), p.Normalized()
	}
	c1, n1 := parse(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	c2, n2 := parse("{ \"type\": \"object\",\r\n\t\"properties\": {\"a\": {\"type\": \"string\"}} }")
	c3, n3 := parse(`{"properties":{"a":{"type":"string"}},"type":"object"}`)
	if c1 != c2 || n1 != n2 {
		t.Errorf("spacing changed the text: %s / %s", c1, c2)
	}
	if c1 == c3 {
		t.Errorf("key order did not change the canonical text: %s", c1)
	}
	if n1 != n3 {
		t.Errorf("key order changed the normalized text: %s / %s", n1, n3)
	}
}
