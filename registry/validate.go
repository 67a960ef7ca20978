package registry

// Record checks for the broker's schema validation (topic configs
// confluent.value.schema.validation / confluent.key.schema.validation):
// CheckRecord and RecordName answer from the in-memory view, with no
// network I/O, so a broker can call them for every produced record. The
// broker names the interface they satisfy (broker.SchemaValidator); this
// package does not import it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	hamba "github.com/hamba/avro/v2"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/wire"
)

// The kinds of refusal CheckRecord and RecordName return; each error is a
// *RecordError that matches one of these with errors.Is.
var (
	// ErrNotFramed: the bytes do not start with Confluent's magic byte
	// and a 4-byte schema id.
	ErrNotFramed = errors.New("registry: not in Confluent's wire format")
	// ErrUnknownSchemaID: no live version of any subject has the id.
	ErrUnknownSchemaID = errors.New("registry: unknown schema id")
	// ErrWrongSubject: the id is registered, but not as a live version of
	// the subject asked for.
	ErrWrongSubject = errors.New("registry: schema id not registered under the subject")
	// ErrUndecodable: the payload does not decode with the id's schema.
	ErrUndecodable = errors.New("registry: payload does not decode with its schema")
	// ErrNoRecordName: the schema has no name for RecordNameStrategy (a
	// JSON Schema without "title").
	ErrNoRecordName = errors.New("registry: schema has no record name")
)

// RecordError is a refused record: Message says why in words meant for
// the producer (a broker returns it as the record's error message), Kind
// is one of the Err* sentinels above.
type RecordError struct {
	Kind    error
	Message string
}

func (e *RecordError) Error() string { return e.Message }
func (e *RecordError) Unwrap() error { return e.Kind }

func recordErrorf(kind error, format string, args ...any) error {
	return &RecordError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// CheckRecord checks a record's key or value, data, as a Confluent
// serializer frames it (registry/wire): its schema id must be a live (not
// soft-deleted) version of subject. With decode, the payload must also
// decode with that schema: Avro binary (nothing left over), JSON that the
// JSON Schema accepts, or Protobuf message indexes naming a message of the
// schema followed by that message. It does no I/O; parsed schemas are
// cached by id.
func (r *Registry) CheckRecord(subject string, data []byte, decode bool) error {
	id, payload, err := wire.ParseHeader(data)
	if err != nil {
		return notFramed(data)
	}
	var content string
	r.mu.Lock()
	err = r.mu.view.checkSubjectID(subject, int(id))
	if err == nil {
		content = r.mu.view.schemas[int(id)].content
	}
	r.mu.Unlock()
	if err != nil || !decode {
		return err
	}
	cs, err := r.checkedSchema(int(id), content)
	if err != nil {
		return err
	}
	if err := cs.decode(payload); err != nil {
		return recordErrorf(ErrUndecodable, "the payload does not decode with schema id %d (%s): %v", id, cs.typ, err)
	}
	return nil
}

// RecordName is the name Confluent's RecordNameStrategy and
// TopicRecordNameStrategy put in a subject, of the schema a framed key or
// value names by id: an Avro named type's full name (a primitive's type
// name), a Protobuf message's full name (the one its message indexes
// pick), a JSON Schema's "title". No I/O.
func (r *Registry) RecordName(data []byte) (string, error) {
	id, payload, err := wire.ParseHeader(data)
	if err != nil {
		return "", notFramed(data)
	}
	cs, err := r.checkedSchema(int(id), "")
	if err != nil {
		return "", err
	}
	if cs.typ == schema.Protobuf {
		md, err := protobufMessage(cs.parsed, payload)
		if err != nil {
			return "", recordErrorf(ErrUndecodable, "the payload of schema id %d: %v", id, err)
		}
		return string(md.FullName()), nil
	}
	if cs.name == "" {
		return "", recordErrorf(ErrNoRecordName, "schema id %d (%s) has no record name for RecordNameStrategy (a JSON Schema needs a \"title\")", id, cs.typ)
	}
	return cs.name, nil
}

// notFramed says why data, which wire.ParseHeader refused, is not framed.
func notFramed(data []byte) error {
	if len(data) < wire.HeaderSize {
		return recordErrorf(ErrNotFramed, "not in Confluent's wire format: %d bytes, shorter than the magic byte and 4-byte schema id", len(data))
	}
	return recordErrorf(ErrNotFramed, "not in Confluent's wire format: the first byte is 0x%02x, not the magic byte 0", data[0])
}

// checkSubjectID says why id is not a live version of subject, nil if it
// is.
func (v *view) checkSubjectID(subject string, id int) error {
	softDeleted := false
	if s := v.subjects[subject]; s != nil {
		for _, st := range s.versions {
			if st.id == id {
				if !st.deleted {
					return nil
				}
				softDeleted = true
			}
		}
	}
	if v.schemas[id] == nil {
		return recordErrorf(ErrUnknownSchemaID, "schema id %d is not registered in the schema registry", id)
	}
	if softDeleted {
		return recordErrorf(ErrWrongSubject, "schema id %d of subject '%s' is deleted", id, subject)
	}
	var others []string
	for _, sv := range v.usages(id, false) {
		if len(others) == 3 {
			others = append(others, "…")
			break
		}
		others = append(others, fmt.Sprintf("'%s'", sv.Subject))
	}
	if len(others) == 0 {
		return recordErrorf(ErrWrongSubject, "schema id %d is not registered under subject '%s' (its versions are all deleted)", id, subject)
	}
	return recordErrorf(ErrWrongSubject, "schema id %d is not registered under subject '%s' (it is under %s)", id, subject, strings.Join(others, ", "))
}

// maxCheckedSchemas bounds the parsed-schema cache; past it an arbitrary
// entry makes room.
const maxCheckedSchemas = 1024

// checkedSchema is one schema parsed for CheckRecord and RecordName.
type checkedSchema struct {
	content string // the view's contentKey when it was parsed
	typ     schema.Type
	parsed  schema.Parsed
	avro    hamba.Schema // Avro only
	name    string       // the record name (Avro, JSON Schema); "" if none
}

// schemaCache holds parsed schemas by id, beside the view and under a
// lock of its own: parsing happens with neither lock held.
type schemaCache struct {
	mu   sync.Mutex
	byID map[int]*checkedSchema
}

// checkedSchema returns the parsed schema id names, parsing it (with no
// lock held) when the cache has none or an outdated one. content is the
// view's contentKey of id when the caller read it, "" to read it here.
func (r *Registry) checkedSchema(id int, content string) (*checkedSchema, error) {
	if content == "" {
		r.mu.Lock()
		if stored := r.mu.view.schemas[id]; stored != nil {
			content = stored.content
		}
		r.mu.Unlock()
		if content == "" {
			return nil, recordErrorf(ErrUnknownSchemaID, "schema id %d is not registered in the schema registry", id)
		}
	}
	r.schemaCache.mu.Lock()
	cs := r.schemaCache.byID[id]
	r.schemaCache.mu.Unlock()
	if cs != nil && cs.content == content {
		return cs, nil
	}
	var (
		resolved []schema.Resolved
		err      error
	)
	r.mu.Lock()
	stored := r.mu.view.schemas[id]
	if stored != nil {
		content = stored.content
		resolved, err = r.mu.view.resolve(stored.references)
	}
	r.mu.Unlock()
	if stored == nil {
		return nil, recordErrorf(ErrUnknownSchemaID, "schema id %d is not registered in the schema registry", id)
	}
	// stored is immutable once applied: its fields are safe to read here.
	if err == nil {
		cs, err = r.parseChecked(stored.typ, stored.text, resolved)
	}
	if err != nil {
		return nil, recordErrorf(ErrUndecodable, "schema id %d does not parse: %v", id, err)
	}
	cs.content = content
	r.schemaCache.mu.Lock()
	if r.schemaCache.byID == nil {
		r.schemaCache.byID = map[int]*checkedSchema{}
	}
	if len(r.schemaCache.byID) >= maxCheckedSchemas {
		for old := range r.schemaCache.byID {
			delete(r.schemaCache.byID, old)
			break
		}
	}
	r.schemaCache.byID[id] = cs
	r.schemaCache.mu.Unlock()
	return cs, nil
}

func (r *Registry) parseChecked(typ schema.Type, text string, refs []schema.Resolved) (*checkedSchema, error) {
	format := r.formats[typ]
	if format == nil {
		return nil, fmt.Errorf("this registry has no %s format", typ)
	}
	parsed, err := format.Parse(text, refs)
	if err != nil {
		return nil, err
	}
	cs := &checkedSchema{typ: typ, parsed: parsed}
	switch typ {
	case schema.Avro:
		cs.avro = avro.Schema(parsed)
		if named, ok := cs.avro.(hamba.NamedSchema); ok {
			cs.name = named.FullName()
		} else if cs.avro != nil {
			cs.name = string(cs.avro.Type())
		}
	case schema.JSON:
		var doc struct {
			Title string `json:"title"`
		}
		if json.Unmarshal([]byte(text), &doc) == nil {
			cs.name = doc.Title
		}
	}
	return cs, nil
}

// avroAPI decodes payloads for CheckRecord: a bytes or string field, or
// an array or map block, may claim at most what a record could hold.
var avroAPI = hamba.Config{MaxByteSliceSize: 64 << 20, MaxSliceAllocSize: 16 << 20}.Freeze()

var avroReaders = sync.Pool{New: func() any { return hamba.NewReader(nil, 0, hamba.WithReaderConfig(avroAPI)) }}

// decode checks that payload decodes with the schema, entirely.
func (cs *checkedSchema) decode(payload []byte) error {
	switch cs.typ {
	case schema.Avro:
		if cs.avro == nil {
			return errors.New("not an Avro schema")
		}
		reader := avroReaders.Get().(*hamba.Reader)
		defer avroReaders.Put(reader)
		reader.Error = nil
		reader.Reset(payload)
		reader.ReadNext(cs.avro)
		if reader.Error != nil {
			return reader.Error
		}
		reader.Peek() // at the end: io.EOF
		if !errors.Is(reader.Error, io.EOF) {
			return errors.New("bytes left after the Avro value")
		}
		reader.Reset(nil)
		return nil
	case schema.JSON:
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("more than one JSON value")
		}
		return jsonschema.Validate(cs.parsed, doc)
	case schema.Protobuf:
		md, err := protobufMessage(cs.parsed, payload)
		if err != nil {
			return err
		}
		_, n, _ := protobuf.ReadMessageIndexes(payload)
		_, err = protobuf.UnmarshalDynamic(md, payload[n:])
		return err
	}
	return fmt.Errorf("no decoder for %s", cs.typ)
}

// protobufMessage is the message a Protobuf payload's message indexes name.
func protobufMessage(p schema.Parsed, payload []byte) (protoreflect.MessageDescriptor, error) {
	indexes, _, err := protobuf.ReadMessageIndexes(payload)
	if err != nil {
		return nil, err
	}
	return protobuf.MessageByIndexes(p, indexes)
}
