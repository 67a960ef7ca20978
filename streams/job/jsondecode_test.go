package job

import (
	"encoding/json"
	"reflect"
	"testing"
)

var jsonSamples = []string{
	`{"id":1,"amount":150.25,"customer":"ann","tags":["a","b"],"nested":{"x":null,"y":true,"z":false}}`,
	`[]`, `{}`, `  [1, -2, 3.5e10, -0.0, 1E-3]  `, `"plain"`, `"esc\"aped\u00e9\n"`, `"Grüße"`,
	`"bad utf8 \xff"`, `123`, `-`, `01`, `1.`, `1e`, `.5`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":1}x`,
	`1e400`, `nul`, `tru`, `{"a":"b"`, `["\u0000"]`, "\"ctl\x01\"", `{"dup":1,"dup":2}`, ``, ` `,
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSamples {
		checkDecodeJSON(t, []byte(s))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeJSON(t, data) })
}

func checkDecodeJSON(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, err := decodeJSON(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: err %v, encoding/json err %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, encoding/json %#v", data, got, want)
	}
}

var encodeSamples = []any{
	map[string]any{"b": 1.5, "a": []any{"x", nil, true}, "c": map[string]any{}, "d": "<&>", "e": "é", "f": 1e21, "g": 1e-7, "h": -0.0},
	[]any(nil), []any{}, 12345678901234567890.0, 0.1, 100.0, -3.0, "tab\there", 7, struct{ A int }{1}, []string{"x"},
}

func TestEncodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, v := range encodeSamples {
		checkEncodeJSON(t, v)
	}
}

// FuzzEncodeJSON decodes the input, then checks that encodeJSON writes
// what json.Marshal writes for the value.
func FuzzEncodeJSON(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeJSON(data)
		if err != nil {
			return
		}
		checkEncodeJSON(t, v)
	})
}

func checkEncodeJSON(t *testing.T, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := encodeJSON(nil, v)
	if (err == nil) != (wantErr == nil) || string(got) != string(want) {
		t.Fatalf("%#v: got %s (%v), json.Marshal %s (%v)", v, got, err, want, wantErr)
	}
}
