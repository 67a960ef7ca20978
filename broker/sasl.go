package broker

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strata-streaming/strata/internal/auth"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// SASL on SASL_PLAINTEXT and SASL_SSL listeners (KIP-43, KIP-152): before
// a connection has authenticated it may send ApiVersions, SaslHandshake and
// SaslAuthenticate only; anything else closes it, as in Kafka. A failed
// authentication answers SASL_AUTHENTICATION_FAILED after
// connection.failed.authentication.delay.ms and closes the connection.

// SASL mechanisms Strata serves.
const (
	mechPlain       = "PLAIN"
	mechScram256    = auth.ScramSHA256
	mechScram512    = auth.ScramSHA512
	mechOAuthBearer = "OAUTHBEARER"
)

// saslListener is the SASL side of one listener: its enabled mechanisms in
// the configured order.
type saslListener struct {
	names []string
	mechs map[string]auth.Mechanism
	// closers stop mechanisms with goroutines (OAUTHBEARER's JWKS refresh).
	closers []func()
}

func (sl *saslListener) close() {
	for _, c := range sl.closers {
		c()
	}
}

// saslSettings reads the SASL settings of listener name from the security
// map: the listener's own (listener.name.<l>.…) before the broker-wide.
func (c *Config) saslSetting(listener, key string) string {
	if v, ok := c.security["listener.name."+strings.ToLower(listener)+"."+key]; ok {
		return v
	}
	return c.security[key]
}

// jaasCredentials parses username="…" password="…" of a JAAS line (the
// inter-broker client's credentials).
func jaasCredentials(jaas string) (user, password string) {
	return jaasOption(jaas, "username"), jaasOption(jaas, "password")
}

var jaasOptionRE = map[string]*regexp.Regexp{
	"username": regexp.MustCompile(`(?:^|\s)username="([^"]*)"`),
	"password": regexp.MustCompile(`(?:^|\s)password="([^"]*)"`),
}

func jaasOption(jaas, name string) string {
	if m := jaasOptionRE[name].FindStringSubmatch(jaas); m != nil {
		return m[1]
	}
	return ""
}

// newSASLListener builds the mechanisms of one SASL listener.
func (s *Server) newSASLListener(spec listenerSpec) (*saslListener, error) {
	cfg := &s.cfg
	enabled := cfg.saslSetting(spec.name, "sasl.enabled.mechanisms")
	sl := &saslListener{mechs: map[string]auth.Mechanism{}}
	for _, m := range strings.Split(enabled, ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == "" || sl.mechs[m] != nil {
			continue
		}
		mech, closer, err := s.newMechanism(spec.name, m)
		if err != nil {
			sl.close()
			return nil, fmt.Errorf("broker: listener %s: %w", spec.name, err)
		}
		sl.names = append(sl.names, m)
		sl.mechs[m] = mech
		if closer != nil {
			sl.closers = append(sl.closers, closer)
		}
	}
	if len(sl.names) == 0 {
		return nil, fmt.Errorf("broker: listener %s is %s: set sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", spec.name, spec.protocol)
	}
	return sl, nil
}

func (s *Server) newMechanism(listener, name string) (auth.Mechanism, func(), error) {
	cfg := &s.cfg
	prefix := strings.ToLower(name) + "."
	switch name {
	case mechPlain:
		users := map[string]string{}
		if jaas := cfg.saslSetting(listener, prefix+"sasl.jaas.config"); jaas != "" {
			u, err := auth.PlainUsers(jaas)
			if err != nil {
				return nil, nil, fmt.Errorf("plain.sasl.jaas.config: %w", err)
			}
			for k, v := range u {
				users[k] = v
			}
		}
		if file := cfg.saslSetting(listener, "sasl.plain.users.file"); file != "" {
			u, err := auth.PlainUsersFromFile(file)
			if err != nil {
				return nil, nil, fmt.Errorf("sasl.plain.users.file: %w", err)
			}
			for k, v := range u {
				users[k] = v
			}
		}
		if len(users) == 0 {
			return nil, nil, errors.New("PLAIN needs users: listener.name.<listener>.plain.sasl.jaas.config with user_<name>=\"<password>\" entries, or sasl.plain.users.file")
		}
		return auth.NewPlain(auth.PlainChecker(users)), nil, nil
	case mechScram256, mechScram512:
		m, err := auth.NewScram(name, func(user string) (auth.ScramCredential, bool) {
			c, ok := s.clusterState().Scram[user][name]
			return auth.ScramCredential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}, ok
		})
		return m, nil, err
	case mechOAuthBearer:
		return s.newOAuthBearer(listener)
	default:
		return nil, nil, fmt.Errorf("sasl.enabled.mechanisms: %s is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER are)", name)
	}
}

// oauthSetting reads an OAUTHBEARER setting of listener: the
// mechanism-prefixed listener override (listener.name.<l>.oauthbearer.…),
// the listener override, then the broker-wide value.
func (c *Config) oauthSetting(listener, key string) string {
	if v, ok := c.security["listener.name."+strings.ToLower(listener)+".oauthbearer."+key]; ok {
		return v
	}
	return c.saslSetting(listener, key)
}

// oauthValidatorClasses are the server callback handlers that mean "validate
// JWTs against the JWKS" in Kafka (its 3.x and 4.x packages). Kafka's
// default without one is the unsecured validator, which accepts unsigned
// tokens; Strata has no such mode.
var oauthValidatorClasses = []string{
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
}

// newOAuthBearer builds OAUTHBEARER from KIP-768's settings: the JWKS
// (sasl.oauthbearer.jwks.endpoint.url, a file or an http(s) URL), the
// expected issuer and audience, the claim naming the principal and the
// clock skew allowed.
func (s *Server) newOAuthBearer(listener string) (auth.Mechanism, func(), error) {
	c := &s.cfg
	if h := c.oauthSetting(listener, "sasl.server.callback.handler.class"); h != "" && !slices.Contains(oauthValidatorClasses, h) {
		return nil, nil, fmt.Errorf("OAUTHBEARER: sasl.server.callback.handler.class %s is not supported: tokens are validated against sasl.oauthbearer.jwks.endpoint.url", h)
	}
	location := c.oauthSetting(listener, "sasl.oauthbearer.jwks.endpoint.url")
	if location == "" {
		return nil, nil, errors.New("OAUTHBEARER needs sasl.oauthbearer.jwks.endpoint.url (a JWKS file or an http(s) URL): unsigned tokens are never accepted")
	}
	num := func(key string, def int64) (int64, error) {
		v := c.oauthSetting(listener, key)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("OAUTHBEARER: %s=%q is not a non-negative integer", key, v)
		}
		return n, nil
	}
	skew, err := num("sasl.oauthbearer.clock.skew.seconds", 30)
	if err != nil {
		return nil, nil, err
	}
	refresh, err := num("sasl.oauthbearer.jwks.endpoint.refresh.ms", 3600000)
	if err != nil {
		return nil, nil, err
	}
	jwks, err := auth.OpenJWKS(location, auth.JWKSOptions{
		Refresh: time.Duration(max(refresh, 1000)) * time.Millisecond,
		Logf:    func(format string, args ...any) { s.logger.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return nil, nil, err
	}
	var audience []string
	for _, a := range strings.Split(c.oauthSetting(listener, "sasl.oauthbearer.expected.audience"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			audience = append(audience, a)
		}
	}
	m, err := auth.NewOAuthBearer(auth.OAuthBearerConfig{
		Keys:      jwks.Keyfunc,
		Issuer:    c.oauthSetting(listener, "sasl.oauthbearer.expected.issuer"),
		Audience:  audience,
		SubClaim:  c.oauthSetting(listener, "sasl.oauthbearer.sub.claim.name"),
		ClockSkew: time.Duration(skew) * time.Second,
	})
	if err != nil {
		jwks.Close()
		return nil, nil, err
	}
	return m, jwks.Close, nil
}

// saslKnown reports whether setting (listener prefix removed) is a SASL
// property Strata reads.
func saslKnown(setting string) bool {
	switch strings.TrimPrefix(setting, "oauthbearer.") {
	case "sasl.enabled.mechanisms", "sasl.plain.users.file", "sasl.mechanism.inter.broker.protocol",
		"plain.sasl.jaas.config", "scram-sha-256.sasl.jaas.config", "scram-sha-512.sasl.jaas.config",
		"sasl.jaas.config", "sasl.server.callback.handler.class",
		"sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
		"sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.expected.audience",
		"sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.scope.claim.name",
		"sasl.oauthbearer.clock.skew.seconds":
		return true
	}
	return false
}

// saslSensitive reports whether a SASL setting holds secrets.
func saslSensitive(setting string) bool { return strings.HasSuffix(setting, "sasl.jaas.config") }

// interBrokerSASL is the client side of SASL for this node's connections to
// the inter-broker listener: sasl.mechanism.inter.broker.protocol (default
// the listener's first mechanism) with the username and password of that
// mechanism's JAAS line.
func (c *Config) interBrokerSASL(spec listenerSpec) (sasl.Mechanism, error) {
	mech := strings.ToUpper(c.saslSetting(spec.name, "sasl.mechanism.inter.broker.protocol"))
	if mech == "" {
		mech = strings.ToUpper(strings.TrimSpace(strings.Split(c.saslSetting(spec.name, "sasl.enabled.mechanisms"), ",")[0]))
	}
	if mech == mechOAuthBearer {
		return nil, fmt.Errorf("broker: inter-broker listener %s: a node does not fetch OAUTHBEARER tokens for its own connections; set sasl.mechanism.inter.broker.protocol to PLAIN or SCRAM-SHA-256/512 (enabled on that listener too), or use another inter.broker.listener.name", spec.name)
	}
	user, pass := jaasCredentials(c.saslSetting(spec.name, strings.ToLower(mech)+".sasl.jaas.config"))
	if user == "" {
		return nil, fmt.Errorf("broker: inter-broker listener %s is %s: listener.name.%s.%s.sasl.jaas.config needs username and password for this node's own connections", spec.name, spec.protocol, strings.ToLower(spec.name), strings.ToLower(mech))
	}
	a := scram.Auth{User: user, Pass: pass}
	switch mech {
	case mechPlain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case mechScram256:
		return a.AsSha256Mechanism(), nil
	case mechScram512:
		return a.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("broker: sasl.mechanism.inter.broker.protocol=%s: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
}

// saslConn is one connection's SASL progress.
type saslConn struct {
	// mech is the mechanism SaslHandshake chose; ex the exchange under way.
	mech string
	ex   auth.Exchange
	// legacy: SaslHandshake v0, so the tokens that follow are raw frames,
	// not SaslAuthenticate requests.
	legacy bool
	// authenticated is set once an exchange completed; expires is when the
	// session ends (KIP-368), zero for never.
	authenticated bool
	expires       time.Time
}

// saslAllowedBeforeAuth are the APIs a SASL connection may send before it
// has authenticated.
func saslAllowedBeforeAuth(key int16) bool {
	return key == 17 || key == 18 || key == 36 // SaslHandshake, ApiVersions, SaslAuthenticate
}

// authFailures rate-limits failed authentications per remote host: each
// failure is answered after connection.failed.authentication.delay.ms, and
// a host with more than authFailureBurst failures in authFailureWindow has
// its next SASL connections closed at once until the window passes.
type authFailures struct {
	mu    sync.Mutex
	hosts map[string]*failureWindow
}

type failureWindow struct {
	start time.Time
	count int
}

const (
	authFailureBurst  = 20
	authFailureWindow = 10 * time.Second
)

func hostOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// record counts one failure of host.
func (f *authFailures) record(host string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hosts == nil {
		f.hosts = map[string]*failureWindow{}
	}
	w := f.hosts[host]
	if w == nil || now.Sub(w.start) > authFailureWindow {
		if len(f.hosts) > 10000 {
			for h, old := range f.hosts {
				if now.Sub(old.start) > authFailureWindow {
					delete(f.hosts, h)
				}
			}
		}
		w = &failureWindow{start: now}
		f.hosts[host] = w
	}
	w.count++
}

// blocked reports whether host is over its failure budget.
func (f *authFailures) blocked(host string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.hosts[host]
	return w != nil && now.Sub(w.start) <= authFailureWindow && w.count > authFailureBurst
}

// scramCredentialOf converts a stored credential.
func scramCredentialOf(c auth.ScramCredential) cluster.ScramCredential {
	return cluster.ScramCredential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}
}

// enabledMechanisms lists a listener's mechanisms (nil for non-SASL).
func (l *kafkaListener) enabledMechanisms() []string {
	if l.sasl == nil {
		return nil
	}
	return slices.Clone(l.sasl.names)
}
