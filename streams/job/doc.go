// Package job compiles and runs declarative stream jobs: a YAML file with
// input topics and format, a pipeline of operators whose expressions are
// evaluated by github.com/expr-lang/expr, the output and the guarantee.
//
//	name: big-orders
//	input: {topics: [orders], format: json}     # or pattern: '^orders-.*'; format json|string|bytes|avro|protobuf|json_schema
//	pipeline:
//	  - filter: value.amount > 100
//	  - map: '{"id": value.id, "amount": value.amount, "customer": upper(value.customer)}'
//	  - key: value.customer
//	  - flat_map: value.items                  # any list: value.items, split(value.tags, ","), 1..3
//	  - drop_fields: [secret]
//	  - rename: {sku: product}
//	  - set_header: {source: topic}
//	  - timestamp: value.created_at         # event time: epoch ms, RFC 3339 or a time (date(…))
//	  - branch:                                # first matching case wins
//	      - when: value.qty >= 10
//	        to: bulk
//	      - default: small                     # optional; without it, unmatched records go on
//	output: {topic: big-orders, format: json}
//	guarantee: exactly_once                    # or at_least_once (default)
//	errors: {mode: dead_letter, topic: orders-dlq}   # or skip, or fail (default)
//	commit_interval: 100ms                     # optional
//	standby_replicas: 1                        # optional; stateful jobs: standby copies per task (default 0)
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
//
// # Stateful steps: group_by, window, aggregate
//
//	pipeline:
//	  - filter: value.amount != nil
//	  - group_by: value.customer       # optional; default: group by the current key
//	  - window:                        # optional
//	      tumbling: 1m                 # or hopping: {size: 5m, advance: 1m}, sliding: 1m, or session: {gap: 30m}
//	      grace: 10s                   # optional, default 0s: how late a record may be
//	      emit: final                  # optional: one result per window once it closes;
//	                                   # default updates: a result per record
//	      retention: 1h                # optional: keep windows in the store (for queries) this
//	                                   # long past their end; default and minimum size + grace
//	                                   # (sliding 2 × size + grace); not for sessions
//	  - aggregate:                     # named outputs, each one function
//	      orders: count                # records; {count: EXPR} counts non-null values
//	      total: {sum: value.amount}
//	      smallest: {min: value.amount}
//	      biggest: {max: value.amount}
//	      mean: {avg: value.amount}
//	      last_item: {latest: value.item}
//	      items: {collect: value.item}
//	  - filter: value.orders > 1       # only filter and map may follow an aggregate
//
// The steps come in that order: group_by right before window or aggregate,
// window right before aggregate, one of each; anything else is rejected
// when the job loads with a one-line error naming the step, its YAML line
// and column (as are unknown functions, window keys and emit values, bad
// durations, a hopping advance longer than its size, and an output named
// window_start or window_end in a windowed job). A join step (below) may
// come anywhere before them.
//
// They map onto the library's stateful DSL: group_by sets the key (the
// stage "step N (group_by)") and streams.GroupByKey then repartitions
// through <application id>-<group_by step name>-repartition; without
// group_by, records are grouped by their key, through
// <application id>-<aggregate step name>-group-repartition only when the
// key may have changed (after a key, flat_map or set_header step) or the input is a pattern
// or several topics. A record whose group key is null is an error of the
// aggregate step (the error mode applies). The aggregate's expressions are
// evaluated before grouping, on the whole record (value, key, headers,
// timestamp, ...), and only their results cross the repartition topic, as
// JSON. window becomes TumblingWindows, HoppingWindows, SlidingWindows
// (windows [t − size, t] ending at each record and [t + 1 ms, t + 1 ms +
// size] starting just after it, both ends inclusive) or SessionWindows
// with Grace (and Retention) over the record timestamps (a session's window_start and
// window_end are its first and last click's timestamps; when a record
// joins two sessions their states merge: counts, sums and averages add,
// min and max compare, collect concatenates) (late records are dropped and counted in
// strata_stream_late_dropped_total), emit: final becomes
// Suppress(UntilWindowCloses()).
//
// The state of a group (per window) is a JSON object kept in the state
// store named after the aggregate step (its name, default "aggregate";
// changelog <application id>-<name>-changelog, and -suppress- for the
// final-results buffer): count and sum a number, min, max and latest the
// value or null, collect a list, avg {"sum", "count"}. Step names that
// name topics must be letters, digits, '.', '_' or '-'. Numbers are
// float64 (an int64 beyond 2^53 loses precision); null values are left out
// of every function but latest and a bare count; a value sum, min, max or
// avg cannot read as a number is an error of the aggregate step, found
// before grouping, so a dead letter is the input record. latest is
// the last record processed (offset order within a partition), not the
// latest timestamp. collect keeps every value of its group or window:
// mind its size for large groups and long windows.
//
// Each result is a record keyed by the group key (a string) whose value is
// a JSON object of the outputs (counts: integers; avg: the mean, null
// before a value), with
// window_start and window_end (epoch milliseconds, like record timestamps
// and ksqlDB's WINDOWSTART; the window is [start, end)) when windowed;
// filter and map after the aggregate see that key and value:
//
//	key "ann", value {"orders": 2, "total": 14.5, "items": ["tea", "cup"], "window_start": 1796410260000, "window_end": 1796410320000}
//
// The output format applies to it as to any value (json by default; with
// avro, counts and window bounds fit long fields, sums and averages double).
// Outputs added to a running job's aggregate start from the next record of
// each group; start a job whose state must be recomputed under a new
// application_id.
//
// # Joins
//
// A join step enriches each record with the current value of a table:
//
//	pipeline:
//	  - join:
//	      table: customers             # a topic read as a table: string keys, JSON values
//	      type: left                   # inner (default): drop records the table lacks;
//	                                   # left: keep them, the field null
//	      as: customer                 # optional, default the table's name
//	      key: value.customer_id       # optional: join on this instead of the key
//	  - map: '{"id": value.id, "name": value.customer?.name}'
//
// The record's value, which must be a JSON object (anything else is an
// error of the join step), gets the table's value for the record's key
// under the field as (replacing a field of that name). The table is streams.TableFrom over the topic, kept
// in the store table-<topic> (changelog <application id>-table-<topic>-changelog);
// a table record is the key's new value, a tombstone deletes it. A table
// update is seen by the records processed after it and never re-emits
// earlier ones (streams.JoinTable, LeftJoinTable). With key, or when the
// key may have changed before the join (after a key, flat_map or
// set_header step) or the input is a pattern or several topics, records
// first go through <application id>-<join step name>-repartition. The
// record's topic and the table topic must be co-partitioned: the same
// number of partitions (a repartition topic gets the broker's default, or
// streams.RepartitionPartitions), keyed alike; Run checks the counts and
// fails with streams.ErrNotCoPartitioned. Rejected at load, with line and
// column: an unknown join type or key, no table, a join after an
// aggregate, the output topic being a joined table, and two steps that
// name topics or stores (join, group_by, aggregate) with one name: a
// second join needs a name of its own (name: ...).
//
// With stream instead of table, the join is windowed (streams.JoinStreams,
// LeftJoinStreams):
//
//	pipeline:
//	  - join: {stream: payments, within: 5m, grace: 1m, type: left, as: payment}
//
// Each record gets, one output per pair, the value of every record of the
// other topic (string keys, JSON values, co-partitioned as above) with the
// same key whose timestamp is at most within before or after its own;
// left also emits each record that met none, with the field null, once
// stream time passes its timestamp + within + grace. Records later than
// grace are dropped and counted. Both sides wait in window stores named
// <join step name>-left and -right (changelogged). The other topic may
// not be an input topic, and within goes only with stream.
//
// # Schema registry formats
//
// Formats avro, protobuf and json_schema read and write values in
// Confluent's wire format (a 0 byte, the schema id, for Protobuf the
// message indexes, the payload) with the schemas of a Confluent-compatible
// registry: Strata's own (strata server --set schema.registry.enable=true)
// or Confluent's. One registry serves the job's input and output:
//
//	schema_registry:
//	  url: http://127.0.0.1:8081   # default: $STRATA_SCHEMA_REGISTRY_URL
//	  basic_auth: user:password    # optional; default: $STRATA_SCHEMA_REGISTRY_BASIC_AUTH
//	                               # (or user info in the URL)
//	input: {topics: [orders], format: avro}
//	output:
//	  topic: big-orders
//	  format: avro                 # or protobuf, json_schema
//	  schema: schemas/big-order.avsc   # the schema's text, or a file (relative to the job file)
//	  schema_type: avro            # optional; must agree with format
//	  # or, instead of schema:  use_latest_version: true
//
// Parse checks these without the network: a registry format needs a URL,
// the output needs schema or use_latest_version (not both), schema_type
// must match format, and the schema must parse. Only values use the
// registry; keys stay as they are for every format (strings in, encoded by
// type out), and there is no key format.
//
// Input: each record's schema is fetched by the id it carries (once per
// id, registry/serde's cache) and the value decoded to what expressions
// see for JSON: map[string]any, []any, string, bool, nil, numbers. Avro
// int and long are int64, float and double float32 and float64; bytes and
// fixed are []byte; enums their symbol; a union with one non-null branch
// its bare value, other unions {"branch": value}; logical types their
// stored number (date: days, timestamp-millis: ms, timestamp-micros and
// time-micros: µs, all int64) except decimal, a float64. JSON Schema
// numbers are float64. Protobuf values are protojson's rendering: field
// names in lowerCamelCase, fields holding their default value left out
// (value.x is then nil), int64, uint64 and their fixed kinds as strings
// (compare with int(value.id)), enums by name, bytes as base64 strings,
// other numbers float64. A tombstone (no value) is nil. A record without
// the wire format's header, with an id the registry does not know, or
// whose payload does not decode is a deserialize error of stage "input":
// the error mode applies (dead_letter writes it unchanged). A registry
// that cannot be reached, or answers 5xx, is not the record's fault: the
// error wraps streams.ErrRetriable and the run stops whatever the error
// mode, the record uncommitted: `strata streams run` exits with the error,
// the server's --jobs-dir restarts the job (RunWithRestarts), and either
// way the record is read again.
//
// Output: the value is encoded (registry/serde.Encode) with the schema of
// subject <topic>-value (TopicNameStrategy) for the output topic and for
// every branch target. At the start of every run, before the job joins
// its group, Prepare registers the job's schema under each subject, as
// Confluent's serializers do with auto.register.schemas (registering the
// same schema again is a no-op), or with use_latest_version fetches each
// subject's latest version. An incompatible schema (the registry's
// message, error_code 409), a subject without versions or an unreachable
// registry stops that run with an error wrapping ErrSchemaRegistry. A value
// that does not fit the schema (a missing field without default, a wrong
// type, a null where the schema has none) is a serialize error of the
// output stage and goes to the error mode like any failed record. Protobuf
// writes the schema's first message, taking field names as in the .proto
// or in lowerCamelCase and 64-bit integers as numbers or strings; a nil
// value is written as a tombstone.
package job
