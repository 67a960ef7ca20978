package jsonschema

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

func TestType(t *testing.T) {
	if got := New().Type(); got != schema.JSON {
		t.Fatalf("Type() = %q, want %q", got, schema.JSON)
	}
}

// ref builds a resolved reference.
func ref(name, text string, refs ...schema.Resolved) schema.Resolved {
	return schema.Resolved{Name: name, Schema: text, References: refs}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		refs      []schema.Resolved
		wantDraft int
	}{
		{name: "no $schema is draft 7, as in Confluent",
			text: `{"type":"object","properties":{"a":{"type":"string"}}}`, wantDraft: 7},
		{name: "draft 4",
			text: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","maximum":5,"exclusiveMaximum":true}`, wantDraft: 4},
		{name: "draft 6",
			text: `{"$schema":"http://json-schema.org/draft-06/schema#","type":"integer","exclusiveMaximum":5}`, wantDraft: 6},
		{name: "draft 7",
			text: `{"$schema":"http://json-schema.org/draft-07/schema#","if":{"type":"string"},"then":{"minLength":1}}`, wantDraft: 7},
		{name: "draft 2019-09",
			text: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"a":{"type":"string"}},"$ref":"#/$defs/a","minLength":1}`, wantDraft: 2019},
		{name: "draft 2020-12",
			text: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}],"items":false}`, wantDraft: 2020},
		{name: "the true schema", text: `true`, wantDraft: 7},
		{name: "the empty schema", text: ` { } `, wantDraft: 7},
		{name: "local $ref to definitions",
			text: `{"definitions":{"id":{"type":"integer"}},"properties":{"id":{"$ref":"#/definitions/id"}}}`, wantDraft: 7},
		{name: "$ref resolved through a reference with a relative name",
			text:      `{"properties":{"address":{"$ref":"address.json"}}}`,
			refs:      []schema.Resolved{ref("address.json", `{"type":"object","properties":{"street":{"type":"string"}}}`)},
			wantDraft: 7},
		{name: "$ref to a fragment of a reference",
			text:      `{"properties":{"street":{"$ref":"common.json#/definitions/street"}}}`,
			refs:      []schema.Resolved{ref("common.json", `{"definitions":{"street":{"type":"string"}}}`)},
			wantDraft: 7},
		{name: "reference named by an absolute URL",
			text:      `{"properties":{"a":{"$ref":"https://example.com/schemas/a.json"}}}`,
			refs:      []schema.Resolved{ref("https://example.com/schemas/a.json", `{"type":"string"}`)},
			wantDraft: 7},
		{name: "relative name resolved against the root's $id (Confluent's example)",
			text:      `{"$id":"https://example.com/schemas/customer.json","properties":{"a":{"$ref":"address.json"}}}`,
			refs:      []schema.Resolved{ref("address.json", `{"type":"string"}`)},
			wantDraft: 7},
		{name: "nested references: a reference's own reference",
			text: `{"properties":{"order":{"$ref":"order.json"}}}`,
			refs: []schema.Resolved{ref("order.json",
				`{"properties":{"customer":{"$ref":"customer.json"}}}`,
				ref("customer.json", `{"properties":{"address":{"$ref":"address.json"}}}`,
					ref("address.json", `{"type":"object"}`)))},
			wantDraft: 7},
		{name: "nested reference resolved against its referrer's $id",
			text: `{"properties":{"a":{"$ref":"a.json"}}}`,
			refs: []schema.Resolved{ref("a.json",
				`{"$id":"https://other.example/x/a.json","properties":{"b":{"$ref":"b.json"}}}`,
				ref("https://other.example/x/b.json", `{"type":"integer"}`))},
			wantDraft: 7},
		{name: "a reference found by its own $id",
			text:      `{"properties":{"a":{"$ref":"https://example.com/a"}}}`,
			refs:      []schema.Resolved{ref("a.json", `{"$id":"https://example.com/a","type":"string"}`)},
			wantDraft: 7},
		{name: "the same reference reached twice (diamond)",
			text: `{"properties":{"a":{"$ref":"a.json"},"b":{"$ref":"b.json"}}}`,
			refs: []schema.Resolved{
				ref("a.json", `{"$ref":"c.json"}`, ref("c.json", `{"type":"string"}`)),
				ref("b.json", `{"$ref":"c.json"}`, ref("c.json", `{"type": "string"}`)),
			},
			wantDraft: 7},
		{name: "references that are never used are not compiled",
			text:      `{"type":"string"}`,
			refs:      []schema.Resolved{ref("unused.json", `{"type":"strin"}`)},
			wantDraft: 7},
		{name: "a recursive schema",
			text:      `{"definitions":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},"$ref":"#/definitions/node"}`,
			wantDraft: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New().Parse(tt.text, tt.refs)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := p.(*parsed).compiled.DraftVersion; got != tt.wantDraft {
				t.Errorf("draft = %d, want %d", got, tt.wantDraft)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat(`{"items":`, maxNesting+1) + `{}` + strings.Repeat(`}`, maxNesting+1)
	tests := []struct {
		name string
		text string
		refs []schema.Resolved
		want error
		// the message names what is wrong and where
		contains []string
	}{
		{name: "empty text", text: ``, want: ErrMalformedJSON, contains: []string{"unexpected end"}},
		{name: "truncated object", text: `{"type":"string"`, want: ErrMalformedJSON},
		{name: "single quotes", text: `{'type':'string'}`, want: ErrMalformedJSON, contains: []string{"invalid character"}},
		{name: "trailing comma", text: `{"type":"string",}`, want: ErrMalformedJSON},
		{name: "data after the value", text: `{"type":"string"} {}`, want: ErrMalformedJSON, contains: []string{"after the JSON value"}},
		{name: "nesting too deep", text: deep, want: ErrMalformedJSON, contains: []string{"nested deeper than"}},
		{name: "too large", text: `"` + strings.Repeat("x", maxSchemaBytes) + `"`, want: ErrInvalidSchema, contains: []string{"limit"}},

		{name: "a number is no schema", text: `42`, want: ErrInvalidSchema, contains: []string{"object or a boolean, not a number"}},
		{name: "an array is no schema", text: `[{"type":"string"}]`, want: ErrInvalidSchema, contains: []string{"not an array"}},
		{name: "null is no schema", text: `null`, want: ErrInvalidSchema},
		{name: "unknown type name", text: `{"properties":{"a":{"type":"strin"}}}`, want: ErrInvalidSchema,
			contains: []string{"#/properties/a/type", "must be one of"}},
		{name: "negative minLength", text: `{"properties":{"a":{"minLength":-1}}}`, want: ErrInvalidSchema,
			contains: []string{"#/properties/a/minLength", "minimum"}},
		{name: "required is not an array", text: `{"required":"a"}`, want: ErrInvalidSchema, contains: []string{"#/required"}},
		{name: "properties is not an object", text: `{"properties":[]}`, want: ErrInvalidSchema, contains: []string{"#/properties"}},
		{name: "pattern is no regular expression", text: `{"pattern":"(unclosed"}`, want: ErrInvalidSchema,
			contains: []string{"#/pattern", "not valid regex"}},
		{name: "multipleOf zero", text: `{"multipleOf":0}`, want: ErrInvalidSchema, contains: []string{"#/multipleOf"}},
		{name: "draft 4 keyword value in draft 6", text: `{"$schema":"http://json-schema.org/draft-06/schema#","exclusiveMaximum":true}`,
			want: ErrInvalidSchema, contains: []string{"#/exclusiveMaximum"}},

		{name: "$ref to a schema not among the references", text: `{"properties":{"a":{"$ref":"address.json"}}}`,
			want: ErrUnresolvedReference, contains: []string{`"address.json"`, "not among the schema's references"}},
		{name: "$ref to an absolute URL not among the references", text: `{"$ref":"https://example.com/x.json"}`,
			want: ErrUnresolvedReference, contains: []string{`"https://example.com/x.json"`}},
		{name: "$ref to a missing definition", text: `{"properties":{"a":{"$ref":"#/definitions/nope"}}}`,
			want: ErrUnresolvedReference, contains: []string{`"#/definitions/nope"`, "points to nothing"}},
		{name: "$ref to a missing definition of a reference", text: `{"$ref":"common.json#/definitions/nope"}`,
			refs: []schema.Resolved{ref("common.json", `{"definitions":{}}`)},
			want: ErrUnresolvedReference, contains: []string{`"common.json#/definitions/nope"`}},
		{name: "nested reference missing", text: `{"$ref":"a.json"}`,
			refs: []schema.Resolved{ref("a.json", `{"$ref":"b.json"}`)},
			want: ErrUnresolvedReference, contains: []string{`"b.json"`}},
		{name: "$schema naming an unknown metaschema", text: `{"$schema":"https://example.com/my-meta","type":"string"}`,
			want: ErrUnresolvedReference, contains: []string{"https://example.com/my-meta"}},
		{name: "malformed reference", text: `{"$ref":"a.json"}`,
			refs: []schema.Resolved{ref("a.json", `{"type":`)},
			want: ErrMalformedJSON, contains: []string{`reference "a.json"`}},
		{name: "invalid reference", text: `{"$ref":"a.json"}`,
			refs: []schema.Resolved{ref("a.json", `{"type":"strin"}`)},
			want: ErrInvalidSchema, contains: []string{`reference "a.json"`, "#/type"}},
		{name: "two different schemas under one name", text: `{"$ref":"a.json"}`,
			refs: []schema.Resolved{ref("a.json", `{"type":"string"}`), ref("a.json", `{"type":"integer"}`)},
			want: ErrInvalidSchema, contains: []string{`"a.json"`}},
		{name: "a reference without a name", text: `{}`,
			refs: []schema.Resolved{ref("", `{}`)}, want: ErrInvalidSchema, contains: []string{"empty name"}},
		{name: "a reference name that is no URL", text: `{}`,
			refs: []schema.Resolved{ref("%zz", `{}`)}, want: ErrInvalidSchema, contains: []string{"not a URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().Parse(tt.text, tt.refs)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q does not wrap %q", err, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
			if strings.Contains(err.Error(), referenceBase) {
				t.Errorf("error %q shows the registry's internal URL", err)
			}
		})
	}
}

func TestParseReferencesTooDeep(t *testing.T) {
	r := ref("last.json", `{}`)
	for i := 0; i <= maxReferenceDepth+1; i++ {
		r = ref(fmt.Sprintf("r%d.json", i), `{}`, r)
	}
	_, err := New().Parse(`{}`, []schema.Resolved{r})
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("err = %v, want references nested too deep", err)
	}
}

// The registry never fetches a schema: a $ref to a URL that serves one,
// or to a file that holds one, fails without the server being asked or
// the file being read.
func TestParseFetchesNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"type":"string"}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		`{"$ref":"` + srv.URL + `/s.json"}`,
		`{"$schema":"` + srv.URL + `/meta.json","type":"string"}`,
		`{"$ref":"file://` + filepath.ToSlash(file) + `"}`,
		`{"$id":"file:///","$ref":"` + strings.TrimPrefix(filepath.ToSlash(file), "/") + `"}`,
	} {
		if _, err := New().Parse(text, nil); !errors.Is(err, ErrUnresolvedReference) {
			t.Errorf("Parse(%s) = %v, want ErrUnresolvedReference", text, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the HTTP server was asked %d times", n)
	}
}
