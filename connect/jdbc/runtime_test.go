package jdbc

// Runtime-level tests: the JDBC connectors run in real workers (in-process
// connect.Worker values and `strata connect worker` processes) against a
// real broker and a real PostgreSQL, and the tests read what reached the
// topics with franz-go. Helpers here are prefixed rt so they never clash
// with the task-level tests' helpers in this package.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/connect"
	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/internal/pgtest"
)

// rtStartBroker runs a real strata server whose group timeouts allow the
// short worker sessions these tests use.
func rtStartBroker(t testing.TB) *brokertest.Broker {
	t.Helper()
	return brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0", "--set", "group.min.session.timeout.ms=500")
}

// rtWorkerProps are worker settings for quick rebalances and offset
// flushes; group names the group and its three storage topics, so several
// worker groups can share one broker.
func rtWorkerProps(brokers, group string, extra ...string) map[string]string {
	props := map[string]string{
		"bootstrap.servers":             brokers,
		"rest.listen":                   "127.0.0.1:0",
		"group.id":                      group,
		"config.storage.topic":          group + "-configs",
		"offset.storage.topic":          group + "-offsets",
		"status.storage.topic":          group + "-status",
		"session.timeout.ms":            "2000",
		"heartbeat.interval.ms":         "300",
		"rebalance.timeout.ms":          "10000",
		"offset.flush.interval.ms":      "300",
		"offset.storage.partitions":     "3",
		"status.storage.partitions":     "2",
		"consumer.max.poll.interval.ms": "10000",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	return props
}

// rtStartWorker runs an in-process worker and returns it with its REST
// base URL; the test's cleanup closes it.
func rtStartWorker(t testing.TB, props map[string]string) (*connect.Worker, string) {
	t.Helper()
	cfg, err := connect.NewWorkerConfig(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(rtLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := connect.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, "http://" + w.Addr()
}

type rtLogWriter struct{ t testing.TB }

func (w rtLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// rtProcess is a `strata connect worker` subprocess.
type rtProcess struct {
	cmd  *exec.Cmd
	url  string
	id   string // host:port, the worker id in status records
	done chan struct{}
}

// rtStartProcess runs `strata connect worker` (the binary brokertest
// builds) with props as --set flags and waits until its REST API answers.
// The test's cleanup SIGKILLs it and, if the test failed, logs its output.
func rtStartProcess(t *testing.T, brokers string, props map[string]string) *rtProcess {
	t.Helper()
	addr := brokertest.FreeAddr(t)
	args := []string{"connect", "worker", "--brokers", brokers, "--rest-listen", addr}
	for k, v := range props {
		if k != "bootstrap.servers" && k != "rest.listen" {
			args = append(args, "--set", k+"="+v)
		}
	}
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(brokertest.Binary(t), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &rtProcess{cmd: cmd, url: "http://" + addr, id: addr, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("worker %s (pid %d) log:\n%s", addr, cmd.Process.Pid, data)
		}
	})
	client := &http.Client{Timeout: time.Second}
	rtWaitFor(t, 60*time.Second, "worker "+addr+" REST", func() (bool, string) {
		select {
		case <-p.done:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("worker exited during startup:\n%s", data)
		default:
		}
		resp, err := client.Get(p.url + "/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// kill ends the process with SIGKILL, as a crash would: no LeaveGroup, no
// final offset flush, an open transaction left open.
func (p *rtProcess) kill(t *testing.T) {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("SIGKILL pid %d: %v", p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("worker pid %d alive after SIGKILL", p.cmd.Process.Pid)
	}
}

// rtREST calls the REST API and returns the status and body.
func rtREST(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// rtCreateConnector posts a connector and checks the 201.
func rtCreateConnector(t testing.TB, base, name string, cfg map[string]string) {
	t.Helper()
	code, data := rtREST(t, "POST", base+"/connectors", map[string]any{"name": name, "config": cfg})
	if code != http.StatusCreated {
		t.Fatalf("POST /connectors %s: status %d: %s", name, code, data)
	}
}

// rtWaitFor polls cond until it holds or the timeout passes.
func rtWaitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
}

// rtStatus is the body of GET /connectors/<name>/status.
type rtStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

// rtWaitRunning waits until a connector and its task(s) run, on worker
// onWorker when it is not empty. A FAILED unit fails the test at once.
func rtWaitRunning(t testing.TB, base, name, onWorker string) {
	t.Helper()
	rtWaitFor(t, 30*time.Second, name+" RUNNING", func() (bool, string) {
		code, data := rtREST(t, "GET", base+"/connectors/"+name+"/status", nil)
		if code != http.StatusOK {
			return false, string(data)
		}
		var s rtStatus
		if err := json.Unmarshal(data, &s); err != nil {
			return false, err.Error()
		}
		if s.Connector.State == "FAILED" {
			t.Fatalf("connector %s failed: %s", name, s.Connector.Trace)
		}
		for _, ts := range s.Tasks {
			if ts.State == "FAILED" {
				t.Fatalf("task %s-%d failed: %s", name, ts.ID, ts.Trace)
			}
		}
		if s.Connector.State != "RUNNING" || len(s.Tasks) == 0 {
			return false, string(data)
		}
		for _, ts := range s.Tasks {
			if ts.State != "RUNNING" || onWorker != "" && ts.WorkerID != onWorker {
				return false, string(data)
			}
		}
		return true, ""
	})
}

// rtLogOnFailure logs a connector's status and stored offsets at the end
// of a failed test, from whichever worker of urls still answers.
func rtLogOnFailure(t *testing.T, name string, urls ...*string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, u := range urls {
			for _, path := range []string{"/status", "/offsets"} {
				req, err := http.NewRequest("GET", *u+"/connectors/"+name+path, nil)
				if err != nil {
					continue
				}
				resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
				if err != nil {
					t.Logf("GET %s%s: %v", *u, path, err)
					continue
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("GET %s/connectors/%s%s: %s", *u, name, path, data)
			}
		}
	})
}

// rtCreateTopic creates a topic with the given partition count.
func rtCreateTopic(t testing.TB, brokers, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
}

// rtConsumer reads a topic from the start, read_committed, and decodes
// each schemaless JSON value's id and v.
type rtConsumer struct {
	t       testing.TB
	cl      *kgo.Client
	records []*kgo.Record
	rows    []version // (id, v) per record, in topic order
}

func rtNewConsumer(t testing.TB, brokers, topic string) *rtConsumer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &rtConsumer{t: t, cl: cl}
}

// poll fetches for at most wait and returns how many records arrived.
func (c *rtConsumer) poll(wait time.Duration) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	fetches := c.cl.PollFetches(ctx)
	fetches.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) {
			c.t.Logf("fetch %s/%d: %v", topic, p, err)
		}
	})
	recs := fetches.Records()
	for _, r := range recs {
		var v struct {
			ID *int64 `json:"id"`
			V  *int64 `json:"v"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.ID == nil || v.V == nil {
			c.t.Fatalf("record at offset %d: value %q: want a schemaless JSON object with id and v (%v)", r.Offset, r.Value, err)
		}
		c.records = append(c.records, r)
		c.rows = append(c.rows, version{*v.ID, *v.V})
	}
	return len(recs)
}

// drain polls until a poll of quiet returns nothing: with one partition,
// records produced before the caller's condition held are all read.
func (c *rtConsumer) drain(quiet time.Duration) {
	for c.poll(quiet) > 0 {
	}
}

// rtWriter inserts rows, and updates earlier ones (v = v + 1, a new
// updated_at) when update is set, one statement at a time, until halted.
type rtWriter struct {
	stop chan struct{}
	done chan error
	rows int64
}

func rtStartWriter(t *testing.T, db *sql.DB, insert, update string) *rtWriter {
	w := &rtWriter{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		rng := rand.New(rand.NewSource(7))
		var ids int64
		for {
			select {
			case <-w.stop:
				w.rows = ids
				w.done <- nil
				return
			default:
			}
			if update != "" && ids > 5 && rng.Intn(3) == 0 {
				if _, err := db.Exec(update, 1+rng.Int63n(ids)); err != nil {
					w.done <- fmt.Errorf("update: %w", err)
					return
				}
			} else {
				if _, err := db.Exec(insert, fmt.Sprintf("row-%d", ids+1)); err != nil {
					w.done <- fmt.Errorf("insert: %w", err)
					return
				}
				ids++
			}
			time.Sleep(time.Millisecond) // pacing of the load, not synchronisation
		}
	}()
	t.Cleanup(func() { w.halt(t) })
	return w
}

// halt stops the writer and returns how many rows it inserted.
func (w *rtWriter) halt(t *testing.T) int64 {
	select {
	case <-w.stop:
		return w.rows
	default:
	}
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	return w.rows
}

// rtCovered reports whether delivered holds every row of final: its id
// (incrementing) or its final version (timestamp+incrementing).
func rtCovered(mode string, delivered []version, final map[int64]int64) (bool, string) {
	ids := map[int64]bool{}
	seen := map[version]bool{}
	for _, d := range delivered {
		ids[d.id] = true
		seen[d] = true
	}
	for id, v := range final {
		if mode == modeIncrementing && !ids[id] {
			return false, fmt.Sprintf("%d records, row %d missing", len(delivered), id)
		}
		if mode == modeTimestampIncrementing && !seen[version{id, v}] {
			return false, fmt.Sprintf("%d records, row %d version %d missing", len(delivered), id, v)
		}
	}
	return true, ""
}

// rtDuplicates counts deliveries that repeat an earlier one: the same id
// (incrementing) or the same (id, v) (timestamp+incrementing); and
// reports the first version of a row delivered after a later one.
func rtDuplicates(mode string, delivered []version) (dups int, firstDup string, disorder string) {
	seenID := map[int64]int64{}
	seen := map[version]bool{}
	for i, d := range delivered {
		prev, again := seenID[d.id]
		dup := mode == modeIncrementing && again || seen[d]
		if dup {
			if dups == 0 {
				firstDup = fmt.Sprintf("record %d: row %d version %d", i, d.id, d.v)
			}
			dups++
		} else if again && d.v < prev && disorder == "" {
			disorder = fmt.Sprintf("record %d: row %d version %d after version %d", i, d.id, d.v, prev)
		}
		seen[d] = true
		if !again || d.v > prev {
			seenID[d.id] = d.v
		}
	}
	return dups, firstDup, disorder
}

// rtFinal reads every row's id and v.
func rtFinal(t testing.TB, db *sql.DB, table string) map[int64]int64 {
	t.Helper()
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRuntimeSourceKillRestart runs jdbc-source in a `strata connect
// worker` process while a writer inserts (and, in
// timestamp+incrementing mode, updates) rows; SIGKILLs the process after
// records reached the topic and starts a new one in the same group, which
// resumes from the stored offsets. Read read_committed, the topic holds
// every row (every row's final version), and with exactly-once no row
// (version) twice. Without exactly-once, the records produced after the
// last offset flush may come twice (at least once): only "none missed" is
// asserted and the duplicates are logged.
func TestRuntimeSourceKillRestart(t *testing.T) {
	b := rtStartBroker(t)
	for i, tc := range []struct {
		name        string
		mode        string
		exactlyOnce bool
	}{
		{"incrementing/exactly-once", modeIncrementing, true},
		{"timestamp+incrementing/exactly-once", modeTimestampIncrementing, true},
		{"incrementing/at-least-once", modeIncrementing, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			dsn, db := pgDatabase(t)
			mustExec(t, db, `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0,
				updated_at timestamp NOT NULL DEFAULT clock_timestamp())`)
			group := fmt.Sprintf("rt-kill-%d", i)
			prefix := group + "-"
			topic := prefix + "items"
			rtCreateTopic(t, b.Addr, topic, 1) // one partition: topic order is production order
			eos := "disabled"
			if tc.exactlyOnce {
				eos = "enabled"
			}
			props := rtWorkerProps(b.Addr, group, "exactly.once.source.support", eos)
			w1 := rtStartProcess(t, b.Addr, props)
			rtCreateConnector(t, w1.url, "src", map[string]string{
				"connector.class": "jdbc-source", "connection.url": dsn, "mode": tc.mode,
				"table.whitelist": "items", "topic.prefix": prefix,
				"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
				"poll.interval.ms": "20", "batch.max.rows": "50",
				"key.converter": "json", "key.converter.schemas.enable": "false",
				"value.converter": "json", "value.converter.schemas.enable": "false",
			})
			rtWaitRunning(t, w1.url, "src", w1.id)
			// Updates in both modes: incrementing must ignore them.
			w := rtStartWriter(t, db, `INSERT INTO items (name) VALUES ($1)`,
				`UPDATE items SET v = v + 1, updated_at = clock_timestamp() WHERE id = $1`)
			c := rtNewConsumer(t, b.Addr, topic)
			rtWaitFor(t, 15*time.Second, "200 records before the kill", func() (bool, string) {
				c.poll(100 * time.Millisecond)
				return len(c.rows) >= 200, fmt.Sprint(len(c.rows))
			})
			atKill := len(c.rows)
			w1.kill(t)
			killedAt := time.Now()
			w2 := rtStartProcess(t, b.Addr, props)
			rtLogOnFailure(t, "src", &w2.url)
			rtWaitRunning(t, w2.url, "src", w2.id)
			t.Logf("task running on the new worker %v after the kill", time.Since(killedAt).Round(10*time.Millisecond))
			// The new worker produces while the writer still writes.
			rtWaitFor(t, 15*time.Second, "new records from the new worker", func() (bool, string) {
				c.poll(100 * time.Millisecond)
				return len(c.rows) >= atKill+200, fmt.Sprint(len(c.rows))
			})
			inserted := w.halt(t)
			final := rtFinal(t, db, "items")
			if int64(len(final)) != inserted {
				t.Fatalf("table has %d rows, writer inserted %d", len(final), inserted)
			}
			rtWaitFor(t, 20*time.Second, "every row in the topic", func() (bool, string) {
				c.poll(100 * time.Millisecond)
				return rtCovered(tc.mode, c.rows, final)
			})
			c.drain(500 * time.Millisecond)
			dups, firstDup, disorder := rtDuplicates(tc.mode, c.rows)
			if disorder != "" {
				t.Errorf("versions out of order: %s", disorder)
			}
			t.Logf("%d rows, %d records (%d before the kill), %d duplicates, %v", len(final), len(c.rows), atKill, dups,
				time.Since(began).Round(10*time.Millisecond))
			if tc.exactlyOnce && dups > 0 {
				t.Fatalf("%d duplicates with exactly-once; first: %s", dups, firstDup)
			}
			if !tc.exactlyOnce && dups > 0 {
				t.Logf("at-least-once: %d records repeated after the kill (first: %s)", dups, firstDup)
			}
		})
	}
}

// TestRuntimeSourceNonUTC: PostgreSQL's TimeZone is America/New_York and
// the timestamp column has no time zone; with db.timezone set to match,
// rows inserted and updated while in-process workers run all arrive, as
// the right instants, across a worker replaced mid-stream.
func TestRuntimeSourceNonUTC(t *testing.T) {
	const zone = "America/New_York"
	server := pgtest.Start(t, pgtest.WithTimeZone(zone))
	db := server.Open(t)
	var tz string
	if err := db.QueryRow(`SHOW TimeZone`).Scan(&tz); err != nil || tz != zone {
		t.Fatalf("server TimeZone = %q (%v), want %s", tz, err, zone)
	}
	mustExec(t, db, `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0,
		updated_at timestamp NOT NULL DEFAULT clock_timestamp()::timestamp)`)
	b := rtStartBroker(t)
	topic := "nyc-items"
	rtCreateTopic(t, b.Addr, topic, 1)
	props := rtWorkerProps(b.Addr, "rt-nyc")
	w1, base := rtStartWorker(t, props)
	rtCreateConnector(t, base, "src", map[string]string{
		"connector.class": "jdbc-source", "connection.url": server.DSN, "mode": modeTimestampIncrementing,
		"db.timezone": zone, "table.whitelist": "items", "topic.prefix": "nyc-",
		"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
		"timestamp.delay.interval.ms": "20", "poll.interval.ms": "20", "batch.max.rows": "50",
		"value.converter": "json", "value.converter.schemas.enable": "false",
	})
	rtWaitRunning(t, base, "src", "")
	w := rtStartWriter(t, db, `INSERT INTO items (name) VALUES ($1)`,
		`UPDATE items SET v = v + 1, updated_at = clock_timestamp()::timestamp WHERE id = $1`)
	c := rtNewConsumer(t, b.Addr, topic)
	rtWaitFor(t, 15*time.Second, "100 records", func() (bool, string) {
		c.poll(100 * time.Millisecond)
		return len(c.rows) >= 100, fmt.Sprint(len(c.rows))
	})
	// Replace the worker (a clean stop) while rows keep coming: the new
	// one resumes from offsets that hold New York wall-clock readings as
	// instants.
	if err := w1.Close(); err != nil {
		t.Fatal(err)
	}
	n := len(c.rows)
	_, base = rtStartWorker(t, props)
	rtLogOnFailure(t, "src", &base)
	rtWaitRunning(t, base, "src", "")
	rtWaitFor(t, 15*time.Second, "records from the second worker", func() (bool, string) {
		c.poll(100 * time.Millisecond)
		return len(c.rows) >= n+100, fmt.Sprint(len(c.rows))
	})
	w.halt(t)
	final := rtFinal(t, db, "items")
	rtWaitFor(t, 20*time.Second, "every row's final version", func() (bool, string) {
		c.poll(100 * time.Millisecond)
		return rtCovered(modeTimestampIncrementing, c.rows, final)
	})
	c.drain(300 * time.Millisecond)
	dups, _, disorder := rtDuplicates(modeTimestampIncrementing, c.rows)
	if disorder != "" {
		t.Errorf("versions out of order: %s", disorder)
	}

	// Values are instants: updated_at read in New York, in ms since the
	// epoch (the Timestamp logical type).
	want := map[version]int64{}
	rows, err := db.Query(`SELECT id, v, floor(extract(epoch FROM updated_at AT TIME ZONE 'America/New_York') * 1000)::bigint FROM items`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, v, ms int64
		if err := rows.Scan(&id, &v, &ms); err != nil {
			t.Fatal(err)
		}
		want[version{id, v}] = ms
	}
	rows.Close()
	checked := 0
	for i, r := range c.records {
		ms, ok := want[c.rows[i]]
		if !ok {
			continue // an older version of the row
		}
		var val struct {
			UpdatedAt int64 `json:"updated_at"`
		}
		if err := json.Unmarshal(r.Value, &val); err != nil {
			t.Fatalf("value %s: %v", r.Value, err)
		}
		if val.UpdatedAt != ms {
			t.Fatalf("row %d: updated_at = %d (%v), want %d (%v)", c.rows[i].id, val.UpdatedAt,
				time.UnixMilli(val.UpdatedAt).UTC(), ms, time.UnixMilli(ms).UTC())
		}
		checked++
	}
	t.Logf("%d rows, %d records (%d before the worker was replaced), %d repeated, %d final versions checked as instants",
		len(final), len(c.rows), n, dups, checked)
}

// rtDump reads a table's rows as text lines, ordered by id (every
// expression cast to text, NULL as ∅).
func rtDump(t testing.TB, db *sql.DB, table string, exprs []string) []string {
	t.Helper()
	cols := make([]string, len(exprs))
	for i, e := range exprs {
		cols[i] = "coalesce(CAST((" + e + ") AS text), '∅')"
	}
	rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM " + table + " ORDER BY id")
	if err != nil {
		return []string{"query: " + err.Error()} // the sink may not have created the table yet
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

// rtSame compares two dumps and describes the first difference.
func rtSame(want, got []string) (bool, string) {
	if len(want) != len(got) {
		return false, fmt.Sprintf("%d rows in the source, %d in the copy", len(want), len(got))
	}
	for i := range want {
		if want[i] != got[i] {
			return false, fmt.Sprintf("row %d differs:\nsource: %s\n  copy: %s", i, want[i], got[i])
		}
	}
	return true, ""
}

// TestRuntimeRoundTrip: a PostgreSQL table → jdbc-source (key: the
// primary key; JSON with schemas) → topic → jdbc-sink (upsert,
// record_key, auto.create, delete.enabled) → a PostgreSQL table and a
// SQLite table, all in one in-process worker. Inserts and updates made
// while it runs arrive; the copies equal the source; a tombstone produced
// to the topic deletes the row from both copies.
func TestRuntimeRoundTrip(t *testing.T) {
	dsn, db := pgDatabase(t)
	sqliteURL, lite := sqliteDatabase(t)
	mustExec(t, db, `CREATE TABLE src (id bigserial PRIMARY KEY, name text, amount numeric(10,2), flag boolean,
		day date, tstz timestamptz, score double precision, v bigint NOT NULL DEFAULT 0,
		updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`)
	mustExec(t, db, `INSERT INTO src (name, amount, flag, day, tstz, score)
		SELECT 'name ' || g, g * 1.25, g % 2 = 0, date '2024-01-01' + g,
			timestamptz '2024-11-03 05:00:00+00' + g * interval '7 minutes', g / 3.0
		FROM generate_series(1, 200) g`)
	mustExec(t, db, `INSERT INTO src DEFAULT VALUES`) // a row of NULLs

	b := rtStartBroker(t)
	const topic = "rt_src"
	rtCreateTopic(t, b.Addr, topic, 3)
	_, base := rtStartWorker(t, rtWorkerProps(b.Addr, "rt-roundtrip"))
	rtCreateConnector(t, base, "source", map[string]string{
		"connector.class": "jdbc-source", "connection.url": dsn, "mode": modeTimestampIncrementing,
		"table.whitelist": "src", "topic.prefix": "rt_",
		"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
		"poll.interval.ms": "20", "batch.max.rows": "64",
	})
	sinkCfg := func(url, format string) map[string]string {
		return map[string]string{"connector.class": "jdbc-sink", "connection.url": url, "topics": topic,
			"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true", "delete.enabled": "true",
			"table.name.format": format, "batch.size": "50"}
	}
	rtCreateConnector(t, base, "pg-sink", sinkCfg(dsn, "copy_${topic}"))
	rtCreateConnector(t, base, "sqlite-sink", sinkCfg(sqliteURL, "${topic}"))
	for _, name := range []string{"source", "pg-sink", "sqlite-sink"} {
		rtWaitRunning(t, base, name, "")
	}

	// The Timestamp logical type holds milliseconds: the source's
	// microseconds are cut off on the way.
	srcCols := []string{"id", "name", "trim_scale(amount)", "flag", "day", "tstz AT TIME ZONE 'UTC'", "score", "v",
		"date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC')"}
	// jdbc-sink makes Timestamp fields timestamp columns written in UTC.
	pgCols := []string{"id", "name", "trim_scale(amount)", "flag", "day", "tstz", "score", "v", "updated_at"}
	liteCols := []string{"id", "name", "v"}
	equal := func(stage string) {
		t.Helper()
		rtWaitFor(t, 20*time.Second, "the PostgreSQL copy equal to the source "+stage, func() (bool, string) {
			return rtSame(rtDump(t, db, "src", srcCols), rtDump(t, db, "copy_rt_src", pgCols))
		})
		rtWaitFor(t, 20*time.Second, "the SQLite copy equal to the source "+stage, func() (bool, string) {
			return rtSame(rtDump(t, db, "src", liteCols), rtDump(t, lite, "rt_src", liteCols))
		})
	}
	equal("after the initial copy")

	// Changes while everything runs: updates (v and updated_at move) and
	// inserts, in several transactions.
	for round := 1; round <= 5; round++ {
		mustExec(t, db, `UPDATE src SET name = name || ' *', amount = amount + 0.01, v = v + 1,
			updated_at = clock_timestamp() WHERE id % 7 = $1`, round)
		mustExec(t, db, `INSERT INTO src (name, amount, flag) SELECT 'late ' || $1::int || '-' || g, g, true
			FROM generate_series(1, 10) g`, round)
	}
	equal("after updates and inserts")

	// A tombstone for row 7, keyed as the source keyed it.
	var key []byte
	keys := rtNewConsumer(t, b.Addr, topic)
	rtWaitFor(t, 10*time.Second, "the record of row 7", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		keys.cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var k struct {
				Payload struct {
					ID int64 `json:"id"`
				} `json:"payload"`
			}
			if json.Unmarshal(r.Key, &k) == nil && k.Payload.ID == 7 {
				key = r.Key
			}
		})
		return key != nil, ""
	})
	mustExec(t, db, `DELETE FROM src WHERE id = 7`)
	producer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: key}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	equal("after the tombstone")
	if n := count(t, db, `SELECT count(*) FROM copy_rt_src WHERE id = 7`); n != 0 {
		t.Fatal("row 7 still in the PostgreSQL copy")
	}
	if n := count(t, lite, `SELECT count(*) FROM rt_src WHERE id = 7`); n != 0 {
		t.Fatal("row 7 still in the SQLite copy")
	}
	t.Logf("%d rows copied to PostgreSQL and SQLite; key of the tombstone: %s", count(t, db, `SELECT count(*) FROM src`), key)
}

// rtRanges renders sorted ids as ranges: "3-7, 9".
func rtRanges(ids []int64) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		} else {
			fmt.Fprint(&b, ids[i])
		}
		i = j + 1
	}
	return b.String()
}

// TestRuntimeSourceGracefulRestart: an in-process worker copying a 60k-row
// table (incrementing) is closed cleanly in the middle of the copy, and a
// new worker of the same group finishes it. Kafka Connect's clean stop
// flushes the offsets of the records that were acknowledged, so no row may
// be missing from the topic (duplicates are allowed: at least once).
func TestRuntimeSourceGracefulRestart(t *testing.T) {
	const rows = 60_000
	dsn, db := pgDatabase(t)
	mustExec(t, db, `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, v bigint NOT NULL DEFAULT 0)`)
	mustExec(t, db, fmt.Sprintf(`INSERT INTO items (name) SELECT 'row-' || g FROM generate_series(1, %d) g`, rows))
	b := rtStartBroker(t)
	const topic = "gr-items"
	rtCreateTopic(t, b.Addr, topic, 1)
	props := rtWorkerProps(b.Addr, "rt-graceful")
	w1, base := rtStartWorker(t, props)
	rtCreateConnector(t, base, "src", map[string]string{
		"connector.class": "jdbc-source", "connection.url": dsn, "mode": modeIncrementing,
		"table.whitelist": "items", "topic.prefix": "gr-", "incrementing.column.name": "id",
		"poll.interval.ms": "20", "batch.max.rows": "2000",
		"value.converter": "json", "value.converter.schemas.enable": "false",
	})
	c := rtNewConsumer(t, b.Addr, topic)
	rtWaitFor(t, 20*time.Second, "5000 records", func() (bool, string) {
		c.poll(100 * time.Millisecond)
		return len(c.rows) >= 5000, fmt.Sprint(len(c.rows))
	})
	began := time.Now()
	if err := w1.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("first worker closed in %v", time.Since(began).Round(time.Millisecond))
	c.drain(300 * time.Millisecond)
	atClose := len(c.rows)
	_, base2 := rtStartWorker(t, props)
	rtLogOnFailure(t, "src", &base2)
	rtWaitRunning(t, base2, "src", "")
	t.Logf("task running on the second worker %v after the close", time.Since(began).Round(time.Millisecond))
	// Rows are copied in id order: once the last row arrived, and the
	// topic has been read to its end, nothing more will come.
	rtWaitFor(t, 20*time.Second, "the last row", func() (bool, string) {
		c.poll(200 * time.Millisecond)
		return len(c.rows) > 0 && c.rows[len(c.rows)-1].id == rows, fmt.Sprint(len(c.rows))
	})
	t.Logf("last row in the topic %v after the close", time.Since(began).Round(time.Millisecond))
	c.drain(500 * time.Millisecond)
	seen := map[int64]bool{}
	for _, r := range c.rows {
		seen[r.id] = true
	}
	var missing []int64
	for id := int64(1); id <= rows; id++ {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("after the clean restart %d of %d rows never reached the topic (ids %s); %d records, %d before "+
			"the first worker closed: the stopping task stored offsets past records whose produce was "+
			"canceled (connect/task_source.go produces with the task's context and ignores context.Canceled acks)",
			len(missing), rows, rtRanges(missing), len(c.rows), atClose)
	}
	c.drain(300 * time.Millisecond)
	dups, _, _ := rtDuplicates(modeIncrementing, c.rows)
	t.Logf("%d rows, %d records (%d before the clean close), %d duplicates", rows, len(c.rows), atClose, dups)
}
