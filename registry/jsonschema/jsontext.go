package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// value is a decoded JSON value that remembers the order of object keys,
// which the registry's canonical text keeps (Confluent writes JSON schemas
// back with Jackson, which keeps key order too).
type value struct {
	kind    valueKind
	text    string         // the string, or the number exactly as written
	boolean bool           // kindBool
	members []member       // kindObject, in first-appearance order
	items   []value        // kindArray
	index   map[string]int // kindObject: key -> position in members
}

type member struct {
	key string
	val value
}

type valueKind uint8

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// decodeJSON reads exactly one JSON value from text. Objects may repeat a
// key: as in Jackson, the last value wins and the key keeps the place of
// its first appearance. Nesting deeper than maxNesting is refused, so a
// hostile document cannot exhaust the stack of this decoder, of the
// schema library or of the compatibility check.
func decodeJSON(text string) (value, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return value{}, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (value, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		return value{}, errors.New("unexpected end of JSON input")
	}
	if err != nil {
		return value{}, err
	}
	switch tok := tok.(type) {
	case nil:
		return value{kind: kindNull}, nil
	case bool:
		return value{kind: kindBool, boolean: tok}, nil
	case json.Number:
		return value{kind: kindNumber, text: string(tok)}, nil
	case string:
		return value{kind: kindString, text: tok}, nil
	case json.Delim:
		if depth >= maxNesting {
			return value{}, fmt.Errorf("JSON nested deeper than %d levels at offset %d", maxNesting, dec.InputOffset())
		}
		if tok == '[' {
			arr := value{kind: kindArray}
			for dec.More() {
				item, err := decodeValue(dec, depth+1)
				if err != nil {
					return value{}, err
				}
				arr.items = append(arr.items, item)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return value{}, err
			}
			return arr, nil
		}
		// '{': json.Decoder only hands out '{' and '[' here.
		obj := value{kind: kindObject, index: map[string]int{}}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return value{}, err
			}
			key, _ := keyTok.(string) // the decoder guarantees a string key
			val, err := decodeValue(dec, depth+1)
			if err != nil {
				return value{}, err
			}
			if i, dup := obj.index[key]; dup {
				obj.members[i].val = val
				continue
			}
			obj.index[key] = len(obj.members)
			obj.members = append(obj.members, member{key: key, val: val})
		}
		if _, err := dec.Token(); err != nil { // '}'
			return value{}, err
		}
		return obj, nil
	}
	return value{}, fmt.Errorf("unexpected JSON token %v", tok)
}

// member returns the value of key in an object, if present.
func (v value) member(key string) (value, bool) {
	if v.kind != kindObject {
		return value{}, false
	}
	i, ok := v.index[key]
	if !ok {
		return value{}, false
	}
	return v.members[i].val, true
}

// toAny converts v to the representation encoding/json gives with
// UseNumber (map[string]any, []any, json.Number, string, bool, nil),
// which is what the schema library compiles.
func (v value) toAny() any {
	switch v.kind {
	case kindBool:
		return v.boolean
	case kindNumber:
		return json.Number(v.text)
	case kindString:
		return v.text
	case kindArray:
		arr := make([]any, len(v.items))
		for i, item := range v.items {
			arr[i] = item.toAny()
		}
		return arr
	case kindObject:
		obj := make(map[string]any, len(v.members))
		for _, m := range v.members {
			obj[m.key] = m.val.toAny()
		}
		return obj
	}
	return nil
}

// compact writes v without insignificant whitespace. With sortKeys, the
// keys of every object are written in byte order of their UTF-8 text;
// otherwise in the order of the document. Numbers are written as they
// were; strings are escaped minimally (see writeJSONString).
func (v value) compact(sortKeys bool) string {
	var sb strings.Builder
	v.writeCompact(&sb, sortKeys)
	return sb.String()
}

func (v value) writeCompact(sb *strings.Builder, sortKeys bool) {
	switch v.kind {
	case kindNull:
		sb.WriteString("null")
	case kindBool:
		if v.boolean {
			sb.WriteString("true")
		} else {
			sb.WriteString("false")
		}
	case kindNumber:
		sb.WriteString(v.text)
	case kindString:
		writeJSONString(sb, v.text)
	case kindArray:
		sb.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			item.writeCompact(sb, sortKeys)
		}
		sb.WriteByte(']')
	case kindObject:
		members := v.members
		if sortKeys {
			members = slices.Clone(members)
			slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		}
		sb.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSONString(sb, m.key)
			sb.WriteByte(':')
			m.val.writeCompact(sb, sortKeys)
		}
		sb.WriteByte('}')
	}
}

// writeJSONString writes s as a JSON string the way Jackson does by
// default: '"' and '\\' escaped, the control characters as \b \t \n \f \r
// or \u00XX, everything else as UTF-8. (Go's encoder would also escape
// <, >, &, U+2028 and U+2029.)
func writeJSONString(sb *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			sb.WriteRune(r) // invalid UTF-8 becomes U+FFFD, as the decoder did
			i += size
			continue
		}
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		case '\f':
			sb.WriteString(`\f`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if c < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte(hex[c>>4])
				sb.WriteByte(hex[c&0xF])
			} else {
				sb.WriteByte(c)
			}
		}
		i++
	}
	sb.WriteByte('"')
}
