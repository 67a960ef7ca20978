package jdbc

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// Offset and partition keys, as Confluent's JDBC source writes them.
const (
	partitionTableKey  = "table"
	partitionQueryKey  = "query"
	offsetIncrementing = "incrementing"
	offsetTimestamp    = "timestamp"       // milliseconds since the epoch
	offsetTimestampNs  = "timestamp_nanos" // nanoseconds within that second
)

// tsColumnAlias names the timestamp expression the source appends to the
// select list in the timestamp modes.
const tsColumnAlias = "strata_jdbc_ts"

// querier reads one table (or the query) in rounds: a round runs one SELECT
// from the current offset and hands its rows out batch.max.rows per Poll;
// the next round starts at once when an incrementing round hit its LIMIT,
// else poll.interval.ms later.
type querier struct {
	task      *SourceTask
	table     string // "" in query mode
	query     string
	partition map[string]any
	topic     string

	// from prepare
	catalog map[string]columnInfo
	keyCols []string // primary key, in key order
	naiveTS bool     // timestamp columns are timestamp without time zone
	// absTS: naive columns compared as instants, (ts AT TIME ZONE
	// db.timezone), because db.timezone has DST (PostgreSQL only).
	absTS     bool
	tsChecked bool

	// offset of the last row returned
	hasInc bool
	inc    int64
	hasTS  bool
	ts     time.Time // instant (timestamptz) or wall clock labelled UTC (naive)

	// the current round
	rows      *sql.Rows
	columns   []sourceColumn
	valueSch  *connect.Schema
	keySch    *connect.Schema
	keyIdx    []int
	incIdx    int
	tsIdx     int
	scanBuf   []any
	scanPtrs  []any
	roundRows int
	limited   bool

	nextRun time.Time
}

func newQuerier(t *SourceTask, table, query string) *querier {
	q := &querier{task: t, table: table, query: query}
	cfg := t.mu.cfg
	if table != "" {
		q.partition = map[string]any{partitionTableKey: table}
		q.topic = cfg.topicPrefix + table
	} else {
		q.partition = map[string]any{partitionQueryKey: "query"}
		q.topic = cfg.topicPrefix
	}
	return q
}

func (q *querier) key() string { return q.table }

func (q *querier) describe() string {
	if q.table != "" {
		return "table " + q.table
	}
	return "query"
}

// prepare reads the table's columns and primary key and checks that the
// configured columns exist and the time zone rule holds.
func (q *querier) prepare(ctx context.Context) error {
	t := q.task
	cfg, d, db := t.mu.cfg, t.mu.dialect, t.mu.db
	if q.table == "" {
		// Query mode: learn the result's column types with an empty read.
		rows, err := db.QueryContext(ctx, "SELECT * FROM ("+cfg.query+") strata_q LIMIT 0")
		if err != nil {
			return fmt.Errorf("jdbc: query: %w", err)
		}
		defer rows.Close()
		types, err := rows.ColumnTypes()
		if err != nil {
			return fmt.Errorf("jdbc: query: %w", err)
		}
		q.catalog = map[string]columnInfo{}
		for _, ct := range types {
			q.catalog[ct.Name()] = columnInfo{name: ct.Name(), dbType: strings.ToUpper(ct.DatabaseTypeName()), nullable: true}
		}
	} else {
		cols, err := d.columns(ctx, db, q.table)
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return fmt.Errorf("jdbc: table %s has no columns or does not exist", q.table)
		}
		q.catalog = map[string]columnInfo{}
		pk := map[int]string{}
		for _, c := range cols {
			q.catalog[c.name] = c
			if c.pk > 0 {
				pk[c.pk] = c.name
			}
		}
		for i := 1; i <= len(pk); i++ {
			q.keyCols = append(q.keyCols, pk[i])
		}
	}
	names := func() string {
		var out []string
		for n := range q.catalog {
			out = append(out, n)
		}
		return strings.Join(out, ", ")
	}
	if cfg.mode == modeIncrementing || cfg.mode == modeTimestampIncrementing {
		c, ok := q.catalog[cfg.incrementingColumn]
		if !ok {
			return fmt.Errorf("%w: incrementing.column.name %q is not a column of %s (columns: %s)", ErrConfig, cfg.incrementingColumn, q.describe(), names())
		}
		if k := mapColumn(c.name, c.dbType, 0, 0, false, false, numericPrecisionOnly).kind; k > kindInt64 && k != kindDecimal {
			return fmt.Errorf("%w: incrementing.column.name %q of %s is %s, not an integer", ErrConfig, c.name, q.describe(), c.dbType)
		}
	}
	if cfg.mode == modeTimestamp || cfg.mode == modeTimestampIncrementing {
		naive, aware := 0, 0
		for _, name := range cfg.timestampColumns {
			c, ok := q.catalog[name]
			if !ok {
				return fmt.Errorf("%w: timestamp.column.name %q is not a column of %s (columns: %s)", ErrConfig, name, q.describe(), names())
			}
			switch mapColumn(c.name, c.dbType, 0, 0, false, false, numericNone).kind {
			case kindTimestamp, kindDate:
				naive++
			case kindTimestampTZ:
				aware++
			default:
				if d.name() != "sqlite" {
					return fmt.Errorf("%w: timestamp.column.name %q of %s is %s, not a timestamp", ErrConfig, name, q.describe(), c.dbType)
				}
				naive++ // SQLite: text holding a timestamp
			}
		}
		if naive > 0 && aware > 0 {
			return fmt.Errorf("%w: timestamp.column.name mixes timestamp with and without time zone in %s; COALESCE of both cannot be compared safely", ErrConfig, q.describe())
		}
		q.naiveTS = naive > 0
		q.absTS = q.naiveTS && d.name() == "postgresql" && hasDST(cfg.dbTimezone, time.Now())
		if q.naiveTS {
			if err := q.task.verifyZoneLocked(ctx); err != nil {
				return err
			}
		}
	}
	// Values of naive timestamp columns are read in db.timezone in every
	// mode: a wrong zone would shift them by hours without a sound.
	for _, c := range q.catalog {
		if mapColumn(c.name, c.dbType, 0, 0, false, false, numericNone).kind == kindTimestamp {
			if err := q.task.verifyZoneLocked(ctx); err != nil {
				return err
			}
			break
		}
	}
	q.nextRun = time.Time{}
	return nil
}

// verifyZoneLocked enforces the time zone rule for PostgreSQL: naive
// timestamps are read in db.timezone, so db.timezone must name the same
// rules as the database's TimeZone setting (the zone sessions write naive
// values in by default). Checked over six years of instants, DST included.
func (t *SourceTask) verifyZoneLocked(ctx context.Context) error {
	if t.mu.zoneVerified || t.mu.dialect.name() != "postgresql" {
		return nil
	}
	var same bool
	var dbZone string
	err := t.mu.db.QueryRowContext(ctx, `SELECT coalesce(bool_and((x AT TIME ZONE $1) = (x AT TIME ZONE current_setting('TimeZone'))), true),
			current_setting('TimeZone')
		FROM generate_series(now() - interval '3 years', now() + interval '3 years', interval '1 hour') x`,
		t.mu.cfg.dbTimezoneName).Scan(&same, &dbZone)
	if err != nil {
		return fmt.Errorf("jdbc: checking db.timezone %q against the database: %w", t.mu.cfg.dbTimezoneName, err)
	}
	if !same {
		return fmt.Errorf("%w: db.timezone is %q but the database's TimeZone is %q: timestamp without time zone columns would be read in the wrong zone and rows could be skipped; set db.timezone=%s (or change the database's TimeZone)",
			ErrConfig, t.mu.cfg.dbTimezoneName, dbZone, dbZone)
	}
	t.mu.zoneVerified = true
	return nil
}

// restore sets the offset from a committed one (nil: start from the
// beginning).
func (q *querier) restore(stored map[string]any) error {
	if stored == nil {
		return nil
	}
	if v, ok := stored[offsetIncrementing]; ok && v != nil {
		n, err := offsetInt(v)
		if err != nil {
			return fmt.Errorf("jdbc: offset %v of %s: incrementing: %w", stored, q.describe(), err)
		}
		q.hasInc, q.inc = true, n
	}
	if v, ok := stored[offsetTimestamp]; ok && v != nil {
		ms, err := offsetInt(v)
		if err != nil {
			return fmt.Errorf("jdbc: offset %v of %s: timestamp: %w", stored, q.describe(), err)
		}
		var nanos int64
		if nv, ok := stored[offsetTimestampNs]; ok && nv != nil {
			if nanos, err = offsetInt(nv); err != nil || nanos < 0 || nanos >= 1e9 {
				return fmt.Errorf("jdbc: offset %v of %s: timestamp_nanos %v is not 0..999999999", stored, q.describe(), nv)
			}
		} else {
			nanos = (ms%1000 + 1000) % 1000 * 1e6
		}
		sec := ms / 1000
		if ms%1000 < 0 {
			sec--
		}
		q.hasTS, q.ts = true, time.Unix(sec, nanos).UTC()
	}
	return nil
}

// hasDST reports whether loc's UTC offset changes within three years of
// now.
func hasDST(loc *time.Location, now time.Time) bool {
	_, first := now.In(loc).Zone()
	for m := -36; m <= 36; m++ {
		if _, off := now.AddDate(0, m, 0).In(loc).Zone(); off != first {
			return true
		}
	}
	return false
}

// quoteLiteral quotes a SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func offsetInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("%v is not an exact integer", x)
		}
		return int64(x), nil
	case json.Number:
		return x.Int64()
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

// offset is the source offset after the last row returned.
func (q *querier) offset() map[string]any {
	out := make(map[string]any, 3)
	if q.hasInc {
		out[offsetIncrementing] = q.inc
	}
	if q.hasTS {
		out[offsetTimestamp] = q.ts.UnixMilli()
		out[offsetTimestampNs] = int64(q.ts.Nanosecond())
	}
	return out
}

func (q *querier) close() {
	if q.rows != nil {
		q.rows.Close()
		q.rows = nil
	}
}

// poll returns the next rows of the current round, starting a round when
// none is open. Queries run under roundCtx (the task's life), so a round's
// cursor survives between Polls; ctx bounds the wait for a new round.
func (q *querier) poll(ctx, roundCtx context.Context) ([]connect.SourceRecord, error) {
	if q.rows == nil {
		if err := q.startRound(ctx, roundCtx); err != nil {
			return nil, err
		}
	}
	cfg := q.task.mu.cfg
	records := make([]connect.SourceRecord, 0, min(cfg.batchMaxRows, 1024))
	// failed ends the round early; records read before the failure go
	// out (the offset is theirs) and the next round starts after them.
	failed := func(err error) ([]connect.SourceRecord, error) {
		q.close()
		if len(records) > 0 {
			q.nextRun = time.Now()
			return records, nil
		}
		return nil, err
	}
	for len(records) < cfg.batchMaxRows {
		if !q.rows.Next() {
			if err := q.rows.Err(); err != nil {
				return failed(classify(fmt.Errorf("jdbc: reading %s: %w", q.describe(), err)))
			}
			q.close()
			q.endRound()
			break
		}
		rec, err := q.record()
		if err != nil {
			return failed(err)
		}
		records = append(records, rec)
	}
	return records, nil
}

func (q *querier) endRound() {
	cfg := q.task.mu.cfg
	if q.limited && q.roundRows >= cfg.batchMaxRows {
		q.nextRun = time.Now() // more rows wait behind the LIMIT
	} else {
		q.nextRun = time.Now().Add(cfg.pollInterval)
	}
}

// startRound builds and runs the round's SELECT.
func (q *querier) startRound(ctx, roundCtx context.Context) error {
	t := q.task
	cfg, d, db := t.mu.cfg, t.mu.dialect, t.mu.db
	from := d.quote(q.table)
	if q.table == "" {
		from = "(" + cfg.query + ") strata_q"
	}
	incCol := d.quote(cfg.incrementingColumn)
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return d.placeholder(len(args))
	}
	selectList := "*"
	var order string
	q.limited = false
	switch cfg.mode {
	case modeIncrementing:
		if q.hasInc {
			where = append(where, incCol+" > "+arg(q.inc))
		}
		order = " ORDER BY " + incCol + " ASC"
		q.limited = true
	case modeTimestamp, modeTimestampIncrementing:
		tsExpr := d.tsExpr(cfg.timestampColumns)
		naive := q.naiveTS
		if q.absTS {
			// Wall clocks of a DST zone repeat an hour each autumn;
			// as instants the rows of that hour still come in order
			// (PostgreSQL reads an ambiguous time as the later one, so
			// such rows are late, never skipped).
			tsExpr = "(" + tsExpr + " AT TIME ZONE " + quoteLiteral(cfg.dbTimezoneName) + ")"
			naive = false
		}
		selectList = "*, " + tsExpr + " AS " + tsColumnAlias
		now, err := d.now(ctx, db)
		if err != nil {
			return classify(err)
		}
		upper := now.Add(-cfg.timestampDelay)
		if naive {
			upper = wallAsUTC(upper, cfg.dbTimezone)
		}
		where = append(where, tsExpr+" < "+d.tsCompare(arg(d.tsParam(upper, naive)), naive))
		if q.hasTS {
			if cfg.mode == modeTimestamp {
				where = append(where, tsExpr+" > "+d.tsCompare(arg(d.tsParam(q.ts, naive)), naive))
			} else {
				// A row-value comparison: (ts, id) > (last ts, last id)
				// means ts > last OR (ts = last AND id > last id), and
				// PostgreSQL can answer it from an index on (ts, id).
				last := d.tsCompare(arg(d.tsParam(q.ts, naive)), naive)
				if q.hasInc {
					where = append(where, "("+tsExpr+", "+incCol+") > ("+last+", "+arg(q.inc)+")")
				} else {
					where = append(where, tsExpr+" >= "+last)
				}
			}
		}
		order = " ORDER BY " + tsExpr + " ASC"
		if cfg.mode == modeTimestampIncrementing {
			order += ", " + incCol + " ASC"
			q.limited = true
		}
	}
	stmt := "SELECT " + selectList + " FROM " + from
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	stmt += order
	if q.limited {
		stmt += " LIMIT " + strconv.Itoa(cfg.batchMaxRows)
	}
	rows, err := db.QueryContext(roundCtx, stmt, args...)
	if err != nil {
		return classify(fmt.Errorf("jdbc: querying %s: %w", q.describe(), err))
	}
	if err := q.describeResult(rows); err != nil {
		rows.Close()
		return err
	}
	q.rows, q.roundRows = rows, 0
	return nil
}

// describeResult maps the result's columns to Connect schemas, reusing the
// previous round's schemas when nothing changed.
func (q *querier) describeResult(rows *sql.Rows) error {
	cfg := q.task.mu.cfg
	types, err := rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("jdbc: columns of %s: %w", q.describe(), err)
	}
	q.tsIdx, q.incIdx = -1, -1
	n := len(types)
	if cfg.mode == modeTimestamp || cfg.mode == modeTimestampIncrementing {
		n-- // the appended timestamp expression
		q.tsIdx = n
	}
	cols := make([]sourceColumn, n)
	for i := 0; i < n; i++ {
		ct := types[i]
		name := ct.Name()
		optional := true
		if info, ok := q.catalog[name]; ok && q.table != "" {
			optional = info.nullable
		}
		p, s, ok := ct.DecimalSize()
		cols[i] = mapColumn(name, ct.DatabaseTypeName(), p, s, ok, optional, cfg.numericMapping)
		if name == cfg.incrementingColumn {
			q.incIdx = i
		}
	}
	if (cfg.mode == modeIncrementing || cfg.mode == modeTimestampIncrementing) && q.incIdx < 0 {
		return fmt.Errorf("%w: incrementing.column.name %q is not in the result of %s", ErrConfig, cfg.incrementingColumn, q.describe())
	}
	if !sameColumns(cols, q.columns) {
		q.columns = cols
		fields := make([]connect.Field, n)
		for i := range cols {
			fields[i] = connect.Field{Name: cols[i].name, Index: i, Schema: cols[i].schema}
		}
		q.valueSch = &connect.Schema{Type: connect.TypeStruct, Name: q.table, Fields: fields}
		q.keySch, q.keyIdx = nil, nil
		if len(q.keyCols) > 0 {
			var keyFields []connect.Field
			for _, k := range q.keyCols {
				for i := range cols {
					if cols[i].name == k {
						s := *cols[i].schema
						s.Optional = false
						keyFields = append(keyFields, connect.Field{Name: k, Index: len(keyFields), Schema: &s})
						q.keyIdx = append(q.keyIdx, i)
					}
				}
			}
			if len(keyFields) == len(q.keyCols) {
				q.keySch = &connect.Schema{Type: connect.TypeStruct, Name: q.table + ".Key", Fields: keyFields}
			} else {
				q.keyIdx = nil
			}
		}
		q.scanBuf = make([]any, len(types))
		q.scanPtrs = make([]any, len(types))
		for i := range q.scanBuf {
			q.scanPtrs[i] = &q.scanBuf[i]
		}
	}
	return nil
}

func sameColumns(a, b []sourceColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].kind != b[i].kind || a[i].scale != b[i].scale || a[i].schema.Optional != b[i].schema.Optional {
			return false
		}
	}
	return true
}

// record turns the current row into a record and advances the offset.
func (q *querier) record() (connect.SourceRecord, error) {
	cfg := q.task.mu.cfg
	if err := q.rows.Scan(q.scanPtrs...); err != nil {
		return connect.SourceRecord{}, fmt.Errorf("jdbc: reading %s: %w", q.describe(), err)
	}
	values := make([]any, len(q.columns))
	for i := range q.columns {
		v, err := q.columns[i].convert(q.scanBuf[i], cfg.dbTimezone)
		if err != nil {
			return connect.SourceRecord{}, fmt.Errorf("jdbc: %s: %w", q.describe(), err)
		}
		values[i] = v
	}
	if q.incIdx >= 0 {
		n, err := asInt64(q.scanBuf[q.incIdx])
		if err != nil {
			return connect.SourceRecord{}, fmt.Errorf("jdbc: %s: incrementing column %s: %w", q.describe(), cfg.incrementingColumn, err)
		}
		q.hasInc, q.inc = true, n
	}
	if q.tsIdx >= 0 {
		ts, err := asTime(q.scanBuf[q.tsIdx], "")
		if err != nil {
			return connect.SourceRecord{}, fmt.Errorf("jdbc: %s: timestamp columns: %w", q.describe(), err)
		}
		if q.naiveTS && !q.absTS {
			ts = time.Date(ts.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), ts.Nanosecond(), time.UTC)
		}
		q.hasTS, q.ts = true, ts.UTC()
	}
	q.roundRows++
	rec := connect.SourceRecord{
		SourcePartition: q.partition,
		SourceOffset:    q.offset(),
		Topic:           q.topic,
		ValueSchema:     q.valueSch,
		Value:           &connect.Struct{Schema: q.valueSch, Values: values},
	}
	if q.keySch != nil {
		keyValues := make([]any, len(q.keyIdx))
		for i, idx := range q.keyIdx {
			keyValues[i] = values[idx]
		}
		rec.KeySchema, rec.Key = q.keySch, &connect.Struct{Schema: q.keySch, Values: keyValues}
	}
	return rec, nil
}
