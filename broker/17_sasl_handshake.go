package broker

// SaslHandshake (key 17), v0–v1.
//
//   - On a SASL listener, chooses the mechanism of the exchange that follows
//     and lists the listener's enabled ones (sasl.enabled.mechanisms). An
//     unknown mechanism answers UNSUPPORTED_SASL_MECHANISM and closes.
//   - v1 is followed by SaslAuthenticate requests; v0 by raw SASL tokens in
//     size-prefixed frames (the pre-KIP-152 form), which conn.go serves.
//   - On an authenticated connection it starts a re-authentication
//     (KIP-368); the principal must not change.
//   - On a listener without SASL it answers ILLEGAL_SASL_STATE, as Kafka
//     does.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.SASLHandshake, 0, 1, handleSASLHandshake)
}

func handleSASLHandshake(rc *requestContext, req *kmsg.SASLHandshakeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	l := rc.conn.listener
	if l.sasl == nil {
		resp.ErrorCode = rc.countError(kerr.IllegalSaslState.Code)
		return resp
	}
	resp.SupportedMechanisms = l.enabledMechanisms()
	sc := &rc.conn.sasl
	if sc.ex != nil || (sc.authenticated && req.Version == 0) {
		resp.ErrorCode = rc.countError(kerr.IllegalSaslState.Code)
		rc.closeAfterResponse = "SaslHandshake in the middle of an exchange"
		return resp
	}
	name := strings.ToUpper(req.Mechanism)
	mech, ok := l.sasl.mechs[name]
	if !ok {
		resp.ErrorCode = rc.countError(kerr.UnsupportedSaslMechanism.Code)
		rc.closeAfterResponse = "unsupported SASL mechanism " + clipString(req.Mechanism, 64)
		return resp
	}
	sc.mech, sc.ex, sc.legacy = name, mech.Start(), req.Version == 0
	return resp
}

// clipString bounds client-supplied text in log lines.
func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
