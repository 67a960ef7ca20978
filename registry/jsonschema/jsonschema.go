package jsonschema

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/strata-streaming/strata/registry/schema"
)

// Limits on what Parse accepts. They are far above real schemas and keep a
// hostile request from costing unbounded memory, stack or time.
const (
	// maxSchemaBytes bounds the text of a schema and of each reference.
	maxSchemaBytes = 8 << 20
	// maxNesting bounds how deeply JSON arrays and objects nest.
	maxNesting = 256
	// maxReferenceDepth bounds how deeply references reference others.
	maxReferenceDepth = 64
	// maxReferenceNodes bounds the resolved references walked in all (a
	// schema shared by several referrers counts once per referrer).
	maxReferenceNodes = 10000
)

// The errors Parse and Validate return wrap one of these.
var (
	// ErrMalformedJSON: the text (or a reference's) is not one JSON value.
	ErrMalformedJSON = errors.New("jsonschema: malformed JSON")
	// ErrInvalidSchema: the JSON is not a valid JSON Schema of its draft.
	ErrInvalidSchema = errors.New("jsonschema: invalid schema")
	// ErrUnresolvedReference: a $ref (or $schema) names a schema that is
	// neither among the resolved references nor a known draft's
	// metaschema, or a location inside one that does not exist.
	ErrUnresolvedReference = errors.New("jsonschema: unresolved reference")
	// ErrNotJSONSchema: a schema.Parsed that this package did not parse.
	ErrNotJSONSchema = errors.New("jsonschema: not a JSON schema parsed by this package")
	// ErrInvalidDocument: Validate found the document does not match.
	ErrInvalidDocument = errors.New("jsonschema: document does not match the schema")
)

// The schema being parsed is compiled under rootURL; references with a
// relative name, and $refs with a relative URL in a schema without an
// absolute $id, resolve under referenceBase. Neither is ever fetched:
// the loader refuses everything that was not handed to Parse.
const (
	referenceBase = "strata://registry/"
	rootURL       = referenceBase + "_schema_being_parsed.json"
)

// New returns the JSON Schema format.
func New() schema.Format { return format{} }

type format struct{}

func (format) Type() schema.Type { return schema.JSON }

// parsed is a schema that Parse accepted: its texts and the compiled
// schema, with every $ref resolved.
type parsed struct {
	canonical  string
	normalized string
	compiled   *jsv.Schema
}

func (p *parsed) Canonical() string  { return p.canonical }
func (p *parsed) Normalized() string { return p.normalized }

// Parse parses and compiles a JSON Schema with the schemas it references.
func (format) Parse(text string, refs []schema.Resolved) (schema.Parsed, error) {
	if len(text) > maxSchemaBytes {
		return nil, fmt.Errorf("%w: schema is %d bytes, more than the limit of %d", ErrInvalidSchema, len(text), maxSchemaBytes)
	}
	doc, err := decodeJSON(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	if doc.kind != kindObject && doc.kind != kindBool {
		return nil, fmt.Errorf("%w: a JSON Schema is an object or a boolean, not %s", ErrInvalidSchema, kindName(doc.kind))
	}

	compiler := jsv.NewCompiler()
	compiler.DefaultDraft(jsv.Draft7) // as Confluent, when $schema is absent
	compiler.UseLoader(refusingLoader{})

	rootBase := rootURL
	if id := schemaID(doc); id != "" {
		if abs, err := resolveURL(rootURL, id); err == nil {
			rootBase = abs
		}
	}
	if err := registerReferences(compiler, rootBase, refs); err != nil {
		return nil, err
	}
	if err := compiler.AddResource(rootURL, doc.toAny()); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSchema, cleanURLs(err.Error()))
	}
	var compiled *jsv.Schema
	err = guard(func() error {
		var err error
		compiled, err = compiler.Compile(rootURL)
		return err
	})
	if err != nil {
		return nil, compileError(err)
	}
	return &parsed{
		canonical:  doc.compact(false),
		normalized: doc.compact(true),
		compiled:   compiled,
	}, nil
}

// Validate says whether doc, a decoded JSON value (what encoding/json
// gives: map[string]any, []any, string, float64 or json.Number, bool,
// nil), matches p. A mismatch is a *DocumentError.
func Validate(p schema.Parsed, doc any) error {
	ps, ok := p.(*parsed)
	if !ok || ps == nil {
		return ErrNotJSONSchema
	}
	var verr error
	if err := guard(func() error { verr = ps.compiled.Validate(doc); return nil }); err != nil {
		return err
	}
	if verr == nil {
		return nil
	}
	var ve *jsv.ValidationError
	if !errors.As(verr, &ve) {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, verr)
	}
	return &DocumentError{Problems: leafProblems(ve)}
}

// DocumentError lists why a document does not match a schema, each
// problem as "<JSON pointer into the document>: <what is wrong>".
type DocumentError struct {
	Problems []string
}

func (e *DocumentError) Error() string {
	return ErrInvalidDocument.Error() + ": " + strings.Join(e.Problems, "; ")
}

func (e *DocumentError) Unwrap() error { return ErrInvalidDocument }

// refusingLoader is the compiler's only way to load a URL that was not
// added as a resource (draft metaschemas are built into the library): it
// refuses, so no schema is ever fetched from the network or read from a
// file.
type refusingLoader struct{}

var errNotProvided = errors.New("is not among the schema's references, and the registry fetches nothing from the network or the file system")

func (refusingLoader) Load(string) (any, error) { return nil, errNotProvided }

// registerReferences adds every resolved reference, recursively, as a
// resource of the compiler. A reference is registered under its name
// resolved against the base of the schema being parsed (so names are
// matched the way Confluent matches them, against the root's $id), under
// its name resolved against the schema that references it (so relative
// $refs inside nested references work), and under its own absolute $id.
func registerReferences(compiler *jsv.Compiler, rootBase string, refs []schema.Resolved) error {
	added := map[string]string{} // URL -> canonical text registered there
	nodes := 0
	add := func(name, at string, doc value) error {
		if at == rootURL {
			return fmt.Errorf("%w: reference %q has the reserved name %q", ErrInvalidSchema, name, rootURL)
		}
		canonical := doc.compact(false)
		if prev, ok := added[at]; ok {
			if prev != canonical {
				return fmt.Errorf("%w: two different schemas are referenced as %q", ErrInvalidSchema, cleanURLs(at))
			}
			return nil
		}
		if err := compiler.AddResource(at, doc.toAny()); err != nil {
			return fmt.Errorf("%w: reference %q: %s", ErrInvalidSchema, name, cleanURLs(err.Error()))
		}
		added[at] = canonical
		return nil
	}
	var walk func(refs []schema.Resolved, parentBase string, depth int) error
	walk = func(refs []schema.Resolved, parentBase string, depth int) error {
		if len(refs) > 0 && depth > maxReferenceDepth {
			return fmt.Errorf("%w: references nested deeper than %d levels", ErrInvalidSchema, maxReferenceDepth)
		}
		for _, ref := range refs {
			if nodes++; nodes > maxReferenceNodes {
				return fmt.Errorf("%w: more than %d references", ErrInvalidSchema, maxReferenceNodes)
			}
			if ref.Name == "" {
				return fmt.Errorf("%w: a reference has an empty name", ErrInvalidSchema)
			}
			if len(ref.Schema) > maxSchemaBytes {
				return fmt.Errorf("%w: reference %q is %d bytes, more than the limit of %d", ErrInvalidSchema, ref.Name, len(ref.Schema), maxSchemaBytes)
			}
			doc, err := decodeJSON(ref.Schema)
			if err != nil {
				return fmt.Errorf("%w: reference %q: %v", ErrMalformedJSON, ref.Name, err)
			}
			fromRoot, err := resolveURL(rootBase, ref.Name)
			if err != nil {
				return fmt.Errorf("%w: reference name %q is not a URL: %v", ErrInvalidSchema, ref.Name, err)
			}
			fromParent, _ := resolveURL(parentBase, ref.Name) // parses if the above did
			urls := []string{fromRoot, fromParent}
			base := fromParent
			if id := schemaID(doc); id != "" {
				if abs, err := resolveURL(fromParent, id); err == nil {
					urls = append(urls, abs)
					base = abs
				}
			}
			slices.Sort(urls)
			for _, at := range slices.Compact(urls) {
				if err := add(ref.Name, at, doc); err != nil {
					return err
				}
			}
			if err := walk(ref.References, base, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(refs, rootBase, 0)
}

// schemaID is the $id of a schema document ("id" in draft 4), if any.
func schemaID(doc value) string {
	if id, ok := doc.member("$id"); ok && id.kind == kindString {
		return id.text
	}
	if meta, ok := doc.member("$schema"); ok && meta.kind == kindString && strings.Contains(meta.text, "draft-04") {
		if id, ok := doc.member("id"); ok && id.kind == kindString {
			return id.text
		}
	}
	return ""
}

// resolveURL resolves ref against base and drops any fragment.
func resolveURL(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	u := b.ResolveReference(r)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// compileError turns an error of the schema library into one of ours,
// saying what is wrong and where, in the names the user wrote.
func compileError(err error) error {
	var (
		load   *jsv.LoadURLError
		ptr    *jsv.JSONPointerNotFoundError
		anchor *jsv.AnchorNotFoundError
		meta   *jsv.SchemaValidationError
	)
	switch {
	case errors.As(err, &load):
		if !errors.Is(load.Err, errNotProvided) {
			return fmt.Errorf("%w: %q: %s", ErrUnresolvedReference, cleanURLs(load.URL), cleanURLs(load.Err.Error()))
		}
		return fmt.Errorf("%w: %q (named by a $ref or $schema) %s", ErrUnresolvedReference, cleanURLs(load.URL), errNotProvided)
	case errors.As(err, &ptr):
		return fmt.Errorf("%w: $ref %q points to nothing in its schema", ErrUnresolvedReference, cleanURLs(ptr.URL))
	case errors.As(err, &anchor):
		return fmt.Errorf("%w: $ref %q names an anchor its schema does not define", ErrUnresolvedReference, cleanURLs(anchor.Reference))
	case errors.As(err, &meta):
		where := ""
		if u := strings.TrimSuffix(meta.URL, "#"); u != rootURL {
			where = fmt.Sprintf("reference %q: ", cleanURLs(u))
		}
		var ve *jsv.ValidationError
		if errors.As(meta.Err, &ve) {
			return fmt.Errorf("%w: %s%s", ErrInvalidSchema, where, strings.Join(leafProblems(ve), "; "))
		}
		return fmt.Errorf("%w: %s%s", ErrInvalidSchema, where, cleanURLs(meta.Err.Error()))
	}
	return fmt.Errorf("%w: %s", ErrInvalidSchema, cleanURLs(err.Error()))
}

// maxProblems bounds how many problems an error lists.
const maxProblems = 10

// problemPrinter renders the library's messages in English.
var problemPrinter = message.NewPrinter(language.English)

// leafProblems lists the innermost causes of a validation error as
// "<pointer>: <message>"; the outer ones only say that a combination
// ('allOf', 'anyOf', …) failed.
func leafProblems(ve *jsv.ValidationError) []string {
	var out []string
	seen := map[string]bool{}
	total := 0
	var walk func(e *jsv.ValidationError)
	walk = func(e *jsv.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		msg := "#" + jsonPointer(e.InstanceLocation) + ": " + cleanURLs(e.ErrorKind.LocalizedString(problemPrinter))
		if seen[msg] {
			return
		}
		seen[msg] = true
		if total++; total <= maxProblems {
			out = append(out, msg)
		}
	}
	walk(ve)
	if total > maxProblems {
		out = append(out, fmt.Sprintf("and %d more", total-maxProblems))
	}
	return out
}

// cleanURLs removes the registry's internal URLs from a message, so that
// the schema being parsed is "" (its fragments read "#/…") and a
// reference is named as the user named it.
var cleanURLs = strings.NewReplacer(rootURL, "", referenceBase, "").Replace

// jsonPointer joins tokens into a JSON pointer (RFC 6901), "" for none.
func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, tok := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escapePointerToken(tok))
	}
	return sb.String()
}

var escapePointerToken = strings.NewReplacer("~", "~0", "/", "~1").Replace

func kindName(k valueKind) string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	}
	return "an object"
}

// guard runs f, turning a panic in the schema library into an error: a
// schema or document from the network must never crash the server.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the schema library failed: %v", ErrInvalidSchema, r)
		}
	}()
	return f()
}
