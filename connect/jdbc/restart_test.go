package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
	"github.com/strata-streaming/strata/internal/pgtest"
)

// version is one delivered row version.
type version struct{ id, v int64 }

// writer inserts rows and updates earlier ones (v = v + 1 and a new
// timestamp) until stopped.
type writer struct {
	db     *sql.DB
	insert string
	update string
	stop   chan struct{}
	done   chan error
	// rows counts the inserts so far.
	rows atomic.Int64
}

// minWriterRows is how many rows a run needs to mean something; the
// writer keeps going past its time until it made them (a loaded machine
// writes slowly).
const minWriterRows = 50

func startWriter(t *testing.T, db *sql.DB, insert, update string) *writer {
	w := &writer{db: db, insert: insert, update: update, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		rng := rand.New(rand.NewSource(1))
		ids := int64(0)
		for {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			if ids > 5 && rng.Intn(3) == 0 {
				if _, err := db.Exec(w.update, 1+rng.Int63n(ids)); err != nil {
					w.done <- fmt.Errorf("update: %w", err)
					return
				}
			} else {
				if _, err := db.Exec(w.insert, fmt.Sprintf("row-%d", ids+1)); err != nil {
					w.done <- fmt.Errorf("insert: %w", err)
					return
				}
				ids++
				w.rows.Store(ids)
			}
			time.Sleep(time.Millisecond) // pacing of the load, not synchronisation
		}
	}()
	t.Cleanup(func() { w.halt(t) })
	return w
}

func (w *writer) halt(t *testing.T) {
	select {
	case <-w.stop:
		return
	default:
	}
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// runWithRestarts polls while w writes; every few batches the task is
// stopped as a killed worker would be, losing its last batch (neither
// delivered nor committed), and a new task starts from the committed
// offsets. When w has stopped, it polls until want(delivered) holds.
func runWithRestarts(t *testing.T, cfg connect.Config, w *writer, restarts int, writeFor time.Duration,
	caughtUp func([]version) bool) []version {
	t.Helper()
	store := newOffsetStore()
	var delivered []version
	rng := rand.New(rand.NewSource(2))
	deadline := time.Now().Add(writeFor)
	deliver := func(recs []connect.SourceRecord) {
		for _, r := range recs {
			v, _ := asInt64(field(t, r, "v"))
			delivered = append(delivered, version{idOf(t, r), v})
		}
		store.commit(t, recs)
	}
	for round := 0; ; round++ {
		task := &SourceTask{}
		if err := task.Start(context.Background(), cfg, store); err != nil {
			t.Fatalf("Start (round %d): %v", round, err)
		}
		last := round == restarts
		halted := false
		batches := 2 + rng.Intn(6)
		finalDeadline := deadline.Add(35 * time.Second) // the writer may run 15 s past deadline
		for b := 0; ; b++ {
			if last && !halted && time.Now().After(deadline) && (w.rows.Load() >= minWriterRows || time.Now().After(deadline.Add(15*time.Second))) {
				w.halt(t)
				halted = true
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			recs, err := task.Poll(ctx)
			cancel()
			if err != nil {
				t.Fatalf("Poll: %v", err)
			}
			if !last && b >= batches && len(recs) > 0 {
				break // killed: this batch is lost in flight
			}
			deliver(recs)
			if halted && caughtUp(delivered) {
				break
			}
			if last && time.Now().After(finalDeadline) {
				t.Fatalf("not caught up after the writer stopped: %d versions delivered", len(delivered))
			}
		}
		if last {
			// Anything more now would be a duplicate.
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				recs, err := task.Poll(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				deliver(recs)
			}
			task.Stop()
			return delivered
		}
		task.Stop()
		// Spread the restarts over the writing time: the writer gets
		// ahead while no task runs, as during a real restart.
		resume := deadline.Add(-writeFor * time.Duration(restarts-round-1) / time.Duration(restarts))
		time.Sleep(time.Until(resume))
	}
}

// finalVersions reads every row's id and v.
func finalVersions(t *testing.T, db *sql.DB, table string) map[int64]int64 {
	rows, err := db.Query(`SELECT id, v FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	return out
}

// checkExactlyOnce: in incrementing mode every id once; in
// timestamp+incrementing every delivered version once, versions of a row
// in increasing order, and every row's final version delivered.
func checkExactlyOnce(t *testing.T, mode string, delivered []version, final map[int64]int64) {
	t.Helper()
	seen := map[version]bool{}
	lastV := map[int64]int64{}
	for _, d := range delivered {
		prev, again := lastV[d.id]
		switch {
		case mode == modeIncrementing && again:
			t.Fatalf("row %d delivered twice", d.id)
		case seen[d]:
			t.Fatalf("row %d version %d delivered twice", d.id, d.v)
		case again && d.v < prev:
			t.Fatalf("row %d: version %d after %d", d.id, d.v, prev)
		}
		seen[d] = true
		lastV[d.id] = d.v
	}
	for id, v := range final {
		if _, ok := lastV[id]; !ok {
			t.Fatalf("row %d never delivered (%d rows, %d deliveries)", id, len(final), len(delivered))
		}
		if mode == modeTimestampIncrementing && !seen[version{id, v}] {
			t.Fatalf("row %d: final version %d never delivered", id, v)
		}
	}
	if len(lastV) != len(final) {
		t.Fatalf("%d rows delivered, table has %d", len(lastV), len(final))
	}
}

func caughtUpWith(t *testing.T, db *sql.DB, table, mode string) func([]version) bool {
	var final map[int64]int64
	return func(delivered []version) bool {
		if final == nil {
			final = finalVersions(t, db, table) // read once the writer stopped
		}
		seen := map[version]bool{}
		ids := map[int64]bool{}
		for _, d := range delivered {
			seen[d] = true
			ids[d.id] = true
		}
		for id, v := range final {
			if mode == modeIncrementing && !ids[id] || mode == modeTimestampIncrementing && !seen[version{id, v}] {
				return false
			}
		}
		return true
	}
}

// TestSourceRestartExactlyOnce is the kill-and-restart test: a writer
// inserts and updates rows while tasks poll and are killed mid-stream; no
// row is missed or delivered twice in incrementing and
// timestamp+incrementing modes, on PostgreSQL and SQLite.
func TestSourceRestartExactlyOnce(t *testing.T) {
	type backend struct {
		name           string
		open           func(t *testing.T) (string, *sql.DB)
		create, insert string
		update         string
	}
	backends := []backend{
		{"postgres", func(t *testing.T) (string, *sql.DB) { return pgDatabase(t) },
			`CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0,
				updated_at timestamp NOT NULL DEFAULT clock_timestamp())`,
			`INSERT INTO items (name) VALUES ($1)`,
			`UPDATE items SET v = v + 1, updated_at = clock_timestamp() WHERE id = $1`},
		{"sqlite", func(t *testing.T) (string, *sql.DB) {
			url, db := sqliteDatabase(t)
			mustExec(t, db, `PRAGMA journal_mode=WAL`)
			return url, db
		},
			`CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, v INTEGER NOT NULL DEFAULT 0,
				updated_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')))`,
			`INSERT INTO items (name) VALUES (?)`,
			`UPDATE items SET v = v + 1, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = ?`},
	}
	for _, be := range backends {
		for _, mode := range []string{modeIncrementing, modeTimestampIncrementing} {
			t.Run(be.name+"/"+mode, func(t *testing.T) {
				url, db := be.open(t)
				mustExec(t, db, be.create)
				cfg := connect.Config{"connection.url": url, "mode": mode, "topic.prefix": "t-",
					"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
					"poll.interval.ms": "10", "batch.max.rows": "7"}
				w := startWriter(t, db, be.insert, be.update)
				delivered := runWithRestarts(t, cfg, w, 6, 1500*time.Millisecond, caughtUpWith(t, db, "items", mode))
				final := finalVersions(t, db, "items")
				if len(final) < minWriterRows {
					t.Fatalf("writer made only %d rows", len(final))
				}
				checkExactlyOnce(t, mode, delivered, final)
				t.Logf("%d rows, %d deliveries across 6 restarts", len(final), len(delivered))
			})
		}
	}
}

// TestSourceNonUTCDatabase runs against a server whose TimeZone is
// America/New_York. Naive timestamps with the default db.timezone (UTC)
// fail loudly at Start; with db.timezone=America/New_York nothing is lost
// while rows arrive during polling, and values are the right instants;
// timestamptz columns work with the default.
func TestSourceNonUTCDatabase(t *testing.T) {
	const zone = "America/New_York"
	server := pgtest.Start(t, pgtest.WithTimeZone(zone))
	db := server.Open(t)
	mustExec(t, db, `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0,
		updated_at timestamp NOT NULL DEFAULT clock_timestamp()::timestamp)`)
	mustExec(t, db, `CREATE TABLE events (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0,
		updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`)
	base := connect.Config{"connection.url": server.DSN, "topic.prefix": "t-", "poll.interval.ms": "10",
		"incrementing.column.name": "id", "timestamp.column.name": "updated_at", "batch.max.rows": "5",
		"timestamp.delay.interval.ms": "20", "table.whitelist": "items"}

	t.Run("default db.timezone fails loudly", func(t *testing.T) {
		// In every mode: bulk and incrementing would emit values hours
		// off, the timestamp modes could skip rows.
		for _, mode := range []string{modeBulk, modeIncrementing, modeTimestamp, modeTimestampIncrementing} {
			cfg := copyConfig(base)
			cfg["mode"] = mode
			err := (&SourceTask{}).Start(context.Background(), cfg, newOffsetStore())
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), zone) || !strings.Contains(err.Error(), "db.timezone") {
				t.Fatalf("mode %s: Start = %v, want a db.timezone error naming %s", mode, err, zone)
			}
		}
	})

	for _, mode := range []string{modeTimestamp, modeTimestampIncrementing} {
		t.Run("db.timezone set/"+mode, func(t *testing.T) {
			mustExec(t, db, `TRUNCATE items RESTART IDENTITY`)
			cfg := copyConfig(base)
			cfg["mode"], cfg["db.timezone"] = mode, zone
			w := startWriter(t, db, `INSERT INTO items (name) VALUES ($1)`,
				`UPDATE items SET v = v + 1, updated_at = clock_timestamp()::timestamp WHERE id = $1`)
			restarts := 3
			if mode == modeTimestamp {
				restarts = 0 // timestamp alone cannot resume between rows sharing a timestamp
			}
			delivered := runWithRestarts(t, cfg, w, restarts, time.Second, caughtUpWith(t, db, "items", modeTimestampIncrementing))
			checkExactlyOnce(t, modeTimestampIncrementing, delivered, finalVersions(t, db, "items"))
		})
	}

	// Autumn DST change: New York's wall clock runs 01:00-02:00 twice on
	// 2024-11-03. Rows A (01:10) and B (01:50) are written in the first
	// pass (EDT), row C (01:20) in the second (EST). The database clock is
	// moved back with timestamp.delay.interval.ms. Compared as wall clocks,
	// C would sort before B, already read, and be skipped; compared as
	// instants it is read.
	t.Run("DST fall back", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE dst (id int PRIMARY KEY, v int NOT NULL DEFAULT 0, updated_at timestamp NOT NULL)`)
		mustExec(t, db, `INSERT INTO dst (id, updated_at) VALUES (1, '2024-11-03 01:10'), (2, '2024-11-03 01:50')`)
		store := newOffsetStore()
		clockAt := func(utc string) connect.Config {
			at, err := time.Parse(time.RFC3339, utc)
			if err != nil {
				t.Fatal(err)
			}
			cfg := copyConfig(base)
			cfg["mode"], cfg["db.timezone"], cfg["table.whitelist"] = modeTimestampIncrementing, zone, "dst"
			cfg["timestamp.delay.interval.ms"] = fmt.Sprint(time.Since(at).Milliseconds())
			return cfg
		}
		var ids []int64
		read := func(cfg connect.Config, polls int) {
			task := startSource(t, cfg, store)
			for range polls {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				recs, err := task.Poll(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					ids = append(ids, idOf(t, r))
				}
				store.commit(t, recs)
			}
			task.Stop()
		}
		read(clockAt("2024-11-03T05:55:00Z"), 5) // 01:55 EDT, end of the first pass
		mustExec(t, db, `INSERT INTO dst (id, updated_at) VALUES (3, '2024-11-03 01:20')`)
		read(clockAt("2024-11-03T07:00:00Z"), 5) // 02:00 EST
		slices.Sort(ids)
		if !equalIDs(ids, []int64{1, 2, 3}) {
			t.Fatalf("delivered ids %v, want [1 2 3] each once", ids)
		}
	})

	t.Run("values are instants", func(t *testing.T) {
		cfg := copyConfig(base)
		cfg["mode"], cfg["db.timezone"] = modeBulk, zone
		task := startSource(t, cfg, newOffsetStore())
		recs := pollUntil(t, task, 10*time.Second, func(r []connect.SourceRecord) bool { return len(r) > 0 })
		var want time.Time
		if err := db.QueryRow(`SELECT updated_at AT TIME ZONE 'America/New_York' FROM items WHERE id = $1`, idOf(t, recs[0])).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := field(t, recs[0], "updated_at").(time.Time); !got.Equal(want) {
			t.Fatalf("updated_at = %v, want the instant %v", got, want)
		}
	})

	t.Run("timestamptz with default db.timezone", func(t *testing.T) {
		cfg := copyConfig(base)
		cfg["mode"], cfg["table.whitelist"] = modeTimestampIncrementing, "events"
		w := startWriter(t, db, `INSERT INTO events (name) VALUES ($1)`,
			`UPDATE events SET v = v + 1, updated_at = clock_timestamp() WHERE id = $1`)
		delivered := runWithRestarts(t, cfg, w, 2, time.Second, caughtUpWith(t, db, "events", modeTimestampIncrementing))
		final := finalVersions(t, db, "events")
		if len(final) < 20 {
			t.Fatalf("writer made only %d rows", len(final))
		}
		checkExactlyOnce(t, modeTimestampIncrementing, delivered, final)
	})
}
