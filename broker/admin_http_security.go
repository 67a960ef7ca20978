package broker

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/internal/httpsec"
)

// adminHTTPPrefix marks the admin HTTP listener's security settings
// (admin.http.ssl.*, admin.http.auth.*; see internal/httpsec).
const adminHTTPPrefix = "admin.http."

// adminHTTPGuard is the admin HTTP listener's TLS and authentication.
// /healthz stays open for probes. With an authorizer, an authenticated
// principal needs DESCRIBE on the cluster to read (/metrics, /v1/groups)
// and ALTER to change anything (DELETE /v1/remote/topics/…).
func (s *Server) adminHTTPGuard() (*httpsec.Guard, error) {
	g, err := s.cfg.adminHTTPGuard()
	if err != nil || !s.cfg.authorizationEnabled() {
		return g, err
	}
	g.Allow = func(principal string, r *http.Request) (bool, string) {
		op := acl.OpAlter
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			op = acl.OpDescribe
		}
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if s.authorizer().a.Authorize(principal, host, op, acl.ResourceCluster, acl.ClusterName) {
			return true, ""
		}
		return false, fmt.Sprintf("%s needs %s on the cluster", principal, opName(op))
	}
	return g, nil
}

// adminHTTPGuard builds the guard from the admin.http.* settings.
func (c *Config) adminHTTPGuard() (*httpsec.Guard, error) {
	props := map[string]string{}
	for k, v := range c.security {
		if rest, ok := strings.CutPrefix(k, adminHTTPPrefix); ok {
			props[rest] = v
		}
	}
	g, err := httpsec.New(props, "/healthz", "/readyz")
	if err != nil {
		return nil, fmt.Errorf("broker: admin HTTP listener (%s*): %w", adminHTTPPrefix, err)
	}
	g.WriteError = func(w http.ResponseWriter, status int, msg string) {
		writeAdminJSON(w, status, adminErrorJSON{Error: msg})
	}
	return g, nil
}
