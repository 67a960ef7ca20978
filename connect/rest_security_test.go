package connect

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/strata-streaming/strata/internal/testcerts"
	"github.com/strata-streaming/strata/internal/testoauth"
)

// TestRESTOverTLSWithAuthentication: listeners=https://… with Kafka's
// listeners.https.ssl.* and Strata's rest.auth.* settings: the REST API
// answers over TLS only to a basic user or a bearer token, refusals are
// Kafka Connect's JSON error with 401, and misconfigurations are refused.
func TestRESTOverTLSWithAuthentication(t *testing.T) {
	b := startBroker(t)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "rest")
	leaf := ca.Issue("worker", "127.0.0.1")
	users := filepath.Join(dir, "rest-users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	iss := testoauth.New(t)
	base := iss.Serve(t, time.Hour)
	props := testWorkerProps(b.Addr,
		"listeners", "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.location", leaf.Keystore,
		"rest.auth.basic.users.file", users,
		"rest.auth.bearer.jwks.endpoint.url", base+"/jwks",
		"rest.auth.bearer.expected.issuer", iss.Name)
	delete(props, "rest.listen")
	w := startWorker(t, props)

	client := ca.HTTPSClient()
	get := func(set func(*http.Request)) (int, restError) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+w.Addr()+"/connectors", nil)
		if set != nil {
			set(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e restError
		_ = json.Unmarshal(body, &e)
		return resp.StatusCode, e
	}
	if code, e := get(nil); code != 401 || e.Code != 401 || e.Message == "" {
		t.Fatalf("no credentials: %d %+v", code, e)
	}
	if code, e := get(func(r *http.Request) { r.SetBasicAuth("ops", "nope") }); code != 401 || strings.Contains(e.Message, "nope") {
		t.Fatalf("wrong password: %d %+v", code, e)
	}
	if code, _ := get(func(r *http.Request) { r.SetBasicAuth("ops", "ops-pw") }); code != 200 {
		t.Fatalf("basic user: %d", code)
	}
	if code, _ := get(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+iss.Token(t, "ops", time.Hour)) }); code != 200 {
		t.Fatalf("bearer token: %d", code)
	}
	if code, e := get(func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+iss.Token(t, "ops", time.Hour, func(c jwt.MapClaims) { c["iss"] = "https://other" }))
	}); code != 401 || !strings.Contains(e.Message, "issuer") {
		t.Fatalf("a token of another issuer: %d %+v", code, e)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + w.Addr() + "/connectors"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served")
		}
	}

	for name, extra := range map[string][]string{
		"https without a keystore": {"listeners", "https://127.0.0.1:0"},
		"ssl without https":        {"listeners", "http://127.0.0.1:0", "listeners.https.ssl.keystore.location", leaf.Keystore},
		"unknown auth":             {"rest.auth.digest.users", "x"},
		"bad client security":      {"security.protocol", "SASL_SSL", "sasl.mechanism", "GSSAPI"},
	} {
		p := testWorkerProps(b.Addr, extra...)
		if strings.HasPrefix(extra[0], "listeners") {
			delete(p, "rest.listen")
		}
		if _, err := NewWorkerConfig(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
