package job

import (
	"fmt"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/strata-streaming/strata/streams"
)

// The join step: a stream-table enrichment, or a windowed stream-stream
// join. The table topic is read as a table (streams.TableFrom: string
// keys, JSON values, a tombstone deletes the key) and each record whose
// value is an object gets the table's current value for its key under the
// field As; with stream, each record gets the value of every record of the
// other topic (string keys, JSON values) with the same key within the
// window (streams.JoinStreams), one output per pair.

// joinSpec is a compiled join step.
type joinSpec struct {
	table         string        // the topic read as a table
	stream        string        // or the topic of the other stream
	within, grace time.Duration // stream: the window either side of a record, and its grace
	left          bool          // type: left (keep records the table lacks)
	as            string        // the field of the record's value that gets the table value
	key           *program      // nil: join on the record's key
}

func compileJoin(f *ast.File, st Step) (*joinSpec, error) {
	m, ok := st.Arg.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, stepErrAt(f, st, st.Path, "join needs a map such as {table: customers, type: left, as: customer}")
	}
	js := &joinSpec{within: -1}
	for _, k := range sortedKeys(m) {
		path := st.Path + "." + k
		s, isString := m[k].(string)
		switch k {
		case "table":
			if !isString || !validName.MatchString(s) {
				return nil, stepErrAt(f, st, path, "join table %v: want a topic name", m[k])
			}
			js.table = s
		case "stream":
			if !isString || !validName.MatchString(s) {
				return nil, stepErrAt(f, st, path, "join stream %v: want a topic name", m[k])
			}
			js.stream = s
		case "within", "grace":
			d, err := windowDuration(f, st, path, k, m[k], true)
			if err != nil {
				return nil, err
			}
			if k == "within" {
				js.within = d
			} else {
				js.grace = d
			}
		case "type":
			switch m[k] {
			case "inner":
			case "left":
				js.left = true
			default:
				return nil, stepErrAt(f, st, path, "join type %v: want inner (drop records the table lacks) or left (keep them, the field null)", m[k])
			}
		case "as":
			if !isString || s == "" {
				return nil, stepErrAt(f, st, path, "join as %v: want a field name", m[k])
			}
			js.as = s
		case "key":
			if !isString {
				s = fmt.Sprint(m[k])
			}
			p, err := compileExpr(f, st, "join key", path, s)
			if err != nil {
				return nil, err
			}
			js.key = p
		default:
			return nil, stepErrAt(f, st, path, "join: unknown key %q (want table or stream, type, as, key, and with stream within and grace)", k)
		}
	}
	switch {
	case js.table == "" && js.stream == "":
		return nil, stepErrAt(f, st, st.Path, "join needs a table, {table: TOPIC}, or a stream, {stream: TOPIC, within: DURATION}")
	case js.table != "" && js.stream != "":
		return nil, stepErrAt(f, st, st.Path, "join takes a table or a stream, not both")
	case js.table != "" && (js.within >= 0 || m["grace"] != nil):
		return nil, stepErrAt(f, st, st.Path, "join: within and grace bound stream joins; a table join has no window")
	case js.stream != "" && js.within < 0:
		return nil, stepErrAt(f, st, st.Path, "join stream %s needs within: DURATION, how far apart the two records' timestamps may be", js.stream)
	}
	if js.as == "" {
		js.as = js.table + js.stream
	}
	return js, nil
}

// join builds a join step. The library joins only streams still keyed and
// partitioned as their one source topic, so a stream whose keys a step may
// have changed (rekeyed), or that a key expression re-keys, first goes
// through the repartition topic <application id>-<step name>-repartition.
// tables holds the tables built so far, one per topic.
func (j *Job) join(t *streams.Topology, s streams.Stream[any, any], st compiledStep, rekeyed bool, tables map[string]streams.Table[any, any]) streams.Stream[any, any] {
	js := st.join
	if js.key != nil {
		p := js.key
		s = streams.MapRecord(s, func(r rec) (rec, error) {
			v, err := eval(p, r)
			r.Key = v
			return r, err
		}, streams.Named(fmt.Sprintf("step %d (%s) key", st.Index, st.Name)))
	}
	if rekeyed || js.key != nil {
		s = s.Repartition(keySerde{}, valueSerde{f: formatJSON}, streams.Named(st.Name))
	}
	if js.stream != "" {
		return j.joinStream(t, s, st)
	}
	tbl, ok := tables[js.table]
	if !ok {
		tbl = streams.TableFrom[any, any](t, keySerde{}, valueSerde{f: formatJSON}, js.table, streams.Named("table-"+js.table))
		tables[js.table] = tbl
	}
	name := streams.Named(fmt.Sprintf("step %d (%s)", st.Index, st.Name))
	if js.left {
		return streams.LeftJoinTable(s, tbl, func(_ any, v any, tv *any) (any, error) {
			var joined any
			if tv != nil {
				joined = *tv
			}
			return js.merge(v, joined)
		}, name)
	}
	return streams.JoinTable(s, tbl, func(_ any, v any, tv any) (any, error) {
		return js.merge(v, tv)
	}, name)
}

// joinStream joins with the other stream within the window; the step's
// name names the two window stores (<name>-left, <name>-right).
func (j *Job) joinStream(t *streams.Topology, s streams.Stream[any, any], st compiledStep) streams.Stream[any, any] {
	js := st.join
	other := streams.From[any, any](t, keySerde{}, valueSerde{f: formatJSON}, []string{js.stream}, streams.Named(fmt.Sprintf("step %d (%s) %s", st.Index, st.Name, js.stream)))
	w := streams.JoinWindows{Before: js.within, After: js.within, Grace: js.grace}
	serdes := streams.StreamJoined[any, any, any]{Keys: keySerde{}, LeftValues: valueSerde{f: formatJSON}, RightValues: valueSerde{f: formatJSON}}
	if js.left {
		return streams.LeftJoinStreams(s, other, w, serdes, func(_ any, v any, ov *any) (any, error) {
			var joined any
			if ov != nil {
				joined = *ov
			}
			return js.merge(v, joined)
		}, streams.Named(st.Name))
	}
	return streams.JoinStreams(s, other, w, serdes, func(_ any, v, ov any) (any, error) {
		return js.merge(v, ov)
	}, streams.Named(st.Name))
}

// merge returns a copy of the record's value with the table value under
// the field As.
func (js *joinSpec) merge(v, tableValue any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("join: value is %s, not an object", typeName(v))
	}
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[js.as] = tableValue
	return out, nil
}
