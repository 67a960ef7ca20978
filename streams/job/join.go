package job

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/strata-streaming/strata/streams"
)

// The join step: a stream-table enrichment. The table topic is read as a
// table (streams.TableFrom: string keys, JSON values, a tombstone deletes
// the key) and each record whose value is an object gets the table's
// current value for its key under the field As.

// joinSpec is a compiled join step.
type joinSpec struct {
	table string   // the topic read as a table
	left  bool     // type: left (keep records the table lacks)
	as    string   // the field of the record's value that gets the table value
	key   *program // nil: join on the record's key
}

func compileJoin(f *ast.File, st Step) (*joinSpec, error) {
	m, ok := st.Arg.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, stepErrAt(f, st, st.Path, "join needs a map such as {table: customers, type: left, as: customer}")
	}
	if _, ok := m["stream"]; ok {
		return nil, stepErrAt(f, st, st.Path+".stream", "stream-stream joins are not supported yet; join a table, {table: TOPIC}")
	}
	js := &joinSpec{}
	for _, k := range sortedKeys(m) {
		path := st.Path + "." + k
		s, isString := m[k].(string)
		switch k {
		case "table":
			if !isString || !validName.MatchString(s) {
				return nil, stepErrAt(f, st, path, "join table %v: want a topic name", m[k])
			}
			js.table = s
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
			return nil, stepErrAt(f, st, path, "join: unknown key %q (want table, type, as or key)", k)
		}
	}
	if js.table == "" {
		return nil, stepErrAt(f, st, st.Path, "join needs a table, {table: TOPIC}")
	}
	if js.as == "" {
		js.as = js.table
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
