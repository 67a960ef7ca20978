package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/streams"
)

// Environment variables that stand in for schema_registry.url and
// schema_registry.basic_auth when the job file leaves them out.
const (
	EnvRegistryURL       = "STRATA_SCHEMA_REGISTRY_URL"
	EnvRegistryBasicAuth = "STRATA_SCHEMA_REGISTRY_BASIC_AUTH"
)

// ErrSchemaRegistry marks a job that cannot start because of its output
// schema: the registry refused to register it (incompatible, invalid),
// the subject has no latest version, or the registry could not be reached.
var ErrSchemaRegistry = errors.New("job: schema registry")

// registryFormats is the job's registry client and output schema, for the
// avro, protobuf and json_schema formats.
type registryFormats struct {
	client  *serde.Client
	outType schema.Type // "" when the output format is not a registry format
	outText string      // the output schema, unless useLatest
	latest  bool
	// outSchemas maps each topic the job writes with the output format
	// to the schema it writes with; Prepare sets it.
	outSchemas atomic.Pointer[map[string]serde.Schema]
}

var schemaTypes = map[format]schema.Type{
	formatAvro: schema.Avro, formatProtobuf: schema.Protobuf, formatJSONSchema: schema.JSON,
}

var schemaFormats = map[schema.Type]schema.Format{
	schema.Avro: avro.New(), schema.Protobuf: protobuf.New(), schema.JSON: jsonschema.New(),
}

// compileRegistry checks the registry settings of a job: a URL (from the
// file or the environment) when a format needs one, and for a registry
// output format its schema (read and parsed here) or use_latest_version.
// It returns nil when no format uses the registry.
func compileRegistry(spec *Spec, in, out format, dir string) (*registryFormats, error) {
	o := spec.Output
	if !out.usesRegistry() {
		switch {
		case o.Schema != "":
			return nil, fmt.Errorf("%w: output schema: only for format avro, protobuf or json_schema, not %s", ErrInvalid, out)
		case o.SchemaType != "":
			return nil, fmt.Errorf("%w: output schema_type: only for format avro, protobuf or json_schema, not %s", ErrInvalid, out)
		case o.UseLatestVersion:
			return nil, fmt.Errorf("%w: output use_latest_version: only for format avro, protobuf or json_schema, not %s", ErrInvalid, out)
		}
	}
	if !in.usesRegistry() && !out.usesRegistry() {
		return nil, nil
	}
	url := spec.SchemaRegistry.URL
	if url == "" {
		url = os.Getenv(EnvRegistryURL)
	}
	if url == "" {
		which, f := "input", in
		if !in.usesRegistry() {
			which, f = "output", out
		}
		return nil, fmt.Errorf("%w: %s format %s needs schema_registry.url (or $%s)", ErrInvalid, which, f, EnvRegistryURL)
	}
	var opts []serde.Opt
	auth := spec.SchemaRegistry.BasicAuth
	if auth == "" {
		auth = os.Getenv(EnvRegistryBasicAuth)
	}
	if auth != "" {
		user, password, ok := strings.Cut(auth, ":")
		if !ok {
			return nil, fmt.Errorf("%w: schema_registry.basic_auth: want user:password", ErrInvalid)
		}
		opts = append(opts, serde.BasicAuth(user, password))
	}
	client, err := serde.NewClient(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: schema_registry.url: %w", ErrInvalid, err)
	}
	r := &registryFormats{client: client}
	if !out.usesRegistry() {
		return r, nil
	}
	r.outType = schemaTypes[out]
	if o.SchemaType != "" {
		t, ok := parseSchemaType(o.SchemaType)
		if !ok {
			return nil, fmt.Errorf("%w: output schema_type %q: want avro, protobuf or json_schema", ErrInvalid, o.SchemaType)
		}
		if t != r.outType {
			return nil, fmt.Errorf("%w: output schema_type %s does not match format %s", ErrInvalid, o.SchemaType, out)
		}
	}
	switch {
	case o.Schema != "" && o.UseLatestVersion:
		return nil, fmt.Errorf("%w: output takes schema or use_latest_version, not both", ErrInvalid)
	case o.UseLatestVersion:
		r.latest = true
		return r, nil
	case o.Schema == "":
		return nil, fmt.Errorf("%w: output format %s needs schema (its text or a file) or use_latest_version: true", ErrInvalid, out)
	}
	if r.outText, err = schemaText(o.Schema, dir); err != nil {
		return nil, err
	}
	if _, err := schemaFormats[r.outType].Parse(r.outText, nil); err != nil {
		return nil, fmt.Errorf("%w: output schema (%s): %w", ErrInvalid, r.outType, err)
	}
	return r, nil
}

// parseSchemaType reads a schema_type: the format names, or the
// registry's schemaType values, in any case.
func parseSchemaType(s string) (schema.Type, bool) {
	switch strings.ToLower(s) {
	case "avro":
		return schema.Avro, true
	case "protobuf":
		return schema.Protobuf, true
	case "json_schema", "json":
		return schema.JSON, true
	}
	return "", false
}

// schemaText is the output schema: s itself when it looks like a schema
// (it holds a '{' or a line break, or is a quoted Avro primitive), else
// the contents of the file s names, relative to dir.
func schemaText(s, dir string) (string, error) {
	if strings.ContainsAny(s, "{\n") || strings.HasPrefix(s, `"`) {
		return s, nil
	}
	path := s
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: output schema: %w", ErrInvalid, err)
	}
	return string(data), nil
}

// writeTopics are the topics the job writes with the output format: the
// output topic and every branch target.
func (j *Job) writeTopics() []string {
	var topics []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			topics = append(topics, t)
		}
	}
	add(j.Spec.Output.Topic)
	for _, st := range j.steps {
		for _, t := range st.targets {
			add(t)
		}
		add(st.dflt)
	}
	return topics
}

// Prepare resolves the output schema of a job whose output format is
// avro, protobuf or json_schema, for every topic it writes (the output
// topic and branch targets) under the subject <topic>-value
// (TopicNameStrategy): it registers the job's schema, as Confluent's
// serializers do with auto.register.schemas, or fetches the subject's
// latest version (use_latest_version). An error wraps ErrSchemaRegistry
// and carries the registry's message. The App calls it at the start of
// every run (streams.BeforeRun); Run needs no more. Other jobs need no
// Prepare.
func (j *Job) Prepare(ctx context.Context) error {
	r := j.registry
	if r == nil || r.outType == "" {
		return nil
	}
	schemas := map[string]serde.Schema{}
	for _, topic := range j.writeTopics() {
		subject := serde.TopicNameStrategy(topic, false)
		var (
			s   serde.Schema
			err error
		)
		if r.latest {
			s, err = r.client.Version(ctx, subject, -1)
			var re *serde.Error
			if errors.As(err, &re) && (re.Code == serde.CodeSubjectNotFound || re.Code == serde.CodeVersionNotFound) {
				return fmt.Errorf("%w: output topic %s: use_latest_version: subject %s has no version in %s", ErrSchemaRegistry, topic, subject, r.client.URL())
			}
			if err == nil && s.Type != r.outType {
				return fmt.Errorf("%w: output topic %s: the latest version of %s (id %d) is %s, the output format %s", ErrSchemaRegistry, topic, subject, s.ID, s.Type, j.outFormat)
			}
		} else {
			s, err = r.client.Register(ctx, subject, serde.Text{Type: r.outType, Schema: r.outText}, false)
		}
		if err != nil {
			return fmt.Errorf("%w: output topic %s, subject %s: %w", ErrSchemaRegistry, topic, subject, err)
		}
		schemas[topic] = s
	}
	r.outSchemas.Store(&schemas)
	return nil
}

// registrySerde reads and writes values in Confluent's wire format. Input:
// the schema is the one the record's id names (fetched once); output: the
// schema Prepare resolved for topic.
type registrySerde struct {
	r     *registryFormats
	topic string // output only
}

func (s registrySerde) Decode(b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	v, _, err := serde.Decode(context.Background(), s.r.client, b)
	if err != nil {
		return nil, retriable(err)
	}
	return numbersAsFloat(v), nil
}

// retriable marks err streams.ErrRetriable when the registry could not
// answer (unreachable, or a 5xx such as its store timing out): the record
// is fine, so the job stops and RunWithRestarts retries it rather than the
// error mode skipping or dead-lettering it.
func retriable(err error) error {
	var regErr *serde.Error
	if errors.Is(err, serde.ErrClient) || (errors.As(err, &regErr) && regErr.Status >= 500) {
		return fmt.Errorf("%w: %w", streams.ErrRetriable, err)
	}
	return err
}

func (s registrySerde) Encode(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	schemas := s.r.outSchemas.Load()
	if schemas == nil {
		return nil, fmt.Errorf("%w: output topic %s: no schema resolved (Prepare has not run)", ErrSchemaRegistry, s.topic)
	}
	sch, ok := (*schemas)[s.topic]
	if !ok {
		return nil, fmt.Errorf("%w: output topic %s: no schema resolved", ErrSchemaRegistry, s.topic)
	}
	return serde.Encode(sch, v)
}

// numbersAsFloat turns the json.Numbers serde.Decode gives (JSON Schema
// and Protobuf numbers, Avro decimals) into float64, in place, so that
// expressions see numbers as they see JSON input's.
func numbersAsFloat(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		for k, e := range x {
			x[k] = numbersAsFloat(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersAsFloat(e)
		}
	}
	return v
}
