package jdbc

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
	"github.com/strata-streaming/strata/internal/pgtest"
)

// One PostgreSQL server serves the whole test binary; each test gets its
// own database on it.
var shared struct {
	sync.Mutex
	server *pgtest.Server
	dbs    atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Lock()
	if shared.server != nil {
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
		}
	}
	shared.Unlock()
	os.Exit(code)
}

// pgDatabase returns the DSN of a fresh database on the shared server and
// a handle on it.
func pgDatabase(t testing.TB) (string, *sql.DB) {
	t.Helper()
	shared.Lock()
	if shared.server == nil {
		bin := pgtest.RequireBinaries(t)
		server, err := pgtest.Launch(bin)
		if err != nil {
			shared.Unlock()
			t.Fatalf("starting PostgreSQL: %v", err)
		}
		shared.server = server
	}
	server := shared.server
	shared.Unlock()
	name := fmt.Sprintf("t%d", shared.dbs.Add(1))
	if err := server.CreateDatabase(name); err != nil {
		t.Fatal(err)
	}
	dsn := server.DatabaseDSN(name)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return dsn, db
}

// sqliteDatabase returns a jdbc:sqlite: URL of a fresh file and a handle.
func sqliteDatabase(t testing.TB) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	url := "jdbc:sqlite:" + path
	driver, dsn, _, err := parseConnectionURL(url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return url, db
}

func mustExec(t testing.TB, db *sql.DB, stmt string, args ...any) {
	t.Helper()
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// offsetStore is the runtime's offset storage as the tests need it:
// offsets committed by partition, persisted through JSON as Kafka Connect
// stores them (numbers come back as float64).
type offsetStore struct {
	mu      sync.Mutex
	offsets map[string][]byte
}

func newOffsetStore() *offsetStore { return &offsetStore{offsets: map[string][]byte{}} }

func partitionKey(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func (s *offsetStore) Offset(partition map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.offsets[partitionKey(partition)]
	if !ok {
		return nil, nil
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// commit persists the offsets of records (the last one per partition wins).
func (s *offsetStore) commit(t testing.TB, records []connect.SourceRecord) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		raw, err := json.Marshal(r.SourceOffset)
		if err != nil {
			t.Fatal(err)
		}
		s.offsets[partitionKey(r.SourcePartition)] = raw
	}
}

func startSource(t testing.TB, cfg connect.Config, offsets connect.OffsetReader) *SourceTask {
	t.Helper()
	task := &SourceTask{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := task.Start(ctx, cfg, offsets); err != nil {
		t.Fatalf("source Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

// pollUntil polls until done(all records so far) or the deadline; it
// commits nothing.
func pollUntil(t testing.TB, task *SourceTask, timeout time.Duration, done func([]connect.SourceRecord) bool) []connect.SourceRecord {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var all []connect.SourceRecord
	for !done(all) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d records, condition not met", timeout, len(all))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		recs, err := task.Poll(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		all = append(all, recs...)
	}
	return all
}

// field returns a struct field of a record's value.
func field(t testing.TB, r connect.SourceRecord, name string) any {
	t.Helper()
	s, ok := r.Value.(*connect.Struct)
	if !ok {
		t.Fatalf("value is %T, not a struct", r.Value)
	}
	v, ok := s.Get(name)
	if !ok {
		t.Fatalf("value has no field %s", name)
	}
	return v
}

func idOf(t testing.TB, r connect.SourceRecord) int64 {
	t.Helper()
	n, err := asInt64(field(t, r, "id"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// toSink turns source records into the sink records a runtime would hand
// over after producing and consuming them (same values and schemas).
func toSink(records []connect.SourceRecord, firstOffset int64) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(records))
	for i, r := range records {
		out[i] = connect.SinkRecord{Topic: r.Topic, Offset: firstOffset + int64(i),
			KeySchema: r.KeySchema, Key: r.Key, ValueSchema: r.ValueSchema, Value: r.Value}
	}
	return out
}

func startSink(t testing.TB, cfg connect.Config) *SinkTask {
	t.Helper()
	task := &SinkTask{}
	if err := task.Start(context.Background(), cfg); err != nil {
		t.Fatalf("sink Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

func putFlush(t testing.TB, task *SinkTask, records []connect.SinkRecord) {
	t.Helper()
	ctx := context.Background()
	if err := task.Put(ctx, records); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := task.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func count(t testing.TB, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
