package job

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/registrytest"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/streams"
)

const orderAvsc = `{"type": "record", "name": "Order", "namespace": "shop", "fields": [
  {"name": "id", "type": "long"},
  {"name": "amount", "type": "double"},
  {"name": "customer", "type": "string"},
  {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "note", "type": ["null", "string"], "default": null}]}`

const bigOrderAvsc = `{"type": "record", "name": "BigOrder", "namespace": "shop", "fields": [
  {"name": "id", "type": "long"},
  {"name": "customer", "type": "string"},
  {"name": "amount", "type": "double"},
  {"name": "note", "type": "string"}]}`

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newRegistryClient(t testing.TB, url string) *serde.Client {
	t.Helper()
	c, err := serde.NewClient(url, serde.Timeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func register(t testing.TB, c *serde.Client, subject string, text serde.Text) serde.Schema {
	t.Helper()
	s, err := c.Register(testContext(t), subject, text, false)
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	return s
}

func mustEncode(t testing.TB, s serde.Schema, v any) []byte {
	t.Helper()
	b, err := serde.Encode(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func headersOf(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

func TestParseRegistryFormats(t *testing.T) {
	t.Setenv(EnvRegistryURL, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.avsc"), []byte(bigOrderAvsc), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name: j\ninput: {topics: [in], format: %IN%}\n%REG%output: %OUT%\n"
	job := func(in, reg, out string) string {
		r := strings.NewReplacer("%IN%", in, "%REG%", reg, "%OUT%", out)
		return r.Replace(base)
	}
	const url = "schema_registry: {url: 'http://127.0.0.1:1'}\n"
	tests := []struct {
		name, src, wantErr string
	}{
		{"avro in and out", job("avro", url, "{topic: out, format: avro, schema: '"+bigOrderAvsc+"'}"), ""},
		{"schema_type agrees", job("json", url, "{topic: out, format: avro, schema_type: AVRO, use_latest_version: true}"), ""},
		{"protobuf latest", job("protobuf", url, "{topic: out, format: protobuf, use_latest_version: true}"), ""},
		{"json_schema inline", job("json_schema", url, `{topic: out, format: json_schema, schema: '{"type": "object"}'}`), ""},
		{"basic auth", job("avro", "schema_registry: {url: 'http://127.0.0.1:1', basic_auth: 'u:p'}\n", "{topic: out}"), ""},
		{"unknown format", job("xml", url, "{topic: out}"), `input format "xml": want json, string, bytes, avro, protobuf or json_schema`},
		{"unknown output format", job("json", url, "{topic: out, format: avro2}"), `output format "avro2"`},
		{"avro without url", job("avro", "", "{topic: out}"), "input format avro needs schema_registry.url (or $STRATA_SCHEMA_REGISTRY_URL)"},
		{"output avro without url", job("json", "", "{topic: out, format: avro, use_latest_version: true}"), "output format avro needs schema_registry.url"},
		{"bad url", job("avro", "schema_registry: {url: 'ftp://x'}\n", "{topic: out}"), "schema_registry.url"},
		{"bad basic auth", job("avro", "schema_registry: {url: 'http://127.0.0.1:1', basic_auth: nocolon}\n", "{topic: out}"), "schema_registry.basic_auth: want user:password"},
		{"no schema", job("json", url, "{topic: out, format: avro}"), "output format avro needs schema (its text or a file) or use_latest_version: true"},
		{"both", job("json", url, "{topic: out, format: avro, schema: x.avsc, use_latest_version: true}"), "output takes schema or use_latest_version, not both"},
		{"type mismatch", job("json", url, "{topic: out, format: avro, schema_type: protobuf, use_latest_version: true}"), "output schema_type protobuf does not match format avro"},
		{"type unknown", job("json", url, "{topic: out, format: avro, schema_type: thrift, use_latest_version: true}"), `output schema_type "thrift": want avro, protobuf or json_schema`},
		{"schema on json", job("json", url, "{topic: out, format: json, schema: x.avsc}"), "output schema: only for format avro, protobuf or json_schema, not json"},
		{"schema_type on string", job("json", url, "{topic: out, format: string, schema_type: avro}"), "output schema_type: only for format"},
		{"bad avro", job("json", url, `{topic: out, format: avro, schema: '{"type": "record"}'}`), "output schema (AVRO)"},
		{"missing file", job("json", url, "{topic: out, format: avro, schema: nope.avsc}"), "output schema: open nope.avsc"},
		{"unknown key", job("json", url, "{topic: out, format: avro, schema.type: avro}"), "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v\n%s", err, tc.src)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ErrInvalid with %q", err, tc.wantErr)
			}
		})
	}

	t.Run("url from the environment", func(t *testing.T) {
		t.Setenv(EnvRegistryURL, "http://127.0.0.1:1")
		if _, err := Parse([]byte(job("avro", "", "{topic: out}"))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("schema file beside the job file", func(t *testing.T) {
		path := filepath.Join(dir, "job.yaml")
		if err := os.WriteFile(path, []byte(job("json", url, "{topic: out, format: avro, schema: big.avsc}")), 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if j.registry.outText != bigOrderAvsc || j.registry.outType != schema.Avro {
			t.Fatalf("schema %q type %s", j.registry.outText, j.registry.outType)
		}
	})
}

// avroJob reads Avro orders and writes big ones as Avro BigOrders.
func avroJob(url string) string {
	return `name: avro-orders
schema_registry: {url: '` + url + `'}
input: {topics: [orders], format: avro}
pipeline:
  - filter: value.amount > 100 && value.placed >= 1700000000000
  - map: '{"id": value.id, "customer": upper(value.customer), "amount": value.amount, "note": value.note}'
output:
  topic: big-orders
  format: avro
  schema: '` + bigOrderAvsc + `'
errors: {mode: dead_letter, topic: orders-dlq}
`
}

// TestAvroPathInMemory runs the decode and encode path against a real
// registry in-process: records framed with the input schema's id are
// decoded for the expressions, the output schema is registered under
// big-orders-value by Prepare, and what does not fit it (a null note),
// an unknown schema id and bytes without the magic byte go to the dead
// letters.
func TestAvroPathInMemory(t *testing.T) {
	url := registrytest.Start(t)
	producer := newRegistryClient(t, url)
	ctx := testContext(t)
	in := register(t, producer, "orders-value", serde.Text{Schema: orderAvsc})

	j, err := Parse([]byte(avroJob(url)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	// Before Prepare the output cannot be written: that is a record error.
	order := func(id int, amount float64, note any) []byte {
		return mustEncode(t, in, map[string]any{"id": id, "amount": amount, "customer": "ann",
			"placed": "2024-05-01T10:00:00Z", "note": note})
	}
	if err := d.Pipe(&kgo.Record{Topic: "orders", Value: order(0, 500, "early")}); err != nil {
		t.Fatal(err)
	}
	if dlq := d.Output("orders-dlq"); len(dlq) != 1 || !strings.Contains(headersOf(dlq[0])[streams.HeaderErrorMessage], "Prepare has not run") {
		t.Fatalf("before Prepare: dead letters %v", dlq)
	}
	if err := j.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{
		order(1, 50, "small"),
		order(2, 150.5, "big"),
		order(3, 101, nil),                  // does not fit: BigOrder.note is a string
		{0, 0, 0, 0x7f, 0xff, 2, 4},         // unknown schema id
		[]byte(`{"id": 4, "amount": 1000}`), // not the wire format
	}
	for _, v := range inputs {
		if err := d.Pipe(&kgo.Record{Topic: "orders", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	out := d.Output("big-orders")
	if len(out) != 1 {
		t.Fatalf("%d records out, want 1", len(out))
	}
	reader := newRegistryClient(t, url)
	got, s, err := serde.Decode(ctx, reader, out[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"id": int64(2), "customer": "ANN", "amount": 150.5, "note": "big"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("output %#v, want %#v", got, want)
	}
	latest, err := reader.Version(ctx, "big-orders-value", -1)
	if err != nil || latest.ID != s.ID {
		t.Fatalf("big-orders-value latest %+v, output id %d, %v", latest, s.ID, err)
	}

	dlq := d.Output("orders-dlq") // Output drains: the early one is gone
	want := []struct{ kind, msg string }{
		{"serialize", "value does not fit the schema"},
		{"deserialize", "error_code 40403"},
		{"deserialize", "magic"},
	}
	if len(dlq) != len(want) {
		t.Fatalf("%d dead letters, want %d", len(dlq), len(want))
	}
	for i, w := range want {
		h := headersOf(dlq[i])
		if h[streams.HeaderErrorKind] != w.kind || !strings.Contains(h[streams.HeaderErrorMessage], w.msg) {
			t.Errorf("dead letter %d: kind %s message %q, want %s with %q", i, h[streams.HeaderErrorKind], h[streams.HeaderErrorMessage], w.kind, w.msg)
		}
		if string(dlq[i].Value) != string(inputs[i+2]) {
			t.Errorf("dead letter %d: value %x, want the input unchanged", i, dlq[i].Value)
		}
	}
}

// TestPrepareIncompatible: a job schema the subject's compatibility level
// refuses stops the start with the registry's message; a missing subject
// under use_latest_version is named.
func TestPrepareIncompatible(t *testing.T) {
	url := registrytest.Start(t)
	c := newRegistryClient(t, url)
	ctx := testContext(t)
	// Version 1 of big-orders-value lacks note; adding note without a
	// default is not BACKWARD compatible.
	register(t, c, "big-orders-value", serde.Text{Schema: `{"type": "record", "name": "BigOrder", "namespace": "shop", "fields": [
		{"name": "id", "type": "long"}]}`})
	j, err := Parse([]byte(avroJob(url)))
	if err != nil {
		t.Fatal(err)
	}
	err = j.Prepare(ctx)
	var re *serde.Error
	if !errors.Is(err, ErrSchemaRegistry) || !errors.As(err, &re) || re.Code != serde.CodeIncompatible ||
		!strings.Contains(err.Error(), "big-orders-value") {
		t.Fatalf("Prepare: %v, want the registry's incompatibility", err)
	}
	t.Log(err)

	latest := strings.Replace(avroJob(url), "schema: '"+bigOrderAvsc+"'", "use_latest_version: true", 1)
	latest = strings.ReplaceAll(latest, "big-orders", "huge-orders")
	j, err = Parse([]byte(latest))
	if err != nil {
		t.Fatal(err)
	}
	err = j.Prepare(ctx)
	if !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), "use_latest_version: subject huge-orders-value has no version in") {
		t.Fatalf("Prepare: %v", err)
	}
	// The App's run calls Prepare first and stops on its error.
	app, err := j.NewApp(streams.Brokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Run(ctx); !errors.Is(err, ErrSchemaRegistry) {
		t.Fatalf("Run: %v, want the Prepare error", err)
	}
	// Once the subject exists, the job writes with its latest version.
	v := register(t, c, "huge-orders-value", serde.Text{Schema: bigOrderAvsc})
	if err := j.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if got := (*j.registry.outSchemas.Load())["huge-orders"]; got.ID != v.ID {
		t.Fatalf("output schema id %d, want %d", got.ID, v.ID)
	}
}

const orderProto = `syntax = "proto3";
package shop;
message Order {
  int64 id = 1;
  double amount = 2;
  string customer = 3;
  bytes tag = 4;
}`

const bigOrderProto = `syntax = "proto3";
package shop;
message BigOrder {
  int64 id = 1;
  string customer = 2;
  string tag = 3;
}`

// TestProtobufAndJSONSchemaPaths: Protobuf input is seen as protojson
// renders it (lowerCamelCase names, int64 as strings, bytes as base64);
// Protobuf and JSON Schema outputs are written under <topic>-value, and a
// value that does not fit goes to the dead letters.
func TestProtobufAndJSONSchemaPaths(t *testing.T) {
	url := registrytest.Start(t)
	producer := newRegistryClient(t, url)
	reader := newRegistryClient(t, url)
	ctx := testContext(t)
	in := register(t, producer, "orders-value", serde.Text{Type: schema.Protobuf, Schema: orderProto})
	order := func(id int, customer string) []byte {
		return mustEncode(t, in, map[string]any{"id": id, "amount": 150, "customer": customer, "tag": []byte{0xca, 0xfe}})
	}
	const jsonSchema = `{"type": "object", "properties": {"id": {"type": "integer"}, "who": {"type": "string"}}, "required": ["id", "who"]}`
	tests := []struct {
		name, output, mapExpr string
		want                  map[string]any
		misfitMessage         string
	}{
		{"protobuf", "format: protobuf\n  schema: |\n" + indent(bigOrderProto, "    "),
			`{"id": value.id, "customer": value.customer ?? 42, "tag": value.tag}`,
			map[string]any{"id": "7", "customer": "ann", "tag": "yv4="}, "message shop.BigOrder"},
		{"json_schema", "format: json_schema\n  schema_type: JSON\n  schema: '" + jsonSchema + "'",
			`{"id": int(value.id) * 2, "who": value.customer ?? nil}`,
			map[string]any{"id": json.Number("14"), "who": "ann"}, "value does not fit the schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topic := "big-" + tc.name
			src := `name: pb-` + tc.name + `
schema_registry: {url: '` + url + `'}
input: {topics: [orders], format: protobuf}
pipeline:
  - filter: int(value.id) > 5 && value.amount > 100
  - map: '` + tc.mapExpr + `'
output:
  topic: ` + topic + `
  ` + tc.output + `
errors: {mode: dead_letter, topic: dlq}
`
			j, err := Parse([]byte(src))
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			if err := j.Prepare(ctx); err != nil {
				t.Fatal(err)
			}
			d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
			if err != nil {
				t.Fatal(err)
			}
			misfit := mustEncode(t, in, map[string]any{"id": 9, "amount": 150}) // customer "" is left out: no customer field
			for _, v := range [][]byte{order(3, "bob"), order(7, "ann"), misfit} {
				if err := d.Pipe(&kgo.Record{Topic: "orders", Value: v}); err != nil {
					t.Fatal(err)
				}
			}
			out := d.Output(topic)
			if len(out) != 1 {
				t.Fatalf("%d records out, want 1", len(out))
			}
			got, s, err := serde.Decode(ctx, reader, out[0].Value)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("output %#v, want %#v", got, tc.want)
			}
			if v, err := reader.Version(ctx, topic+"-value", -1); err != nil || v.ID != s.ID {
				t.Fatalf("%s-value: %+v, %v; output id %d", topic, v, err, s.ID)
			}
			dlq := d.Output("dlq")
			if len(dlq) != 1 || headersOf(dlq[0])[streams.HeaderErrorKind] != string(streams.KindSerialize) ||
				!strings.Contains(headersOf(dlq[0])[streams.HeaderErrorMessage], tc.misfitMessage) {
				for _, r := range dlq {
					t.Log(headersOf(r))
				}
				t.Fatalf("%d dead letters, want the misfit", len(dlq))
			}
		})
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

// TestRegistryOutageStopsTheJob: with the registry unreachable, a framed
// record is not the job's dead letter (nor skipped): the run stops with an
// error wrapping streams.ErrRetriable, the record uncommitted, so that
// RunWithRestarts reads it again once the registry is back.
func TestRegistryOutageStopsTheJob(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	j, err := Parse([]byte(avroJob(down)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Pipe(&kgo.Record{Topic: "orders", Value: []byte{0, 0, 0, 0, 1, 2, 4}})
	if !errors.Is(err, streams.ErrRetriable) || !errors.Is(err, streams.ErrProcessing) {
		t.Fatalf("record while the registry is down: %v, want ErrRetriable and ErrProcessing", err)
	}
	if dlq := d.Output("orders-dlq"); len(dlq) != 0 {
		t.Fatalf("dead letters during the outage: %d, want none", len(dlq))
	}
}
