// Package protobuf is the Protobuf format of the schema registry
// (schemaType PROTOBUF): it parses .proto schemas with the schemas they
// import, gives their canonical and normalized texts, judges whether one
// schema can read what another wrote by Confluent's rules, and maps the
// message indexes of Confluent's wire format to messages.
//
// # Parsing
//
// A schema is the text of one .proto file, proto2, proto3 or edition
// 2023 (no syntax statement means proto2). It is compiled by
// github.com/bufbuild/protocompile under the path "schema.proto" (or
// "schema_N.proto" if a reference took that name), which error messages
// use: "protobuf: invalid schema: schema.proto:3:13: ...". Every error
// wraps ErrInvalidSchema; those of the compiler name file, line and
// column as it reports them.
//
// Imports resolve, in this order, to:
//
//  1. the references (schema.Resolved), by Name, which is the path as the
//     import statement writes it; a reference's own References resolve
//     the same way, the whole tree forming one namespace (one path with
//     two different texts is an error);
//  2. confluent/meta.proto (the (confluent.file_meta), message_meta,
//     field_meta, enum_meta and enum_value_meta options, number 1088,
//     whose Meta has doc, params and tags) and
//     confluent/type/decimal.proto (confluent.type.Decimal), and Google's
//     google/type/date.proto and google/type/timeofday.proto (which
//     Confluent's ProtobufConverter imports for Date and Time), texts this
//     package carries;
//  3. the google/protobuf/*.proto files protoc ships (any, api,
//     descriptor, duration, empty, field_mask, source_context, struct,
//     timestamp, type, wrappers, compiler/plugin), as compiled into the Go
//     protobuf runtime.
//
// An import found nowhere fails with `import "x.proto": no schema
// reference has that name`. References nothing imports are not compiled.
//
// # Canonical and normalized text
//
// Both texts are printed from the compiled descriptor by one printer, so
// comments and layout go and both compile again. They differ in what they
// sort.
//
// Canonical keeps the schema in declaration order, as Confluent's
// canonicalString does by re-printing the schema from its parse: two
// registrations that differ only in whitespace or comments give the same
// Canonical, two that declare the same fields in another order do not.
// Imports, fields (each oneof as a block where its first field falls, its
// fields as declared), extension fields, extension and reserved ranges
// and reserved names print in declaration order: one extend block per run
// of extensions of the same message, one extensions statement per run of
// ranges with the same options. What the descriptor does not keep prints
// as in Normalized: the kinds inside a message in a fixed order (fields,
// nested messages, enums, extensions, ranges), options by field number,
// type names fully qualified, numbers in decimal, json_name only when it
// differs from the derived one. Confluent's text, printed from its parse
// tree rather than a descriptor, keeps the order of options and type
// names as written and has a layout of its own, so the two canonical
// texts of a schema are not the same bytes. The canonical text parses to
// itself (Parse(c).Canonical() == c), to the same normalized text and to
// the same message indexes (FuzzParse checks all three).
//
// Normalized sorts besides what two equivalent schemas may declare in
// different orders, so that texts that differ only in what a descriptor
// does not keep, or in such orders, print the same:
//
//   - whitespace and comments go;
//   - syntax (or edition), package, imports sorted by path (public and
//     weak kept), file options;
//   - messages, enums, services and extensions in declaration order (the
//     order of messages gives the message indexes, see below);
//   - in a message: options, then fields by number with each oneof as a
//     block where its lowest-numbered field falls, then nested messages,
//     enums and extensions in declaration order, then extension ranges,
//     reserved ranges and reserved names, each sorted;
//   - extension fields grouped by the message they extend (in order of
//     first declaration), each group by number;
//   - enum values stay in declaration order: the first is the default of
//     a proto2 field that declares none, and proto3 requires it to be 0;
//   - message and enum types as fully qualified names with a leading dot
//     (".pkg.Msg"), however the source qualified them;
//   - labels as written (proto3 "optional" kept), map fields as
//     map<K, V>, proto2 groups with their body;
//   - options by field number: default and json_name first (json_name only
//     when it differs from the name protoc derives), then the options of
//     the options message, custom options as "(.pkg.ext)"; a message value
//     prints as "{ name: value ... }" with its fields by number, map
//     entries by key, repeated values one entry each in order.
//
// The normalized text compiles to the same schema and normalizes to
// itself (FuzzParse checks both).
//
// # Compatibility
//
// Compatible(reader, writer) lists what keeps reader from reading data
// written with writer, one message each, naming the reader's field
// ("field 'pkg.Person.age' (number 3): type changed from int32 to
// string"; "from" is the writer's, "to" the reader's). The rules are
// those of Confluent's schema registry (its protobuf diff package); the
// registry asks both ways, swapping the arguments, for FULL levels.
//
//	change, writer to reader                        Confluent's name                     verdict
//	----------------------------------------------  -----------------------------------  ------------
//	package changed                                 PACKAGE_CHANGED                      incompatible
//	message removed (top-level or nested)           MESSAGE_REMOVED                      incompatible
//	message added, messages reordered               MESSAGE_ADDED, MESSAGE_MOVED         compatible
//	enum added or removed                           ENUM_ADDED, ENUM_REMOVED             compatible
//	enum constant added, removed or renamed         ENUM_CONST_*                         compatible
//	field added or removed                          FIELD_ADDED, FIELD_REMOVED           compatible
//	field renamed                                   FIELD_NAME_CHANGED                   compatible
//	required field added or removed (proto2)        REQUIRED_FIELD_ADDED, _REMOVED       incompatible
//	scalar (or enum), message and map swapped       FIELD_KIND_CHANGED                   incompatible
//	scalar to a scalar of another wire group        FIELD_SCALAR_KIND_CHANGED            incompatible
//	message type to one of another local name       FIELD_NAMED_TYPE_CHANGED             incompatible
//	label of a number or enum changed               FIELD_NUMERIC_LABEL_CHANGED          incompatible
//	label of a string or bytes changed              FIELD_STRING_OR_BYTES_LABEL_CHANGED  compatible
//	oneof added, removed or renamed                 ONEOF_ADDED, ONEOF_REMOVED           compatible
//	field added to a oneof                          ONEOF_FIELD_ADDED                    compatible
//	field moved out of a oneof                      ONEOF_FIELD_MOVED_TO_TOP_LEVEL       compatible
//	oneof member removed, the oneof kept            ONEOF_FIELD_REMOVED                  incompatible
//	two fields of their own moved into one oneof    MULTIPLE_FIELDS_MOVED_TO_ONEOF       incompatible
//	fields of different origins joined in a oneof   FIELD_MOVED_TO_EXISTING_ONEOF        incompatible
//
// The wire groups, within which a scalar may change type: int32, int64,
// uint32, uint64, bool and enums (varint); sint32, sint64 (zigzag);
// fixed32, sfixed32; fixed64, sfixed64; string, bytes; float alone;
// double alone. A map compares its key and value types by the same
// rules. Messages pair by number for fields and by name for messages
// (top-level ones, and nested ones within their parent); a message-typed
// field compares its two types by their names within their packages, so
// a type may move to another package, then compares the two messages
// themselves, reporting what breaks where it is. Each pair of messages is
// compared once, so recursive types end. Map entries and group bodies
// are not messages of their own here (as in Confluent's model).
//
// A label is compared as written, as Confluent does: "no label",
// "optional", "required" or "repeated". Adding proto3 "optional" to a
// number, which the wire does not see, is therefore incompatible, and so
// is moving a proto2 number out of a oneof.
//
// Not checked, as in Confluent: a change of syntax, extensions and
// extension ranges, services, options, defaults and json_name. Unlike
// Confluent, types that both schemas take from the same subject and
// version are compared anyway (a Resolved carries no subject or version);
// equal types compare without a finding.
//
// # Message indexes
//
// Confluent's serializers put, between the schema ID and the Protobuf
// payload, the path of the message in the schema's file: its index among
// the file's top-level messages, then among the nested messages of each
// enclosing message. Only messages count, in declaration order: not
// enums, not map entries, not group bodies. (Go clients that take the
// index from protoreflect count map entries too; the registry follows the
// Java serializers and Confluent's registry.)
//
//	+------+-------------------+-----------------------------------+------------------+
//	| 0x00 | schema ID         | message indexes                   | Protobuf message |
//	| magic| 4 bytes, big end. | count, then count indexes         | (payload)        |
//	+------+-------------------+-----------------------------------+------------------+
//	                            each a zigzag varint of 32 bits (1 to 5 bytes)
//
//	path      bytes
//	[0]       00            the first message: count 0 stands for [0]
//	[1]       02 02         count 1, index 1
//	[1, 0]    04 02 00      count 2, indexes 1 and 0
//	[0, 64]   04 00 80 01
//
// AppendMessageIndexes writes the indexes part; ReadMessageIndexes reads
// it, rejecting a truncated prefix, a varint over 32 bits, a negative
// count or index, or a count above MaxMessageIndexes, with
// ErrMessageIndexes. MessageIndexes and MessageByIndexes convert between
// a message's full name and its path in a parsed schema.
package protobuf
