package registry

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-streaming/strata/registry/schema"
)

// view is what a registry knows: the records of the log applied in
// offset order. It is pure — apply and the queries do no I/O — and the
// Registry guards it with its mutex. Every node that applied the same
// records has the same view.
type view struct {
	subjects  map[string]*subjectState
	schemas   map[int]*storedSchema // by id
	byContent map[string]int        // contentKey → the first id it got
	maxID     int                   // the largest id ever applied
	config    string                // global compatibility level; "" = the registry's default
	mode      string                // global mode; "" = READWRITE
}

type subjectState struct {
	versions map[int]*versionState
	config   string // "" = none set for the subject
	mode     string
	// keys holds, per version, every key written for it (each sequenced
	// write has its own): a permanent delete tombstones them all, so
	// compaction can drop every one of them.
	keys map[int]map[string]bool
}

type versionState struct {
	id      int
	deleted bool // soft-deleted
}

// storedSchema is a schema by id: ids are shared by every subject and
// version that registered the same schema (text, type and references).
type storedSchema struct {
	typ        schema.Type
	text       string
	references []schema.Reference
	content    string
	uses       int // versions that name this id; at 0 the id is gone
}

// subjectVersion names one version of one subject.
type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func newView() *view {
	return &view{subjects: map[string]*subjectState{}, schemas: map[int]*storedSchema{}, byContent: map[string]int{}}
}

// contentKey identifies a schema for id reuse: same type, same stored
// text, same references.
func contentKey(typ schema.Type, text string, refs []schema.Reference) string {
	if len(refs) == 0 {
		return string(typ) + "\x00" + text // "references":[] is none
	}
	r, _ := json.Marshal(refs) // plain structs always encode
	return string(typ) + "\x00" + text + "\x00" + string(r)
}

func (v *view) subject(name string) *subjectState {
	s := v.subjects[name]
	if s == nil {
		s = &subjectState{versions: map[int]*versionState{}, keys: map[int]map[string]bool{}}
		v.subjects[name] = s
	}
	return s
}

// apply applies the record at offset. An error means the record was
// skipped as unreadable (ErrBadRecord); the view is unchanged by it.
//
// A SCHEMA or DELETE_SUBJECT record whose key carries seq counts only if
// seq is its own offset: of writers racing from the same end offset,
// exactly the one whose record landed there wins, on every node.
func (v *view) apply(offset int64, key, value []byte) error {
	k, err := decodeKey(key)
	if err != nil {
		return err
	}
	switch k.KeyType {
	case keySchema:
		return v.applySchema(offset, k, string(key), value)
	case keyDeleteSubject:
		if value == nil || !countsAt(k, offset) {
			return nil
		}
		var d deleteSubjectValue
		if err := json.Unmarshal(value, &d); err != nil {
			return fmt.Errorf("%w: DELETE_SUBJECT value %q: %v", ErrBadRecord, value, err)
		}
		if s := v.subjects[*k.Subject]; s != nil {
			for version, st := range s.versions {
				if version <= d.Version {
					st.deleted = true
				}
			}
		}
	case keyConfig, keyMode:
		return v.applySetting(k, value)
	}
	return nil
}

// applySetting applies a CONFIG or MODE record to its subject, or to the
// global setting when the key's subject is null; a tombstone clears it.
func (v *view) applySetting(k recordKey, value []byte) error {
	setting := ""
	if value != nil {
		var val struct {
			CompatibilityLevel string `json:"compatibilityLevel"`
			Mode               string `json:"mode"`
		}
		if err := json.Unmarshal(value, &val); err != nil {
			return fmt.Errorf("%w: %s value %q: %v", ErrBadRecord, k.KeyType, value, err)
		}
		// A config without a level (Confluent's may set only other
		// fields) sets none; a mode must be one.
		setting = strings.ToUpper(val.CompatibilityLevel)
		valid := setting == "" || validLevel(setting)
		if k.KeyType == keyMode {
			setting = strings.ToUpper(val.Mode)
			valid = validMode(setting)
		}
		if !valid {
			return fmt.Errorf("%w: %s value %q: unknown setting", ErrBadRecord, k.KeyType, value)
		}
	}
	switch {
	case k.KeyType == keyConfig && k.Subject == nil:
		v.config = setting
	case k.KeyType == keyConfig:
		v.subject(*k.Subject).config = setting
	case k.Subject == nil:
		v.mode = setting
	default:
		v.subject(*k.Subject).mode = setting
	}
	return nil
}

// countsAt reports whether a record at offset with key k takes effect:
// always without seq (another registry wrote it), else when it landed
// where its writer expected.
func countsAt(k recordKey, offset int64) bool { return k.Seq == nil || *k.Seq == offset }

func (v *view) applySchema(offset int64, k recordKey, rawKey string, value []byte) error {
	s := v.subject(*k.Subject)
	if s.keys[k.Version] == nil {
		s.keys[k.Version] = map[string]bool{}
	}
	s.keys[k.Version][rawKey] = true
	if value == nil {
		// A tombstone of any key of the version deletes it for good.
		if old := s.versions[k.Version]; old != nil {
			delete(s.versions, k.Version)
			v.release(old.id)
		}
		delete(s.keys[k.Version], rawKey)
		return nil
	}
	if !countsAt(k, offset) {
		return nil
	}
	var val schemaValue
	if err := json.Unmarshal(value, &val); err != nil {
		return fmt.Errorf("%w: SCHEMA value at offset %d: %v", ErrBadRecord, offset, err)
	}
	if val.Subject != *k.Subject || val.Version != k.Version || val.ID < 1 {
		return fmt.Errorf("%w: SCHEMA value at offset %d names subject %q version %d id %d under key %s", ErrBadRecord, offset, val.Subject, val.Version, val.ID, rawKey)
	}
	if val.SchemaType == "" {
		val.SchemaType = schema.Avro
	}
	content := contentKey(val.SchemaType, val.Schema, val.References)
	stored := v.schemas[val.ID]
	if stored != nil && stored.content != content {
		return fmt.Errorf("%w: SCHEMA value at offset %d gives id %d to another schema than it has", ErrBadRecord, offset, val.ID)
	}
	if stored == nil {
		stored = &storedSchema{typ: val.SchemaType, text: val.Schema, references: val.References, content: content}
		v.schemas[val.ID] = stored
		if _, taken := v.byContent[content]; !taken {
			v.byContent[content] = val.ID
		}
	}
	old := s.versions[k.Version]
	if old == nil || old.id != val.ID {
		stored.uses++
		if old != nil {
			v.release(old.id)
		}
	}
	s.versions[k.Version] = &versionState{id: val.ID, deleted: val.Deleted}
	v.maxID = max(v.maxID, val.ID)
	return nil
}

// release drops one use of id; an id no version names is gone.
func (v *view) release(id int) {
	stored := v.schemas[id]
	if stored == nil {
		return
	}
	if stored.uses--; stored.uses <= 0 {
		delete(v.schemas, id)
		if v.byContent[stored.content] == id {
			delete(v.byContent, stored.content)
		}
	}
}

// subjectNames lists, sorted, the subjects with a version (a soft-deleted
// one counts when deleted) whose names start with prefix.
func (v *view) subjectNames(deleted bool, prefix string) []string {
	names := []string{}
	for name := range v.subjects {
		if strings.HasPrefix(name, prefix) && len(v.versions(name, deleted)) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// versions lists a subject's versions in order, soft-deleted ones too
// when deleted.
func (v *view) versions(subject string, deleted bool) []int {
	s := v.subjects[subject]
	if s == nil {
		return nil
	}
	var out []int
	for version, st := range s.versions {
		if deleted || !st.deleted {
			out = append(out, version)
		}
	}
	sort.Ints(out)
	return out
}

// version returns one version, nil if it does not exist (or is
// soft-deleted and !deleted).
func (v *view) version(subject string, version int, deleted bool) *versionState {
	s := v.subjects[subject]
	if s == nil {
		return nil
	}
	st := s.versions[version]
	if st == nil || (st.deleted && !deleted) {
		return nil
	}
	return st
}

// latest is the highest version (soft-deleted ones too when deleted), 0
// if there is none.
func (v *view) latest(subject string, deleted bool) int {
	vs := v.versions(subject, deleted)
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}

// level is the compatibility level that applies to subject: its own,
// else the global one, else def.
func (v *view) level(subject, def string) string {
	if s := v.subjects[subject]; s != nil && s.config != "" {
		return s.config
	}
	if v.config != "" {
		return v.config
	}
	return def
}

// effectiveMode is the mode that applies to subject ("" for the global).
func (v *view) effectiveMode(subject string) string {
	if s := v.subjects[subject]; subject != "" && s != nil && s.mode != "" {
		return s.mode
	}
	if v.mode != "" {
		return v.mode
	}
	return modeReadWrite
}

// usages lists the subject versions that use id, sorted.
func (v *view) usages(id int, deleted bool) []subjectVersion {
	out := []subjectVersion{}
	for name, s := range v.subjects {
		for version, st := range s.versions {
			if st.id == id && (deleted || !st.deleted) {
				out = append(out, subjectVersion{name, version})
			}
		}
	}
	sortSubjectVersions(out)
	return out
}

func sortSubjectVersions(svs []subjectVersion) {
	sort.Slice(svs, func(i, j int) bool {
		if svs[i].Subject != svs[j].Subject {
			return svs[i].Subject < svs[j].Subject
		}
		return svs[i].Version < svs[j].Version
	})
}

// referrers lists the versions whose schemas reference subject/version
// (soft-deleted ones too when deleted), sorted.
func (v *view) referrers(subject string, version int, deleted bool) []subjectVersion {
	var out []subjectVersion
	for name, s := range v.subjects {
		for ver, st := range s.versions {
			if st.deleted && !deleted {
				continue
			}
			for _, ref := range v.schemas[st.id].references {
				if ref.Subject == subject && ref.Version == version {
					out = append(out, subjectVersion{name, ver})
					break
				}
			}
		}
	}
	sortSubjectVersions(out)
	return out
}

// maxReferenceDepth bounds how deep references may nest.
const maxReferenceDepth = 32

// resolve finds the schemas refs name, and theirs in turn. A missing
// subject or version, a cycle, or a tree too deep is an invalid schema.
func (v *view) resolve(refs []schema.Reference) ([]schema.Resolved, error) {
	return v.resolveFrom(refs, map[subjectVersion]bool{}, 0)
}

func (v *view) resolveFrom(refs []schema.Reference, path map[subjectVersion]bool, depth int) ([]schema.Resolved, error) {
	if depth > maxReferenceDepth {
		return nil, fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
	}
	out := make([]schema.Resolved, 0, len(refs))
	for _, ref := range refs {
		at := subjectVersion{ref.Subject, ref.Version}
		if ref.Name == "" {
			return nil, fmt.Errorf("reference to subject '%s' version %d has no name", ref.Subject, ref.Version)
		}
		if path[at] {
			return nil, fmt.Errorf("reference %q to subject '%s' version %d is circular", ref.Name, ref.Subject, ref.Version)
		}
		st := v.version(ref.Subject, ref.Version, true)
		if st == nil {
			return nil, fmt.Errorf("reference %q: subject '%s' version %d not found", ref.Name, ref.Subject, ref.Version)
		}
		stored := v.schemas[st.id]
		path[at] = true
		nested, err := v.resolveFrom(stored.references, path, depth+1)
		delete(path, at)
		if err != nil {
			return nil, err
		}
		out = append(out, schema.Resolved{Name: ref.Name, Schema: stored.text, References: nested})
	}
	return out, nil
}
