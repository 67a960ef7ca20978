package job

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/strata-streaming/strata/streams"
)

// The stateful steps: group_by (re-key), window, aggregate. They come in
// that order, group_by and window optional, and only filter and map may
// follow an aggregate. A join (join.go) may come anywhere before them.

type aggFunc int

const (
	aggCount aggFunc = iota
	aggSum
	aggMin
	aggMax
	aggAvg
	aggLatest
	aggCollect
)

var aggFuncNames = map[string]aggFunc{
	"count": aggCount, "sum": aggSum, "min": aggMin, "max": aggMax,
	"avg": aggAvg, "latest": aggLatest, "collect": aggCollect,
}

const aggFuncList = "count, sum, min, max, avg, latest or collect"

// aggOutput is one named output of an aggregate step.
type aggOutput struct {
	name string
	fn   aggFunc
	expr *program // nil: count counts records
}

// windowSpec is a compiled window step: time windows (size, advance),
// sliding windows (size) or sessions (gap).
type windowSpec struct {
	size, advance, grace time.Duration
	gap                  time.Duration // > 0: session windows
	sliding              bool
	final                bool          // emit: final (Suppress until the window closes)
	retention            time.Duration // 0: the default (streams.Retention)
}

func (w *windowSpec) windows() streams.Windows {
	switch {
	case w.sliding:
		return streams.SlidingWindows(w.size).Grace(w.grace)
	case w.size == w.advance:
		return streams.TumblingWindows(w.size).Grace(w.grace)
	}
	return streams.HoppingWindows(w.size, w.advance).Grace(w.grace)
}

// stepErrAt is stepErr with the YAML line and column of path.
func stepErrAt(f *ast.File, st Step, path, format string, args ...any) error {
	where := fmt.Sprintf("pipeline step %d (%s)", st.Index, st.Name)
	if line, col, _ := position(f, path); line > 0 {
		where += fmt.Sprintf(" at line %d, column %d", line, col)
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalid, where, fmt.Sprintf(format, args...))
}

// windowDuration reads a window duration; zero only where zeroOK.
func windowDuration(f *ast.File, st Step, path, what string, v any, zeroOK bool) (time.Duration, error) {
	s, ok := v.(string)
	d, err := time.ParseDuration(s)
	switch {
	case !ok || err != nil:
		return 0, stepErrAt(f, st, path, "%s %v: want a duration such as 1m, 10s or 1h30m", what, v)
	case d < 0 && zeroOK:
		return 0, stepErrAt(f, st, path, "%s %s: must not be negative", what, s)
	case d <= 0 && !zeroOK:
		return 0, stepErrAt(f, st, path, "%s %s: must be positive", what, s)
	case d%time.Millisecond != 0:
		return 0, stepErrAt(f, st, path, "%s %s: windows count whole milliseconds", what, s)
	}
	return d, nil
}

func compileWindow(f *ast.File, st Step) (*windowSpec, error) {
	m, ok := st.Arg.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, stepErrAt(f, st, st.Path, "window needs a map such as {tumbling: 1m, grace: 10s}")
	}
	w := &windowSpec{}
	kinds := 0
	for _, k := range sortedKeys(m) {
		path := st.Path + "." + k
		var err error
		switch k {
		case "tumbling":
			kinds++
			w.size, err = windowDuration(f, st, path, "tumbling", m[k], false)
			w.advance = w.size
		case "hopping":
			kinds++
			hm, ok := m[k].(map[string]any)
			if !ok || len(hm) != 2 || hm["size"] == nil || hm["advance"] == nil {
				return nil, stepErrAt(f, st, path, "hopping needs {size: DURATION, advance: DURATION}")
			}
			if w.size, err = windowDuration(f, st, path+".size", "hopping size", hm["size"], false); err != nil {
				return nil, err
			}
			if w.advance, err = windowDuration(f, st, path+".advance", "hopping advance", hm["advance"], false); err != nil {
				return nil, err
			}
			if w.advance > w.size {
				return nil, stepErrAt(f, st, path+".advance", "hopping advance %s is longer than size %s", w.advance, w.size)
			}
		case "sliding":
			kinds++
			w.size, err = windowDuration(f, st, path, "sliding", m[k], false)
			w.advance, w.sliding = w.size, true
		case "retention":
			w.retention, err = windowDuration(f, st, path, "retention", m[k], false)
		case "session":
			kinds++
			sm, ok := m[k].(map[string]any)
			if !ok || len(sm) != 1 || sm["gap"] == nil {
				return nil, stepErrAt(f, st, path, "session needs {gap: DURATION}, the inactivity that ends a session")
			}
			w.gap, err = windowDuration(f, st, path+".gap", "session gap", sm["gap"], false)
		case "grace":
			w.grace, err = windowDuration(f, st, path, "grace", m[k], true)
		case "emit":
			switch m[k] {
			case "final":
				w.final = true
			case "updates":
			default:
				return nil, stepErrAt(f, st, path, "emit %v: want updates (every change, the default) or final (once per window, when it closes)", m[k])
			}
		default:
			return nil, stepErrAt(f, st, path, "window: unknown key %q (want tumbling, hopping, sliding, session, grace, emit or retention)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if kinds != 1 {
		return nil, stepErrAt(f, st, st.Path, "window needs exactly one of tumbling, hopping, sliding or session")
	}
	if w.retention != 0 {
		need := w.size + w.grace
		if w.sliding {
			need += w.size
		}
		switch {
		case w.gap > 0:
			return nil, stepErrAt(f, st, st.Path+".retention", "retention applies to tumbling, hopping and sliding windows, not sessions")
		case w.retention < need:
			return nil, stepErrAt(f, st, st.Path+".retention", "retention %s is shorter than the windows need (size + grace, sliding 2 × size + grace: %s)", w.retention, need)
		}
	}
	return w, nil
}

func compileAggregate(f *ast.File, st Step) ([]aggOutput, error) {
	m, ok := st.Arg.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, stepErrAt(f, st, st.Path, "aggregate needs a map of output: function, e.g. {orders: count, total: {sum: value.amount}}")
	}
	var outs []aggOutput
	for _, name := range sortedKeys(m) {
		path := st.Path + "." + name
		o := aggOutput{name: name}
		switch a := m[name].(type) {
		case string:
			fn, ok := aggFuncNames[a]
			if !ok && (name == "emit" || name == "grace") {
				return nil, stepErrAt(f, st, path, "%s belongs in a window step, {tumbling: 1m, %s: %s}", name, name, a)
			}
			if !ok {
				return nil, stepErrAt(f, st, path, "aggregate %s: unknown function %q (want %s)", name, a, aggFuncList)
			}
			if fn != aggCount {
				return nil, stepErrAt(f, st, path, "aggregate %s: %s needs an expression, {%s: EXPR}", name, a, a)
			}
			o.fn = fn
		case map[string]any:
			if len(a) != 1 {
				return nil, stepErrAt(f, st, path, "aggregate %s: want one function, e.g. {sum: value.amount}", name)
			}
			for fname, src := range a {
				fn, ok := aggFuncNames[fname]
				if !ok {
					return nil, stepErrAt(f, st, path, "aggregate %s: unknown function %q (want %s)", name, fname, aggFuncList)
				}
				if src == nil {
					return nil, stepErrAt(f, st, path+"."+fname, "aggregate %s: %s needs an expression", name, fname)
				}
				text, ok := src.(string)
				if !ok {
					text = fmt.Sprint(src)
				}
				p, err := compileExpr(f, st, "aggregate "+name, path+"."+fname, text)
				if err != nil {
					return nil, err
				}
				o.fn, o.expr = fn, p
			}
		default:
			return nil, stepErrAt(f, st, path, "aggregate %s: want a function (count) or {function: EXPR}", name)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// checkStateful checks the order of the stateful steps: group_by, then
// window, then aggregate, each right after the one before, and after the
// aggregate only filter and map.
func checkStateful(f *ast.File, steps []compiledStep) error {
	aggregated, windowed := false, false
	named := map[string]int{} // names of topics and stores: the step index that took each
	for i, st := range steps {
		next := ""
		if i+1 < len(steps) {
			next = steps[i+1].Op
		}
		if aggregated {
			if st.Op != "filter" && st.Op != "map" {
				return stepErrAt(f, st.Step, st.Path, "%s after aggregate: only filter and map may follow an aggregate", st.Op)
			}
			continue
		}
		switch st.Op {
		case "group_by":
			if next != "window" && next != "aggregate" {
				return stepErrAt(f, st.Step, st.Path, "group_by needs a window or aggregate step right after it (to re-key only, use key)")
			}
		case "window":
			if next != "aggregate" {
				return stepErrAt(f, st.Step, st.Path, "window needs an aggregate step right after it")
			}
			windowed = true
		case "aggregate":
			aggregated = true
			if windowed {
				for _, o := range st.outputs {
					if o.name == "window_start" || o.name == "window_end" {
						return stepErrAt(f, st.Step, st.Path+"."+o.name, "aggregate output %s: the name is taken by the window's bounds", o.name)
					}
				}
			}
		case "join":
			// The step's name names its repartition topic.
		default:
			continue
		}
		// The step's name names its topics.
		if st.Op != "window" && !validName.MatchString(st.Name) {
			return stepErrAt(f, st.Step, st.Path, "name %q: the %s step's name is part of its topics' names; want letters, digits, '.', '_' or '-'", st.Name, st.Op)
		}
		if st.Op == "window" {
			continue
		}
		if k, taken := named[st.Name]; taken {
			return stepErrAt(f, st.Step, st.Path, "name %q is taken by step %d and names this step's topics too; give one of them another name (name: ...)", st.Name, k)
		}
		named[st.Name] = st.Index
	}
	return nil
}

// aggregate builds the grouping and aggregation of an aggregate step
// (grouped by the key a group_by step set, or the current key) and
// returns the stream of its results: key the group key, value the outputs
// and, windowed, window_start and window_end.
func (j *Job) aggregate(s streams.Stream[any, any], st compiledStep, groupName string, win *windowSpec) streams.Stream[any, any] {
	s = streams.MapRecordValues(s, st.aggInputs, streams.Named(fmt.Sprintf("step %d (%s)", st.Index, st.Name)))
	if groupName == "" {
		groupName = st.Name + "-group"
	}
	// Across a repartition topic the inputs are JSON.
	g := s.GroupByKey(keySerde{}, valueSerde{f: formatJSON}, streams.Named(groupName))
	store := streams.Named(st.Name)
	result := streams.Named(fmt.Sprintf("step %d (%s) result", st.Index, st.Name))
	if win == nil {
		tbl := streams.Aggregate(g, st.initAgg, st.addAgg, aggSerde{}, store)
		return streams.MapRecordValues(tbl.ToStream(), func(r streams.Record[any, map[string]any]) (any, error) {
			return st.aggResult(r.Value), nil
		}, result)
	}
	var tbl streams.Table[streams.Windowed[any], map[string]any]
	if win.gap > 0 {
		sessions := streams.SessionWindowedBy(g, streams.SessionWindows(win.gap).Grace(win.grace))
		tbl = streams.AggregateSessions(sessions, st.initAgg, st.addAgg, st.mergeAgg, aggSerde{}, store)
	} else {
		opts := []streams.OpOpt{store}
		if win.retention != 0 {
			opts = append(opts, streams.Retention(win.retention))
		}
		tbl = streams.AggregateWindows(streams.WindowedBy(g, win.windows()), st.initAgg, st.addAgg, aggSerde{}, opts...)
	}
	if win.final {
		tbl = tbl.Suppress(streams.UntilWindowCloses())
	}
	return streams.MapRecord(tbl.ToStream(), func(r streams.Record[streams.Windowed[any], map[string]any]) (rec, error) {
		v := st.aggResult(r.Value)
		v["window_start"] = r.Key.Start.UnixMilli()
		v["window_end"] = r.Key.End.UnixMilli()
		return rec{Key: r.Key.Key, Value: v, Headers: r.Headers, Timestamp: r.Timestamp,
			Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}, nil
	}, result)
}

// aggInputs evaluates the aggregate's expressions on the record before
// grouping, where the whole record (timestamp, headers) is at hand, and
// checks that sum, min, max and avg get numbers, so a failing record is
// still the input record for the error mode; the list, one entry per
// output, is what the aggregation folds.
func (st *compiledStep) aggInputs(r rec) (any, error) {
	if r.Key == nil {
		return nil, errors.New("the group key is null: records need a key (group_by or key) to be aggregated")
	}
	in := make([]any, len(st.outputs))
	for i, o := range st.outputs {
		if o.expr == nil {
			continue
		}
		v, err := eval(o.expr, r)
		if err != nil {
			return nil, fmt.Errorf("aggregate %s: %w", o.name, err)
		}
		switch o.fn {
		case aggSum, aggMin, aggMax, aggAvg:
			if v != nil {
				n, ok := number(v)
				if !ok {
					return nil, fmt.Errorf("aggregate %s: value is %s, not a number", o.name, typeName(v))
				}
				v = n
			}
		}
		in[i] = v
	}
	return in, nil
}

// initAgg is the state of a group before its first record. State is a
// JSON object: per output a number (count, sum), the value or null (min,
// max, latest), a list (collect), {"sum", "count"} (avg).
func (st *compiledStep) initAgg() map[string]any {
	agg := make(map[string]any, len(st.outputs))
	for _, o := range st.outputs {
		switch o.fn {
		case aggCount, aggSum:
			agg[o.name] = 0.0
		case aggAvg:
			agg[o.name] = map[string]any{"sum": 0.0, "count": 0.0}
		case aggCollect:
			agg[o.name] = []any{}
		default:
			agg[o.name] = nil
		}
	}
	return agg
}

// addAgg folds one record's inputs into the state. Null inputs are left
// out of every function but latest (and count without an expression).
func (st *compiledStep) addAgg(_ any, value any, agg map[string]any) (map[string]any, error) {
	in, ok := value.([]any)
	if !ok || len(in) != len(st.outputs) {
		return nil, fmt.Errorf("aggregate: input %s is not the step's %d values", typeName(value), len(st.outputs))
	}
	for i, o := range st.outputs {
		x := in[i]
		if x == nil && o.fn != aggLatest && !(o.fn == aggCount && o.expr == nil) {
			continue
		}
		old := agg[o.name]
		switch o.fn {
		case aggCount:
			agg[o.name] = toFloat(old) + 1
		case aggLatest:
			agg[o.name] = x
		case aggCollect:
			list, _ := old.([]any)
			agg[o.name] = append(list, x)
		default:
			n, ok := number(x)
			if !ok {
				return nil, fmt.Errorf("aggregate %s: value is %s, not a number", o.name, typeName(x))
			}
			switch o.fn {
			case aggSum:
				agg[o.name] = toFloat(old) + n
			case aggMin:
				if old == nil || n < toFloat(old) {
					agg[o.name] = n
				}
			case aggMax:
				if old == nil || n > toFloat(old) {
					agg[o.name] = n
				}
			case aggAvg:
				m, _ := old.(map[string]any)
				agg[o.name] = map[string]any{"sum": toFloat(m["sum"]) + n, "count": toFloat(m["count"]) + 1}
			}
		}
	}
	return agg, nil
}

// mergeAgg combines the states of two sessions that a record joins into
// one: counts, sums and averages add up, min and max compare, collect
// concatenates (a's values first), latest keeps b's unless it is null (the
// joining record's own value is folded in after the merge, so it wins).
func (st *compiledStep) mergeAgg(_ any, a, b map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(st.outputs))
	for _, o := range st.outputs {
		x, y := a[o.name], b[o.name]
		switch o.fn {
		case aggCount, aggSum:
			out[o.name] = toFloat(x) + toFloat(y)
		case aggAvg:
			mx, _ := x.(map[string]any)
			my, _ := y.(map[string]any)
			out[o.name] = map[string]any{"sum": toFloat(mx["sum"]) + toFloat(my["sum"]), "count": toFloat(mx["count"]) + toFloat(my["count"])}
		case aggCollect:
			lx, _ := x.([]any)
			ly, _ := y.([]any)
			out[o.name] = append(append([]any{}, lx...), ly...)
		case aggMin, aggMax:
			switch {
			case x == nil:
				out[o.name] = y
			case y == nil:
				out[o.name] = x
			case o.fn == aggMin:
				out[o.name] = math.Min(toFloat(x), toFloat(y))
			default:
				out[o.name] = math.Max(toFloat(x), toFloat(y))
			}
		case aggLatest:
			out[o.name] = x
			if y != nil {
				out[o.name] = y
			}
		}
	}
	return out, nil
}

// aggResult is the output value for a state: each output's value, counts
// as int64, avg computed (null before its first value).
func (st *compiledStep) aggResult(agg map[string]any) map[string]any {
	out := make(map[string]any, len(st.outputs)+2)
	for _, o := range st.outputs {
		v := agg[o.name]
		switch o.fn {
		case aggCount:
			v = int64(toFloat(v)) // an integer for typed outputs (an Avro long)
		case aggAvg:
			m, _ := v.(map[string]any)
			v = nil
			if c := toFloat(m["count"]); c > 0 {
				v = toFloat(m["sum"]) / c
			}
		}
		out[o.name] = v
	}
	return out
}

func toFloat(v any) float64 {
	f, _ := v.(float64)
	return f
}

// number converts the numbers expressions and decoders produce.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), !math.IsNaN(rv.Float())
	}
	return 0, false
}

// aggSerde stores aggregate state as JSON.
type aggSerde struct{}

func (aggSerde) Encode(m map[string]any) ([]byte, error) { return encodeJSON(nil, m) }

func (aggSerde) Decode(b []byte) (map[string]any, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("aggregate state is %s, not an object", typeName(v))
	}
	return m, nil
}
