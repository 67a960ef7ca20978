package jdbc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-streaming/strata/connect"
	"github.com/strata-streaming/strata/internal/pgtest"
)

// TestDatabaseGoneIsRetriable stops the PostgreSQL server under a running
// source task and sink task: Poll and Flush fail with *connect.RetriableError
// (the runtime retries), while a bad statement stays a permanent error.
func TestDatabaseGoneIsRetriable(t *testing.T) {
	server := pgtest.Start(t)
	db := server.Open(t)
	mustExec(t, db, `CREATE TABLE t (id serial PRIMARY KEY, name text)`)
	mustExec(t, db, `INSERT INTO t (name) VALUES ('a')`)
	source := startSource(t, connect.Config{"connection.url": server.DSN, "mode": "incrementing",
		"incrementing.column.name": "id", "poll.interval.ms": "10"}, newOffsetStore())
	pollUntil(t, source, 5*time.Second, func(r []connect.SourceRecord) bool { return len(r) == 1 })
	sink := startSink(t, connect.Config{"connection.url": server.DSN, "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"})
	putFlush(t, sink, []connect.SinkRecord{person("people", 0, 1, "a", 1)})

	// A permanent error first: a value that does not fit the column.
	mustExec(t, db, `CREATE TABLE strict (id bigint PRIMARY KEY, name varchar(2), balance numeric, joined timestamp)`)
	strict := startSink(t, connect.Config{"connection.url": server.DSN, "insert.mode": "upsert", "pk.mode": "record_key"})
	strict.Put(context.Background(), []connect.SinkRecord{person("strict", 0, 1, "too long", 1)})
	var retriable *connect.RetriableError
	if err := strict.Flush(context.Background()); err == nil || errors.As(err, &retriable) {
		t.Fatalf("value too long: %v, want a permanent error", err)
	}

	db.Close()
	if err := server.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = source.Poll(ctx)
	}
	if !errors.As(err, &retriable) {
		t.Fatalf("Poll with the database gone: %v (%T), want *connect.RetriableError", err, err)
	}
	sink.Put(ctx, []connect.SinkRecord{person("people", 1, 2, "b", 1)})
	if err := sink.Flush(ctx); !errors.As(err, &retriable) {
		t.Fatalf("Flush with the database gone: %v, want *connect.RetriableError", err)
	}
}

// TestCachedPlanChangedIsRetriable: after ALTER TABLE, PostgreSQL refuses
// the statement pgx prepared before it; pgx drops that statement, so the
// error is retriable (the integration test is
// TestRuntimeAvroRoundTripEvolution's ADD COLUMN mid-stream).
func TestCachedPlanChangedIsRetriable(t *testing.T) {
	err := classify(fmt.Errorf("jdbc: querying table t: %w",
		&pgconn.PgError{Code: "0A000", Message: "cached plan must not change result type"}))
	var retriable *connect.RetriableError
	if !errors.As(err, &retriable) {
		t.Fatalf("%v: want *connect.RetriableError", err)
	}
	other := classify(&pgconn.PgError{Code: "0A000", Message: "feature not supported"})
	if errors.As(other, &retriable) {
		t.Fatalf("%v: another 0A000 is permanent", other)
	}
}
