// Package avro is the registry's Avro format (schema.Format), built on
// github.com/hamba/avro/v2.
//
// Parse parses the resolved references depth-first into a fresh
// avro.SchemaCache, so that the schema can name the types they define,
// then the schema itself; a primitive ("string") is a schema too. The
// text must be JSON: Avro's Java parser, which Confluent's registry uses,
// refuses anything else.
//
// Canonical is the text as given without insignificant whitespace (key
// order kept). Normalized is a deterministic rewrite that keeps every
// attribute that matters — defaults, logical types, aliases, docs and
// custom properties — with names made full, namespaces folded into them,
// `{"type":"int"}` written "int", keys in one fixed order and custom
// properties sorted. It is not Avro's Parsing Canonical Form, which drops
// defaults and so would make schemas that differ in them equal. Named
// types a reference defines stay names.
//
// Compatible asks hamba's SchemaCompatibility whether the reader reads
// what the writer wrote; its error, which names the field or type at
// fault, is the message.
package avro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/strata-streaming/strata/registry/schema"
)

// New returns the Avro format.
func New() schema.Format { return format{} }

type format struct{}

type parsed struct {
	schema     avro.Schema
	canonical  string
	normalized string
}

func (p *parsed) Canonical() string  { return p.canonical }
func (p *parsed) Normalized() string { return p.normalized }

// Schema is the hamba schema of a schema this format parsed, with the
// types of its references resolved (for converters and serializers); nil
// for one parsed by another format.
func Schema(p schema.Parsed) avro.Schema {
	if a, ok := p.(*parsed); ok {
		return a.schema
	}
	return nil
}

func (format) Type() schema.Type { return schema.Avro }

func (format) Parse(text string, refs []schema.Resolved) (schema.Parsed, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(text)); err != nil {
		return nil, fmt.Errorf("avro: schema is not JSON: %w", err)
	}
	cache := &avro.SchemaCache{}
	done := map[string]bool{}
	if err := parseReferences(refs, cache, done, 0); err != nil {
		return nil, err
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, err
	}
	normalized, err := normalize(text)
	if err != nil {
		return nil, err
	}
	return &parsed{schema: s, canonical: compact.String(), normalized: normalized}, nil
}

// maxReferenceDepth bounds the reference tree a schema may have.
const maxReferenceDepth = 64

// parseReferences adds the types refs define to cache, each one's own
// references first. A reference reached twice (a diamond) is parsed once.
func parseReferences(refs []schema.Resolved, cache *avro.SchemaCache, done map[string]bool, depth int) error {
	if depth > maxReferenceDepth {
		return fmt.Errorf("avro: references nested deeper than %d", maxReferenceDepth)
	}
	for _, r := range refs {
		if done[r.Name] {
			continue
		}
		if err := parseReferences(r.References, cache, done, depth+1); err != nil {
			return err
		}
		if _, err := avro.ParseWithCache(r.Schema, "", cache); err != nil {
			return fmt.Errorf("avro: reference %q: %w", r.Name, err)
		}
		done[r.Name] = true
	}
	return nil
}

func (format) Compatible(reader, writer schema.Parsed) []string {
	r, w := Schema(reader), Schema(writer)
	if r == nil || w == nil {
		return []string{"avro: both schemas must be Avro"}
	}
	// A fresh checker each time: hamba caches results by the schemas'
	// Parsing Canonical Form, which ignores defaults, so a shared one
	// would answer for an older schema that differs only in them.
	if err := avro.NewSchemaCompatibility().Compatible(r, w); err != nil {
		return []string{strings.TrimPrefix(err.Error(), "avro: ")}
	}
	return nil
}

// normalize rewrites a schema that hamba accepted into the deterministic
// form Normalized describes.
func normalize(text string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("avro: schema is not JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := writeType(&buf, doc, ""); err != nil {
		return "", err
	}
	return buf.String(), nil
}

var primitives = map[string]bool{
	"null": true, "boolean": true, "int": true, "long": true,
	"float": true, "double": true, "bytes": true, "string": true,
}

// keyOrder is the order of the attributes Avro defines, in every kind of
// object; anything else (custom properties) follows, sorted.
var keyOrder = []string{"name", "type", "fields", "symbols", "items", "values", "size",
	"logicalType", "precision", "scale", "default", "order", "aliases", "doc"}

var knownKey = func() map[string]int {
	m := map[string]int{}
	for i, k := range keyOrder {
		m[k] = i
	}
	return m
}()

// fullName resolves a type name against the enclosing namespace.
func fullName(name, namespace string) string {
	if strings.Contains(name, ".") || namespace == "" || primitives[name] {
		return name
	}
	return namespace + "." + name
}

// member is one key of a normalized object and how to write its value.
type member struct {
	key   string
	write func(*bytes.Buffer) error
}

func writeType(buf *bytes.Buffer, v any, namespace string) error {
	switch t := v.(type) {
	case string:
		return writeJSON(buf, fullName(t, namespace))
	case []any:
		buf.WriteByte('[')
		for i, branch := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeType(buf, branch, namespace); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case map[string]any:
		return writeObject(buf, t, namespace)
	}
	return fmt.Errorf("avro: %v is not a schema", v)
}

func writeObject(buf *bytes.Buffer, m map[string]any, namespace string) error {
	typ, ok := m["type"].(string)
	if !ok {
		// {"type": [...]} or {"type": {...}}: hamba reads the inner type.
		return writeType(buf, m["type"], namespace)
	}
	var members []member
	plain := func(key string) {
		if v, ok := m[key]; ok {
			members = append(members, member{key, func(b *bytes.Buffer) error { return writeJSON(b, v) }})
		}
	}
	inner := namespace
	switch typ {
	case "record", "error", "enum", "fixed":
		name, _ := m["name"].(string)
		if name == "" {
			return fmt.Errorf("avro: a %s needs a name", typ)
		}
		ns := namespace
		if explicit, ok := m["namespace"].(string); ok {
			ns = explicit
		}
		full := fullName(name, ns)
		if i := strings.LastIndexByte(full, '.'); i >= 0 {
			inner = full[:i]
		} else {
			inner = ""
		}
		members = append(members, member{"name", func(b *bytes.Buffer) error { return writeJSON(b, full) }})
		if aliases, ok := m["aliases"].([]any); ok {
			full := make([]string, 0, len(aliases))
			for _, a := range aliases {
				s, _ := a.(string)
				full = append(full, fullName(s, inner))
			}
			members = append(members, member{"aliases", func(b *bytes.Buffer) error { return writeJSON(b, full) }})
		}
	default:
		if !primitives[typ] && typ != "array" && typ != "map" {
			// A named type written as {"type":"Name"}.
			return writeType(buf, typ, namespace)
		}
		if len(m) == 1 {
			return writeJSON(buf, typ)
		}
	}
	members = append(members, member{"type", func(b *bytes.Buffer) error { return writeJSON(b, typ) }})
	switch typ {
	case "record", "error":
		fields, _ := m["fields"].([]any)
		members = append(members, member{"fields", func(b *bytes.Buffer) error { return writeFields(b, fields, inner) }})
	case "array":
		if m["items"] == nil {
			return errors.New("avro: an array needs items")
		}
		members = append(members, member{"items", func(b *bytes.Buffer) error { return writeType(b, m["items"], namespace) }})
	case "map":
		if m["values"] == nil {
			return errors.New("avro: a map needs values")
		}
		members = append(members, member{"values", func(b *bytes.Buffer) error { return writeType(b, m["values"], namespace) }})
	}
	for _, k := range []string{"symbols", "size", "logicalType", "precision", "scale", "default", "doc"} {
		plain(k)
	}
	for k, v := range m {
		if _, known := knownKey[k]; known || k == "namespace" {
			continue
		}
		members = append(members, member{k, func(b *bytes.Buffer) error { return writeJSON(b, v) }})
	}
	return writeMembers(buf, members)
}

func writeFields(buf *bytes.Buffer, fields []any, namespace string) error {
	buf.WriteByte('[')
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		m, ok := f.(map[string]any)
		if !ok {
			return fmt.Errorf("avro: field %v is not an object", f)
		}
		// hamba matches attribute names ignoring case; Avro does not.
		if name, _ := m["name"].(string); name == "" || m["type"] == nil {
			return fmt.Errorf("avro: field %v needs a name and a type", f)
		}
		var members []member
		for k, v := range m {
			switch k {
			case "type":
				members = append(members, member{k, func(b *bytes.Buffer) error { return writeType(b, v, namespace) }})
			case "order":
				if v == "ascending" {
					continue
				}
				members = append(members, member{k, func(b *bytes.Buffer) error { return writeJSON(b, v) }})
			default:
				members = append(members, member{k, func(b *bytes.Buffer) error { return writeJSON(b, v) }})
			}
		}
		if err := writeMembers(buf, members); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeMembers writes an object with the known keys in keyOrder, then the
// others sorted.
func writeMembers(buf *bytes.Buffer, members []member) error {
	sort.Slice(members, func(i, j int) bool {
		a, aKnown := knownKey[members[i].key]
		b, bKnown := knownKey[members[j].key]
		switch {
		case aKnown && bKnown:
			return a < b
		case aKnown != bKnown:
			return aKnown
		}
		return members[i].key < members[j].key
	})
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeJSON(buf, m.key); err != nil {
			return err
		}
		buf.WriteByte(':')
		if err := m.write(buf); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// writeJSON writes v compactly, map keys sorted, numbers as written, and
// without HTML escaping.
func writeJSON(buf *bytes.Buffer, v any) error {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return errors.Join(errors.New("avro: normalizing"), err)
	}
	buf.Write(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
	return nil
}
