package jdbc

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // db.timezone must load even without system zoneinfo

	"github.com/strata-streaming/strata/connect"
)

// ErrConfig marks an invalid connector configuration.
var ErrConfig = errors.New("jdbc: invalid configuration")

// Source modes (mode).
const (
	modeBulk                  = "bulk"
	modeIncrementing          = "incrementing"
	modeTimestamp             = "timestamp"
	modeTimestampIncrementing = "timestamp+incrementing"
)

// Task-level settings the source connector adds to each task's
// configuration.
const (
	taskTablesKey   = "strata.jdbc.task.tables"   // tables this task was given
	taskAssignedKey = "strata.jdbc.task.assigned" // tables given to any task
	taskIndexKey    = "strata.jdbc.task.index"
	taskCountKey    = "strata.jdbc.task.count"
)

// sourceConfig is a parsed jdbc-source configuration.
type sourceConfig struct {
	url, user, password string
	mode                string
	incrementingColumn  string
	timestampColumns    []string
	timestampDelay      time.Duration
	pollInterval        time.Duration
	batchMaxRows        int
	topicPrefix         string
	tablePollInterval   time.Duration
	numericMapping      numericMapping
	dbTimezone          *time.Location
	dbTimezoneName      string
	include, exclude    []string
	query               string

	// task level
	tables               []string
	assigned             map[string]bool
	taskIndex, taskCount int
}

var sourceKeys = []connect.ConfigKey{
	{Name: "connection.url", Type: "STRING", Required: true, Importance: "HIGH",
		Documentation: "Database to read: jdbc:postgresql://host:port/db, postgres://..., a libpq DSN, or jdbc:sqlite:path."},
	{Name: "connection.user", Type: "STRING", Importance: "HIGH", Documentation: "User name, when not in connection.url."},
	{Name: "connection.password", Type: "PASSWORD", Importance: "HIGH", Documentation: "Password, when not in connection.url."},
	{Name: "mode", Type: "STRING", Required: true, Importance: "HIGH",
		Documentation: "bulk (whole table each poll), incrementing, timestamp or timestamp+incrementing."},
	{Name: "incrementing.column.name", Type: "STRING", Importance: "MEDIUM",
		Documentation: "Strictly increasing integer column (incrementing and timestamp+incrementing modes)."},
	{Name: "timestamp.column.name", Type: "LIST", Importance: "MEDIUM",
		Documentation: "Timestamp column(s) that change on every insert and update; several are combined with COALESCE."},
	{Name: "timestamp.delay.interval.ms", Type: "LONG", Default: "0", Importance: "HIGH",
		Documentation: "Rows are read only once their timestamp is this far behind the database's clock, so transactions that commit late are not skipped."},
	{Name: "poll.interval.ms", Type: "INT", Default: "5000", Importance: "HIGH", Documentation: "How often each table is queried for new rows."},
	{Name: "batch.max.rows", Type: "INT", Default: "100", Importance: "LOW", Documentation: "Rows returned by one poll (and the LIMIT of incrementing queries)."},
	{Name: "topic.prefix", Type: "STRING", Default: "", Importance: "HIGH",
		Documentation: "Topic = prefix + table name; with query, the whole topic name."},
	{Name: "table.whitelist", Type: "LIST", Importance: "MEDIUM", Documentation: "Tables to copy (alias of table.include.list); default all."},
	{Name: "table.include.list", Type: "LIST", Importance: "MEDIUM", Documentation: "Tables to copy; default all."},
	{Name: "table.blacklist", Type: "LIST", Importance: "MEDIUM", Documentation: "Tables not to copy (alias of table.exclude.list)."},
	{Name: "table.exclude.list", Type: "LIST", Importance: "MEDIUM", Documentation: "Tables not to copy."},
	{Name: "query", Type: "STRING", Importance: "MEDIUM", Documentation: "Copy the result of this SELECT instead of tables; conditions are added around it."},
	{Name: "table.poll.interval.ms", Type: "LONG", Default: "60000", Importance: "LOW", Documentation: "How often the list of tables is read again, to pick up new tables."},
	{Name: "numeric.mapping", Type: "STRING", Default: "none", Importance: "LOW",
		Documentation: "none (NUMERIC is Decimal), best_fit (integers by precision, double for scale > 0 and precision <= 15) or precision_only (integers when scale is 0)."},
	{Name: "db.timezone", Type: "STRING", Default: "UTC", Importance: "HIGH",
		Documentation: "Zone of the wall-clock values in timestamp-without-time-zone columns. For PostgreSQL it must equal the database's TimeZone setting when such a column is used; the task refuses to start otherwise."},
}

// parseSourceConfig reads and checks a source configuration; errs has one
// entry per bad setting.
func parseSourceConfig(cfg connect.Config) (*sourceConfig, []connect.ConfigError) {
	p := parser{cfg: cfg}
	c := &sourceConfig{
		url:                p.required("connection.url"),
		user:               cfg["connection.user"],
		password:           cfg["connection.password"],
		mode:               p.required("mode"),
		incrementingColumn: strings.TrimSpace(cfg["incrementing.column.name"]),
		timestampColumns:   splitList(cfg["timestamp.column.name"]),
		timestampDelay:     p.duration("timestamp.delay.interval.ms", 0),
		pollInterval:       p.duration("poll.interval.ms", 5*time.Second),
		batchMaxRows:       p.positiveInt("batch.max.rows", 100),
		topicPrefix:        cfg["topic.prefix"],
		tablePollInterval:  p.duration("table.poll.interval.ms", time.Minute),
		numericMapping:     numericMapping(p.str("numeric.mapping", "none")),
		dbTimezoneName:     p.str("db.timezone", "UTC"),
		include:            splitList(firstSet(cfg, "table.include.list", "table.whitelist")),
		exclude:            splitList(firstSet(cfg, "table.exclude.list", "table.blacklist")),
		query:              strings.TrimSpace(cfg["query"]),
		taskIndex:          0,
		taskCount:          1,
	}
	if c.url != "" {
		if _, _, _, err := parseConnectionURL(c.url, c.user, c.password); err != nil {
			p.fail("connection.url", strings.TrimPrefix(err.Error(), ErrConfig.Error()+": "))
		}
	}
	switch c.mode {
	case "", modeBulk:
	case modeIncrementing:
		if c.incrementingColumn == "" {
			p.fail("incrementing.column.name", "required in mode incrementing")
		}
	case modeTimestamp:
		if len(c.timestampColumns) == 0 {
			p.fail("timestamp.column.name", "required in mode timestamp")
		}
	case modeTimestampIncrementing:
		if c.incrementingColumn == "" {
			p.fail("incrementing.column.name", "required in mode timestamp+incrementing")
		}
		if len(c.timestampColumns) == 0 {
			p.fail("timestamp.column.name", "required in mode timestamp+incrementing")
		}
	default:
		p.fail("mode", fmt.Sprintf("%q is not one of bulk, incrementing, timestamp, timestamp+incrementing", c.mode))
	}
	switch c.numericMapping {
	case numericNone, numericBestFit, numericPrecisionOnly:
	default:
		p.fail("numeric.mapping", fmt.Sprintf("%q is not one of none, best_fit, precision_only", c.numericMapping))
	}
	loc, err := time.LoadLocation(c.dbTimezoneName)
	if err != nil || c.dbTimezoneName == "" || strings.EqualFold(c.dbTimezoneName, "local") {
		p.fail("db.timezone", fmt.Sprintf("%q is not an IANA time zone name (e.g. UTC, Europe/Paris)", c.dbTimezoneName))
	} else {
		c.dbTimezone = loc
	}
	if c.query != "" {
		if len(c.include) > 0 || len(c.exclude) > 0 {
			p.fail("query", "cannot be combined with table.include.list/table.whitelist or table.exclude.list/table.blacklist")
		}
		if c.topicPrefix == "" {
			p.fail("topic.prefix", "required with query: it is the whole topic name")
		}
	}
	if len(c.include) > 0 && len(c.exclude) > 0 {
		p.fail("table.exclude.list", "cannot be combined with table.include.list")
	}
	if v, ok := cfg[taskTablesKey]; ok {
		c.tables = splitList(v)
		c.assigned = map[string]bool{}
		for _, t := range splitList(cfg[taskAssignedKey]) {
			c.assigned[t] = true
		}
		c.taskIndex = p.nonNegativeInt(taskIndexKey, 0)
		c.taskCount = p.positiveInt(taskCountKey, 1)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return c, nil
}

// wantsTable applies the include and exclude lists.
func (c *sourceConfig) wantsTable(name string) bool {
	if len(c.include) > 0 {
		return contains(c.include, name)
	}
	return !contains(c.exclude, name)
}

// sinkConfig is a parsed jdbc-sink configuration.
type sinkConfig struct {
	url, user, password string
	topics              []string
	topicsRegex         *regexp.Regexp
	insertMode          string
	pkMode              string
	pkFields            []string
	autoCreate          bool
	autoEvolve          bool
	deleteEnabled       bool
	tableNameFormat     string
	batchSize           int
	dbTimezone          *time.Location
}

var sinkKeys = []connect.ConfigKey{
	{Name: "connection.url", Type: "STRING", Required: true, Importance: "HIGH",
		Documentation: "Database to write: jdbc:postgresql://host:port/db, postgres://..., a libpq DSN, or jdbc:sqlite:path."},
	{Name: "connection.user", Type: "STRING", Importance: "HIGH", Documentation: "User name, when not in connection.url."},
	{Name: "connection.password", Type: "PASSWORD", Importance: "HIGH", Documentation: "Password, when not in connection.url."},
	{Name: "topics", Type: "LIST", Importance: "HIGH", Documentation: "Topics to consume (or topics.regex)."},
	{Name: "topics.regex", Type: "STRING", Importance: "HIGH", Documentation: "Regular expression of the topics to consume."},
	{Name: "insert.mode", Type: "STRING", Default: "insert", Importance: "HIGH",
		Documentation: "insert, upsert (INSERT ... ON CONFLICT (pk) DO UPDATE) or update."},
	{Name: "pk.mode", Type: "STRING", Default: "none", Importance: "HIGH",
		Documentation: "none, kafka (__connect_topic, __connect_partition, __connect_offset), record_key or record_value."},
	{Name: "pk.fields", Type: "LIST", Importance: "MEDIUM",
		Documentation: "Key columns: for record_value the value's fields (required); for record_key the key struct's fields (default all) or the column of a primitive key; for kafka three column names."},
	{Name: "auto.create", Type: "BOOLEAN", Default: "false", Importance: "MEDIUM", Documentation: "CREATE TABLE from the record schema when the table is missing."},
	{Name: "auto.evolve", Type: "BOOLEAN", Default: "false", Importance: "MEDIUM", Documentation: "ALTER TABLE ADD COLUMN for optional fields the table lacks."},
	{Name: "delete.enabled", Type: "BOOLEAN", Default: "false", Importance: "MEDIUM", Documentation: "A tombstone (null value) deletes the row with its key; needs pk.mode record_key."},
	{Name: "table.name.format", Type: "STRING", Default: "${topic}", Importance: "MEDIUM", Documentation: "Table name; ${topic} is replaced by the record's topic."},
	{Name: "batch.size", Type: "INT", Default: "3000", Importance: "MEDIUM", Documentation: "Rows per INSERT statement."},
	{Name: "db.timezone", Type: "STRING", Default: "UTC", Importance: "MEDIUM",
		Documentation: "Zone Timestamp values are written in for timestamp-without-time-zone columns and SQLite."},
}

func parseSinkConfig(cfg connect.Config) (*sinkConfig, []connect.ConfigError) {
	p := parser{cfg: cfg}
	c := &sinkConfig{
		url:             p.required("connection.url"),
		user:            cfg["connection.user"],
		password:        cfg["connection.password"],
		topics:          splitList(cfg["topics"]),
		insertMode:      p.str("insert.mode", "insert"),
		pkMode:          p.str("pk.mode", "none"),
		pkFields:        splitList(cfg["pk.fields"]),
		autoCreate:      p.boolean("auto.create"),
		autoEvolve:      p.boolean("auto.evolve"),
		deleteEnabled:   p.boolean("delete.enabled"),
		tableNameFormat: p.str("table.name.format", "${topic}"),
		batchSize:       p.positiveInt("batch.size", 3000),
	}
	if c.url != "" {
		if _, _, _, err := parseConnectionURL(c.url, c.user, c.password); err != nil {
			p.fail("connection.url", strings.TrimPrefix(err.Error(), ErrConfig.Error()+": "))
		}
	}
	if re := strings.TrimSpace(cfg["topics.regex"]); re != "" {
		compiled, err := regexp.Compile(re)
		if err != nil {
			p.fail("topics.regex", err.Error())
		}
		c.topicsRegex = compiled
		if len(c.topics) > 0 {
			p.fail("topics", "set topics or topics.regex, not both")
		}
	}
	switch c.insertMode {
	case "insert", "upsert", "update":
	default:
		p.fail("insert.mode", fmt.Sprintf("%q is not one of insert, upsert, update", c.insertMode))
	}
	switch c.pkMode {
	case "none":
		if c.insertMode != "insert" {
			p.fail("pk.mode", "insert.mode "+c.insertMode+" needs a key: use kafka, record_key or record_value")
		}
	case "kafka":
		if len(c.pkFields) == 0 {
			c.pkFields = []string{"__connect_topic", "__connect_partition", "__connect_offset"}
		} else if len(c.pkFields) != 3 {
			p.fail("pk.fields", "pk.mode kafka needs exactly three names (topic, partition, offset columns)")
		}
	case "record_key":
	case "record_value":
		if len(c.pkFields) == 0 {
			p.fail("pk.fields", "pk.mode record_value needs pk.fields (the value fields that form the key)")
		}
	default:
		p.fail("pk.mode", fmt.Sprintf("%q is not one of none, kafka, record_key, record_value", c.pkMode))
	}
	if c.deleteEnabled && c.pkMode != "record_key" {
		p.fail("delete.enabled", "needs pk.mode record_key: a tombstone has only a key")
	}
	if !strings.Contains(c.tableNameFormat, "${topic}") && strings.TrimSpace(c.tableNameFormat) == "" {
		p.fail("table.name.format", "is empty")
	}
	name := p.str("db.timezone", "UTC")
	if loc, err := time.LoadLocation(name); err != nil || name == "" || strings.EqualFold(name, "local") {
		p.fail("db.timezone", fmt.Sprintf("%q is not an IANA time zone name", name))
	} else {
		c.dbTimezone = loc
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return c, nil
}

// wantsTopic reports whether topics/topics.regex select topic (both unset:
// every topic the runtime hands over).
func (c *sinkConfig) wantsTopic(topic string) bool {
	switch {
	case c.topicsRegex != nil:
		return c.topicsRegex.MatchString(topic)
	case len(c.topics) > 0:
		return contains(c.topics, topic)
	}
	return true
}

// parser collects one error per bad setting.
type parser struct {
	cfg  connect.Config
	errs []connect.ConfigError
}

func (p *parser) fail(name, msg string) {
	p.errs = append(p.errs, connect.ConfigError{Name: name, Message: msg})
}

func (p *parser) required(name string) string {
	v := strings.TrimSpace(p.cfg[name])
	if v == "" {
		p.fail(name, "is required")
	}
	return v
}

func (p *parser) str(name, def string) string {
	if v := strings.TrimSpace(p.cfg[name]); v != "" {
		return v
	}
	return def
}

func (p *parser) boolean(name string) bool {
	v := strings.TrimSpace(p.cfg[name])
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, fmt.Sprintf("%q is not true or false", v))
	}
	return b
}

func (p *parser) int64Value(name string, def int64) (int64, bool) {
	v := strings.TrimSpace(p.cfg[name])
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(name, fmt.Sprintf("%q is not an integer", v))
		return def, false
	}
	return n, true
}

func (p *parser) positiveInt(name string, def int) int {
	n, ok := p.int64Value(name, int64(def))
	if ok && (n <= 0 || n > 1<<31) {
		p.fail(name, fmt.Sprintf("%d must be positive", n))
		return def
	}
	return int(n)
}

func (p *parser) nonNegativeInt(name string, def int) int {
	n, ok := p.int64Value(name, int64(def))
	if ok && (n < 0 || n > 1<<31) {
		p.fail(name, fmt.Sprintf("%d must not be negative", n))
		return def
	}
	return int(n)
}

func (p *parser) duration(name string, def time.Duration) time.Duration {
	n, ok := p.int64Value(name, def.Milliseconds())
	if ok && n < 0 {
		p.fail(name, fmt.Sprintf("%d must not be negative", n))
		return def
	}
	return time.Duration(n) * time.Millisecond
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstSet(cfg connect.Config, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(cfg[n]); v != "" {
			return v
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// configError joins ConfigErrors into one error wrapping ErrConfig.
func configError(errs []connect.ConfigError) error {
	msgs := make([]string, len(errs))
	for i := range errs {
		msgs[i] = errs[i].Error()
	}
	return fmt.Errorf("%w: %s", ErrConfig, strings.Join(msgs, "; "))
}
