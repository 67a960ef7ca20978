package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// TestSourceNoCursorAcrossPolls: with SQLite's single connection, a Poll
// that returns exactly batch.max.rows rows must not leave its result open,
// or the next Poll's table listing (or another table's query) waits for
// the connection forever.
func TestSourceNoCursorAcrossPolls(t *testing.T) {
	for _, mode := range []string{modeBulk, modeIncrementing, modeTimestamp, modeTimestampIncrementing} {
		t.Run(mode, func(t *testing.T) {
			url, db := sqliteDatabase(t)
			for _, tbl := range []string{"a", "b"} {
				mustExec(t, db, `CREATE TABLE `+tbl+` (id INTEGER PRIMARY KEY, ts TEXT NOT NULL)`)
				for i := 1; i <= 5; i++ {
					mustExec(t, db, `INSERT INTO `+tbl+` (id, ts) VALUES (?, ?)`, i, fmt.Sprintf("2024-01-01 00:00:0%d.000", i))
				}
			}
			task := startSource(t, connect.Config{"connection.url": url, "mode": mode,
				"incrementing.column.name": "id", "timestamp.column.name": "ts", "topic.prefix": "x-",
				"batch.max.rows": "2", "table.poll.interval.ms": "100", "poll.interval.ms": "60000"}, newOffsetStore())
			got := map[string]int{}
			deadline := time.Now().Add(10 * time.Second)
			for got["x-a"] < 5 || got["x-b"] < 5 {
				if time.Now().After(deadline) {
					t.Fatalf("rows after 10s: %v, want 5 per table", got)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				start := time.Now()
				recs, err := task.Poll(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if time.Since(start) > 2*time.Second {
					t.Fatalf("a Poll hung for %s (rows so far %v)", time.Since(start), got)
				}
				if len(recs) > 2 {
					t.Fatalf("%d records in one Poll, batch.max.rows is 2", len(recs))
				}
				time.Sleep(110 * time.Millisecond) // let table.poll.interval.ms pass: every Poll lists the tables
				for _, r := range recs {
					got[r.Topic]++
				}
			}
			if got["x-a"] != 5 || got["x-b"] != 5 {
				t.Fatalf("rows %v, want exactly 5 per table", got)
			}
		})
	}
}

// TestSourceTimestampTiesAcrossStop: in timestamp mode, rows that share a
// timestamp and are split across Polls must all arrive after a stop in the
// middle of them (ts > offset would skip the rest if the offset had already
// moved to their timestamp). More rows share one timestamp than fit in a
// Poll, too.
func TestSourceTimestampTiesAcrossStop(t *testing.T) {
	backends := []struct {
		name   string
		open   func(testing.TB) (string, *sql.DB)
		create string
	}{
		{"sqlite", sqliteDatabase, `CREATE TABLE t (id INTEGER PRIMARY KEY, ts TEXT NOT NULL)`},
		{"postgres", pgDatabase, `CREATE TABLE t (id bigint PRIMARY KEY, ts timestamp NOT NULL)`},
		{"postgres-nokey", pgDatabase, `CREATE TABLE t (id bigint NOT NULL, ts timestamp NOT NULL)`},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { testTimestampTies(t, be.open, be.create) })
	}
}

func testTimestampTies(t *testing.T, open func(testing.TB) (string, *sql.DB), create string) {
	url, db := open(t)
	mustExec(t, db, create)
	stamps := []string{"2024-01-01 00:00:01.000", "2024-01-01 00:00:02.000", "2024-01-01 00:00:03.000"}
	counts := []int{2, 7, 3} // 7 rows of one timestamp: more than batch.max.rows
	id := 0
	for i, s := range stamps {
		for j := 0; j < counts[i]; j++ {
			id++
			mustExec(t, db, fmt.Sprintf(`INSERT INTO t (id, ts) VALUES (%d, '%s')`, id, s))
		}
	}
	cfg := connect.Config{"connection.url": url, "mode": modeTimestamp, "timestamp.column.name": "ts",
		"topic.prefix": "x-", "batch.max.rows": "3", "poll.interval.ms": "50"}
	seen := map[int64]bool{}
	offsets := newOffsetStore()
	// Stop after every single Poll; on every other one, as if only its
	// first record had been acknowledged, commit that one alone.
	for round := 0; round < 40 && len(seen) < id; round++ {
		task := startSource(t, cfg, offsets)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		recs, err := task.Poll(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if round%2 == 0 && len(recs) > 1 {
			recs = recs[:1]
		}
		for _, r := range recs {
			seen[idOf(t, r)] = true
		}
		offsets.commit(t, recs)
		task.Stop()
	}
	for i := 1; i <= id; i++ {
		if !seen[int64(i)] {
			t.Fatalf("row %d never arrived across stops (seen %d of %d)", i, len(seen), id)
		}
	}
	// Caught up: the committed offset is the newest timestamp, and a
	// restarted task reads nothing again.
	task := startSource(t, cfg, offsets)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	recs, err := task.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Fatalf("%d rows read again after catching up", len(recs))
	}
}

// TestSourceSQLiteEpochTimestamps: integer and real Unix epochs in a SQLite
// timestamp column are read (strftime alone reads them as NULL and the rows
// were never emitted); a value that is no time at all fails the task
// instead of being skipped silently.
func TestSourceSQLiteEpochTimestamps(t *testing.T) {
	url, db := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE ev (id INTEGER PRIMARY KEY, at TIMESTAMP NOT NULL)`)
	mustExec(t, db, `INSERT INTO ev (id, at) VALUES (1, 1700000000), (2, 1700000001.5), (3, '2023-11-14 22:13:22')`)
	cfg := connect.Config{"connection.url": url, "mode": modeTimestamp, "timestamp.column.name": "at",
		"topic.prefix": "x-", "batch.max.rows": "10", "poll.interval.ms": "50"}
	task := startSource(t, cfg, newOffsetStore())
	recs := pollUntil(t, task, 5*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 3 })
	want := []int64{1, 2, 3}
	for i, r := range recs {
		if idOf(t, r) != want[i] {
			t.Fatalf("record %d is id %d, want %d (order by time)", i, idOf(t, r), want[i])
		}
	}
	if got := recs[2].SourceOffset[offsetTimestamp]; got != time.Date(2023, 11, 14, 22, 13, 22, 0, time.UTC).UnixMilli() {
		t.Fatalf("offset %v", recs[2].SourceOffset)
	}
	task.Stop()

	mustExec(t, db, `INSERT INTO ev (id, at) VALUES (4, 'not a time')`)
	bad := &SourceTask{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := bad.Start(ctx, cfg, newOffsetStore())
	if err == nil {
		bad.Stop()
		t.Fatal("a table with an unreadable timestamp started")
	}
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("error %v, want ErrConfig", err)
	}
}

// TestSourceTimestampGroupPagedByKey: rows of one timestamp read in pages
// are paged by primary key, so a row of the group updated to a later
// timestamp between pages does not shift the next page past a row.
func TestSourceTimestampGroupPagedByKey(t *testing.T) {
	url, db := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE g (id INTEGER PRIMARY KEY, ts TEXT NOT NULL)`)
	for i := 1; i <= 7; i++ {
		mustExec(t, db, `INSERT INTO g (id, ts) VALUES (?, '2024-01-01 00:00:01.000')`, i)
	}
	cfg := connect.Config{"connection.url": url, "mode": modeTimestamp, "timestamp.column.name": "ts",
		"topic.prefix": "x-", "batch.max.rows": "3", "poll.interval.ms": "50"}
	task := startSource(t, cfg, newOffsetStore())
	first := pollUntil(t, task, 5*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 3 })
	if len(first) != 3 || idOf(t, first[2]) != 3 {
		t.Fatalf("first page: %d records", len(first))
	}
	mustExec(t, db, `UPDATE g SET ts = '2024-01-01 00:00:02.000' WHERE id = 2`)
	var seen map[int64]int
	pollUntil(t, task, 5*time.Second, func(r []connect.SourceRecord) bool {
		seen = map[int64]int{}
		for _, rec := range append(append([]connect.SourceRecord(nil), first...), r...) {
			seen[idOf(t, rec)]++
		}
		return seen[7] > 0 && seen[2] > 1 // id 2 again, at its new timestamp
	})
	for i := int64(1); i <= 7; i++ {
		if seen[i] == 0 {
			t.Fatalf("row %d skipped (seen %v)", i, seen)
		}
	}
}
