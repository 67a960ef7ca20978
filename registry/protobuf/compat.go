package protobuf

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-streaming/strata/registry/schema"
)

// Compatible lists why reader cannot read what writer wrote, following
// Confluent's Protobuf rules (the package documentation has the table).
// In every message "from X to Y" reads writer to reader, and fields are
// named by the reader's message and field names.
func (Format) Compatible(reader, writer schema.Parsed) []string {
	readerFile, err := file(reader)
	if err != nil {
		return []string{"reader: " + err.Error()}
	}
	writerFile, err := file(writer)
	if err != nil {
		return []string{"writer: " + err.Error()}
	}
	c := &compatChecker{compared: make(map[messagePair]bool)}
	if writerFile.Package() != readerFile.Package() {
		c.report("package changed from %s to %s", packageText(writerFile.Package()), packageText(readerFile.Package()))
	}
	c.compareScope(writerFile.Messages(), readerFile.Messages())
	return c.problems
}

func packageText(pkg protoreflect.FullName) string {
	if pkg == "" {
		return "none"
	}
	return "'" + string(pkg) + "'"
}

type compatChecker struct {
	problems []string
	// compared holds the message pairs already compared or being
	// compared, so that a type reached twice (or recursively) is compared
	// once.
	compared map[messagePair]bool
}

type messagePair struct{ writer, reader protoreflect.FullName }

func (c *compatChecker) report(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// compareScope pairs the messages declared in one scope (a file, or a
// message's nested messages) by name. A writer message the reader lacks
// is incompatible; an added or reordered message is not, since a message
// index is read against the schema of the ID it was written with. Map
// entries and group bodies are not messages of their own here, as they
// are not in Confluent's model: their fields compare them.
func (c *compatChecker) compareScope(writerMessages, readerMessages protoreflect.MessageDescriptors) {
	for i := range writerMessages.Len() {
		wm := writerMessages.Get(i)
		if wm.IsMapEntry() || isGroupBody(wm) {
			continue
		}
		rm := readerMessages.ByName(wm.Name())
		if rm == nil || rm.IsMapEntry() {
			c.report("message '%s' removed: the reader does not declare it", wm.FullName())
			continue
		}
		c.compareMessages(wm, rm)
	}
}

// isGroupBody tells whether md is the body of a proto2 group field.
func isGroupBody(md protoreflect.MessageDescriptor) bool {
	if md.ParentFile().Syntax() != protoreflect.Proto2 {
		return false
	}
	var lists []fieldList
	switch parent := md.Parent().(type) {
	case protoreflect.MessageDescriptor:
		lists = []fieldList{parent.Fields(), parent.Extensions()}
	case protoreflect.FileDescriptor:
		lists = []fieldList{parent.Extensions()}
	}
	return groupBodies(protoreflect.Proto2, lists...)[md.FullName()]
}

// compareMessages compares two messages field by field, by number, then
// their nested messages.
func (c *compatChecker) compareMessages(wm, rm protoreflect.MessageDescriptor) {
	pair := messagePair{wm.FullName(), rm.FullName()}
	if c.compared[pair] {
		return
	}
	c.compared[pair] = true

	writerFields, readerFields := fieldsByNumber(wm), fieldsByNumber(rm)
	c.compareOneofMembership(rm, writerFields)

	numbers := make([]protoreflect.FieldNumber, 0, len(writerFields)+len(readerFields))
	for n := range writerFields {
		numbers = append(numbers, n)
	}
	for n := range readerFields {
		if _, both := writerFields[n]; !both {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		wf, rf := writerFields[n], readerFields[n]
		switch {
		case rf == nil:
			c.compareRemovedField(wf, rm)
		case wf == nil:
			if rf.Cardinality() == protoreflect.Required {
				c.report("field '%s' (number %d): required in the reader but missing from the writer", rf.FullName(), n)
			}
		default:
			c.compareFieldTypes(wf, rf)
		}
	}

	c.compareScope(wm.Messages(), rm.Messages())
}

func fieldsByNumber(md protoreflect.MessageDescriptor) map[protoreflect.FieldNumber]protoreflect.FieldDescriptor {
	fields := make(map[protoreflect.FieldNumber]protoreflect.FieldDescriptor, md.Fields().Len())
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		fields[fd.Number()] = fd
	}
	return fields
}

// realOneof is the oneof a field was declared in; nil for a field of its
// own, including a proto3 optional field (whose oneof is synthetic).
func realOneof(fd protoreflect.FieldDescriptor) protoreflect.OneofDescriptor {
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		return od
	}
	return nil
}

// compareRemovedField judges a writer field the reader lacks. Dropping a
// field is compatible (the reader skips it as unknown) unless the writer
// required it, or it was one member of a oneof that otherwise survives in
// the reader: then what the writer chose is lost while the oneof looks
// unset. Deleting a whole oneof with all its members is compatible.
func (c *compatChecker) compareRemovedField(wf protoreflect.FieldDescriptor, rm protoreflect.MessageDescriptor) {
	if od := realOneof(wf); od != nil {
		if oneofSurvives(od, rm) {
			c.report("field '%s' (number %d) of oneof '%s': missing from the reader", wf.FullName(), wf.Number(), od.Name())
		}
		return
	}
	if wf.Cardinality() == protoreflect.Required {
		c.report("field '%s' (number %d): required in the writer but missing from the reader", wf.FullName(), wf.Number())
	}
}

// oneofSurvives tells whether the reader still has the writer's oneof od
// by name, or any of its members by number.
func oneofSurvives(od protoreflect.OneofDescriptor, rm protoreflect.MessageDescriptor) bool {
	if rm.Oneofs().ByName(od.Name()) != nil {
		return true
	}
	for i := range od.Fields().Len() {
		if rm.Fields().ByNumber(od.Fields().Get(i).Number()) != nil {
			return true
		}
	}
	return false
}

// compareOneofMembership finds reader oneofs that join fields the writer
// could set together: fields of their own in the writer (Confluent's
// MULTIPLE_FIELDS_MOVED_TO_ONEOF), or fields from a writer oneof and from
// elsewhere (FIELD_MOVED_TO_EXISTING_ONEOF). Data with two of them set
// cannot be read faithfully. Fields new in the reader do not count.
func (c *compatChecker) compareOneofMembership(rm protoreflect.MessageDescriptor, writerFields map[protoreflect.FieldNumber]protoreflect.FieldDescriptor) {
	for i := range rm.Oneofs().Len() {
		od := rm.Oneofs().Get(i)
		if od.IsSynthetic() {
			continue
		}
		// origin → the reader oneof's fields that came from it, where
		// origin is a writer oneof's name or "" for fields of their own.
		type origin struct {
			oneof  protoreflect.Name
			number protoreflect.FieldNumber // for fields of their own
		}
		fromOrigin := make(map[origin][]string)
		var origins []origin
		for j := range od.Fields().Len() {
			rf := od.Fields().Get(j)
			wf := writerFields[rf.Number()]
			if wf == nil {
				continue
			}
			var o origin
			if wod := realOneof(wf); wod != nil {
				o = origin{oneof: wod.Name()}
			} else {
				o = origin{number: wf.Number()}
			}
			if _, seen := fromOrigin[o]; !seen {
				origins = append(origins, o)
			}
			fromOrigin[o] = append(fromOrigin[o], fmt.Sprintf("'%s' (number %d)", rf.Name(), rf.Number()))
		}
		if len(origins) < 2 {
			continue
		}
		slices.SortFunc(origins, func(a, b origin) int {
			return cmp.Or(cmp.Compare(a.oneof, b.oneof), cmp.Compare(a.number, b.number))
		})
		var parts []string
		for _, o := range origins {
			if o.oneof == "" {
				parts = append(parts, fromOrigin[o][0]+" was a field of its own")
			} else {
				parts = append(parts, strings.Join(fromOrigin[o], ", ")+" of writer oneof '"+string(o.oneof)+"'")
			}
		}
		c.report("oneof '%s' joins fields the writer could set together: %s", od.FullName(), strings.Join(parts, "; "))
	}
}

// typeKind is how Confluent groups field types: a kind change is always
// incompatible.
type typeKind int

const (
	scalarKind typeKind = iota // scalars and enums
	messageKind
	mapKind
)

func kindOf(fd protoreflect.FieldDescriptor) typeKind {
	switch {
	case fd.IsMap():
		return mapKind
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		return messageKind
	}
	return scalarKind
}

// wireGroup is the group of scalar types that read each other's values
// on the wire. An enum is a varint like int32.
func wireGroup(kind protoreflect.Kind) string {
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.BoolKind, protoreflect.EnumKind:
		return "varint"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "zigzag"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "length-delimited"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "fixed32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "fixed64"
	}
	return kind.String() // float, double: each its own
}

// compareFieldTypes compares the fields both sides declare with one
// number. A renamed field is compatible.
func (c *compatChecker) compareFieldTypes(wf, rf protoreflect.FieldDescriptor) {
	where := fmt.Sprintf("field '%s' (number %d)", rf.FullName(), rf.Number())
	if kindOf(wf) != kindOf(rf) {
		c.report("%s: type changed from %s to %s", where, typeText(wf), typeText(rf))
		return
	}
	switch kindOf(wf) {
	case scalarKind:
		if wireGroup(wf.Kind()) != wireGroup(rf.Kind()) {
			c.report("%s: type changed from %s to %s", where, typeText(wf), typeText(rf))
			return
		}
		// A number is packed when repeated (by default in proto3), so
		// its label cannot change; a string or bytes can become
		// repeated or singular (a singular reader keeps the last).
		// Like Confluent, the label compared is the one written, so that
		// adding proto3 "optional" to a number counts as a change.
		wl, rl := compatLabel(wf), compatLabel(rf)
		if wl != rl && wireGroup(wf.Kind()) != "length-delimited" {
			c.report("%s: label changed from %s to %s, which a numeric field cannot", where, wl, rl)
		}
	case messageKind:
		c.compareNamedTypes(where, wf.Message(), rf.Message())
	case mapKind:
		c.compareMapPart(where, "key", wf.MapKey(), rf.MapKey())
		c.compareMapPart(where, "value", wf.MapValue(), rf.MapValue())
	}
}

// compareMapPart compares a map's key or value types, whose label is
// implied.
func (c *compatChecker) compareMapPart(where, part string, wf, rf protoreflect.FieldDescriptor) {
	switch {
	case kindOf(wf) != kindOf(rf),
		kindOf(wf) == scalarKind && wireGroup(wf.Kind()) != wireGroup(rf.Kind()):
		c.report("%s: map %s type changed from %s to %s", where, part, typeText(wf), typeText(rf))
	case kindOf(wf) == messageKind:
		c.compareNamedTypes(where, wf.Message(), rf.Message())
	}
}

// compareNamedTypes compares the message types of one field. The types
// must have the same name within their packages (a type may move to
// another package); then the messages themselves are compared, and their
// incompatibilities are reported where they are.
func (c *compatChecker) compareNamedTypes(where string, wm, rm protoreflect.MessageDescriptor) {
	if localName(wm) != localName(rm) {
		c.report("%s: type changed from message %s to message %s", where, wm.FullName(), rm.FullName())
		return
	}
	c.compareMessages(wm, rm)
}

// localName is a type's full name without its file's package.
func localName(d protoreflect.Descriptor) string {
	name := string(d.FullName())
	if pkg := string(d.ParentFile().Package()); pkg != "" {
		name = strings.TrimPrefix(name, pkg+".")
	}
	return name
}

// compatLabel is the label a field was declared with, as Confluent
// compares it.
func compatLabel(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case fd.Cardinality() == protoreflect.Required:
		return "required"
	case fd.HasOptionalKeyword():
		return "optional"
	}
	return "no label"
}

// typeText names a field's type in a message: "int32", "enum pkg.E",
// "message pkg.M", "map<string, int32>".
func typeText(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return fmt.Sprintf("map<%s, %s>", typeText(fd.MapKey()), typeText(fd.MapValue()))
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		return "message " + string(fd.Message().FullName())
	case fd.Kind() == protoreflect.EnumKind:
		return "enum " + string(fd.Enum().FullName())
	}
	return fd.Kind().String()
}
