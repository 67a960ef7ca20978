package jdbc

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// dump reads a query's rows as text lines (every column cast to text,
// NULL as ∅) for comparing tables.
func dump(t *testing.T, db *sql.DB, table string, exprs []string) []string {
	t.Helper()
	cols := make([]string, len(exprs))
	for i, e := range exprs {
		cols[i] = "coalesce((" + e + ")::text, '∅')"
	}
	rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	vals := make([]string, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(vals, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip copies a table through jdbc-source and jdbc-sink (upsert,
// auto.create, delete.enabled) into another table, with records converted
// in memory as the runtime would hand them over; the tables must be equal,
// after updates too, and a tombstone deletes its row.
func TestRoundTrip(t *testing.T) {
	dsn, db := pgDatabase(t)
	mustExec(t, db, `CREATE TABLE src (id bigserial PRIMARY KEY, name text, amount numeric(10,2), data bytea,
		flag boolean, day date, ts timestamp, tstz timestamptz, score double precision, small smallint,
		updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`)
	mustExec(t, db, `INSERT INTO src (name, amount, data, flag, day, ts, tstz, score, small)
		SELECT 'name ' || g, g * 1.25, decode(lpad(to_hex(g), 4, '0'), 'hex'), g % 2 = 0,
			date '2024-01-01' + g, timestamp '2024-03-10 01:00:00.123456' + g * interval '17 minutes',
			timestamptz '2024-11-03 05:00:00+00' + g * interval '7 minutes', g / 3.0, g
		FROM generate_series(1, 49) g`)
	mustExec(t, db, `INSERT INTO src DEFAULT VALUES`) // a row of NULLs

	source := startSource(t, connect.Config{"connection.url": dsn, "mode": "timestamp+incrementing",
		"incrementing.column.name": "id", "timestamp.column.name": "updated_at", "table.whitelist": "src",
		"poll.interval.ms": "10", "batch.max.rows": "16"}, newOffsetStore())
	sink := startSink(t, connect.Config{"connection.url": dsn, "topics": "src", "insert.mode": "upsert",
		"pk.mode": "record_key", "auto.create": "true", "delete.enabled": "true", "table.name.format": "copy_${topic}",
		"batch.size": "7"})
	offset := int64(0)
	copyRecords := func(n int) {
		t.Helper()
		recs := pollUntil(t, source, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= n })
		if len(recs) != n {
			t.Fatalf("%d records, want %d", len(recs), n)
		}
		putFlush(t, sink, toSink(recs, offset))
		offset += int64(n)
	}
	srcCols := []string{"id", "name", "trim_scale(amount)", "encode(data, 'hex')", "flag", "day", "ts",
		"tstz AT TIME ZONE 'UTC'", "score", "small", "updated_at AT TIME ZONE 'UTC'"}
	// jdbc-sink creates Timestamp fields as timestamp (without time zone),
	// written in db.timezone (UTC).
	dstCols := []string{"id", "name", "trim_scale(amount)", "encode(data, 'hex')", "flag", "day", "ts",
		"tstz", "score", "small", "updated_at"}
	compare := func(stage string) {
		t.Helper()
		want, got := dump(t, db, "src", srcCols), dump(t, db, "copy_src", dstCols)
		if len(want) != len(got) {
			t.Fatalf("%s: %d rows in src, %d in copy_src", stage, len(want), len(got))
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("%s: row %d differs:\n src: %s\ncopy: %s", stage, i, want[i], got[i])
			}
		}
	}

	copyRecords(50)
	compare("initial copy")

	mustExec(t, db, `UPDATE src SET name = name || ' (edited)', amount = amount + 0.01, updated_at = clock_timestamp() WHERE id % 10 = 3`)
	mustExec(t, db, `INSERT INTO src (name, amount) VALUES ('late', 1), ('later', 2), ('latest', 3)`)
	copyRecords(5 + 3)
	compare("after updates")

	mustExec(t, db, `DELETE FROM src WHERE id = 7`)
	keySchema := &connect.Schema{Type: connect.TypeStruct, Fields: []connect.Field{{Name: "id", Schema: &connect.Schema{Type: connect.TypeInt64}}}}
	putFlush(t, sink, []connect.SinkRecord{{Topic: "src", Offset: offset, KeySchema: keySchema,
		Key: &connect.Struct{Schema: keySchema, Values: []any{int64(7)}}}})
	compare("after the tombstone")
	if n := count(t, db, `SELECT count(*) FROM copy_src WHERE id = 7`); n != 0 {
		t.Fatalf("row 7 still in copy_src")
	}
	var ddl string
	if err := db.QueryRow(`SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
		FROM information_schema.columns WHERE table_name = 'copy_src'`).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	t.Logf("auto-created copy_src: %s", ddl)
}
