package serde

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
)

// Text is a schema as a client submits it: its type ("" is Avro), its
// text and the schemas it references.
type Text struct {
	Type       schema.Type
	Schema     string
	References []schema.Reference
}

// Schema is a schema the registry holds, parsed.
type Schema struct {
	ID int
	// Subject and Version: where the schema was found; empty and 0 for a
	// schema fetched by id alone.
	Subject    string
	Version    int
	Type       schema.Type // never "": AVRO, PROTOBUF or JSON
	Text       string
	References []schema.Reference
	// Parsed is Text parsed by the registry's own format package
	// (registry/avro, registry/protobuf, registry/jsonschema) with its
	// references resolved recursively through the registry.
	Parsed schema.Parsed
	// resolved are the references as Parse took them.
	resolved []schema.Resolved
}

// AsText is the schema as a client would submit it again.
func (s Schema) AsText() Text {
	return Text{Type: s.Type, Schema: s.Text, References: s.References}
}

// formats are the registry's format packages, by type.
var formats = map[schema.Type]schema.Format{
	schema.Avro:     avro.New(),
	schema.Protobuf: protobuf.New(),
	schema.JSON:     jsonschema.New(),
}

// maxReferenceDepth bounds how deep references nest (the registry refuses
// cycles; a registry that did not would otherwise make the client loop).
const maxReferenceDepth = 64

// complete parses s, fetching the schemas it references.
func (c *Client) complete(ctx context.Context, s Schema, depth int) (Schema, error) {
	format := formats[s.Type]
	if format == nil {
		return s, fmt.Errorf("serde: schema id %d: %w %q", s.ID, schema.ErrUnknownType, s.Type)
	}
	if depth > maxReferenceDepth {
		return s, fmt.Errorf("serde: references nested deeper than %d", maxReferenceDepth)
	}
	resolved := make([]schema.Resolved, 0, len(s.References))
	for _, ref := range s.References {
		target, err := c.version(ctx, ref.Subject, ref.Version, depth+1)
		if err != nil {
			return s, fmt.Errorf("serde: reference %q (%s version %d): %w", ref.Name, ref.Subject, ref.Version, err)
		}
		resolved = append(resolved, schema.Resolved{Name: ref.Name, Schema: target.Text, References: target.resolved})
	}
	parsed, err := format.Parse(s.Text, resolved)
	if err != nil {
		return s, fmt.Errorf("serde: schema id %d does not parse: %w", s.ID, err)
	}
	s.Parsed, s.resolved = parsed, resolved
	return s, nil
}

// SchemaByID fetches the schema with that id (GET /schemas/ids/{id}).
// Subject and Version of the answer are empty.
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	s, ok := c.mu.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var a apiSchema
	if err := c.do(ctx, "GET", "/schemas/ids/"+strconv.Itoa(id), nil, nil, &a); err != nil {
		return Schema{}, err
	}
	a.ID, a.Subject, a.Version = id, "", 0
	s, err := c.complete(ctx, a.schema(), 0)
	if err != nil {
		return Schema{}, err
	}
	c.mu.Lock()
	c.mu.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// Version fetches a subject's version (GET /subjects/{s}/versions/{v});
// -1 is the latest.
func (c *Client) Version(ctx context.Context, subject string, version int) (Schema, error) {
	return c.version(ctx, subject, version, 0)
}

func (c *Client) version(ctx context.Context, subject string, version, depth int) (Schema, error) {
	c.mu.Lock()
	if version == -1 {
		if e, ok := c.mu.latest[subject]; ok && c.latestTTL > 0 && c.now().Sub(e.fetched) < c.latestTTL {
			c.mu.Unlock()
			return e.schema, nil
		}
	} else if s, ok := c.mu.byVersion[subjectVersion{subject, version}]; ok {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	var a apiSchema
	if err := c.do(ctx, "GET", subjectPath(subject)+"/versions/"+versionText(version), nil, nil, &a); err != nil {
		return Schema{}, err
	}
	s, err := c.complete(ctx, a.schema(), depth)
	if err != nil {
		return Schema{}, err
	}
	c.storeLocking(s)
	if version == -1 && c.latestTTL > 0 {
		c.mu.Lock()
		c.mu.latest[subject] = latestEntry{schema: s, fetched: c.now()}
		c.mu.Unlock()
	}
	return s, nil
}

// storeLocking caches a version the registry answered, by id and by
// subject and version.
func (c *Client) storeLocking(s Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.byVersion[subjectVersion{s.Subject, s.Version}] = s
	if _, ok := c.mu.byID[s.ID]; !ok {
		byID := s
		byID.Subject, byID.Version = "", 0
		c.mu.byID[s.ID] = byID
	}
}

// textBody is a Text as the API takes it.
func textBody(text Text) apiSchema {
	t := text.Type
	if t == schema.Avro {
		t = ""
	}
	return apiSchema{SchemaType: t, References: text.References, Schema: text.Schema}
}

func keyOf(subject string, text Text, normalize bool) textKey {
	b, _ := json.Marshal(textBody(text))
	return textKey{subject: subject, text: string(b), normalize: normalize}
}

func normalizeQuery(normalize bool) url.Values {
	if !normalize {
		return nil
	}
	return url.Values{"normalize": {"true"}}
}

// Register registers text under subject (POST /subjects/{s}/versions),
// then looks it up, so that the answer has the id, the version and the
// text as the registry stores it. Registering a schema the subject
// already holds answers its version without making a new one.
func (c *Client) Register(ctx context.Context, subject string, text Text, normalize bool) (Schema, error) {
	key := keyOf(subject, text, normalize)
	c.mu.Lock()
	s, ok := c.mu.registered[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var answer struct {
		ID int `json:"id"`
	}
	if err := c.do(ctx, "POST", subjectPath(subject)+"/versions", normalizeQuery(normalize), textBody(text), &answer); err != nil {
		return Schema{}, err
	}
	s, err := c.lookup(ctx, subject, text, normalize)
	if err != nil {
		return Schema{}, err
	}
	c.mu.Lock()
	c.mu.registered[key] = s
	c.mu.Unlock()
	return s, nil
}

// Lookup finds the version of subject that holds text (POST
// /subjects/{s}); a subject without it is an *Error with Code 40403.
func (c *Client) Lookup(ctx context.Context, subject string, text Text) (Schema, error) {
	return c.lookup(ctx, subject, text, false)
}

func (c *Client) lookup(ctx context.Context, subject string, text Text, normalize bool) (Schema, error) {
	key := keyOf(subject, text, normalize)
	c.mu.Lock()
	s, ok := c.mu.lookedUp[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var a apiSchema
	if err := c.do(ctx, "POST", subjectPath(subject), normalizeQuery(normalize), textBody(text), &a); err != nil {
		return Schema{}, err
	}
	s, err := c.complete(ctx, a.schema(), 0)
	if err != nil {
		return Schema{}, err
	}
	c.storeLocking(s)
	c.mu.Lock()
	c.mu.lookedUp[key] = s
	c.mu.Unlock()
	return s, nil
}

// CheckCompatibility asks whether text may be registered under subject
// against version (-1: the latest; 0: every version the subject's
// compatibility level compares with). Not compatible is ok false with
// the registry's reasons, not an error.
func (c *Client) CheckCompatibility(ctx context.Context, subject string, version int, text Text) (ok bool, messages []string, err error) {
	path := "/compatibility" + subjectPath(subject) + "/versions"
	if version != 0 {
		path += "/" + versionText(version)
	}
	var answer struct {
		IsCompatible bool     `json:"is_compatible"`
		Messages     []string `json:"messages"`
	}
	if err := c.do(ctx, "POST", path, url.Values{"verbose": {"true"}}, textBody(text), &answer); err != nil {
		return false, nil, err
	}
	return answer.IsCompatible, answer.Messages, nil
}

func deletedQuery(deleted bool) url.Values {
	if !deleted {
		return url.Values{}
	}
	return url.Values{"deleted": {"true"}}
}

// Subjects lists the subjects whose names start with prefix ("" for all),
// soft-deleted ones too when deleted is true.
func (c *Client) Subjects(ctx context.Context, prefix string, deleted bool) ([]string, error) {
	q := deletedQuery(deleted)
	if prefix != "" {
		q.Set("subjectPrefix", prefix)
	}
	var out []string
	err := c.do(ctx, "GET", "/subjects", q, nil, &out)
	return out, err
}

// Versions lists a subject's version numbers, soft-deleted ones too when
// deleted is true.
func (c *Client) Versions(ctx context.Context, subject string, deleted bool) ([]int, error) {
	var out []int
	err := c.do(ctx, "GET", subjectPath(subject)+"/versions", deletedQuery(deleted), nil, &out)
	return out, err
}

func permanentQuery(permanent bool) url.Values {
	if !permanent {
		return nil
	}
	return url.Values{"permanent": {"true"}}
}

// DeleteSubject deletes every version of subject, softly or (after a soft
// delete) permanently, and returns the versions deleted.
func (c *Client) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	var out []int
	err := c.do(ctx, "DELETE", subjectPath(subject), permanentQuery(permanent), nil, &out)
	c.forget(subject)
	return out, err
}

// DeleteVersion deletes one version (-1: the latest), softly or (after a
// soft delete) permanently, and returns its number.
func (c *Client) DeleteVersion(ctx context.Context, subject string, version int, permanent bool) (int, error) {
	var out int
	err := c.do(ctx, "DELETE", subjectPath(subject)+"/versions/"+versionText(version), permanentQuery(permanent), nil, &out)
	c.forget(subject)
	return out, err
}

// forget drops what the cache holds of a subject whose versions were
// deleted (ids stay: the schemas remain readable by id).
func (c *Client) forget(subject string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.mu.byVersion {
		if k.subject == subject {
			delete(c.mu.byVersion, k)
		}
	}
	for k := range c.mu.registered {
		if k.subject == subject {
			delete(c.mu.registered, k)
		}
	}
	for k := range c.mu.lookedUp {
		if k.subject == subject {
			delete(c.mu.lookedUp, k)
		}
	}
	delete(c.mu.latest, subject)
}

func configPath(kind, subject string) string {
	if subject == "" {
		return "/" + kind
	}
	return "/" + kind + "/" + url.PathEscape(subject)
}

// Config is the compatibility level of subject, or the global one for
// subject "". A subject without its own level answers the global one.
func (c *Client) Config(ctx context.Context, subject string) (string, error) {
	var out struct {
		Level string `json:"compatibilityLevel"`
	}
	var q url.Values
	if subject != "" {
		q = url.Values{"defaultToGlobal": {"true"}}
	}
	err := c.do(ctx, "GET", configPath("config", subject), q, nil, &out)
	return out.Level, err
}

// SetConfig sets the compatibility level of subject ("" for the global
// one) and returns it as the registry stored it.
func (c *Client) SetConfig(ctx context.Context, subject, level string) (string, error) {
	var out struct {
		Level string `json:"compatibility"`
	}
	err := c.do(ctx, "PUT", configPath("config", subject), nil, map[string]string{"compatibility": level}, &out)
	return out.Level, err
}

// Mode is the mode of subject, or the global one for subject "". A
// subject without its own mode answers the global one.
func (c *Client) Mode(ctx context.Context, subject string) (string, error) {
	var out struct {
		Mode string `json:"mode"`
	}
	var q url.Values
	if subject != "" {
		q = url.Values{"defaultToGlobal": {"true"}}
	}
	err := c.do(ctx, "GET", configPath("mode", subject), q, nil, &out)
	return out.Mode, err
}

// SetMode sets the mode of subject ("" for the global one); force sets
// IMPORT on a registry or subject that holds schemas.
func (c *Client) SetMode(ctx context.Context, subject, mode string, force bool) (string, error) {
	var out struct {
		Mode string `json:"mode"`
	}
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	err := c.do(ctx, "PUT", configPath("mode", subject), q, map[string]string{"mode": mode}, &out)
	return out.Mode, err
}
