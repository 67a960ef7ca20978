package console

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"time"
)

// dist is the bundled front end (go generate writes it; see doc.go).
//
//go:embed dist
var dist embed.FS

//go:embed openapi.yaml
var openAPI []byte

// Assets returns the bundled front end, for tests that check its size
// and freshness.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded: cannot happen
	}
	return sub
}

// assetHandler serves dist: a file when the path names one, index.html
// for any other path, so the UI's routes (/topics/x, …) load the app.
// GET and HEAD only.
func assetHandler() http.Handler {
	files := Assets()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "", "method %s not allowed on %s", r.Method, r.URL.Path)
			return
		}
		name := path.Clean(r.URL.Path)[1:]
		b, err := fs.ReadFile(files, name)
		if name == "" || err != nil {
			name = "index.html"
			b, _ = fs.ReadFile(files, name)
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	})
}

// serveOpenAPI: GET /api/v1/openapi.yaml.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(openAPI)
}
