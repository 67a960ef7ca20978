package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// decodeJSON parses one JSON document into the values encoding/json's
// Unmarshal into an `any` yields (map[string]any, []any, string, float64,
// bool, nil), without reflection: decoding every input record is the
// largest cost of a declarative job. Strings with escapes or non-ASCII
// bytes are handed to encoding/json, so escape and UTF-8 handling are its
// own; FuzzDecodeJSON checks the two agree on every input.
func decodeJSON(data []byte) (any, error) {
	d := jsonDecoder{data: data}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.errorf("invalid character %q after top-level value", d.data[d.pos])
	}
	return v, nil
}

var errJSONEnd = errors.New("unexpected end of JSON input")

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonDecoder struct {
	data []byte
	pos  int
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, errJSONEnd
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return nil, d.errorf("invalid character %q looking for beginning of value", c)
	}
}

func (d *jsonDecoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) {
		return errJSONEnd
	}
	if string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.errorf("invalid literal")
	}
	d.pos += len(word)
	return nil
}

func (d *jsonDecoder) object(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, d.errorf("exceeded max depth")
	}
	d.pos++ // {
	// Size the top-level map from the document (about one member per 16
	// bytes) so that it is allocated once rather than grown.
	hint := 8
	if depth == 1 {
		hint = min(max(len(d.data)/16, 8), 64)
	}
	m := make(map[string]any, hint)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, errJSONEnd
		}
		if d.data[d.pos] != '"' {
			return nil, d.errorf("invalid character %q looking for beginning of object key string", d.data[d.pos])
		}
		key, err := d.string()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, errJSONEnd
		}
		if d.data[d.pos] != ':' {
			return nil, d.errorf("invalid character %q after object key", d.data[d.pos])
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[key] = v
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, errJSONEnd
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.errorf("invalid character %q after object key:value pair", d.data[d.pos])
		}
	}
}

func (d *jsonDecoder) array(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, d.errorf("exceeded max depth")
	}
	d.pos++ // [
	list := []any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return list, nil
	}
	for {
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, errJSONEnd
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return list, nil
		default:
			return nil, d.errorf("invalid character %q after array element", d.data[d.pos])
		}
	}
}

// string decodes the string at d.pos (at its opening quote). Plain ASCII
// without escapes is converted directly; anything else goes through
// encoding/json.
func (d *jsonDecoder) string() (string, error) {
	start := d.pos
	i := start + 1
	plain := true
	for ; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			i++ // skip the escaped byte (validated by encoding/json)
			continue
		}
		if c < 0x20 || c >= utf8.RuneSelf {
			plain = false
		}
	}
	if i >= len(d.data) {
		return "", errJSONEnd
	}
	d.pos = i + 1
	if plain {
		return string(d.data[start+1 : i]), nil
	}
	var s string
	if err := json.Unmarshal(d.data[start:i+1], &s); err != nil {
		return "", err
	}
	return s, nil
}

func (d *jsonDecoder) number() (any, error) {
	start := d.pos
	i := d.pos
	if d.data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(d.data) && d.data[i] == '0' {
		i++
	} else if digits() == 0 {
		d.pos = i
		return nil, d.numberError()
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if digits() == 0 {
			d.pos = i
			return nil, d.numberError()
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			d.pos = i
			return nil, d.numberError()
		}
	}
	d.pos = i
	f, err := strconv.ParseFloat(string(d.data[start:i]), 64)
	if err != nil {
		return nil, fmt.Errorf("json: cannot unmarshal number %s into Go value of type float64", d.data[start:i])
	}
	return f, nil
}

func (d *jsonDecoder) numberError() error {
	if d.pos >= len(d.data) {
		return errJSONEnd
	}
	return d.errorf("invalid character %q in numeric literal", d.data[d.pos])
}
