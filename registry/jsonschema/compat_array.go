package jsonschema

import (
	"fmt"
	"strconv"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// arrayModel is an array schema's items in one shape for every draft:
// a tuple of listed items and what follows them (rest): before 2020-12
// "items" as an array and "additionalItems", or "items" as a schema for
// all items; from 2020-12 "prefixItems" and "items".
type arrayModel struct {
	tuple        []*jsv.Schema
	tupleKeyword string
	rest         any // nil (any items), bool, or *jsv.Schema
	restKeyword  string
}

// Where nothing says what follows the tuple, unevaluatedItems does
// (taken at this level only, as unevaluatedProperties is for objects).
func arrayOf(s *jsv.Schema) arrayModel {
	var m arrayModel
	if s.DraftVersion >= 2020 {
		m = arrayModel{tuple: s.PrefixItems, tupleKeyword: "prefixItems", restKeyword: "items"}
		if s.Items2020 != nil {
			m.rest = s.Items2020
		}
	} else {
		switch items := s.Items.(type) {
		case []*jsv.Schema:
			m = arrayModel{tuple: items, tupleKeyword: "items", rest: s.AdditionalItems, restKeyword: "additionalItems"}
		case *jsv.Schema:
			m = arrayModel{tupleKeyword: "items", rest: items, restKeyword: "items"}
		default:
			m = arrayModel{tupleKeyword: "items", restKeyword: "items"}
		}
	}
	if m.rest == nil && s.UnevaluatedItems != nil {
		m.rest, m.restKeyword = s.UnevaluatedItems, "unevaluatedItems"
	}
	return m
}

// restOf is what m accepts past its tuple: open (anything), a schema, or
// nothing (closed).
func (c *checker) restOf(m arrayModel) (schema *jsv.Schema, open bool) {
	switch rest := m.rest.(type) {
	case bool:
		return nil, rest
	case *jsv.Schema:
		switch {
		case c.isFalse(rest):
			return nil, false
		case c.isTrue(rest):
			return nil, true
		}
		return rest, false
	}
	return nil, true
}

// compareArray: items position by position under Confluent's content
// model rules for tuples, the items past the tuples, min/maxItems and
// uniqueItems.
func (c *checker) compareArray(w, r *jsv.Schema, depth int) []issue {
	wm, rm := arrayOf(w), arrayOf(r)
	wRest, wOpen := c.restOf(wm)
	rRest, rOpen := c.restOf(rm)
	wClosed := wRest == nil && !wOpen
	rClosed := rRest == nil && !rOpen
	var out []issue
	for i := range max(len(wm.tuple), len(rm.tuple)) {
		inWriter, inReader := i < len(wm.tuple), i < len(rm.tuple)
		switch {
		case inWriter && inReader:
			path := "/" + rm.tupleKeyword + "/" + strconv.Itoa(i)
			out = append(out, prefix(path, c.compare(wm.tuple[i], rm.tuple[i], depth+1))...)

		case inWriter: // the reader's tuple is shorter
			path := "/" + wm.tupleKeyword + "/" + strconv.Itoa(i)
			switch {
			case rOpen: // ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL
			case rRest != nil:
				if issues := c.compare(wm.tuple[i], rRest, depth+1); len(issues) > 0 {
					out = append(out, issue{path: path, rule: "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("item %d removed, and the reader's %s does not accept what the writer wrote there", i, rm.restKeyword)})
					out = append(out, prefix(path, issues)...)
				}
			case c.isFalse(wm.tuple[i]): // ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
			default:
				out = append(out, issue{path: path, rule: "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
					detail: fmt.Sprintf("item %d removed from a closed content model (the reader accepts no further items)", i)})
			}

		default: // the reader's tuple is longer
			path := "/" + rm.tupleKeyword + "/" + strconv.Itoa(i)
			switch {
			case wClosed: // ITEM_ADDED_TO_CLOSED_CONTENT_MODEL
			case wOpen:
				if !c.isTrue(rm.tuple[i]) {
					out = append(out, issue{path: path, rule: "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("item %d added to an open content model (the writer may have written any value there)", i)})
				}
			default:
				if issues := c.compare(wRest, rm.tuple[i], depth+1); len(issues) > 0 {
					out = append(out, issue{path: path, rule: "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
						detail: fmt.Sprintf("item %d added, and it does not accept what the writer's %s allowed there", i, wm.restKeyword)})
					out = append(out, prefix(path, issues)...)
				}
			}
		}
	}

	// The items past both tuples.
	noTuples := len(rm.tuple) == 0 && len(wm.tuple) == 0
	path := "/" + rm.restKeyword
	switch {
	case wClosed || rOpen: // SCHEMA_REMOVED, ADDITIONAL_ITEMS_ADDED/EXTENDED
	case rClosed:
		out = append(out, issue{path: path, rule: "ADDITIONAL_ITEMS_REMOVED", detail: fmt.Sprintf(
			"%s false added: the reader accepts no items past %d", rm.restKeyword, len(rm.tuple))})
	case wOpen:
		if noTuples {
			out = append(out, issue{path: path, rule: "SCHEMA_ADDED",
				detail: "items schema added: the writer's items were not constrained"})
		} else {
			out = append(out, issue{path: path, rule: "ADDITIONAL_ITEMS_NARROWED",
				detail: fmt.Sprintf("%s narrowed from any value to a schema", rm.restKeyword)})
		}
	default:
		out = append(out, prefix(path, c.compare(wRest, rRest, depth+1))...)
	}

	out = append(out, compareCount("maxItems", "MAX_ITEMS", w.MaxItems, r.MaxItems, true)...)
	out = append(out, compareCount("minItems", "MIN_ITEMS", w.MinItems, r.MinItems, false)...)
	if r.UniqueItems && !w.UniqueItems {
		out = append(out, issue{path: "/uniqueItems", rule: "UNIQUE_ITEMS_ADDED", detail: "uniqueItems added"})
	}
	if r.Contains != nil && !c.isTrue(r.Contains) {
		if w.Contains == nil {
			out = append(out, issue{path: "/contains", rule: "SCHEMA_ADDED",
				detail: "contains added: the writer's arrays need not have such an item"})
		} else {
			out = append(out, prefix("/contains", c.compare(w.Contains, r.Contains, depth+1))...)
		}
	}
	out = append(out, compareCount("maxContains", "MAX_CONTAINS", w.MaxContains, r.MaxContains, true)...)
	out = append(out, compareCount("minContains", "MIN_CONTAINS", w.MinContains, r.MinContains, false)...)
	return out
}
