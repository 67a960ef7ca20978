package protobuf

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-streaming/strata/registry/schema"
)

// ErrInvalidSchema marks every error Parse returns: the text, or one of
// its references, is not a valid .proto file, or names what it does not
// define or import. The wrapped error says what and where (path:line:col).
var ErrInvalidSchema = errors.New("protobuf: invalid schema")

// ErrNotProtobuf: a schema.Parsed handed to this package was not parsed
// by it.
var ErrNotProtobuf = errors.New("protobuf: schema was not parsed by the protobuf format")

// rootFileName is the path the registered schema's own text is compiled
// under; it shows in error messages ("schema.proto:3:5: ..."). A reference
// may take that name, in which case the root takes another (rootName).
const rootFileName = "schema.proto"

// New returns the Protobuf schema.Format.
func New() schema.Format { return Format{} }

// Format is the Protobuf schema.Format. Its zero value is ready to use
// and it holds no state.
type Format struct{}

var _ schema.Format = Format{}

// Type is schema.Protobuf.
func (Format) Type() schema.Type { return schema.Protobuf }

// parsed is one compiled schema. Its descriptors are immutable, so a
// parsed schema may be shared between goroutines.
type parsed struct {
	canonical  string
	normalized string
	file       linker.File
}

var _ schema.Parsed = (*parsed)(nil)

func (p *parsed) Canonical() string  { return p.canonical }
func (p *parsed) Normalized() string { return p.normalized }

// Parse compiles text as a .proto file. refs are the files it imports,
// by import path (and, recursively, what they import); the well-known
// google/protobuf/*.proto files and Confluent's confluent/meta.proto and
// confluent/type/decimal.proto need no reference, though a reference of
// the same name takes precedence.
func (Format) Parse(text string, refs []schema.Resolved) (schema.Parsed, error) {
	if trimText(text) == "" {
		return nil, fmt.Errorf("%w: the schema is empty", ErrInvalidSchema)
	}
	sources := make(map[string]string)
	if err := collectReferences(sources, refs); err != nil {
		return nil, err
	}
	root := rootName(sources)
	sources[root] = text

	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(sourceResolver(sources, root)),
		// Only the registered text needs positions (for error messages,
		// which the parser has regardless); no source info is kept.
		SourceInfoMode: protocompile.SourceInfoNone,
	}
	files, err := compiler.Compile(context.Background(), root)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	file := files[0]
	// Only options that cannot be re-encoded fail the printer, which a
	// compiled file should not have; refuse rather than store a text that
	// lacks them.
	canonical, err := canonicalize(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	normalized, err := normalize(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	return &parsed{canonical: canonical, normalized: normalized, file: file}, nil
}

// trimText is text with line endings normalized to \n, trailing blanks of
// each line removed and leading and trailing blank lines removed: what
// tells an empty schema, and two texts of one reference that are the same
// but for those. (Canonical is printed from the descriptor instead.)
func trimText(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " \t\r\f\v")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// collectReferences flattens the reference tree into sources, import path
// → text. The same path may appear more than once (two schemas importing
// a third) but only with the same text.
func collectReferences(sources map[string]string, refs []schema.Resolved) error {
	for _, ref := range refs {
		if ref.Name == "" {
			return fmt.Errorf("%w: a reference has no name (the import path it is imported by)", ErrInvalidSchema)
		}
		if previous, ok := sources[ref.Name]; ok {
			if trimText(previous) != trimText(ref.Schema) {
				return fmt.Errorf("%w: reference %q is given twice with different texts", ErrInvalidSchema, ref.Name)
			}
			continue
		}
		sources[ref.Name] = ref.Schema
		if err := collectReferences(sources, ref.References); err != nil {
			return err
		}
	}
	return nil
}

// rootName is a path for the schema's own text that no reference uses.
func rootName(sources map[string]string) string {
	name := rootFileName
	for i := 1; ; i++ {
		if _, taken := sources[name]; !taken {
			return name
		}
		name = fmt.Sprintf("schema_%d.proto", i)
	}
}

// sourceResolver finds a file by import path among the references, then
// among the Confluent files this package embeds. An import found nowhere
// (WithStandardImports then tries the google/protobuf files) is reported
// as a missing reference.
func sourceResolver(sources map[string]string, root string) protocompile.Resolver {
	return protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		if text, ok := sources[path]; ok {
			return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
		}
		if text, ok := builtinImports[path]; ok {
			return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
		}
		return protocompile.SearchResult{}, fmt.Errorf("import %q: no schema reference has that name", path)
	})
}

// file is the compiled descriptor behind p, or nil with ErrNotProtobuf.
func file(p schema.Parsed) (linker.File, error) {
	pp, ok := p.(*parsed)
	if !ok || pp == nil {
		return nil, ErrNotProtobuf
	}
	return pp.file, nil
}

// Descriptor is the compiled file of a schema this package parsed, with
// its imports reachable through Imports(); nil for any other Parsed.
func Descriptor(p schema.Parsed) protoreflect.FileDescriptor {
	f, err := file(p)
	if err != nil {
		return nil
	}
	return f
}
