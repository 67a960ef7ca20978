package registry

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-streaming/strata/registry/schema"
)

// subjectSchema is a version as the API shows it.
type subjectSchema struct {
	Subject    string             `json:"subject"`
	Version    int                `json:"version"`
	ID         int                `json:"id"`
	SchemaType schema.Type        `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema"`
}

// schemaByID is a schema as GET /schemas/ids/{id} shows it.
type schemaByID struct {
	SchemaType schema.Type        `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema"`
}

// apiType is a type as the API writes it: omitted for Avro.
func apiType(t schema.Type) schema.Type {
	if t == schema.Avro {
		return ""
	}
	return t
}

func (v *view) subjectSchema(subject string, version int) subjectSchema {
	st := v.subjects[subject].versions[version]
	stored := v.schemas[st.id]
	return subjectSchema{Subject: subject, Version: version, ID: st.id, SchemaType: apiType(stored.typ),
		References: stored.references, Schema: stored.text}
}

func (r *Registry) getSchemaTypes(http.ResponseWriter, *http.Request) (any, error) {
	return r.sortedTypes(), nil
}

// getSchemas is GET /schemas?subjectPrefix=&deleted=&latestOnly=.
func (r *Registry) getSchemas(_ http.ResponseWriter, req *http.Request) (any, error) {
	deleted, latestOnly := boolParam(req, "deleted"), boolParam(req, "latestOnly")
	prefix := req.URL.Query().Get("subjectPrefix")
	out := []subjectSchema{}
	r.read(func(v *view) {
		for _, subject := range v.subjectNames(deleted, prefix) {
			versions := v.versions(subject, deleted)
			if latestOnly {
				versions = versions[len(versions)-1:]
			}
			for _, version := range versions {
				out = append(out, v.subjectSchema(subject, version))
			}
		}
	})
	return out, nil
}

// idParam reads {id}; a path whose id is no number is no path of the API.
func idParam(req *http.Request) (int, error) {
	id, err := strconv.ParseInt(req.PathValue("id"), 10, 32)
	if err != nil {
		return 0, httpError(http.StatusNotFound)
	}
	return int(id), nil
}

func (r *Registry) storedByID(req *http.Request) (*storedSchema, error) {
	id, err := idParam(req)
	if err != nil {
		return nil, err
	}
	var found storedSchema
	ok := false
	r.read(func(v *view) {
		if s := v.schemas[id]; s != nil {
			found, ok = *s, true
		}
	})
	if !ok {
		return nil, errSchemaNotFound(id)
	}
	return &found, nil
}

// getSchemaByID is GET /schemas/ids/{id}: any schema an existing version
// names, soft-deleted ones included (deserializers need them).
func (r *Registry) getSchemaByID(_ http.ResponseWriter, req *http.Request) (any, error) {
	s, err := r.storedByID(req)
	if err != nil {
		return nil, err
	}
	return schemaByID{SchemaType: apiType(s.typ), References: s.references, Schema: s.text}, nil
}

func (r *Registry) getSchemaTextByID(_ http.ResponseWriter, req *http.Request) (any, error) {
	s, err := r.storedByID(req)
	if err != nil {
		return nil, err
	}
	return rawText(s.text), nil
}

func (r *Registry) usagesByID(req *http.Request) ([]subjectVersion, error) {
	id, err := idParam(req)
	if err != nil {
		return nil, err
	}
	var usages []subjectVersion
	exists := false
	r.read(func(v *view) {
		exists = v.schemas[id] != nil
		usages = v.usages(id, boolParam(req, "deleted"))
	})
	if !exists {
		return nil, errSchemaNotFound(id)
	}
	return usages, nil
}

func (r *Registry) getVersionsByID(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.usagesByID(req)
}

func (r *Registry) getSubjectsByID(_ http.ResponseWriter, req *http.Request) (any, error) {
	usages, err := r.usagesByID(req)
	if err != nil {
		return nil, err
	}
	subjects := []string{}
	for _, u := range usages {
		if len(subjects) == 0 || subjects[len(subjects)-1] != u.Subject {
			subjects = append(subjects, u.Subject)
		}
	}
	return subjects, nil
}

func (r *Registry) getSubjects(_ http.ResponseWriter, req *http.Request) (any, error) {
	var names []string
	r.read(func(v *view) { names = v.subjectNames(boolParam(req, "deleted"), req.URL.Query().Get("subjectPrefix")) })
	return names, nil
}

func (r *Registry) getVersions(_ http.ResponseWriter, req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	var versions []int
	r.read(func(v *view) { versions = v.versions(subject, boolParam(req, "deleted")) })
	if len(versions) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	return versions, nil
}

// findVersion resolves {subject}/{version} (soft-deleted versions only
// with ?deleted=true) and returns it as the API shows it.
func (r *Registry) findVersion(req *http.Request) (subjectSchema, error) {
	subject := req.PathValue("subject")
	arg, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return subjectSchema{}, err
	}
	deleted := boolParam(req, "deleted")
	var out subjectSchema
	r.read(func(v *view) {
		if len(v.versions(subject, deleted)) == 0 {
			err = errSubjectNotFound(subject)
			return
		}
		version := arg.resolve(v, subject, deleted)
		if version == 0 {
			err = errVersionArgNotFound(arg)
			return
		}
		out = v.subjectSchema(subject, version)
	})
	return out, err
}

func (r *Registry) getVersion(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.findVersion(req)
}

func (r *Registry) getVersionText(_ http.ResponseWriter, req *http.Request) (any, error) {
	s, err := r.findVersion(req)
	if err != nil {
		return nil, err
	}
	return rawText(s.Schema), nil
}

// getReferencedBy lists the ids of the live versions that reference the
// version.
func (r *Registry) getReferencedBy(_ http.ResponseWriter, req *http.Request) (any, error) {
	s, err := r.findVersion(req)
	if err != nil {
		return nil, err
	}
	ids := []int{}
	r.read(func(v *view) {
		seen := map[int]bool{}
		for _, sv := range v.referrers(s.Subject, s.Version, false) {
			id := v.subjects[sv.Subject].versions[sv.Version].id
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	})
	slices.Sort(ids)
	return ids, nil
}

// registerRequest is the body of POST /subjects/{s}/versions, of the
// lookup and of the compatibility checks.
type registerRequest struct {
	Schema     string             `json:"schema"`
	SchemaType schema.Type        `json:"schemaType"`
	References []schema.Reference `json:"references"`
	// ID and Version are honoured in IMPORT mode only; 0 or -1: unset.
	ID      int `json:"id"`
	Version int `json:"version"`
}

type registerResponse struct {
	ID int `json:"id"`
}

func (r *Registry) registerSchema(w http.ResponseWriter, req *http.Request) (any, error) {
	var body registerRequest
	if err := r.decodeBody(w, req, &body); err != nil {
		return nil, err
	}
	return r.write(req.Context(), r.registerOp(req.PathValue("subject"), body, boolParam(req, "normalize")))
}

// lookupSchema is POST /subjects/{subject}: the version of the subject
// that holds this schema.
func (r *Registry) lookupSchema(w http.ResponseWriter, req *http.Request) (any, error) {
	var body registerRequest
	if err := r.decodeBody(w, req, &body); err != nil {
		return nil, err
	}
	subject := req.PathValue("subject")
	deleted, normalize := boolParam(req, "deleted"), boolParam(req, "normalize")
	var out subjectSchema
	var err error
	r.read(func(v *view) {
		if len(v.versions(subject, deleted)) == 0 {
			err = errSubjectNotFound(subject)
			return
		}
		var cand candidate
		if cand, err = r.candidate(v, subject, body, normalize); err != nil {
			return
		}
		version := r.findInSubject(v, subject, cand, deleted, normalize)
		if version == 0 {
			err = apiErrorf(codeSchemaNotFound, "Schema not found")
			return
		}
		out = v.subjectSchema(subject, version)
	})
	return out, err
}

func (r *Registry) deleteSubject(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.write(req.Context(), r.deleteSubjectOp(req.PathValue("subject"), boolParam(req, "permanent")))
}

func (r *Registry) deleteVersion(_ http.ResponseWriter, req *http.Request) (any, error) {
	arg, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return r.write(req.Context(), r.deleteVersionOp(req.PathValue("subject"), arg, boolParam(req, "permanent")))
}

// upperType reads a schemaType as given (Confluent's enum is upper case;
// any case is taken), AVRO when absent.
func upperType(t schema.Type) schema.Type {
	if t == "" {
		return schema.Avro
	}
	return schema.Type(strings.ToUpper(string(t)))
}
