package avro

import (
	"strings"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

func mustParse(t *testing.T, text string, refs ...schema.Resolved) schema.Parsed {
	t.Helper()
	p, err := New().Parse(text, refs)
	if err != nil {
		t.Fatalf("Parse(%s): %v", text, err)
	}
	return p
}

func TestSchemaParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		wantErr    string // substring; "" = valid
	}{
		{"primitive", `"string"`, ""},
		{"primitive object", `{"type":"long"}`, ""},
		{"record", `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"id","type":"long"},{"name":"email","type":["null","string"],"default":null}]}`, ""},
		{"enum", `{"type":"enum","name":"Color","symbols":["RED","GREEN"],"default":"RED"}`, ""},
		{"fixed with decimal", `{"type":"fixed","name":"Money","size":8,"logicalType":"decimal","precision":10,"scale":2}`, ""},
		{"array of map", `{"type":"array","items":{"type":"map","values":"int"}}`, ""},
		{"recursive", `{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],"default":null}]}`, ""},
		{"not JSON", `{"type":`, "not JSON"},
		{"bare word", `string`, "not JSON"},
		{"unknown type", `{"type":"record","name":"R","fields":[{"name":"a","type":"Nope"}]}`, "unknown type"},
		{"record without fields", `{"type":"record","name":"R"}`, "fields"},
		{"bad default", `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`, "default"},
		{"duplicate field", `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}`, "duplicate"},
		{"bad name", `{"type":"record","name":"1R","fields":[]}`, "name"},
		{"empty", ``, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New().Parse(tc.text, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if Schema(p) == nil {
					t.Fatal("Schema(p) is nil")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSchemaReferences(t *testing.T) {
	address := schema.Resolved{Name: "com.example.Address", Schema: `{"type":"record","name":"Address","namespace":"com.example","fields":[{"name":"city","type":"string"},{"name":"country","type":"com.example.Country"}]}`,
		References: []schema.Resolved{{Name: "com.example.Country", Schema: `{"type":"enum","name":"Country","namespace":"com.example","symbols":["FR","DE"]}`}}}
	user := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"home","type":"Address"},{"name":"work","type":["null","com.example.Address"],"default":null},{"name":"born","type":"Country"}]}`

	if _, err := New().Parse(user, nil); err == nil || !strings.Contains(err.Error(), "unknown type") {
		t.Fatalf("without references: %v, want unknown type", err)
	}
	p := mustParse(t, user, address)
	// The referenced types stay names in the normalized text.
	want := `{"name":"com.example.User","type":"record","fields":[{"name":"home","type":"com.example.Address"},{"name":"work","type":["null","com.example.Address"],"default":null},{"name":"born","type":"com.example.Country"}]}`
	if got := p.Normalized(); got != want {
		t.Fatalf("Normalized:\n got %s\nwant %s", got, want)
	}
	// A reference that does not parse is named in the error.
	bad := schema.Resolved{Name: "com.example.Address", Schema: `{"type":"record","name":"Address"}`}
	if _, err := New().Parse(user, []schema.Resolved{bad}); err == nil || !strings.Contains(err.Error(), `reference "com.example.Address"`) {
		t.Fatalf("bad reference: %v", err)
	}
	// A diamond: two references share one.
	country := address.References[0]
	office := schema.Resolved{Name: "com.example.Office", Schema: `{"type":"record","name":"Office","namespace":"com.example","fields":[{"name":"c","type":"Country"}]}`, References: []schema.Resolved{country}}
	mustParse(t, `{"type":"record","name":"Both","namespace":"com.example","fields":[{"name":"a","type":"Address"},{"name":"o","type":"Office"}]}`, address, office)
}

func TestSchemaCanonicalAndNormalized(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b       string
		canonEqual bool
		normEqual  bool
	}{
		{"whitespace", `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`,
			"{ \"type\" : \"record\",\n \"name\":\"R\", \"fields\":[ {\"name\":\"a\", \"type\":\"int\"} ] }", true, true},
		{"key order", `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`,
			`{"name":"R","fields":[{"type":"int","name":"a"}],"type":"record"}`, false, true},
		{"namespace folded", `{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]}`,
			`{"type":"record","name":"n.R","fields":[{"name":"a","type":"int"}]}`, false, true},
		{"primitive object", `"int"`, `{"type":"int"}`, false, true},
		{"default ascending order dropped", `{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"ascending"}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`, false, true},
		{"defaults differ", `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":1}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":2}]}`, false, false},
		{"logical type kept", `{"type":"int","logicalType":"date"}`, `"int"`, false, false},
		{"custom properties sorted", `{"type":"string","b":1,"a":2}`, `{"a":2,"type":"string","b":1}`, false, true},
		{"doc kept", `{"type":"record","name":"R","doc":"x","fields":[]}`, `{"type":"record","name":"R","fields":[]}`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustParse(t, tc.a), mustParse(t, tc.b)
			if got := a.Canonical() == b.Canonical(); got != tc.canonEqual {
				t.Errorf("canonical equal = %v, want %v:\n%s\n%s", got, tc.canonEqual, a.Canonical(), b.Canonical())
			}
			if got := a.Normalized() == b.Normalized(); got != tc.normEqual {
				t.Errorf("normalized equal = %v, want %v:\n%s\n%s", got, tc.normEqual, a.Normalized(), b.Normalized())
			}
			// Each form is itself a schema that parses to the same form.
			for _, text := range []string{a.Canonical(), a.Normalized()} {
				again := mustParse(t, text)
				if again.Normalized() != a.Normalized() {
					t.Errorf("re-parsed %s normalizes to %s, want %s", text, again.Normalized(), a.Normalized())
				}
			}
		})
	}
	if got := mustParse(t, " \"string\" ").Canonical(); got != `"string"` {
		t.Errorf("canonical of a primitive = %s", got)
	}
}

func TestSchemaCompatible(t *testing.T) {
	rec := func(fields string) string {
		return `{"type":"record","name":"User","fields":[` + fields + `]}`
	}
	for _, tc := range []struct {
		name           string
		reader, writer string
		want           string // substring of the message; "" = compatible
	}{
		{"identical", rec(`{"name":"id","type":"long"}`), rec(`{"name":"id","type":"long"}`), ""},
		{"field added with default", rec(`{"name":"id","type":"long"},{"name":"age","type":"int","default":0}`), rec(`{"name":"id","type":"long"}`), ""},
		{"field added without default", rec(`{"name":"id","type":"long"},{"name":"age","type":"int"}`), rec(`{"name":"id","type":"long"}`), "field age"},
		{"field removed", rec(`{"name":"id","type":"long"}`), rec(`{"name":"id","type":"long"},{"name":"age","type":"int"}`), ""},
		{"int promoted to long", rec(`{"name":"n","type":"long"}`), rec(`{"name":"n","type":"int"}`), ""},
		{"long narrowed to int", rec(`{"name":"n","type":"int"}`), rec(`{"name":"n","type":"long"}`), "int not compatible with writer schema long"},
		{"enum symbol added", `{"type":"enum","name":"C","symbols":["A","B","C"]}`, `{"type":"enum","name":"C","symbols":["A","B"]}`, ""},
		{"enum symbol removed", `{"type":"enum","name":"C","symbols":["A"]}`, `{"type":"enum","name":"C","symbols":["A","B"]}`, "missing symbol B"},
		{"enum symbol removed, reader default", `{"type":"enum","name":"C","symbols":["A"],"default":"A"}`, `{"type":"enum","name":"C","symbols":["A","B"]}`, ""},
		{"union widened", `["null","string","int"]`, `["null","string"]`, ""},
		{"union narrowed", `["null","string"]`, `["null","string","int"]`, "int"},
		{"type into union", `["null","string"]`, `"string"`, ""},
		{"union into type", `"string"`, `["null","string"]`, "null"},
		{"record renamed", `{"type":"record","name":"A","fields":[]}`, `{"type":"record","name":"B","fields":[]}`, "names do not match"},
		{"record renamed with alias", `{"type":"record","name":"A","aliases":["B"],"fields":[]}`, `{"type":"record","name":"B","fields":[]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := New().Compatible(mustParse(t, tc.reader), mustParse(t, tc.writer))
			if tc.want == "" {
				if len(msgs) != 0 {
					t.Fatalf("want compatible, got %v", msgs)
				}
				return
			}
			if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "; "), tc.want) {
				t.Fatalf("messages %v, want one containing %q", msgs, tc.want)
			}
		})
	}
}

func TestSchemaCompatibleIgnoresEarlierChecks(t *testing.T) {
	// Two writers that differ only in a default: hamba's cache keys on the
	// Parsing Canonical Form, which would conflate them.
	reader := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int","default":1}]}`)
	if msgs := New().Compatible(reader, mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`)); len(msgs) != 0 {
		t.Fatalf("with default: %v", msgs)
	}
	noDefault := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"}]}`)
	if msgs := New().Compatible(noDefault, mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`)); len(msgs) == 0 {
		t.Fatal("without default: compatible, want a missing-default message")
	}
}

func FuzzSchemaParse(f *testing.F) {
	for _, s := range []string{`"int"`, `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":1}]}`,
		`{"type":"enum","name":"E","symbols":["A"]}`, `["null",{"type":"array","items":"long"}]`, `{"type":{"type":"map","values":"int"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := New().Parse(text, nil)
		if err != nil {
			return
		}
		again, err := New().Parse(p.Normalized(), nil)
		if err != nil {
			t.Fatalf("normalized form %s of %s does not parse: %v", p.Normalized(), text, err)
		}
		if again.Normalized() != p.Normalized() {
			t.Fatalf("normalizing is not idempotent: %s then %s", p.Normalized(), again.Normalized())
		}
	})
}
