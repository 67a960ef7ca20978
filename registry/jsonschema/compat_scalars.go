package jsonschema

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// compareString: maxLength, minLength, pattern.
func compareString(w, r *jsv.Schema) []issue {
	var out []issue
	if r.MaxLength != nil {
		switch {
		case w.MaxLength == nil:
			out = append(out, issue{path: "/maxLength", rule: "MAX_LENGTH_ADDED",
				detail: fmt.Sprintf("maxLength %d added", *r.MaxLength)})
		case *r.MaxLength < *w.MaxLength:
			out = append(out, issue{path: "/maxLength", rule: "MAX_LENGTH_DECREASED",
				detail: fmt.Sprintf("maxLength decreased from %d to %d", *w.MaxLength, *r.MaxLength)})
		}
	}
	if r.MinLength != nil && *r.MinLength > 0 {
		switch {
		case w.MinLength == nil || *w.MinLength == 0:
			out = append(out, issue{path: "/minLength", rule: "MIN_LENGTH_ADDED",
				detail: fmt.Sprintf("minLength %d added", *r.MinLength)})
		case *r.MinLength > *w.MinLength:
			out = append(out, issue{path: "/minLength", rule: "MIN_LENGTH_INCREASED",
				detail: fmt.Sprintf("minLength increased from %d to %d", *w.MinLength, *r.MinLength)})
		}
	}
	if r.Pattern != nil {
		switch {
		case w.Pattern == nil:
			out = append(out, issue{path: "/pattern", rule: "PATTERN_ADDED",
				detail: fmt.Sprintf("pattern %q added", r.Pattern.String())})
		case w.Pattern.String() != r.Pattern.String():
			out = append(out, issue{path: "/pattern", rule: "PATTERN_CHANGED",
				detail: fmt.Sprintf("pattern changed from %q to %q", w.Pattern.String(), r.Pattern.String())})
		}
	}
	return out
}

// compareNumber: a bound of the reader must follow from the writer's
// bounds (a writer's exclusiveMaximum 10 implies a reader's maximum 10);
// the reader's multipleOf must divide the writer's (an integer writer
// counts as multipleOf 1).
func compareNumber(w, r *jsv.Schema, wt typeSet) []issue {
	var out []issue
	bound := func(keyword string, limit, writerSame *big.Rat, implied bool, tighter string) {
		if limit == nil || implied {
			return
		}
		rule := strings.ToUpper(keywordRuleName[keyword])
		if writerSame == nil {
			out = append(out, issue{path: "/" + keyword, rule: rule + "_ADDED",
				detail: fmt.Sprintf("%s %s added", keyword, formatRat(limit))})
			return
		}
		out = append(out, issue{path: "/" + keyword, rule: rule + "_" + tighter,
			detail: fmt.Sprintf("%s %s from %s to %s", keyword, strings.ToLower(tighter), formatRat(writerSame), formatRat(limit))})
	}
	// Upper bounds: writer values are all <= (or <) the reader's limit.
	atMost := func(limit *big.Rat, exclusive bool) bool {
		if w.Maximum != nil && (w.Maximum.Cmp(limit) < 0 || (!exclusive && w.Maximum.Cmp(limit) == 0)) {
			return true
		}
		return w.ExclusiveMaximum != nil && w.ExclusiveMaximum.Cmp(limit) <= 0
	}
	atLeast := func(limit *big.Rat, exclusive bool) bool {
		if w.Minimum != nil && (w.Minimum.Cmp(limit) > 0 || (!exclusive && w.Minimum.Cmp(limit) == 0)) {
			return true
		}
		return w.ExclusiveMinimum != nil && w.ExclusiveMinimum.Cmp(limit) >= 0
	}
	if r.Maximum != nil {
		bound("maximum", r.Maximum, w.Maximum, atMost(r.Maximum, false), "DECREASED")
	}
	if r.ExclusiveMaximum != nil {
		bound("exclusiveMaximum", r.ExclusiveMaximum, w.ExclusiveMaximum, atMost(r.ExclusiveMaximum, true), "DECREASED")
	}
	if r.Minimum != nil {
		bound("minimum", r.Minimum, w.Minimum, atLeast(r.Minimum, false), "INCREASED")
	}
	if r.ExclusiveMinimum != nil {
		bound("exclusiveMinimum", r.ExclusiveMinimum, w.ExclusiveMinimum, atLeast(r.ExclusiveMinimum, true), "INCREASED")
	}
	if rm := r.MultipleOf; rm != nil && rm.Sign() > 0 {
		wm := w.MultipleOf
		if wm == nil && wt&^tInteger == 0 {
			wm = big.NewRat(1, 1) // the writer writes integers only
		}
		switch {
		case wm != nil && wm.Sign() > 0 && new(big.Rat).Quo(wm, rm).IsInt():
			// every multiple of the writer's is one of the reader's
		case w.MultipleOf == nil:
			out = append(out, issue{path: "/multipleOf", rule: "MULTIPLE_OF_ADDED",
				detail: fmt.Sprintf("multipleOf %s added", formatRat(rm))})
		case w.MultipleOf.Sign() > 0 && new(big.Rat).Quo(rm, w.MultipleOf).IsInt():
			out = append(out, issue{path: "/multipleOf", rule: "MULTIPLE_OF_EXPANDED",
				detail: fmt.Sprintf("multipleOf expanded from %s to %s", formatRat(w.MultipleOf), formatRat(rm))})
		default:
			out = append(out, issue{path: "/multipleOf", rule: "MULTIPLE_OF_CHANGED",
				detail: fmt.Sprintf("multipleOf changed from %s to %s, which does not divide it", formatRat(w.MultipleOf), formatRat(rm))})
		}
	}
	return out
}

var keywordRuleName = map[string]string{
	"maximum":          "maximum",
	"exclusiveMaximum": "exclusive_maximum",
	"minimum":          "minimum",
	"exclusiveMinimum": "exclusive_minimum",
}

func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// compareCount compares a maxX (upper) or minX (lower) count keyword.
func compareCount(keyword, rule string, w, r *int, upper bool) []issue {
	if r == nil || (!upper && *r == 0) {
		return nil
	}
	switch {
	case w == nil || (!upper && *w == 0):
		return []issue{{path: "/" + keyword, rule: rule + "_ADDED", detail: fmt.Sprintf("%s %d added", keyword, *r)}}
	case upper && *r < *w:
		return []issue{{path: "/" + keyword, rule: rule + "_DECREASED", detail: fmt.Sprintf("%s decreased from %d to %d", keyword, *w, *r)}}
	case !upper && *r > *w:
		return []issue{{path: "/" + keyword, rule: rule + "_INCREASED", detail: fmt.Sprintf("%s increased from %d to %d", keyword, *w, *r)}}
	}
	return nil
}
