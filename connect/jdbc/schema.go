package jdbc

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// numericMapping is numeric.mapping: how NUMERIC/DECIMAL columns become
// Connect types.
type numericMapping string

const (
	numericNone          numericMapping = "none"           // always Decimal
	numericBestFit       numericMapping = "best_fit"       // ints by precision, double when scale > 0 and precision <= 15
	numericPrecisionOnly numericMapping = "precision_only" // ints by precision when scale is 0, else Decimal
)

// colKind says how a scanned driver value becomes a Connect value.
type colKind int

const (
	kindInt8 colKind = iota
	kindInt16
	kindInt32
	kindInt64
	kindFloat32
	kindFloat64
	kindBool
	kindString
	kindBytes
	kindDecimal
	kindDate
	kindTime
	kindTimestamp   // naive: a wall-clock reading in db.timezone
	kindTimestampTZ // an instant
)

// sourceColumn is one column of a source result set and its Connect schema.
type sourceColumn struct {
	name   string
	kind   colKind
	scale  int // kindDecimal
	schema *connect.Schema
}

// mapColumn picks the Connect schema for a column from its database type
// name (as database/sql's ColumnType.DatabaseTypeName or the catalog gives
// it), its precision and scale when known, and numeric.mapping.
func mapColumn(name, dbType string, precision, scale int64, hasPS, optional bool, nm numericMapping) sourceColumn {
	t := strings.ToUpper(strings.TrimSpace(dbType))
	base := t
	if i := strings.IndexByte(base, '('); i >= 0 {
		if p, s, ok := parseTypeModifier(base[i:]); ok && !hasPS {
			precision, scale, hasPS = p, s, true
		}
		base = strings.TrimSpace(base[:i])
	}
	if precision > 1000 { // PostgreSQL's unconstrained NUMERIC
		hasPS = false
	}
	kind := kindString
	switch base {
	case "INT2", "SMALLINT", "SMALLSERIAL", "TINYINT":
		kind = kindInt16
	case "INT4", "INTEGER", "INT", "SERIAL", "MEDIUMINT":
		kind = kindInt32
		if base == "INTEGER" || base == "INT" {
			// SQLite's INTEGER is 64 bits wide; PostgreSQL's catalog
			// calls int4 INTEGER too, but its result sets say INT4.
			kind = kindInt64
		}
	case "INT8", "BIGINT", "BIGSERIAL", "OID", "UNSIGNED BIG INT", "INT64":
		kind = kindInt64
	case "FLOAT4", "REAL":
		kind = kindFloat32
		if base == "REAL" { // SQLite REAL is a double
			kind = kindFloat64
		}
	case "FLOAT8", "DOUBLE", "DOUBLE PRECISION", "FLOAT":
		kind = kindFloat64
	case "NUMERIC", "DECIMAL":
		kind = kindDecimal
	case "BOOL", "BOOLEAN":
		kind = kindBool
	case "BYTEA", "BLOB":
		kind = kindBytes
	case "DATE":
		kind = kindDate
	case "TIME", "TIME WITHOUT TIME ZONE":
		kind = kindTime
	case "TIMESTAMP", "DATETIME", "TIMESTAMP WITHOUT TIME ZONE":
		kind = kindTimestamp
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		kind = kindTimestampTZ
	default:
		switch {
		case strings.Contains(base, "INT"):
			kind = kindInt64
		case strings.Contains(base, "CHAR"), strings.Contains(base, "CLOB"), strings.Contains(base, "TEXT"):
			kind = kindString
		case strings.Contains(base, "DOUB"), strings.Contains(base, "FLOA"):
			kind = kindFloat64
		}
	}
	col := sourceColumn{name: name, kind: kind}
	if kind == kindDecimal {
		col.kind, col.scale = decimalKind(precision, scale, hasPS, nm)
	}
	col.schema = kindSchema(col.kind, col.scale, optional)
	return col
}

// parseTypeModifier reads "(p)" or "(p,s)".
func parseTypeModifier(mod string) (precision, scale int64, ok bool) {
	mod = strings.TrimSuffix(strings.TrimPrefix(mod, "("), ")")
	parts := strings.Split(mod, ",")
	p, err := strconv.ParseInt(strings.TrimSpace(parts[0]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if len(parts) > 1 {
		if scale, err = strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return p, scale, true
}

// decimalKind applies numeric.mapping to a NUMERIC(precision, scale).
func decimalKind(precision, scale int64, bounded bool, nm numericMapping) (colKind, int) {
	if !bounded {
		// Unconstrained NUMERIC: values carry their own scale; keep
		// them exact with a generous fixed scale.
		return kindDecimal, unboundedDecimalScale
	}
	intKind := func() (colKind, bool) {
		if scale != 0 || precision <= 0 {
			return 0, false
		}
		switch {
		case precision < 3:
			return kindInt8, true
		case precision < 5:
			return kindInt16, true
		case precision < 10:
			return kindInt32, true
		case precision < 19:
			return kindInt64, true
		}
		return 0, false
	}
	switch nm {
	case numericBestFit:
		if k, ok := intKind(); ok {
			return k, 0
		}
		if scale > 0 && precision <= 15 {
			return kindFloat64, 0
		}
	case numericPrecisionOnly:
		if k, ok := intKind(); ok {
			return k, 0
		}
	}
	return kindDecimal, int(scale)
}

// unboundedDecimalScale is the scale of a NUMERIC column declared without
// one: enough for any value PostgreSQL prints by default.
const unboundedDecimalScale = 16

// kindSchema is the Connect schema of a column kind.
func kindSchema(kind colKind, scale int, optional bool) *connect.Schema {
	s := &connect.Schema{Optional: optional}
	switch kind {
	case kindInt8:
		s.Type = connect.TypeInt8
	case kindInt16:
		s.Type = connect.TypeInt16
	case kindInt32:
		s.Type = connect.TypeInt32
	case kindInt64:
		s.Type = connect.TypeInt64
	case kindFloat32:
		s.Type = connect.TypeFloat32
	case kindFloat64:
		s.Type = connect.TypeFloat64
	case kindBool:
		s.Type = connect.TypeBoolean
	case kindBytes:
		s.Type = connect.TypeBytes
	case kindDecimal:
		s.Type, s.Name, s.Version = connect.TypeBytes, connect.LogicalDecimal, 1
		s.Parameters = map[string]string{"scale": strconv.Itoa(scale)}
	case kindDate:
		s.Type, s.Name, s.Version = connect.TypeInt32, connect.LogicalDate, 1
	case kindTime:
		s.Type, s.Name, s.Version = connect.TypeInt32, connect.LogicalTime, 1
	case kindTimestamp, kindTimestampTZ:
		s.Type, s.Name, s.Version = connect.TypeInt64, connect.LogicalTimestamp, 1
	default:
		s.Type = connect.TypeString
	}
	return s
}

// convert turns a value database/sql scanned into the Connect value of the
// column's schema: int8..int64, float32/64, bool, string, []byte, *big.Rat
// (Decimal) or time.Time in UTC (Date, Time, Timestamp). loc is db.timezone,
// the zone naive timestamps are read in.
func (c *sourceColumn) convert(v any, loc *time.Location) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.kind {
	case kindInt8, kindInt16, kindInt32, kindInt64:
		n, err := asInt64(v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		switch c.kind {
		case kindInt8:
			if n < math.MinInt8 || n > math.MaxInt8 {
				return nil, fmt.Errorf("column %s: %d overflows int8", c.name, n)
			}
			return int8(n), nil
		case kindInt16:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return nil, fmt.Errorf("column %s: %d overflows int16", c.name, n)
			}
			return int16(n), nil
		case kindInt32:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("column %s: %d overflows int32", c.name, n)
			}
			return int32(n), nil
		}
		return n, nil
	case kindFloat32, kindFloat64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		case int64:
			f = float64(x)
		case string:
			var err error
			if f, err = strconv.ParseFloat(x, 64); err != nil {
				return nil, fmt.Errorf("column %s: %q is not a number", c.name, x)
			}
		default:
			return nil, fmt.Errorf("column %s: unexpected %T for a float", c.name, v)
		}
		if c.kind == kindFloat32 {
			return float32(f), nil
		}
		return f, nil
	case kindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, fmt.Errorf("column %s: %q is not a boolean", c.name, x)
			}
			return b, nil
		}
		return nil, fmt.Errorf("column %s: unexpected %T for a boolean", c.name, v)
	case kindBytes:
		switch x := v.(type) {
		case []byte:
			return append([]byte(nil), x...), nil
		case string:
			return []byte(x), nil
		}
		return nil, fmt.Errorf("column %s: unexpected %T for bytes", c.name, v)
	case kindDecimal:
		r, err := asRat(v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		return r, nil
	case kindDate:
		t, err := asTime(v, "2006-01-02")
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
	case kindTime:
		t, err := asTime(v, "15:04:05.999999999")
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		return time.Date(1970, 1, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
	case kindTimestamp:
		t, err := asTime(v, "")
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		return wallIn(t, loc).UTC(), nil
	case kindTimestampTZ:
		t, err := asTime(v, "")
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		return t.UTC(), nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	}
	return fmt.Sprint(v), nil
}

// wallIn reads t's wall-clock fields (whatever its location) as a time in
// loc.
func wallIn(t time.Time, loc *time.Location) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
}

// wallAsUTC is the wall-clock reading of t in loc, labelled UTC: the form
// naive timestamps are compared and stored in.
func wallAsUTC(t time.Time, loc *time.Location) time.Time {
	w := t.In(loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
}

func asInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", x)
		}
		return n, nil
	case []byte:
		return asInt64(string(x))
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("unexpected %T for an integer", v)
}

func asRat(v any) (*big.Rat, error) {
	switch x := v.(type) {
	case string:
		r, ok := new(big.Rat).SetString(strings.TrimSpace(x))
		if !ok {
			return nil, fmt.Errorf("%q is not a number", x)
		}
		return r, nil
	case []byte:
		return asRat(string(x))
	case int64:
		return new(big.Rat).SetInt64(x), nil
	case float64:
		// SQLite hands NUMERIC values over as doubles; their shortest
		// decimal form is the value that was written.
		return asRat(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return nil, fmt.Errorf("unexpected %T for a decimal", v)
}

// timeLayouts are the text forms asTime accepts (SQLite stores text).
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
}

func asTime(v any, layout string) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case []byte:
		return asTime(string(x), layout)
	case int64: // SQLite unix seconds
		return time.Unix(x, 0).UTC(), nil
	case float64: // SQLite unix seconds with a fraction
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e15 {
			return time.Time{}, fmt.Errorf("%v is not a Unix time", x)
		}
		sec := math.Floor(x)
		return time.Unix(int64(sec), int64(math.Round((x-sec)*1e6))*1e3).UTC(), nil
	case string:
		s := strings.TrimSpace(x)
		if layout != "" {
			if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
				return t, nil
			}
		}
		for _, l := range timeLayouts {
			if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not a date or time", x)
	}
	return time.Time{}, fmt.Errorf("unexpected %T for a date or time", v)
}
