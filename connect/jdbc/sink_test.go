package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

var (
	personSchema = &connect.Schema{Type: connect.TypeStruct, Name: "person", Fields: []connect.Field{
		{Name: "id", Index: 0, Schema: &connect.Schema{Type: connect.TypeInt64}},
		{Name: "name", Index: 1, Schema: &connect.Schema{Type: connect.TypeString, Optional: true}},
		{Name: "balance", Index: 2, Schema: &connect.Schema{Type: connect.TypeBytes, Name: connect.LogicalDecimal, Optional: true,
			Parameters: map[string]string{"scale": "2"}}},
		{Name: "joined", Index: 3, Schema: &connect.Schema{Type: connect.TypeInt64, Name: connect.LogicalTimestamp, Optional: true}},
	}}
	personKeySchema = &connect.Schema{Type: connect.TypeStruct, Fields: []connect.Field{
		{Name: "id", Index: 0, Schema: &connect.Schema{Type: connect.TypeInt64}}}}
)

func person(topic string, offset, id int64, name string, cents int64) connect.SinkRecord {
	return connect.SinkRecord{Topic: topic, Offset: offset,
		KeySchema: personKeySchema, Key: &connect.Struct{Schema: personKeySchema, Values: []any{id}},
		ValueSchema: personSchema, Value: &connect.Struct{Schema: personSchema, Values: []any{
			id, name, big.NewRat(cents, 100), time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC)}}}
}

func tombstone(topic string, offset, id int64) connect.SinkRecord {
	return connect.SinkRecord{Topic: topic, Offset: offset, KeySchema: personKeySchema,
		Key: &connect.Struct{Schema: personKeySchema, Values: []any{id}}}
}

type sinkBackend struct {
	name string
	open func(t *testing.T) (string, *sql.DB)
}

var sinkBackends = []sinkBackend{
	{"postgres", func(t *testing.T) (string, *sql.DB) { return pgDatabase(t) }},
	{"sqlite", func(t *testing.T) (string, *sql.DB) { return sqliteDatabase(t) }},
}

// names reads id -> name of a table.
func names(t *testing.T, db *sql.DB, table string) map[int64]string {
	t.Helper()
	rows, err := db.Query(`SELECT id, name FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name sql.NullString
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		out[id] = name.String
	}
	return out
}

func TestSinkUpsertDeleteAutoCreate(t *testing.T) {
	for _, be := range sinkBackends {
		t.Run(be.name, func(t *testing.T) {
			url, db := be.open(t)
			task := startSink(t, connect.Config{"connection.url": url, "topics": "people", "insert.mode": "upsert",
				"pk.mode": "record_key", "auto.create": "true", "delete.enabled": "true", "table.name.format": "t_${topic}"})
			// Several versions of one key in one flush: the last wins.
			putFlush(t, task, []connect.SinkRecord{person("people", 0, 1, "ann", 100), person("people", 1, 2, "bob", 250),
				person("people", 2, 1, "ann2", 101), person("people", 3, 3, "cy", 5)})
			if got := names(t, db, "t_people"); fmt.Sprint(got) != "map[1:ann2 2:bob 3:cy]" {
				t.Fatalf("after upserts: %v", got)
			}
			var balance string
			var joined any
			if err := db.QueryRow(`SELECT CAST(balance AS TEXT), joined FROM t_people WHERE id = 2`).Scan(&balance, &joined); err != nil {
				t.Fatal(err)
			}
			if balance != "2.5" && balance != "2.50" {
				t.Fatalf("balance %q, want 2.50", balance)
			}
			if ts, err := asTime(joined, ""); err != nil || !ts.Equal(time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC)) {
				t.Fatalf("joined %v (%v)", joined, err)
			}
			// A tombstone between two upserts of other keys; then an
			// upsert of a deleted key brings it back, in order.
			putFlush(t, task, []connect.SinkRecord{tombstone("people", 4, 2), person("people", 5, 3, "cy2", 6),
				tombstone("people", 6, 1), person("people", 7, 1, "ann3", 1), tombstone("people", 8, 99)})
			if got := names(t, db, "t_people"); fmt.Sprint(got) != "map[1:ann3 3:cy2]" {
				t.Fatalf("after deletes: %v", got)
			}
			// Records of other topics are not this connector's.
			putFlush(t, task, []connect.SinkRecord{person("others", 0, 7, "x", 1)})
			if n := count(t, db, `SELECT count(*) FROM t_people`); n != 2 {
				t.Fatalf("%d rows", n)
			}
		})
	}
}

func TestSinkModesAndEvolve(t *testing.T) {
	for _, be := range sinkBackends {
		t.Run(be.name, func(t *testing.T) {
			url, db := be.open(t)
			// pk.mode kafka, insert: the coordinates are the key.
			task := startSink(t, connect.Config{"connection.url": url, "pk.mode": "kafka", "auto.create": "true"})
			putFlush(t, task, []connect.SinkRecord{person("log", 10, 1, "a", 1), person("log", 11, 1, "b", 1)})
			var topic string
			var partition, offset int64
			if err := db.QueryRow(`SELECT __connect_topic, __connect_partition, __connect_offset FROM log WHERE name = 'b'`).Scan(&topic, &partition, &offset); err != nil {
				t.Fatal(err)
			}
			if topic != "log" || partition != 0 || offset != 11 {
				t.Fatalf("kafka coordinates %s/%d/%d", topic, partition, offset)
			}
			// Inserting the same coordinates again violates the key.
			if err := task.Put(context.Background(), []connect.SinkRecord{person("log", 11, 1, "c", 1)}); err != nil {
				t.Fatal(err)
			}
			if err := task.Flush(context.Background()); err == nil {
				t.Fatal("duplicate insert flushed without error")
			}
			task.Stop()

			// record_value key, update mode.
			mustExec(t, db, `CREATE TABLE people (id BIGINT PRIMARY KEY, name TEXT, balance NUMERIC, joined TIMESTAMP)`)
			mustExec(t, db, `INSERT INTO people (id, name) VALUES (1, 'old'), (2, 'keep')`)
			task = startSink(t, connect.Config{"connection.url": url, "insert.mode": "update", "pk.mode": "record_value", "pk.fields": "id"})
			putFlush(t, task, []connect.SinkRecord{person("people", 0, 1, "new", 1), person("people", 1, 5, "absent", 1)})
			if got := names(t, db, "people"); fmt.Sprint(got) != "map[1:new 2:keep]" {
				t.Fatalf("after update: %v", got)
			}
			task.Stop()

			// auto.evolve adds an optional field; a required one is refused.
			evolved := &connect.Schema{Type: connect.TypeStruct, Fields: append(append([]connect.Field(nil), personSchema.Fields...),
				connect.Field{Name: "email", Index: 4, Schema: &connect.Schema{Type: connect.TypeString, Optional: true}})}
			rec := person("people", 2, 3, "eve", 1)
			rec.ValueSchema = evolved
			rec.Value = &connect.Struct{Schema: evolved, Values: append(rec.Value.(*connect.Struct).Values, "eve@example.com")}
			strict := startSink(t, connect.Config{"connection.url": url, "insert.mode": "upsert", "pk.mode": "record_key"})
			strict.Put(context.Background(), []connect.SinkRecord{rec})
			if err := strict.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "auto.evolve") {
				t.Fatalf("new field without auto.evolve: %v", err)
			}
			strict.Stop()
			task = startSink(t, connect.Config{"connection.url": url, "insert.mode": "upsert", "pk.mode": "record_key", "auto.evolve": "true"})
			putFlush(t, task, []connect.SinkRecord{rec})
			var email string
			if err := db.QueryRow(`SELECT email FROM people WHERE id = 3`).Scan(&email); err != nil || email != "eve@example.com" {
				t.Fatalf("email %q, %v", email, err)
			}
			required := &connect.Schema{Type: connect.TypeStruct, Fields: append(append([]connect.Field(nil), evolved.Fields...),
				connect.Field{Name: "age", Index: 5, Schema: &connect.Schema{Type: connect.TypeInt32}})}
			rec.ValueSchema = required
			rec.Value = &connect.Struct{Schema: required, Values: append(rec.Value.(*connect.Struct).Values, int32(30))}
			task.Put(context.Background(), []connect.SinkRecord{rec})
			if err := task.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "required") {
				t.Fatalf("required new field: %v", err)
			}
		})
	}
}

func TestSinkConfigErrors(t *testing.T) {
	conn := &SinkConnector{}
	for _, tc := range []struct {
		cfg  connect.Config
		name string
	}{
		{connect.Config{}, "connection.url"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "insert.mode": "merge"}, "insert.mode"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "insert.mode": "upsert"}, "pk.mode"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "pk.mode": "record_value"}, "pk.fields"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "pk.mode": "kafka", "pk.fields": "a,b"}, "pk.fields"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "delete.enabled": "true", "pk.mode": "record_value", "pk.fields": "id"}, "delete.enabled"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "auto.create": "yes please"}, "auto.create"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "topics.regex": "("}, "topics.regex"},
		{connect.Config{"connection.url": "jdbc:sqlite:x.db", "batch.size": "-1"}, "batch.size"},
	} {
		found := false
		for _, e := range conn.Validate(tc.cfg) {
			found = found || e.Name == tc.name
		}
		if !found {
			t.Errorf("Validate(%v) = %v, want an error for %s", tc.cfg, conn.Validate(tc.cfg), tc.name)
		}
		if err := conn.Start(context.Background(), tc.cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("Start(%v) = %v, want ErrConfig", tc.cfg, err)
		}
	}
	// A schemaless value is refused with a clear error, not a panic.
	url, _ := sqliteDatabase(t)
	task := startSink(t, connect.Config{"connection.url": url, "auto.create": "true"})
	task.Put(context.Background(), []connect.SinkRecord{{Topic: "x", Value: map[string]any{"a": 1}}})
	if err := task.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("schemaless value: %v", err)
	}
	for _, name := range []string{"jdbc-source", "io.confluent.connect.jdbc.JdbcSourceConnector", "jdbc-sink", "io.confluent.connect.jdbc.JdbcSinkConnector"} {
		p, ok := connect.LookupPlugin(name)
		if !ok {
			t.Fatalf("plugin %s not registered", name)
		}
		if _, isSource := p.New().(connect.SourceConnector); isSource != strings.Contains(strings.ToLower(name), "source") {
			t.Fatalf("plugin %s has the wrong type", name)
		}
	}
}
