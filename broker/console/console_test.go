package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCSRFCheck: state-changing methods need the header and, with an
// Origin, the request's own host; reads pass untouched.
func TestCSRFCheck(t *testing.T) {
	reached := false
	h := csrfCheck(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	for _, tc := range []struct {
		method, header, origin string
		pass                   bool
	}{
		{method: "GET", pass: true},
		{method: "HEAD", pass: true},
		{method: "POST"},
		{method: "DELETE"},
		{method: "PUT", header: "yes"},
		{method: "POST", header: "1", pass: true},
		{method: "DELETE", header: "1", origin: "http://console.example:9644", pass: true},
		{method: "DELETE", header: "1", origin: "http://evil.example"},
		{method: "POST", header: "1", origin: "http://console.example:9645"},
		{method: "POST", header: "1", origin: "null"},
	} {
		reached = false
		r := httptest.NewRequest(tc.method, "http://console.example:9644/api/v1/topics", nil)
		if tc.header != "" {
			r.Header.Set(CSRFHeader, tc.header)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if reached != tc.pass || (!tc.pass && (w.Code != 403 || !strings.HasPrefix(w.Body.String(), `{"error":`))) {
			t.Errorf("%s header %q origin %q: reached %v, %d %s", tc.method, tc.header, tc.origin, reached, w.Code, w.Body)
		}
	}
}

// TestAssetRoutes: files by name, index.html for the app's other paths,
// and no writes.
func TestAssetRoutes(t *testing.T) {
	h := assetHandler()
	for _, tc := range []struct {
		method, path string
		status       int
		typ, body    string
	}{
		{"GET", "/", 200, "text/html", "app.js"},
		{"GET", "/topics/orders", 200, "text/html", "app.js"},
		{"GET", "/app.js", 200, "text/javascript", ""},
		{"GET", "/app.css", 200, "text/css", ""},
		{"POST", "/", 405, "application/json", "not allowed"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || !strings.HasPrefix(w.Header().Get("Content-Type"), tc.typ) || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %q %.80s", tc.method, tc.path, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
}
