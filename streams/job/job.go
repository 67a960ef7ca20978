package job

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/expr-lang/expr"
	"github.com/goccy/go-yaml/ast"

	"github.com/strata-streaming/strata/streams"
)

// Job is a compiled job file, ready to run as a streams.App.
type Job struct {
	Spec           Spec
	guarantee      streams.Guarantee
	errorMode      streams.ErrorMode
	commitInterval time.Duration
	inFormat       format
	outFormat      format
	steps          []compiledStep
	registry       *registryFormats // nil unless a format is avro, protobuf or json_schema
}

type compiledStep struct {
	Step
	exprs   []*program // filter/map/key/flat_map: one; branch: one per case
	targets []string   // branch: the topic of each case
	dflt    string     // branch: default topic ("" = continue)
	fields  []string   // drop_fields
	renames [][2]string
	headers []string // set_header names, parallel to exprs
	window  *windowSpec
	outputs []aggOutput // aggregate
	join    *joinSpec
}

type format int

const (
	formatJSON format = iota
	formatString
	formatBytes
	// The registry formats: Confluent's wire format, schemas in the
	// job's schema registry.
	formatAvro
	formatProtobuf
	formatJSONSchema
)

var formatNames = map[string]format{
	"json": formatJSON, "string": formatString, "bytes": formatBytes,
	"avro": formatAvro, "protobuf": formatProtobuf, "json_schema": formatJSONSchema,
}

func (f format) String() string {
	for name, g := range formatNames {
		if g == f {
			return name
		}
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// usesRegistry: the format's records carry a schema id.
func (f format) usesRegistry() bool { return f >= formatAvro }

func parseFormat(what, s string) (format, error) {
	if s == "" {
		return formatJSON, nil
	}
	if f, ok := formatNames[s]; ok {
		return f, nil
	}
	return 0, fmt.Errorf("%w: %s format %q: want json, string, bytes, avro, protobuf or json_schema", ErrInvalid, what, s)
}

var validName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func compile(spec *Spec, f *ast.File, dir string) (*Job, error) {
	j := &Job{Spec: *spec}
	var err error
	if !validName.MatchString(spec.Name) {
		return nil, fmt.Errorf("%w: name %q: want letters, digits, '.', '_' or '-'", ErrInvalid, spec.Name)
	}
	if j.Spec.ApplicationID == "" {
		j.Spec.ApplicationID = spec.Name
	}
	if len(spec.Input.Topics) == 0 && spec.Input.Pattern == "" {
		return nil, fmt.Errorf("%w: input needs topics or pattern", ErrInvalid)
	}
	if len(spec.Input.Topics) > 0 && spec.Input.Pattern != "" {
		return nil, fmt.Errorf("%w: input takes topics or pattern, not both", ErrInvalid)
	}
	if spec.Input.Pattern != "" {
		if _, err := regexp.Compile(spec.Input.Pattern); err != nil {
			return nil, fmt.Errorf("%w: input pattern: %w", ErrInvalid, err)
		}
	}
	if j.inFormat, err = parseFormat("input", spec.Input.Format); err != nil {
		return nil, err
	}
	if j.outFormat, err = parseFormat("output", spec.Output.Format); err != nil {
		return nil, err
	}
	if j.registry, err = compileRegistry(spec, j.inFormat, j.outFormat, dir); err != nil {
		return nil, err
	}
	if j.guarantee, err = streams.ParseGuarantee(spec.Guarantee); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if j.errorMode, err = streams.ParseErrorMode(spec.Errors.Mode); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if j.errorMode == streams.ErrorDeadLetter && spec.Errors.Topic == "" {
		return nil, fmt.Errorf("%w: errors: mode dead_letter needs a topic", ErrInvalid)
	}
	if j.commitInterval, err = parseDuration(spec.CommitInterval); err != nil {
		return nil, err
	}
	terminal := false
	for _, st := range spec.Pipeline {
		cs, err := compileStep(f, st)
		if err != nil {
			return nil, err
		}
		if cs.join != nil && slices.Contains(spec.Input.Topics, cs.join.stream) {
			return nil, stepErrAt(f, st, st.Path+".stream", "join stream %s is an input topic: a job cannot join a topic with itself", cs.join.stream)
		}
		if cs.Op == "branch" && cs.dflt != "" {
			terminal = true
		} else if terminal {
			return nil, fmt.Errorf("%w: pipeline step %d (%s): unreachable, the branch before it routes every record", ErrInvalid, st.Index, st.Name)
		}
		j.steps = append(j.steps, cs)
	}
	if err := checkStateful(f, j.steps); err != nil {
		return nil, err
	}
	if spec.Output.Topic == "" && !terminal {
		return nil, fmt.Errorf("%w: output needs a topic", ErrInvalid)
	}
	if err := j.checkFeedback(); err != nil {
		return nil, err
	}
	if err := streams.CheckOptions(j.Options()...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return j, nil
}

// checkFeedback rejects a job that writes to a topic it reads: its output,
// a branch target or its dead-letter topic being an input topic or
// matching the input pattern would feed the job its own records forever.
func (j *Job) checkFeedback() error {
	var pattern *regexp.Regexp
	if j.Spec.Input.Pattern != "" {
		pattern = regexp.MustCompile(j.Spec.Input.Pattern) // compiled before
	}
	reads := func(topic string) string {
		for _, in := range j.Spec.Input.Topics {
			if in == topic {
				return "is an input topic"
			}
		}
		for _, st := range j.steps {
			if st.join != nil && st.join.table == topic {
				return "is a joined table"
			}
			if st.join != nil && st.join.stream == topic {
				return "is a joined stream"
			}
		}
		if pattern != nil && pattern.MatchString(topic) {
			return fmt.Sprintf("matches the input pattern %q", j.Spec.Input.Pattern)
		}
		return ""
	}
	for _, st := range j.steps {
		targets := st.targets
		if st.dflt != "" {
			targets = append(targets[:len(targets):len(targets)], st.dflt)
		}
		for _, tp := range targets {
			if why := reads(tp); why != "" {
				return stepErr(st.Step, "branch target %q %s: the job would read its own output", tp, why)
			}
		}
	}
	if tp := j.Spec.Output.Topic; tp != "" {
		if why := reads(tp); why != "" {
			return fmt.Errorf("%w: output topic %q %s: the job would read its own output", ErrInvalid, tp, why)
		}
	}
	if tp := j.Spec.Errors.Topic; tp != "" {
		if why := reads(tp); why != "" {
			return fmt.Errorf("%w: errors topic %q %s: the job would read its own dead letters", ErrInvalid, tp, why)
		}
	}
	return nil
}

func stepErr(st Step, format string, args ...any) error {
	return fmt.Errorf("%w: pipeline step %d (%s): %s", ErrInvalid, st.Index, st.Name, fmt.Sprintf(format, args...))
}

func compileStep(f *ast.File, st Step) (compiledStep, error) {
	cs := compiledStep{Step: st}
	switch st.Op {
	case "filter", "map", "key", "flat_map", "group_by", "timestamp":
		src, ok := st.Arg.(string)
		if !ok {
			// YAML may read "filter: true" as a bool; expressions are text.
			if st.Arg == nil {
				return cs, stepErr(st, "%s needs an expression", st.Op)
			}
			src = fmt.Sprint(st.Arg)
		}
		var opts []expr.Option
		if st.Op == "filter" {
			opts = append(opts, expr.AsBool())
		}
		p, err := compileExpr(f, st, st.Op, st.Path, src, opts...)
		if err != nil {
			return cs, err
		}
		cs.exprs = []*program{p}
	case "window":
		w, err := compileWindow(f, st)
		if err != nil {
			return cs, err
		}
		cs.window = w
	case "aggregate":
		outs, err := compileAggregate(f, st)
		if err != nil {
			return cs, err
		}
		cs.outputs = outs
	case "join":
		js, err := compileJoin(f, st)
		if err != nil {
			return cs, err
		}
		cs.join = js
	case "branch":
		cases, ok := st.Arg.([]any)
		if !ok || len(cases) == 0 {
			return cs, stepErr(st, "branch needs a list of {when, to} cases and optionally {default: topic}")
		}
		for i, c := range cases {
			m, ok := c.(map[string]any)
			if !ok {
				return cs, stepErr(st, "branch case %d: want {when: EXPR, to: TOPIC} or {default: TOPIC}", i+1)
			}
			if d, ok := m["default"]; ok {
				topic, ok := d.(string)
				if !ok || topic == "" || len(m) != 1 || i != len(cases)-1 {
					return cs, stepErr(st, "branch case %d: default must be the last case, {default: TOPIC}", i+1)
				}
				cs.dflt = topic
				continue
			}
			when, ok1 := m["when"].(string)
			to, ok2 := m["to"].(string)
			if !ok1 || !ok2 || to == "" || len(m) != 2 {
				return cs, stepErr(st, "branch case %d: want {when: EXPR, to: TOPIC}", i+1)
			}
			p, err := compileExpr(f, st, fmt.Sprintf("branch case %d", i+1), fmt.Sprintf("%s[%d].when", st.Path, i), when, expr.AsBool())
			if err != nil {
				return cs, err
			}
			cs.exprs = append(cs.exprs, p)
			cs.targets = append(cs.targets, to)
		}
	case "drop_fields":
		list, ok := st.Arg.([]any)
		if !ok || len(list) == 0 {
			return cs, stepErr(st, "drop_fields needs a list of field names")
		}
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return cs, stepErr(st, "drop_fields: %v is not a field name", v)
			}
			cs.fields = append(cs.fields, s)
		}
	case "rename":
		m, ok := st.Arg.(map[string]any)
		if !ok || len(m) == 0 {
			return cs, stepErr(st, "rename needs a map of old: new field names")
		}
		for _, k := range sortedKeys(m) {
			to, ok := m[k].(string)
			if !ok || to == "" {
				return cs, stepErr(st, "rename %s: the new name must be a string", k)
			}
			cs.renames = append(cs.renames, [2]string{k, to})
		}
	case "set_header":
		m, ok := st.Arg.(map[string]any)
		if !ok || len(m) == 0 {
			return cs, stepErr(st, "set_header needs a map of header: EXPR")
		}
		for _, k := range sortedKeys(m) {
			src, ok := m[k].(string)
			if !ok {
				src = fmt.Sprint(m[k])
			}
			p, err := compileExpr(f, st, "set_header "+k, st.Path+"."+k, src)
			if err != nil {
				return cs, err
			}
			cs.exprs = append(cs.exprs, p)
			cs.headers = append(cs.headers, k)
		}
	}
	return cs, nil
}

// Options returns the App options the job file sets; callers add Brokers
// and anything else.
func (j *Job) Options() []streams.Opt {
	opts := []streams.Opt{
		streams.ApplicationID(j.Spec.ApplicationID),
		streams.JobName(j.Spec.Name),
		streams.WithGuarantee(j.guarantee),
		streams.OnError(j.errorMode),
	}
	if j.Spec.Errors.Topic != "" {
		opts = append(opts, streams.DeadLetterTopic(j.Spec.Errors.Topic))
	}
	if j.commitInterval >= 0 {
		opts = append(opts, streams.CommitInterval(j.commitInterval))
	}
	if j.Spec.StandbyReplicas != 0 {
		opts = append(opts, streams.NumStandbyReplicas(j.Spec.StandbyReplicas))
	}
	if j.registry != nil && j.outFormat.usesRegistry() {
		opts = append(opts, streams.BeforeRun(j.Prepare))
	}
	return opts
}

// Guarantee returns the job's processing guarantee.
func (j *Job) Guarantee() streams.Guarantee { return j.guarantee }

// NewApp builds the job's topology and an App for it; opts come after the
// job's own options (so they win).
func (j *Job) NewApp(opts ...streams.Opt) (*streams.App, error) {
	return streams.NewApp(j.Topology(), append(j.Options(), opts...)...)
}

// Run runs the job against brokers until ctx is done.
func (j *Job) Run(ctx context.Context, brokers []string, logger *slog.Logger, opts ...streams.Opt) error {
	app, err := j.NewApp(append([]streams.Opt{streams.Brokers(brokers...), streams.Logger(logger)}, opts...)...)
	if err != nil {
		return err
	}
	return app.Run(ctx)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for k := i; k > 0 && keys[k] < keys[k-1]; k-- {
			keys[k], keys[k-1] = keys[k-1], keys[k]
		}
	}
	return keys
}

// keySerde: keys are strings (nil for none) in, and encoded by type out.
type keySerde struct{}

func (keySerde) Decode(b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	return string(b), nil
}

func (keySerde) Encode(v any) ([]byte, error) { return encodeScalar(v) }

func encodeScalar(v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	case float64:
		return strconv.AppendFloat(nil, x, 'f', -1, 64), nil
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case bool:
		return strconv.AppendBool(nil, x), nil
	}
	return encodeJSON(nil, v)
}

type valueSerde struct{ f format }

func (s valueSerde) Decode(b []byte) (any, error) {
	switch s.f {
	case formatString:
		return string(b), nil
	case formatBytes:
		return b, nil
	}
	if b == nil {
		return nil, nil
	}
	return decodeJSON(b)
}

func (s valueSerde) Encode(v any) ([]byte, error) {
	if s.f == formatJSON {
		if v == nil {
			return nil, nil
		}
		return encodeJSON(make([]byte, 0, 128), v)
	}
	return encodeScalar(v)
}
