// Package connect is Strata's Kafka-Connect-compatible runtime: workers that
// share connectors and their tasks through a Kafka group, keep all their
// state in three compacted topics, serve Kafka Connect's REST API, and run
// the built-in file connectors (file.go) and any plugin registered with
// Register (the JDBC connectors in connect/jdbc). It is a Kafka client only
// (franz-go) and never imports the broker, so a worker runs inside
// `strata server` (connect.enable=true) or as `strata connect worker`.
//
// # Plugin API
//
// api.go: a Connector splits its configuration into task configurations;
// a SourceTask polls records with a source partition and offset; a SinkTask
// receives converted records (Put) and makes them durable (Flush). The
// runtime does everything else.
//
// # State: three compacted topics, Kafka Connect's formats
//
//	connect-configs (1 partition)          written by any worker (REST writes)
//	  connector-<name>          {"properties":{…}}                  null = deleted
//	  task-<name>-<n>           {"properties":{…}}                  written by the connector's owner
//	  commit-<name>             {"tasks":N}                         makes task-<name>-0…N-1 live
//	  target-state-<name>       {"state":…,"state.v2":"STARTED|PAUSED|STOPPED"}
//	  restart-connector-<name>  {"include-tasks":b,"only-failed":b}
//	  restart-task-<name>-<n>   {}
//
//	connect-offsets (25 partitions)        source offsets, one record per source partition
//	  ["<connector>",{<partition>}]  →  {<offset>}                  null = reset
//
//	connect-status (5 partitions)          written by the unit's owner
//	  status-connector-<name>, status-task-<name>-<n>
//	      {"state":"RUNNING|PAUSED|STOPPED|FAILED|UNASSIGNED","trace":…,"worker_id":"host:port","generation":g}
//	  topic-<topic>-connector-<name>   topics a connector used
//
// Every worker reads all three from the start (read_committed, so offsets
// written in an aborted exactly-once transaction never count) into a
// clusterState (state.go, pure). store.sync is the barrier "everything
// committed before now has been applied": REST handlers call it after a
// write, the group leader before assigning, a source task before reading
// its offsets.
//
// # Group membership (group.go)
//
// Workers of one group.id join a classic Kafka group with protocol type
// "connect". JoinGroup metadata is JSON {url, digest, units}: the digest
// summarises the connectors and tasks the worker knows of, units what it
// runs. The broker-elected leader syncs with the config topic and assigns
// every unit (each connector and each task) with assignUnits (assign.go):
// balanced, and sticky — a unit stays with the worker that runs it, so a
// rebalance moves only what must move. A worker whose digest changes
// (connector added, removed, task count changed) rejoins, which rebalances
// the group. A worker that dies stops heartbeating; the broker drops it
// after session.timeout.ms and the survivors share its units.
//
// Each assignment has an epoch that grows strictly even across a broker
// that forgot the group: the leader takes the maximum of the broker's
// generation, the members' last epochs + 1 and the status topic's highest
// generation + 1. Status records carry their writer's epoch for the unit,
// and readers drop a lower-epoch record from another worker, so a worker
// that lost a unit cannot overwrite its new owner's status.
//
// # Units (worker.go)
//
// reconcile makes the running units match the assignment and the config
// topic: a connector unit starts the Connector, publishes its task configs
// when they changed and reports RUNNING/PAUSED; a task unit runs a source
// or sink task (task_source.go, task_sink.go). A unit restarts when its
// configuration, target state or a restart request (newer than the unit)
// says so. STOPPED writes an empty task set (commit-<name> {"tasks":0}).
//
// # Delivery
//
// Sources: at least once, offsets flushed every offset.flush.interval.ms
// (default 5 s) and when the task stops. Records are produced with a
// context the task's cancellation does not reach, and each record's
// acknowledgement is tracked: an offset is written only when its record and
// every earlier record of the same source partition were acknowledged; a
// failed record (of any error) blocks its partition's offsets and fails the
// task. SourceRecord.Partition, when set, picks the Kafka partition;
// otherwise the key's murmur2 hash (sticky batches for keyless records).
// With exactly.once.source.support=enabled each poll batch and its offsets
// are one transaction (transactional.id <group.id>-<connector>-<task>).
// Sinks: consumer group connect-<connector>; Put, Flush, then commit, per
// poll batch. A RetriableError from Poll, Put or Flush is retried with
// backoff (100 ms doubling to min(errors.retry.delay.max.ms, 10 s)) until
// the task stops, as Kafka Connect does, and never dead-lettered; other
// errors go through errors.tolerance (errors.go): under all, a failed Put
// or Flush batch is replayed one record at a time and only the failing
// records are dead-lettered. Stopping units (rebalance, config change,
// Close) waits at most task.shutdown.graceful.timeout.ms (default 5 s) for
// all of them together; a unit that ignores its context is then abandoned
// with an error log line.
//
// # REST API (rest.go)
//
// Kafka Connect's paths, payloads and status codes; errors are
// {"error_code":…,"message":…}. Any worker answers any request: reads come
// from its clusterState, writes are config-topic records; nothing is
// forwarded.
package connect
