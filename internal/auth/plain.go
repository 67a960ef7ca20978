package auth

import (
	"bytes"
	"time"
	"unicode/utf8"
)

// PlainName is the SASL name of the PLAIN mechanism.
const PlainName = "PLAIN"

// NewPlain returns the PLAIN mechanism (RFC 4616). check reports whether
// password is user's; PlainChecker builds one from a user table. check is
// called from many connections at once.
func NewPlain(check func(user, password string) bool) Mechanism {
	return plainMechanism{check: check}
}

type plainMechanism struct {
	check func(user, password string) bool
}

func (plainMechanism) Name() string { return PlainName }

func (m plainMechanism) Start() Exchange { return &plainExchange{check: m.check} }

// plainExchange is a single-message exchange: the client's one message is
//
//	[authzid] NUL authcid NUL passwd
//
// and the server's reply on success is empty.
type plainExchange struct {
	check     func(user, password string) bool
	finished  bool
	principal Principal
}

func (e *plainExchange) Step(msg []byte) ([]byte, bool, error) {
	if e.finished {
		return nil, false, ErrExchangeFinished
	}
	e.finished = true
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return nil, false, malformedf("invalid SASL/PLAIN message: expected 3 NUL-separated fields, got %d", len(parts))
	}
	authzid, authcid, password := parts[0], parts[1], parts[2]
	if !utf8.Valid(authzid) || !utf8.Valid(authcid) || !utf8.Valid(password) {
		return nil, false, malformedf("invalid SASL/PLAIN message: not UTF-8")
	}
	if len(authcid) == 0 {
		return nil, false, malformedf("invalid SASL/PLAIN message: username not specified")
	}
	if len(password) == 0 {
		return nil, false, malformedf("invalid SASL/PLAIN message: password not specified")
	}
	if len(authzid) != 0 && !bytes.Equal(authzid, authcid) {
		return nil, false, failf("client requested an authorization id that is different from the username")
	}
	user := string(authcid)
	if !e.check(user, string(password)) {
		return nil, false, failf("invalid username or password")
	}
	e.principal = User(user)
	return nil, true, nil
}

func (e *plainExchange) Principal() Principal { return e.principal }

func (e *plainExchange) Expiry() time.Time { return time.Time{} }
