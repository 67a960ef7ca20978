package job

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ErrInvalid marks a job file that cannot run: bad YAML, unknown keys or
// operators, or an expression that does not compile.
var ErrInvalid = errors.New("job: invalid job")

// Spec is a job file as written.
type Spec struct {
	Name           string     `yaml:"name"`
	ApplicationID  string     `yaml:"application_id"` // consumer group; default: the name
	Input          InputSpec  `yaml:"input"`
	Pipeline       []Step     `yaml:"-"`
	Output         OutputSpec `yaml:"output"`
	Guarantee      string     `yaml:"guarantee"`       // at_least_once (default) or exactly_once
	CommitInterval string     `yaml:"commit_interval"` // Go duration, e.g. 100ms
	Errors         ErrorsSpec `yaml:"errors"`
	// SchemaRegistry is the registry of the avro, protobuf and json_schema
	// formats, for input and output alike.
	SchemaRegistry RegistrySpec `yaml:"schema_registry"`
	// StandbyReplicas is streams.NumStandbyReplicas (Kafka Streams'
	// num.standby.replicas): standby copies of each stateful task.
	StandbyReplicas int `yaml:"standby_replicas"`
}

// RegistrySpec locates a Confluent-compatible schema registry (Strata's
// own, `strata server --set schema.registry.enable=true`, or Confluent's).
type RegistrySpec struct {
	URL       string `yaml:"url"`        // default: $STRATA_SCHEMA_REGISTRY_URL
	BasicAuth string `yaml:"basic_auth"` // user:password; default: $STRATA_SCHEMA_REGISTRY_BASIC_AUTH
}

// InputSpec names the input topics (a list, or a regular expression) and
// their value format.
type InputSpec struct {
	Topics  []string `yaml:"topics"`
	Pattern string   `yaml:"pattern"`
	Format  string   `yaml:"format"` // json (default), string, bytes, avro, protobuf or json_schema
}

// OutputSpec names the output topic and its value format. A job whose
// pipeline ends every record in a branch may omit it. The registry formats
// (avro, protobuf, json_schema) take the schema to write with: Schema
// (registered at start) or UseLatestVersion.
type OutputSpec struct {
	Topic            string `yaml:"topic"`
	Format           string `yaml:"format"`
	Schema           string `yaml:"schema"`             // the schema's text, or the path of a file holding it
	SchemaType       string `yaml:"schema_type"`        // optional; must agree with Format
	UseLatestVersion bool   `yaml:"use_latest_version"` // write with the subject's latest version
}

// ErrorsSpec is the error mode: fail (default), skip or dead_letter (with
// topic).
type ErrorsSpec struct {
	Mode  string `yaml:"mode"`
	Topic string `yaml:"topic"`
}

// Step is one pipeline entry: its operator, its argument and where it is.
type Step struct {
	Index int    // 1-based
	Name  string // the step's name: key, else "<op>"
	Op    string
	Arg   any
	Path  string // YAML path of the argument, e.g. $.pipeline[0].filter
}

type rawSpec struct {
	Spec     `yaml:",inline"`
	Pipeline []map[string]any `yaml:"pipeline"`
}

var operators = map[string]bool{
	"filter": true, "map": true, "key": true, "flat_map": true, "branch": true,
	"drop_fields": true, "rename": true, "set_header": true, "timestamp": true,
	"group_by": true, "window": true, "aggregate": true, "join": true,
}

// ParseFile reads and compiles a job file.
func ParseFile(path string) (*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	j, err := parse(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return j, nil
}

// Parse parses and compiles a job; every expression is compiled here, so a
// job that parses can run. An output schema file named by a relative path
// is read from the working directory (ParseFile: from the job file's).
func Parse(data []byte) (*Job, error) { return parse(data, "") }

func parse(data []byte, dir string) (*Job, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, oneLine(yaml.FormatError(err, false, false)))
	}
	var raw rawSpec
	if err := yaml.UnmarshalWithOptions(data, &raw, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, oneLine(yaml.FormatError(err, false, false)))
	}
	spec := raw.Spec
	for i, m := range raw.Pipeline {
		st := Step{Index: i + 1}
		for k, v := range m {
			switch {
			case k == "name":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("%w: pipeline step %d: name must be a string", ErrInvalid, i+1)
				}
				st.Name = s
			case operators[k]:
				if st.Op != "" {
					return nil, fmt.Errorf("%w: pipeline step %d: two operators (%s and %s); one per step", ErrInvalid, i+1, st.Op, k)
				}
				st.Op, st.Arg = k, v
				st.Path = fmt.Sprintf("$.pipeline[%d].%s", i, k)
			default:
				return nil, fmt.Errorf("%w: pipeline step %d: unknown operator %q (want one of %s)", ErrInvalid, i+1, k, operatorList())
			}
		}
		if st.Op == "" {
			return nil, fmt.Errorf("%w: pipeline step %d: no operator", ErrInvalid, i+1)
		}
		if st.Name == "" {
			st.Name = st.Op
		}
		spec.Pipeline = append(spec.Pipeline, st)
	}
	return compile(&spec, file, dir)
}

func operatorList() string {
	var ops []string
	for k := range operators {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	return strings.Join(ops, ", ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// position returns the line and column of the node at a YAML path, or 0s.
func position(file *ast.File, path string) (line, column int, quoted bool) {
	p, err := yaml.PathString(path)
	if err != nil {
		return 0, 0, false
	}
	n, err := p.FilterFile(file)
	if err != nil || n == nil || n.GetToken() == nil {
		return 0, 0, false
	}
	tk := n.GetToken()
	q := tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType
	return tk.Position.Line, tk.Position.Column, q
}

func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: commit_interval %q: want a duration such as 100ms", ErrInvalid, s)
	}
	return d, nil
}
