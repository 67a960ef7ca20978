package broker

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/tlsconf"
)

// TestRaftOverMutualTLS: three voters and a broker-only observer with
// controller.listener.names on SSL: the quorum elects, the observer
// follows and hosts replicas, all over mutual TLS with the nodes'
// certificate (a super user). A client certificate of the same CA that is
// no super user, a TLS client without a certificate and plaintext bytes
// are each refused on the raft port.
func TestRaftOverMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	secure := func(cfg *Config) {
		mustSet(t, cfg,
			"listeners", "INTERNAL://"+cfg.Listen,
			"listener.security.protocol.map", "INTERNAL:SSL,CONTROLLER:SSL",
			"inter.broker.listener.name", "INTERNAL",
			"controller.listener.names", "CONTROLLER",
			"ssl.keystore.location", f.server.Keystore,
			"ssl.truststore.location", f.ca.File,
			"listener.name.internal.ssl.client.auth", "required",
			"ssl.principal.mapping.rules", "RULE:^CN=([^,]*),.*$/$1/,DEFAULT",
			"authorizer.class.name", "strata",
			"super.users", "User:broker",
		)
	}
	c := startTestCluster(t, 3, secure)
	bcfg := DefaultConfig()
	bcfg.NodeID, bcfg.ProcessRoles = 4, "broker"
	bcfg.DataDir, bcfg.Listen, bcfg.HTTPListen = t.TempDir(), freeLoopbackAddr(t), ""
	bcfg.ControllerQuorumVoters = c.nodes[0].cfg.ControllerQuorumVoters
	secure(&bcfg)
	c.nodes = append(c.nodes, &testBroker{t: t, cfg: bcfg})
	c.startAll()

	ctx := testContext(t)
	nodeCert, err := tlsconf.New(map[string]string{tlsconf.TruststoreLocation: f.ca.File, tlsconf.KeystoreLocation: f.server.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	cl := c.client(kgo.DialTLSConfig(nodeCert.ClientConfig()), kgo.DefaultProduceTopic("raft-tls"), kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	waitUntil(t, 20*time.Second, "four brokers", func() bool {
		md, err := adm.Metadata(ctx)
		return err == nil && len(md.Brokers) == 4
	})
	if res, err := adm.CreateTopic(ctx, 4, 3, nil, "raft-tls"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	for i := range 50 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	raft := c.nodes[0].cfg.ControllerListen
	refused := func(what string, conn net.Conn) {
		t.Helper()
		defer conn.Close()
		_, _ = conn.Write([]byte{0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8})
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := conn.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("%s: the raft port kept the connection (%v)", what, err)
		}
	}
	alice, err := tlsconf.New(map[string]string{tlsconf.TruststoreLocation: f.ca.File, tlsconf.KeystoreLocation: f.client.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	aliceCfg := alice.ClientConfig()
	aliceCfg.ServerName = "127.0.0.1"
	if conn, err := tls.Dial("tcp", raft, aliceCfg); err == nil {
		refused("a certificate that is no super user", conn)
	}
	pool := nodeCert.ClientConfig().RootCAs
	if conn, err := tls.Dial("tcp", raft, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err == nil {
		refused("a TLS client without a certificate", conn)
	}
	plain, err := net.Dial("tcp", raft)
	if err != nil {
		t.Fatal(err)
	}
	refused("plaintext", plain)

	// The quorum is unharmed.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the refusals: %v", err)
	}
}
