package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/strata-streaming/strata/internal/testoauth"
)

func oauthMessage(token string) []byte {
	return []byte("n,,\x01auth=Bearer " + token + "\x01\x01")
}

func newTestOAuth(t *testing.T, iss *testoauth.Issuer, edit ...func(*OAuthBearerConfig)) Mechanism {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	iss.WriteJWKS(t, path)
	jwks, err := OpenJWKS("file:"+path, JWKSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := OAuthBearerConfig{Keys: jwks.Keyfunc, Issuer: iss.Name, Audience: []string{"other", iss.Audience}, ClockSkew: time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := NewOAuthBearer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// refused steps an exchange through a refused token and returns the
// failure's text.
func refused(t *testing.T, m Mechanism, msg []byte) string {
	t.Helper()
	reply, done, err := m.Start().Step(msg)
	if done || len(reply) != 0 || !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("refused token: reply %q, done %v, err %v (want ErrAuthenticationFailed)", reply, done, err)
	}
	return err.Error()
}

func TestOAuthBearerAcceptsSignedToken(t *testing.T) {
	iss := testoauth.New(t)
	m := newTestOAuth(t, iss)
	ex := m.Start()
	tok := iss.Token(t, "alice", time.Hour)
	reply, done, err := ex.Step([]byte("n,a=alice,\x01host=broker\x01port=9092\x01auth=Bearer " + tok + "\x01traceId=7\x01\x01"))
	if err != nil || !done || len(reply) != 0 {
		t.Fatalf("step: reply %q done %v err %v", reply, done, err)
	}
	if ex.Principal() != User("alice") {
		t.Fatalf("principal %v", ex.Principal())
	}
	if exp := ex.Expiry(); time.Until(exp) < 59*time.Minute || time.Until(exp) > time.Hour {
		t.Fatalf("expiry %v, want the token's exp an hour away", exp)
	}
	if _, _, err := ex.Step(nil); !errors.Is(err, ErrExchangeFinished) {
		t.Fatalf("second step: %v", err)
	}

	// The principal from another claim.
	m = newTestOAuth(t, iss, func(c *OAuthBearerConfig) { c.SubClaim = "client_id" })
	ex = m.Start()
	if _, done, err := ex.Step(oauthMessage(iss.Token(t, "ignored", time.Hour, func(c jwt.MapClaims) { c["client_id"] = "svc-1" }))); err != nil || !done || ex.Principal() != User("svc-1") {
		t.Fatalf("client_id claim: done %v err %v principal %v", done, err, ex.Principal())
	}
}

func TestOAuthBearerRefusals(t *testing.T) {
	iss := testoauth.New(t)
	m := newTestOAuth(t, iss)
	other := testoauth.New(t) // a key the JWKS does not hold, same kid
	for name, tc := range map[string]struct {
		msg  []byte
		want string
	}{
		"expired":         {oauthMessage(iss.Token(t, "alice", -time.Minute)), "expired"},
		"not yet valid":   {oauthMessage(iss.Token(t, "alice", time.Hour, func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), "not valid yet"},
		"issued later":    {oauthMessage(iss.Token(t, "alice", 2*time.Hour, func(c jwt.MapClaims) { c["iat"] = time.Now().Add(time.Hour).Unix() })), "issued in the future"},
		"no exp":          {oauthMessage(iss.Token(t, "alice", time.Hour, func(c jwt.MapClaims) { delete(c, "exp") })), "exp"},
		"wrong issuer":    {oauthMessage(iss.Token(t, "alice", time.Hour, func(c jwt.MapClaims) { c["iss"] = "https://evil.test" })), "issuer"},
		"wrong audience":  {oauthMessage(iss.Token(t, "alice", time.Hour, func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} })), "audience"},
		"no sub":          {oauthMessage(iss.Token(t, "", time.Hour)), `"sub"`},
		"other key":       {oauthMessage(other.Token(t, "alice", time.Hour)), "signature"},
		"unsigned":        {oauthMessage(unsignedToken(t)), "signature"},
		"garbage token":   {oauthMessage("not.a.jwt"), "malformed"},
		"no bearer":       {[]byte("n,,\x01auth=Basic abc\x01\x01"), "Bearer"},
		"no auth":         {[]byte("n,,\x01host=x\x01\x01"), "no auth"},
		"no terminator":   {[]byte("n,,\x01auth=Bearer x"), "terminated"},
		"channel binding": {[]byte("p=tls-unique,,\x01auth=Bearer x\x01\x01"), "GS2"},
		"empty":           {nil, "GS2"},
	} {
		t.Run(name, func(t *testing.T) {
			got := refused(t, m, tc.msg)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("error %q does not say %q", got, tc.want)
			}
			if strings.Contains(got, "eyJ") {
				t.Fatalf("error %q shows the token", got)
			}
		})
	}
}

// unsignedToken is alg "none", which must never validate.
func unsignedToken(t *testing.T) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()})
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWKSFileRotation: a rewritten JWKS file is read again, so tokens of
// a key added to it validate without a restart, and a key dropped from it
// stops validating.
func TestJWKSFileRotation(t *testing.T) {
	iss := testoauth.New(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	iss.WriteJWKS(t, path)
	jwks, err := OpenJWKS(path, JWKSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewOAuthBearer(OAuthBearerConfig{Keys: jwks.Keyfunc})
	if err != nil {
		t.Fatal(err)
	}
	accepts := func(tok string) bool {
		_, done, err := m.Start().Step(oauthMessage(tok))
		return done && err == nil
	}
	old := iss.Token(t, "alice", time.Hour)
	if !accepts(old) {
		t.Fatal("first key refused")
	}
	iss.AddECKey(t)
	iss.DropOldKeys()
	iss.WriteJWKS(t, path)
	rotated := iss.Token(t, "alice", time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for !accepts(rotated) {
		if time.Now().After(deadline) {
			t.Fatal("the rotated key never validated")
		}
		time.Sleep(50 * time.Millisecond) // the file is checked at most once a second
	}
	if accepts(old) {
		t.Fatal("a token of the dropped key still validates")
	}
}

func TestJWKSRefusesBadSets(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"not json":  "{",
		"no keys":   `{"keys":[]}`,
		"symmetric": `{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"h"}]}`,
		"private":   `{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}]}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenJWKS(path, JWKSOptions{}); err == nil {
			t.Errorf("%s: JWKS accepted", name)
		}
	}
	if _, err := OpenJWKS(filepath.Join(dir, "missing"), JWKSOptions{}); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := OpenJWKS("ftp://example/jwks", JWKSOptions{}); err == nil {
		t.Error("ftp scheme accepted")
	}
	if _, err := NewOAuthBearer(OAuthBearerConfig{}); err == nil {
		t.Error("OAUTHBEARER without keys accepted")
	}
}
