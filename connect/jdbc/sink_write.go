package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// maxParams is the most bind parameters one statement may carry.
func maxParams(d dialect) int {
	if d.name() == "sqlite" {
		return 32766
	}
	return 65535
}

// writeRun writes rows of one shape: multi-row INSERT (with ON CONFLICT
// for upsert), or per-row UPDATE and DELETE through a prepared statement.
func (t *SinkTask) writeRun(ctx context.Context, tx *sql.Tx, rows []sinkRow) error {
	cfg, d := t.mu.cfg, t.mu.dialect
	table := t.mu.tables[rows[0].table]
	if table == nil {
		return nil // deletes from a missing table
	}
	first := &rows[0]
	quotedTable := d.quoteTable(first.table)
	switch {
	case first.delete:
		var conds []string
		for i, c := range first.cols[:first.nKey] {
			conds = append(conds, d.quote(c)+" = "+d.placeholder(i+1))
		}
		return t.execEach(ctx, tx, "DELETE FROM "+quotedTable+" WHERE "+strings.Join(conds, " AND "), rows, table, func(r *sinkRow) ([]string, []any, []*connect.Schema) {
			return r.cols[:r.nKey], r.vals[:r.nKey], r.schemas[:r.nKey]
		})
	case cfg.insertMode == "update":
		var sets, conds []string
		n := 0
		for _, c := range first.cols[first.nKey:] {
			n++
			sets = append(sets, d.quote(c)+" = "+d.placeholder(n))
		}
		for _, c := range first.cols[:first.nKey] {
			n++
			conds = append(conds, d.quote(c)+" = "+d.placeholder(n))
		}
		if len(sets) == 0 {
			return nil
		}
		stmt := "UPDATE " + quotedTable + " SET " + strings.Join(sets, ", ") + " WHERE " + strings.Join(conds, " AND ")
		return t.execEach(ctx, tx, stmt, rows, table, func(r *sinkRow) ([]string, []any, []*connect.Schema) {
			cols := append(append([]string(nil), r.cols[r.nKey:]...), r.cols[:r.nKey]...)
			vals := append(append([]any(nil), r.vals[r.nKey:]...), r.vals[:r.nKey]...)
			schemas := append(append([]*connect.Schema(nil), r.schemas[r.nKey:]...), r.schemas[:r.nKey]...)
			return cols, vals, schemas
		})
	}
	upsert := cfg.insertMode == "upsert" && first.nKey > 0
	if upsert {
		rows = lastPerKey(rows)
	}
	nCols := len(first.cols)
	perStmt := max(1, min(cfg.batchSize, maxParams(d)/nCols))
	quotedCols := make([]string, nCols)
	for i, c := range first.cols {
		quotedCols[i] = d.quote(c)
	}
	head := "INSERT INTO " + quotedTable + " (" + strings.Join(quotedCols, ", ") + ") VALUES "
	suffix := ""
	if upsert {
		suffix = d.upsertSuffix(first.cols[:first.nKey], first.cols)
	}
	var sb strings.Builder
	args := make([]any, 0, perStmt*nCols)
	for start := 0; start < len(rows); start += perStmt {
		chunk := rows[start:min(start+perStmt, len(rows))]
		sb.Reset()
		args = args[:0]
		sb.WriteString(head)
		for i := range chunk {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('(')
			for j := range chunk[i].cols {
				if j > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(d.placeholder(len(args) + 1))
				v, err := t.bind(chunk[i].vals[j], chunk[i].schemas[j], table.kinds[chunk[i].cols[j]])
				if err != nil {
					return fmt.Errorf("jdbc: table %s column %s: %w", first.table, chunk[i].cols[j], err)
				}
				args = append(args, v)
			}
			sb.WriteByte(')')
		}
		sb.WriteString(suffix)
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("jdbc: writing %d rows to %s: %w", len(chunk), first.table, err)
		}
	}
	return nil
}

// lastPerKey keeps the last row of each key (an upsert statement may not
// touch a row twice), in first-seen order.
func lastPerKey(rows []sinkRow) []sinkRow {
	index := make(map[string]int, len(rows))
	out := make([]sinkRow, 0, len(rows))
	var kb strings.Builder
	for _, r := range rows {
		kb.Reset()
		for _, v := range r.vals[:r.nKey] {
			appendKeyPart(&kb, v)
		}
		k := kb.String()
		if i, ok := index[k]; ok {
			out[i] = r
			continue
		}
		index[k] = len(out)
		out = append(out, r)
	}
	return out
}

// appendKeyPart writes one key value, tagged with its type, to kb.
func appendKeyPart(kb *strings.Builder, v any) {
	switch x := v.(type) {
	case int64:
		kb.WriteString("i:")
		kb.WriteString(strconv.FormatInt(x, 10))
	case int32:
		kb.WriteString("i:")
		kb.WriteString(strconv.FormatInt(int64(x), 10))
	case string:
		kb.WriteString("s:")
		kb.WriteString(x)
	case []byte:
		kb.WriteString("b:")
		kb.Write(x)
	default:
		fmt.Fprintf(kb, "%T:%v", v, v)
	}
	kb.WriteByte(0)
}

// execEach runs one prepared statement per row.
func (t *SinkTask) execEach(ctx context.Context, tx *sql.Tx, stmt string, rows []sinkRow, table *sinkTable,
	params func(*sinkRow) ([]string, []any, []*connect.Schema)) error {
	prepared, err := tx.PrepareContext(ctx, stmt)
	if err != nil {
		return fmt.Errorf("jdbc: %s: %w", stmt, err)
	}
	defer prepared.Close()
	for i := range rows {
		cols, vals, schemas := params(&rows[i])
		args := make([]any, len(vals))
		for j := range vals {
			if args[j], err = t.bind(vals[j], schemas[j], table.kinds[cols[j]]); err != nil {
				return fmt.Errorf("jdbc: table %s column %s: %w", rows[i].table, cols[j], err)
			}
		}
		if _, err := prepared.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("jdbc: %s: %w", stmt, err)
		}
	}
	return nil
}

// bind turns a Connect value into a database/sql argument for a column of
// the given kind.
func (t *SinkTask) bind(v any, s *connect.Schema, kind colKind) (any, error) {
	if v == nil {
		return nil, nil
	}
	loc := t.mu.cfg.dbTimezone
	sqlite := t.mu.dialect.name() == "sqlite"
	if s != nil {
		switch s.Name {
		case connect.LogicalTimestamp, connect.LogicalDate, connect.LogicalTime:
			tm, err := logicalTime(v, s.Name)
			if err != nil {
				return nil, err
			}
			switch {
			case s.Name == connect.LogicalDate:
				return tm.UTC().Format("2006-01-02"), nil // a Date is midnight UTC
			case s.Name == connect.LogicalTime:
				return tm.UTC().Format("15:04:05.000000"), nil // a Time is since midnight UTC
			case kind == kindDate:
				// An instant written to a DATE column: its date in
				// db.timezone, as a timestamp column gets its wall clock.
				return tm.In(loc).Format("2006-01-02"), nil
			case kind == kindTime:
				return tm.In(loc).Format("15:04:05.000000"), nil
			case kind == kindTimestampTZ && !sqlite:
				return tm.UTC().Format("2006-01-02 15:04:05.999999Z07:00"), nil
			case sqlite:
				return tm.In(loc).Format("2006-01-02 15:04:05.000000"), nil
			}
			return tm.In(loc).Format("2006-01-02 15:04:05.999999"), nil
		case connect.LogicalDecimal:
			scale, _ := strconv.Atoi(s.Parameters["scale"])
			return decimalString(v, scale)
		}
	}
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case int64, float64, bool, string, []byte:
		return x, nil
	case time.Time:
		return x, nil
	case *big.Rat:
		return x.RatString(), nil
	}
	return nil, fmt.Errorf("cannot write a %T value", v)
}

// logicalTime accepts time.Time or the wire form (days, ms since midnight,
// ms since the epoch) of Date, Time and Timestamp.
func logicalTime(v any, logical string) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case int32, int64, int:
		n, _ := asInt64(x)
		if logical == connect.LogicalDate {
			return time.Unix(n*86400, 0).UTC(), nil
		}
		return time.UnixMilli(n).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s value is %T, not a time", logical, v)
}

// decimalString renders a Decimal value exactly with the schema's scale.
func decimalString(v any, scale int) (string, error) {
	switch x := v.(type) {
	case *big.Rat:
		if x.IsInt() {
			return x.Num().String(), nil
		}
		if scale <= 0 {
			scale = unboundedDecimalScale
		}
		return trimDecimal(x.FloatString(scale)), nil
	case *big.Int:
		return x.String(), nil
	case *big.Float:
		return x.Text('f', -1), nil
	case string:
		if _, ok := new(big.Rat).SetString(x); !ok {
			return "", fmt.Errorf("decimal %q is not a number", x)
		}
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("cannot write a %T as a decimal", v)
}

// trimDecimal drops trailing fractional zeros ("1.2300" -> "1.23").
func trimDecimal(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
