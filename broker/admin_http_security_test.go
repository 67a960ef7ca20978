package broker

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strata-streaming/strata/internal/testoauth"
)

// TestAdminHTTPSecurity: the admin HTTP listener over TLS with basic and
// bearer authentication and the authorizer: /healthz stays open; the rest
// needs credentials (401 with a challenge and a JSON body otherwise, the
// password never echoed); a super user and a valid token get in; a user
// without DESCRIBE on the cluster is refused (403) until an ACL grants it,
// and still may not DELETE; plain HTTP on the TLS port fails.
func TestAdminHTTPSecurity(t *testing.T) {
	f := newTLSFixture(t)
	iss := testoauth.New(t)
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	iss.WriteJWKS(t, jwks)
	users := filepath.Join(t.TempDir(), "http-users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\nviewer=viewer-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := startTestBroker(t, func(c *Config) {
		mustSet(t, c,
			"admin.http.ssl.keystore.location", f.server.Keystore,
			"admin.http.auth.basic.users.file", users,
			"admin.http.auth.bearer.jwks.endpoint.url", "file:"+jwks,
			"admin.http.auth.bearer.expected.audience", iss.Audience,
			"authorizer.class.name", "strata",
			"super.users", "User:ops;User:ANONYMOUS",
		)
	})
	client := f.ca.HTTPSClient()
	base := "https://" + tb.srv.HTTPAddr()
	call := func(method, path string, auth func(*http.Request)) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != nil {
			auth(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}

	if code, _, _ := call("GET", "/healthz", nil); code != 200 {
		t.Fatalf("/healthz without credentials: %d", code)
	}
	code, body, hdr := call("GET", "/metrics", nil)
	var refusal struct{ Error string }
	if code != 401 || json.Unmarshal([]byte(body), &refusal) != nil || refusal.Error == "" || len(hdr.Values("WWW-Authenticate")) != 2 {
		t.Fatalf("/metrics without credentials: %d %q %v", code, body, hdr)
	}
	if code, body, _ := call("GET", "/metrics", basic("ops", "wrong-pw")); code != 401 || strings.Contains(body, "wrong-pw") {
		t.Fatalf("wrong password: %d %q", code, body)
	}
	if code, body, _ := call("GET", "/metrics", basic("ops", "ops-pw")); code != 200 || !strings.Contains(body, "strata_") {
		t.Fatalf("the super user: %d", code)
	}
	if code, _, _ := call("GET", "/metrics", bearer(iss.Token(t, "ops", time.Hour))); code != 200 {
		t.Fatalf("a valid token: %d", code)
	}
	if code, body, _ := call("GET", "/metrics", bearer(iss.Token(t, "ops", -time.Minute))); code != 401 || !strings.Contains(body, "expired") {
		t.Fatalf("an expired token: %d %q", code, body)
	}
	if code, body, _ := call("GET", "/v1/groups", basic("viewer", "viewer-pw")); code != 403 || !strings.Contains(body, "DESCRIBE") {
		t.Fatalf("viewer without an ACL: %d %q", code, body)
	}
	adm := kadm.NewClient(tb.client())
	if res, err := adm.CreateACLs(testContext(t), kadm.NewACLs().Allow("User:viewer").AllowHosts("*").Clusters().Operations(kadm.OpDescribe)); err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	if code, _, _ := call("GET", "/v1/groups", basic("viewer", "viewer-pw")); code != 200 {
		t.Fatalf("viewer with DESCRIBE: %d", code)
	}
	if code, _, _ := call("DELETE", "/v1/remote/topics/gone", basic("viewer", "viewer-pw")); code != 403 {
		t.Fatalf("viewer deleting: %d", code)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	if resp, err := plain.Get("http://" + tb.srv.HTTPAddr() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served on the TLS port")
		}
	}
}
