package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startRegistry starts a registry on log, listening on a free loopback
// port, closed when the test ends.
func startRegistry(t testing.TB, log Log, configure ...func(*Config)) *Registry {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Log = log
	cfg.Listen = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	for _, c := range configure {
		c(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// api is a test's HTTP client of one registry.
type api struct {
	t    *testing.T
	base string
}

func newAPI(t *testing.T, r *Registry) api { return api{t, "http://" + r.Addr()} }

// do sends body (a string as it is, anything else as JSON) and returns
// the status and the body.
func (a api) do(method, path string, body any) (int, string) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != contentType {
		a.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, strings.TrimSpace(string(out))
}

// ok sends a request that must answer 200 and decodes the answer into into.
func (a api) ok(method, path string, body, into any) {
	a.t.Helper()
	status, out := a.do(method, path, body)
	if status != http.StatusOK {
		a.t.Fatalf("%s %s: %d %s", method, path, status, out)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(out), into); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
}

// want sends a request that must answer exactly wantBody (JSON compared
// as values) with status.
func (a api) want(method, path string, body any, status int, wantBody string) {
	a.t.Helper()
	gotStatus, out := a.do(method, path, body)
	if gotStatus != status || !jsonEqual(out, wantBody) {
		a.t.Fatalf("%s %s:\n got %d %s\nwant %d %s", method, path, gotStatus, out, status, wantBody)
	}
}

// fails sends a request that must fail with status and Confluent's
// error code, its message containing each of msgParts.
func (a api) fails(method, path string, body any, status, code int, msgParts ...string) string {
	a.t.Helper()
	gotStatus, out := a.do(method, path, body)
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil || gotStatus != status || e.Code != code {
		a.t.Fatalf("%s %s: got %d %s, want %d with error_code %d", method, path, gotStatus, out, status, code)
	}
	for _, p := range msgParts {
		if !strings.Contains(e.Message, p) {
			a.t.Fatalf("%s %s: message %q lacks %q", method, path, e.Message, p)
		}
	}
	return e.Message
}

// register registers text under subject and returns its id.
func (a api) register(subject string, body any) int {
	a.t.Helper()
	if s, ok := body.(string); ok {
		body = map[string]any{"schema": s}
	}
	var resp struct{ ID int }
	a.ok("POST", "/subjects/"+subject+"/versions", body, &resp)
	if resp.ID < 1 {
		a.t.Fatalf("register %s: id %d", subject, resp.ID)
	}
	return resp.ID
}

func jsonEqual(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	ea, _ := json.Marshal(va)
	eb, _ := json.Marshal(vb)
	return bytes.Equal(ea, eb)
}

// record builds a User record schema with the given fields.
func record(fields string) string {
	return `{"type":"record","name":"User","fields":[` + fields + `]}`
}
