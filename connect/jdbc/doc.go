// Package jdbc holds the JDBC connectors, jdbc-source and jdbc-sink, with
// the settings and behaviour of Confluent's kafka-connect-jdbc (their
// Confluent class names are registered as aliases). They speak PostgreSQL
// through database/sql and pgx, and SQLite through modernc.org/sqlite;
// connection.url takes jdbc:postgresql://..., jdbc:sqlite:path or a native
// DSN.
//
// # jdbc-source
//
// The connector lists the tables (table.include.list/table.whitelist,
// table.exclude.list/table.blacklist) and deals them out round-robin to the
// tasks; every task also learns which tables were dealt, and a table
// created later is taken by the task whose index is the table name's FNV
// hash modulo the task count. Tasks list the tables again every
// table.poll.interval.ms. With query, one task runs the query, wrapped as
// SELECT * FROM (query) strata_q WHERE ....
//
// A task reads each table with one query per Poll, of at most
// batch.max.rows rows (LIMIT), read whole and closed before Poll returns:
// no cursor, and so no connection (SQLite's only one), is held between
// Polls. The next query runs at once when one filled its LIMIT, else
// poll.interval.ms later:
//
//	bulk                    SELECT * FROM t [ORDER BY pk] LIMIT n OFFSET k
//	incrementing            ... WHERE id > :id ORDER BY id LIMIT n
//	timestamp               ... WHERE ts < :upper AND ts > :ts ORDER BY ts, pk LIMIT n
//	timestamp+incrementing  ... WHERE ts < :upper AND (ts, id) > (:ts, :id)
//	                            ORDER BY ts, id LIMIT n
//
// A bulk pass pages through the table (ordered by the primary key when
// there is one; without one, PostgreSQL does not promise a stable order
// between pages). In timestamp mode alone the offset only moves to a
// timestamp T once every row stamped T was returned: a record carries the
// last timestamp completed before it, a result cut by its LIMIT leaves the
// rows of its last timestamp for the next query, and when more rows share
// one timestamp than a query returns they are paged, WHERE ts = T AND
// pk > :last ORDER BY pk LIMIT n for a one-column integer primary key (rows
// updated or deleted meanwhile cannot shift the pages), else LIMIT n OFFSET
// k in key order (without a key: ctid on PostgreSQL, rowid on SQLite, no
// order for query), with their position kept in the offset (strata.group.* keys, which
// Confluent's reader ignores). So a restart never skips rows that share a
// timestamp; it may repeat some.
//
// ts is the timestamp column, or COALESCE of several. :upper is the
// database's clock (SELECT CURRENT_TIMESTAMP, never the worker's) minus
// timestamp.delay.interval.ms, so a transaction that commits up to that
// long after stamping its rows is not skipped.
//
// Records: the value is a Struct of every column (Connect types: int8 to
// int64, float, double, boolean, string, bytes; NUMERIC per
// numeric.mapping as Decimal (*big.Rat values) or int/double; date, time,
// timestamp and timestamptz as the Date, Time and Timestamp logical types
// with time.Time values in UTC). The key is a Struct of the primary key's
// columns (none for tables without one, and for query). The topic is
// topic.prefix + table (query: topic.prefix). The source partition is
// {"table": name} or {"query": "query"}; the offset is {"incrementing": id}
// and/or {"timestamp": ms since the epoch, "timestamp_nanos": nanoseconds
// within that second}, Confluent's keys. A restarted task resumes after the
// last committed row: nothing missed or repeated in incrementing and
// timestamp+incrementing modes; nothing missed in timestamp mode (rows
// sharing the last committed timestamp may come again).
//
// # Time zones
//
// timestamptz values are instants and need no zone. A timestamp without
// time zone is a wall-clock reading; the connector reads it in db.timezone
// (default UTC) to make the record's instant, and :upper is the database's
// clock converted to db.timezone, the zone the column is written in, so the
// bound and the comparison use the same zone. When db.timezone has no DST
// (UTC, fixed offsets) such columns are compared as wall-clock readings of
// their own type (an index on the column serves) and offsets hold the
// reading. When it has DST (PostgreSQL), they are compared as instants,
// (ts AT TIME ZONE db.timezone), and offsets hold instants: the autumn hour
// that repeats on the wall clock would otherwise sort the rows written in
// its second pass before rows already read and skip them; PostgreSQL reads
// an ambiguous time as the later instant, so those rows come late, never
// lost. For PostgreSQL a task refuses to start (ErrConfig, naming the
// setting to use) when one of its tables (or the query) has such a column,
// in any mode, and db.timezone and the database's TimeZone setting differ
// over six years of instants around now: a mismatch would shift values by
// hours and make the delay meaningless. SQLite has no server zone; its
// CURRENT_TIMESTAMP is UTC, the default, and its timestamps are compared
// as strftime('%Y-%m-%d %H:%M:%f', ...) readings (milliseconds) of the text
// or, for integer and real values, of the Unix epoch in seconds; keep them
// in UTC. A table whose timestamp column holds a value SQLite cannot read
// as a time fails the task at start (ErrConfig) rather than having its rows
// skipped silently; rows whose timestamp columns are all NULL are not read
// in the timestamp modes, as in Confluent's connector.
//
// # jdbc-sink
//
// Put buffers records and Flush writes them in one transaction, returning
// after it committed; the runtime commits consumer offsets only after
// Flush, so only after the database has the rows. A Flush that fails with
// a non-retriable error (a constraint violation) drops the buffer, so under
// errors.tolerance=all the runtime writes the batch again one record at a
// time and dead-letters only the failing ones (past max(10 × batch.size,
// 50000) buffered records Put writes and commits early, still before those
// offsets are committed). Consecutive records of the same table and column
// set become multi-row INSERT statements of batch.size rows, with ON
// CONFLICT (pk) DO UPDATE in upsert mode (the last record of a key within a
// statement wins); update mode and deletes run one prepared statement per
// row, in record order. pk.mode none, kafka (__connect_topic,
// __connect_partition, __connect_offset), record_key or record_value picks
// the key columns; table.name.format replaces ${topic}; auto.create creates
// the table from the value schema with the key as PRIMARY KEY; auto.evolve
// adds columns for new optional fields; delete.enabled turns a tombstone
// into DELETE by the record key. Timestamps are written as instants to
// timestamptz columns and as wall-clock readings in db.timezone to
// timestamp columns (which auto.create makes, as Confluent's sink does); an
// instant written to a DATE column takes its date in db.timezone. Column
// names are quoted whole (a column "a.b" stays one column); only table names
// split into schema.table.
package jdbc
