package protobuf

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// printMode is which of the two texts the printer gives.
type printMode int

const (
	// normalizedMode is the Normalized text: what two equivalent schemas
	// may declare in different orders (imports, fields, extension fields,
	// reserved and extension ranges, reserved names) is sorted.
	normalizedMode printMode = iota
	// canonicalMode is the Canonical text: everything the descriptor keeps
	// in declaration order prints in that order.
	canonicalMode
)

// normalize prints file back as .proto text, deterministically: the same
// descriptor always prints the same text, and texts that differ only in
// what the descriptor does not keep (whitespace, comments, the order of a
// message's fields, of options, of imports, of reserved ranges, how a
// type name is qualified) print the same. See the package documentation
// for what is kept in declaration order and why.
func normalize(file linker.File) (string, error) {
	return printText(file, normalizedMode)
}

// canonicalize prints file back as .proto text in declaration order:
// what normalize sorts (imports, fields, extension fields, reserved and
// extension ranges, reserved names) stays as declared; whitespace,
// comments, the order of options and how a type name is qualified go, as
// in normalize. Texts that differ only in layout and comments print the
// same; texts that declare the same things in another order do not.
func canonicalize(file linker.File) (string, error) {
	return printText(file, canonicalMode)
}

func printText(file linker.File, mode printMode) (string, error) {
	p := &printer{file: file, types: linker.ResolverFromFile(file), mode: mode}
	p.printFile()
	if p.err != nil {
		return "", p.err
	}
	return strings.TrimSuffix(p.out.String(), "\n"), nil
}

type printer struct {
	out   strings.Builder
	file  linker.File
	types linker.Resolver // resolves the extensions that custom options use
	mode  printMode
	err   error // the first error; printing goes on, output is dropped
}

// sorted tells whether the printer sorts what the descriptor keeps in
// declaration order (Normalized) or keeps that order (Canonical).
func (p *printer) sorted() bool { return p.mode == normalizedMode }

func (p *printer) line(depth int, format string, args ...any) {
	p.out.WriteString(strings.Repeat("  ", depth))
	fmt.Fprintf(&p.out, format, args...)
	p.out.WriteByte('\n')
}

func (p *printer) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *printer) printFile() {
	f := p.file
	switch f.Syntax() {
	case protoreflect.Proto2:
		p.line(0, `syntax = "proto2";`)
	case protoreflect.Proto3:
		p.line(0, `syntax = "proto3";`)
	case protoreflect.Editions:
		edition := protodesc.ToFileDescriptorProto(f).GetEdition().String()
		p.line(0, `edition = %s;`, quote(strings.TrimPrefix(edition, "EDITION_"), false))
	}
	if f.Package() != "" {
		p.line(0, "package %s;", f.Package())
	}

	imports := make([]string, 0, f.Imports().Len())
	for i := range f.Imports().Len() {
		imp := f.Imports().Get(i)
		modifier := ""
		switch {
		case imp.IsPublic:
			modifier = "public "
		case imp.IsWeak:
			modifier = "weak "
		}
		imports = append(imports, fmt.Sprintf("import %s%s;", modifier, quote(imp.Path(), false)))
	}
	if p.sorted() {
		slices.SortFunc(imports, func(a, b string) int {
			return cmp.Compare(importPath(a), importPath(b))
		})
	}
	if len(imports) > 0 {
		p.out.WriteByte('\n')
		for _, imp := range imports {
			p.line(0, "%s", imp)
		}
	}

	if opts := p.options(f.Options()); len(opts) > 0 {
		p.out.WriteByte('\n')
		for _, opt := range opts {
			p.line(0, "option %s;", opt)
		}
	}

	groups := groupBodies(f.Syntax(), f.Extensions())
	for i := range f.Messages().Len() {
		if md := f.Messages().Get(i); !groups[md.FullName()] {
			p.out.WriteByte('\n')
			p.printMessage(0, md)
		}
	}
	for i := range f.Enums().Len() {
		p.out.WriteByte('\n')
		p.printEnum(0, f.Enums().Get(i))
	}
	for i := range f.Services().Len() {
		p.out.WriteByte('\n')
		p.printService(f.Services().Get(i))
	}
	if f.Extensions().Len() > 0 {
		p.out.WriteByte('\n')
		p.printExtensions(0, f.Extensions())
	}
}

// importPath is the quoted path of an import line, for sorting by path
// whatever its modifier.
func importPath(line string) string {
	return line[strings.IndexByte(line, '"'):]
}

// fieldList is what FieldDescriptors and ExtensionDescriptors share.
type fieldList interface {
	Len() int
	Get(i int) protoreflect.FieldDescriptor
}

// groupBodies names the messages that are the bodies of proto2 group
// fields among the fields and extensions of one scope: they print inside
// their field, not as messages of their own.
func groupBodies(syntax protoreflect.Syntax, lists ...fieldList) map[protoreflect.FullName]bool {
	bodies := make(map[protoreflect.FullName]bool)
	if syntax != protoreflect.Proto2 {
		return bodies
	}
	for _, list := range lists {
		for i := range list.Len() {
			if fd := list.Get(i); fd.Kind() == protoreflect.GroupKind {
				bodies[fd.Message().FullName()] = true
			}
		}
	}
	return bodies
}

func (p *printer) printMessage(depth int, md protoreflect.MessageDescriptor) {
	p.line(depth, "message %s {", md.Name())
	p.printMessageBody(depth+1, md)
	p.line(depth, "}")
}

// printMessageBody prints what is inside a message's braces: options,
// fields (a oneof where its first field would be), nested messages, enums
// and extensions in declaration order, then extension and reserved
// ranges and reserved names. Normalized sorts the fields by number and
// the ranges and names; Canonical keeps them as declared.
func (p *printer) printMessageBody(depth int, md protoreflect.MessageDescriptor) {
	for _, opt := range p.options(md.Options()) {
		p.line(depth, "option %s;", opt)
	}

	fields := make([]protoreflect.FieldDescriptor, 0, md.Fields().Len())
	for i := range md.Fields().Len() {
		fields = append(fields, md.Fields().Get(i))
	}
	if p.sorted() {
		slices.SortFunc(fields, byNumber)
	}
	printedOneofs := make(map[protoreflect.FullName]bool)
	for _, fd := range fields {
		oneof := fd.ContainingOneof()
		if oneof == nil || oneof.IsSynthetic() {
			p.printField(depth, fd, writtenLabel(fd))
			continue
		}
		if printedOneofs[oneof.FullName()] {
			continue
		}
		printedOneofs[oneof.FullName()] = true
		p.printOneof(depth, oneof)
	}

	groups := groupBodies(p.file.Syntax(), md.Fields(), md.Extensions())
	for i := range md.Messages().Len() {
		nested := md.Messages().Get(i)
		if nested.IsMapEntry() || groups[nested.FullName()] {
			continue
		}
		p.printMessage(depth, nested)
	}
	for i := range md.Enums().Len() {
		p.printEnum(depth, md.Enums().Get(i))
	}
	p.printExtensions(depth, md.Extensions())

	p.printExtensionRanges(depth, md)
	if ranges := p.fieldRanges(md.ReservedRanges(), maxFieldNumber); len(ranges) > 0 {
		p.line(depth, "reserved %s;", strings.Join(ranges, ", "))
	}
	if names := p.reservedNames(md.ReservedNames()); names != "" {
		p.line(depth, "reserved %s;", names)
	}
}

// printExtensionRanges prints a message's extension ranges. Options of
// an extension range apply to the whole statement, so ranges with the
// same options print as one statement: in Normalized, one statement per
// set of options, sorted by options, its ranges sorted; in Canonical, one
// statement per run of consecutive ranges with the same options, in
// declaration order (which the reparsed text keeps).
func (p *printer) printExtensionRanges(depth int, md protoreflect.MessageDescriptor) {
	type statement struct {
		opts   string
		ranges []string
	}
	var statements []statement
	for i := range md.ExtensionRanges().Len() {
		r := md.ExtensionRanges().Get(i)
		opts := strings.Join(p.options(md.ExtensionRangeOptions(i)), ", ")
		text := rangeText(int64(r[0]), int64(r[1])-1, maxFieldNumber)
		if n := len(statements); n > 0 && statements[n-1].opts == opts {
			statements[n-1].ranges = append(statements[n-1].ranges, text)
			continue
		}
		statements = append(statements, statement{opts: opts, ranges: []string{text}})
	}
	if p.sorted() {
		byOptions := make(map[string][]string)
		for _, s := range statements {
			byOptions[s.opts] = append(byOptions[s.opts], s.ranges...)
		}
		statements = statements[:0]
		for _, opts := range slices.Sorted(maps.Keys(byOptions)) {
			ranges := byOptions[opts]
			slices.SortFunc(ranges, compareRangeTexts)
			statements = append(statements, statement{opts: opts, ranges: ranges})
		}
	}
	for _, s := range statements {
		if s.opts == "" {
			p.line(depth, "extensions %s;", strings.Join(s.ranges, ", "))
		} else {
			p.line(depth, "extensions %s [%s];", strings.Join(s.ranges, ", "), s.opts)
		}
	}
}

// maxFieldNumber is the largest field number, which "max" stands for in
// a message's reserved and extension ranges.
const maxFieldNumber = int64(protowire.MaxValidNumber)

func byNumber(a, b protoreflect.FieldDescriptor) int {
	return cmp.Compare(a.Number(), b.Number())
}

// writtenLabel is the label keyword a field is declared with: none for
// proto3 fields without presence, map fields, oneof members and editions
// fields other than repeated ones.
func writtenLabel(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return ""
	case fd.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case fd.ParentFile().Syntax() == protoreflect.Editions:
		// Presence is a feature option in editions, printed with the
		// options.
		return ""
	case fd.Cardinality() == protoreflect.Required:
		return "required"
	case fd.HasOptionalKeyword():
		return "optional"
	case fd.IsExtension() && fd.ParentFile().Syntax() == protoreflect.Proto2:
		return "optional"
	}
	return ""
}

func (p *printer) printOneof(depth int, od protoreflect.OneofDescriptor) {
	p.line(depth, "oneof %s {", od.Name())
	for _, opt := range p.options(od.Options()) {
		p.line(depth+1, "option %s;", opt)
	}
	fields := make([]protoreflect.FieldDescriptor, 0, od.Fields().Len())
	for i := range od.Fields().Len() {
		fields = append(fields, od.Fields().Get(i))
	}
	if p.sorted() {
		slices.SortFunc(fields, byNumber)
	}
	for _, fd := range fields {
		p.printField(depth+1, fd, "")
	}
	p.line(depth, "}")
}

// printField prints one field or extension field: map fields as map<K, V>,
// proto2 groups with their body, everything else as label type name =
// number [options].
func (p *printer) printField(depth int, fd protoreflect.FieldDescriptor, label string) {
	prefix := ""
	if label != "" {
		prefix = label + " "
	}
	opts := p.fieldOptions(fd)
	suffix := ""
	if len(opts) > 0 {
		suffix = " [" + strings.Join(opts, ", ") + "]"
	}
	switch {
	case fd.IsMap():
		p.line(depth, "map<%s, %s> %s = %d%s;", typeName(fd.MapKey()), typeName(fd.MapValue()), fd.Name(), fd.Number(), suffix)
	case fd.Kind() == protoreflect.GroupKind && fd.ParentFile().Syntax() == protoreflect.Proto2:
		p.line(depth, "%sgroup %s = %d%s {", prefix, fd.Message().Name(), fd.Number(), suffix)
		p.printMessageBody(depth+1, fd.Message())
		p.line(depth, "}")
	default:
		p.line(depth, "%s%s %s = %d%s;", prefix, typeName(fd), fd.Name(), fd.Number(), suffix)
	}
}

// typeName is a field's type as written: the scalar keyword, or the
// fully qualified name of its message or enum with a leading dot, so that
// however the source qualified it, it prints the same.
func typeName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "." + string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return "." + string(fd.Enum().FullName())
	}
	return fd.Kind().String()
}

// fieldOptions are a field's bracketed options: the default and
// json_name pseudo-options first, then the options by number. json_name
// prints only when it differs from the name protoc derives from the field
// name, since that one means nothing more than no json_name at all.
func (p *printer) fieldOptions(fd protoreflect.FieldDescriptor) []string {
	var opts []string
	if fd.HasDefault() {
		opts = append(opts, "default = "+defaultText(fd))
	}
	if !fd.IsExtension() && fd.HasJSONName() && fd.JSONName() != jsonCamelCase(string(fd.Name())) {
		opts = append(opts, "json_name = "+quote(fd.JSONName(), false))
	}
	return append(opts, p.options(fd.Options())...)
}

// jsonCamelCase is the JSON name protoc gives a field that declares none:
// underscores dropped, a lowercase letter after one capitalized.
func jsonCamelCase(name string) string {
	var b strings.Builder
	afterUnderscore := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			afterUnderscore = true
			continue
		}
		if afterUnderscore && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		afterUnderscore = false
		b.WriteByte(c)
	}
	return b.String()
}

func defaultText(fd protoreflect.FieldDescriptor) string {
	if fd.Kind() == protoreflect.EnumKind {
		if ev := fd.DefaultEnumValue(); ev != nil {
			return string(ev.Name())
		}
	}
	return scalarText(fd.Kind(), fd.Default())
}

func (p *printer) printEnum(depth int, ed protoreflect.EnumDescriptor) {
	p.line(depth, "enum %s {", ed.Name())
	for _, opt := range p.options(ed.Options()) {
		p.line(depth+1, "option %s;", opt)
	}
	// Values keep their declaration order: the first is the default of a
	// proto2 field that declares none, and proto3 requires it to be zero.
	for i := range ed.Values().Len() {
		ev := ed.Values().Get(i)
		if opts := p.options(ev.Options()); len(opts) > 0 {
			p.line(depth+1, "%s = %d [%s];", ev.Name(), ev.Number(), strings.Join(opts, ", "))
		} else {
			p.line(depth+1, "%s = %d;", ev.Name(), ev.Number())
		}
	}
	var ranges []string
	for i := range ed.ReservedRanges().Len() {
		r := ed.ReservedRanges().Get(i) // inclusive at both ends
		ranges = append(ranges, rangeText(int64(r[0]), int64(r[1]), math.MaxInt32))
	}
	if len(ranges) > 0 {
		if p.sorted() {
			slices.SortFunc(ranges, compareRangeTexts)
		}
		p.line(depth+1, "reserved %s;", strings.Join(ranges, ", "))
	}
	if names := p.reservedNames(ed.ReservedNames()); names != "" {
		p.line(depth+1, "reserved %s;", names)
	}
	p.line(depth, "}")
}

func (p *printer) printService(sd protoreflect.ServiceDescriptor) {
	p.line(0, "service %s {", sd.Name())
	for _, opt := range p.options(sd.Options()) {
		p.line(1, "option %s;", opt)
	}
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		in, out := "", ""
		if md.IsStreamingClient() {
			in = "stream "
		}
		if md.IsStreamingServer() {
			out = "stream "
		}
		signature := fmt.Sprintf("rpc %s(%s.%s) returns (%s.%s)", md.Name(), in, md.Input().FullName(), out, md.Output().FullName())
		opts := p.options(md.Options())
		if len(opts) == 0 {
			p.line(1, "%s;", signature)
			continue
		}
		p.line(1, "%s {", signature)
		for _, opt := range opts {
			p.line(2, "option %s;", opt)
		}
		p.line(1, "}")
	}
	p.line(0, "}")
}

// printExtensions prints extension fields as extend blocks. Normalized
// groups them by the message they extend, in order of first declaration,
// each group sorted by number; Canonical prints one block per run of
// consecutive extensions of the same message, in declaration order.
func (p *printer) printExtensions(depth int, extensions protoreflect.ExtensionDescriptors) {
	type block struct {
		extendee protoreflect.FullName
		fields   []protoreflect.FieldDescriptor
	}
	var blocks []block
	index := make(map[protoreflect.FullName]int) // Normalized: extendee → its block
	for i := range extensions.Len() {
		xd := extensions.Get(i)
		name := xd.ContainingMessage().FullName()
		if p.sorted() {
			if b, seen := index[name]; seen {
				blocks[b].fields = append(blocks[b].fields, xd)
				continue
			}
			index[name] = len(blocks)
		} else if n := len(blocks); n > 0 && blocks[n-1].extendee == name {
			blocks[n-1].fields = append(blocks[n-1].fields, xd)
			continue
		}
		blocks = append(blocks, block{extendee: name, fields: []protoreflect.FieldDescriptor{xd}})
	}
	for _, b := range blocks {
		if p.sorted() {
			slices.SortFunc(b.fields, byNumber)
		}
		p.line(depth, "extend .%s {", b.extendee)
		for _, fd := range b.fields {
			p.printField(depth+1, fd, writtenLabel(fd))
		}
		p.line(depth, "}")
	}
}

// fieldRanges prints half-open number ranges as a reserved statement
// writes them: sorted in Normalized, as declared in Canonical.
func (p *printer) fieldRanges(ranges protoreflect.FieldRanges, maxNumber int64) []string {
	texts := make([]string, 0, ranges.Len())
	for i := range ranges.Len() {
		r := ranges.Get(i)
		texts = append(texts, rangeText(int64(r[0]), int64(r[1])-1, maxNumber))
	}
	if p.sorted() {
		slices.SortFunc(texts, compareRangeTexts)
	}
	return texts
}

// rangeText prints the inclusive range first..last: "5", "5 to 9" or
// "5 to max".
func rangeText(first, last, maxNumber int64) string {
	switch {
	case first == last:
		return strconv.FormatInt(first, 10)
	case last == maxNumber:
		return fmt.Sprintf("%d to max", first)
	default:
		return fmt.Sprintf("%d to %d", first, last)
	}
}

// compareRangeTexts orders range texts by their first number.
func compareRangeTexts(a, b string) int {
	first := func(text string) int64 {
		n, _ := strconv.ParseInt(strings.Fields(text)[0], 10, 64)
		return n
	}
	return cmp.Compare(first(a), first(b))
}

// reservedNames prints reserved names, sorted in Normalized and as
// declared in Canonical: quoted, or in editions bare identifiers.
func (p *printer) reservedNames(names protoreflect.Names) string {
	texts := make([]string, 0, names.Len())
	for i := range names.Len() {
		name := string(names.Get(i))
		if p.file.Syntax() != protoreflect.Editions {
			name = quote(name, false)
		}
		texts = append(texts, name)
	}
	if p.sorted() {
		slices.Sort(texts)
	}
	return strings.Join(texts, ", ")
}

// options prints the options set in an options message (FileOptions,
// FieldOptions, ...) as "name = value", sorted by field number. Custom
// options are extensions the compiler left as unknown fields: they are
// decoded against the extensions the file can see, and print as
// "(.full.name) = value".
func (p *printer) options(opts proto.Message) []string {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	if err != nil {
		p.fail(fmt.Errorf("printing options: %w", err))
		return nil
	}
	if len(raw) == 0 {
		return nil
	}
	decoded := dynamicpb.NewMessage(opts.ProtoReflect().Descriptor())
	if err := (proto.UnmarshalOptions{Resolver: p.types}).Unmarshal(raw, decoded); err != nil {
		p.fail(fmt.Errorf("printing options: %w", err))
		return nil
	}
	var texts []string
	for _, field := range setFields(decoded) {
		if field.desc.Number() == uninterpretedOptionNumber {
			continue
		}
		name := string(field.desc.Name())
		if field.desc.IsExtension() {
			name = "(." + string(field.desc.FullName()) + ")"
		}
		switch {
		case field.desc.IsList():
			// An option statement sets one element; a repeated option
			// is as many statements.
			list := field.value.List()
			for i := range list.Len() {
				texts = append(texts, name+" = "+p.singleValueText(field.desc, list.Get(i)))
			}
		default:
			texts = append(texts, name+" = "+p.singleValueText(field.desc, field.value))
		}
	}
	return texts
}

// uninterpretedOptionNumber is the field of every options message that
// holds options the compiler did not interpret; after linking it is empty.
const uninterpretedOptionNumber = 999

type setField struct {
	desc  protoreflect.FieldDescriptor
	value protoreflect.Value
}

// setFields are the populated fields of m by number.
func setFields(m protoreflect.Message) []setField {
	var fields []setField
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fields = append(fields, setField{fd, v})
		return true
	})
	slices.SortFunc(fields, func(a, b setField) int { return byNumber(a.desc, b.desc) })
	return fields
}

// singleValueText prints one value of fd (one element if fd is
// repeated): scalars as literals, enums by name, messages in the text
// format's braces.
func (p *printer) singleValueText(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return p.messageText(v.Message())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.FormatInt(int64(v.Enum()), 10)
	}
	return scalarText(fd.Kind(), v)
}

// messageText prints a message value as the text format does inside an
// option: "{ name: value ... }", fields by number, a repeated field as one
// entry per element, a map as one entry per key in key order.
func (p *printer) messageText(m protoreflect.Message) string {
	var parts []string
	for _, field := range setFields(m) {
		name := string(field.desc.Name())
		if field.desc.IsExtension() {
			name = "[" + string(field.desc.FullName()) + "]"
		}
		entry := func(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
			if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
				return name + " " + p.singleValueText(fd, v)
			}
			return name + ": " + p.singleValueText(fd, v)
		}
		switch {
		case field.desc.IsMap():
			keyDesc, valueDesc := field.desc.MapKey(), field.desc.MapValue()
			type kv struct {
				key   protoreflect.MapKey
				value protoreflect.Value
			}
			var entries []kv
			field.value.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				entries = append(entries, kv{k, v})
				return true
			})
			slices.SortFunc(entries, func(a, b kv) int { return compareMapKeys(keyDesc.Kind(), a.key, b.key) })
			for _, e := range entries {
				valuePart := "value: " + p.singleValueText(valueDesc, e.value)
				if valueDesc.Kind() == protoreflect.MessageKind {
					valuePart = "value " + p.singleValueText(valueDesc, e.value)
				}
				parts = append(parts, name+" { key: "+scalarText(keyDesc.Kind(), e.key.Value())+" "+valuePart+" }")
			}
		case field.desc.IsList():
			list := field.value.List()
			for i := range list.Len() {
				parts = append(parts, entry(field.desc, list.Get(i)))
			}
		default:
			parts = append(parts, entry(field.desc, field.value))
		}
	}
	if len(parts) == 0 {
		return "{ }"
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

func compareMapKeys(kind protoreflect.Kind, a, b protoreflect.MapKey) int {
	switch kind {
	case protoreflect.StringKind:
		return cmp.Compare(a.String(), b.String())
	case protoreflect.BoolKind:
		return cmp.Compare(boolNumber(a.Bool()), boolNumber(b.Bool()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return cmp.Compare(a.Uint(), b.Uint())
	default:
		return cmp.Compare(a.Int(), b.Int())
	}
}

func boolNumber(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scalarText prints a scalar value as a .proto literal.
func scalarText(kind protoreflect.Kind, v protoreflect.Value) string {
	switch kind {
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.FormatInt(v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10)
	case protoreflect.FloatKind:
		return floatText(v.Float(), 32)
	case protoreflect.DoubleKind:
		return floatText(v.Float(), 64)
	case protoreflect.StringKind:
		return quote(v.String(), false)
	case protoreflect.BytesKind:
		return quote(string(v.Bytes()), true)
	case protoreflect.EnumKind:
		return strconv.FormatInt(int64(v.Enum()), 10)
	}
	return v.String()
}

func floatText(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// quote prints s as a double-quoted .proto string literal. Printable
// UTF-8 stays as it is in a string; bytes, control characters and invalid
// UTF-8 are octal escapes, which mean the same bytes in either.
func quote(s string, bytes bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
				break
			}
			if !bytes && c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r != utf8.RuneError && unicode.IsPrint(r) {
					b.WriteString(s[i : i+size])
					i += size
					continue
				}
			}
			fmt.Fprintf(&b, `\%03o`, c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
