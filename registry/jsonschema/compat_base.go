package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// compareBase compares the keywords of two schemas without $ref or
// combinators: types, enum/const, and the keywords of each kind of value
// the writer may write and the reader accepts.
func (c *checker) compareBase(w, r *jsv.Schema, depth int) []issue {
	wt := writerTypes(w)
	if wt == 0 {
		return nil // no value satisfies both the writer's type and enum
	}
	rt := allTypes
	if r.Types != nil {
		rt = typesFromNames(r.Types.ToStrings())
	}
	out := compareTypes(wt, rt)

	if values, ok := listedValues(w); ok {
		// The writer writes only these values: the reader must accept
		// each (of a type it accepts; the others were reported above).
		return append(out, c.compareListedValues(values, wt, rt, r)...)
	}
	if values, ok := listedValues(r); ok {
		return append(out, issue{rule: "ENUM_ARRAY_NARROWED", detail: fmt.Sprintf(
			"the reader accepts only %s; the writer's values were not restricted", formatValues(values))})
	}

	out = append(out, c.compareNot(w, r, depth)...)

	writes := func(t typeSet) bool { return wt&t != 0 && rt&t != 0 }
	if writes(tString) {
		out = append(out, compareString(w, r)...)
	}
	if writes(tInteger | tNumber) {
		out = append(out, compareNumber(w, r, wt)...)
	}
	if writes(tObject) {
		out = append(out, c.compareObject(w, r, depth)...)
	}
	if writes(tArray) {
		out = append(out, c.compareArray(w, r, depth)...)
	}
	return out
}

// compareNot: a reader's "not" must exclude nothing the writer writes.
// With both, the reader's excluded values must be among the writer's
// (the writer's "not" schema reads what the reader's writes): else
// NOT_TYPE_EXTENDED; narrowing it (NOT_TYPE_NARROWED) or dropping it is
// compatible.
func (c *checker) compareNot(w, r *jsv.Schema, depth int) []issue {
	if r.Not == nil || c.isFalse(r.Not) {
		return nil
	}
	if w.Not == nil {
		return []issue{{path: "/not", rule: "TYPE_CHANGED", detail: "not added: the reader rejects values the writer did not"}}
	}
	if len(c.compare(r.Not, w.Not, depth+1)) > 0 {
		return []issue{{path: "/not", rule: "NOT_TYPE_EXTENDED", detail: "the reader's not excludes values the writer's did not"}}
	}
	return nil
}

// typeSet is a set of JSON types; tNumber stands for every number,
// tInteger for the integers only.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject

	allTypes = tNull | tBoolean | tInteger | tNumber | tString | tArray | tObject
)

var typeNames = []struct {
	t    typeSet
	name string
}{
	{tNull, "null"}, {tBoolean, "boolean"}, {tInteger, "integer"}, {tNumber, "number"},
	{tString, "string"}, {tArray, "array"}, {tObject, "object"},
}

func typesFromNames(names []string) typeSet {
	var ts typeSet
	for _, name := range names {
		for _, tn := range typeNames {
			if tn.name == name {
				ts |= tn.t
			}
		}
	}
	return ts
}

func (ts typeSet) String() string {
	if ts == allTypes {
		return "any type"
	}
	var names []string
	for _, tn := range typeNames {
		if ts&tn.t != 0 {
			names = append(names, tn.name)
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

// accepts says whether a schema of types ts accepts values of type t
// (one type): a number schema accepts integers.
func (ts typeSet) accepts(t typeSet) bool {
	if t == tInteger {
		return ts&(tInteger|tNumber) != 0
	}
	return ts&t != 0
}

// writerTypes is what a writer schema writes: its "type", narrowed to
// the types of its enum or const values. Without "type", a schema whose
// keywords all apply to one kind of value (only "properties", "required",
// … or only "items", "maxItems", …) is taken to write that kind, as
// Confluent does (it models such a schema as an object or array schema).
func writerTypes(s *jsv.Schema) typeSet {
	declared := allTypes
	if s.Types != nil {
		declared = typesFromNames(s.Types.ToStrings())
	}
	if values, ok := listedValues(s); ok {
		var ts typeSet
		for _, v := range values {
			if t := typeOfValue(v); declared.accepts(t) {
				ts |= t
			}
		}
		return ts
	}
	if s.Types == nil {
		if kinds := keywordKinds(s); kinds == tString || kinds == tNumber || kinds == tArray || kinds == tObject {
			return kinds
		}
	}
	return declared
}

// keywordKinds is the set of kinds of values the keywords of s apply to.
func keywordKinds(s *jsv.Schema) typeSet {
	var ts typeSet
	if s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil {
		ts |= tString
	}
	if s.Maximum != nil || s.Minimum != nil || s.ExclusiveMaximum != nil ||
		s.ExclusiveMinimum != nil || s.MultipleOf != nil {
		ts |= tNumber
	}
	if s.Items != nil || s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.Items2020 != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.Contains != nil ||
		s.UnevaluatedItems != nil {
		ts |= tArray
	}
	if len(s.Properties) > 0 || len(s.Required) > 0 || s.AdditionalProperties != nil ||
		len(s.PatternProperties) > 0 || s.MaxProperties != nil || s.MinProperties != nil ||
		s.PropertyNames != nil || len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 ||
		len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil {
		ts |= tObject
	}
	return ts
}

func typeOfValue(v any) typeSet {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok && r.IsInt() {
			return tInteger
		}
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// compareTypes: every type the writer writes must be accepted by the
// reader. Integer to number widens; number to integer narrows.
func compareTypes(wt, rt typeSet) []issue {
	var missing typeSet
	overlap := false
	for _, tn := range typeNames {
		if wt&tn.t == 0 {
			continue
		}
		if rt.accepts(tn.t) {
			overlap = true
		} else {
			missing |= tn.t
		}
	}
	if missing == 0 {
		return nil
	}
	if wt&tNumber != 0 && rt&tInteger != 0 {
		overlap = true // the reader still reads the writer's integers
	}
	if !overlap {
		return []issue{{rule: "TYPE_CHANGED", detail: fmt.Sprintf("type changed from %s to %s", wt, rt)}}
	}
	return []issue{{rule: "TYPE_NARROWED", detail: fmt.Sprintf("type narrowed from %s to %s", wt, rt)}}
}

// listedValues are the values s allows, if it lists them (const, enum).
func listedValues(s *jsv.Schema) ([]any, bool) {
	switch {
	case s == nil:
		return nil, false
	case s.Const != nil:
		return []any{*s.Const}, true
	case s.Enum != nil:
		return s.Enum.Values, true
	}
	return nil, false
}

// compareListedValues: the writer writes only values; those of types the
// reader accepts must be in the reader's enum (ENUM_ARRAY_NARROWED when
// the reader's enum is a subset of the writer's, ENUM_ARRAY_CHANGED
// otherwise) and valid against its other keywords.
func (c *checker) compareListedValues(values []any, wt, rt typeSet, r *jsv.Schema) []issue {
	readerValues, readerLists := listedValues(r)
	var out []issue
	var missing []any
	for _, v := range values {
		t := typeOfValue(v)
		if wt&t == 0 || !rt.accepts(t) {
			continue // not written, or reported as a type change
		}
		if readerLists && !containsValue(readerValues, v) {
			missing = append(missing, v)
			continue
		}
		if !c.step() {
			return append(out, tooComplex)
		}
		if err := guard(func() error { return r.Validate(v) }); err != nil {
			out = append(out, issue{rule: "TYPE_CHANGED", detail: fmt.Sprintf(
				"the writer's value %s is not valid for the reader: %s", formatValue(v), firstProblem(err))})
		}
	}
	if len(missing) > 0 {
		rule := "ENUM_ARRAY_CHANGED"
		if subset(readerValues, values) {
			rule = "ENUM_ARRAY_NARROWED"
		}
		out = append(out, issue{path: "/enum", rule: rule, detail: fmt.Sprintf(
			"the reader's enum %s lacks the writer's %s", formatValues(readerValues), formatValues(missing))})
	}
	return out
}

// firstProblem is the first reason a validation error gives.
func firstProblem(err error) string {
	var ve *jsv.ValidationError
	if errors.As(err, &ve) {
		if problems := leafProblems(ve); len(problems) > 0 {
			return problems[0]
		}
	}
	return err.Error()
}

func containsValue(values []any, v any) bool {
	return slices.ContainsFunc(values, func(x any) bool { return equalJSON(x, v) })
}

func subset(small, big []any) bool {
	for _, v := range small {
		if !containsValue(big, v) {
			return false
		}
	}
	return true
}

// equalJSON compares decoded JSON values; numbers compare by value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		ra, oka := new(big.Rat).SetString(string(a))
		rb, okb := new(big.Rat).SetString(string(bn))
		if !oka || !okb {
			return string(a) == string(bn)
		}
		return ra.Cmp(rb) == 0
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equalJSON(av, bv) {
				return false
			}
		}
		return true
	}
	return a == b // nil, bool, string
}

func formatValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func formatValues(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = formatValue(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
