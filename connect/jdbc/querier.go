package jdbc

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	// Strata's own keys (Confluent's reader ignores them): in timestamp
	// mode, how far a timestamp shared by more rows than one query returns
	// was read: its instant (ms, nanos) and the rows of it delivered.
	offsetGroupTS   = "strata.group.timestamp"
	offsetGroupTSNs = "strata.group.timestamp_nanos"
	offsetGroupRows = "strata.group.rows"
	offsetGroupKey  = "strata.group.key" // the last row's key, when paged by an integer primary key
)

// tsColumnAlias names the timestamp expression the source appends to the
// select list in the timestamp modes.
const tsColumnAlias = "strata_jdbc_ts"

// querier reads one table (or the query). Every Poll runs one SELECT of at
// most batch.max.rows rows (LIMIT), reads all of them and closes the result
// before returning: no cursor, and so no connection (SQLite has one), is
// held between Polls. The next query runs at once when the last one filled
// its LIMIT, else poll.interval.ms later.
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

	// bulk mode: rows of the current pass read so far (LIMIT/OFFSET pages),
	// or with a one-column integer primary key the last key read
	bulkOff     int
	bulkHasKey  bool
	bulkLastKey int64
	// timestamp mode: more rows share one timestamp than a query may
	// return; they are read in pages (LIMIT/OFFSET) before the offset moves
	// past that timestamp.
	inGroup  bool
	groupTS  time.Time
	groupOff int
	// With a one-column integer primary key the group is paged by key
	// (pk > last key), which rows updated or deleted meanwhile cannot shift.
	intKey      bool
	groupHasKey bool
	groupKey    int64

	columns  []sourceColumn
	valueSch *connect.Schema
	keySch   *connect.Schema
	keyIdx   []int
	incIdx   int
	tsIdx    int
	scanBuf  []any
	scanPtrs []any

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
		if sd, ok := d.(sqliteDialect); ok {
			if err := q.checkSQLiteTimestamps(ctx, sd); err != nil {
				return err
			}
		}
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
	q.intKey = false
	if len(q.keyCols) == 1 {
		c := q.catalog[q.keyCols[0]]
		q.intKey = mapColumn(c.name, c.dbType, 0, 0, false, false, numericNone).kind <= kindInt64
	}
	q.nextRun = time.Time{}
	return nil
}

// checkSQLiteTimestamps refuses a table whose timestamp columns hold values
// SQLite cannot read as a time (the comparison expression is NULL for
// them): such rows would never match ts > offset and be skipped without a
// sound. Rows whose timestamp columns are all NULL are not read in the
// timestamp modes, as in Confluent's connector.
func (q *querier) checkSQLiteTimestamps(ctx context.Context, d sqliteDialect) error {
	cfg, db := q.task.mu.cfg, q.task.mu.db
	from := d.quoteTable(q.table)
	if q.table == "" {
		from = "(" + cfg.query + ") strata_q"
	}
	inner := d.tsInner(cfg.timestampColumns)
	var bad any
	err := db.QueryRowContext(ctx, "SELECT "+inner+" FROM "+from+" WHERE "+inner+" IS NOT NULL AND "+d.tsExpr(cfg.timestampColumns)+" IS NULL LIMIT 1").Scan(&bad)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return classify(fmt.Errorf("jdbc: checking the timestamp columns of %s: %w", q.describe(), err))
	}
	if b, ok := bad.([]byte); ok {
		bad = string(b)
	}
	return fmt.Errorf("%w: timestamp.column.name of %s holds %q, which SQLite cannot read as a time (text in an ISO-8601 form or a Unix epoch in seconds is needed); such rows would never be read", ErrConfig, q.describe(), fmt.Sprint(bad))
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
	if v, ok := stored[offsetGroupTS]; ok && v != nil && q.task.mu.cfg.mode == modeTimestamp {
		ms, err1 := offsetInt(v)
		ns, err2 := offsetInt(stored[offsetGroupTSNs])
		rows, err3 := offsetInt(stored[offsetGroupRows])
		if err := errors.Join(err1, err2, err3); err != nil || ns < 0 || ns >= 1e9 || rows < 0 {
			return fmt.Errorf("jdbc: offset %v of %s: bad %s: %v", stored, q.describe(), offsetGroupTS, err)
		}
		sec := ms / 1000
		if ms%1000 < 0 {
			sec--
		}
		q.inGroup, q.groupTS, q.groupOff = true, time.Unix(sec, ns).UTC(), int(rows)
		if kv, ok := stored[offsetGroupKey]; ok && kv != nil && q.intKey {
			k, err := offsetInt(kv)
			if err != nil {
				return fmt.Errorf("jdbc: offset %v of %s: %s: %w", stored, q.describe(), offsetGroupKey, err)
			}
			q.groupHasKey, q.groupKey = true, k
		}
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

// groupOffset is the offset of the rows-th row of the timestamp group being
// paged, rec: the last completed timestamp and the position in the group
// (the row's key, when paged by key).
func (q *querier) groupOffset(rows int, rec *connect.SourceRecord) map[string]any {
	out := q.offset()
	out[offsetGroupTS] = q.groupTS.UnixMilli()
	out[offsetGroupTSNs] = int64(q.groupTS.Nanosecond())
	out[offsetGroupRows] = int64(rows)
	if k, ok := q.rowKey(rec); ok {
		out[offsetGroupKey] = k
	}
	return out
}

// rowKey is a record's integer primary key, when the table has one.
func (q *querier) rowKey(rec *connect.SourceRecord) (int64, bool) {
	if !q.intKey {
		return 0, false
	}
	key, ok := rec.Key.(*connect.Struct)
	if !ok || len(key.Values) != 1 {
		return 0, false
	}
	k, err := asInt64(key.Values[0])
	return k, err == nil
}

// noteGroupKey remembers the key of the last row of a group page.
func (q *querier) noteGroupKey(records []connect.SourceRecord) {
	if len(records) == 0 {
		return
	}
	if k, ok := q.rowKey(&records[len(records)-1]); ok {
		q.groupHasKey, q.groupKey = true, k
	}
}

// close releases nothing: no result set outlives a Poll. It forgets the
// position of a bulk pass or a timestamp group in progress.
func (q *querier) close() {
	q.bulkOff, q.bulkHasKey, q.inGroup, q.groupOff, q.groupHasKey = 0, false, false, 0, false
}

// poll runs one query from the current offset and returns its rows (at most
// batch.max.rows), closing the result before it returns.
func (q *querier) poll(ctx context.Context) ([]connect.SourceRecord, error) {
	cfg := q.task.mu.cfg
	rows, err := q.startRound(ctx)
	if err != nil {
		return nil, err
	}
	records := make([]connect.SourceRecord, 0, min(cfg.batchMaxRows, 1024))
	var stamps []time.Time
	var readErr error
	for rows.Next() {
		rec, ts, err := q.record(rows)
		if err != nil {
			readErr = err
			break
		}
		records = append(records, rec)
		stamps = append(stamps, ts)
	}
	if readErr == nil {
		if err := rows.Err(); err != nil {
			readErr = classify(fmt.Errorf("jdbc: reading %s: %w", q.describe(), err))
		}
	}
	if err := rows.Close(); err != nil && readErr == nil {
		readErr = classify(fmt.Errorf("jdbc: reading %s: %w", q.describe(), err))
	}
	full := len(records) >= cfg.batchMaxRows
	switch {
	case cfg.mode == modeTimestamp:
		wasInGroup := q.inGroup
		out, err := q.finishTimestamp(records, stamps, full, readErr)
		if err == nil && len(out) == 0 && !wasInGroup && q.inGroup {
			// Entered a timestamp group without a key: read its
			// first page now, in the order it is paged in.
			return q.poll(ctx)
		}
		return out, err
	case readErr != nil:
		// Records read before the failure go out (each carries its own
		// offset) and the next query starts after them.
		if len(records) == 0 {
			return nil, readErr
		}
		if cfg.mode == modeBulk {
			q.bulkOff += len(records)
			if k, ok := q.rowKey(&records[len(records)-1]); ok {
				q.bulkHasKey, q.bulkLastKey = true, k
			}
		}
		q.nextRun = time.Now()
		return records, nil
	case cfg.mode == modeBulk:
		if full {
			q.bulkOff += len(records)
			if k, ok := q.rowKey(&records[len(records)-1]); ok {
				q.bulkHasKey, q.bulkLastKey = true, k
			}
			q.nextRun = time.Now()
		} else {
			q.bulkOff, q.bulkHasKey = 0, false
			q.nextRun = time.Now().Add(cfg.pollInterval)
		}
		return records, nil
	}
	if full {
		q.nextRun = time.Now() // more rows wait behind the LIMIT
	} else {
		q.nextRun = time.Now().Add(cfg.pollInterval)
	}
	return records, nil
}

// finishTimestamp gives the records of a timestamp-mode query their
// offsets. The offset may only move to a timestamp T once every row stamped
// T was returned, since the next query asks for ts > offset: a record
// carries T when it is the last row of T in a complete result, else the
// last timestamp completed before it. When the result is cut (LIMIT or a
// read error) the rows of its last timestamp may be incomplete: they are
// left for the next query, unless they are all the result holds, in which
// case that timestamp is read in pages until a page comes back short.
func (q *querier) finishTimestamp(records []connect.SourceRecord, stamps []time.Time, full bool, readErr error) ([]connect.SourceRecord, error) {
	cfg := q.task.mu.cfg
	n := len(records)
	if q.inGroup {
		if n == 0 && readErr != nil {
			return nil, readErr
		}
		for i := range records {
			records[i].SourceOffset = q.groupOffset(q.groupOff+i+1, &records[i])
		}
		q.groupOff += n
		q.noteGroupKey(records)
		if !full && readErr == nil {
			// The group is complete: the offset passes its timestamp.
			q.inGroup, q.groupOff, q.groupHasKey = false, 0, false
			q.hasTS, q.ts = true, q.groupTS
			if n > 0 {
				records[n-1].SourceOffset = q.offset()
			}
		}
		q.nextRun = time.Now()
		return records, nil
	}
	cut := n
	if full || readErr != nil {
		for cut > 0 && stamps[cut-1].Equal(stamps[n-1]) {
			cut--
		}
		if cut == 0 {
			if readErr != nil {
				return nil, readErr // nothing complete; the next query reads them again
			}
			// One timestamp fills the whole LIMIT: page through it.
			q.inGroup, q.groupTS, q.groupOff, q.groupHasKey = true, stamps[0], n, false
			q.nextRun = time.Now()
			if len(q.keyCols) == 0 {
				// Without a key this page's order is not the one
				// the group is paged in: read the group from its
				// start instead.
				q.groupOff = 0
				return nil, nil
			}
			for i := range records {
				records[i].SourceOffset = q.groupOffset(i+1, &records[i])
			}
			q.noteGroupKey(records)
			return records, nil
		}
	}
	records = records[:cut]
	for i := range records {
		if i+1 == cut || !stamps[i+1].Equal(stamps[i]) {
			q.hasTS, q.ts = true, stamps[i]
		}
		records[i].SourceOffset = q.offset()
	}
	if full || readErr != nil {
		q.nextRun = time.Now()
	} else {
		q.nextRun = time.Now().Add(cfg.pollInterval)
	}
	return records, nil
}

// startRound builds and runs the query of one Poll: at most batch.max.rows
// rows from the current offset.
func (q *querier) startRound(ctx context.Context) (*sql.Rows, error) {
	t := q.task
	cfg, d, db := t.mu.cfg, t.mu.dialect, t.mu.db
	from := d.quoteTable(q.table)
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
	offset := 0
	// keyOrder makes LIMIT/OFFSET pages stable where the table has a
	// primary key.
	keyOrder := func() string {
		if len(q.keyCols) == 0 {
			return ""
		}
		quoted := make([]string, len(q.keyCols))
		for i, k := range q.keyCols {
			quoted[i] = d.quote(k)
		}
		return " ORDER BY " + strings.Join(quoted, ", ")
	}
	switch cfg.mode {
	case modeBulk:
		// Pages by key where there is a one-column integer primary key
		// (each page an index range), else by OFFSET.
		order = keyOrder()
		switch {
		case q.intKey && q.bulkHasKey:
			where = append(where, d.quote(q.keyCols[0])+" > "+arg(q.bulkLastKey))
		default:
			offset = q.bulkOff
		}
	case modeIncrementing:
		if q.hasInc {
			where = append(where, incCol+" > "+arg(q.inc))
		}
		order = " ORDER BY " + incCol + " ASC"
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
		if q.inGroup {
			// Paging through the rows of one timestamp.
			where = append(where, tsExpr+" = "+d.tsCompare(arg(d.tsParam(q.groupTS, naive)), naive))
			order = keyOrder()
			if order == "" && q.table != "" {
				// No key: the physical row order, stable for rows
				// that do not change between pages.
				if d.name() == "postgresql" {
					order = " ORDER BY ctid"
				} else {
					order = " ORDER BY rowid"
				}
			}
			switch {
			case q.intKey && q.groupHasKey:
				where = append(where, d.quote(q.keyCols[0])+" > "+arg(q.groupKey))
			default:
				offset = q.groupOff
			}
			break
		}
		now, err := d.now(ctx, db)
		if err != nil {
			return nil, classify(err)
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
		} else if ko := keyOrder(); ko != "" {
			// Rows of one timestamp in key order, the order its pages
			// are read in when it fills a whole query.
			order += ", " + strings.TrimPrefix(ko, " ORDER BY ")
		}
	}
	stmt := "SELECT " + selectList + " FROM " + from
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	stmt += order + " LIMIT " + strconv.Itoa(cfg.batchMaxRows)
	if offset > 0 {
		stmt += " OFFSET " + strconv.Itoa(offset)
	}
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, classify(fmt.Errorf("jdbc: querying %s: %w", q.describe(), err))
	}
	if err := q.describeResult(rows); err != nil {
		rows.Close()
		return nil, err
	}
	return rows, nil
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

// record turns the current row into a record and returns the row's
// timestamp (timestamp modes). It advances the offset, except in
// timestamp-only mode, where finishTimestamp sets the records' offsets.
func (q *querier) record(rows *sql.Rows) (connect.SourceRecord, time.Time, error) {
	cfg := q.task.mu.cfg
	if err := rows.Scan(q.scanPtrs...); err != nil {
		return connect.SourceRecord{}, time.Time{}, classify(fmt.Errorf("jdbc: reading %s: %w", q.describe(), err))
	}
	values := make([]any, len(q.columns))
	for i := range q.columns {
		v, err := q.columns[i].convert(q.scanBuf[i], cfg.dbTimezone)
		if err != nil {
			return connect.SourceRecord{}, time.Time{}, fmt.Errorf("jdbc: %s: %w", q.describe(), err)
		}
		values[i] = v
	}
	if q.incIdx >= 0 {
		n, err := asInt64(q.scanBuf[q.incIdx])
		if err != nil {
			return connect.SourceRecord{}, time.Time{}, fmt.Errorf("jdbc: %s: incrementing column %s: %w", q.describe(), cfg.incrementingColumn, err)
		}
		q.hasInc, q.inc = true, n
	}
	var ts time.Time
	if q.tsIdx >= 0 {
		var err error
		ts, err = asTime(q.scanBuf[q.tsIdx], "")
		if err != nil {
			return connect.SourceRecord{}, time.Time{}, fmt.Errorf("jdbc: %s: timestamp columns: %w", q.describe(), err)
		}
		if q.naiveTS && !q.absTS {
			ts = time.Date(ts.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), ts.Nanosecond(), time.UTC)
		}
		ts = ts.UTC()
		if cfg.mode != modeTimestamp {
			q.hasTS, q.ts = true, ts
		}
	}
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
	return rec, ts, nil
}
