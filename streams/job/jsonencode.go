package job

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encodeJSON appends v as JSON, byte for byte what encoding/json's Marshal
// writes (sorted object keys, HTML-safe escaping), without reflection for
// the types decoding and expressions produce. Anything unusual — strings
// needing escapes, floats in exponent form, other Go types — is handed to
// encoding/json itself. FuzzEncodeJSON checks the two agree.
func encodeJSON(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return encodeJSONString(dst, x)
	case float64:
		// encoding/json's rule: exponent form below 1e-6 and from 1e21.
		if abs := math.Abs(x); abs < 1e21 && (abs == 0 || abs >= 1e-6) {
			return strconv.AppendFloat(dst, x, 'f', -1, 64), nil
		}
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = encodeJSONString(dst, k); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = encodeJSON(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = encodeJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

func encodeJSONString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			b, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(dst, b...), nil
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}
