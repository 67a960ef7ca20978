// Package streams is Strata's stream-processing library: a typed DSL over
// Kafka topics in the spirit of Kafka Streams, run by an App that is only a
// Kafka client (franz-go), so jobs run anywhere a client runs — inside
// `strata server --jobs-dir`, as `strata streams run`, or in your program.
// Declarative YAML jobs (package streams/job) are built on it.
//
// # Building a topology
//
// Sources decode records with serdes (String, Bytes, Int64, JSON[T]):
//
//	t := streams.NewTopology()
//	orders := streams.From(t, streams.String, streams.JSON[Order](), []string{"orders"})
//	big := orders.Filter(func(_ string, o Order) (bool, error) { return o.Amount > 100, nil })
//	byCustomer := streams.SelectKey(big, func(_ string, o Order) (string, error) { return o.Customer, nil })
//	byCustomer.To("big-orders", streams.String, streams.JSON[Order]())
//
// Operators that keep the key and value types are methods (Filter,
// FilterNot, FilterRecord, Peek, Foreach, Split, Merge, Repartition, To,
// ToTopicFunc); those that change a type are functions, because Go methods
// cannot add type parameters (Map, MapValues, MapRecord, FlatMap,
// FlatMapValues, SelectKey, Transform). Headers and timestamps carry
// through every operator. Every user function may return an error.
//
// # Running it
//
//	app, err := streams.NewApp(t,
//		streams.Brokers("127.0.0.1:9092"),
//		streams.ApplicationID("big-orders"),
//		streams.WithGuarantee(streams.ExactlyOnceV2),
//		streams.OnError(streams.ErrorDeadLetter), streams.DeadLetterTopic("orders-dlq"))
//	err = app.Run(ctx) // until ctx is cancelled; then flush, commit, leave
//
// The application id is the consumer group: every instance started with it
// shares the input partitions. One goroutine per App processes one fetch at
// a time, so the records of a partition are processed in order; outputs are
// produced asynchronously in batches. The client asks the brokers to
// auto-create missing topics (auto.create.topics.enable decides), which
// covers output, branch and dead-letter topics; create input topics first
// when their partition count matters.
//
// A FromRegex source never reads the topics the topology writes itself (To
// sinks, the dead-letter topic, repartition topics), so a pattern that also
// matches them cannot loop; topics chosen at run time by ToTopicFunc are
// not known in advance and are not excluded.
//
// RunWithRestarts runs an App until its context is done, running it again
// after an error with a delay doubling from a minimum to a maximum
// (strata server uses 1s to 30s for --jobs-dir jobs); Stats.Restarts
// counts the restarts.
//
// # Guarantees
//
// AtLeastOnce: offsets are committed every CommitInterval (default 5s),
// before partitions are revoked, and at shutdown, always after Flush has
// delivered every record produced from the records being committed. A
// crash reprocesses the uncommitted tail (duplicates, never loss). After a
// produce failure the App commits nothing more and Run returns the error.
//
// ExactlyOnceV2: a kgo.GroupTransactSession with transactional id
// <application id>-<instance id>; a transaction spans up to CommitInterval
// (default 100ms) of fetches, and commits the outputs and the input offsets
// together (KIP-447, fenced by the group generation). A rebalance, produce
// failure or fencing aborts it and the consumer rewinds to the committed
// offsets. A permanent produce failure (a non-retriable broker error such
// as MESSAGE_TOO_LARGE, an authorization failure or an invalid topic), or
// MaxProduceAborts transactions in a row aborted by retriable ones, ends
// Run with an error wrapping ErrProduce. CommitInterval must be shorter
// than TransactionTimeout. A killed instance's open transaction is aborted by the broker
// after TransactionTimeout, or at once when an instance with the same
// InstanceID starts. Consumers of the output must read with read_committed.
//
// # Errors
//
// A record that fails to deserialise, whose operator returns an error or
// panics, or that fails to serialise, is a StageError naming the stage
// (Named, or "<kind>-<n>"). OnError picks ErrorFail (default: Run returns an
// error wrapping ErrProcessing and the record's offset is not committed),
// ErrorSkip, or ErrorDeadLetter: the input record goes unchanged to the
// dead-letter topic with headers strata.error.stage, .kind, .message,
// .topic, .partition and .offset (in the same transaction under
// exactly-once). A record's outputs are released only when all its stages
// succeeded.
//
// # State: aggregations and windows
//
// GroupByKey (or GroupBy, which re-keys) groups a stream; Count, Reduce and
// Aggregate fold each key's records into a Table, whose ToStream emits
// every update. WindowedBy cuts the groups into TumblingWindows,
// HoppingWindows or SlidingWindows (Kafka's, defined by the records) over
// record timestamps, with Grace for out-of-order
// records (SessionWindowedBy into SessionWindows, merged when a record
// bridges them); keys become Windowed[K] (WindowedSerde writes the key bytes and
// the start and end as 8-byte Unix milliseconds). A record later than its
// window's end plus grace in stream time (the largest timestamp the
// aggregation has seen in that partition) is dropped and counted in
// Stats.LateDropped. Suppress(UntilWindowCloses()) emits one final result
// per window instead of every update. A window leaves the store once
// stream time passes its end by the retention (default size + grace;
// Retention(d) keeps it queryable longer).
//
//	counts := streams.WindowedBy(clicks.GroupByKey(streams.String, streams.JSON[Click]()),
//		streams.TumblingWindows(time.Minute).Grace(10*time.Second)).Count(streams.Named("clicks-per-minute"))
//	counts.Suppress(streams.UntilWindowCloses()).ToStream().
//		To("clicks-per-minute", streams.WindowedSerde(streams.String), streams.Int64)
//
// Each aggregation keeps a state store: one pebble database per input
// partition (a task) under StateDir, written to the compacted changelog
// topic <application id>-<store>-changelog (created by the App with the
// input's partition count) among the record's outputs, so under
// exactly-once store writes, outputs and input offsets commit in one
// transaction. A store applies a commit period's writes only after the
// commit (exactly-once: after the transaction committed), together with
// the changelog offset they reach, so a partition's store is restored on
// assignment by replaying its changelog from that offset (read_committed
// under exactly-once); a crash or a deleted state directory costs a
// restore, never a wrong count. Grouping a stream whose keys may have
// changed, or that does not come from exactly one fixed topic, goes through
// a repartition topic first, as in Kafka Streams.
//
// The group leader places tasks with their state (balancer.go): a member
// keeps the tasks it owns up to its fair share, and a task without an
// owner goes to the member whose local copy is furthest along its
// changelog. NumStandbyReplicas(n) keeps n standby copies of each task on
// other instances, tailing the changelog into local stores, so a task
// moving after a failure restores only the changelog's tail.
//
// # Tables and joins
//
// TableFrom reads a topic as a Table (a tombstone deletes its key),
// materialized in a store with its own changelog. Joins follow Kafka
// Streams: JoinTable and LeftJoinTable look each stream record up in the
// table as it is when the record is processed (later table updates do not
// re-emit it); JoinTables and LeftJoinTables join two tables into a table
// updated by both sides; JoinStreams, LeftJoinStreams and OuterJoinStreams
// pair the records of two streams whose timestamps are within JoinWindows
// (Before, After, Grace), buffering both sides in changelogged window
// stores and emitting unmatched outer results when their window closes.
// The inputs of a join must be co-partitioned (same partition count, keyed
// alike): Run fails with ErrNotCoPartitioned otherwise, and a stream whose
// keys changed must be Repartitioned first. Within a fetch, the records of
// a join's partitions p are processed in timestamp order. GlobalTableFrom
// reads a topic whole into every instance (restored before processing
// starts, then kept updated); JoinGlobal and LeftJoinGlobal look a key
// computed from each stream record up in it, with no co-partitioning.
// JoinTablesByForeignKey and LeftJoinTablesByForeignKey join each row of a
// table with the row of another table that a key extracted from it names
// (Kafka's KIP-213), through subscription topics, with no co-partitioning
// either (join_fk.go describes the protocol).
//
//	users := streams.TableFrom(t, streams.String, streams.JSON[User](), "users")
//	enriched := streams.LeftJoinTable(clicks, users, func(_ string, c Click, u *User) (View, error) {
//		return newView(c, u), nil // u is nil for unknown users
//	})
//
// # Interactive queries
//
// With QueryListen(addr) a running App serves its key-value stores (Count,
// Reduce, Aggregate, TableFrom) and windowed stores over HTTP, in JSON:
//
//	GET /v1/jobs/{job}/stores/{store}/keys/{key}                a key's value (404 if absent)
//	GET /v1/jobs/{job}/stores/{store}/keys?from=A&to=B&limit=N   keys A..B inclusive, in key-byte order
//	GET /v1/jobs/{job}/stores/{store}/keys/{key}/windows?from=T1&to=T2
//	                                                            windows starting in [T1, T2] (epoch ms or RFC 3339)
//
// Keys are parsed with the key serde (String as is, Int64 in decimal, Bytes
// in base64, JSON as JSON); values are rendered decoded (numbers, strings,
// base64 bytes, JSON). Only committed state is visible: what the last
// commit wrote, never the pending writes of a commit period. Any instance
// answers: a key's partition is computed as the App partitions (murmur2 of
// the key bytes), its owner found among the group members (each advertises
// its query address, AdvertisedQueryAddr, in its client id), and the
// request forwarded once; a partition no one has open answers 503 JSON with
// the owner's address. Range queries gather every member's partitions.
//
// # Testing and metrics
//
// TestDriver runs a topology in memory, like Kafka Streams'
// TopologyTestDriver (stores on an in-memory file system; Close it).
// Running Apps report Stats and register Prometheus
// series on the default registry: strata_stream_records_in_total,
// strata_stream_records_out_total, strata_stream_errors_total{outcome}
// (dead_letter, skip, fail), strata_stream_transactions_aborted_total,
// strata_stream_restarts_total, strata_stream_lag_records,
// strata_stream_late_dropped_total and the restore counters
// strata_stream_restored_records_total, _restored_bytes_total,
// _restore_seconds_total, _restores_total and the gauge
// strata_stream_restore_remaining_offsets, and for standbys
// strata_stream_standby_tasks, strata_stream_standby_records_total and
// strata_stream_standby_lag_offsets, all labelled by job. Per task, while
// the task is open here: strata_stream_task_store_size_bytes{store,partition}
// (pebble's disk space, refreshed at each commit),
// strata_stream_task_restore_remaining_records{store,partition} (changelog
// offsets still to replay; 0 once restored),
// strata_stream_task_late_dropped_total{topic,partition} and
// strata_stream_task_punctuation_lag_seconds{topic,partition}: wall-clock
// time minus the task's stream time whenever a windowed operator advances
// stream time and closes windows, i.e. how far behind the clock
// event-time results are emitted (a backlog, or producers' clocks and
// timestamps behind; never less than the records' own age).
package streams
