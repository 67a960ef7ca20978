package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-streaming/strata/registry/schema"
)

// candidate is a schema from a request, parsed with its references.
type candidate struct {
	typ        schema.Type
	parsed     schema.Parsed
	text       string // what would be stored: canonical, or normalized
	references []schema.Reference
	content    string
}

// candidate parses a request's schema against the view. A reference with
// version -1 names the subject's latest version, which is what is stored.
func (r *Registry) candidate(v *view, subject string, req registerRequest, normalize bool) (candidate, error) {
	typ := upperType(req.SchemaType)
	format := r.formats[typ]
	if format == nil {
		return candidate{}, apiErrorf(codeInvalidSchema, "Invalid schema: unknown schema type %s; this registry knows %s", typ, strings.Join(r.sortedTypes(), ", "))
	}
	if strings.TrimSpace(req.Schema) == "" {
		return candidate{}, apiErrorf(codeInvalidSchema, "Empty schema")
	}
	refs := make([]schema.Reference, len(req.References))
	copy(refs, req.References)
	for i, ref := range refs {
		if ref.Version == -1 {
			refs[i].Version = v.latest(ref.Subject, false)
		}
	}
	resolved, err := v.resolve(refs)
	if err != nil {
		return candidate{}, apiErrorf(codeInvalidSchema, "Invalid schema for subject '%s': %v", subject, err)
	}
	parsed, err := format.Parse(req.Schema, resolved)
	if err != nil {
		return candidate{}, apiErrorf(codeInvalidSchema, "Invalid schema for subject '%s': %v", subject, err)
	}
	text := parsed.Canonical()
	if normalize {
		text = parsed.Normalized()
	}
	if len(refs) == 0 {
		refs = nil
	}
	return candidate{typ: typ, parsed: parsed, text: text, references: refs, content: contentKey(typ, text, refs)}, nil
}

// parseStored parses a version's schema with its references.
func (r *Registry) parseStored(v *view, subject string, version int) parsedVersion {
	pv := parsedVersion{version: version}
	stored := v.schemas[v.subjects[subject].versions[version].id]
	pv.typ = stored.typ
	format := r.formats[stored.typ]
	if format == nil {
		pv.err = fmt.Errorf("this registry has no %s format", stored.typ)
		return pv
	}
	resolved, err := v.resolve(stored.references)
	if err == nil {
		pv.parsed, err = format.Parse(stored.text, resolved)
	}
	pv.err = err
	return pv
}

// findInSubject returns the latest version of subject that holds cand
// (soft-deleted ones too when deleted), 0 if none does. With normalize,
// versions registered without it match when their normalized forms do.
func (r *Registry) findInSubject(v *view, subject string, cand candidate, deleted, normalize bool) int {
	versions := v.versions(subject, deleted)
	for i := len(versions) - 1; i >= 0; i-- {
		st := v.subjects[subject].versions[versions[i]]
		stored := v.schemas[st.id]
		if stored.content == cand.content {
			return versions[i]
		}
		if normalize && stored.typ == cand.typ && contentKey(cand.typ, "", stored.references) == contentKey(cand.typ, "", cand.references) {
			if pv := r.parseStored(v, subject, versions[i]); pv.err == nil && pv.parsed.Normalized() == cand.text {
				return versions[i]
			}
		}
	}
	return 0
}

// versionsToCheck are the versions a level compares a new schema with:
// the latest live one, or every live one for the transitive levels.
func versionsToCheck(v *view, subject, level string) []int {
	versions := v.versions(subject, false)
	if !directionOf(level).transitive && len(versions) > 1 {
		versions = versions[len(versions)-1:]
	}
	return versions
}

// compatibilityMessages lists why cand breaks level against versions.
func (r *Registry) compatibilityMessages(v *view, subject, level string, cand candidate, versions []int) []string {
	if level == LevelNone {
		return nil
	}
	earlier := make([]parsedVersion, 0, len(versions))
	for _, version := range versions {
		earlier = append(earlier, r.parseStored(v, subject, version))
	}
	return incompatibilities(r.formats, directionOf(level), cand.typ, cand.parsed, earlier)
}

// registerOp registers a schema under subject: the id of the version
// that already holds it, or a new version (next number; the id of the
// same schema anywhere, else a new one) if it is compatible.
func (r *Registry) registerOp(subject string, req registerRequest, normalize bool) writeOp {
	return func(v *view, st stamp) (change, error) {
		mode := v.effectiveMode(subject)
		if readOnly(mode) {
			return change{}, errReadOnly(subject)
		}
		if (req.ID > 0 || req.Version > 0) && mode != modeImport {
			return change{}, apiErrorf(codeNotPermitted, "Subject %s is not in import mode: a schema id or version may not be given", subject)
		}
		cand, err := r.candidate(v, subject, req, normalize)
		if err != nil {
			return change{}, err
		}
		if version := r.findInSubject(v, subject, cand, false, normalize); version != 0 {
			id := v.subjects[subject].versions[version].id
			if req.ID > 0 && req.ID != id {
				return change{}, apiErrorf(codeIDMismatch, "Schema already registered with id %d instead of input id %d", id, req.ID)
			}
			return change{result: registerResponse{id}}, nil
		}
		if mode != modeImport {
			level := v.level(subject, r.cfg.DefaultCompatibility)
			if msgs := r.compatibilityMessages(v, subject, level, cand, versionsToCheck(v, subject, level)); len(msgs) > 0 {
				return change{}, apiErrorf(codeIncompatible, "Schema being registered is incompatible with an earlier schema for subject \"%s\" (%s), details: [%s]", subject, level, strings.Join(msgs, "; "))
			}
		}
		id, known := v.byContent[cand.content]
		switch {
		case req.ID > 0:
			if stored := v.schemas[req.ID]; stored != nil && stored.content != cand.content {
				return change{}, apiErrorf(codeNotPermitted, "Overwrite new schema with id %d is not permitted.", req.ID)
			}
			id = req.ID
		case !known:
			id = v.maxID + 1
		}
		version := v.latest(subject, true) + 1
		if req.Version > 0 {
			if v.version(subject, req.Version, true) != nil {
				return change{}, apiErrorf(codeNotPermitted, "Overwrite new schema in subject %s version %d is not permitted.", subject, req.Version)
			}
			version = req.Version
		}
		rec, err := encodeRecord(schemaKey(subject, version, &st), schemaValue{Subject: subject, Version: version, ID: id,
			SchemaType: apiType(cand.typ), References: cand.references, Schema: cand.text})
		return change{records: []Record{rec}, sequenced: true, result: registerResponse{id}}, err
	}
}

// referencedError refuses deleting versions other schemas reference.
func referencedError(by []subjectVersion) error {
	names := make([]string, len(by))
	for i, sv := range by {
		names[i] = fmt.Sprintf("%s version %d", sv.Subject, sv.Version)
	}
	return apiErrorf(codeReferenceExists, "One or more references exist to the schema: %s", strings.Join(names, ", "))
}

// tombstones are the records that delete subject's version for good: a
// null value for every key written for it.
func tombstones(v *view, subject string, version int) []Record {
	keys := make([]string, 0, len(v.subjects[subject].keys[version]))
	for k := range v.subjects[subject].keys[version] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = Record{Key: []byte(k)}
	}
	return out
}

// deleteVersionOp soft-deletes a live version (a SCHEMA record with
// deleted=true), or permanently deletes a soft-deleted one (tombstones).
func (r *Registry) deleteVersionOp(subject string, arg versionArg, permanent bool) writeOp {
	return func(v *view, st stamp) (change, error) {
		if readOnly(v.effectiveMode(subject)) {
			return change{}, errReadOnly(subject)
		}
		if len(v.versions(subject, true)) == 0 {
			return change{}, errSubjectNotFound(subject)
		}
		version := arg.resolve(v, subject, permanent)
		if version == 0 {
			if !permanent && !arg.latest && v.version(subject, arg.number, true) != nil {
				return change{}, apiErrorf(codeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted. Set permanent=true to delete permanently", subject, arg.number)
			}
			return change{}, errVersionArgNotFound(arg)
		}
		vs := v.version(subject, version, true)
		if permanent {
			if !vs.deleted {
				return change{}, apiErrorf(codeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, version)
			}
			if by := v.referrers(subject, version, true); len(by) > 0 {
				return change{}, referencedError(by)
			}
			return change{records: tombstones(v, subject, version), result: version}, nil
		}
		if by := v.referrers(subject, version, false); len(by) > 0 {
			return change{}, referencedError(by)
		}
		stored := v.schemas[vs.id]
		rec, err := encodeRecord(schemaKey(subject, version, &st), schemaValue{Subject: subject, Version: version, ID: vs.id,
			SchemaType: apiType(stored.typ), References: stored.references, Schema: stored.text, Deleted: true})
		return change{records: []Record{rec}, sequenced: true, result: version}, err
	}
}

// outsideSubject keeps the referrers that are not versions of subject.
func outsideSubject(by []subjectVersion, subject string) []subjectVersion {
	var out []subjectVersion
	for _, sv := range by {
		if sv.Subject != subject {
			out = append(out, sv)
		}
	}
	return out
}

// deleteSubjectOp soft-deletes a subject's live versions (a
// DELETE_SUBJECT record), or permanently deletes a soft-deleted subject
// (tombstones for every version).
func (r *Registry) deleteSubjectOp(subject string, permanent bool) writeOp {
	return func(v *view, st stamp) (change, error) {
		if readOnly(v.effectiveMode(subject)) {
			return change{}, errReadOnly(subject)
		}
		all, live := v.versions(subject, true), v.versions(subject, false)
		if len(all) == 0 {
			return change{}, errSubjectNotFound(subject)
		}
		if permanent {
			if len(live) > 0 {
				return change{}, apiErrorf(codeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
			}
			var recs []Record
			for _, version := range all {
				if by := outsideSubject(v.referrers(subject, version, true), subject); len(by) > 0 {
					return change{}, referencedError(by)
				}
				recs = append(recs, tombstones(v, subject, version)...)
			}
			return change{records: recs, result: all}, nil
		}
		if len(live) == 0 {
			return change{}, apiErrorf(codeSubjectSoftDeleted, "Subject '%s' was soft deleted. Set permanent=true to delete permanently", subject)
		}
		for _, version := range live {
			if by := outsideSubject(v.referrers(subject, version, false), subject); len(by) > 0 {
				return change{}, referencedError(by)
			}
		}
		rec, err := encodeRecord(deleteSubjectKey(subject, st), deleteSubjectValue{Subject: subject, Version: all[len(all)-1]})
		return change{records: []Record{rec}, sequenced: true, result: live}, err
	}
}
