package broker

// SaslAuthenticate (key 36), v0–v2.
//
//   - Carries one SASL token each way for the mechanism SaslHandshake
//     chose. When the exchange completes the connection is authenticated
//     as User:<name>; v1+ tells the client its session lifetime (KIP-368):
//     connections.max.reauth.ms, or less when the credential expires
//     sooner (an OAUTHBEARER token's exp). A connection whose session
//     ended is closed at its next request unless it re-authenticates.
//   - A failure answers SASL_AUTHENTICATION_FAILED with a message (never
//     a password or token) after connection.failed.authentication.delay.ms,
//     counts against the remote host (sasl.go) and closes the connection.
//   - Without a SaslHandshake first: ILLEGAL_SASL_STATE, then close.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.SASLAuthenticate, 0, 2, handleSASLAuthenticate)
}

func handleSASLAuthenticate(rc *requestContext, req *kmsg.SASLAuthenticateRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	c := rc.conn
	if c.listener.sasl == nil || c.sasl.ex == nil || c.sasl.legacy {
		resp.ErrorCode = rc.countError(kerr.IllegalSaslState.Code)
		msg := "SaslAuthenticate without a SaslHandshake"
		resp.ErrorMessage = &msg
		rc.closeAfterResponse = msg
		return resp
	}
	reply, lifetime, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = rc.countError(kerr.SaslAuthenticationFailed.Code)
		msg := err.Error()
		resp.ErrorMessage = &msg
		rc.closeAfterResponse = "SASL authentication failed: " + msg
		return resp
	}
	resp.SASLAuthBytes = reply
	resp.SessionLifetimeMillis = lifetime.Milliseconds()
	return resp
}

// saslStep runs one step of the connection's exchange. On completion it
// authenticates the connection and returns the session lifetime (0: no
// limit); on failure it waits connection.failed.authentication.delay.ms
// and records the failure.
func (c *clientConn) saslStep(token []byte) (reply []byte, lifetime time.Duration, err error) {
	sc := &c.sasl
	reply, done, err := sc.ex.Step(token)
	if err == nil && done {
		principal := "User:" + sc.ex.Principal().Name
		if sc.ex.Principal().Type != "" {
			principal = sc.ex.Principal().Type + ":" + sc.ex.Principal().Name
		}
		if sc.authenticated && principal != c.principal {
			err = errReauthPrincipal
		} else {
			now := time.Now()
			sc.expires = time.Time{}
			if ms := c.s.cfg.ConnectionsMaxReauthMs; ms > 0 {
				sc.expires = now.Add(time.Duration(ms) * time.Millisecond)
			}
			if exp := sc.ex.Expiry(); !exp.IsZero() && (sc.expires.IsZero() || exp.Before(sc.expires)) {
				sc.expires = exp
			}
			if !sc.expires.IsZero() {
				lifetime = max(sc.expires.Sub(now), time.Millisecond)
			}
			sc.authenticated, sc.ex = true, nil
			c.setPrincipal(principal)
			c.s.metrics.saslAuthentications.WithLabelValues(sc.mech, "success").Inc()
			return reply, lifetime, nil
		}
	}
	if err != nil {
		sc.ex = nil
		c.s.metrics.saslAuthentications.WithLabelValues(sc.mech, "failure").Inc()
		c.s.authFailures.record(hostOf(c.remote), time.Now())
		if d := time.Duration(c.s.cfg.ConnectionFailedAuthDelayMs) * time.Millisecond; d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.s.ctx.Done():
				t.Stop()
			}
		}
		return nil, 0, err
	}
	return reply, 0, nil
}
