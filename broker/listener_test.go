package broker

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/testcerts"
	"github.com/strata-streaming/strata/internal/tlsconf"
)

// tlsFixture is a CA, a broker certificate for 127.0.0.1 and a client
// certificate for alice, generated for one test.
type tlsFixture struct {
	ca             *testcerts.CA
	server, client testcerts.Leaf
}

func newTLSFixture(t testing.TB) tlsFixture {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "strata-test")
	return tlsFixture{ca: ca, server: ca.Issue("broker", "127.0.0.1"), client: ca.Issue("alice")}
}

// clientTLS is a client's TLS configuration trusting the fixture's CA,
// presenting the client certificate when withCert.
func (f tlsFixture) clientTLS(t testing.TB, withCert bool) *tls.Config {
	props := map[string]string{tlsconf.TruststoreLocation: f.ca.File}
	if withCert {
		props[tlsconf.KeystoreLocation] = f.client.Keystore
	}
	src, err := tlsconf.New(props)
	if err != nil {
		t.Fatal(err)
	}
	return src.ClientConfig()
}

func mustSet(t testing.TB, c *Config, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if err := c.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListenersPlaintextSSLAndMutualTLS: one broker with a PLAINTEXT, an
// SSL and an mTLS listener. Each serves produce and fetch, Metadata
// answers with the endpoint of the listener asked, the mTLS listener
// refuses clients without a certificate and names the rest by their
// mapped certificate subject, and garbage on either kind of port closes
// only that connection.
func TestListenersPlaintextSSLAndMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	tb := startTestBroker(t, func(c *Config) {
		mustSet(t, c,
			"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
			"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
			"ssl.keystore.type", "PEM",
			"ssl.keystore.location", f.server.Keystore,
			"ssl.truststore.location", f.ca.File,
			"listener.name.mtls.ssl.client.auth", "required",
			"listener.name.mtls.ssl.principal.mapping.rules", "RULE:^CN=([^,]*),.*$/$1/",
		)
	})
	ctx := testContext(t)
	listeners := map[string][]kgo.Opt{
		"PLAINTEXT": nil,
		"SSL":       {kgo.DialTLSConfig(f.clientTLS(t, false))},
		"MTLS":      {kgo.DialTLSConfig(f.clientTLS(t, true))},
	}
	for name, opts := range listeners {
		addr := tb.srv.ListenerAddr(name)
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.RetryTimeout(20 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		topic := "via-" + strings.ToLower(name)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(name)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", name, err)
		}
		md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err != nil {
			t.Fatalf("%s: metadata: %v", name, err)
		}
		_, port, _ := net.SplitHostPort(addr)
		if len(md.Brokers) != 1 || strconv.Itoa(int(md.Brokers[0].Port)) != port {
			t.Fatalf("%s: metadata brokers %+v, want port %s", name, md.Brokers, port)
		}
		got := consumeKeysValues(t, addr, topic, opts)
		if got != name {
			t.Fatalf("%s: consumed %q", name, got)
		}
	}

	// The mTLS connection is User:alice; the others are anonymous.
	principals := map[string]string{}
	tb.srv.connsMu.Lock()
	for c := range tb.srv.connsMu.conns {
		principals[c.listener.spec.name] = c.principal
	}
	tb.srv.connsMu.Unlock()
	if principals["MTLS"] != "User:alice" || principals["SSL"] != anonymousPrincipal || principals["PLAINTEXT"] != anonymousPrincipal {
		t.Fatalf("principals by listener: %v", principals)
	}

	// No client certificate on the mTLS listener: refused.
	noCert, err := kgo.NewClient(kgo.SeedBrokers(tb.srv.ListenerAddr("MTLS")), kgo.DialTLSConfig(f.clientTLS(t, false)), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer noCert.Close()
	if _, err := (&kmsg.ApiVersionsRequest{}).RequestWith(ctx, noCert); err == nil {
		t.Fatal("the mTLS listener answered a client without a certificate")
	}

	// Kafka bytes on the SSL port and a TLS client on the PLAINTEXT port:
	// each connection is closed unanswered.
	raw, err := net.DialTimeout("tcp", tb.srv.ListenerAddr("SSL"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	frame := binary.BigEndian.AppendUint32(nil, 0)
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.Key()))
	frame = binary.BigEndian.AppendUint16(frame, 0)
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = binary.BigEndian.AppendUint16(frame, 0xffff)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	_ = raw.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := raw.Write(frame); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := raw.Read(buf)
	if err == nil && n >= 8 && binary.BigEndian.Uint32(buf[4:]) == 7 {
		t.Fatal("the SSL listener answered a plaintext Kafka request")
	}
	raw.Close()
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", tb.srv.ListenerAddr("PLAINTEXT"), f.clientTLS(t, false))
	if err == nil {
		tc.Close()
		t.Fatal("a TLS handshake succeeded on the PLAINTEXT listener")
	}
	// The broker still serves TLS clients.
	if got := consumeKeysValues(t, tb.srv.ListenerAddr("SSL"), "via-ssl", listeners["SSL"]); got != "SSL" {
		t.Fatalf("after bad connections: consumed %q", got)
	}
}

// consumeKeysValues reads the one record of topic and returns its value.
func consumeKeysValues(t *testing.T, addr, topic string, opts []kgo.Opt) string {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		var val string
		fs.EachRecord(func(r *kgo.Record) { val = string(r.Value) })
		if val != "" {
			return val
		}
	}
}

// TestListenerConfigRefused: listener settings that cannot be served, or
// security settings that would not be enforced, stop the broker at start
// with a message naming the property.
func TestListenerConfigRefused(t *testing.T) {
	f := newTLSFixture(t)
	cases := []struct {
		kv   []string
		want string
	}{
		{[]string{"listeners", "PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0"}, "twice"},
		{[]string{"listeners", "127.0.0.1:9092"}, "NAME://host:port"},
		{[]string{"listeners", "CLIENT://127.0.0.1:0"}, "listener.security.protocol.map"},
		{[]string{"listeners", "SSL://127.0.0.1:0"}, "ssl.keystore.location"},
		{[]string{"listeners", "SASL_SSL://127.0.0.1:0", "ssl.keystore.location", f.server.Keystore}, "sasl.enabled.mechanisms"},
		{[]string{"listeners", "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "GSSAPI"}, "GSSAPI is not supported"},
		{[]string{"listeners", "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "PLAIN", "sasl.kerberos.service.name", "kafka"}, "not supported"},
		{[]string{"listeners", "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "SCRAM-SHA-512"}, "needs username and password"},
		{[]string{"listeners", "PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name", "SSL"}, "inter.broker.listener.name"},
		{[]string{"listeners", "PLAINTEXT://127.0.0.1:0", "advertised.listeners", "SSL://h:1"}, "advertised.listeners"},
		{[]string{"listeners", "PLAINTEXT://127.0.0.1:0", "listener.name.ssl.ssl.client.auth", "required"}, "no listener SSL"},
		{[]string{"listeners", "PLAINTEXT://127.0.0.1:0", "ssl.keymanager.algorithm", "SunX509"}, "not supported"},
		{[]string{"listeners", "SSL://127.0.0.1:0", "ssl.keystore.location", f.server.Keystore, "ssl.keystore.type", "JKS"}, "only PEM"},
		{[]string{"listeners", "SSL://127.0.0.1:0", "ssl.keystore.location", f.server.Keystore, "ssl.client.auth", "required"}, "truststore"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		mustSet(t, &cfg, c.kv...)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error mentioning %q", c.kv, err, c.want)
		}
	}
}

// TestReplicationOverMutualTLS: three nodes whose only listener is SSL
// with client certificates required; replica fetchers and transaction
// markers connect with the node's own certificate, so acks=all writes and
// a transaction complete and every replica converges.
func TestReplicationOverMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	c := startTestCluster(t, 3, func(cfg *Config) {
		mustSet(t, cfg,
			"listeners", "INTERNAL://"+cfg.Listen,
			"listener.security.protocol.map", "INTERNAL:SSL",
			"inter.broker.listener.name", "INTERNAL",
			"ssl.keystore.location", f.server.Keystore,
			"ssl.truststore.location", f.ca.File,
			"ssl.client.auth", "required",
		)
	})
	ctx := testContext(t)
	tlsOpt := kgo.DialTLSConfig(f.clientTLS(t, true))
	adm := kadm.NewClient(c.client(tlsOpt))
	if res, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"min.insync.replicas": ptr("3")}, "secure"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	produceTxnConsume(t, c, tlsOpt, "secure", "secure-txn", 50)
}

// produceTxnConsume writes n keys k0… with acks=all (followers must
// fetch), one transaction (markers go to every partition leader), and
// reads them all back read_committed, each client dialed with opt.
func produceTxnConsume(t *testing.T, c *testCluster, opt kgo.Opt, topic, txnID string, n int) {
	t.Helper()
	ctx := testContext(t)
	cl := c.client(opt, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce %d (min.insync.replicas=3 needs both followers fetching): %v", i, err)
		}
	}
	txn := c.client(opt, kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Key: []byte("txn"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit (markers go to every partition leader): %v", err)
	}
	got := consumeKeys(t, c.client(opt, kgo.FetchIsolationLevel(kgo.ReadCommitted())), topic, n+1)
	if !got["txn"] || !got["k0"] || !got[fmt.Sprintf("k%d", n-1)] {
		t.Fatalf("consumed %d keys, missing some of k0, k%d, txn", len(got), n-1)
	}
}
