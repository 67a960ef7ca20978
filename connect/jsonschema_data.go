package connect

// Connect ↔ JSON Schema, as Confluent's JsonSchemaData
// (io.confluent.connect.json) maps them, so that records written here read
// the same with Confluent's JsonSchemaConverter and the other way round.
// Pure: no registry, no I/O.
//
// Schemas, Connect → JSON Schema (draft 7 keywords, no $schema):
//
//	Connect                  JSON Schema
//	int8 … int64             {"type":"integer","connect.type":"int8"|…|"int64"}
//	float, double            {"type":"number","connect.type":"float32"|"float64"}
//	boolean, string          {"type":"boolean"}, {"type":"string"}
//	bytes                    {"type":"string","connect.type":"bytes"} (base64 values)
//	Decimal                  bytes with title org.apache.kafka.connect.data.Decimal and
//	                         connect.parameters {"scale":…}; with decimal.format=NUMERIC
//	                         {"type":"number","connect.type":"bytes",…} and number values
//	Date, Time, Timestamp    their int32/int64 form with the logical name as title
//	array                    {"type":"array","items":…}
//	map, string keys         {"type":"object","additionalProperties":…,"connect.type":"map"}
//	map, other keys          {"type":"array","items":{"type":"object","properties":
//	                         {"key":…,"value":…}},"connect.type":"map"}
//	struct                   {"type":"object","properties":{…}}, each property with
//	                         "connect.index" (its field's position); no "required";
//	                         "additionalProperties":false only with the setting
//	                         object.additional.properties=false (Confluent's)
//	optional T               {"oneOf":[{"type":"null"},T]} (connect.index on the oneOf)
//
// A schema's name is its "title", its doc the "description", its version
// "connect.version", its parameters "connect.parameters", its default
// "default", as JsonSchemaData writes them.
//
// JSON Schema → Connect reads those back and, for a schema another
// producer wrote without connect.* annotations: "integer" → int64,
// "number" → float64, "string" (or an enum, or a const) → string, an
// object with properties → a struct (fields in connect.index order, else
// in the order the properties are written; a property not in "required"
// is optional when no property carries connect.index), an object with
// only additionalProperties → a map with string keys, "type":["null",T]
// or oneOf/anyOf of null and one schema → optional T, a local $ref
// ("#/definitions/…", "#/$defs/…") → the schema it points at. What has
// no Connect form — a union of several non-null schemas, allOf, "not",
// a schema accepting anything ({} or true), a recursive $ref — is an
// ErrConversion naming the place.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Annotations Confluent's JsonSchemaData writes.
const (
	jsonConnectType       = "connect.type"
	jsonConnectIndex      = "connect.index"
	jsonConnectVersion    = "connect.version"
	jsonConnectParameters = "connect.parameters"
	jsonNamespace         = "io.confluent.connect.json"
)

// jsonSchemaText returns the JSON Schema (compact JSON text) Confluent's
// JsonSchemaData makes of a Connect schema.
func jsonSchemaText(s *Schema, o jsonSchemaOptions) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%w: JSON Schema needs a schema (a schemaless value cannot be written with JsonSchemaConverter)", ErrConversion)
	}
	tree, err := jsonSchemaOf(s, -1, false, o, 0)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrConversion, err)
	}
	return string(out), nil
}

// jsonSchemaOptions are the converter settings that change the schema:
// decimal.format=NUMERIC and object.additional.properties=false.
type jsonSchemaOptions struct {
	decimalNumeric bool
	closed         bool // structs with "additionalProperties":false
}

// maxSchemaDepth bounds how deeply schemas nest, both ways.
const maxSchemaDepth = 128

// jsonSchemaOf is one schema; index ≥ 0 is the field position written as
// connect.index.
func jsonSchemaOf(s *Schema, index int, ignoreOptional bool, o jsonSchemaOptions, depth int) (orderedObject, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: a field, item, key or value without a schema", ErrConversion)
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: schema nested deeper than %d", ErrConversion, maxSchemaDepth)
	}
	withIndex := func(obj orderedObject) orderedObject {
		if index >= 0 {
			obj = append(obj, objectMember{jsonConnectIndex, index})
		}
		return obj
	}
	if s.Optional && !ignoreOptional {
		inner, err := jsonSchemaOf(s, -1, true, o, depth+1)
		if err != nil {
			return nil, err
		}
		return withIndex(orderedObject{{"oneOf", []any{orderedObject{{"type", "null"}}, inner}}}), nil
	}
	obj := orderedObject{}
	set := func(k string, v any) { obj = append(obj, objectMember{k, v}) }
	switch s.Type {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		set("type", "integer")
		set(jsonConnectType, s.Type)
	case TypeFloat32:
		set("type", "number")
		set(jsonConnectType, "float32")
	case TypeFloat64:
		set("type", "number")
		set(jsonConnectType, "float64")
	case TypeBoolean:
		set("type", "boolean")
	case TypeString:
		set("type", "string")
	case TypeBytes:
		if s.Name == LogicalDecimal && o.decimalNumeric {
			set("type", "number")
		} else {
			set("type", "string")
		}
		set(jsonConnectType, TypeBytes)
	case TypeArray:
		items, err := jsonSchemaOf(s.Items, -1, false, o, depth+1)
		if err != nil {
			return nil, fmt.Errorf("array items: %w", err)
		}
		set("type", "array")
		set("items", items)
	case TypeMap:
		if s.KeyType == nil || s.ValueType == nil {
			return nil, fmt.Errorf("%w: map schema without keys or values", ErrConversion)
		}
		values, err := jsonSchemaOf(s.ValueType, -1, false, o, depth+1)
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		if s.KeyType.Type == TypeString && !s.KeyType.Optional {
			set("type", "object")
			set("additionalProperties", values)
		} else {
			keys, err := jsonSchemaOf(s.KeyType, 0, false, o, depth+1)
			if err != nil {
				return nil, fmt.Errorf("map keys: %w", err)
			}
			values, err = jsonSchemaOf(s.ValueType, 1, false, o, depth+1)
			if err != nil {
				return nil, fmt.Errorf("map values: %w", err)
			}
			set("type", "array")
			set("items", orderedObject{{"type", "object"},
				{"properties", orderedObject{{"key", keys}, {"value", values}}}})
		}
		set(jsonConnectType, TypeMap)
	case TypeStruct:
		props := make(orderedObject, 0, len(s.Fields))
		for i, f := range s.Fields {
			fs, err := jsonSchemaOf(f.Schema, i, false, o, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			props = append(props, objectMember{f.Name, fs})
		}
		set("type", "object")
		set("properties", props)
		if o.closed {
			set("additionalProperties", false)
		}
	default:
		return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
	}
	if s.Name != "" {
		set("title", s.Name)
	}
	if s.Version != 0 {
		set(jsonConnectVersion, s.Version)
	}
	if s.Doc != "" {
		set("description", s.Doc)
	}
	if len(s.Parameters) > 0 {
		params := orderedObject{}
		for _, k := range sortedMapKeys(s.Parameters) {
			if !strings.HasPrefix(k, jsonNamespace) {
				params = append(params, objectMember{k, s.Parameters[k]})
			}
		}
		if len(params) > 0 {
			set(jsonConnectParameters, params)
		}
	}
	if s.Default != nil {
		def, err := jsonSchemaValue(s, s.Default, o.decimalNumeric, depth)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		set("default", def)
	}
	return withIndex(obj), nil
}

// jsonSchemaValue is a Connect value as JsonSchemaData writes it: the
// JsonConverter's JSON but for maps with non-string keys, which are
// arrays of {"key":…,"value":…} objects.
func jsonSchemaValue(s *Schema, v any, decimalNumeric bool, depth int) (any, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: JSON Schema needs a schema", ErrConversion)
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d", ErrConversion, maxSchemaDepth)
	}
	if v == nil {
		if s.Default != nil {
			v = s.Default
		} else if !s.Optional {
			return nil, fmt.Errorf("%w: null value for a required %s schema", ErrConversion, s.Type)
		} else {
			return nil, nil
		}
	}
	switch s.Type {
	case TypeArray:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: array schema needs []any, got %T", ErrConversion, v)
		}
		out := make([]any, len(items))
		for i, item := range items {
			j, err := jsonSchemaValue(s.Items, item, decimalNumeric, depth+1)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = j
		}
		return out, nil
	case TypeMap:
		if s.KeyType == nil || s.ValueType == nil {
			return nil, fmt.Errorf("%w: map schema without keys or values", ErrConversion)
		}
		entries, err := mapEntries(v)
		if err != nil {
			return nil, err
		}
		objectForm := s.KeyType.Type == TypeString && !s.KeyType.Optional
		obj := make(orderedObject, 0, len(entries))
		pairs := make([]any, 0, len(entries))
		for _, e := range entries {
			val, err := jsonSchemaValue(s.ValueType, e.value, decimalNumeric, depth+1)
			if err != nil {
				return nil, fmt.Errorf("map value %v: %w", e.key, err)
			}
			if objectForm {
				k, ok := e.key.(string)
				if !ok {
					return nil, fmt.Errorf("%w: map key %v is %T, not a string", ErrConversion, e.key, e.key)
				}
				obj = append(obj, objectMember{k, val})
				continue
			}
			k, err := jsonSchemaValue(s.KeyType, e.key, decimalNumeric, depth+1)
			if err != nil {
				return nil, fmt.Errorf("map key %v: %w", e.key, err)
			}
			pairs = append(pairs, orderedObject{{"key", k}, {"value", val}})
		}
		if objectForm {
			return obj, nil
		}
		return pairs, nil
	case TypeStruct:
		st, ok := v.(*Struct)
		if !ok {
			return nil, fmt.Errorf("%w: struct schema needs *Struct, got %T", ErrConversion, v)
		}
		obj := make(orderedObject, 0, len(s.Fields))
		for i, f := range s.Fields {
			j, err := jsonSchemaValue(f.Schema, st.fieldValue(s, i), decimalNumeric, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			obj = append(obj, objectMember{f.Name, j})
		}
		return obj, nil
	}
	return valueToJSON(s, v, decimalNumeric)
}

type mapEntry struct {
	key, value any
}

// mapEntries are a Connect map's entries, in a deterministic order
// (string keys sorted; other keys by their printed form).
func mapEntries(v any) ([]mapEntry, error) {
	var out []mapEntry
	switch m := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(m) {
			out = append(out, mapEntry{k, m[k]})
		}
	case map[any]any:
		for k, val := range m {
			out = append(out, mapEntry{k, val})
		}
		sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i].key) < fmt.Sprint(out[j].key) })
	default:
		return nil, fmt.Errorf("%w: map schema needs map[string]any or map[any]any, got %T", ErrConversion, v)
	}
	return out, nil
}

// decodeOrderedJSON decodes one JSON value with objects as orderedObject
// (in document order) and numbers as json.Number, nesting bounded.
func decodeOrderedJSON(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	v, err := decodeOrderedValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeOrderedValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", maxSchemaDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := orderedObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrderedValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, objectMember{k, v})
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeOrderedValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// get is the value of key in o (the last one, if repeated).
func (o orderedObject) get(key string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// jsonSchemaReader maps one JSON Schema document to Connect.
type jsonSchemaReader struct {
	root any
	refs map[string]bool // $refs being followed, to refuse recursion
}

// connectSchemaFromJSON maps a JSON Schema's text to a Connect schema.
func connectSchemaFromJSON(text string) (*Schema, error) {
	root, err := decodeOrderedJSON([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%w: JSON schema: %v", ErrConversion, err)
	}
	r := &jsonSchemaReader{root: root, refs: map[string]bool{}}
	return r.schema(root, "#", false, 0)
}

func (r *jsonSchemaReader) fail(path, format string, args ...any) error {
	return fmt.Errorf("%w: JSON schema at %s: %s", ErrConversion, path, fmt.Sprintf(format, args...))
}

// schema maps the schema node at path; optional forces Optional.
func (r *jsonSchemaReader) schema(node any, path string, optional bool, depth int) (*Schema, error) {
	if depth > maxSchemaDepth {
		return nil, r.fail(path, "nested deeper than %d", maxSchemaDepth)
	}
	obj, ok := node.(orderedObject)
	if !ok {
		return nil, r.fail(path, "a schema accepting anything (%v) has no Connect form", node)
	}
	if ref, ok := obj.get("$ref"); ok {
		return r.ref(obj, ref, path, optional, depth)
	}
	for _, kw := range []string{"allOf", "not", "if"} {
		if _, ok := obj.get(kw); ok {
			return nil, r.fail(path, "%q has no Connect form", kw)
		}
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if branches, ok := obj.get(kw); ok {
			return r.union(branches, path+"/"+kw, optional, depth)
		}
	}
	typ, nullable, err := r.typeOf(obj, path)
	if err != nil {
		return nil, err
	}
	s := &Schema{Optional: optional || nullable}
	connectType, _ := obj.get(jsonConnectType)
	ct, _ := connectType.(string)
	switch typ {
	case "integer":
		s.Type = TypeInt64
		switch ct {
		case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
			s.Type = ct
		}
	case "number":
		s.Type = TypeFloat64
		switch ct {
		case "float32":
			s.Type = TypeFloat32
		case TypeBytes, TypeInt8, TypeInt16, TypeInt32, TypeInt64:
			s.Type = ct
		}
	case "string":
		s.Type = TypeString
		if ct == TypeBytes {
			s.Type = TypeBytes
		}
	case "boolean":
		s.Type = TypeBoolean
	case "array":
		items, ok := obj.get("items")
		if !ok {
			return nil, r.fail(path, "an array without items has no Connect form")
		}
		itemsObj, _ := items.(orderedObject)
		if ct == TypeMap && itemsObj != nil {
			props, _ := itemsObj.get("properties")
			propsObj, _ := props.(orderedObject)
			k, okK := propsObj.get("key")
			v, okV := propsObj.get("value")
			if okK && okV {
				s.Type = TypeMap
				if s.KeyType, err = r.schema(k, path+"/items/properties/key", false, depth+1); err != nil {
					return nil, err
				}
				if s.ValueType, err = r.schema(v, path+"/items/properties/value", false, depth+1); err != nil {
					return nil, err
				}
				break
			}
		}
		s.Type = TypeArray
		if s.Items, err = r.schema(items, path+"/items", false, depth+1); err != nil {
			return nil, err
		}
	case "object":
		props, hasProps := obj.get("properties")
		extra, hasExtra := obj.get("additionalProperties")
		if _, isSchema := extra.(orderedObject); hasExtra && isSchema && (ct == TypeMap || !hasProps) {
			s.Type = TypeMap
			s.KeyType = &Schema{Type: TypeString}
			if s.ValueType, err = r.schema(extra, path+"/additionalProperties", false, depth+1); err != nil {
				return nil, err
			}
			break
		}
		s.Type = TypeStruct
		propsObj, _ := props.(orderedObject)
		if err := r.fields(s, obj, propsObj, path+"/properties", depth); err != nil {
			return nil, err
		}
	default:
		return nil, r.fail(path, "type %q has no Connect form", typ)
	}
	return r.metadata(s, obj, path)
}

// typeOf is the schema's single type: "type" as a string, or a list of
// one type and maybe "null" (nullable), or implied by properties or
// additionalProperties (object) or enum/const (string).
func (r *jsonSchemaReader) typeOf(obj orderedObject, path string) (typ string, nullable bool, err error) {
	t, ok := obj.get("type")
	if !ok {
		for _, implied := range [][2]string{{"properties", "object"}, {"additionalProperties", "object"}, {"enum", "string"}, {"const", "string"}} {
			if _, ok := obj.get(implied[0]); ok {
				return implied[1], false, nil
			}
		}
		return "", false, r.fail(path, "a schema without a type has no Connect form")
	}
	switch x := t.(type) {
	case string:
		return x, false, nil
	case []any:
		var others []string
		for _, e := range x {
			name, _ := e.(string)
			if name == "null" {
				nullable = true
			} else {
				others = append(others, name)
			}
		}
		if len(others) == 1 {
			return others[0], nullable, nil
		}
	}
	return "", false, r.fail(path, "type %v: only one type (and null) has a Connect form", t)
}

// union maps oneOf/anyOf: null and one schema is that schema, optional.
func (r *jsonSchemaReader) union(branches any, path string, optional bool, depth int) (*Schema, error) {
	list, ok := branches.([]any)
	if !ok {
		return nil, r.fail(path, "not an array")
	}
	var others []int
	for i, b := range list {
		if obj, ok := b.(orderedObject); ok {
			if t, _ := obj.get("type"); t == "null" && len(obj) == 1 {
				optional = true
				continue
			}
		}
		others = append(others, i)
	}
	if len(others) != 1 {
		return nil, r.fail(path, "a union of %d non-null schemas has no Connect form", len(others))
	}
	return r.schema(list[others[0]], path+"/"+strconv.Itoa(others[0]), optional, depth+1)
}

// ref follows a local $ref, refusing recursion.
func (r *jsonSchemaReader) ref(obj orderedObject, ref any, path string, optional bool, depth int) (*Schema, error) {
	target, _ := ref.(string)
	if !strings.HasPrefix(target, "#") {
		return nil, r.fail(path, "$ref %q: only references inside the schema are followed", target)
	}
	if r.refs[target] {
		return nil, r.fail(path, "$ref %q is recursive, which has no Connect form", target)
	}
	node := r.root
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(target, "#"), "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		o, ok := node.(orderedObject)
		if !ok {
			return nil, r.fail(path, "$ref %q points nowhere", target)
		}
		if node, ok = o.get(part); !ok {
			return nil, r.fail(path, "$ref %q points nowhere", target)
		}
	}
	r.refs[target] = true
	defer delete(r.refs, target)
	s, err := r.schema(node, target, optional, depth+1)
	if err != nil {
		return nil, err
	}
	if title, ok := obj.get("title"); ok && s.Name == "" {
		s.Name, _ = title.(string)
	}
	return s, nil
}

// fields reads a struct's properties, in connect.index order when they
// carry it, else in document order.
func (r *jsonSchemaReader) fields(s *Schema, obj, props orderedObject, path string, depth int) error {
	required := map[string]bool{}
	if req, ok := obj.get("required"); ok {
		list, _ := req.([]any)
		for _, name := range list {
			if n, ok := name.(string); ok {
				required[n] = true
			}
		}
	}
	type indexed struct {
		index int
		name  string
		node  any
	}
	annotated := false
	list := make([]indexed, 0, len(props))
	seen := map[string]bool{}
	for i, p := range props {
		if seen[p.Key] {
			return r.fail(path, "property %q appears twice", p.Key)
		}
		seen[p.Key] = true
		idx := i
		if po, ok := p.Value.(orderedObject); ok {
			if n, ok := po.get(jsonConnectIndex); ok {
				if num, ok := n.(json.Number); ok {
					if v, err := num.Int64(); err == nil && v >= 0 && v < 1<<20 {
						idx, annotated = int(v), true
					}
				}
			}
		}
		list = append(list, indexed{idx, p.Key, p.Value})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].index < list[j].index })
	s.Fields = make([]Field, 0, len(list))
	for i, p := range list {
		optional := !annotated && !required[p.name]
		fs, err := r.schema(p.node, path+"/"+p.name, optional, depth+1)
		if err != nil {
			return err
		}
		s.Fields = append(s.Fields, Field{Name: p.name, Index: i, Schema: fs})
	}
	return nil
}

// metadata reads title, description, connect.version, connect.parameters
// and default.
func (r *jsonSchemaReader) metadata(s *Schema, obj orderedObject, path string) (*Schema, error) {
	if t, ok := obj.get("title"); ok {
		s.Name, _ = t.(string)
	}
	if d, ok := obj.get("description"); ok {
		s.Doc, _ = d.(string)
	}
	if v, ok := obj.get(jsonConnectVersion); ok {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil && i > 0 && i < 1<<31 {
				s.Version = int(i)
			}
		}
	}
	if p, ok := obj.get(jsonConnectParameters); ok {
		if po, ok := p.(orderedObject); ok && len(po) > 0 {
			s.Parameters = map[string]string{}
			for _, m := range po {
				if str, ok := m.Value.(string); ok {
					s.Parameters[m.Key] = str
				}
			}
		}
	}
	if s.Name == LogicalDecimal {
		if _, err := decimalScale(s); err != nil {
			return nil, r.fail(path, "Decimal without a valid scale parameter")
		}
	}
	if def, ok := obj.get("default"); ok && def != nil {
		v, err := connectValueFromJSONSchema(s, plainJSON(def), 0)
		if err != nil {
			return nil, r.fail(path, "default: %v", err)
		}
		s.Default = v
	}
	return s, nil
}

// plainJSON turns orderedObject back into map[string]any, the form
// encoding/json gives.
func plainJSON(v any) any {
	switch x := v.(type) {
	case orderedObject:
		m := make(map[string]any, len(x))
		for _, e := range x {
			m[e.Key] = plainJSON(e.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

// connectValueFromJSONSchema reads a decoded JSON value (numbers as
// json.Number) with its Connect schema.
func connectValueFromJSONSchema(s *Schema, raw any, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d", ErrConversion, maxSchemaDepth)
	}
	if raw == nil {
		return valueFromJSON(s, nil)
	}
	switch s.Type {
	case TypeArray:
		items, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: array needs a JSON array, got %T", ErrConversion, raw)
		}
		out := make([]any, len(items))
		for i, item := range items {
			v, err := connectValueFromJSONSchema(s.Items, item, depth+1)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	case TypeMap:
		if obj, ok := raw.(map[string]any); ok && s.KeyType.Type == TypeString {
			out := make(map[string]any, len(obj))
			for k, item := range obj {
				v, err := connectValueFromJSONSchema(s.ValueType, item, depth+1)
				if err != nil {
					return nil, fmt.Errorf("map value %q: %w", k, err)
				}
				out[k] = v
			}
			return out, nil
		}
		entries, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: map needs an object or an array of {key, value} objects, got %T", ErrConversion, raw)
		}
		out := make(map[any]any, len(entries))
		for _, e := range entries {
			kv, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: map entry is not a {key, value} object", ErrConversion)
			}
			k, err := connectValueFromJSONSchema(s.KeyType, kv["key"], depth+1)
			if err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			if !comparableKey(k) {
				return nil, fmt.Errorf("%w: map key of type %s cannot be a Go map key", ErrConversion, s.KeyType.Type)
			}
			v, err := connectValueFromJSONSchema(s.ValueType, kv["value"], depth+1)
			if err != nil {
				return nil, fmt.Errorf("map value: %w", err)
			}
			out[k] = v
		}
		return out, nil
	case TypeStruct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: struct needs a JSON object, got %T", ErrConversion, raw)
		}
		st := &Struct{Schema: s, Values: make([]any, len(s.Fields))}
		for i, f := range s.Fields {
			v, err := connectValueFromJSONSchema(f.Schema, obj[f.Name], depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			st.Values[i] = v
		}
		return st, nil
	}
	return valueFromJSON(s, raw)
}
