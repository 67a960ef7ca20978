package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// contentType is what every response says it is.
const contentType = "application/vnd.schemaregistry.v1+json"

// acceptedMediaTypes are the request bodies Confluent's registry reads.
var acceptedMediaTypes = map[string]bool{
	"application/vnd.schemaregistry.v1+json": true,
	"application/vnd.schemaregistry+json":    true,
	"application/json":                       true,
	"application/octet-stream":               true,
}

// handlerFunc answers a request with a value to write as JSON (a rawText
// is written as it is), or an error (an *apiError, else a store error).
type handlerFunc func(w http.ResponseWriter, req *http.Request) (any, error)

// rawText is a body written as it is: a schema's text.
type rawText string

// route is one method and path of the API.
type route struct {
	method, pattern string
	handle          handlerFunc
}

func (r *Registry) routes() []route {
	return []route{
		{"GET", "/{$}", func(http.ResponseWriter, *http.Request) (any, error) { return struct{}{}, nil }},
		{"GET", "/schemas/types", r.getSchemaTypes},
		{"GET", "/schemas", r.getSchemas},
		{"GET", "/schemas/ids/{id}", r.getSchemaByID},
		{"GET", "/schemas/ids/{id}/schema", r.getSchemaTextByID},
		{"GET", "/schemas/ids/{id}/versions", r.getVersionsByID},
		{"GET", "/schemas/ids/{id}/subjects", r.getSubjectsByID},
		{"GET", "/subjects", r.getSubjects},
		{"POST", "/subjects/{subject}", r.lookupSchema},
		{"DELETE", "/subjects/{subject}", r.deleteSubject},
		{"GET", "/subjects/{subject}/versions", r.getVersions},
		{"POST", "/subjects/{subject}/versions", r.registerSchema},
		{"GET", "/subjects/{subject}/versions/{version}", r.getVersion},
		{"DELETE", "/subjects/{subject}/versions/{version}", r.deleteVersion},
		{"GET", "/subjects/{subject}/versions/{version}/schema", r.getVersionText},
		{"GET", "/subjects/{subject}/versions/{version}/referencedby", r.getReferencedBy},
		{"GET", "/config", r.getGlobalConfig},
		{"PUT", "/config", r.putConfig},
		{"DELETE", "/config", r.deleteConfig},
		{"GET", "/config/{subject}", r.getSubjectConfig},
		{"PUT", "/config/{subject}", r.putConfig},
		{"DELETE", "/config/{subject}", r.deleteConfig},
		{"GET", "/mode", r.getGlobalMode},
		{"PUT", "/mode", r.putMode},
		{"GET", "/mode/{subject}", r.getSubjectMode},
		{"PUT", "/mode/{subject}", r.putMode},
		{"DELETE", "/mode/{subject}", r.deleteMode},
		{"POST", "/compatibility/subjects/{subject}/versions/{version}", r.checkCompatibility},
		{"POST", "/compatibility/subjects/{subject}/versions", r.checkCompatibility},
		{"GET", "/contexts", func(http.ResponseWriter, *http.Request) (any, error) { return []string{"."}, nil }},
	}
}

// Handler is the REST API (without the listener's authentication).
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var patterns []string
	for _, rt := range r.routes() {
		mux.Handle(rt.method+" "+rt.pattern, r.serve(rt.handle))
		if allowed[rt.pattern] == nil {
			patterns = append(patterns, rt.pattern)
		}
		allowed[rt.pattern] = append(allowed[rt.pattern], rt.method)
	}
	// A known path with another method is 405, anything else 404, both
	// with Confluent's JSON body rather than the mux's text.
	for _, p := range patterns {
		methods := strings.Join(allowed[p], ", ")
		mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Allow", methods)
			writeError(w, httpError(http.StatusMethodNotAllowed))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, httpError(http.StatusNotFound)) })
	return mux
}

// serve runs h and writes its answer. A panic in h is answered as 500
// with Confluent's body and logged; it never takes the server down.
func (r *Registry) serve(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				r.log.Error("REST handler panicked", "method", req.Method, "path", req.URL.Path, "panic", p)
				writeError(w, apiErrorf(codeStore, "Internal error"))
			}
		}()
		value, err := h(w, req)
		if err != nil {
			writeError(w, asAPIError(err))
			return
		}
		if text, ok := value.(rawText); ok {
			w.Header().Set("Content-Type", contentType)
			_, _ = io.WriteString(w, string(text))
			return
		}
		writeJSON(w, http.StatusOK, value)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	body := []byte(`{"error_code":50001,"message":"encoding the response failed"}`)
	if err := enc.Encode(v); err == nil {
		body = buf.Bytes()
	} else {
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.Status, e) }

// decodeBody reads a JSON request body into into. An empty body leaves
// into as it is. Bodies over the limit are 413 (error code 42201),
// unreadable JSON 400, JSON of the wrong shape 422, as Confluent's
// registry answers them.
func (r *Registry) decodeBody(w http.ResponseWriter, req *http.Request, into any) error {
	if ct := req.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !acceptedMediaTypes[strings.ToLower(mt)] {
			return httpError(http.StatusUnsupportedMediaType)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeInvalidSchema,
				Message: "Request body larger than " + strconv.FormatInt(r.cfg.MaxRequestBytes, 10) + " bytes"}
		}
		return &apiError{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Reading the request body: " + err.Error()}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(into); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return &apiError{Status: http.StatusUnprocessableEntity, Code: http.StatusUnprocessableEntity,
				Message: "Cannot read the request: field " + typeErr.Field + " cannot be a JSON " + typeErr.Value}
		}
		return &apiError{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unreadable JSON: " + err.Error()}
	}
	if dec.More() {
		return &apiError{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unreadable JSON: data after the object"}
	}
	return nil
}

// boolParam is a query flag: "true" in any case is true, anything else
// false (JAX-RS's reading of a boolean).
func boolParam(req *http.Request, name string) bool {
	return strings.EqualFold(req.URL.Query().Get(name), "true")
}

// versionArg is a version in a path: a number, or the latest.
type versionArg struct {
	number int
	latest bool
}

func (a versionArg) String() string {
	if a.latest {
		return "latest"
	}
	return strconv.Itoa(a.number)
}

func parseVersion(s string) (versionArg, error) {
	if s == "latest" || s == "-1" {
		return versionArg{latest: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 1 {
		return versionArg{}, apiErrorf(codeInvalidVersion, "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", s)
	}
	return versionArg{number: int(n)}, nil
}

// resolve finds the version a names in subject: the latest (soft-deleted
// ones too when deleted) or the number; 0 if there is none.
func (a versionArg) resolve(v *view, subject string, deleted bool) int {
	if a.latest {
		return v.latest(subject, deleted)
	}
	if v.version(subject, a.number, deleted) == nil {
		return 0
	}
	return a.number
}

func errVersionArgNotFound(a versionArg) *apiError {
	return apiErrorf(codeVersionNotFound, "Version %s not found.", a)
}

// sortedTypes lists the configured schema types.
func (r *Registry) sortedTypes() []string {
	out := make([]string, 0, len(r.formats))
	for t := range r.formats {
		out = append(out, string(t))
	}
	sort.Strings(out)
	return out
}
