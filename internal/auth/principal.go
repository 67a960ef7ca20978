package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Principal is the identity an authenticated connection acts as, Kafka's
// KafkaPrincipal: a type ("User" for every mechanism here) and a name.
type Principal struct{ Type, Name string }

// Anonymous is the principal of a connection that did not authenticate
// (a PLAINTEXT or SSL listener without client certificates).
var Anonymous = Principal{Type: "User", Name: "ANONYMOUS"}

// User returns the principal User:name.
func User(name string) Principal { return Principal{Type: "User", Name: name} }

// String returns "Type:Name", the form ACLs and quotas use.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal parses "Type:Name". The name may itself contain ':'
// (only the first one separates); both parts must be non-empty.
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok {
		return Principal{}, fmt.Errorf("%w: %q has no ':' between type and name", ErrInvalidPrincipal, s)
	}
	if typ == "" || name == "" {
		return Principal{}, fmt.Errorf("%w: %q has an empty type or name", ErrInvalidPrincipal, s)
	}
	return Principal{Type: typ, Name: name}, nil
}

// ErrInvalidPrincipal is wrapped by ParsePrincipal's errors.
var ErrInvalidPrincipal = errors.New("auth: invalid principal")

// ErrAuthenticationFailed is wrapped by every error an Exchange returns for
// a credential the client presented or a message it sent (Kafka answers
// both with SASL_AUTHENTICATION_FAILED). Its text is what Kafka clients
// show, so it carries no package prefix.
var ErrAuthenticationFailed = errors.New("authentication failed")

// ErrMalformedMessage is wrapped, together with ErrAuthenticationFailed, by
// the errors for a SASL message that does not follow its mechanism's syntax.
var ErrMalformedMessage = errors.New("malformed SASL message")

// ErrExchangeFinished is returned by Step after the exchange succeeded or
// failed: an exchange authenticates once. It does not wrap
// ErrAuthenticationFailed; it reports a caller error.
var ErrExchangeFinished = errors.New("auth: SASL exchange already finished")

// failf returns an error wrapping ErrAuthenticationFailed. The text must
// never include a password, proof or token.
func failf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrAuthenticationFailed, fmt.Sprintf(format, args...))
}

// malformedf returns an error wrapping ErrAuthenticationFailed and
// ErrMalformedMessage.
func malformedf(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrAuthenticationFailed, ErrMalformedMessage, fmt.Sprintf(format, args...))
}

// Exchange is one SASL authentication in progress (one per connection
// attempt). It is not safe for concurrent use; a connection steps it from
// one goroutine.
type Exchange interface {
	// Step takes the client's next SASL message and returns the server's
	// reply. done is true once authentication succeeded (the reply,
	// possibly empty, is the last). A non-nil error ends the exchange; its
	// text is safe to send to the client (never includes a password or
	// token) and for credential problems wraps ErrAuthenticationFailed.
	Step(msg []byte) (reply []byte, done bool, err error)
	// Principal is the authenticated identity; valid after done.
	Principal() Principal
	// Expiry is when the credential stops being valid: zero for none
	// (PLAIN, SCRAM); the token's exp for OAUTHBEARER. A broker with
	// connections.max.reauth.ms closes or re-authenticates the connection
	// by then (KIP-368).
	Expiry() time.Time
}

// Mechanism is one SASL mechanism the server offers, named as in
// SaslHandshake (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER). It is
// safe for concurrent use: each connection calls Start.
type Mechanism interface {
	Name() string
	Start() Exchange
}
