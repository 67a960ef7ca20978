package jdbc

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// TestSourceModes runs every mode against a table that receives inserts
// and updates between polls, on PostgreSQL and SQLite.
func TestSourceModes(t *testing.T) {
	type dbCase struct {
		name   string
		open   func(testing.TB) (string, func(string, ...any))
		create string
		update string // bumps v and the timestamp of id 2
	}
	dbs := []dbCase{
		{"postgres", func(t testing.TB) (string, func(string, ...any)) {
			dsn, db := pgDatabase(t)
			return dsn, func(s string, a ...any) { mustExec(t, db, s, a...) }
		}, `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v int NOT NULL DEFAULT 0,
			updated_at timestamp NOT NULL DEFAULT clock_timestamp())`,
			`UPDATE items SET v = v + 1, updated_at = clock_timestamp() WHERE id = 2`},
		{"sqlite", func(t testing.TB) (string, func(string, ...any)) {
			url, db := sqliteDatabase(t)
			return url, func(s string, a ...any) { mustExec(t, db, s, a...) }
		}, `CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, v INTEGER NOT NULL DEFAULT 0,
			updated_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')))`,
			`UPDATE items SET v = v + 1, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = 2`},
	}
	modes := []struct {
		mode string
		// after 3 inserts, then 1 update of id 2 and 1 insert: the ids
		// the second read must contain
		wantSecond []int64
	}{
		{modeBulk, []int64{1, 2, 3, 4}},
		{modeIncrementing, []int64{4}},
		{modeTimestamp, []int64{2, 4}},
		{modeTimestampIncrementing, []int64{2, 4}},
	}
	for _, dbc := range dbs {
		for _, m := range modes {
			t.Run(dbc.name+"/"+m.mode, func(t *testing.T) {
				url, exec := dbc.open(t)
				exec(dbc.create)
				exec(`INSERT INTO items (name) VALUES ('a'), ('b'), ('c')`)
				cfg := connect.Config{
					"connection.url": url, "mode": m.mode, "topic.prefix": "db-",
					"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
					"poll.interval.ms": "50", "batch.max.rows": "2",
				}
				task := startSource(t, cfg, newOffsetStore())
				first := pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 3 })
				if len(first) != 3 {
					t.Fatalf("first read: %d records, want 3", len(first))
				}
				r := first[0]
				if r.Topic != "db-items" || r.SourcePartition["table"] != "items" {
					t.Fatalf("topic %q partition %v", r.Topic, r.SourcePartition)
				}
				key, ok := r.Key.(*connect.Struct)
				if !ok || len(key.Schema.Fields) != 1 || key.Schema.Fields[0].Name != "id" || key.Values[0] != int64(1) {
					t.Fatalf("key %#v, want struct{id: 1}", r.Key)
				}
				if field(t, r, "name") != "a" {
					t.Fatalf("name = %v", field(t, r, "name"))
				}
				if _, ok := field(t, r, "updated_at").(time.Time); !ok {
					t.Fatalf("updated_at is %T, want time.Time", field(t, r, "updated_at"))
				}
				switch m.mode {
				case modeIncrementing:
					if r.SourceOffset["incrementing"] != int64(1) {
						t.Fatalf("offset %v", r.SourceOffset)
					}
				case modeTimestampIncrementing:
					if _, ok := r.SourceOffset["timestamp"]; !ok || r.SourceOffset["incrementing"] != int64(1) {
						t.Fatalf("offset %v", r.SourceOffset)
					}
					if _, ok := r.SourceOffset["timestamp_nanos"]; !ok {
						t.Fatalf("offset %v lacks timestamp_nanos", r.SourceOffset)
					}
				}

				exec(dbc.update)
				exec(`INSERT INTO items (name) VALUES ('d')`)
				second := pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= len(m.wantSecond) })
				// Let a wrong extra record show up before judging.
				second = append(second, pollUntil(t, task, 2*time.Second, func([]connect.SourceRecord) bool { return true })...)
				var got []int64
				for _, r := range second {
					got = append(got, idOf(t, r))
				}
				if m.mode == modeBulk { // a whole table again, in no particular order
					got = got[:min(len(got), 4)]
					slices.Sort(got)
				}
				if !equalIDs(got, m.wantSecond) {
					t.Fatalf("second read ids %v, want %v", got, m.wantSecond)
				}
				if m.mode == modeTimestamp || m.mode == modeTimestampIncrementing {
					if v, _ := asInt64(field(t, second[0], "v")); v != 1 {
						t.Fatalf("updated row has v=%d, want 1", v)
					}
				}
			})
		}
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSourceTypes checks the Connect schemas and values of PostgreSQL
// column types, under each numeric.mapping.
func TestSourceTypes(t *testing.T) {
	dsn, db := pgDatabase(t)
	mustExec(t, db, `CREATE TABLE types (id int PRIMARY KEY, s smallint, b bigint, r real, d double precision,
		n numeric(10,2), n0 numeric(5,0), nu numeric, flag boolean, txt text, data bytea, day date, tod time,
		ts timestamp, tstz timestamptz, u uuid)`)
	mustExec(t, db, `INSERT INTO types VALUES (1, 2, 3, 1.5, 2.25, 12.30, 12345, 1.000000001, true, 'x', '\x0102',
		'2024-03-10', '12:34:56.789', '2024-03-10 02:30:00.5', '2024-03-10 02:30:00.5+02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')`)
	for _, tc := range []struct {
		mapping       string
		nType, n0Type string
		n             any
		n0            any
	}{
		{"none", connect.TypeBytes, connect.TypeBytes, big.NewRat(1230, 100), big.NewRat(12345, 1)},
		{"best_fit", connect.TypeFloat64, connect.TypeInt32, 12.3, int32(12345)},
		{"precision_only", connect.TypeBytes, connect.TypeInt32, big.NewRat(1230, 100), int32(12345)},
	} {
		t.Run(tc.mapping, func(t *testing.T) {
			task := startSource(t, connect.Config{"connection.url": dsn, "mode": "bulk", "numeric.mapping": tc.mapping,
				"poll.interval.ms": "60000"}, newOffsetStore())
			recs := pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 1 })
			r := recs[0]
			schema := map[string]*connect.Schema{}
			for _, f := range r.ValueSchema.Fields {
				schema[f.Name] = f.Schema
			}
			wantTypes := map[string]string{"id": connect.TypeInt32, "s": connect.TypeInt16, "b": connect.TypeInt64,
				"r": connect.TypeFloat32, "d": connect.TypeFloat64, "n": tc.nType, "n0": tc.n0Type, "nu": connect.TypeBytes,
				"flag": connect.TypeBoolean, "txt": connect.TypeString, "data": connect.TypeBytes,
				"day": connect.TypeInt32, "tod": connect.TypeInt32, "ts": connect.TypeInt64, "tstz": connect.TypeInt64, "u": connect.TypeString}
			for name, typ := range wantTypes {
				if schema[name] == nil || schema[name].Type != typ {
					t.Errorf("%s: schema %+v, want type %s", name, schema[name], typ)
				}
			}
			if schema["id"].Optional || !schema["txt"].Optional {
				t.Errorf("optional: id %v (want false), txt %v (want true)", schema["id"].Optional, schema["txt"].Optional)
			}
			if schema["ts"].Name != connect.LogicalTimestamp || schema["day"].Name != connect.LogicalDate || schema["tod"].Name != connect.LogicalTime {
				t.Errorf("logical names: ts %q day %q tod %q", schema["ts"].Name, schema["day"].Name, schema["tod"].Name)
			}
			checkEqual := func(name string, want any) {
				t.Helper()
				got := field(t, r, name)
				if gr, ok := got.(*big.Rat); ok {
					if wr, ok := want.(*big.Rat); !ok || gr.Cmp(wr) != 0 {
						t.Errorf("%s = %v (%T), want %v", name, got, got, want)
					}
					return
				}
				if gt, ok := got.(time.Time); ok {
					if wt, ok := want.(time.Time); !ok || !gt.Equal(wt) {
						t.Errorf("%s = %v, want %v", name, got, want)
					}
					return
				}
				if gb, ok := got.([]byte); ok {
					if string(gb) != string(want.([]byte)) {
						t.Errorf("%s = %v, want %v", name, got, want)
					}
					return
				}
				if got != want {
					t.Errorf("%s = %v (%T), want %v (%T)", name, got, got, want, want)
				}
			}
			checkEqual("id", int32(1))
			checkEqual("s", int16(2))
			checkEqual("r", float32(1.5))
			checkEqual("n", tc.n)
			checkEqual("n0", tc.n0)
			checkEqual("nu", big.NewRat(1000000001, 1000000000))
			checkEqual("flag", true)
			checkEqual("data", []byte{1, 2})
			checkEqual("day", time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC))
			checkEqual("tod", time.Date(1970, 1, 1, 12, 34, 56, 789e6, time.UTC))
			checkEqual("ts", time.Date(2024, 3, 10, 2, 30, 0, 5e8, time.UTC)) // db.timezone UTC
			checkEqual("tstz", time.Date(2024, 3, 10, 0, 30, 0, 5e8, time.UTC))
			checkEqual("u", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
		})
	}
}

// TestSourceQueryMode copies a query's result into topic.prefix.
func TestSourceQueryMode(t *testing.T) {
	dsn, db := pgDatabase(t)
	mustExec(t, db, `CREATE TABLE orders (id serial PRIMARY KEY, amount int NOT NULL)`)
	mustExec(t, db, `INSERT INTO orders (amount) SELECT g FROM generate_series(1, 10) g`)
	store := newOffsetStore()
	cfg := connect.Config{"connection.url": dsn, "mode": "incrementing", "incrementing.column.name": "id",
		"query": "SELECT id, amount * 2 AS doubled FROM orders WHERE amount % 2 = 0", "topic.prefix": "even-orders",
		"poll.interval.ms": "20", "batch.max.rows": "3"}
	task := startSource(t, cfg, store)
	recs := pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 5 })
	if len(recs) != 5 || recs[0].Topic != "even-orders" || recs[0].SourcePartition["query"] != "query" || recs[0].Key != nil {
		t.Fatalf("%d records, first %+v", len(recs), recs[0])
	}
	if d, _ := asInt64(field(t, recs[4], "doubled")); d != 20 {
		t.Fatalf("last doubled = %d, want 20", d)
	}
	store.commit(t, recs)
	task.Stop()
	mustExec(t, db, `INSERT INTO orders (amount) VALUES (12), (13)`)
	task = startSource(t, cfg, store)
	recs = pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) >= 1 })
	if len(recs) != 1 || idOf(t, recs[0]) != 11 {
		t.Fatalf("after restart: %d records, want only id 11", len(recs))
	}
}

// TestSourceNewTablesAndSplit checks TaskConfigs and that a table created
// while a task runs is picked up by exactly one task.
func TestSourceNewTablesAndSplit(t *testing.T) {
	dsn, db := pgDatabase(t)
	for _, name := range []string{"a", "b", "c", "skip"} {
		mustExec(t, db, `CREATE TABLE `+name+` (id serial PRIMARY KEY, x int)`)
		mustExec(t, db, `INSERT INTO `+name+` (x) VALUES (1)`)
	}
	conn := &SourceConnector{}
	raw := connect.Config{"connection.url": dsn, "mode": "incrementing", "incrementing.column.name": "id",
		"table.blacklist": "skip", "poll.interval.ms": "20", "table.poll.interval.ms": "100"}
	if err := conn.Start(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	configs, err := conn.TaskConfigs(2)
	if err != nil || len(configs) != 2 {
		t.Fatalf("TaskConfigs: %d, %v", len(configs), err)
	}
	if configs[0][taskTablesKey] != "a,c" || configs[1][taskTablesKey] != "b" {
		t.Fatalf("split %q / %q, want a,c / b", configs[0][taskTablesKey], configs[1][taskTablesKey])
	}
	tasks := []*SourceTask{startSource(t, configs[0], newOffsetStore()), startSource(t, configs[1], newOffsetStore())}
	topics := map[string]int{}
	collect := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for total := 0; total < want; {
			if time.Now().After(deadline) {
				t.Fatalf("records by topic %v, want %d in all", topics, want)
			}
			for _, task := range tasks {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				recs, err := task.Poll(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					topics[r.Topic]++
					total++
				}
			}
		}
	}
	collect(3)
	mustExec(t, db, `CREATE TABLE d (id serial PRIMARY KEY, x int)`)
	mustExec(t, db, `INSERT INTO d (x) VALUES (1), (2)`)
	collect(2)
	if topics["a"] != 1 || topics["b"] != 1 || topics["c"] != 1 || topics["d"] != 2 || topics["skip"] != 0 {
		t.Fatalf("records by topic %v", topics)
	}
}

// TestSourceConfigErrors checks Validate and Start's errors.
func TestSourceConfigErrors(t *testing.T) {
	conn := &SourceConnector{}
	cases := []struct {
		cfg  connect.Config
		name string // the setting that must be reported
	}{
		{connect.Config{"mode": "bulk"}, "connection.url"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db"}, "mode"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "sometimes"}, "mode"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "incrementing"}, "incrementing.column.name"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "timestamp+incrementing", "incrementing.column.name": "id"}, "timestamp.column.name"},
		{connect.Config{"connection.url": "jdbc:mysql://h/db", "mode": "bulk"}, "connection.url"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk", "db.timezone": "Mars/Olympus"}, "db.timezone"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk", "numeric.mapping": "exact"}, "numeric.mapping"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk", "poll.interval.ms": "soon"}, "poll.interval.ms"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk", "batch.max.rows": "0"}, "batch.max.rows"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk", "query": "SELECT 1"}, "topic.prefix"},
	}
	for _, tc := range cases {
		errs := conn.Validate(tc.cfg)
		found := false
		for _, e := range errs {
			found = found || e.Name == tc.name
		}
		if !found {
			t.Errorf("Validate(%v) = %v, want an error for %s", tc.cfg, errs, tc.name)
		}
		if err := conn.Start(context.Background(), tc.cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("Start(%v) = %v, want ErrConfig", tc.cfg, err)
		}
	}
	if errs := conn.Validate(connect.Config{"connection.url": "jdbc:sqlite:x.db", "mode": "bulk"}); len(errs) != 0 {
		t.Errorf("valid config: %v", errs)
	}
	keys := map[string]bool{}
	for _, k := range conn.ConfigKeys() {
		keys[k.Name] = true
	}
	for _, name := range []string{"connection.url", "mode", "db.timezone", "table.whitelist", "numeric.mapping", "timestamp.delay.interval.ms"} {
		if !keys[name] {
			t.Errorf("ConfigKeys lacks %s", name)
		}
	}

	// A column that does not exist fails at Start with the columns listed.
	url, db := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)`)
	task := &SourceTask{}
	err := task.Start(context.Background(), connect.Config{"connection.url": url, "mode": "incrementing", "incrementing.column.name": "seq"}, newOffsetStore())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"seq"`) {
		t.Fatalf("Start with a missing column: %v", err)
	}
}

func TestParseConnectionURL(t *testing.T) {
	for _, tc := range []struct {
		url, user, password string
		driver, dsn         string
	}{
		{"jdbc:postgresql://db:5433/shop?user=u&password=p&sslmode=disable", "", "", "pgx", "postgres://u:p@db:5433/shop?sslmode=disable"},
		{"jdbc:postgresql://db/shop", "app", "secret", "pgx", "postgres://app:secret@db/shop"},
		{"postgres://x@h/d", "", "", "pgx", "postgres://x@h/d"},
		{"host=h dbname=d", "u", "", "pgx", "host=h dbname=d user='u'"},
		{"jdbc:sqlite:/tmp/a.db", "", "", "sqlite", "file:/tmp/a.db?_pragma=busy_timeout(10000)"},
		{"jdbc:sqlite:file:a.db?mode=ro", "", "", "sqlite", "file:a.db?mode=ro&_pragma=busy_timeout(10000)"},
	} {
		driver, dsn, _, err := parseConnectionURL(tc.url, tc.user, tc.password)
		if err != nil || driver != tc.driver || dsn != tc.dsn {
			t.Errorf("parseConnectionURL(%q) = %q %q %v, want %q %q", tc.url, driver, dsn, err, tc.driver, tc.dsn)
		}
	}
	for _, bad := range []string{"", "jdbc:postgresql:shop", "mysql://h/d", "jdbc:sqlite:"} {
		if _, _, _, err := parseConnectionURL(bad, "", ""); !errors.Is(err, ErrConfig) {
			t.Errorf("parseConnectionURL(%q) = %v, want ErrConfig", bad, err)
		}
	}
	if got := redactURL("jdbc:postgresql://u:secret@h/d"); strings.Contains(got, "secret") {
		t.Errorf("redactURL kept the password: %s", got)
	}
}

// TestSourceStopInterruptsPoll: a Poll waiting for poll.interval.ms returns
// as soon as Stop is called from another goroutine.
func TestSourceStopInterruptsPoll(t *testing.T) {
	url, db := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY)`)
	mustExec(t, db, `INSERT INTO t VALUES (1)`)
	task := startSource(t, connect.Config{"connection.url": url, "mode": "incrementing", "incrementing.column.name": "id",
		"poll.interval.ms": "600000"}, newOffsetStore())
	pollUntil(t, task, 5*time.Second, func(r []connect.SourceRecord) bool { return len(r) == 1 })
	done := make(chan error, 1)
	go func() {
		_, err := task.Poll(context.Background()) // the next round is ten minutes away
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let Poll start waiting; Stop must work either way
	began := time.Now()
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Poll after Stop: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Poll still blocked 5s after Stop")
	}
	if waited := time.Since(began); waited > 2*time.Second {
		t.Fatalf("Stop took %v", waited)
	}
}
