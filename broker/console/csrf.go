package console

import (
	"net/http"
	"net/url"
)

// CSRFHeader must be on every state-changing API request (POST, PUT,
// PATCH, DELETE) with the value "1". A browser sends a custom header only
// from a script of the same origin (anything else needs a CORS preflight,
// which the console never grants), so a form or a link on another site
// cannot change the cluster with the operator's credentials. When the
// request also carries Origin, its host must be the request's Host.
const CSRFHeader = "X-Strata-Console"

// csrfCheck refuses a state-changing request without CSRFHeader, or with
// an Origin of another host, with 403 and a JSON error.
func csrfCheck(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			h.ServeHTTP(w, r)
			return
		}
		if r.Header.Get(CSRFHeader) != "1" {
			writeError(w, http.StatusForbidden, "", "state-changing requests need the header %s: 1", CSRFHeader)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host != r.Host {
				writeError(w, http.StatusForbidden, "", "origin %q does not match host %q", origin, r.Host)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
