package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/connect"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// dialect is what differs between the databases the connectors speak:
// identifier quoting, placeholders, catalog queries, the database clock and
// the SQL types the sink creates.
type dialect interface {
	name() string
	// quote quotes one column identifier as it is (dots included).
	quote(ident string) string
	// quoteTable quotes a table name, a dotted schema.table part by part.
	quoteTable(name string) string
	placeholder(n int) string // 1-based
	// listTables returns the base tables visible without qualification.
	listTables(ctx context.Context, db *sql.DB) ([]string, error)
	// columns describes a table's columns, in order.
	columns(ctx context.Context, db *sql.DB, table string) ([]columnInfo, error)
	// now reads the database's clock as an absolute instant.
	now(ctx context.Context, db *sql.DB) (time.Time, error)
	// tsExpr is the SQL expression the source compares and orders by for
	// the given timestamp columns (several: COALESCE).
	tsExpr(cols []string) string
	// tsParam renders a timestamp offset or bound as the parameter compared
	// with tsExpr: a naive wall-clock reading (wall) or an instant.
	tsParam(t time.Time, naive bool) any
	// tsCompare wraps a placeholder so it compares with tsExpr.
	tsCompare(placeholder string, naive bool) string
	// sqlType is the column type the sink creates for a Connect schema.
	sqlType(s *connect.Schema) (string, error)
	// upsertSuffix is the clause after a multi-row INSERT that turns it
	// into an upsert on pk, updating cols.
	upsertSuffix(pk, cols []string) string
}

// columnInfo is one column of a table as the catalog describes it.
type columnInfo struct {
	name     string
	dbType   string // upper case, e.g. INT4, TIMESTAMPTZ, VARCHAR(20)
	nullable bool
	pk       int // 1-based position in the primary key, 0 when not in it
}

// openDatabase parses connection.url (a JDBC URL or a native DSN), opens the
// database and checks that it answers.
func openDatabase(ctx context.Context, rawURL, user, password string) (*sql.DB, dialect, error) {
	driver, dsn, d, err := parseConnectionURL(rawURL, user, password)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("jdbc: open %s: %w", d.name(), err)
	}
	if d.name() == "sqlite" {
		// One writer at a time; a single connection also keeps
		// in-memory databases whole.
		db.SetMaxOpenConns(1)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, nil, &connect.RetriableError{Err: fmt.Errorf("jdbc: connecting to %s: %w", redactURL(rawURL), err)}
	}
	return db, d, nil
}

// parseConnectionURL maps connection.url to a database/sql driver and DSN.
// Accepted: jdbc:postgresql://host[:port]/db[?params], postgres:// and
// postgresql:// URLs, libpq keyword DSNs (host=... dbname=...),
// jdbc:sqlite:path, sqlite:path and file: URIs.
func parseConnectionURL(raw, user, password string) (driver, dsn string, d dialect, err error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", "", nil, fmt.Errorf("%w: connection.url is empty", ErrConfig)
	case strings.HasPrefix(raw, "jdbc:postgresql:"):
		rest := strings.TrimPrefix(raw, "jdbc:postgresql:")
		if !strings.HasPrefix(rest, "//") {
			return "", "", nil, fmt.Errorf("%w: connection.url %q: want jdbc:postgresql://host[:port]/database", ErrConfig, redactURL(raw))
		}
		dsn, err := postgresURL("postgres:"+rest, user, password)
		return "pgx", dsn, postgresDialect{}, err
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		dsn, err := postgresURL(raw, user, password)
		return "pgx", dsn, postgresDialect{}, err
	case strings.Contains(raw, "=") && !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "jdbc:") && !strings.HasPrefix(raw, "file:"):
		dsn := raw
		if user != "" {
			dsn += " user=" + quoteKeyword(user)
		}
		if password != "" {
			dsn += " password=" + quoteKeyword(password)
		}
		return "pgx", dsn, postgresDialect{}, nil
	case strings.HasPrefix(raw, "jdbc:sqlite:"), strings.HasPrefix(raw, "sqlite:"), strings.HasPrefix(raw, "file:"):
		path := strings.TrimPrefix(strings.TrimPrefix(raw, "jdbc:"), "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" || path == "file:" {
			return "", "", nil, fmt.Errorf("%w: connection.url %q names no SQLite file", ErrConfig, raw)
		}
		if !strings.HasPrefix(path, "file:") {
			path = "file:" + path
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		// Wait for a writer instead of failing with SQLITE_BUSY.
		return "sqlite", path + sep + "_pragma=busy_timeout(10000)", sqliteDialect{}, nil
	}
	return "", "", nil, fmt.Errorf("%w: connection.url %q: want jdbc:postgresql://..., postgres://..., a libpq DSN, or jdbc:sqlite:path", ErrConfig, redactURL(raw))
}

// postgresURL moves JDBC-style user and password parameters (and the
// connection.user/connection.password settings) into the URL's user info.
func postgresURL(raw, user, password string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: connection.url: %v", ErrConfig, err)
	}
	q := u.Query()
	if v := q.Get("user"); v != "" && user == "" {
		user = v
	}
	if v := q.Get("password"); v != "" && password == "" {
		password = v
	}
	q.Del("user")
	q.Del("password")
	if user == "" && u.User != nil {
		user = u.User.Username()
	}
	if password == "" && u.User != nil {
		password, _ = u.User.Password()
	}
	switch {
	case password != "":
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func quoteKeyword(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// redactURL hides a password in a URL for error messages.
func redactURL(raw string) string {
	u, err := url.Parse(strings.TrimPrefix(raw, "jdbc:"))
	if err != nil || u.User == nil {
		if i := strings.Index(raw, "password="); i >= 0 {
			return raw[:i] + "password=xxxxx"
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	prefix := ""
	if strings.HasPrefix(raw, "jdbc:") {
		prefix = "jdbc:"
	}
	return prefix + u.String()
}

// quoteParts quotes a possibly dotted table name (schema.table) part by
// part with q's quote character.
func quoteParts(ident string, q byte) string {
	parts := strings.Split(ident, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p, q)
	}
	return strings.Join(parts, ".")
}

// quoteIdent quotes one identifier whole: a column named "a.b" stays one
// column.
func quoteIdent(ident string, q byte) string {
	s := string(q)
	return s + strings.ReplaceAll(ident, s, s+s) + s
}

// splitTable splits schema.table; schema is "" when absent.
func splitTable(name string) (schema, table string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// postgresDialect speaks PostgreSQL through pgx.
type postgresDialect struct{}

func (postgresDialect) name() string                  { return "postgresql" }
func (postgresDialect) quote(ident string) string     { return quoteIdent(ident, '"') }
func (postgresDialect) quoteTable(name string) string { return quoteParts(name, '"') }
func (postgresDialect) placeholder(n int) string      { return "$" + strconv.Itoa(n) }

func (postgresDialect) listTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("jdbc: listing tables: %w", err)
	}
	return scanStrings(rows)
}

func (d postgresDialect) columns(ctx context.Context, db *sql.DB, table string) ([]columnInfo, error) {
	schema, name := splitTable(table)
	schemaExpr := "current_schema()"
	args := []any{name}
	if schema != "" {
		schemaExpr = "$2"
		args = append(args, schema)
	}
	rows, err := db.QueryContext(ctx, `SELECT a.attname, upper(format_type(a.atttypid, NULL)), NOT a.attnotnull,
			CASE WHEN i.indkey IS NULL OR NOT a.attnum = ANY(i.indkey::int2[]) THEN 0
				ELSE array_position(i.indkey::int2[], a.attnum) - array_lower(i.indkey::int2[], 1) + 1 END
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		WHERE c.relname = $1 AND n.nspname = `+schemaExpr+` AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, args...)
	if err != nil {
		return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []columnInfo
	for rows.Next() {
		var c columnInfo
		var pos int64
		if err := rows.Scan(&c.name, &c.dbType, &c.nullable, &pos); err != nil {
			return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
		}
		c.pk = int(pos)
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
	}
	return cols, nil
}

func (postgresDialect) now(ctx context.Context, db *sql.DB) (time.Time, error) {
	var t time.Time
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_TIMESTAMP").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("jdbc: reading the database clock: %w", err)
	}
	return t, nil
}

func (d postgresDialect) tsExpr(cols []string) string {
	if len(cols) == 1 {
		return d.quote(cols[0])
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = d.quote(c)
	}
	return "COALESCE(" + strings.Join(quoted, ", ") + ")"
}

func (postgresDialect) tsParam(t time.Time, naive bool) any {
	if naive {
		return t.UTC().Format("2006-01-02 15:04:05.999999")
	}
	return t.UTC().Format("2006-01-02 15:04:05.999999Z07:00")
}

func (postgresDialect) tsCompare(placeholder string, naive bool) string {
	if naive {
		return placeholder + "::timestamp"
	}
	return placeholder + "::timestamptz"
}

func (postgresDialect) upsertSuffix(pk, cols []string) string {
	d := postgresDialect{}
	return conflictClause(d, pk, cols)
}

// conflictClause is ON CONFLICT (pk) DO UPDATE SET c = EXCLUDED.c, or DO
// NOTHING when every column is in the key; PostgreSQL and SQLite share it.
func conflictClause(d dialect, pk, cols []string) string {
	quotedPK := make([]string, len(pk))
	inPK := map[string]bool{}
	for i, c := range pk {
		quotedPK[i] = d.quote(c)
		inPK[c] = true
	}
	var sets []string
	for _, c := range cols {
		if !inPK[c] {
			sets = append(sets, d.quote(c)+" = EXCLUDED."+d.quote(c))
		}
	}
	if len(sets) == 0 {
		return " ON CONFLICT (" + strings.Join(quotedPK, ", ") + ") DO NOTHING"
	}
	return " ON CONFLICT (" + strings.Join(quotedPK, ", ") + ") DO UPDATE SET " + strings.Join(sets, ", ")
}

func (postgresDialect) sqlType(s *connect.Schema) (string, error) {
	switch s.Name {
	case connect.LogicalDecimal:
		return "NUMERIC", nil
	case connect.LogicalDate:
		return "DATE", nil
	case connect.LogicalTime:
		return "TIME", nil
	case connect.LogicalTimestamp:
		return "TIMESTAMP", nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16:
		return "SMALLINT", nil
	case connect.TypeInt32:
		return "INTEGER", nil
	case connect.TypeInt64:
		return "BIGINT", nil
	case connect.TypeFloat32:
		return "REAL", nil
	case connect.TypeFloat64:
		return "DOUBLE PRECISION", nil
	case connect.TypeBoolean:
		return "BOOLEAN", nil
	case connect.TypeString:
		return "TEXT", nil
	case connect.TypeBytes:
		return "BYTEA", nil
	}
	return "", fmt.Errorf("jdbc: no PostgreSQL column type for a %s schema", s.Type)
}

// sqliteDialect speaks SQLite through modernc.org/sqlite.
type sqliteDialect struct{}

func (sqliteDialect) name() string                  { return "sqlite" }
func (sqliteDialect) quote(ident string) string     { return quoteIdent(ident, '"') }
func (sqliteDialect) quoteTable(name string) string { return quoteParts(name, '"') }
func (sqliteDialect) placeholder(int) string        { return "?" }

func (sqliteDialect) listTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("jdbc: listing tables: %w", err)
	}
	return scanStrings(rows)
}

func (d sqliteDialect) columns(ctx context.Context, db *sql.DB, table string) ([]columnInfo, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, upper(type), \"notnull\", pk FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []columnInfo
	for rows.Next() {
		var c columnInfo
		var notNull, pk int64
		if err := rows.Scan(&c.name, &c.dbType, &notNull, &pk); err != nil {
			return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
		}
		c.nullable = notNull == 0 && pk == 0
		c.pk = int(pk)
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jdbc: columns of %s: %w", table, err)
	}
	return cols, nil
}

// sqliteTimeLayout is the normalised text form the source compares SQLite
// timestamps in: what strftime('%Y-%m-%d %H:%M:%f') returns.
const sqliteTimeLayout = "2006-01-02 15:04:05.000"

func (sqliteDialect) now(ctx context.Context, db *sql.DB) (time.Time, error) {
	var s string
	if err := db.QueryRowContext(ctx, "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").Scan(&s); err != nil {
		return time.Time{}, fmt.Errorf("jdbc: reading the database clock: %w", err)
	}
	t, err := time.ParseInLocation(sqliteTimeLayout, s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("jdbc: database clock %q: %w", s, err)
	}
	return t, nil
}

// tsExpr normalises SQLite's timestamps to one comparable text form: text
// (with or without fractional seconds, with a space or a T) and integer or
// real Unix epochs in seconds, which strftime would otherwise read as
// Julian day numbers or not at all.
func (d sqliteDialect) tsExpr(cols []string) string {
	inner := d.tsInner(cols)
	const f = "'%Y-%m-%d %H:%M:%f'"
	return "(CASE typeof(" + inner + ") WHEN 'integer' THEN strftime(" + f + ", " + inner + ", 'unixepoch')" +
		" WHEN 'real' THEN strftime(" + f + ", " + inner + ", 'unixepoch')" +
		" ELSE strftime(" + f + ", " + inner + ") END)"
}

// tsInner is the raw timestamp value: the column, or COALESCE of several.
func (d sqliteDialect) tsInner(cols []string) string {
	inner := d.quote(cols[0])
	if len(cols) > 1 {
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = d.quote(c)
		}
		inner = "COALESCE(" + strings.Join(quoted, ", ") + ")"
	}
	return inner
}

func (sqliteDialect) tsParam(t time.Time, naive bool) any {
	return t.UTC().Format(sqliteTimeLayout)
}

func (sqliteDialect) tsCompare(placeholder string, naive bool) string { return placeholder }

func (sqliteDialect) sqlType(s *connect.Schema) (string, error) {
	switch s.Name {
	case connect.LogicalDecimal:
		return "NUMERIC", nil
	case connect.LogicalDate:
		return "DATE", nil
	case connect.LogicalTime:
		return "TIME", nil
	case connect.LogicalTimestamp:
		return "DATETIME", nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		return "INTEGER", nil
	case connect.TypeFloat32, connect.TypeFloat64:
		return "REAL", nil
	case connect.TypeBoolean:
		return "BOOLEAN", nil
	case connect.TypeString:
		return "TEXT", nil
	case connect.TypeBytes:
		return "BLOB", nil
	}
	return "", fmt.Errorf("jdbc: no SQLite column type for a %s schema", s.Type)
}

func (sqliteDialect) upsertSuffix(pk, cols []string) string {
	return conflictClause(sqliteDialect{}, pk, cols)
}

func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
