package connect

import (
	"encoding/json"
	"fmt"
	"sort"
)

// schemaJSON is Kafka Connect's JSON form of a schema, as the JsonConverter
// writes it in the "schema" half of its envelope.
type schemaJSON struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name,omitempty"`
	Version    int               `json:"version,omitempty"`
	Doc        string            `json:"doc,omitempty"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Default    json.RawMessage   `json:"default,omitempty"`
	Fields     []schemaFieldJSON `json:"fields,omitempty"`
	Items      *schemaJSON       `json:"items,omitempty"`
	Keys       *schemaJSON       `json:"keys,omitempty"`
	Values     *schemaJSON       `json:"values,omitempty"`
}

// schemaFieldJSON is one struct field: the field's schema with its name
// under "field".
type schemaFieldJSON struct {
	Field string `json:"field"`
	schemaJSON
}

// MarshalJSON keeps "field" first, then the schema's own members, in one
// flat object as Kafka writes it.
func (f schemaFieldJSON) MarshalJSON() ([]byte, error) {
	inner, err := json.Marshal(f.schemaJSON)
	if err != nil {
		return nil, err
	}
	name, _ := json.Marshal(f.Field)
	out := append([]byte(`{"field":`), name...)
	if len(inner) > 2 {
		out = append(out, ',')
		out = append(out, inner[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// UnmarshalJSON reads the flat form MarshalJSON writes.
func (f *schemaFieldJSON) UnmarshalJSON(data []byte) error {
	var name struct {
		Field string `json:"field"`
	}
	if err := json.Unmarshal(data, &name); err != nil {
		return err
	}
	f.Field = name.Field
	return json.Unmarshal(data, &f.schemaJSON)
}

// encodeSchema turns a Schema into its JSON form.
func encodeSchema(s *Schema, decimalNumeric bool) (*schemaJSON, error) {
	if s == nil {
		return nil, nil
	}
	out := &schemaJSON{Type: s.Type, Optional: s.Optional, Name: s.Name, Version: s.Version, Doc: s.Doc}
	if len(s.Parameters) > 0 {
		out.Parameters = s.Parameters
	}
	if s.Default != nil {
		v, err := valueToJSON(s, s.Default, decimalNumeric)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out.Default = raw
	}
	switch s.Type {
	case TypeStruct:
		for _, f := range s.Fields {
			fs, err := encodeSchema(f.Schema, decimalNumeric)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			if fs == nil {
				return nil, fmt.Errorf("field %s: no schema", f.Name)
			}
			out.Fields = append(out.Fields, schemaFieldJSON{Field: f.Name, schemaJSON: *fs})
		}
		if out.Fields == nil {
			out.Fields = []schemaFieldJSON{}
		}
	case TypeArray:
		items, err := encodeSchema(s.Items, decimalNumeric)
		if err != nil || items == nil {
			return nil, fmt.Errorf("array items: %v", errOr(err, "no schema"))
		}
		out.Items = items
	case TypeMap:
		keys, err := encodeSchema(s.KeyType, decimalNumeric)
		if err != nil || keys == nil {
			return nil, fmt.Errorf("map keys: %v", errOr(err, "no schema"))
		}
		values, err := encodeSchema(s.ValueType, decimalNumeric)
		if err != nil || values == nil {
			return nil, fmt.Errorf("map values: %v", errOr(err, "no schema"))
		}
		out.Keys, out.Values = keys, values
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeFloat32, TypeFloat64,
		TypeBoolean, TypeString, TypeBytes:
	default:
		return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, s.Type)
	}
	return out, nil
}

func errOr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

// decodeSchema turns the JSON form back into a Schema.
func decodeSchema(j *schemaJSON) (*Schema, error) {
	if j == nil {
		return nil, nil
	}
	s := &Schema{Type: j.Type, Optional: j.Optional, Name: j.Name, Version: j.Version, Doc: j.Doc}
	if len(j.Parameters) > 0 {
		s.Parameters = j.Parameters
	}
	switch j.Type {
	case TypeStruct:
		s.Fields = make([]Field, 0, len(j.Fields))
		for i, f := range j.Fields {
			fs, err := decodeSchema(&f.schemaJSON)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Field, err)
			}
			s.Fields = append(s.Fields, Field{Name: f.Field, Index: i, Schema: fs})
		}
	case TypeArray:
		if j.Items == nil {
			return nil, fmt.Errorf("%w: array schema without items", ErrConversion)
		}
		items, err := decodeSchema(j.Items)
		if err != nil {
			return nil, err
		}
		s.Items = items
	case TypeMap:
		if j.Keys == nil || j.Values == nil {
			return nil, fmt.Errorf("%w: map schema without keys or values", ErrConversion)
		}
		k, err := decodeSchema(j.Keys)
		if err != nil {
			return nil, err
		}
		v, err := decodeSchema(j.Values)
		if err != nil {
			return nil, err
		}
		s.KeyType, s.ValueType = k, v
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeFloat32, TypeFloat64,
		TypeBoolean, TypeString, TypeBytes:
	default:
		return nil, fmt.Errorf("%w: unknown schema type %q", ErrConversion, j.Type)
	}
	if len(j.Default) > 0 && string(j.Default) != "null" {
		var raw any
		if err := unmarshalNumber(j.Default, &raw); err != nil {
			return nil, fmt.Errorf("%w: default: %v", ErrConversion, err)
		}
		v, err := valueFromJSON(s, raw)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		s.Default = v
	}
	return s, nil
}

// sortedMapKeys returns a map's keys in order, for deterministic output.
func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
