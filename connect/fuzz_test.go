package connect

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
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

// FuzzJSONSchemaToConnect: a JSON schema from the registry and a payload
// from a topic never panic the JSON Schema converter's reading half; a
// schema it maps is written back to a JSON schema.
func FuzzJSONSchemaToConnect(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"integer","connect.type":"int8","connect.index":0}}}`, []byte(`{"a":1}`))
	f.Add(`{"type":"array","items":{"type":"object","properties":{"key":{"type":"integer"},"value":{"type":"string"}}},"connect.type":"map"}`, []byte(`[{"key":1,"value":"x"}]`))
	f.Add(`{"oneOf":[{"type":"null"},{"type":"string","connect.type":"bytes","title":"org.apache.kafka.connect.data.Decimal","connect.parameters":{"scale":"2"}}]}`, []byte(`"AQ=="`))
	f.Add(`{"$ref":"#/definitions/a","definitions":{"a":{"type":["null","number"],"default":1}}}`, []byte(`null`))
	f.Fuzz(func(t *testing.T, schemaText string, payload []byte) {
		s, err := connectSchemaFromJSON(schemaText)
		if err != nil {
			return
		}
		if _, err := jsonSchemaText(s, jsonSchemaOptions{}); err != nil {
			t.Logf("mapped %q but cannot write it back: %v", schemaText, err)
		}
		var raw any
		if unmarshalNumber(payload, &raw) == nil {
			_, _ = connectValueFromJSONSchema(s, raw, 0)
		}
	})
}

// FuzzProtobufToConnect: any bytes after the header (message indexes and
// payload) never panic ProtobufConverter; what it reads it writes back.
func FuzzProtobufToConnect(f *testing.F) {
	text, _, err := protoSchemaText(protoRow)
	if err != nil {
		f.Fatal(err)
	}
	parsed, err := protobuf.New().Parse(text, nil)
	if err != nil {
		f.Fatal(err)
	}
	registry := &registryConverter{format: protobuf.New(), typ: schema.Protobuf}
	registry.cache.read = map[int]serde.Schema{1: {ID: 1, Type: schema.Protobuf, Text: text, Parsed: parsed}}
	c := &ProtobufConverter{registry: registry}
	md, _ := protobuf.MessageByIndexes(parsed, []int{0})
	msg, err := protoMessage(md, protoRow, protoRowValue(), 0)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := proto.Marshal(msg)
	f.Add(append([]byte{0}, good...))
	f.Add([]byte{2, 2, 8, 1})
	f.Add([]byte{0, 0x82, 1, 3, 8, 0xff, 1})
	f.Fuzz(func(t *testing.T, rest []byte) {
		data := append(wire.AppendHeader(nil, 1), rest...)
		s, v, err := c.ToConnect("t", data)
		if err != nil {
			if !errors.Is(err, ErrConversion) {
				t.Errorf("%x: %v does not wrap ErrConversion", rest, err)
			}
			return
		}
		m, _ := protobuf.MessageByIndexes(parsed, []int{0})
		if s.Name == string(m.FullName()) {
			if _, err := protoMessage(m, s, v, 0); err != nil {
				t.Errorf("read %x as %#v but cannot write it back: %v", rest, v, err)
			}
		}
	})
}
