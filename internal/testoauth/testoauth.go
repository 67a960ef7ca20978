// Package testoauth is an OAuth 2 authorization server for tests: it makes
// a signing key at run time (never a committed one), publishes the public
// half as a JWKS (a file or an HTTP endpoint), signs JWTs, and answers
// client-credentials token requests (RFC 6749 §4.4) as librdkafka's and
// Kafka's OIDC login expects.
package testoauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// Issuer signs tokens with its current key; every key it ever had stays in
// its JWKS unless Rotate drops them.
type Issuer struct {
	// Name is the tokens' iss; Audience their aud.
	Name, Audience string

	mu      sync.Mutex
	signers []signer // current is last
	clients map[string]string
}

type signer struct {
	kid    string
	method jwt.SigningMethod
	key    any // *rsa.PrivateKey or *ecdsa.PrivateKey
	public any
}

// New returns an issuer with one RSA key.
func New(t testing.TB) *Issuer {
	t.Helper()
	i := &Issuer{Name: "https://issuer.test", Audience: "strata", clients: map[string]string{}}
	i.AddRSAKey(t)
	return i
}

// AddRSAKey makes a new RSA-2048 key the signing key (kid rsa-N).
func (i *Issuer) AddRSAKey(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	i.add(signer{method: jwt.SigningMethodRS256, key: k, public: &k.PublicKey}, "rsa")
}

// AddECKey makes a new P-256 key the signing key (kid ec-N).
func (i *Issuer) AddECKey(t testing.TB) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	i.add(signer{method: jwt.SigningMethodES256, key: k, public: &k.PublicKey}, "ec")
}

func (i *Issuer) add(s signer, prefix string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	s.kid = fmt.Sprintf("%s-%d", prefix, len(i.signers)+1)
	i.signers = append(i.signers, s)
}

// DropOldKeys removes every key but the current one from the JWKS.
func (i *Issuer) DropOldKeys() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.signers = i.signers[len(i.signers)-1:]
}

// JWKS is the public keys as a JWKS document.
func (i *Issuer) JWKS(t testing.TB) []byte {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	var set jwkset.JWKSMarshal
	for _, s := range i.signers {
		jwk, err := jwkset.NewJWKFromKey(s.public, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
			KID: s.kid, ALG: jwkset.ALG(s.method.Alg()), USE: jwkset.UseSig,
		}})
		if err != nil {
			t.Fatal(err)
		}
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	doc, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// WriteJWKS writes the JWKS to path (atomically, by rename).
func (i *Issuer) WriteJWKS(t testing.TB, path string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, i.JWKS(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Token signs a token for sub valid for ttl from now, with iss, aud, iat
// and exp set; edit changes the claims before signing.
func (i *Issuer) Token(t testing.TB, sub string, ttl time.Duration, edit ...func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"sub": sub, "iss": i.Name, "aud": i.Audience,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(), "scope": "kafka",
	}
	for _, e := range edit {
		e(claims)
	}
	i.mu.Lock()
	s := i.signers[len(i.signers)-1]
	i.mu.Unlock()
	tok := jwt.NewWithClaims(s.method, claims)
	tok.Header["kid"] = s.kid
	signed, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// AddClient registers a client-credentials client; its tokens' sub is id.
func (i *Issuer) AddClient(id, secret string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.clients[id] = secret
}

// Serve starts the issuer's HTTP endpoints on a loopback port, stopped at
// the end of the test, and returns the base URL. GET /jwks is the JWKS;
// POST /token is the client-credentials grant (client id and secret in
// HTTP basic auth or the form), answering a token valid for ttl.
func (i *Issuer) Serve(t testing.TB, ttl time.Duration) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(i.JWKS(t))
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		i.mu.Lock()
		want, known := i.clients[id]
		i.mu.Unlock()
		if !known || secret != want {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"access_token": i.Token(t, id, ttl), "token_type": "Bearer", "expires_in": int(ttl.Seconds()),
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
