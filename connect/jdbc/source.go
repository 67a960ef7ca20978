package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// SourceConnector is jdbc-source: it copies tables (or one query's result)
// into topics.
type SourceConnector struct {
	raw    connect.Config
	cfg    *sourceConfig
	tables []string
}

var _ connect.SourceConnector = (*SourceConnector)(nil)

// ConfigKeys lists jdbc-source's settings.
func (c *SourceConnector) ConfigKeys() []connect.ConfigKey {
	return append([]connect.ConfigKey(nil), sourceKeys...)
}

// Validate checks a configuration without connecting.
func (c *SourceConnector) Validate(cfg connect.Config) []connect.ConfigError {
	_, errs := parseSourceConfig(cfg)
	return errs
}

// Start checks the configuration and, in table mode, lists the tables to
// copy.
func (c *SourceConnector) Start(ctx context.Context, cfg connect.Config) error {
	parsed, errs := parseSourceConfig(cfg)
	if len(errs) > 0 {
		return configError(errs)
	}
	c.raw, c.cfg = cfg, parsed
	if parsed.query != "" {
		return nil
	}
	db, d, err := openDatabase(ctx, parsed.url, parsed.user, parsed.password)
	if err != nil {
		return err
	}
	defer db.Close()
	all, err := d.listTables(ctx, db)
	if err != nil {
		return err
	}
	c.tables = c.tables[:0]
	for _, t := range all {
		if parsed.wantsTable(t) {
			c.tables = append(c.tables, t)
		}
	}
	for _, t := range parsed.include {
		if strings.Contains(t, ".") && !contains(c.tables, t) {
			c.tables = append(c.tables, t) // schema-qualified: not in the listing
		}
	}
	return nil
}

// TaskConfigs deals the tables out round-robin to at most maxTasks tasks.
// Every task also lists the tables dealt to any task: a table created later
// is taken by the task whose index equals its name's hash modulo the task
// count, so new tables are picked up without a reconfiguration.
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]connect.Config, error) {
	if c.cfg == nil {
		return nil, errors.New("jdbc: TaskConfigs before Start")
	}
	if maxTasks < 1 {
		maxTasks = 1
	}
	if c.cfg.query != "" {
		return []connect.Config{copyConfig(c.raw)}, nil
	}
	n := min(maxTasks, max(len(c.tables), 1))
	groups := make([][]string, n)
	for i, t := range c.tables {
		groups[i%n] = append(groups[i%n], t)
	}
	all := strings.Join(c.tables, ",")
	out := make([]connect.Config, n)
	for i := range groups {
		tc := copyConfig(c.raw)
		tc[taskTablesKey] = strings.Join(groups[i], ",")
		tc[taskAssignedKey] = all
		tc[taskIndexKey] = fmt.Sprint(i)
		tc[taskCountKey] = fmt.Sprint(n)
		out[i] = tc
	}
	return out, nil
}

// Stop releases nothing: the connector holds no connection.
func (c *SourceConnector) Stop() error { return nil }

// NewTask returns a jdbc-source task.
func (c *SourceConnector) NewTask() connect.SourceTask { return &SourceTask{} }

func copyConfig(cfg connect.Config) connect.Config {
	out := make(connect.Config, len(cfg)+4)
	for k, v := range cfg {
		out[k] = v
	}
	return out
}

// SourceTask polls its tables (or the query) and turns rows into records.
// Poll and Commit are called from one goroutine; Stop may come from another.
type SourceTask struct {
	stopCtx context.Context
	stop    context.CancelFunc

	mu struct {
		sync.Mutex
		cfg          *sourceConfig
		db           *sql.DB
		dialect      dialect
		offsets      connect.OffsetReader
		queriers     map[string]*querier // by table name, or "" for query
		nextRefresh  time.Time
		zoneVerified bool
	}
}

var _ connect.SourceTask = (*SourceTask)(nil)

// Start connects, finds this task's tables, reads their committed offsets
// and checks the time zone rule (see doc.go): a configuration that would
// read timestamps in the wrong zone fails here.
func (t *SourceTask) Start(ctx context.Context, cfg connect.Config, offsets connect.OffsetReader) error {
	parsed, errs := parseSourceConfig(cfg)
	if len(errs) > 0 {
		return configError(errs)
	}
	db, d, err := openDatabase(ctx, parsed.url, parsed.user, parsed.password)
	if err != nil {
		return err
	}
	t.stopCtx, t.stop = context.WithCancel(context.Background())
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.cfg, t.mu.db, t.mu.dialect, t.mu.offsets = parsed, db, d, offsets
	t.mu.queriers = map[string]*querier{}
	if parsed.query != "" {
		q := newQuerier(t, "", parsed.query)
		if err := t.addQuerierLocked(ctx, q); err != nil {
			t.closeLocked()
			return err
		}
		return nil
	}
	if err := t.refreshTablesLocked(ctx); err != nil {
		t.closeLocked()
		return err
	}
	connect.LoggerFrom(ctx).Debug("jdbc-source: task started", "tables", len(t.mu.queriers))
	return nil
}

// owns reports whether table belongs to this task.
func (c *sourceConfig) owns(table string) bool {
	if c.assigned == nil { // started without TaskConfigs: everything
		return true
	}
	if contains(c.tables, table) {
		return true
	}
	if c.assigned[table] {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte(table))
	return int(h.Sum32()%uint32(c.taskCount)) == c.taskIndex
}

// refreshTablesLocked lists the tables again, adds queriers for new ones
// this task owns and drops those of tables that are gone.
func (t *SourceTask) refreshTablesLocked(ctx context.Context) error {
	cfg := t.mu.cfg
	listed, err := t.mu.dialect.listTables(ctx, t.mu.db)
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for _, name := range listed {
		present[name] = true
	}
	for _, name := range cfg.include { // schema-qualified names are not listed
		if strings.Contains(name, ".") {
			present[name] = true
		}
	}
	for name, q := range t.mu.queriers {
		if !present[name] {
			q.close()
			delete(t.mu.queriers, name)
		}
	}
	names := make([]string, 0, len(present))
	for name := range present {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := t.mu.queriers[name]; ok || !cfg.wantsTable(name) || !cfg.owns(name) {
			continue
		}
		if err := t.addQuerierLocked(ctx, newQuerier(t, name, "")); err != nil {
			return err
		}
	}
	t.mu.nextRefresh = time.Now().Add(cfg.tablePollInterval)
	return nil
}

func (t *SourceTask) addQuerierLocked(ctx context.Context, q *querier) error {
	if err := q.prepare(ctx); err != nil {
		return err
	}
	stored, err := t.mu.offsets.Offset(q.partition)
	if err != nil {
		return fmt.Errorf("jdbc: reading the offset of %v: %w", q.partition, err)
	}
	if err := q.restore(stored); err != nil {
		return err
	}
	t.mu.queriers[q.key()] = q
	return nil
}

// Poll returns up to batch.max.rows records from the table that is due
// first, waiting (until ctx or Stop) when none is due yet.
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.db == nil {
		return nil, errors.New("jdbc: Poll on a task that is not started")
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.stopCtx, cancel)()

	if t.mu.cfg.query == "" && time.Now().After(t.mu.nextRefresh) {
		if err := t.refreshTablesLocked(qctx); err != nil {
			return nil, err
		}
	}
	var next *querier
	for _, q := range t.mu.queriers {
		if next == nil || q.nextRun.Before(next.nextRun) || q.nextRun.Equal(next.nextRun) && q.key() < next.key() {
			next = q
		}
	}
	if next == nil {
		return nil, waitUntil(qctx, time.Now().Add(min(t.mu.cfg.tablePollInterval, time.Second)))
	}
	if wait := time.Until(next.nextRun); wait > 0 {
		if err := waitUntil(qctx, next.nextRun); err != nil || t.stopCtx.Err() != nil {
			return nil, nil
		}
	}
	records, err := next.poll(qctx)
	if err != nil {
		if t.stopCtx.Err() != nil || ctx.Err() != nil {
			return nil, nil
		}
		return nil, err
	}
	return records, nil
}

// waitUntil sleeps until deadline or until ctx is done; a done ctx is not an
// error (Poll then returns nothing).
func waitUntil(ctx context.Context, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return nil
}

// Commit needs nothing: offsets live in the records.
func (t *SourceTask) Commit(ctx context.Context) error { return nil }

// Stop interrupts a Poll in progress and closes the connection.
func (t *SourceTask) Stop() error {
	if t.stop != nil {
		t.stop()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closeLocked()
}

func (t *SourceTask) closeLocked() error {
	for _, q := range t.mu.queriers {
		q.close()
	}
	t.mu.queriers = nil
	if t.mu.db == nil {
		return nil
	}
	err := t.mu.db.Close()
	t.mu.db = nil
	return err
}
