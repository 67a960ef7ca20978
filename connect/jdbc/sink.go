package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/strata-streaming/strata/connect"
)

// SinkConnector is jdbc-sink: it writes records into tables.
type SinkConnector struct {
	raw connect.Config
}

var _ connect.SinkConnector = (*SinkConnector)(nil)

// ConfigKeys lists jdbc-sink's settings.
func (c *SinkConnector) ConfigKeys() []connect.ConfigKey {
	return append([]connect.ConfigKey(nil), sinkKeys...)
}

// Validate checks a configuration without connecting.
func (c *SinkConnector) Validate(cfg connect.Config) []connect.ConfigError {
	_, errs := parseSinkConfig(cfg)
	return errs
}

// Start checks the configuration.
func (c *SinkConnector) Start(ctx context.Context, cfg connect.Config) error {
	if _, errs := parseSinkConfig(cfg); len(errs) > 0 {
		return configError(errs)
	}
	c.raw = cfg
	return nil
}

// TaskConfigs gives every task the whole configuration: the consumer group
// shares the partitions out.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]connect.Config, error) {
	if c.raw == nil {
		return nil, errors.New("jdbc: TaskConfigs before Start")
	}
	out := make([]connect.Config, max(maxTasks, 1))
	for i := range out {
		out[i] = copyConfig(c.raw)
	}
	return out, nil
}

// Stop releases nothing.
func (c *SinkConnector) Stop() error { return nil }

// NewTask returns a jdbc-sink task.
func (c *SinkConnector) NewTask() connect.SinkTask { return &SinkTask{} }

// SinkTask buffers records in Put and writes them in Flush, in one
// transaction: the runtime commits consumer offsets only after Flush
// returns, so only after the transaction committed. When the buffer grows
// past spillRows, Put writes and commits what it holds early; that is still
// before the offsets of those records are committed.
type SinkTask struct {
	mu struct {
		sync.Mutex
		cfg     *sinkConfig
		db      *sql.DB
		dialect dialect
		tables  map[string]*sinkTable
		buffer  []connect.SinkRecord
	}
}

var _ connect.SinkTask = (*SinkTask)(nil)

// sinkTable is what the task knows of a destination table.
type sinkTable struct {
	name    string
	columns map[string]columnInfo
	kinds   map[string]colKind
}

// Start connects to the database.
func (t *SinkTask) Start(ctx context.Context, cfg connect.Config) error {
	parsed, errs := parseSinkConfig(cfg)
	if len(errs) > 0 {
		return configError(errs)
	}
	db, d, err := openDatabase(ctx, parsed.url, parsed.user, parsed.password)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.cfg, t.mu.db, t.mu.dialect = parsed, db, d
	t.mu.tables = map[string]*sinkTable{}
	connect.LoggerFrom(ctx).Debug("jdbc-sink: task started", "insert.mode", parsed.insertMode)
	return nil
}

// spillRows is how many records Put buffers before writing them.
func (c *sinkConfig) spillRows() int { return max(10*c.batchSize, 50000) }

// Put buffers records; past spillRows it writes and commits them.
func (t *SinkTask) Put(ctx context.Context, records []connect.SinkRecord) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.db == nil {
		return errors.New("jdbc: Put on a task that is not started")
	}
	before := len(t.mu.buffer)
	for _, r := range records {
		if t.mu.cfg.wantsTopic(r.Topic) {
			t.mu.buffer = append(t.mu.buffer, r)
		}
	}
	if len(t.mu.buffer) >= t.mu.cfg.spillRows() {
		if err := t.writeLocked(ctx); err != nil {
			// The runtime hands these records over again after a
			// failed Put; keep only the earlier ones.
			t.mu.buffer = t.mu.buffer[:before]
			return err
		}
	}
	return nil
}

// Flush writes every buffered record in one transaction and returns after
// it committed. On a retriable failure the buffer is kept (the runtime
// calls Flush again); on any other failure (a constraint violation, a bad
// value) it is dropped, as connect.SinkTask asks: the runtime then fails
// the task, or under errors.tolerance=all writes the records again one at a
// time and dead-letters the ones that fail.
func (t *SinkTask) Flush(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.db == nil {
		return errors.New("jdbc: Flush on a task that is not started")
	}
	err := t.writeLocked(ctx)
	var re *connect.RetriableError
	if err != nil && !errors.As(err, &re) {
		t.mu.buffer = nil
	}
	return err
}

// Stop closes the connection; unflushed records are dropped (their offsets
// were not committed, so they are delivered again).
func (t *SinkTask) Stop() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.buffer = nil
	if t.mu.db == nil {
		return nil
	}
	err := t.mu.db.Close()
	t.mu.db = nil
	return err
}

// sinkRow is one record as a table operation.
type sinkRow struct {
	table   string
	delete  bool
	cols    []string // all columns written, key columns first
	vals    []any    // Connect values, parallel to cols
	schemas []*connect.Schema
	nKey    int // the first nKey columns are the key
}

func (r *sinkRow) shape() string {
	op := "w"
	if r.delete {
		op = "d"
	}
	return op + "\x00" + r.table + "\x00" + strings.Join(r.cols, "\x00")
}

// writeLocked turns the buffer into statements, runs them in one
// transaction and commits. The buffer is kept when anything fails.
func (t *SinkTask) writeLocked(ctx context.Context) error {
	if len(t.mu.buffer) == 0 {
		return nil
	}
	rows := make([]sinkRow, 0, len(t.mu.buffer))
	for i := range t.mu.buffer {
		row, skip, err := t.rowOf(&t.mu.buffer[i])
		if err != nil {
			return err
		}
		if !skip {
			rows = append(rows, row)
		}
	}
	// Tables and columns first, outside the data transaction.
	for i := range rows {
		if err := t.ensureTableLocked(ctx, &rows[i]); err != nil {
			return err
		}
	}
	tx, err := t.mu.db.BeginTx(ctx, nil)
	if err != nil {
		return retriable(fmt.Errorf("jdbc: begin: %w", err))
	}
	for start := 0; start < len(rows); {
		end := start + 1
		shape := rows[start].shape()
		for end < len(rows) && rows[end].shape() == shape {
			end++
		}
		if err := t.writeRun(ctx, tx, rows[start:end]); err != nil {
			tx.Rollback()
			return classify(err)
		}
		start = end
	}
	if err := tx.Commit(); err != nil {
		return retriable(fmt.Errorf("jdbc: commit: %w", err))
	}
	t.mu.buffer = t.mu.buffer[:0]
	return nil
}

// retriable marks an error of the connection (begin, commit) as
// retriable.
func retriable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &connect.RetriableError{Err: err}
}

// rowOf maps a record to its table operation according to pk.mode.
func (t *SinkTask) rowOf(r *connect.SinkRecord) (row sinkRow, skip bool, err error) {
	cfg := t.mu.cfg
	row.table = strings.ReplaceAll(cfg.tableNameFormat, "${topic}", r.Topic)
	where := fmt.Sprintf("record %s/%d@%d", r.Topic, r.Partition, r.Offset)
	if r.Value == nil {
		if !cfg.deleteEnabled {
			return row, true, nil // Confluent ignores tombstones unless delete.enabled
		}
		row.delete = true
		if err := t.keyColumns(&row, r, where); err != nil {
			return row, false, err
		}
		return row, false, nil
	}
	value, ok := r.Value.(*connect.Struct)
	if !ok || value.Schema == nil {
		return row, false, fmt.Errorf("jdbc: %s: the value is %T; jdbc-sink needs a struct with a schema (a converter with schemas enabled)", where, r.Value)
	}
	switch cfg.pkMode {
	case "kafka":
		row.cols = append(row.cols, cfg.pkFields...)
		row.vals = append(row.vals, r.Topic, int32(r.Partition), r.Offset)
		row.schemas = append(row.schemas, &connect.Schema{Type: connect.TypeString}, &connect.Schema{Type: connect.TypeInt32}, &connect.Schema{Type: connect.TypeInt64})
		row.nKey = 3
	case "record_key":
		if err := t.keyColumns(&row, r, where); err != nil {
			return row, false, err
		}
	case "record_value":
		for _, name := range cfg.pkFields {
			v, ok := value.Get(name)
			if !ok {
				return row, false, fmt.Errorf("jdbc: %s: pk.fields names %q, which the value does not have", where, name)
			}
			row.cols = append(row.cols, name)
			row.vals = append(row.vals, v)
			row.schemas = append(row.schemas, value.Schema.Fields[fieldIndex(value.Schema, name)].Schema)
		}
		row.nKey = len(cfg.pkFields)
	}
	inKey := map[string]bool{}
	for _, c := range row.cols {
		inKey[c] = true
	}
	for i, f := range value.Schema.Fields {
		if inKey[f.Name] {
			continue
		}
		row.cols = append(row.cols, f.Name)
		row.vals = append(row.vals, value.Values[i])
		row.schemas = append(row.schemas, f.Schema)
	}
	return row, false, nil
}

func fieldIndex(s *connect.Schema, name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// keyColumns adds the record key's columns (pk.mode record_key).
func (t *SinkTask) keyColumns(row *sinkRow, r *connect.SinkRecord, where string) error {
	cfg := t.mu.cfg
	if r.Key == nil {
		return fmt.Errorf("jdbc: %s: pk.mode record_key but the record has no key", where)
	}
	if key, ok := r.Key.(*connect.Struct); ok && key.Schema != nil {
		names := cfg.pkFields
		if len(names) == 0 {
			for _, f := range key.Schema.Fields {
				names = append(names, f.Name)
			}
		}
		for _, name := range names {
			i := fieldIndex(key.Schema, name)
			if i < 0 {
				return fmt.Errorf("jdbc: %s: pk.fields names %q, which the key does not have", where, name)
			}
			row.cols = append(row.cols, name)
			row.vals = append(row.vals, key.Values[i])
			row.schemas = append(row.schemas, key.Schema.Fields[i].Schema)
		}
		row.nKey = len(names)
		return nil
	}
	if len(cfg.pkFields) != 1 {
		return fmt.Errorf("jdbc: %s: a primitive key needs exactly one pk.fields name for its column", where)
	}
	schema := r.KeySchema
	if schema == nil {
		schema = schemaOfPrimitive(r.Key)
	}
	row.cols = append(row.cols, cfg.pkFields[0])
	row.vals = append(row.vals, r.Key)
	row.schemas = append(row.schemas, schema)
	row.nKey = 1
	return nil
}

func schemaOfPrimitive(v any) *connect.Schema {
	switch v.(type) {
	case int8, int16, int32, int64, int:
		return &connect.Schema{Type: connect.TypeInt64}
	case float32, float64:
		return &connect.Schema{Type: connect.TypeFloat64}
	case bool:
		return &connect.Schema{Type: connect.TypeBoolean}
	case []byte:
		return &connect.Schema{Type: connect.TypeBytes}
	}
	return &connect.Schema{Type: connect.TypeString}
}

// ensureTableLocked creates the table (auto.create) or adds missing columns
// (auto.evolve) so the row fits.
func (t *SinkTask) ensureTableLocked(ctx context.Context, row *sinkRow) error {
	cfg, d, db := t.mu.cfg, t.mu.dialect, t.mu.db
	table, ok := t.mu.tables[row.table]
	if !ok {
		var err error
		if table, err = t.loadTable(ctx, row.table); err != nil {
			return err
		}
	}
	if table == nil {
		if row.delete {
			return nil // nothing to delete from a table that does not exist
		}
		if !cfg.autoCreate {
			return fmt.Errorf("jdbc: table %s does not exist and auto.create is false", row.table)
		}
		var defs []string
		for i, c := range row.cols {
			typ, err := d.sqlType(row.schemas[i])
			if err != nil {
				return fmt.Errorf("jdbc: creating %s: column %s: %w", row.table, c, err)
			}
			def := d.quote(c) + " " + typ
			if i < row.nKey || !row.schemas[i].Optional {
				def += " NOT NULL"
			}
			defs = append(defs, def)
		}
		if row.nKey > 0 {
			quoted := make([]string, row.nKey)
			for i := range quoted {
				quoted[i] = d.quote(row.cols[i])
			}
			defs = append(defs, "PRIMARY KEY ("+strings.Join(quoted, ", ")+")")
		}
		stmt := "CREATE TABLE IF NOT EXISTS " + d.quoteTable(row.table) + " (" + strings.Join(defs, ", ") + ")"
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jdbc: %s: %w", stmt, err)
		}
		if table, err := t.loadTable(ctx, row.table); err != nil || table == nil {
			return fmt.Errorf("jdbc: table %s after CREATE TABLE: %v", row.table, err)
		}
		return nil
	}
	if row.delete {
		for _, c := range row.cols[:row.nKey] {
			if _, ok := table.columns[c]; !ok {
				return fmt.Errorf("jdbc: table %s has no key column %s to delete by", row.table, c)
			}
		}
		return nil
	}
	var missing []int
	for i, c := range row.cols {
		if _, ok := table.columns[c]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !cfg.autoEvolve {
		return fmt.Errorf("jdbc: table %s lacks column %s and auto.evolve is false", row.table, row.cols[missing[0]])
	}
	for _, i := range missing {
		s := row.schemas[i]
		if !s.Optional && s.Default == nil {
			return fmt.Errorf("jdbc: auto.evolve cannot add required field %s to %s: only optional fields (or fields with a default) can be added", row.cols[i], row.table)
		}
		typ, err := d.sqlType(s)
		if err != nil {
			return fmt.Errorf("jdbc: evolving %s: column %s: %w", row.table, row.cols[i], err)
		}
		stmt := "ALTER TABLE " + d.quoteTable(row.table) + " ADD COLUMN " + d.quote(row.cols[i]) + " " + typ
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jdbc: %s: %w", stmt, err)
		}
	}
	_, err := t.loadTable(ctx, row.table)
	return err
}

// loadTable reads a table's columns into the cache; nil when it does not
// exist.
func (t *SinkTask) loadTable(ctx context.Context, name string) (*sinkTable, error) {
	cols, err := t.mu.dialect.columns(ctx, t.mu.db, name)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		delete(t.mu.tables, name)
		return nil, nil
	}
	table := &sinkTable{name: name, columns: map[string]columnInfo{}, kinds: map[string]colKind{}}
	for _, c := range cols {
		table.columns[c.name] = c
		table.kinds[c.name] = mapColumn(c.name, c.dbType, 0, 0, false, true, numericNone).kind
	}
	t.mu.tables[name] = table
	return table, nil
}
