package job

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFlatMapTypedSlices: expressions return typed slices ([]string from
// split, []int from a range), which flat_map must accept like []any.
func TestFlatMapTypedSlices(t *testing.T) {
	d := driver(t, `name: tags
input: {topics: [in]}
pipeline:
  - flat_map: split(value.tags, ",")
output: {topic: out, format: string}
`)
	if err := d.Pipe(&kgo.Record{Topic: "in", Value: []byte(`{"tags": "a,b,c"}`)}); err != nil {
		t.Fatal(err)
	}
	out := d.Output("out")
	var got []string
	for _, r := range out {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, " ") != "a b c" {
		t.Fatalf("split: outputs %q, want a b c", got)
	}

	d = driver(t, `name: nums
input: {topics: [in]}
pipeline:
  - flat_map: 1..3
output: {topic: out}
`)
	if err := d.Pipe(&kgo.Record{Topic: "in", Value: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range d.Output("out") {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, " ") != "1 2 3" {
		t.Fatalf("range: outputs %q, want 1 2 3", got)
	}

	d = driver(t, `name: notlist
input: {topics: [in]}
pipeline:
  - flat_map: value.n
output: {topic: out}
`)
	err := d.Pipe(&kgo.Record{Topic: "in", Value: []byte(`{"n": 3}`)})
	if err == nil || !strings.Contains(err.Error(), "want a list") {
		t.Fatalf("number: %v, want a 'want a list' error", err)
	}
}

// TestFeedbackLoopRejected: a job may not write where it reads.
func TestFeedbackLoopRejected(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"output is input", `name: a
input: {topics: [events, more]}
pipeline:
  - filter: "true"
output: {topic: more}
`, `output topic "more" is an input topic`},
		{"output matches pattern", `name: b
input: {pattern: "^events"}
pipeline:
  - filter: "true"
output: {topic: events-clean}
`, `output topic "events-clean" matches the input pattern "^events"`},
		{"branch target matches pattern", `name: c
input: {pattern: "^ev-"}
pipeline:
  - branch:
      - when: value.x > 1
        to: ev-big
      - default: small
`, `pipeline step 1 (branch): branch target "ev-big" matches the input pattern`},
		{"branch default is input", `name: d
input: {topics: [in]}
pipeline:
  - branch:
      - when: value.x > 1
        to: big
      - default: in
`, `pipeline step 1 (branch): branch target "in" is an input topic`},
		{"dead letters match pattern", `name: e
input: {pattern: "orders"}
pipeline:
  - filter: "true"
output: {topic: clean}
errors: {mode: dead_letter, topic: orders-dlq}
`, `errors topic "orders-dlq" matches the input pattern`},
		{"output is a joined table", `name: f
input: {topics: [orders]}
pipeline:
  - join: {table: customers}
output: {topic: customers}
`, `output topic "customers" is a joined table`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
	// Distinct topics are fine.
	if _, err := Parse([]byte(`name: ok
input: {pattern: "^events$"}
pipeline:
  - filter: "true"
output: {topic: events-clean}
errors: {mode: dead_letter, topic: dlq}
`)); err != nil {
		t.Fatal(err)
	}
}

// TestCommitIntervalVersusTransactionTimeout: an exactly-once job whose
// commit interval reaches the transaction timeout is rejected at load.
func TestCommitIntervalVersusTransactionTimeout(t *testing.T) {
	src := `name: slow
input: {topics: [in]}
pipeline:
  - filter: "true"
output: {topic: out}
guarantee: exactly_once
commit_interval: 15s
`
	_, err := Parse([]byte(src))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "CommitInterval 15s must be shorter than TransactionTimeout") {
		t.Fatalf("err = %v, want a commit interval error", err)
	}
	if _, err := Parse([]byte(strings.Replace(src, "exactly_once", "at_least_once", 1))); err != nil {
		t.Fatalf("at-least-once: %v", err)
	}
}

// TestStandbyReplicasMustNotBeNegative: standby_replicas becomes
// streams.NumStandbyReplicas; a negative count is rejected at load.
func TestStandbyReplicasMustNotBeNegative(t *testing.T) {
	src := `name: counts
input: {topics: [in]}
pipeline:
  - aggregate: {n: count}
output: {topic: out}
standby_replicas: -1
`
	_, err := Parse([]byte(src))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "NumStandbyReplicas -1 is negative") {
		t.Fatalf("err = %v, want a standby replicas error", err)
	}
	j, err := Parse([]byte(strings.Replace(src, "-1", "2", 1)))
	if err != nil || j.Spec.StandbyReplicas != 2 {
		t.Fatalf("standby_replicas 2: %v", err)
	}
}
