package job

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

const bigOrders = `name: big-orders
input: {topics: [orders], format: json}
pipeline:
  - filter: value.amount > 100
  - map: '{"id": value.id, "amount": value.amount, "customer": upper(value.customer)}'
  - key: value.customer
output: {topic: big-orders, format: json}
guarantee: exactly_once      # or at_least_once (default)
`

func driver(t *testing.T, src string) *streams.TestDriver {
	t.Helper()
	j, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		t.Fatalf("NewTestDriver: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestIssueExampleInMemory(t *testing.T) {
	j, err := Parse([]byte(bigOrders))
	if err != nil {
		t.Fatal(err)
	}
	if j.Guarantee() != streams.ExactlyOnceV2 {
		t.Fatalf("guarantee %v", j.Guarantee())
	}
	d := driver(t, bigOrders)
	for _, v := range []string{
		`{"id": 1, "amount": 50, "customer": "ann", "note": "x"}`,
		`{"id": 2, "amount": 150.5, "customer": "bob", "note": "y"}`,
		`{"id": 3, "amount": 101, "customer": "ann"}`,
	} {
		if err := d.Pipe(&kgo.Record{Topic: "orders", Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	out := d.Output("big-orders")
	if len(out) != 2 {
		t.Fatalf("got %d records, want 2", len(out))
	}
	want := []struct{ key, value string }{
		{"BOB", `{"amount":150.5,"customer":"BOB","id":2}`},
		{"ANN", `{"amount":101,"customer":"ANN","id":3}`},
	}
	for i, w := range want {
		if string(out[i].Key) != w.key || string(out[i].Value) != w.value {
			t.Errorf("record %d: %s=%s, want %s=%s", i, out[i].Key, out[i].Value, w.key, w.value)
		}
	}
}

func TestBadExpressionNamesStepLineColumn(t *testing.T) {
	src := strings.Replace(bigOrders, "upper(value.customer)", "uper(value.customer)", 1)
	_, err := Parse([]byte(src))
	var xe *ExprError
	if !errors.As(err, &xe) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want an ExprError", err)
	}
	msg := err.Error()
	// The map expression is on line 5; "uper" starts at column 64 of the
	// line (the quote is at 10).
	for _, want := range []string{"pipeline step 2 (map)", "line 5", "column 64", "uper"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	t.Log(msg)
}

func TestBranchFlatMapHeaders(t *testing.T) {
	src := `name: route
input: {topics: [in]}
pipeline:
  - flat_map: value.items
  - set_header: {source: topic, sku: value.sku}
  - rename: {sku: product}
  - drop_fields: [secret]
  - branch:
      - when: value.qty >= 10
        to: bulk
      - when: headers.sku startsWith "X"
        to: special
  - map: 'value'
output: {topic: normal}
`
	d := driver(t, src)
	v := `{"items": [{"sku": "A1", "qty": 20, "secret": 1}, {"sku": "X9", "qty": 1}, {"sku": "B2", "qty": 2}]}`
	if err := d.Pipe(&kgo.Record{Topic: "in", Key: []byte("k"), Value: []byte(v)}); err != nil {
		t.Fatal(err)
	}
	check := func(topic string, want ...string) {
		t.Helper()
		out := d.Output(topic)
		if len(out) != len(want) {
			t.Fatalf("%s: %d records, want %d", topic, len(out), len(want))
		}
		for i, r := range out {
			if string(r.Value) != want[i] || string(r.Key) != "k" {
				t.Errorf("%s[%d] = %s=%s, want k=%s", topic, i, r.Key, r.Value, want[i])
			}
			var hdr string
			for _, h := range r.Headers {
				if h.Key == "source" {
					hdr = string(h.Value)
				}
			}
			if hdr != "in" {
				t.Errorf("%s[%d]: header source = %q", topic, i, hdr)
			}
		}
	}
	check("bulk", `{"product":"A1","qty":20}`)
	check("special", `{"product":"X9","qty":1}`)
	check("normal", `{"product":"B2","qty":2}`)
}

func TestDeadLetterInMemory(t *testing.T) {
	src := `name: dlq
input: {topics: [in]}
pipeline:
  - filter: value.amount > 1
output: {topic: out}
errors: {mode: dead_letter, topic: in-dlq}
`
	d := driver(t, src)
	for _, v := range []string{`{"amount": 5}`, `not json`, `{"amount": "x"}`} {
		if err := d.Pipe(&kgo.Record{Topic: "in", Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(d.Output("out")); n != 1 {
		t.Fatalf("out: %d records", n)
	}
	dlq := d.Output("in-dlq")
	if len(dlq) != 2 {
		t.Fatalf("dlq: %d records, want 2", len(dlq))
	}
	hdr := func(r *kgo.Record, k string) string {
		for _, h := range r.Headers {
			if h.Key == k {
				return string(h.Value)
			}
		}
		return ""
	}
	if hdr(dlq[0], streams.HeaderErrorStage) != "input" || hdr(dlq[0], streams.HeaderErrorKind) != "deserialize" || string(dlq[0].Value) != "not json" {
		t.Errorf("dlq[0] headers %v value %s", dlq[0].Headers, dlq[0].Value)
	}
	if hdr(dlq[1], streams.HeaderErrorStage) != "step 1 (filter)" || hdr(dlq[1], streams.HeaderErrorOffset) != "2" || hdr(dlq[1], streams.HeaderErrorTopic) != "in" {
		t.Errorf("dlq[1] headers %v", dlq[1].Headers)
	}
	var m map[string]any
	_ = json.Unmarshal(dlq[1].Value, &m)
	if m["amount"] != "x" {
		t.Errorf("dlq[1] value %s", dlq[1].Value)
	}
}
