package connect

import (
	"testing"
)

// FuzzJSONConverter: record bytes from a topic never panic the converter;
// what it accepts it writes back.
func FuzzJSONConverter(f *testing.F) {
	f.Add([]byte(`{"schema":{"type":"struct","fields":[{"field":"a","type":"int32"}]},"payload":{"a":1}}`))
	f.Add([]byte(`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"AQ=="}`))
	f.Add([]byte(`{"schema":{"type":"map","keys":{"type":"int8"},"values":{"type":"string"}},"payload":[[1,"x"]]}`))
	f.Add([]byte(`[1,2,{"x":null}]`))
	withSchemas := &JSONConverter{SchemasEnable: true}
	plain := &JSONConverter{}
	f.Fuzz(func(t *testing.T, data []byte) {
		if schema, v, err := withSchemas.ToConnect("t", data); err == nil {
			if _, err := withSchemas.FromConnect("t", schema, v); err != nil && schema != nil && schema.Default == nil {
				t.Logf("accepted %q but cannot write it back: %v", data, err)
			}
		}
		if _, v, err := plain.ToConnect("t", data); err == nil {
			if _, err := plain.FromConnect("t", nil, v); err != nil {
				t.Fatalf("schemaless %q read but not written: %v", data, err)
			}
		}
	})
}

// FuzzInternalTopicRecords: unreadable config, status and offset records
// are errors, never panics.
func FuzzInternalTopicRecords(f *testing.F) {
	f.Add("connector-a", []byte(`{"properties":{"x":"y"}}`))
	f.Add("task-a-0", []byte(`{"properties":{}}`))
	f.Add("commit-a", []byte(`{"tasks":1}`))
	f.Add("status-task-a-1", []byte(`{"state":"RUNNING","generation":1}`))
	f.Add(`["a",{"p":1}]`, []byte(`{"o":2}`))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		st := newClusterState()
		_ = st.applyConfig(0, key, value)
		_ = st.applyStatus(key, value)
		_ = st.applyOffset([]byte(key), value)
		_ = clusterUnits(st)
	})
}
