package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strata-streaming/strata/internal/testcerts"
	"github.com/strata-streaming/strata/internal/tlsconf"
)

// TestSecureCluster is the issue's "done when": three strata server
// processes with SASL_SSL (SCRAM-SHA-512) as their only Kafka listener,
// between nodes too, mutual TLS on the raft port, ACLs and quotas. The
// admin manages a user, ACLs and a quota through Kafka's APIs (kadm);
// librdkafka (kcat) as that user produces and consumes a replicated topic
// and is refused another; a wrong password is refused.
func TestSecureCluster(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "cluster")
	node := ca.Issue("broker", "127.0.0.1") // every node's certificate: User:broker
	// --listen's listener is named PLAINTEXT; the map makes it SASL_SSL.
	c := startCluster(t,
		"--set", "listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:SSL",
		"--set", "controller.listener.names=CONTROLLER",
		"--set", "ssl.keystore.location="+node.Keystore,
		"--set", "ssl.truststore.location="+ca.File,
		"--set", "ssl.principal.mapping.rules=RULE:^CN=([^,]*),.*$/$1/,DEFAULT",
		"--set", "sasl.enabled.mechanisms=SCRAM-SHA-512",
		"--set", `listener.name.plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret";`,
		"--set", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--set", "super.users=User:broker;User:admin",
		"--add-scram", "SCRAM-SHA-512=[name=broker,password=broker-secret]",
		"--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]",
	)
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	src, err := tlsconf.New(map[string]string{tlsconf.TruststoreLocation: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	login := func(user, pass string, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DialTLSConfig(src.ClientConfig()),
			kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()), kgo.RetryTimeout(30 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(login("admin", "admin-secret"))
	waitForCluster(t, 60*time.Second, "three brokers over SASL_SSL", new(string), func() (bool, string) {
		md, err := adm.Metadata(ctx)
		return err == nil && len(md.Brokers) == 3, errString(err)
	})
	if res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "alice-secret"}}); err != nil || res["alice"].Err != nil {
		t.Fatalf("create alice: %v %+v", err, res)
	}
	createReplicatedTopic(t, adm, "secure-orders", 3, 3, nil)
	createReplicatedTopic(t, adm, "secure-payroll", 1, 3, nil)
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("secure-orders").Operations(kadm.OpRead, kadm.OpWrite),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("secure-app").Operations(kadm.OpRead),
	} {
		if res, err := adm.CreateACLs(ctx, b); err != nil || res[0].Err != nil {
			t.Fatalf("create ACLs: %v %+v", err, res)
		}
	}
	alice := "alice"
	if res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &alice}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 10 << 20}}}}); err != nil || res[0].Err != nil {
		t.Fatalf("quota: %v %+v", err, res)
	}
	quotas, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil || len(quotas) != 1 || quotas[0].Values[0].Value != 10<<20 {
		t.Fatalf("describe quotas: %v %+v", err, quotas)
	}

	as := func(user, pass string) []string {
		return []string{"-b", strings.Join(addrs, ","), "-X", "security.protocol=sasl_ssl", "-X", "ssl.ca.location=" + ca.File,
			"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=" + user, "-X", "sasl.password=" + pass}
	}
	input, want := kcatLines(0, 300)
	mustRun(t, time.Minute, input, kcat, append(as("alice", "alice-secret"), "-P", "-t", "secure-orders", "-K", ":", "-X", "acks=all")...)
	got := mustRun(t, time.Minute, "", kcat, append(as("alice", "alice-secret"), "-C", "-t", "secure-orders", "-o", "beginning", "-e", "-q", "-f", "%k %s\n")...)
	if lines := strings.Split(strings.TrimSpace(got.stdout), "\n"); len(lines) != 300 {
		t.Fatalf("alice consumed %d records, want 300 (want %q…)", len(lines), clip(want, 100))
	}
	denied := runCmd(t, 30*time.Second, "x\n", kcat, append(as("alice", "alice-secret"), "-P", "-t", "secure-payroll")...)
	if denied.exitCode == 0 || !strings.Contains(strings.ToLower(denied.stderr), "authoriz") {
		t.Fatalf("alice producing to secure-payroll: exit %d, %s", denied.exitCode, clip(denied.stderr, 800))
	}
	wrong := runCmd(t, 30*time.Second, "", kcat, append(as("alice", "not-it"), "-L", "-m", "5")...)
	if wrong.exitCode == 0 || !strings.Contains(wrong.stderr, "Authentication failed") && !strings.Contains(wrong.stderr, "authentication failed") {
		t.Fatalf("a wrong password: exit %d, %s", wrong.exitCode, clip(wrong.stderr, 800))
	}

	// The same with franz-go: the records alice wrote are there for a
	// group she may read, and the payroll topic is hidden from her.
	cl := login("alice", "alice-secret", kgo.ConsumeTopics("secure-orders"), kgo.ConsumerGroup("secure-app"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	n := 0
	for n < 300 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("alice's group consumer: %v", err)
		}
		n += fs.NumRecords()
	}
	md, err := kadm.NewClient(cl).Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md.Topics["secure-payroll"]; ok {
		t.Fatal("alice's metadata shows secure-payroll")
	}
	res, err := kadm.NewClient(cl).CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("secure-payroll").Operations(kadm.OpRead))
	if err == nil && len(res) > 0 {
		err = res[0].Err
	}
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice granting herself an ACL: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
