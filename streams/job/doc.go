// Package job compiles and runs declarative stream jobs: a YAML file with
// input topics and format, a pipeline of operators whose expressions are
// evaluated by github.com/expr-lang/expr, the output and the guarantee.
//
//	name: big-orders
//	input: {topics: [orders], format: json}     # or pattern: '^orders-.*'; format json|string|bytes
//	pipeline:
//	  - filter: value.amount > 100
//	  - map: '{"id": value.id, "amount": value.amount, "customer": upper(value.customer)}'
//	  - key: value.customer
//	  - flat_map: value.items                  # any list: value.items, split(value.tags, ","), 1..3
//	  - drop_fields: [secret]
//	  - rename: {sku: product}
//	  - set_header: {source: topic}
//	  - branch:                                # first matching case wins
//	      - when: value.qty >= 10
//	        to: bulk
//	      - default: small                     # optional; without it, unmatched records go on
//	output: {topic: big-orders, format: json}
//	guarantee: exactly_once                    # or at_least_once (default)
//	errors: {mode: dead_letter, topic: orders-dlq}   # or skip, or fail (default)
//	commit_interval: 100ms                     # optional
//	application_id: big-orders                 # optional; default: name
//
// Expressions see value (decoded JSON: map[string]any, []any, string,
// float64, bool, nil), key (string or nil), headers (map of strings),
// topic, partition, offset and timestamp. Every expression is compiled when
// the job loads (Parse, ParseFile): an error names the pipeline step, the
// YAML line and column of the fault and its column within the expression,
// and no job starts. A job that would read its own records is rejected the
// same way: an output, branch or errors topic that is an input topic or
// matches the input pattern. Each step becomes one operator of a streams.Topology
// named "step N (op)", the name dead-letter headers carry.
package job
