package streams

import (
	"encoding/json"
	"testing"
)

// TestQueryCodecParsesKeysAndRendersValues: path keys parse with the key
// serde and values render decoded, as the JSON answers show them.
func TestQueryCodecParsesKeysAndRendersValues(t *testing.T) {
	type point struct{ X, Y int }
	for _, c := range []struct {
		name      string
		codec     *queryCodec
		path      string
		key       []byte // the encoded key, nil: the path must be rejected
		value     []byte
		valueJSON string
	}{
		{"string key, int64 value", newQueryCodec(String, Int64, 0), "user 1/x", []byte("user 1/x"), []byte{0, 0, 0, 0, 0, 0, 1, 0}, "256"},
		{"int64 key, string value", newQueryCodec(Int64, String, 0), "-2", []byte{255, 255, 255, 255, 255, 255, 255, 254}, []byte("hi"), `"hi"`},
		{"int64 key not a number", newQueryCodec(Int64, String, 0), "two", nil, nil, ""},
		{"bytes key, bytes value", newQueryCodec(Bytes, Bytes, 0), "AAE=", []byte{0, 1}, []byte{1, 2, 3}, `"AQID"`},
		{"bytes key not base64", newQueryCodec(Bytes, Bytes, 0), "%%%", nil, nil, ""},
		{"json key, json value", newQueryCodec(JSON[point](), JSON[point](), 0), `{"X":1,"Y":2}`, []byte(`{"X":1,"Y":2}`), []byte(`{"X":3,"Y":4}`), `{"X":3,"Y":4}`},
		{"json key malformed", newQueryCodec(JSON[point](), JSON[point](), 0), `{"X":`, nil, nil, ""},
	} {
		kb, err := c.codec.parseKey(c.path)
		if c.key == nil {
			if err == nil {
				t.Errorf("%s: %q parsed as %x, want an error", c.name, c.path, kb)
			}
			continue
		}
		if err != nil || string(kb) != string(c.key) {
			t.Errorf("%s: %q parsed as %x (%v), want %x", c.name, c.path, kb, err, c.key)
			continue
		}
		v, err := c.codec.renderValue(c.value)
		if err != nil {
			t.Fatalf("%s: rendering: %v", c.name, err)
		}
		if js, _ := json.Marshal(v); string(js) != c.valueJSON {
			t.Errorf("%s: value renders as %s, want %s", c.name, js, c.valueJSON)
		}
	}
}

func TestParseQueryTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 42, true},
		{"1700000000123", 1700000000123, true},
		{"2023-11-14T22:13:20Z", 1700000000000, true},
		{"2023-11-14T23:13:20.5+01:00", 1700000000500, true},
		{"yesterday", 0, false},
	} {
		got, err := parseQueryTime(c.in, 42)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseQueryTime(%q) = %d, %v; want %d (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
