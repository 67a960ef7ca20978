// Package jsonschema is the JSON Schema format (schema.JSON) of Strata's
// Confluent-compatible schema registry: it parses a schema with the
// schemas it references, gives its canonical and normalized texts, says
// whether a reader schema reads what a writer schema wrote, and validates
// JSON documents against a parsed schema.
//
//	format := jsonschema.New()                 // a schema.Format
//	p, err := format.Parse(text, refs)         // refs: []schema.Resolved
//	msgs := format.Compatible(reader, writer)  // none: compatible
//	err = jsonschema.Validate(p, doc)          // doc: a decoded JSON value
//
// Compiling and validating is the job of
// github.com/santhosh-tekuri/jsonschema/v6 (the library DESIGN.md chose);
// this package adds the registry's rules around it.
//
// # Parsing
//
// The text must be one JSON value, an object or a boolean, at most 8 MiB,
// nested at most 256 levels. Repeated keys are accepted as Jackson (and
// so Confluent) accepts them: the last value wins.
//
// The draft is the one "$schema" names — draft 4, 6, 7, 2019-09 or
// 2020-12 — and draft 7 when "$schema" is absent, as in Confluent. The
// schema must be valid against its draft's metaschema; errors say what is
// wrong and where ("#/properties/age/type: value must be one of …") and
// wrap ErrMalformedJSON, ErrInvalidSchema or ErrUnresolvedReference.
//
// References: each schema.Resolved (recursively) is added to the compiler
// as a resource under its Name resolved against the schema's "$id" (or a
// fixed internal base when it has none, so "address.json" matches a $ref
// "address.json"), under its Name resolved against the schema that
// references it, and under its own absolute "$id". A $ref (or a
// "$schema") naming anything else fails with ErrUnresolvedReference
// naming it: the compiler's loader refuses every URL it was not given, so
// nothing is ever fetched from the network or read from a file. Only the
// draft metaschemas, built into the library, are known without being
// given. A reference that no $ref reaches is not compiled.
//
// Regular expressions ("pattern", "patternProperties") are Go's RE2, not
// ECMA-262 as the specification asks: a pattern with lookaround or
// backreferences is rejected as invalid (Confluent, on Java, accepts
// them). "format" is asserted as the library does by default: in draft 7
// and earlier, not in 2019-09 and 2020-12.
//
// # Canonical and normalized text
//
// Canonical is the schema written back compactly with the keys of each
// object in their original order — Confluent's canonical string for JSON
// schemas, which is Jackson's compact output: spacing differences vanish,
// key order stays. Numbers are written exactly as they were (Jackson
// would rewrite 1.0e2 as 100.0); strings are escaped minimally: '"', '\\'
// and the control characters (\b \t \n \f \r, or \u00XX), nothing else.
//
// Normalized is Canonical with the keys of every object sorted (by the
// bytes of their UTF-8 text). Arrays keep their order — "required" and
// "enum" included: the order of an array is data, and Confluent does not
// sort them either.
//
// # Compatibility
//
// Compatible(reader, writer) answers Confluent's question with writer in
// the place of its "original" (previous) schema and reader in that of its
// "update": can a consumer using reader read every document valid against
// writer? Each incompatibility is one message
//
//	#/properties/age: type narrowed from [integer string] to [integer] (TYPE_NARROWED)
//
// a JSON pointer to the place in the reader (through the data: $refs are
// followed and do not appear in it), what changed, and the name of
// Confluent's rule (its Difference.Type) or, where Confluent has none,
// ours. Changes Confluent deems compatible give no message.
//
// As in Confluent, an object schema is an open content model unless it
// says otherwise: without additionalProperties (or, in 2019-09 and later,
// unevaluatedProperties) false or a schema, a writer may have written any
// property with any value; with a schema there, it is partially open; with
// false, closed. Properties matching a patternProperties count as
// partially open too. Arrays with a tuple ("items" as an array, or
// "prefixItems") follow the same rules with additionalItems (or, from
// 2020-12, "items").
//
// The rules, compared recursively through properties, items, prefixItems,
// additionalItems, additionalProperties, the patternProperties both
// schemas have, allOf, anyOf, oneOf and $ref (local and into references;
// a pair of schemas met again while being compared is taken as compatible,
// which ends recursive schemas):
//
//   - Types. TYPE_NARROWED when the reader drops a type the writer wrote
//     (number to integer included), TYPE_CHANGED when nothing is left;
//     more types, or integer to number (TYPE_EXTENDED), are compatible.
//     The reader rejecting everything (false) is TYPE_CHANGED; a writer
//     that writes nothing (false) is compatible with anything.
//   - Properties. PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (unless the new
//     property accepts anything: PROPERTY_WITH_EMPTY_SCHEMA_ADDED_…);
//     OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL and
//     REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL are
//     compatible, REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is not;
//     PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL is compatible,
//     PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL is not (unless the
//     writer's property was false); PROPERTY_ADDED/REMOVED_IS_COVERED /
//     _NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL compare the property
//     with what the other side's patternProperties or
//     additionalProperties accepts for it.
//   - Required. REQUIRED_ATTRIBUTE_ADDED is incompatible, unless the
//     property has a default (REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED);
//     REQUIRED_ATTRIBUTE_REMOVED is compatible. Unlike Confluent (whose
//     own examples call it compatible), a name the reader requires is
//     checked even when the schemas do not both define it as a property:
//     a writer that need not write it is not read by a reader requiring it.
//   - Dependencies ("dependencies", "dependentRequired",
//     "dependentSchemas"): DEPENDENCY_ARRAY_ADDED, _EXTENDED and _CHANGED
//     (the reader requires more when a property is present) and
//     DEPENDENCY_SCHEMA_ADDED are incompatible; _NARROWED and removals
//     compatible; two dependency schemas are compared.
//   - not. A reader's "not" must exclude nothing the writer writes: with
//     both, the writer's "not" schema must read the reader's, else
//     NOT_TYPE_EXTENDED (NOT_TYPE_NARROWED is compatible); a "not" added
//     where the writer had none is TYPE_CHANGED.
//   - additionalProperties (unevaluatedProperties alike, with
//     UNEVALUATED_PROPERTIES_… names): closing the content model
//     (ADDITIONAL_PROPERTIES_REMOVED) and constraining additional
//     properties the writer left free (ADDITIONAL_PROPERTIES_NARROWED)
//     are incompatible; opening it (ADDITIONAL_PROPERTIES_ADDED) or
//     freeing them (ADDITIONAL_PROPERTIES_EXTENDED) is compatible; two
//     schemas are compared.
//   - Enums (const counts as an enum of one value). ENUM_ARRAY_NARROWED
//     when the reader's enum lacks writer values, ENUM_ARRAY_CHANGED when
//     it also has others; ENUM_ARRAY_EXTENDED is compatible; values
//     compare as JSON (1 equals 1.0). An enum added where the writer had
//     none is incompatible (we say ENUM_ARRAY_NARROWED; Confluent, which
//     models {"type":…,"enum":…} as an allOf, PRODUCT_TYPE_EXTENDED); an
//     enum removed is compatible. A writer that lists its values is
//     compatible with any reader that validates each of them (checked by
//     validating them), whatever else differs; a value the reader rejects
//     otherwise is TYPE_CHANGED.
//   - Strings. MAX_LENGTH_ADDED/DECREASED, MIN_LENGTH_ADDED/INCREASED,
//     PATTERN_ADDED/CHANGED are incompatible; increased, decreased or
//     removed the other way, compatible. (Patterns compare as text.)
//   - Numbers. MAXIMUM_, MINIMUM_, EXCLUSIVE_MAXIMUM_ and
//     EXCLUSIVE_MINIMUM_ADDED and tightened (…_DECREASED for maxima,
//     …_INCREASED for minima) are incompatible, unless the writer's
//     bounds imply the reader's (a writer's exclusiveMaximum 10 satisfies
//     a reader's maximum 10). MULTIPLE_OF_ADDED, MULTIPLE_OF_EXPANDED
//     (the writer's divides the reader's) and MULTIPLE_OF_CHANGED are
//     incompatible; a reader's multipleOf that divides the writer's
//     (MULTIPLE_OF_REDUCED; an integer writer counts as multipleOf 1) or
//     none is compatible. Bounds compare exactly (as rationals).
//   - Arrays. The items schemas are compared; an items schema added where
//     the writer had none is SCHEMA_ADDED (incompatible), removed
//     SCHEMA_REMOVED (compatible). Tuples position by position:
//     ITEM_ADDED_TO_OPEN_CONTENT_MODEL and
//     ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL are incompatible,
//     ITEM_ADDED_TO_CLOSED_CONTENT_MODEL and
//     ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL compatible, the partially open
//     cases compared as for properties; ADDITIONAL_ITEMS_REMOVED and
//     _NARROWED incompatible. Where nothing else says what follows the
//     tuple, unevaluatedItems does. additionalItems is compared only where
//     it applies, beside a tuple (Confluent compares it alone too).
//     MAX_ITEMS_ADDED/DECREASED, MIN_ITEMS_ADDED/INCREASED,
//     UNIQUE_ITEMS_ADDED, MAX_CONTAINS_ADDED/DECREASED and
//     MIN_CONTAINS_ADDED/INCREASED are incompatible; a "contains" added is
//     SCHEMA_ADDED, two are compared. A draft 7 tuple and the same 2020-12
//     prefixItems compare equal.
//   - Objects' counts. MAX_PROPERTIES_ADDED/DECREASED and
//     MIN_PROPERTIES_ADDED/INCREASED are incompatible.
//   - anyOf and oneOf, as Confluent: the reader may have more
//     subschemas (SUM_TYPE_EXTENDED) but not fewer (SUM_TYPE_NARROWED);
//     each writer subschema must be matched to a distinct compatible
//     reader subschema, found by maximum bipartite matching, else
//     COMBINED_TYPE_SUBSCHEMAS_CHANGED (with why, for each unmatched one,
//     against the reader's subschema at its place). oneOf to anyOf is
//     compatible (COMBINED_TYPE_EXTENDED), anyOf to oneOf is not
//     (COMBINED_TYPE_CHANGED) unless the writer had one subschema. A
//     plain writer is compatible with a reader's anyOf or oneOf when one
//     alternative reads it (else TYPE_CHANGED, with the closest
//     alternative's reasons); a writer's anyOf or oneOf with a plain
//     reader when the reader reads every alternative (Confluent says
//     TYPE_CHANGED to both unless a single subschema).
//   - allOf. A schema is taken as the list of its parts: its own keywords,
//     what its $ref names, each allOf subschema (flattened), each anyOf
//     and oneOf. Every reader part must follow from one writer part,
//     compared one to one as Confluent matches allOf subschemas; so the
//     reader may have fewer (PRODUCT_TYPE_NARROWED) and a reader with more
//     that do not follow is PRODUCT_TYPE_EXTENDED. Keywords beside a $ref
//     (2019-09 and later) are one more part.
//
// Further, where Confluent looks at the kind of schema rather than its
// "type": a writer schema without "type" whose keywords all apply to one
// kind of value (only object keywords, say) is taken to write that kind,
// as Confluent models it; a reader without "type" accepts every type.
// Annotations (title, description, default, examples, $comment, …) and
// ID changes never make schemas incompatible.
//
// Knowingly left out — changes there are not detected, so a pair differing
// only there is reported compatible: if/then/else, propertyNames, format,
// contentEncoding/contentMediaType/contentSchema, patternProperties added
// or removed (only those both schemas have are compared), $dynamicRef and
// $recursiveRef beyond their static target, unevaluatedProperties and
// unevaluatedItems as evaluated through subschemas (they are read at their
// own level only), and Confluent's RESERVED_PROPERTY_… checks, which read
// schema metadata that the Format interface does not pass. A reader's oneOf is not checked for alternatives
// that overlap (a value matching two fails a oneOf), and a reader part
// implied only by several writer parts together is not recognized;
// Confluent does neither.
//
// Limits: comparisons follow subschemas at most 128 levels deep and make
// at most 200,000 comparisons in all; past either they stop and report
// TOO_DEEP or TOO_COMPLEX, which makes the schemas incompatible rather
// than guessed compatible. At most 100 messages are returned.
//
// # Validation
//
// Validate checks a decoded JSON value (map[string]any, []any, string,
// float64 or json.Number, bool, nil) against a parsed schema, with the
// same drafts, references and format assertions as Parse; a mismatch is a
// *DocumentError listing up to ten problems as "<JSON pointer>: <what>".
package jsonschema
