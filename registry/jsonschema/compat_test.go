package jsonschema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

// compatCase: can a consumer using reader read what a producer using
// writer wrote? want lists the messages, in order, each by a part of
// its text; an empty want means compatible.
type compatCase struct {
	name           string
	writer, reader string
	writerRefs     []schema.Resolved
	readerRefs     []schema.Resolved
	want           []string
}

func checkCompat(t *testing.T, cases []compatCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New().Parse(tt.writer, tt.writerRefs)
			if err != nil {
				t.Fatalf("Parse(writer): %v", err)
			}
			r, err := New().Parse(tt.reader, tt.readerRefs)
			if err != nil {
				t.Fatalf("Parse(reader): %v", err)
			}
			// Every schema reads what it writes itself.
			for _, side := range []struct {
				text string
				refs []schema.Resolved
			}{{tt.writer, tt.writerRefs}, {tt.reader, tt.readerRefs}} {
				first, err1 := New().Parse(side.text, side.refs)
				second, err2 := New().Parse(side.text, side.refs)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				for _, msg := range New().Compatible(second, first) {
					if !strings.Contains(msg, "(TOO_DEEP)") && !strings.Contains(msg, "(TOO_COMPLEX)") {
						t.Errorf("%s is incompatible with itself: %s", side.text, msg)
					}
				}
			}
			got := New().Compatible(r, w)
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.Contains(got[i], tt.want[i])
			}
			if !ok {
				t.Errorf("Compatible(reader, writer) =\n\t%s\nwant messages containing\n\t%s",
					strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestCompatibleTypes(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "same type", writer: `{"type":"string"}`, reader: `{"type":"string"}`},
		{name: "TYPE_NARROWED: the reader drops a type the writer wrote",
			writer: `{"properties":{"age":{"type":["integer","string"]}}}`,
			reader: `{"properties":{"age":{"type":"integer"}}}`,
			want:   []string{"#/properties/age: type narrowed from [integer string] to [integer] (TYPE_NARROWED)"}},
		{name: "TYPE_EXTENDED: the reader accepts more types",
			writer: `{"properties":{"age":{"type":"integer"}}}`,
			reader: `{"properties":{"age":{"type":["integer","string"]}}}`},
		{name: "integer widened to number",
			writer: `{"type":"integer"}`, reader: `{"type":"number"}`},
		{name: "number narrowed to integer",
			writer: `{"type":"number"}`, reader: `{"type":"integer"}`,
			want: []string{"#: type narrowed from [number] to [integer] (TYPE_NARROWED)"}},
		{name: "TYPE_CHANGED: nothing in common",
			writer: `{"type":"string"}`, reader: `{"type":"integer"}`,
			want: []string{"#: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "null made acceptable", writer: `{"type":"string"}`, reader: `{"type":["string","null"]}`},
		{name: "null no longer acceptable", writer: `{"type":["null","string"]}`, reader: `{"type":"string"}`,
			want: []string{"type narrowed from [null string] to [string] (TYPE_NARROWED)"}},
		{name: "a type added where the writer had none",
			writer: `{}`, reader: `{"type":"string"}`,
			want: []string{"#: type narrowed from any type to [string] (TYPE_NARROWED)"}},
		{name: "type removed: the reader accepts anything", writer: `{"type":"string"}`, reader: `{}`},
		{name: "annotations are not constraints", writer: `{"type":"string"}`, reader: `{"description":"anything","title":"t"}`},
		{name: "a writer without type whose keywords are all object keywords writes objects, as Confluent takes it",
			writer: `{"properties":{"a":{"type":"string"}}}`,
			reader: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "the false writer writes nothing", writer: `false`, reader: `{"type":"string"}`},
		{name: "the false reader reads nothing", writer: `{"type":"string"}`, reader: `false`,
			want: []string{"#: the reader accepts nothing (false schema) (TYPE_CHANGED)"}},
		{name: "the true reader reads everything", writer: `{"type":"string"}`, reader: `true`},
	})
}

func TestCompatibleObjects(t *testing.T) {
	const open = `{"type":"object","properties":{"a":{"type":"string"}}}`
	const closed = `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`
	checkCompat(t, []compatCase{
		{name: "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", writer: open,
			reader: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
			want:   []string{`#/properties/b: property "b" added to an open content model (the writer may have written "b" with any value) (PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)`}},
		{name: "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL is compatible", writer: open,
			reader: `{"type":"object","properties":{"a":{"type":"string"},"b":{}}}`},
		{name: "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible", writer: closed,
			reader: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}`},
		{name: "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", writer: closed,
			reader: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}`,
			want:   []string{`#/properties/b: required property "b" added without a default (REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)`}},
		{name: "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible", writer: closed,
			reader: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","default":0}},"required":["b"],"additionalProperties":false}`},
		{name: "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL is compatible",
			writer: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`, reader: open},
		{name: "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
			writer: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}`,
			reader: closed,
			want:   []string{`#/properties/b: property "b" removed from a closed content model`}},
		{name: "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL is compatible",
			writer: `{"type":"object","properties":{"a":{"type":"string"},"b":false},"additionalProperties":false}`,
			reader: closed},
		{name: "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL is compatible",
			writer: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
			reader: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`},
		{name: "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
			writer: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
			reader: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
			want: []string{"#/properties/b: property \"b\" removed, and what the reader accepts for it instead",
				"#/properties/b: type changed from [integer] to [string] (TYPE_CHANGED)"}},
		{name: "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL is compatible",
			writer: `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`,
			reader: `{"type":"object","properties":{"x_1":{"type":"string"}},"patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`},
		{name: "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
			writer: `{"type":"object","additionalProperties":{"type":"string"}}`,
			reader: `{"type":"object","properties":{"b":{"type":"string","maxLength":5}},"additionalProperties":{"type":"string"}}`,
			want: []string{`#/properties/b: property "b" added, and it does not accept what the writer's content model allowed`,
				"#/properties/b/maxLength: maxLength 5 added (MAX_LENGTH_ADDED)"}},
		{name: "REQUIRED_ATTRIBUTE_ADDED",
			writer: open, reader: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			want: []string{`#/properties/a: property "a" is required by the reader but not by the writer (REQUIRED_ATTRIBUTE_ADDED)`}},
		{name: "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED is compatible",
			writer: open, reader: `{"type":"object","properties":{"a":{"type":"string","default":""}},"required":["a"]}`},
		{name: "REQUIRED_ATTRIBUTE_REMOVED is compatible",
			writer: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, reader: open},
		{name: "a required name without a property is required too",
			writer: open, reader: `{"type":"object","properties":{"a":{"type":"string"}},"required":["z"]}`,
			want: []string{`#/properties/z: property "z" is required by the reader but not by the writer (REQUIRED_ATTRIBUTE_ADDED)`}},
		{name: "ADDITIONAL_PROPERTIES_REMOVED: closing the content model", writer: open, reader: closed,
			want: []string{"#/additionalProperties: additionalProperties false added: the reader no longer accepts properties it does not list (ADDITIONAL_PROPERTIES_REMOVED)"}},
		{name: "ADDITIONAL_PROPERTIES_ADDED: opening it is compatible", writer: closed, reader: open},
		{name: "ADDITIONAL_PROPERTIES_NARROWED", writer: open,
			reader: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
			want:   []string{"#/additionalProperties: additionalProperties narrowed from any value to a schema (ADDITIONAL_PROPERTIES_NARROWED)"}},
		{name: "ADDITIONAL_PROPERTIES_EXTENDED is compatible",
			writer: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`, reader: open},
		{name: "additionalProperties schemas compared",
			writer: `{"type":"object","additionalProperties":{"type":"string"}}`,
			reader: `{"type":"object","additionalProperties":{"type":"integer"}}`,
			want:   []string{"#/additionalProperties: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "unevaluatedProperties false closes the content model too",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`,
			want:   []string{"#/unevaluatedProperties: unevaluatedProperties false added: the reader no longer accepts properties it does not list (UNEVALUATED_PROPERTIES_REMOVED)"}},
		{name: "a change inside a nested object names its path",
			writer: `{"properties":{"address":{"properties":{"zip":{"type":"string"}}}}}`,
			reader: `{"properties":{"address":{"properties":{"zip":{"type":"integer"}}}}}`,
			want:   []string{"#/properties/address/properties/zip: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "property names are escaped in the pointer",
			writer: `{"properties":{"a/b~c":{"type":"string"}}}`, reader: `{"properties":{"a/b~c":{"type":"integer"}}}`,
			want: []string{"#/properties/a~1b~0c: type changed"}},
		{name: "patternProperties both have are compared",
			writer: `{"patternProperties":{"^x":{"type":"string"}}}`, reader: `{"patternProperties":{"^x":{"type":"string","maxLength":2}}}`,
			want: []string{"#/patternProperties/^x/maxLength: maxLength 2 added (MAX_LENGTH_ADDED)"}},
		{name: "MAX_PROPERTIES_ADDED", writer: `{"type":"object"}`, reader: `{"type":"object","maxProperties":3}`,
			want: []string{"#/maxProperties: maxProperties 3 added (MAX_PROPERTIES_ADDED)"}},
		{name: "MAX_PROPERTIES_DECREASED", writer: `{"type":"object","maxProperties":5}`, reader: `{"type":"object","maxProperties":3}`,
			want: []string{"maxProperties decreased from 5 to 3 (MAX_PROPERTIES_DECREASED)"}},
		{name: "MAX_PROPERTIES_INCREASED is compatible", writer: `{"type":"object","maxProperties":3}`, reader: `{"type":"object","maxProperties":5}`},
		{name: "MIN_PROPERTIES_INCREASED", writer: `{"type":"object","minProperties":1}`, reader: `{"type":"object","minProperties":2}`,
			want: []string{"minProperties increased from 1 to 2 (MIN_PROPERTIES_INCREASED)"}},
		{name: "MIN_PROPERTIES_REMOVED is compatible", writer: `{"type":"object","minProperties":1}`, reader: `{"type":"object"}`},
		{name: "DEPENDENCY_ARRAY_ADDED", writer: `{"type":"object"}`, reader: `{"type":"object","dependencies":{"card":["billing"]}}`,
			want: []string{`#/dependencies/card: when "card" is present the reader requires ["billing"] (DEPENDENCY_ARRAY_ADDED)`}},
		{name: "DEPENDENCY_ARRAY_EXTENDED", writer: `{"dependencies":{"card":["billing"]}}`, reader: `{"dependencies":{"card":["billing","zip"]}}`,
			want: []string{`#/dependencies/card: when "card" is present the reader also requires ["zip"] (DEPENDENCY_ARRAY_EXTENDED)`}},
		{name: "DEPENDENCY_ARRAY_CHANGED", writer: `{"dependencies":{"card":["billing"]}}`, reader: `{"dependencies":{"card":["zip"]}}`,
			want: []string{"(DEPENDENCY_ARRAY_CHANGED)"}},
		{name: "DEPENDENCY_ARRAY_NARROWED is compatible", writer: `{"dependencies":{"card":["billing","zip"]}}`, reader: `{"dependencies":{"card":["zip"]}}`},
		{name: "DEPENDENCY_ARRAY_REMOVED is compatible", writer: `{"dependencies":{"card":["billing"]}}`, reader: `{"type":"object"}`},
		{name: "dependentRequired (2019-09) likewise",
			writer: `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`,
			reader: `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","dependentRequired":{"card":["billing"]}}`,
			want:   []string{"#/dependentRequired/card: when \"card\" is present the reader requires [\"billing\"] (DEPENDENCY_ARRAY_ADDED)"}},
		{name: "DEPENDENCY_SCHEMA_ADDED", writer: `{"type":"object"}`, reader: `{"type":"object","dependencies":{"card":{"required":["billing"]}}}`,
			want: []string{`#/dependencies/card: a schema the reader applies when "card" is present was added (DEPENDENCY_SCHEMA_ADDED)`}},
		{name: "dependency schemas compared",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","dependentSchemas":{"card":{"properties":{"zip":{"type":"string"}}}}}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","dependentSchemas":{"card":{"properties":{"zip":{"type":"integer"}}}}}`,
			want:   []string{"#/dependentSchemas/card/properties/zip: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "DEPENDENCY_SCHEMA_REMOVED is compatible", writer: `{"dependencies":{"card":{"required":["billing"]}}}`, reader: `{"type":"object"}`},
	})
}

func TestCompatibleNot(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "NOT_TYPE_NARROWED is compatible", writer: `{"not":{"type":"number"}}`, reader: `{"not":{"type":"integer"}}`},
		{name: "NOT_TYPE_EXTENDED", writer: `{"not":{"type":"integer"}}`, reader: `{"not":{"type":"number"}}`,
			want: []string{"#/not: the reader's not excludes values the writer's did not (NOT_TYPE_EXTENDED)"}},
		{name: "not added", writer: `{"type":"string"}`, reader: `{"type":"string","not":{"const":""}}`,
			want: []string{"#/not: not added: the reader rejects values the writer did not (TYPE_CHANGED)"}},
		{name: "not removed is compatible", writer: `{"type":"string","not":{"const":""}}`, reader: `{"type":"string"}`},
	})
}

func TestCompatibleEnums(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "ENUM_ARRAY_EXTENDED is compatible",
			writer: `{"type":"string","enum":["a","b"]}`, reader: `{"type":"string","enum":["a","b","c"]}`},
		{name: "ENUM_ARRAY_NARROWED",
			writer: `{"properties":{"c":{"type":"string","enum":["a","b"]}}}`, reader: `{"properties":{"c":{"type":"string","enum":["a"]}}}`,
			want: []string{`#/properties/c/enum: the reader's enum ["a"] lacks the writer's ["b"] (ENUM_ARRAY_NARROWED)`}},
		{name: "ENUM_ARRAY_CHANGED",
			writer: `{"enum":["a","b"]}`, reader: `{"enum":["a","c"]}`,
			want: []string{`#/enum: the reader's enum ["a" "c"] lacks the writer's ["b"] (ENUM_ARRAY_CHANGED)`}},
		{name: "an enum added where there was none",
			writer: `{"type":"string"}`, reader: `{"type":"string","enum":["a","b"]}`,
			want: []string{`#: the reader accepts only ["a" "b"]; the writer's values were not restricted (ENUM_ARRAY_NARROWED)`}},
		{name: "an enum removed is compatible", writer: `{"type":"string","enum":["a","b"]}`, reader: `{"type":"string"}`},
		{name: "a const within the reader's enum", writer: `{"const":"a"}`, reader: `{"enum":["a","b"]}`},
		{name: "a const changed", writer: `{"const":"a"}`, reader: `{"const":"b"}`,
			want: []string{`#/enum: the reader's enum ["b"] lacks the writer's ["a"] (ENUM_ARRAY_CHANGED)`}},
		{name: "numbers in enums compare by value", writer: `{"enum":[1,2.0]}`, reader: `{"enum":[1.0,2,3]}`},
		{name: "objects in enums compare by value", writer: `{"enum":[{"a":[1,"x"]}]}`, reader: `{"enum":[{"a":[1.0,"x"]}]}`},
		{name: "writer values the reader's other keywords accept", writer: `{"enum":["ab","cd"]}`, reader: `{"type":"string","maxLength":3}`},
		{name: "a writer value the reader's other keywords reject",
			writer: `{"enum":["ab","abcdef"]}`, reader: `{"type":"string","maxLength":3}`,
			want: []string{`#: the writer's value "abcdef" is not valid for the reader: #: maxLength`}},
		{name: "writer values of a type the reader lacks",
			writer: `{"enum":["a",1]}`, reader: `{"type":"string"}`,
			want: []string{"#: type narrowed from [integer string] to [string] (TYPE_NARROWED)"}},
	})
}

func TestCompatibleNumbers(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "MAXIMUM_DECREASED", writer: `{"type":"number","maximum":10}`, reader: `{"type":"number","maximum":5}`,
			want: []string{"#/maximum: maximum decreased from 10 to 5 (MAXIMUM_DECREASED)"}},
		{name: "MAXIMUM_INCREASED is compatible", writer: `{"type":"number","maximum":5}`, reader: `{"type":"number","maximum":10}`},
		{name: "MAXIMUM_ADDED", writer: `{"type":"number"}`, reader: `{"type":"number","maximum":10}`,
			want: []string{"#/maximum: maximum 10 added (MAXIMUM_ADDED)"}},
		{name: "MAXIMUM_REMOVED is compatible", writer: `{"type":"number","maximum":10}`, reader: `{"type":"number"}`},
		{name: "MINIMUM_INCREASED", writer: `{"type":"integer","minimum":0}`, reader: `{"type":"integer","minimum":1}`,
			want: []string{"#/minimum: minimum increased from 0 to 1 (MINIMUM_INCREASED)"}},
		{name: "MINIMUM_DECREASED is compatible", writer: `{"type":"integer","minimum":1}`, reader: `{"type":"integer","minimum":0}`},
		{name: "MINIMUM_ADDED", writer: `{"type":"integer"}`, reader: `{"type":"integer","minimum":0}`,
			want: []string{"#/minimum: minimum 0 added (MINIMUM_ADDED)"}},
		{name: "MINIMUM_REMOVED is compatible", writer: `{"type":"integer","minimum":0}`, reader: `{"type":"integer"}`},
		{name: "EXCLUSIVE_MAXIMUM_DECREASED", writer: `{"exclusiveMaximum":10}`, reader: `{"exclusiveMaximum":5.5}`,
			want: []string{"#/exclusiveMaximum: exclusiveMaximum decreased from 10 to 5.5 (EXCLUSIVE_MAXIMUM_DECREASED)"}},
		{name: "EXCLUSIVE_MINIMUM_INCREASED", writer: `{"exclusiveMinimum":0}`, reader: `{"exclusiveMinimum":1}`,
			want: []string{"(EXCLUSIVE_MINIMUM_INCREASED)"}},
		{name: "EXCLUSIVE_MINIMUM_REMOVED is compatible", writer: `{"exclusiveMinimum":0}`, reader: `{"type":"number"}`},
		{name: "a writer's exclusiveMaximum implies the reader's equal maximum", writer: `{"exclusiveMaximum":10}`, reader: `{"maximum":10}`},
		{name: "a writer's maximum does not imply the reader's equal exclusiveMaximum", writer: `{"maximum":10}`, reader: `{"exclusiveMaximum":10}`,
			want: []string{"#/exclusiveMaximum: exclusiveMaximum 10 added (EXCLUSIVE_MAXIMUM_ADDED)"}},
		{name: "draft 4 boolean exclusiveMaximum",
			writer: `{"$schema":"http://json-schema.org/draft-04/schema#","maximum":10,"exclusiveMaximum":true}`,
			reader: `{"$schema":"http://json-schema.org/draft-04/schema#","maximum":5,"exclusiveMaximum":true}`,
			want:   []string{"exclusiveMaximum decreased from 10 to 5 (EXCLUSIVE_MAXIMUM_DECREASED)"}},
		{name: "MULTIPLE_OF_REDUCED to a divisor is compatible", writer: `{"multipleOf":4}`, reader: `{"multipleOf":2}`},
		{name: "MULTIPLE_OF_EXPANDED", writer: `{"multipleOf":2}`, reader: `{"multipleOf":4}`,
			want: []string{"#/multipleOf: multipleOf expanded from 2 to 4 (MULTIPLE_OF_EXPANDED)"}},
		{name: "MULTIPLE_OF_CHANGED to a non-divisor", writer: `{"multipleOf":4}`, reader: `{"multipleOf":3}`,
			want: []string{"#/multipleOf: multipleOf changed from 4 to 3, which does not divide it (MULTIPLE_OF_CHANGED)"}},
		{name: "MULTIPLE_OF_ADDED", writer: `{"type":"number"}`, reader: `{"type":"number","multipleOf":0.5}`,
			want: []string{"#/multipleOf: multipleOf 0.5 added (MULTIPLE_OF_ADDED)"}},
		{name: "MULTIPLE_OF_REMOVED is compatible", writer: `{"multipleOf":3}`, reader: `{"type":"number"}`},
		{name: "decimal multiples", writer: `{"multipleOf":0.5}`, reader: `{"multipleOf":0.25}`},
		{name: "integers are multiples of 1", writer: `{"type":"integer"}`, reader: `{"multipleOf":1}`},
	})
}

func TestCompatibleStrings(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "MAX_LENGTH_DECREASED", writer: `{"type":"string","maxLength":10}`, reader: `{"type":"string","maxLength":5}`,
			want: []string{"#/maxLength: maxLength decreased from 10 to 5 (MAX_LENGTH_DECREASED)"}},
		{name: "MAX_LENGTH_INCREASED is compatible", writer: `{"type":"string","maxLength":5}`, reader: `{"type":"string","maxLength":10}`},
		{name: "MAX_LENGTH_ADDED", writer: `{"type":"string"}`, reader: `{"type":"string","maxLength":5}`,
			want: []string{"#/maxLength: maxLength 5 added (MAX_LENGTH_ADDED)"}},
		{name: "MAX_LENGTH_REMOVED is compatible", writer: `{"type":"string","maxLength":5}`, reader: `{"type":"string"}`},
		{name: "MIN_LENGTH_INCREASED", writer: `{"type":"string","minLength":1}`, reader: `{"type":"string","minLength":2}`,
			want: []string{"#/minLength: minLength increased from 1 to 2 (MIN_LENGTH_INCREASED)"}},
		{name: "MIN_LENGTH_DECREASED is compatible", writer: `{"type":"string","minLength":2}`, reader: `{"type":"string","minLength":1}`},
		{name: "MIN_LENGTH_ADDED", writer: `{"type":"string"}`, reader: `{"type":"string","minLength":1}`,
			want: []string{"#/minLength: minLength 1 added (MIN_LENGTH_ADDED)"}},
		{name: "minLength 0 is no constraint", writer: `{"type":"string"}`, reader: `{"type":"string","minLength":0}`},
		{name: "MIN_LENGTH_REMOVED is compatible", writer: `{"type":"string","minLength":1}`, reader: `{"type":"string"}`},
		{name: "PATTERN_ADDED", writer: `{"type":"string"}`, reader: `{"type":"string","pattern":"^[a-z]+$"}`,
			want: []string{`#/pattern: pattern "^[a-z]+$" added (PATTERN_ADDED)`}},
		{name: "PATTERN_CHANGED", writer: `{"type":"string","pattern":"^a"}`, reader: `{"type":"string","pattern":"^b"}`,
			want: []string{`#/pattern: pattern changed from "^a" to "^b" (PATTERN_CHANGED)`}},
		{name: "PATTERN_REMOVED is compatible", writer: `{"type":"string","pattern":"^a"}`, reader: `{"type":"string"}`},
		{name: "string keywords do not matter for a writer that writes no strings",
			writer: `{"type":"integer"}`, reader: `{"type":["integer","string"],"maxLength":1}`},
	})
}

func TestCompatibleArrays(t *testing.T) {
	const draft7Tuple = `{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`
	checkCompat(t, []compatCase{
		{name: "items type changed", writer: `{"type":"array","items":{"type":"string"}}`, reader: `{"type":"array","items":{"type":"integer"}}`,
			want: []string{"#/items: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "items type extended", writer: `{"type":"array","items":{"type":"string"}}`, reader: `{"type":"array","items":{"type":["string","null"]}}`},
		{name: "items changed deep inside", writer: `{"items":{"properties":{"a":{"type":"string"}},"additionalProperties":false}}`,
			reader: `{"items":{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b"],"additionalProperties":false}}`,
			want:   []string{`#/items/properties/b: required property "b" added without a default (REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)`}},
		{name: "an items schema added (SCHEMA_ADDED)", writer: `{"type":"array"}`, reader: `{"type":"array","items":{"type":"string"}}`,
			want: []string{"#/items: items schema added: the writer's items were not constrained (SCHEMA_ADDED)"}},
		{name: "the items schema removed is compatible (SCHEMA_REMOVED)", writer: `{"type":"array","items":{"type":"string"}}`, reader: `{"type":"array"}`},
		{name: "MAX_ITEMS_DECREASED", writer: `{"type":"array","maxItems":5}`, reader: `{"type":"array","maxItems":3}`,
			want: []string{"#/maxItems: maxItems decreased from 5 to 3 (MAX_ITEMS_DECREASED)"}},
		{name: "MAX_ITEMS_ADDED", writer: `{"type":"array"}`, reader: `{"type":"array","maxItems":3}`,
			want: []string{"(MAX_ITEMS_ADDED)"}},
		{name: "MAX_ITEMS_INCREASED is compatible", writer: `{"type":"array","maxItems":3}`, reader: `{"type":"array","maxItems":5}`},
		{name: "MIN_ITEMS_INCREASED", writer: `{"type":"array","minItems":1}`, reader: `{"type":"array","minItems":2}`,
			want: []string{"#/minItems: minItems increased from 1 to 2 (MIN_ITEMS_INCREASED)"}},
		{name: "MIN_ITEMS_ADDED", writer: `{"type":"array"}`, reader: `{"type":"array","minItems":1}`,
			want: []string{"(MIN_ITEMS_ADDED)"}},
		{name: "MIN_ITEMS_REMOVED is compatible", writer: `{"type":"array","minItems":1}`, reader: `{"type":"array"}`},
		{name: "UNIQUE_ITEMS_ADDED", writer: `{"type":"array"}`, reader: `{"type":"array","uniqueItems":true}`,
			want: []string{"#/uniqueItems: uniqueItems added (UNIQUE_ITEMS_ADDED)"}},
		{name: "UNIQUE_ITEMS_REMOVED is compatible", writer: `{"type":"array","uniqueItems":true}`, reader: `{"type":"array"}`},
		{name: "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", writer: draft7Tuple,
			reader: `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			want:   []string{"#/items/1: item 1 removed from a closed content model (the reader accepts no further items) (ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL)"}},
		{name: "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL is compatible", writer: draft7Tuple,
			reader: `{"type":"array","items":[{"type":"string"}]}`},
		{name: "ITEM_ADDED_TO_OPEN_CONTENT_MODEL", writer: `{"type":"array","items":[{"type":"string"}]}`,
			reader: `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`,
			want:   []string{"#/items/1: item 1 added to an open content model (the writer may have written any value there) (ITEM_ADDED_TO_OPEN_CONTENT_MODEL)"}},
		{name: "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL is compatible", writer: `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			reader: draft7Tuple},
		{name: "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
			writer: `{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"string"}}`,
			reader: `{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":{"type":"string"}}`,
			want:   []string{"#/items/1: item 1 added, and it does not accept what the writer's additionalItems allowed there", "#/items/1: type changed"}},
		{name: "ADDITIONAL_ITEMS_REMOVED: closing the tuple", writer: `{"type":"array","items":[{"type":"string"}]}`,
			reader: `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			want:   []string{"#/additionalItems: additionalItems false added: the reader accepts no items past 1 (ADDITIONAL_ITEMS_REMOVED)"}},
		{name: "ADDITIONAL_ITEMS_NARROWED", writer: `{"type":"array","items":[{"type":"string"}]}`,
			reader: `{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"string"}}`,
			want:   []string{"(ADDITIONAL_ITEMS_NARROWED)"}},
		{name: "2020-12 prefixItems and items",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"},{"type":"string"}],"items":false}`,
			want:   []string{"#/prefixItems/1: type changed from [integer] to [string] (TYPE_CHANGED)"}},
		{name: "unevaluatedItems says what follows a tuple when nothing else does",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}],"unevaluatedItems":{"type":"string"}}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"},{"type":"string"}],"unevaluatedItems":{"type":"string"}}`},
		{name: "unevaluatedItems false added",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}]}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}],"unevaluatedItems":false}`,
			want:   []string{"#/unevaluatedItems: unevaluatedItems false added: the reader accepts no items past 1 (ADDITIONAL_ITEMS_REMOVED)"}},
		{name: "additionalItems without a tuple applies to nothing",
			writer: `{"type":"array","additionalItems":true}`, reader: `{"type":"array","additionalItems":false}`},
		{name: "contains added (SCHEMA_ADDED)", writer: `{"type":"array"}`, reader: `{"type":"array","contains":{"type":"string"}}`,
			want: []string{"#/contains: contains added: the writer's arrays need not have such an item (SCHEMA_ADDED)"}},
		{name: "contains compared", writer: `{"type":"array","contains":{"type":"string"}}`, reader: `{"type":"array","contains":{"type":"integer"}}`,
			want: []string{"#/contains: type changed from [string] to [integer] (TYPE_CHANGED)"}},
		{name: "MIN_CONTAINS_INCREASED",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","contains":{"type":"number"},"minContains":1}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","contains":{"type":"number"},"minContains":2}`,
			want:   []string{"#/minContains: minContains increased from 1 to 2 (MIN_CONTAINS_INCREASED)"}},
		{name: "MAX_CONTAINS_ADDED",
			writer: `{"$schema":"https://json-schema.org/draft/2020-12/schema","contains":{"type":"number"}}`,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","contains":{"type":"number"},"maxContains":2}`,
			want:   []string{"(MAX_CONTAINS_ADDED)"}},
		{name: "a draft 7 tuple reads like the same 2020-12 one", writer: draft7Tuple,
			reader: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]}`},
	})
}

func TestCompatibleCombinations(t *testing.T) {
	checkCompat(t, []compatCase{
		{name: "SUM_TYPE_EXTENDED: oneOf with more subschemas in the reader",
			writer: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`},
		{name: "SUM_TYPE_NARROWED: oneOf with fewer subschemas in the reader",
			writer: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"oneOf":[{"type":"string"}]}`,
			want: []string{"#: the reader's oneOf has 1 subschemas, the writer's oneOf 2 (SUM_TYPE_NARROWED)"}},
		{name: "anyOf with more subschemas in the reader",
			writer: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"anyOf":[{"type":"integer"},{"type":"boolean"},{"type":"string"}]}`},
		{name: "anyOf with fewer subschemas in the reader",
			writer: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"anyOf":[{"type":"integer"}]}`,
			want: []string{"(SUM_TYPE_NARROWED)"}},
		{name: "COMBINED_TYPE_EXTENDED: oneOf to anyOf",
			writer: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`},
		{name: "COMBINED_TYPE_CHANGED: anyOf to oneOf",
			writer: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			want: []string{"#: the writer's anyOf became oneOf in the reader (COMBINED_TYPE_CHANGED)"}},
		{name: "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
			writer: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, reader: `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`,
			want: []string{"#: only 1 of the writer's 2 anyOf subschemas match a distinct subschema of the reader's anyOf (COMBINED_TYPE_SUBSCHEMAS_CHANGED)",
				"#/anyOf/1: type changed from [integer] to [boolean] (TYPE_CHANGED)"}},
		{name: "subschemas matched by compatibility, not position",
			writer: `{"oneOf":[{"type":"string","maxLength":3},{"type":"integer"}]}`,
			reader: `{"oneOf":[{"type":"integer"},{"type":"string"}]}`},
		{name: "a plain writer read by one of the reader's alternatives",
			writer: `{"type":"string"}`, reader: `{"oneOf":[{"type":"null"},{"type":"string"}]}`},
		{name: "a plain writer read by none of the reader's alternatives",
			writer: `{"type":"string","maxLength":10}`, reader: `{"oneOf":[{"type":"null"},{"type":"string","maxLength":5}]}`,
			want: []string{"#: none of the reader's 2 oneOf alternatives accepts what the writer wrote (TYPE_CHANGED)",
				"#/oneOf/1/maxLength: maxLength decreased from 10 to 5 (MAX_LENGTH_DECREASED)"}},
		{name: "every writer alternative must be read",
			writer: `{"anyOf":[{"type":"string"},{"type":"null"}]}`, reader: `{"type":"string"}`,
			want: []string{"#: type changed from [null] to [string] (TYPE_CHANGED)"}},
		{name: "writer alternatives all read by a wider reader",
			writer: `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, reader: `{"type":["number","string"]}`},
		{name: "PRODUCT_TYPE_EXTENDED: allOf with more subschemas in the reader",
			writer: `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"integer"}}}]}`,
			reader: `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"integer"}}},{"properties":{"c":{"type":"string"}}}]}`,
			want: []string{`#/allOf/2/properties/c: property "c" added to an open content model`,
				"#: the reader combines 3 subschemas (allOf, or keywords beside $ref or a combinator), the writer 2 (PRODUCT_TYPE_EXTENDED)"}},
		{name: "PRODUCT_TYPE_NARROWED: allOf with fewer subschemas in the reader is compatible",
			writer: `{"allOf":[{"type":"string"},{"maxLength":5}]}`, reader: `{"allOf":[{"type":"string"}]}`},
		{name: "allOf subschemas compared one to one",
			writer: `{"allOf":[{"type":"string"},{"maxLength":5}]}`, reader: `{"allOf":[{"type":"string"},{"maxLength":4}]}`,
			want: []string{"#/allOf/1/maxLength: maxLength decreased from 5 to 4 (MAX_LENGTH_DECREASED)"}},
		{name: "keywords beside $ref (2019-09) count as one more allOf subschema",
			writer: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`,
			reader: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":5}`,
			want: []string{"#/maxLength: maxLength 5 added (MAX_LENGTH_ADDED)",
				"#: the reader combines 2 subschemas (allOf, or keywords beside $ref or a combinator), the writer 1 (PRODUCT_TYPE_EXTENDED)"}},
	})
}

func TestCompatibleReferences(t *testing.T) {
	const tree = `{"definitions":{"node":{"type":"object","properties":{"value":{"type":"%s"},"children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},"$ref":"#/definitions/node"}`
	checkCompat(t, []compatCase{
		{name: "a change behind a local $ref names the data's path, not the definition's",
			writer: `{"definitions":{"id":{"type":"integer"}},"properties":{"id":{"$ref":"#/definitions/id"}}}`,
			reader: `{"definitions":{"id":{"type":"string"}},"properties":{"id":{"$ref":"#/definitions/id"}}}`,
			want:   []string{"#/properties/id: type changed from [integer] to [string] (TYPE_CHANGED)"}},
		{name: "a $ref and the schema it names inline read alike",
			writer: `{"properties":{"id":{"type":"integer"}}}`,
			reader: `{"$defs":{"id":{"type":"integer"}},"properties":{"id":{"$ref":"#/$defs/id"}}}`},
		{name: "a change in a referenced schema",
			writer:     `{"properties":{"address":{"$ref":"address.json"}}}`,
			writerRefs: []schema.Resolved{ref("address.json", `{"type":"object","properties":{"zip":{"type":"string"}},"additionalProperties":false}`)},
			reader:     `{"properties":{"address":{"$ref":"address.json"}}}`,
			readerRefs: []schema.Resolved{ref("address.json", `{"type":"object","properties":{"zip":{"type":"string"},"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
			want:       []string{`#/properties/address/properties/city: required property "city" added without a default (REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)`}},
		{name: "a compatible change in a nested reference",
			writer:     `{"$ref":"a.json"}`,
			writerRefs: []schema.Resolved{ref("a.json", `{"properties":{"b":{"$ref":"b.json"}}}`, ref("b.json", `{"type":"integer"}`))},
			reader:     `{"$ref":"a.json"}`,
			readerRefs: []schema.Resolved{ref("a.json", `{"properties":{"b":{"$ref":"b.json"}}}`, ref("b.json", `{"type":"number"}`))}},
		{name: "a recursive schema is compatible with itself",
			writer: fmt.Sprintf(tree, "string"), reader: fmt.Sprintf(tree, "string")},
		{name: "a change inside a recursive schema",
			writer: fmt.Sprintf(tree, "integer"), reader: fmt.Sprintf(tree, "string"),
			want: []string{"#/properties/value: type changed from [integer] to [string] (TYPE_CHANGED)"}},
		{name: "mutually recursive definitions",
			writer: `{"$defs":{"a":{"properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"properties":{"a":{"$ref":"#/$defs/a"}}}},"$ref":"#/$defs/a"}`,
			reader: `{"$defs":{"a":{"properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"properties":{"a":{"$ref":"#/$defs/a"}}}},"$ref":"#/$defs/a"}`},
		{name: "a schema that is its own allOf",
			writer: `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}],"type":"string"}},"$ref":"#/$defs/a"}`,
			reader: `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}],"type":"integer"}},"$ref":"#/$defs/a"}`,
			want:   []string{"#: type changed from [string] to [integer] (TYPE_CHANGED)"}},
	})
}

// Compatible stops, reporting incompatibility, on schemas nested too
// deeply or too costly to compare, rather than run out of stack or time.
func TestCompatibleLimits(t *testing.T) {
	// A chain of definitions nests the data deeper than maxCompareDepth
	// while the JSON stays shallow.
	var defs []string
	for i := range maxCompareDepth + 10 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"properties":{"x":{"$ref":"#/definitions/d%d"}}}`, i, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, maxCompareDepth+10))
	chain := `{"definitions":{` + strings.Join(defs, ",") + `},"$ref":"#/definitions/d0"}`

	// Alternatives that never match are compared pairwise.
	var ints, strs []string
	for i := range 500 {
		ints = append(ints, fmt.Sprintf(`{"type":"integer","minimum":%d}`, i))
		strs = append(strs, fmt.Sprintf(`{"type":"string","minLength":%d}`, i))
	}
	checkCompat(t, []compatCase{
		{name: "too deep", writer: chain, reader: chain,
			want: []string{fmt.Sprintf("schemas nest deeper than %d levels; not compared further (TOO_DEEP)", maxCompareDepth)}},
		{name: "too many comparisons",
			writer: `{"anyOf":[` + strings.Join(ints, ",") + `]}`,
			reader: `{"anyOf":[` + strings.Join(strs, ",") + `]}`,
			want:   []string{"(COMBINED_TYPE_SUBSCHEMAS_CHANGED)", "(TOO_COMPLEX)"}},
	})
}

func TestCompatibleRefusesForeignSchemas(t *testing.T) {
	p, err := New().Parse(`{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := New().Compatible(foreignParsed{}, p); len(got) != 1 {
		t.Fatalf("Compatible(foreign, json) = %q, want one message", got)
	}
}
