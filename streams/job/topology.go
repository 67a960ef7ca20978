package job

import (
	"fmt"
	"reflect"
	"time"

	"github.com/strata-streaming/strata/streams"
)

type rec = streams.Record[any, any]

// Topology builds the job's stream topology: one source, one DSL operator
// per step (named "step N (op)", the name dead-letter headers carry), and
// the output sink.
func (j *Job) Topology() *streams.Topology {
	t := streams.NewTopology()
	var s streams.Stream[any, any]
	var in streams.Serde[any] = valueSerde{f: j.inFormat}
	if j.inFormat.usesRegistry() {
		in = registrySerde{r: j.registry}
	}
	if j.Spec.Input.Pattern != "" {
		s = streams.FromRegex[any, any](t, keySerde{}, in, j.Spec.Input.Pattern, streams.Named("input"))
	} else {
		s = streams.From[any, any](t, keySerde{}, in, j.Spec.Input.Topics, streams.Named("input"))
	}
	out := func(topic string) streams.Serde[any] {
		if j.outFormat.usesRegistry() {
			return registrySerde{r: j.registry, topic: topic}
		}
		return valueSerde{f: j.outFormat}
	}
	var (
		groupName string      // the group_by step's name, if any
		win       *windowSpec // the window step's, if any
		// rekeyed: the keys or partitions may differ from the input
		// topic's (a step may have changed keys, or several topics are
		// read), so a join must repartition first.
		rekeyed = len(j.Spec.Input.Topics) != 1
		tables  = map[string]streams.Table[any, any]{}
	)
	for _, st := range j.steps {
		name := streams.Named(fmt.Sprintf("step %d (%s)", st.Index, st.Name))
		switch st.Op {
		case "filter":
			p := st.exprs[0]
			s = s.FilterRecord(func(r rec) (bool, error) {
				v, err := eval(p, r)
				if err != nil {
					return false, err
				}
				b, _ := v.(bool)
				return b, nil
			}, name)
		case "map":
			p := st.exprs[0]
			s = streams.MapRecordValues(s, func(r rec) (any, error) { return eval(p, r) }, name)
		case "group_by":
			p := st.exprs[0]
			s = streams.MapRecord(s, func(r rec) (rec, error) {
				v, err := eval(p, r)
				r.Key = v
				return r, err
			}, name)
			groupName = st.Name
		case "timestamp":
			p := st.exprs[0]
			s = streams.WithTimestamps(s, func(r rec) (time.Time, error) {
				v, err := eval(p, r)
				if err != nil {
					return time.Time{}, err
				}
				return eventTime(v)
			}, name)
		case "window":
			win = st.window
		case "aggregate":
			s = j.aggregate(s, st, groupName, win)
		case "join":
			s = j.join(t, s, st, rekeyed, tables)
			rekeyed = false
		case "key":
			p := st.exprs[0]
			s = streams.MapRecord(s, func(r rec) (rec, error) {
				v, err := eval(p, r)
				r.Key = v
				return r, err
			}, name)
			rekeyed = true
		case "flat_map":
			p := st.exprs[0]
			s = streams.Transform(s, func(r rec) ([]rec, error) {
				v, err := eval(p, r)
				if err != nil {
					return nil, err
				}
				list, err := asList(v)
				if err != nil {
					return nil, err
				}
				outs := make([]rec, len(list))
				for i, e := range list {
					outs[i] = r
					outs[i].Value = e
				}
				return outs, nil
			}, name)
			rekeyed = true
		case "drop_fields":
			fields := st.fields
			s = streams.MapRecordValues(s, func(r rec) (any, error) {
				m, ok := r.Value.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("drop_fields: value is %s, not an object", typeName(r.Value))
				}
				c := make(map[string]any, len(m))
				for k, v := range m {
					c[k] = v
				}
				for _, f := range fields {
					delete(c, f)
				}
				return c, nil
			}, name)
		case "rename":
			renames := st.renames
			s = streams.MapRecordValues(s, func(r rec) (any, error) {
				m, ok := r.Value.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("rename: value is %s, not an object", typeName(r.Value))
				}
				c := make(map[string]any, len(m))
				for k, v := range m {
					c[k] = v
				}
				for _, rn := range renames {
					if v, ok := c[rn[0]]; ok {
						delete(c, rn[0])
						c[rn[1]] = v
					}
				}
				return c, nil
			}, name)
		case "set_header":
			progs, headers := st.exprs, st.headers
			s = streams.MapRecord(s, func(r rec) (rec, error) {
				for i, p := range progs {
					v, err := eval(p, r)
					if err != nil {
						return r, err
					}
					b, err := encodeScalar(v)
					if err != nil {
						return r, err
					}
					r = r.WithHeader(headers[i], b)
				}
				return r, nil
			}, name)
			rekeyed = true // MapRecord: the library cannot tell headers from keys
		case "branch":
			sp := s.Split(name)
			for i, p := range st.exprs {
				target := st.targets[i]
				sp.BranchRecord(target, func(r rec) (bool, error) {
					v, err := eval(p, r)
					b, _ := v.(bool)
					return b, err
				}).To(target, keySerde{}, out(target), streams.Named(fmt.Sprintf("step %d (%s) to %s", st.Index, st.Name, target)))
			}
			if st.dflt != "" {
				sp.Default().To(st.dflt, keySerde{}, out(st.dflt), streams.Named(fmt.Sprintf("step %d (%s) default to %s", st.Index, st.Name, st.dflt)))
				return t
			}
			s = sp.Default()
		}
	}
	if j.Spec.Output.Topic != "" {
		s.To(j.Spec.Output.Topic, keySerde{}, out(j.Spec.Output.Topic), streams.Named("output"))
	}
	return t
}

// asList returns the elements of a flat_map result: any slice or array
// (expressions yield []any, but also []string from split() or []int from a
// range such as 1..3); nil is no elements.
func asList(v any) ([]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return x, nil
	}
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		return nil, fmt.Errorf("flat_map expression returned %s, want a list", typeName(v))
	}
	list := make([]any, rv.Len())
	for i := range list {
		list[i] = rv.Index(i).Interface()
	}
	return list, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func eval(p *program, r rec) (any, error) {
	ev := evaluators.Get().(*evaluator)
	ev.env = Env{Value: r.Value, Key: r.Key, Topic: r.Topic, Partition: int(r.Partition), Offset: int(r.Offset), Timestamp: r.Timestamp}
	if p.usesHeaders {
		ev.env.Headers = make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			ev.env.Headers[h.Key] = string(h.Value)
		}
	}
	v, err := p.run(ev)
	ev.env = Env{}
	evaluators.Put(ev)
	return v, err
}
