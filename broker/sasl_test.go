package broker

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	xscram "github.com/xdg-go/scram"
)

// saslBroker is a broker with a SASL_PLAINTEXT listener (PLAIN and both
// SCRAMs) and a SASL_SSL listener (SCRAM-SHA-512), an admin created with
// --add-scram, and PLAIN users from the listener's JAAS line.
func startSASLBroker(t *testing.T, tune ...func(*Config)) (*testBroker, tlsFixture) {
	t.Helper()
	f := newTLSFixture(t)
	tb := startTestBroker(t, append([]func(*Config){func(c *Config) {
		mustSet(t, c,
			"listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
			"ssl.keystore.location", f.server.Keystore,
			"listener.name.sasl_plaintext.sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_carol="carol-secret";`,
			"listener.name.sasl_ssl.sasl.enabled.mechanisms", "SCRAM-SHA-512",
			"connection.failed.authentication.delay.ms", "1",
		)
		c.AddScram = []string{`SCRAM-SHA-512=[name=admin,password="admin,secret"]`}
	}}, tune...)...)
	return tb, f
}

func saslClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(5 * time.Second), kgo.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestSASLPlainAndScram: the --add-scram admin creates users with KIP-554's
// AlterUserScramCredentials through kadm (its own salting), they produce
// and consume with SCRAM-SHA-256 and -512 over SASL_PLAINTEXT and SASL_SSL,
// PLAIN users from the JAAS line work, and DescribeUserScramCredentials
// lists mechanisms and iterations only.
func TestSASLPlainAndScram(t *testing.T) {
	tb, f := startSASLBroker(t)
	ctx := testContext(t)
	saslAddr, sslAddr := tb.srv.ListenerAddr("SASL_PLAINTEXT"), tb.srv.ListenerAddr("SASL_SSL")
	tlsOpt := kgo.DialTLSConfig(f.clientTLS(t, false))
	admin := saslClient(t, sslAddr, tlsOpt, kgo.SASL(scram.Auth{User: "admin", Pass: "admin,secret"}.AsSha512Mechanism()))
	adm := kadm.NewClient(admin)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "bob-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for u, r := range res {
		if r.Err != nil {
			t.Fatalf("upsert %s: %v", u, r.Err)
		}
	}
	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := described["bob"]; len(d.CredInfos) != 1 || d.CredInfos[0].Mechanism != kadm.ScramSha512 || d.CredInfos[0].Iterations != 8192 {
		t.Fatalf("bob described as %+v", d)
	}
	if len(described) != 3 {
		t.Fatalf("described users %v, want admin, alice, bob", described)
	}

	for _, c := range []struct {
		name string
		addr string
		opts []kgo.Opt
	}{
		{"scram-256", saslAddr, []kgo.Opt{kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())}},
		{"scram-512-tls", sslAddr, []kgo.Opt{tlsOpt, kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism())}},
		{"plain", saslAddr, []kgo.Opt{kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism())}},
	} {
		cl := saslClient(t, c.addr, c.opts...)
		topic := "sasl-" + c.name
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(c.name)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", c.name, err)
		}
		if got := consumeKeysValues(t, c.addr, topic, c.opts); got != c.name {
			t.Fatalf("%s: consumed %q", c.name, got)
		}
	}
	// The principals the connections carry.
	seen := map[string]bool{}
	tb.srv.connsMu.Lock()
	for c := range tb.srv.connsMu.conns {
		seen[c.principal] = true
	}
	tb.srv.connsMu.Unlock()
	for _, p := range []string{"User:admin", "User:alice", "User:bob", "User:carol"} {
		if !seen[p] {
			t.Errorf("no connection authenticated as %s (have %v)", p, seen)
		}
	}

	// Deleting: bob can no longer log in; a second delete is RESOURCE_NOT_FOUND.
	del, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha512}}, nil)
	if err != nil || del["bob"].Err != nil {
		t.Fatalf("delete bob: %v %v", err, del["bob"].Err)
	}
	again, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha512}}, nil)
	if err != nil || !errors.Is(again["bob"].Err, kerr.ResourceNotFound) {
		t.Fatalf("second delete of bob: %v %v", err, again["bob"].Err)
	}
	bob := saslClient(t, sslAddr, tlsOpt, kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism()))
	if err := bob.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("deleted user bob: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	// Bad upserts, sent raw (kadm refuses them itself): too few
	// iterations, an unknown mechanism, a user named twice.
	raw := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, u := range []struct {
		name string
		mech int8
		iter int32
	}{{"weak", 1, 1000}, {"odd", 3, 4096}, {"dup", 1, 4096}} {
		up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = u.name, u.mech, u.iter, []byte("salt"), []byte("salted")
		raw.Upsertions = append(raw.Upsertions, up)
	}
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = "dup", 1
	raw.Deletions = append(raw.Deletions, d)
	rawResp, err := raw.RequestWith(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int16{}
	for _, r := range rawResp.Results {
		codes[r.User] = r.ErrorCode
	}
	if codes["weak"] != kerr.UnacceptableCredential.Code || codes["odd"] != kerr.UnsupportedSaslMechanism.Code || codes["dup"] != kerr.DuplicateResource.Code {
		t.Fatalf("bad upserts answered %v", codes)
	}

	// A restart keeps the credentials (they are in the quorum) and the
	// --add-scram admin keeps its password: the flag is ignored now.
	tb.cfg.AddScram = []string{`SCRAM-SHA-512=[name=admin,password=other]`}
	tb.cfg.Listeners = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://" + saslAddr + ",SASL_SSL://" + sslAddr
	tb.restart()
	alice := saslClient(t, saslAddr, kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()))
	if err := alice.Ping(ctx); err != nil {
		t.Fatalf("alice after restart: %v", err)
	}
	again2 := saslClient(t, sslAddr, tlsOpt, kgo.SASL(scram.Auth{User: "admin", Pass: "admin,secret"}.AsSha512Mechanism()))
	if err := again2.Ping(ctx); err != nil {
		t.Fatalf("admin after a restart with another --add-scram: %v", err)
	}
}

// TestSASLRefusals: wrong passwords, an unknown mechanism, requests before
// authentication and a truncated exchange each end only their connection,
// with Kafka's codes; a host that keeps failing is held off.
func TestSASLRefusals(t *testing.T) {
	tb, _ := startSASLBroker(t)
	ctx := testContext(t)
	saslAddr := tb.srv.ListenerAddr("SASL_PLAINTEXT")

	for _, m := range []kgo.Opt{
		kgo.SASL(plain.Auth{User: "carol", Pass: "wrong"}.AsMechanism()),
		kgo.SASL(scram.Auth{User: "admin", Pass: "wrong"}.AsSha512Mechanism()),
		kgo.SASL(scram.Auth{User: "nobody", Pass: "x"}.AsSha256Mechanism()),
	} {
		cl := saslClient(t, saslAddr, m, kgo.RequestRetries(0))
		err := cl.Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("bad credentials: %v, want SASL_AUTHENTICATION_FAILED", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Fatalf("the error echoes the password: %v", err)
		}
	}

	// Raw protocol: SaslHandshake for a mechanism the listener lacks.
	conn := dialRawTo(t, saslAddr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	hsResp := roundTrip[*kmsg.SASLHandshakeResponse](conn, hs)
	if hsResp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(hsResp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" {
		t.Fatalf("GSSAPI handshake: code %d, mechanisms %v", hsResp.ErrorCode, hsResp.SupportedMechanisms)
	}
	conn.expectClosed("unsupported mechanism")

	// Metadata before authenticating: closed unanswered.
	conn = dialRawTo(t, saslAddr)
	conn.send(kmsg.NewPtrMetadataRequest())
	conn.expectClosed("Metadata before authentication")

	// SaslAuthenticate without a handshake: ILLEGAL_SASL_STATE.
	conn = dialRawTo(t, saslAddr)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	auResp := roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	if auResp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate without handshake: code %d", auResp.ErrorCode)
	}

	// A truncated SCRAM exchange: the client-first message, then the
	// connection drops; the broker serves the next client.
	conn = dialRawTo(t, saslAddr)
	hs.Mechanism = "SCRAM-SHA-512"
	hsResp = roundTrip[*kmsg.SASLHandshakeResponse](conn, hs)
	au.SASLAuthBytes = []byte("n,,n=admin,r=abcdefgh")
	auResp = roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	if auResp.ErrorCode != 0 || !strings.HasPrefix(string(auResp.SASLAuthBytes), "r=abcdefgh") {
		t.Fatalf("server-first: code %d, %q", auResp.ErrorCode, auResp.SASLAuthBytes)
	}
	conn.nc.Close()
	// Garbage as the client-final message.
	conn = dialRawTo(t, saslAddr)
	hsResp = roundTrip[*kmsg.SASLHandshakeResponse](conn, hs)
	auResp = roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	au.SASLAuthBytes = []byte("c=biws,r=bogus,p=AAAA")
	auResp = roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	if auResp.ErrorCode != kerr.SaslAuthenticationFailed.Code || auResp.ErrorMessage == nil {
		t.Fatalf("garbage client-final: code %d", auResp.ErrorCode)
	}
	conn.expectClosed("garbage client-final")

	good := saslClient(t, saslAddr, kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism()))
	if err := good.Ping(ctx); err != nil {
		t.Fatalf("a good client after the failures: %v", err)
	}

	// Past the failure budget, this host's next SASL connections are closed
	// at once, even with the right password.
	for range authFailureBurst + 1 {
		tb.srv.authFailures.record("127.0.0.1", time.Now())
	}
	held := saslClient(t, saslAddr, kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism()), kgo.RequestRetries(0))
	if err := held.Ping(ctx); err == nil {
		t.Fatal("a host over its authentication-failure budget was served")
	}
	// The PLAINTEXT listener is not SASL and is not held off.
	if err := saslClient(t, tb.srv.ListenerAddr("PLAINTEXT")).Ping(ctx); err != nil {
		t.Fatalf("PLAINTEXT listener: %v", err)
	}
}

// TestSASLReauthentication: with connections.max.reauth.ms, SaslAuthenticate
// v1+ reports the session lifetime; franz-go re-authenticates on the same
// connection before it ends (KIP-368) and keeps producing; a client that
// does not is closed at its first request after the session ended.
func TestSASLReauthentication(t *testing.T) {
	tb, _ := startSASLBroker(t, func(c *Config) { mustSet(t, c, "connections.max.reauth.ms", "1500") })
	ctx := testContext(t)
	saslAddr := tb.srv.ListenerAddr("SASL_PLAINTEXT")
	mech := kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism())
	cl := saslClient(t, saslAddr, mech, kgo.DefaultProduceTopic("reauth"))
	before := testutil.ToFloat64(tb.srv.metrics.saslAuthentications.WithLabelValues("PLAIN", "success"))
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce across re-authentications: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // a steady producer, not a wait for a condition
	}
	if got := testutil.ToFloat64(tb.srv.metrics.saslAuthentications.WithLabelValues("PLAIN", "success")) - before; got < 2 {
		t.Fatalf("%v re-authentications in 4 s with a 1.5 s session", got)
	}

	// A raw client that authenticates and then idles past its session.
	conn := dialRawTo(t, saslAddr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if r := roundTrip[*kmsg.SASLHandshakeResponse](conn, hs); r.ErrorCode != 0 {
		t.Fatalf("PLAIN handshake: code %d", r.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 1, []byte("\x00carol\x00carol-secret")
	auResp := roundTrip[*kmsg.SASLAuthenticateResponse](conn, au)
	if auResp.ErrorCode != 0 || auResp.SessionLifetimeMillis <= 0 || auResp.SessionLifetimeMillis > 1500 {
		t.Fatalf("authenticate: code %d, session lifetime %d ms", auResp.ErrorCode, auResp.SessionLifetimeMillis)
	}
	time.Sleep(time.Duration(auResp.SessionLifetimeMillis)*time.Millisecond + 100*time.Millisecond) // the session must run out
	conn.send(kmsg.NewPtrMetadataRequest())
	conn.expectClosed("request after the session ended")
}

// TestSASLSaramaScramAndHandshakeV0: sarama (its own SCRAM client from
// xdg-go) over SASL_SSL, and sarama's PLAIN with the pre-KIP-152
// SaslHandshake v0 (raw tokens after the handshake).
func TestSASLSaramaScramAndHandshakeV0(t *testing.T) {
	tb, f := startSASLBroker(t)
	cases := []struct {
		name string
		addr string
		set  func(c *sarama.Config)
	}{
		{"scram-512-tls", tb.srv.ListenerAddr("SASL_SSL"), func(c *sarama.Config) {
			c.Net.TLS.Enable, c.Net.TLS.Config = true, f.clientTLS(t, false)
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			c.Net.SASL.User, c.Net.SASL.Password = "admin", "admin,secret"
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: xscram.SHA512} }
		}},
		{"plain-v0", tb.srv.ListenerAddr("SASL_PLAINTEXT"), func(c *sarama.Config) {
			c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
			c.Net.SASL.Version = sarama.SASLHandshakeV0
			c.ApiVersionsRequest = false // sarama's rule for handshake v0
			c.Net.SASL.User, c.Net.SASL.Password = "carol", "carol-secret"
		}},
	}
	for _, c := range cases {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V2_8_0_0
		cfg.Net.SASL.Enable = true
		cfg.Producer.Return.Successes = true
		c.set(cfg)
		p, err := sarama.NewSyncProducer([]string{c.addr}, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sarama-" + c.name, Value: sarama.StringEncoder(c.name)}); err != nil {
			t.Fatalf("%s: produce: %v", c.name, err)
		}
		p.Close()
	}
}

// xdgSCRAM is sarama's SCRAMClient over xdg-go/scram's client.
type xdgSCRAM struct {
	hash xscram.HashGeneratorFcn
	conv *xscram.ClientConversation
}

func (x *xdgSCRAM) Begin(user, password, authz string) error {
	c, err := x.hash.NewClient(user, password, authz)
	if err != nil {
		return err
	}
	x.conv = c.NewConversation()
	return nil
}
func (x *xdgSCRAM) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAM) Done() bool                            { return x.conv.Done() }

// dialRawTo is testBroker.dialRaw for one listener's address.
func dialRawTo(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

// TestDescribeConfigsShowsSecuritySettings: DescribeConfigs of the broker
// lists the security settings given, with JAAS lines and key material as
// sensitive nulls (kadm, as kafka-configs --describe --entity-type brokers).
func TestDescribeConfigsShowsSecuritySettings(t *testing.T) {
	tb, _ := startSASLBroker(t)
	rcs, err := kadm.NewClient(tb.client()).DescribeBrokerConfigs(testContext(t), tb.srv.cfg.NodeID)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe: %v %+v", err, rcs)
	}
	byName := map[string]kadm.Config{}
	for _, c := range rcs[0].Configs {
		byName[c.Key] = c
	}
	if c := byName["listener.name.sasl_plaintext.sasl.enabled.mechanisms"]; c.MaybeValue() != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" || c.Sensitive {
		t.Fatalf("sasl.enabled.mechanisms: %+v", c)
	}
	jaas := byName["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
	if !jaas.Sensitive || jaas.Value != nil {
		t.Fatalf("the JAAS line is not hidden: %+v", jaas)
	}
	if c := byName["ssl.keystore.location"]; c.Sensitive || c.MaybeValue() == "" {
		t.Fatalf("ssl.keystore.location: %+v", c)
	}
}
