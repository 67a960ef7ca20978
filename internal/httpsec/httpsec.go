// Package httpsec is TLS and authentication for Strata's HTTP listeners
// (the broker's admin HTTP and the Connect REST API), from properties
// named like Kafka's (prefix removed by the caller):
//
//	ssl.keystore.location, ssl.truststore.location, ssl.client.auth, …
//	                                  TLS (internal/tlsconf's names)
//	auth.basic.users.file             HTTP basic: lines name=password
//	auth.bearer.jwks.endpoint.url     HTTP bearer: JWTs signed by this JWKS
//	auth.bearer.expected.issuer       … whose iss must match
//	auth.bearer.expected.audience     … whose aud must hold one of these
//	auth.bearer.sub.claim.name        … whose claim names the principal
//
// With any of the auth settings, or ssl.client.auth=required, every path
// but the open ones (health checks) needs a verified client certificate, a
// basic user or a bearer token; failures are 401 with a JSON body and a
// WWW-Authenticate challenge, and are never logged with the credential.
package httpsec

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/strata-streaming/strata/internal/auth"
	"github.com/strata-streaming/strata/internal/tlsconf"
)

// Known reports whether key (prefix removed) is a setting New reads.
func Known(key string) bool {
	switch key {
	case "auth.basic.users.file", "auth.bearer.jwks.endpoint.url", "auth.bearer.expected.issuer",
		"auth.bearer.expected.audience", "auth.bearer.sub.claim.name":
		return true
	}
	return tlsconf.Known(key)
}

// CheckKeys refuses settings New would not read, without opening any
// file or URL (for validating a configuration before it is used).
func CheckKeys(props map[string]string) error {
	for k := range props {
		if !Known(k) {
			return fmt.Errorf("%s is not supported", k)
		}
	}
	if props["auth.bearer.jwks.endpoint.url"] == "" && (props["auth.bearer.expected.issuer"] != "" || props["auth.bearer.expected.audience"] != "") {
		return errors.New("auth.bearer.* settings need auth.bearer.jwks.endpoint.url")
	}
	return nil
}

// Guard secures one HTTP listener. The zero of everything (no settings)
// is plain HTTP with no authentication.
type Guard struct {
	tls      *tlsconf.Source
	server   *tls.Config
	basic    func(user, password string) bool
	bearer   *auth.JWTValidator
	jwks     *auth.JWKS
	required bool
	open     map[string]bool
	// WriteError writes a refusal (status, message); default a JSON
	// {"error_code":…,"message":…} body.
	WriteError func(w http.ResponseWriter, status int, message string)
	// Allow, if set, decides whether an authenticated principal
	// ("User:name") may make the request; a refusal is 403 with the
	// returned reason.
	Allow func(principal string, r *http.Request) (bool, string)
}

// New builds a guard from props; openPaths are served to anyone.
func New(props map[string]string, openPaths ...string) (*Guard, error) {
	g := &Guard{open: map[string]bool{}}
	for _, p := range openPaths {
		g.open[p] = true
	}
	if err := CheckKeys(props); err != nil {
		return nil, err
	}
	ssl := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, "ssl.") {
			ssl[k] = v
		}
	}
	if len(ssl) > 0 {
		src, err := tlsconf.New(ssl)
		if err != nil {
			return nil, err
		}
		server, err := src.ServerConfig()
		if err != nil {
			return nil, err
		}
		g.tls, g.server = src, server
		g.required = src.ClientAuthRequired()
	}
	if file := props["auth.basic.users.file"]; file != "" {
		users, err := auth.PlainUsersFromFile(file)
		if err != nil {
			return nil, fmt.Errorf("auth.basic.users.file: %w", err)
		}
		g.basic, g.required = auth.PlainChecker(users), true
	}
	if url := props["auth.bearer.jwks.endpoint.url"]; url != "" {
		jwks, err := auth.OpenJWKS(url, auth.JWKSOptions{})
		if err != nil {
			return nil, err
		}
		var audience []string
		for _, a := range strings.Split(props["auth.bearer.expected.audience"], ",") {
			if a = strings.TrimSpace(a); a != "" {
				audience = append(audience, a)
			}
		}
		v, err := auth.NewJWTValidator(auth.OAuthBearerConfig{Keys: jwks.Keyfunc, Issuer: props["auth.bearer.expected.issuer"],
			Audience: audience, SubClaim: props["auth.bearer.sub.claim.name"]})
		if err != nil {
			jwks.Close()
			return nil, err
		}
		g.bearer, g.jwks, g.required = v, jwks, true
	}
	return g, nil
}

// Close stops the JWKS refresh.
func (g *Guard) Close() {
	if g.jwks != nil {
		g.jwks.Close()
	}
}

// TLS reports whether the listener serves HTTPS.
func (g *Guard) TLS() bool { return g.server != nil }

// Listener wraps ln in TLS when the guard has TLS settings.
func (g *Guard) Listener(ln net.Listener) net.Listener {
	if g.server == nil {
		return ln
	}
	return tls.NewListener(ln, g.server)
}

// Handler authenticates requests before h.
func (g *Guard) Handler(h http.Handler) http.Handler {
	if !g.required {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.open[r.URL.Path] {
			h.ServeHTTP(w, r)
			return
		}
		principal, err := g.authenticate(r)
		if err == nil && g.Allow != nil {
			if ok, why := g.Allow(principal, r); !ok {
				g.writeError(w, http.StatusForbidden, why)
				return
			}
		}
		if err != nil {
			var challenges []string
			if g.basic != nil {
				challenges = append(challenges, `Basic realm="strata"`)
			}
			if g.bearer != nil {
				challenges = append(challenges, `Bearer realm="strata"`)
			}
			for _, c := range challenges {
				w.Header().Add("WWW-Authenticate", c)
			}
			g.writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authenticate returns the request's principal: its verified client
// certificate's, or its basic user's, or its bearer token's.
func (g *Guard) authenticate(r *http.Request) (string, error) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && g.tls != nil {
		if p, err := g.tls.PeerPrincipal(*r.TLS); err == nil && p != "" {
			return "User:" + p, nil
		}
	}
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case h == "":
		return "", errors.New("authentication required")
	case strings.EqualFold(scheme, "Basic") && g.basic != nil:
		user, pass, ok := r.BasicAuth()
		if !ok || !g.basic(user, pass) {
			return "", errors.New("invalid username or password")
		}
		return "User:" + user, nil
	case strings.EqualFold(scheme, "Bearer") && g.bearer != nil:
		p, _, err := g.bearer.Validate(strings.TrimSpace(cred))
		if err != nil {
			return "", err
		}
		return p.String(), nil
	}
	return "", fmt.Errorf("authorization scheme %q is not accepted here", scheme)
}

func (g *Guard) writeError(w http.ResponseWriter, status int, msg string) {
	if g.WriteError != nil {
		g.WriteError(w, status, msg)
		return
	}
	body, _ := json.Marshal(map[string]any{"error_code": status, "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
