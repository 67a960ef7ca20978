package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/testcerts"
)

// TestRegistryHTTPSWithBasicAuth: Confluent's ssl.* HTTPS listener settings and
// Strata's auth.basic.users.file: the API answers over TLS only to a known
// user; refusals are 401 in Confluent's error body and never repeat the
// password.
func TestRegistryHTTPSWithBasicAuth(t *testing.T) {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "registry")
	leaf := ca.Issue("registry", "127.0.0.1")
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(map[string]string{"bootstrap.servers": "unused:9092", "listeners": "https://127.0.0.1:0",
		"ssl.keystore.location": leaf.Keystore, "auth.basic.users.file": users})
	if err != nil {
		t.Fatal(err)
	}
	r := startRegistry(t, NewMemoryLog(), func(c *Config) { c.Listen, c.HTTPSecurity = cfg.Listen, cfg.HTTPSecurity })
	if !r.TLS() {
		t.Fatal("the listener is not TLS")
	}
	client := ca.HTTPSClient()
	get := func(user, pass string) (int, string, apiError) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+r.Addr()+"/subjects", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e apiError
		_ = json.Unmarshal(body, &e)
		return resp.StatusCode, resp.Header.Get("Content-Type"), e
	}
	if code, ct, e := get("", ""); code != 401 || e.Code != 401 || ct != contentType {
		t.Fatalf("no credentials: %d %s %+v", code, ct, e)
	}
	if code, _, e := get("ops", "guess-pw"); code != 401 || strings.Contains(e.Message, "guess-pw") {
		t.Fatalf("wrong password: %d %+v", code, e)
	}
	if code, _, _ := get("ops", "ops-pw"); code != 200 {
		t.Fatalf("known user: %d", code)
	}
	// Plain HTTP on the TLS port gets nowhere.
	if resp, err := http.Get("http://" + r.Addr() + "/subjects"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP was answered")
		}
	}
	// A Confluent-style client with TLS and basic auth.
	cl, err := sr.NewClient(sr.URLs("https://"+r.Addr()), sr.HTTPClient(client), sr.BasicAuth("ops", "ops-pw"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if id, err := cl.RegisterSchema(ctx, "s", sr.Schema{Schema: v1}, -1, -1); err != nil || id != 1 {
		t.Fatalf("register over HTTPS: %d %v", id, err)
	}
	bad, _ := sr.NewClient(sr.URLs("https://"+r.Addr()), sr.HTTPClient(client), sr.BasicAuth("ops", "nope"))
	var re *sr.ResponseError
	if _, err := bad.Subjects(ctx); !errors.As(err, &re) || re.StatusCode != 401 || re.ErrorCode != 401 {
		t.Fatalf("wrong password through sr: %v", err)
	}
}
