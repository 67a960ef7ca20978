package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/internal/testoauth"
)

func tokenAuth(tok string) kgo.Opt {
	return kgo.SASL(oauth.Oauth(func(context.Context) (oauth.Auth, error) { return oauth.Auth{Token: tok}, nil }))
}

// TestOAuthBearer: a SASL_PLAINTEXT listener with OAUTHBEARER validating
// JWTs against a JWKS served over HTTP, with an authorizer. franz-go with a
// token for alice produces to the topic her ACL grants and is refused
// another (the principal is the token's sub); an expired token, a token of
// the wrong audience and one signed by an unknown key are refused with
// SASL_AUTHENTICATION_FAILED and the reason, and no token reaches the log;
// the session ends with the token (SaslAuthenticate's session lifetime is
// its exp).
func TestOAuthBearer(t *testing.T) {
	iss := testoauth.New(t)
	base := iss.Serve(t, time.Hour)
	var logs brokertest.SyncBuffer
	tb := startTestBrokerLogging(t, &logs, func(c *Config) {
		mustSet(t, c,
			"listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
			"listener.name.sasl_plaintext.sasl.enabled.mechanisms", "OAUTHBEARER",
			"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
			"sasl.oauthbearer.jwks.endpoint.url", base+"/jwks",
			"sasl.oauthbearer.expected.issuer", iss.Name,
			"sasl.oauthbearer.expected.audience", "kafka,"+iss.Audience,
			"authorizer.class.name", "strata",
			"super.users", "User:admin",
			"connection.failed.authentication.delay.ms", "1",
		)
	})
	ctx := testContext(t)
	addr := tb.srv.ListenerAddr("SASL_PLAINTEXT")

	admin := saslClient(t, addr, tokenAuth(iss.Token(t, "admin", time.Hour)))
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "oauth-mine", "oauth-other"); err != nil {
		t.Fatal(err)
	}
	if res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("oauth-mine").Operations(kadm.OpWrite)); err != nil || res[0].Err != nil {
		t.Fatalf("create ACL: %v %+v", err, res)
	}
	alice := saslClient(t, addr, tokenAuth(iss.Token(t, "alice", time.Hour)), kgo.RecordRetries(2))
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "oauth-mine", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("alice produces to her topic: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "oauth-other", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produces to another topic: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	other := testoauth.New(t)
	for name, tc := range map[string]struct{ tok, reason string }{
		"expired":        {iss.Token(t, "alice", -time.Minute), "expired"},
		"wrong audience": {iss.Token(t, "alice", time.Hour, func(c jwt.MapClaims) { c["aud"] = "billing" }), "audience"},
		"unknown key":    {other.Token(t, "alice", time.Hour), "signature"},
	} {
		cl := saslClient(t, addr, tokenAuth(tc.tok), kgo.RequestRetries(0))
		err := cl.Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), tc.reason) {
			t.Fatalf("%s: %v, want SASL_AUTHENTICATION_FAILED saying %q", name, err, tc.reason)
		}
		if strings.Contains(logs.String(), tc.tok[strings.LastIndexByte(tc.tok, '.')+1:]) {
			t.Fatalf("%s: the token's signature is in the log", name)
		}
	}

	// The raw exchange: the session lifetime is the token's remaining life.
	conn := dialRawTo(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "OAUTHBEARER"
	if r := roundTrip[*kmsg.SASLHandshakeResponse](conn, hs); r.ErrorCode != 0 {
		t.Fatalf("handshake: code %d, mechanisms %v", r.ErrorCode, r.SupportedMechanisms)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 1, []byte("n,,\x01auth=Bearer "+iss.Token(t, "alice", 90*time.Second)+"\x01\x01")
	r := roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	if r.ErrorCode != 0 || r.SessionLifetimeMillis <= 80_000 || r.SessionLifetimeMillis > 90_000 {
		t.Fatalf("authenticate: code %d, session lifetime %d ms, want about 90 s", r.ErrorCode, r.SessionLifetimeMillis)
	}
}

// TestOAuthBearerConfigRefusals: OAUTHBEARER without a JWKS, with Kafka's
// unsecured validator, with a JWKS file that holds no public key or as the
// inter-broker mechanism does not start.
func TestOAuthBearerConfigRefusals(t *testing.T) {
	for name, kv := range map[string][]string{
		"inter-broker": {"sasl.oauthbearer.jwks.endpoint.url", "file:/dev/null", "inter.broker.listener.name", "SASL_PLAINTEXT"},
		"no jwks":      {},
		"unsecured":    {"sasl.oauthbearer.jwks.endpoint.url", "file:/dev/null", "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"},
		"bad jwks":     {"sasl.oauthbearer.jwks.endpoint.url", "file:/dev/null"},
		"bad skew":     {"sasl.oauthbearer.jwks.endpoint.url", "file:/dev/null", "sasl.oauthbearer.clock.skew.seconds", "soon"},
	} {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		mustSet(t, &cfg, append([]string{"listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "OAUTHBEARER"}, kv...)...)
		srv, err := NewServer(cfg, nil)
		if err == nil {
			err = srv.Start()
			srv.Close()
		}
		if err == nil {
			t.Errorf("%s: the broker started", name)
		} else if !strings.Contains(err.Error(), "OAUTHBEARER") && !strings.Contains(err.Error(), "JWKS") {
			t.Errorf("%s: error %q names neither OAUTHBEARER nor the JWKS", name, err)
		}
	}
}
