package jsonschema

import (
	"fmt"
	"slices"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// compareObject: properties under Confluent's content-model rules,
// required, additionalProperties (or unevaluatedProperties), the
// patternProperties both have, and min/maxProperties.
func (c *checker) compareObject(w, r *jsv.Schema, depth int) []issue {
	var out []issue
	reported := map[string]bool{} // properties whose addition was reported

	keys := make([]string, 0, len(w.Properties)+len(r.Properties))
	for k := range w.Properties {
		keys = append(keys, k)
	}
	for k := range r.Properties {
		if _, ok := w.Properties[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		path := "/properties/" + escapePointerToken(key)
		wp, inWriter := w.Properties[key]
		rp, inReader := r.Properties[key]
		switch {
		case inWriter && inReader:
			out = append(out, prefix(path, c.compare(wp, rp, depth+1))...)

		case inWriter: // removed in the reader
			extra, open := c.extraProperty(r, key)
			switch {
			case open: // PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
			case extra != nil:
				if issues := c.compare(wp, extra, depth+1); len(issues) > 0 {
					out = append(out, issue{path: path, rule: "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("property %q removed, and what the reader accepts for it instead does not accept what the writer wrote", key)})
					out = append(out, prefix(path, issues)...)
				}
			case c.isFalse(wp): // PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
			default:
				out = append(out, issue{path: path, rule: "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
					detail: fmt.Sprintf("property %q removed from a closed content model (the reader does not allow additional properties)", key)})
			}

		default: // added in the reader
			extra, open := c.extraProperty(w, key)
			switch {
			case open:
				if !c.isTrue(rp) {
					out = append(out, issue{path: path, rule: "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("property %q added to an open content model (the writer may have written %q with any value)", key, key)})
					reported[key] = true
				}
				continue
			case extra != nil:
				if issues := c.compare(extra, rp, depth+1); len(issues) > 0 {
					out = append(out, issue{path: path, rule: "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("property %q added, and it does not accept what the writer's content model allowed for it", key)})
					out = append(out, prefix(path, issues)...)
					reported[key] = true
				}
			}
			if slices.Contains(r.Required, key) && !slices.Contains(w.Required, key) {
				reported[key] = true
				if !hasDefault(rp) {
					out = append(out, issue{path: path, rule: "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("required property %q added without a default", key)})
				} // else REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
			} // else OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
		}
	}

	for _, key := range r.Required {
		if slices.Contains(w.Required, key) || reported[key] {
			continue
		}
		reported[key] = true
		if rp, ok := r.Properties[key]; ok && hasDefault(rp) {
			continue // REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED
		}
		out = append(out, issue{path: "/properties/" + escapePointerToken(key), rule: "REQUIRED_ATTRIBUTE_ADDED",
			detail: fmt.Sprintf("property %q is required by the reader but not by the writer", key)})
	}

	out = append(out, c.compareAdditionalProperties(w, r, depth)...)

	patterns := map[string]*jsv.Schema{}
	for re, s := range r.PatternProperties {
		patterns[re.String()] = s
	}
	var shared []string
	writerPattern := map[string]*jsv.Schema{}
	for re, s := range w.PatternProperties {
		if _, ok := patterns[re.String()]; ok {
			shared = append(shared, re.String())
			writerPattern[re.String()] = s
		}
	}
	slices.Sort(shared)
	for _, p := range shared {
		out = append(out, prefix("/patternProperties/"+escapePointerToken(p),
			c.compare(writerPattern[p], patterns[p], depth+1))...)
	}

	out = append(out, c.compareDependencies(w, r, depth)...)
	out = append(out, compareCount("maxProperties", "MAX_PROPERTIES", w.MaxProperties, r.MaxProperties, true)...)
	out = append(out, compareCount("minProperties", "MIN_PROPERTIES", w.MinProperties, r.MinProperties, false)...)
	return out
}

// dependency is one entry of "dependencies" (draft 7 and earlier),
// "dependentRequired" or "dependentSchemas" (2019-09 and later).
type dependency struct {
	keyword  string
	required []string    // the properties required when the key is present
	schema   *jsv.Schema // or the schema applied then
}

func dependenciesOf(s *jsv.Schema) map[string]dependency {
	deps := map[string]dependency{}
	for key, dep := range s.Dependencies {
		switch dep := dep.(type) {
		case []string:
			deps[key] = dependency{keyword: "dependencies", required: dep}
		case *jsv.Schema:
			deps[key] = dependency{keyword: "dependencies", schema: dep}
		}
	}
	for key, required := range s.DependentRequired {
		deps[key] = dependency{keyword: "dependentRequired", required: required}
	}
	for key, schema := range s.DependentSchemas {
		deps[key] = dependency{keyword: "dependentSchemas", schema: schema}
	}
	return deps
}

// compareDependencies: a reader's dependency on a property must follow
// from the writer's: requiring more properties (DEPENDENCY_ARRAY_ADDED,
// _EXTENDED, _CHANGED) or adding a schema (DEPENDENCY_SCHEMA_ADDED) is
// incompatible, requiring fewer (_NARROWED) or dropping one compatible;
// two schemas are compared.
func (c *checker) compareDependencies(w, r *jsv.Schema, depth int) []issue {
	writerDeps, readerDeps := dependenciesOf(w), dependenciesOf(r)
	keys := make([]string, 0, len(readerDeps))
	for key := range readerDeps {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var out []issue
	for _, key := range keys {
		rd := readerDeps[key]
		wd, inWriter := writerDeps[key]
		path := "/" + rd.keyword + "/" + escapePointerToken(key)
		switch {
		case rd.schema != nil && (!inWriter || wd.schema == nil):
			out = append(out, issue{path: path, rule: "DEPENDENCY_SCHEMA_ADDED", detail: fmt.Sprintf(
				"a schema the reader applies when %q is present was added", key)})
		case rd.schema != nil:
			out = append(out, prefix(path, c.compare(wd.schema, rd.schema, depth+1))...)
		case !inWriter || wd.schema != nil:
			out = append(out, issue{path: path, rule: "DEPENDENCY_ARRAY_ADDED", detail: fmt.Sprintf(
				"when %q is present the reader requires %q", key, rd.required)})
		default:
			var missing []string
			for _, name := range rd.required {
				if !slices.Contains(wd.required, name) {
					missing = append(missing, name)
				}
			}
			if len(missing) == 0 {
				continue // DEPENDENCY_ARRAY_NARROWED
			}
			rule := "DEPENDENCY_ARRAY_CHANGED"
			if len(missing)+len(wd.required) == len(rd.required) {
				rule = "DEPENDENCY_ARRAY_EXTENDED"
			}
			out = append(out, issue{path: path, rule: rule, detail: fmt.Sprintf(
				"when %q is present the reader also requires %q", key, missing)})
		}
	}
	return out
}

// additional describes what an object schema accepts for properties it
// neither lists nor matches by pattern: additionalProperties, or, when
// absent, unevaluatedProperties (taken at this level only). permits is
// false when it accepts none; schema is nil when it accepts any.
func (c *checker) additional(s *jsv.Schema) (permits bool, schema *jsv.Schema, keyword string) {
	keyword = "additionalProperties"
	var ap any = s.AdditionalProperties
	if ap == nil && s.UnevaluatedProperties != nil {
		keyword, ap = "unevaluatedProperties", s.UnevaluatedProperties
	}
	switch ap := ap.(type) {
	case bool:
		return ap, nil, keyword
	case *jsv.Schema:
		switch {
		case c.isFalse(ap):
			return false, nil, keyword
		case c.isTrue(ap):
			return true, nil, keyword
		}
		return true, ap, keyword
	}
	return true, nil, keyword
}

// extraProperty is what an object schema accepts for key when it does not
// list it: open when anything, a schema, or neither when nothing (closed).
func (c *checker) extraProperty(s *jsv.Schema, key string) (schema *jsv.Schema, open bool) {
	var matches []*jsv.Schema
	var patterns []string
	for re, sub := range s.PatternProperties {
		if re.MatchString(key) {
			patterns = append(patterns, re.String())
			matches = append(matches, sub)
		}
	}
	if len(matches) > 0 {
		// Every matching pattern applies; compare with the first in
		// pattern order, after giving up on false or true ones.
		order := make([]int, len(matches))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(patterns[a], patterns[b]) })
		var constraining *jsv.Schema
		for _, i := range order {
			if c.isFalse(matches[i]) {
				return nil, false
			}
			if constraining == nil && !c.isTrue(matches[i]) {
				constraining = matches[i]
			}
		}
		return constraining, constraining == nil
	}
	permits, schema, _ := c.additional(s)
	if !permits {
		return nil, false
	}
	return schema, schema == nil
}

// compareAdditionalProperties: the reader may open the content model
// (ADDITIONAL_PROPERTIES_ADDED) but not close it
// (ADDITIONAL_PROPERTIES_REMOVED), nor constrain additional properties
// the writer left free (ADDITIONAL_PROPERTIES_NARROWED).
func (c *checker) compareAdditionalProperties(w, r *jsv.Schema, depth int) []issue {
	wPermits, wSchema, _ := c.additional(w)
	rPermits, rSchema, keyword := c.additional(r)
	rule := strings.ToUpper(strings.TrimSuffix(keyword, "Properties")) + "_PROPERTIES"
	path := "/" + keyword
	switch {
	case !wPermits:
		return nil
	case !rPermits:
		return []issue{{path: path, rule: rule + "_REMOVED", detail: fmt.Sprintf(
			"%s false added: the reader no longer accepts properties it does not list", keyword)}}
	case rSchema == nil:
		return nil
	case wSchema == nil:
		return []issue{{path: path, rule: rule + "_NARROWED", detail: fmt.Sprintf(
			"%s narrowed from any value to a schema", keyword)}}
	}
	return prefix(path, c.compare(wSchema, rSchema, depth+1))
}

// hasDefault says whether s (or what it refers to) gives a default.
func hasDefault(s *jsv.Schema) bool {
	for hops := 0; s != nil && hops <= maxRefHops; hops++ {
		if s.Default != nil {
			return true
		}
		s = s.Ref
	}
	return false
}
