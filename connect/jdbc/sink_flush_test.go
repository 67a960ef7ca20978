package jdbc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/strata-streaming/strata/connect"
)

// TestSinkFlushFailureForgetsBuffer: after a Flush fails with a
// non-retriable error (a constraint violation) the task forgets the failed
// records, as connect.SinkTask asks, so the runtime can write them again
// one at a time and the good ones land; the transaction left nothing.
func TestSinkFlushFailureForgetsBuffer(t *testing.T) {
	url, db := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT UNIQUE, balance NUMERIC, joined TEXT)`)
	task := startSink(t, connect.Config{"connection.url": url, "topics": "people", "insert.mode": "insert",
		"pk.mode": "record_key", "table.name.format": "people"})
	batch := []connect.SinkRecord{person("people", 0, 1, "ann", 1), person("people", 1, 2, "ann", 2), person("people", 2, 3, "cy", 3)}
	ctx := context.Background()
	if err := task.Put(ctx, batch); err != nil {
		t.Fatal(err)
	}
	err := task.Flush(ctx)
	var re *connect.RetriableError
	if err == nil || errors.As(err, &re) {
		t.Fatalf("Flush with a unique violation: %v, want a non-retriable error", err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM people`); n != 0 {
		t.Fatalf("%d rows after a failed flush", n)
	}
	// What the runtime does under errors.tolerance=all.
	var failed []int64
	for i := range batch {
		if err := task.Put(ctx, batch[i:i+1]); err != nil {
			t.Fatal(err)
		}
		if err := task.Flush(ctx); err != nil {
			failed = append(failed, batch[i].Offset)
		}
	}
	if fmt.Sprint(failed) != "[1]" {
		t.Fatalf("failed offsets %v, want [1]", failed)
	}
	if got := names(t, db, "people"); fmt.Sprint(got) != "map[1:ann 3:cy]" {
		t.Fatalf("rows %v", got)
	}
}
