package registry

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

// TestSchemasRecordLayout pins the _schemas records to Confluent's layout (plus
// seq and node on sequenced writes, which Confluent's reader ignores).
func TestSchemasRecordLayout(t *testing.T) {
	st := stamp{seq: 7, node: "n1"}
	for _, tc := range []struct {
		name       string
		key        recordKey
		value      any
		wantKey    string
		wantValue  string
		tombstone  bool
		reReadable bool
	}{
		{"schema", schemaKey("s", 1, nil), schemaValue{Subject: "s", Version: 1, ID: 7, Schema: `"int"`},
			`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`,
			`{"subject":"s","version":1,"id":7,"schema":"\"int\"","deleted":false}`, false, true},
		{"sequenced schema", schemaKey("s", 2, &st), schemaValue{Subject: "s", Version: 2, ID: 8, SchemaType: schema.Protobuf,
			References: []schema.Reference{{Name: "a.proto", Subject: "a", Version: 1}}, Schema: "syntax", Deleted: true},
			`{"keytype":"SCHEMA","subject":"s","version":2,"magic":1,"seq":7,"node":"n1"}`,
			`{"subject":"s","version":2,"id":8,"schemaType":"PROTOBUF","references":[{"name":"a.proto","subject":"a","version":1}],"schema":"syntax","deleted":true}`, false, true},
		{"global config", scopeKey(keyConfig, ""), configValue{"FULL"},
			`{"keytype":"CONFIG","subject":null,"magic":0}`, `{"compatibilityLevel":"FULL"}`, false, true},
		{"subject config", scopeKey(keyConfig, "s"), configValue{"NONE"},
			`{"keytype":"CONFIG","subject":"s","magic":0}`, `{"compatibilityLevel":"NONE"}`, false, true},
		{"mode", scopeKey(keyMode, ""), modeValue{"READONLY"},
			`{"keytype":"MODE","subject":null,"magic":0}`, `{"mode":"READONLY"}`, false, true},
		{"delete subject", deleteSubjectKey("s", st), deleteSubjectValue{Subject: "s", Version: 3},
			`{"keytype":"DELETE_SUBJECT","subject":"s","magic":0,"seq":7,"node":"n1"}`, `{"subject":"s","version":3}`, false, true},
		{"noop", recordKey{KeyType: keyNoop}, nil, `{"keytype":"NOOP","magic":0}`, ``, true, true},
		{"config tombstone", scopeKey(keyConfig, "s"), nil, `{"keytype":"CONFIG","subject":"s","magic":0}`, ``, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var value any
			if !tc.tombstone {
				value = tc.value
			}
			rec, err := encodeRecord(tc.key, value)
			if err != nil {
				t.Fatal(err)
			}
			if string(rec.Key) != tc.wantKey || string(rec.Value) != tc.wantValue || (rec.Value == nil) != tc.tombstone {
				t.Fatalf("got key %s value %s\nwant key %s value %s", rec.Key, rec.Value, tc.wantKey, tc.wantValue)
			}
			back, err := decodeKey(rec.Key)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tc.wantKey {
				t.Fatalf("re-encoded key %s", again)
			}
		})
	}
}

func TestSchemasDecodeKeyErrors(t *testing.T) {
	for _, k := range []string{``, `{`, `[]`, `{"keytype":"SCHEMA","magic":1}`, `{"keytype":"SCHEMA","subject":"s","magic":1}`,
		`{"keytype":"DELETE_SUBJECT","magic":0}`, `{"keytype":"OTHER","magic":0}`, `{"keytype":"SCHEMA","subject":"s","version":"1"}`} {
		if _, err := decodeKey([]byte(k)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("decodeKey(%s) = %v, want ErrBadRecord", k, err)
		}
	}
	// Confluent's keys, and fields this registry does not know, read fine.
	if k, err := decodeKey([]byte(`{"keytype":"SCHEMA","subject":"s","version":3,"magic":1,"extra":true}`)); err != nil || *k.Subject != "s" || k.Version != 3 || k.Seq != nil {
		t.Fatalf("%+v %v", k, err)
	}
}
