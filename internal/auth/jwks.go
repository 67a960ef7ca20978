package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// JWKS is where OAUTHBEARER finds the keys that sign tokens
// (sasl.oauthbearer.jwks.endpoint.url): a file, re-read when it changes, or
// an http(s) URL, fetched again every refresh interval and when a token
// names a key id the set does not hold (at most once per
// jwksUnknownKIDEvery). Close stops the refresh.
type JWKS struct {
	keys jwt.Keyfunc
	stop context.CancelFunc
}

// JWKSOptions tune an http(s) JWKS.
type JWKSOptions struct {
	// Refresh is how often the set is fetched again
	// (sasl.oauthbearer.jwks.endpoint.refresh.ms, default one hour).
	Refresh time.Duration
	// Client fetches the set (http.DefaultClient's transport when nil).
	Client *http.Client
	// Logf reports failed refreshes.
	Logf func(format string, args ...any)
}

const jwksUnknownKIDEvery = 10 * time.Second

// OpenJWKS opens the JWKS at location: file:/path, file:///path, a bare
// path, or an http:// or https:// URL.
func OpenJWKS(location string, opts JWKSOptions) (*JWKS, error) {
	u, err := url.Parse(location)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return openHTTPJWKS(location, opts)
	}
	path := location
	if err == nil && u.Scheme == "file" {
		path = u.Path
		if path == "" {
			path = u.Opaque
		}
	} else if err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return nil, fmt.Errorf("auth: JWKS location %q: scheme %s is not file, http or https", location, u.Scheme)
	}
	f := &fileJWKS{path: path}
	if err := f.load(); err != nil {
		return nil, err
	}
	return &JWKS{keys: f.keyfunc, stop: func() {}}, nil
}

func openHTTPJWKS(location string, opts JWKSOptions) (*JWKS, error) {
	ctx, cancel := context.WithCancel(context.Background())
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	override := keyfunc.Override{
		Client:          opts.Client,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: opts.Refresh,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) { logf("JWKS %s: refresh failed: %v", u, err) }
		},
		// An unknown kid fetches the set again if the limiter allows it
		// within RateLimitWaitMax, which also bounds that fetch: a
		// connection waits at most that long.
		RefreshUnknownKID: rate.NewLimiter(rate.Every(jwksUnknownKIDEvery), 1),
		RateLimitWaitMax:  2 * time.Second,
	}
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{location}, override)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("auth: JWKS %s: %w", location, err)
	}
	return &JWKS{keys: kf.Keyfunc, stop: cancel}, nil
}

// Keyfunc returns the verification key of token.
func (j *JWKS) Keyfunc(token *jwt.Token) (any, error) { return j.keys(token) }

// Close stops refreshing an http(s) set.
func (j *JWKS) Close() { j.stop() }

// fileJWKS is a JWKS file, checked for changes at most once a second.
type fileJWKS struct {
	path    string
	current atomic.Pointer[fileKeys]
	// reload is held by the one caller re-reading the file; others keep
	// using the current keys rather than wait.
	reload sync.Mutex
}

type fileKeys struct {
	keys    jwt.Keyfunc
	modTime time.Time
	size    int64
	checked atomic.Int64 // unix nanos of the last stat
}

func (f *fileJWKS) load() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("auth: JWKS file: %w", err)
	}
	doc, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("auth: JWKS file: %w", err)
	}
	kf, err := parseJWKS(doc)
	if err != nil {
		return fmt.Errorf("auth: JWKS file %s: %w", f.path, err)
	}
	k := &fileKeys{keys: kf, modTime: st.ModTime(), size: st.Size()}
	k.checked.Store(time.Now().UnixNano())
	f.current.Store(k)
	return nil
}

func (f *fileJWKS) keyfunc(token *jwt.Token) (any, error) {
	k := f.current.Load()
	if now := time.Now().UnixNano(); now-k.checked.Load() > int64(time.Second) && f.reload.TryLock() {
		k.checked.Store(now)
		if st, err := os.Stat(f.path); err == nil && (!st.ModTime().Equal(k.modTime) || st.Size() != k.size) {
			// A file being rewritten may not parse yet: keep the old
			// keys until it does.
			if f.load() == nil {
				k = f.current.Load()
			}
		}
		f.reload.Unlock()
	}
	return k.keys(token)
}

// parseJWKS reads a JWKS document (RFC 7517 §5), refusing one with no key
// or with private or symmetric keys: a set that signs as well as verifies
// is a configuration mistake worth stopping at.
func parseJWKS(doc []byte) (jwt.Keyfunc, error) {
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("the JWKS has no keys")
	}
	for i, k := range set.Keys {
		if kty, _ := k["kty"].(string); strings.EqualFold(kty, "oct") {
			return nil, fmt.Errorf("key %d is symmetric (kty oct): OAUTHBEARER verifies with public keys only", i)
		}
		if _, private := k["d"]; private {
			return nil, fmt.Errorf("key %d holds a private key: publish only public keys", i)
		}
	}
	kf, err := keyfunc.NewJWKSetJSON(doc)
	if err != nil {
		return nil, err
	}
	return kf.Keyfunc, nil
}
