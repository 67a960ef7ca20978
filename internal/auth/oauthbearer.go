package auth

import (
	"bytes"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OAuthBearerName is the SASL name of the OAUTHBEARER mechanism.
const OAuthBearerName = "OAUTHBEARER"

// OAuthBearerConfig is how OAUTHBEARER validates a client's token: a JWT
// signed by a key of the JWKS, as Kafka's OAuthBearerValidatorCallbackHandler
// does (KIP-768).
type OAuthBearerConfig struct {
	// Keys finds the verification key of a token (by its kid) in the JWKS.
	Keys jwt.Keyfunc
	// Issuer, if set, must equal the token's iss
	// (sasl.oauthbearer.expected.issuer).
	Issuer string
	// Audience, if set, must share a value with the token's aud
	// (sasl.oauthbearer.expected.audience).
	Audience []string
	// SubClaim names the claim that gives the principal
	// (sasl.oauthbearer.sub.claim.name, default "sub").
	SubClaim string
	// ClockSkew is how far exp, nbf and iat may be off
	// (sasl.oauthbearer.clock.skew.seconds, default 30 s).
	ClockSkew time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// signingMethods are the JWS algorithms accepted: asymmetric ones only, so
// that neither "none" nor an HMAC key in the JWKS (which would let whoever
// reads the JWKS sign tokens) can validate a token.
var signingMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTValidator checks bearer tokens as OAUTHBEARER does; the admin HTTP
// listener and the Connect REST API use it for "Authorization: Bearer".
type JWTValidator struct {
	cfg    OAuthBearerConfig
	parser *jwt.Parser
}

// NewJWTValidator returns a validator for cfg.
func NewJWTValidator(cfg OAuthBearerConfig) (*JWTValidator, error) {
	if cfg.Keys == nil {
		return nil, errors.New("auth: bearer tokens need a JWKS (sasl.oauthbearer.jwks.endpoint.url)")
	}
	if cfg.SubClaim == "" {
		cfg.SubClaim = "sub"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(signingMethods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.ClockSkew),
		jwt.WithTimeFunc(cfg.Now),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if len(cfg.Audience) > 0 {
		opts = append(opts, jwt.WithAudience(cfg.Audience...))
	}
	return &JWTValidator{cfg: cfg, parser: jwt.NewParser(opts...)}, nil
}

// NewOAuthBearer returns the OAUTHBEARER mechanism (RFC 7628) validating
// tokens as cfg says.
func NewOAuthBearer(cfg OAuthBearerConfig) (Mechanism, error) {
	v, err := NewJWTValidator(cfg)
	if err != nil {
		return nil, err
	}
	return &oauthMechanism{v: v}, nil
}

type oauthMechanism struct {
	v *JWTValidator
}

func (*oauthMechanism) Name() string { return OAuthBearerName }

func (m *oauthMechanism) Start() Exchange { return &oauthExchange{m: m} }

// oauthExchange: the client's one message is the GS2 header and the
// key-value pairs of RFC 7628 §3.1,
//
//	n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A]*^A
//
// answered with an empty message on success. A refused token fails the
// exchange at once, with the reason in the error. (RFC 7628 §3.2.2 and
// Kafka instead send a JSON error as a challenge and fail only after the
// client's %x01; kafkajs takes that challenge for success and then has its
// connection closed, and SaslAuthenticate carries the error to every
// client anyway.)
type oauthExchange struct {
	m         *oauthMechanism
	finished  bool
	principal Principal
	expiry    time.Time
}

const kvsep = "\x01"

func (e *oauthExchange) Step(msg []byte) ([]byte, bool, error) {
	if e.finished {
		return nil, false, ErrExchangeFinished
	}
	e.finished = true
	token, err := parseOAuthClientFirst(msg)
	if err != nil {
		return nil, false, err
	}
	p, exp, err := e.m.v.Validate(token)
	if err != nil {
		return nil, false, err
	}
	e.principal, e.expiry = p, exp
	return nil, true, nil
}

func (e *oauthExchange) Principal() Principal { return e.principal }

func (e *oauthExchange) Expiry() time.Time { return e.expiry }

// parseOAuthClientFirst returns the bearer token of a client's first
// message.
func parseOAuthClientFirst(msg []byte) (string, error) {
	header, rest, ok := bytes.Cut(msg, []byte(kvsep))
	if !ok {
		return "", malformedf("invalid OAUTHBEARER message: no %%x01 after the GS2 header")
	}
	// GS2 header: "n," or "y," then an optional "a=authzid", then ",".
	h := string(header)
	if !strings.HasPrefix(h, "n,") && !strings.HasPrefix(h, "y,") {
		return "", malformedf("invalid OAUTHBEARER message: the GS2 header must start with n, or y, (channel binding is not supported)")
	}
	if a := strings.TrimSuffix(h[2:], ","); a != "" && !strings.HasPrefix(a, "a=") {
		return "", malformedf("invalid OAUTHBEARER message: bad GS2 header")
	}
	if !bytes.HasSuffix(rest, []byte(kvsep)) {
		return "", malformedf("invalid OAUTHBEARER message: not terminated by %%x01%%x01")
	}
	var token string
	for _, kv := range bytes.Split(bytes.TrimSuffix(rest, []byte(kvsep)), []byte(kvsep)) {
		k, v, ok := bytes.Cut(kv, []byte("="))
		if !ok {
			if len(kv) == 0 {
				continue
			}
			return "", malformedf("invalid OAUTHBEARER message: a key-value pair without '='")
		}
		if string(k) == "auth" {
			scheme, t, ok := strings.Cut(string(v), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || t == "" {
				return "", malformedf("invalid OAUTHBEARER message: auth is not \"Bearer <token>\"")
			}
			token = strings.TrimSpace(t)
		}
		// Other keys are SASL extensions (KIP-342); none is required here.
	}
	if token == "" {
		return "", malformedf("invalid OAUTHBEARER message: no auth=Bearer token")
	}
	return token, nil
}

// Validate checks a compact JWS and returns its principal and expiry. Its
// errors wrap ErrAuthenticationFailed and name the check that failed,
// never the token.
func (m *JWTValidator) Validate(token string) (Principal, time.Time, error) {
	claims := jwt.MapClaims{}
	if _, err := m.parser.ParseWithClaims(token, claims, m.cfg.Keys); err != nil {
		return Principal{}, time.Time{}, failf("invalid token: %s", jwtReason(err))
	}
	sub, _ := claims[m.cfg.SubClaim].(string)
	if strings.TrimSpace(sub) == "" {
		return Principal{}, time.Time{}, failf("invalid token: no %q claim to name the principal", m.cfg.SubClaim)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return Principal{}, time.Time{}, failf("invalid token: no exp claim")
	}
	return User(sub), exp.Time, nil
}

// jwtReason maps jwt's errors to a short reason safe to show.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "signature not verified by any key of the JWKS"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "not valid yet"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "issued in the future"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "a required claim (exp) is missing"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "unexpected issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "unexpected audience"
	}
	return "rejected"
}
