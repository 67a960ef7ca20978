package serde

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/registry/schema"
)

const (
	userV1 = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"long"}]}`
	// userV2 adds a field with a default: BACKWARD compatible.
	userV2 = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string","default":""}]}`
	// userBad adds a field without a default: not BACKWARD compatible.
	userBad = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"long"},{"name":"age","type":"int"}]}`
)

func TestClientMethods(t *testing.T) {
	url := startRegistry(t)
	c, _ := newTestClient(t, url)
	ctx := testContext(t)

	v1 := mustRegister(t, c, "users-value", Text{Schema: userV1})
	if v1.ID != 1 || v1.Version != 1 || v1.Subject != "users-value" || v1.Type != schema.Avro || v1.Text != userV1 || v1.Parsed == nil {
		t.Fatalf("register v1 = %+v", v1)
	}
	v2 := mustRegister(t, c, "users-value", Text{Type: schema.Avro, Schema: userV2})
	if v2.ID != 2 || v2.Version != 2 {
		t.Fatalf("register v2 = id %d version %d", v2.ID, v2.Version)
	}
	// The same schema under another subject keeps its id.
	if other := mustRegister(t, c, "other-value", Text{Schema: userV1}); other.ID != 1 || other.Version != 1 {
		t.Fatalf("register under other = id %d version %d", other.ID, other.Version)
	}

	latest, err := c.Version(ctx, "users-value", -1)
	if err != nil || latest.Version != 2 || latest.ID != 2 {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	first, err := c.Version(ctx, "users-value", 1)
	if err != nil || first.ID != 1 || first.Text != userV1 {
		t.Fatalf("version 1 = %+v, %v", first, err)
	}
	byID, err := c.SchemaByID(ctx, 2)
	if err != nil || byID.Text != userV2 || byID.Subject != "" || byID.Version != 0 || byID.Type != schema.Avro {
		t.Fatalf("by id = %+v, %v", byID, err)
	}
	found, err := c.Lookup(ctx, "users-value", Text{Schema: userV1})
	if err != nil || found.Version != 1 || found.ID != 1 {
		t.Fatalf("lookup = %+v, %v", found, err)
	}
	// normalize: a differently spaced schema registers as the same one.
	spaced := strings.ReplaceAll(userV2, ",", ", ")
	if again, err := c.Register(ctx, "users-value", Text{Schema: spaced}, true); err != nil || again.Version != 2 {
		t.Fatalf("register spaced, normalized = %+v, %v", again, err)
	}

	ok, msgs, err := c.CheckCompatibility(ctx, "users-value", -1, Text{Schema: userBad})
	if err != nil || ok || len(msgs) == 0 {
		t.Fatalf("check incompatible = %v %q %v", ok, msgs, err)
	}
	ok, msgs, err = c.CheckCompatibility(ctx, "users-value", 0, Text{Schema: userV2})
	if err != nil || !ok {
		t.Fatalf("check compatible = %v %q %v", ok, msgs, err)
	}

	subjects, err := c.Subjects(ctx, "", false)
	if err != nil || !slices.Equal(subjects, []string{"other-value", "users-value"}) {
		t.Fatalf("subjects = %q, %v", subjects, err)
	}
	if subjects, err = c.Subjects(ctx, "us", false); err != nil || !slices.Equal(subjects, []string{"users-value"}) {
		t.Fatalf("subjects us* = %q, %v", subjects, err)
	}
	if versions, err := c.Versions(ctx, "users-value", false); err != nil || !slices.Equal(versions, []int{1, 2}) {
		t.Fatalf("versions = %v, %v", versions, err)
	}

	// Config and mode, global and per subject.
	if level, err := c.Config(ctx, ""); err != nil || level != "BACKWARD" {
		t.Fatalf("global config = %q, %v", level, err)
	}
	if level, err := c.SetConfig(ctx, "users-value", "none"); err != nil || level != "NONE" {
		t.Fatalf("set config = %q, %v", level, err)
	}
	if level, err := c.Config(ctx, "users-value"); err != nil || level != "NONE" {
		t.Fatalf("subject config = %q, %v", level, err)
	}
	if level, err := c.Config(ctx, "other-value"); err != nil || level != "BACKWARD" {
		t.Fatalf("subject config defaulting to global = %q, %v", level, err)
	}
	if ok, _, err := c.CheckCompatibility(ctx, "users-value", -1, Text{Schema: userBad}); err != nil || !ok {
		t.Fatalf("check under NONE = %v, %v", ok, err)
	}
	if mode, err := c.Mode(ctx, ""); err != nil || mode != "READWRITE" {
		t.Fatalf("mode = %q, %v", mode, err)
	}
	if mode, err := c.SetMode(ctx, "other-value", "READONLY", false); err != nil || mode != "READONLY" {
		t.Fatalf("set mode = %q, %v", mode, err)
	}
	if mode, err := c.Mode(ctx, "other-value"); err != nil || mode != "READONLY" {
		t.Fatalf("subject mode = %q, %v", mode, err)
	}
	if _, err := c.Register(ctx, "other-value", Text{Schema: userV2}, false); apiCode(err) != 42205 {
		t.Fatalf("register in READONLY: %v", err)
	}

	// Deletes: a version softly, then permanently; the subject.
	if v, err := c.DeleteVersion(ctx, "users-value", 2, false); err != nil || v != 2 {
		t.Fatalf("delete version = %d, %v", v, err)
	}
	if versions, err := c.Versions(ctx, "users-value", true); err != nil || !slices.Equal(versions, []int{1, 2}) {
		t.Fatalf("versions with deleted = %v, %v", versions, err)
	}
	if _, err := c.Version(ctx, "users-value", 2); apiCode(err) != CodeVersionNotFound {
		t.Fatalf("deleted version still served (from the cache?): %v", err)
	}
	if v, err := c.DeleteVersion(ctx, "users-value", 2, true); err != nil || v != 2 {
		t.Fatalf("delete version permanently = %d, %v", v, err)
	}
	if versions, err := c.DeleteSubject(ctx, "users-value", false); err != nil || !slices.Equal(versions, []int{1}) {
		t.Fatalf("delete subject = %v, %v", versions, err)
	}
	if subjects, err := c.Subjects(ctx, "", true); err != nil || !slices.Equal(subjects, []string{"other-value", "users-value"}) {
		t.Fatalf("subjects with deleted = %q, %v", subjects, err)
	}
	if versions, err := c.DeleteSubject(ctx, "users-value", true); err != nil || !slices.Equal(versions, []int{1}) {
		t.Fatalf("delete subject permanently = %v, %v", versions, err)
	}
	if _, err := c.Versions(ctx, "users-value", true); apiCode(err) != CodeSubjectNotFound {
		t.Fatalf("versions of a deleted subject: %v", err)
	}
	// The schema stays readable by id while another subject names it.
	if s, err := c.SchemaByID(ctx, 1); err != nil || s.Text != userV1 {
		t.Fatalf("by id after delete = %+v, %v", s, err)
	}
}

// apiCode is the registry's error_code of err, 0 if err is no *Error.
func apiCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestClientCaches(t *testing.T) {
	url := startRegistry(t)
	c, counter := newTestClient(t, url)
	ctx := testContext(t)
	mustRegister(t, c, "s", Text{Schema: userV1})
	count := func() int64 { return counter.requests.Load() }

	// Registering again asks nothing: registrations are cached.
	before := count()
	mustRegister(t, c, "s", Text{Schema: userV1})
	if n := count() - before; n != 0 {
		t.Errorf("second registration made %d requests", n)
	}
	// Register fetched version 1 and id 1 already (by lookup).
	before = count()
	for range 3 {
		if _, err := c.SchemaByID(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Version(ctx, "s", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Lookup(ctx, "s", Text{Schema: userV1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count() - before; n != 0 {
		t.Errorf("cached reads made %d requests", n)
	}
	// latest is not cached by default...
	before = count()
	for range 3 {
		if _, err := c.Version(ctx, "s", -1); err != nil {
			t.Fatal(err)
		}
	}
	if n := count() - before; n != 3 {
		t.Errorf("3 latest reads made %d requests, want 3", n)
	}
	// ...and for LatestTTL when asked.
	cached, counter2 := newTestClient(t, url, LatestTTL(time.Hour))
	now := time.Now()
	cached.now = func() time.Time { return now }
	for range 3 {
		if _, err := cached.Version(ctx, "s", -1); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter2.requests.Load(); n != 1 {
		t.Errorf("3 latest reads with a TTL made %d requests, want 1", n)
	}
	now = now.Add(2 * time.Hour)
	mustRegister(t, c, "s", Text{Schema: userV2})
	if s, err := cached.Version(ctx, "s", -1); err != nil || s.Version != 2 {
		t.Errorf("latest after the TTL = %d, %v", s.Version, err)
	}
	// Errors are not cached.
	before = count()
	for range 2 {
		if _, err := c.SchemaByID(ctx, 99); apiCode(err) != CodeSchemaNotFound {
			t.Fatalf("unknown id: %v", err)
		}
	}
	if n := count() - before; n != 2 {
		t.Errorf("2 failed reads made %d requests", n)
	}
}

func TestClientErrors(t *testing.T) {
	url := startRegistry(t)
	c, _ := newTestClient(t, url)
	ctx := testContext(t)
	var e *Error

	_, err := c.Version(ctx, "missing", 1)
	if !errors.As(err, &e) || e.Status != 404 || e.Code != CodeSubjectNotFound || !strings.Contains(e.Message, "missing") {
		t.Fatalf("missing subject: %#v", err)
	}
	if got := err.Error(); !strings.HasSuffix(got, "(error_code 40401)") {
		t.Errorf("Error() = %q", got)
	}
	_, err = c.Register(ctx, "s", Text{Schema: `{"type":"record"`}, false)
	if !errors.As(err, &e) || e.Status != 422 || e.Code != CodeInvalidSchema {
		t.Fatalf("invalid schema: %#v", err)
	}
	_, err = c.Register(ctx, "s", Text{Type: "XML", Schema: `<a/>`}, false)
	if apiCode(err) != CodeInvalidSchema {
		t.Fatalf("unknown type: %v", err)
	}
	mustRegister(t, c, "s", Text{Schema: userV1})
	_, err = c.Register(ctx, "s", Text{Schema: userBad}, false)
	if !errors.As(err, &e) || e.Status != 409 || e.Code != CodeIncompatible {
		t.Fatalf("incompatible: %#v", err)
	}
	if _, err := c.SetConfig(ctx, "", "SIDEWAYS"); apiCode(err) != 42203 {
		t.Fatalf("bad level: %v", err)
	}
	if _, err := c.Lookup(ctx, "s", Text{Schema: userV2}); apiCode(err) != CodeSchemaNotFound {
		t.Fatalf("lookup of an unregistered schema: %v", err)
	}

	// Something that is not a registry: a status without Confluent's body.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>upstream down</html>", http.StatusBadGateway)
	}))
	defer proxy.Close()
	pc, _ := newTestClient(t, proxy.URL)
	_, err = pc.SchemaByID(ctx, 1)
	if !errors.As(err, &e) || e.Status != 502 || e.Code != 502 || !strings.Contains(e.Message, "upstream down") {
		t.Fatalf("proxy error: %#v", err)
	}
	// An answer that is not JSON.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("not json")) }))
	defer garbage.Close()
	gc, _ := newTestClient(t, garbage.URL)
	if _, err := gc.Subjects(ctx, "", false); !errors.Is(err, ErrClient) {
		t.Fatalf("garbage answer: %v", err)
	}
	// Nobody listening.
	dead, _ := newTestClient(t, "http://127.0.0.1:1")
	if _, err := dead.Subjects(ctx, "", false); !errors.Is(err, ErrClient) || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("dead registry: %v", err)
	}
	for _, bad := range []string{"", "127.0.0.1:8081", "ftp://x", "http://"} {
		if _, err := NewClient(bad); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
}

func TestClientBasicAuth(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		got = append(got, user+":"+password)
		w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	ctx := testContext(t)
	c, _ := newTestClient(t, srv.URL, BasicAuth("ann", "s3cret"))
	if _, err := c.Subjects(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	// Credentials in the URL work too, and are not kept in URL().
	withUser, _ := newTestClient(t, strings.Replace(srv.URL, "http://", "http://bob:pw@", 1))
	if _, err := withUser.Subjects(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(withUser.URL(), "pw") {
		t.Errorf("URL() = %q keeps the password", withUser.URL())
	}
	if !slices.Equal(got, []string{"ann:s3cret", "bob:pw"}) {
		t.Fatalf("credentials sent: %q", got)
	}
}
