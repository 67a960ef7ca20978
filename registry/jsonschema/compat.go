package jsonschema

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-streaming/strata/registry/schema"
)

// Limits of the compatibility check (see doc.go). Past either, the check
// stops and reports the schemas as incompatible rather than guess.
const (
	// maxCompareDepth bounds how deeply subschemas are followed.
	maxCompareDepth = 128
	// maxCompareSteps bounds the subschema comparisons and value
	// validations of one check (alternatives are compared pairwise).
	maxCompareSteps = 200_000
	// maxRefHops bounds a chain of $refs and allOfs flattened at once.
	maxRefHops = 64
	// maxMessages bounds the messages one check returns.
	maxMessages = 100
)

// Compatible lists why reader cannot read what writer wrote: one message
// per incompatibility, "<JSON pointer>: <what changed> (<RULE>)", the
// pointer locating the place in the reader schema (references followed,
// so it names the path through the data, not through $defs).
func (format) Compatible(reader, writer schema.Parsed) []string {
	r, rok := reader.(*parsed)
	w, wok := writer.(*parsed)
	if !rok || !wok || r == nil || w == nil {
		return []string{"#: both schemas must be JSON schemas parsed by this format (TYPE_CHANGED)"}
	}
	c := &checker{
		inProgress: map[schemaPair]int{},
		memo:       map[schemaPair][]issue{},
		bases:      map[*jsv.Schema]*jsv.Schema{},
		parts:      map[*jsv.Schema][]part{},
		lowest:     noAssumption,
	}
	issues := c.compare(w.compiled, r.compiled, 0)
	if c.gaveUp {
		// Once out of budget every comparison failed alike: say it once.
		issues = slices.DeleteFunc(issues, func(is issue) bool { return is.rule == tooComplex.rule })
		issues = append(issues, tooComplex)
	}
	var out []string
	seen := map[string]bool{}
	for _, is := range issues {
		msg := is.String()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		out = append(out, msg)
	}
	if len(out) > maxMessages {
		more := len(out) - maxMessages
		out = append(out[:maxMessages], fmt.Sprintf("#: and %d more incompatibilities", more))
	}
	return out
}

// issue is one incompatibility. path is a JSON pointer relative to the
// schema being compared when the issue is made; callers prefix it.
type issue struct {
	path   string
	rule   string // Confluent's name for the difference, or ours (doc.go)
	detail string
}

func (is issue) String() string {
	return "#" + is.path + ": " + is.detail + " (" + is.rule + ")"
}

var tooComplex = issue{rule: "TOO_COMPLEX", detail: fmt.Sprintf(
	"the schemas need more than %d comparisons; not compared further", maxCompareSteps)}

// prefix returns issues with path put in front of each issue's path.
func prefix(path string, issues []issue) []issue {
	if path == "" || len(issues) == 0 {
		return issues
	}
	out := make([]issue, len(issues))
	for i, is := range issues {
		out[i] = is
		out[i].path = path + is.path
	}
	return out
}

type schemaPair struct{ writer, reader *jsv.Schema }

// noAssumption: no pair on the stack was assumed compatible.
const noAssumption = math.MaxInt

// checker compares a writer schema with a reader schema. Recursive
// schemas are handled coinductively: a pair met again while it is being
// compared is assumed compatible (if it is not, the outer comparison
// finds out). Results are memoized per pair unless they rested on such an
// assumption about a pair further up the stack.
type checker struct {
	inProgress map[schemaPair]int // pair -> depth at which it is compared
	memo       map[schemaPair][]issue
	lowest     int // smallest depth of a pair assumed compatible since reset
	bases      map[*jsv.Schema]*jsv.Schema
	parts      map[*jsv.Schema][]part
	steps      int
	gaveUp     bool
}

// step counts one unit of work; false once the budget is spent.
func (c *checker) step() bool {
	if c.gaveUp {
		return false
	}
	if c.steps++; c.steps > maxCompareSteps {
		c.gaveUp = true
		return false
	}
	return true
}

// compare lists why reader cannot read what writer wrote.
func (c *checker) compare(writer, reader *jsv.Schema, depth int) []issue {
	writer, reader = c.deref(writer), c.deref(reader)
	if writer == reader {
		return nil
	}
	if !c.step() {
		return []issue{tooComplex}
	}
	if depth > maxCompareDepth {
		return []issue{{rule: "TOO_DEEP", detail: fmt.Sprintf(
			"schemas nest deeper than %d levels; not compared further", maxCompareDepth)}}
	}
	key := schemaPair{writer, reader}
	if at, ok := c.inProgress[key]; ok {
		c.lowest = min(c.lowest, at)
		return nil
	}
	if issues, ok := c.memo[key]; ok {
		return issues
	}
	c.inProgress[key] = depth
	outer := c.lowest
	c.lowest = noAssumption
	issues := c.compareSchemas(writer, reader, depth)
	delete(c.inProgress, key)
	if c.lowest >= depth && !c.gaveUp {
		c.memo[key] = issues
	}
	c.lowest = min(outer, c.lowest)
	return issues
}

func (c *checker) compareSchemas(writer, reader *jsv.Schema, depth int) []issue {
	ws := c.conjuncts(writer)
	rs := c.conjuncts(reader)
	// A writer that can write only the values it lists is compatible
	// with a reader that accepts each of them, whatever else differs.
	for _, p := range ws {
		if values, ok := listedValues(p.schema); ok && c.acceptsAll(reader, values) {
			return nil
		}
	}
	return c.compareConjuncts(ws, rs, depth)
}

// acceptsAll says whether s validates every one of values.
func (c *checker) acceptsAll(s *jsv.Schema, values []any) bool {
	for _, v := range values {
		if !c.step() {
			return false
		}
		if err := guard(func() error { return s.Validate(v) }); err != nil {
			return false
		}
	}
	return true
}

// part is one conjunct of a schema: what remains of the schema itself
// once its $ref and combinators are taken out (schema), or one anyOf or
// oneOf (alternatives), or the false schema (never). A value is valid
// against a schema when it is valid against every part.
type part struct {
	path         string // JSON pointer of the part relative to the schema
	schema       *jsv.Schema
	alternatives []*jsv.Schema
	oneOf        bool
	never        bool
}

func (p part) keyword() string {
	if p.oneOf {
		return "oneOf"
	}
	return "anyOf"
}

// deref follows s while it is only a $ref, so that a recursive schema
// met again through its $ref is recognized as the same pair.
func (c *checker) deref(s *jsv.Schema) *jsv.Schema {
	for range maxRefHops {
		if s.Bool != nil || len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || c.base(s) != nil {
			return s
		}
		targets := refTargets(s)
		if len(targets) != 1 {
			return s
		}
		s = targets[0]
	}
	return s
}

// conjuncts flattens a schema into its parts: $refs are followed (they
// add nothing to the path, as in Confluent's messages), allOf is spread
// out, and the true schema has no parts.
func (c *checker) conjuncts(s *jsv.Schema) []part {
	if parts, ok := c.parts[s]; ok {
		return parts
	}
	var out []part
	visited := map[*jsv.Schema]bool{}
	var collect func(s *jsv.Schema, path string, hops int)
	collect = func(s *jsv.Schema, path string, hops int) {
		if s == nil || visited[s] || hops > maxRefHops {
			return
		}
		visited[s] = true
		if s.Bool != nil {
			if !*s.Bool {
				out = append(out, part{path: path, never: true})
			}
			return
		}
		for _, target := range refTargets(s) {
			collect(target, path, hops+1)
		}
		if base := c.base(s); base != nil {
			out = append(out, part{path: path, schema: base})
		}
		for i, sub := range s.AllOf {
			collect(sub, path+"/allOf/"+strconv.Itoa(i), hops+1)
		}
		if len(s.AnyOf) > 0 {
			out = append(out, part{path: path, alternatives: s.AnyOf})
		}
		if len(s.OneOf) > 0 {
			out = append(out, part{path: path, alternatives: s.OneOf, oneOf: true})
		}
	}
	collect(s, "", 0)
	c.parts[s] = out
	return out
}

// refTargets are the schemas s refers to: $ref, and (followed
// statically) $recursiveRef and $dynamicRef.
func refTargets(s *jsv.Schema) []*jsv.Schema {
	var out []*jsv.Schema
	if s.Ref != nil {
		out = append(out, s.Ref)
	}
	if s.RecursiveRef != nil {
		out = append(out, s.RecursiveRef)
	}
	if s.DynamicRef != nil && s.DynamicRef.Ref != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	return out
}

// base is s without $ref and combinators, or nil if that constrains
// nothing. It is s itself when s has neither, and the same copy each time
// otherwise, so that memoization and cycle detection work on it.
func (c *checker) base(s *jsv.Schema) *jsv.Schema {
	if b, ok := c.bases[s]; ok {
		return b
	}
	b := s
	if s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil {
		stripped := *s
		stripped.Ref, stripped.RecursiveRef, stripped.DynamicRef = nil, nil, nil
		stripped.AllOf, stripped.AnyOf, stripped.OneOf = nil, nil, nil
		b = &stripped
	}
	if !constrains(b) {
		b = nil
	}
	c.bases[s] = b
	return b
}

// constrains says whether a schema without $ref and combinators rejects
// any value. format and the content keywords are taken as annotations
// (the compatibility check ignores them).
func constrains(s *jsv.Schema) bool {
	if s.Bool != nil {
		return !*s.Bool
	}
	return s.Types != nil || s.Enum != nil || s.Const != nil || s.Not != nil ||
		s.If != nil || s.Then != nil || s.Else != nil ||
		s.MaxProperties != nil || s.MinProperties != nil || len(s.Required) > 0 ||
		s.PropertyNames != nil || len(s.Properties) > 0 || len(s.PatternProperties) > 0 ||
		s.AdditionalProperties != nil || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
		s.UnevaluatedProperties != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.Contains != nil ||
		s.MinContains != nil || s.MaxContains != nil || s.Items != nil ||
		s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.Items2020 != nil ||
		s.UnevaluatedItems != nil ||
		s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil ||
		s.Maximum != nil || s.Minimum != nil || s.ExclusiveMaximum != nil ||
		s.ExclusiveMinimum != nil || s.MultipleOf != nil || len(s.Extensions) > 0
}

// accepting is the schema that accepts everything: a writer without parts.
var accepting = &jsv.Schema{}

// isTrue says whether s accepts every value; isFalse whether it accepts none.
func (c *checker) isTrue(s *jsv.Schema) bool { return s == nil || len(c.conjuncts(s)) == 0 }

func (c *checker) isFalse(s *jsv.Schema) bool {
	if s == nil {
		return false
	}
	for _, p := range c.conjuncts(s) {
		if p.never {
			return true
		}
	}
	return false
}

// compareConjuncts compares two schemas given as their parts.
func (c *checker) compareConjuncts(ws, rs []part, depth int) []issue {
	for _, p := range ws {
		if p.never {
			return nil // the writer writes nothing
		}
	}
	if len(rs) == 0 {
		return nil // the reader reads anything
	}
	for _, p := range rs {
		if p.never {
			return []issue{{path: p.path, rule: "TYPE_CHANGED", detail: "the reader accepts nothing (false schema)"}}
		}
	}
	if len(ws) == 0 {
		ws = []part{{schema: accepting}}
	}
	if len(ws) == 1 && len(rs) == 1 {
		return prefix(rs[0].path, c.compareParts(ws[0], rs[0], depth))
	}
	// Several parts on either side (allOf, or keywords beside a $ref or
	// a combinator): every part of the reader must follow from one part
	// of the writer. Parts are compared one to one, as Confluent matches
	// allOf subschemas; a reader part implied only by several writer
	// parts together is reported.
	var out []issue
	uncovered := 0
	for j, rp := range rs {
		var closest []issue
		covered := false
		for _, i := range preferIndex(j, len(ws)) {
			issues := c.compareParts(ws[i], rp, depth)
			if len(issues) == 0 {
				covered = true
				break
			}
			if closest == nil || distance(issues) < distance(closest) {
				closest = issues
			}
		}
		if !covered {
			uncovered++
			out = append(out, prefix(rp.path, closest)...)
		}
	}
	if uncovered > 0 && len(rs) > len(ws) {
		out = append(out, issue{rule: "PRODUCT_TYPE_EXTENDED", detail: fmt.Sprintf(
			"the reader combines %d subschemas (allOf, or keywords beside $ref or a combinator), the writer %d",
			len(rs), len(ws))})
	}
	return out
}

// distance ranks lists of issues to pick the closest of several
// candidates to report: fewest issues, and a different type at the top
// counts as far.
func distance(issues []issue) int {
	d := len(issues)
	for _, is := range issues {
		if is.path == "" && is.rule == "TYPE_CHANGED" {
			d += 1000
		}
	}
	return d
}

// preferIndex lists 0..n-1 starting with j (when j < n).
func preferIndex(j, n int) []int {
	out := make([]int, 0, n)
	if j < n {
		out = append(out, j)
	}
	for i := range n {
		if i != j {
			out = append(out, i)
		}
	}
	return out
}

// compareParts compares one part of the writer with one of the reader.
func (c *checker) compareParts(wp, rp part, depth int) []issue {
	switch {
	case wp.alternatives == nil && rp.alternatives == nil:
		return c.compareBase(wp.schema, rp.schema, depth)
	case wp.alternatives == nil:
		return c.readerAlternatives(wp.schema, rp, depth)
	case rp.alternatives == nil:
		// Whatever alternative the writer took, the reader must read it.
		var out []issue
		for _, alt := range wp.alternatives {
			out = append(out, c.compare(alt, rp.schema, depth+1)...)
		}
		return out
	}
	return c.compareAlternatives(wp, rp, depth)
}

// readerAlternatives: the reader has an anyOf or oneOf, the writer a
// plain schema, which one of the alternatives must accept
// (SUM_TYPE_EXTENDED in Confluent's terms when it does).
func (c *checker) readerAlternatives(writer *jsv.Schema, rp part, depth int) []issue {
	kw := rp.keyword()
	var closest []issue
	closestAt := 0
	for j, alt := range rp.alternatives {
		issues := c.compare(writer, alt, depth+1)
		if len(issues) == 0 {
			return nil
		}
		if closest == nil || distance(issues) < distance(closest) {
			closest, closestAt = issues, j
		}
	}
	closest = prefix("/"+kw+"/"+strconv.Itoa(closestAt), closest)
	if len(rp.alternatives) == 1 {
		return closest
	}
	return append([]issue{{rule: "TYPE_CHANGED", detail: fmt.Sprintf(
		"none of the reader's %d %s alternatives accepts what the writer wrote", len(rp.alternatives), kw)}},
		closest...)
}

// compareAlternatives: both have an anyOf or oneOf. As in Confluent, the
// reader may turn a oneOf into an anyOf but not the reverse, may not have
// fewer alternatives, and each writer alternative (or each reader one,
// when the reader has fewer) must be matched to a distinct compatible one
// of the other side.
func (c *checker) compareAlternatives(wp, rp part, depth int) []issue {
	wkw, rkw := wp.keyword(), rp.keyword()
	nw, nr := len(wp.alternatives), len(rp.alternatives)
	var out []issue
	if rp.oneOf && !wp.oneOf && nw > 1 {
		return []issue{{rule: "COMBINED_TYPE_CHANGED", detail: fmt.Sprintf(
			"the writer's %s became %s in the reader", wkw, rkw)}}
	}
	if nr < nw {
		out = append(out, issue{rule: "SUM_TYPE_NARROWED", detail: fmt.Sprintf(
			"the reader's %s has %d subschemas, the writer's %s %d", rkw, nr, wkw, nw)})
	}
	// Edges are compared lazily, the same position first: alternatives
	// that did not move match without comparing every pair.
	compatible := map[[2]int]bool{}
	edge := func(i, j int) bool {
		ok, known := compatible[[2]int{i, j}]
		if !known {
			ok = len(c.compare(wp.alternatives[i], rp.alternatives[j], depth+1)) == 0
			compatible[[2]int{i, j}] = ok
		}
		return ok
	}
	matchOfReader := maxMatching(nw, nr, edge)
	matched := make([]bool, nw)
	count := 0
	for _, i := range matchOfReader {
		if i >= 0 {
			matched[i] = true
			count++
		}
	}
	if count < min(nw, nr) {
		out = append(out, issue{rule: "COMBINED_TYPE_SUBSCHEMAS_CHANGED", detail: fmt.Sprintf(
			"only %d of the writer's %d %s subschemas match a distinct subschema of the reader's %s",
			count, nw, wkw, rkw)})
		if nr >= nw {
			// Say why each unmatched writer alternative fails against
			// the reader's alternative at the same place.
			for i, walt := range wp.alternatives {
				if !matched[i] && i < nr {
					out = append(out, prefix("/"+rkw+"/"+strconv.Itoa(i),
						c.compare(walt, rp.alternatives[i], depth+1))...)
				}
			}
		}
	}
	return out
}

// maxMatching finds a maximum matching of a bipartite graph (Kuhn's
// augmenting paths, trying right vertex i first for left vertex i):
// matchOfRight[j] is the left vertex matched to right vertex j, or -1.
func maxMatching(nLeft, nRight int, edge func(i, j int) bool) []int {
	matchOfRight := make([]int, nRight)
	for j := range matchOfRight {
		matchOfRight[j] = -1
	}
	var augment func(i int, seen []bool) bool
	augment = func(i int, seen []bool) bool {
		for _, j := range preferIndex(i, nRight) {
			if seen[j] || !edge(i, j) {
				continue
			}
			seen[j] = true
			if matchOfRight[j] < 0 || augment(matchOfRight[j], seen) {
				matchOfRight[j] = i
				return true
			}
		}
		return false
	}
	for i := range nLeft {
		augment(i, make([]bool, nRight))
	}
	return matchOfRight
}
