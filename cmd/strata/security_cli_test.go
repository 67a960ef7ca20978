package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/broker"
	"github.com/strata-streaming/strata/internal/testcerts"
)

// startSecureBroker runs a broker with a SASL_SSL listener (SCRAM-SHA-512
// and PLAIN, PLAIN's admin from the JAAS line) and an authorizer with
// User:admin as super user; it returns the SASL_SSL address and the CA's
// file.
func startSecureBroker(t *testing.T) (addr, caFile string) {
	t.Helper()
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "cli")
	leaf := ca.Issue("broker", "127.0.0.1")
	srv := startBrokerServer(t, func(cfg *broker.Config) {
		for _, kv := range [][2]string{
			{"listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"},
			{"ssl.keystore.location", leaf.Keystore},
			{"sasl.enabled.mechanisms", "SCRAM-SHA-512,PLAIN"},
			{"listener.name.sasl_ssl.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw";`},
			{"authorizer.class.name", "strata"},
			{"super.users", "User:admin"},
			{"connection.failed.authentication.delay.ms", "1"},
		} {
			if err := cfg.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
	})
	return srv.ListenerAddr("SASL_SSL"), ca.File
}

// clientProperties writes a client.properties as a Kafka user would.
func clientProperties(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte("# written by the test\n"+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecurityCommands: with --command-config (a Kafka client.properties
// for SASL_SSL) the admin creates a SCRAM user, grants it ACLs and sets
// quotas; the user, with its own client.properties, sees what it was
// granted and is refused the rest; bad client settings fail with one line.
func TestSecurityCommands(t *testing.T) {
	addr, ca := startSecureBroker(t)
	admin := clientProperties(t,
		"security.protocol=SASL_SSL",
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+ca,
		"sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw";`)
	as := func(props string, args ...string) []string {
		return append([]string{"--command-config", props}, args...)
	}

	out := cli(t, addr, "alice-pw\n", as(admin, "user", "create", "alice", "--password-file", "-")...)
	if !strings.Contains(out, "user alice: SCRAM-SHA-512 credential set") {
		t.Fatalf("user create: %q", out)
	}
	if out = cli(t, addr, "", as(admin, "user", "list")...); !regexp.MustCompile(`(?m)^alice\s+SCRAM-SHA-512\s+8192$`).MatchString(out) {
		t.Fatalf("user list: %q", out)
	}
	cli(t, addr, "", as(admin, "topic", "create", "orders")...)
	cli(t, addr, "", as(admin, "topic", "create", "secret")...)
	out = cli(t, addr, "", as(admin, "acl", "create", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "describe", "--topic", "orders")...)
	if !strings.Contains(out, "created 2 ACLs") {
		t.Fatalf("acl create: %q", out)
	}
	out = cli(t, addr, "", as(admin, "acl", "list", "--topic", "orders")...)
	if !regexp.MustCompile(`User:alice\s+\*\s+WRITE\s+ALLOW\s+TOPIC\s+orders\s+LITERAL`).MatchString(out) || strings.Count(out, "User:alice") != 2 {
		t.Fatalf("acl list: %q", out)
	}

	alice := clientProperties(t,
		"security.protocol=SASL_SSL",
		"ssl.truststore.location="+ca,
		"sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-pw";`)
	cli(t, addr, "k:v\n", as(alice, "produce", "orders", "--key-separator", ":")...)
	if out = cli(t, addr, "", as(alice, "topic", "list")...); !strings.Contains(out, "orders") || strings.Contains(out, "secret") {
		t.Fatalf("alice's topic list: %q", out)
	}
	if err := cliErr(t, addr, "", as(alice, "acl", "list")...); !strings.Contains(err.Error(), "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("alice lists ACLs: %v", err)
	}
	if err := cliErr(t, addr, "", as(alice, "quota", "describe")...); !strings.Contains(err.Error(), "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("alice describes quotas: %v", err)
	}

	out = cli(t, addr, "", as(admin, "quota", "set", "--client-id", "ingest", "--add-config", "producer_byte_rate=1048576,request_percentage=50")...)
	if !strings.Contains(out, "updated") {
		t.Fatalf("quota set: %q", out)
	}
	cli(t, addr, "", as(admin, "quota", "set", "--user-default", "--add-config", "consumer_byte_rate=2097152")...)
	out = cli(t, addr, "", as(admin, "quota", "describe")...)
	if !regexp.MustCompile(`client-id=ingest\s+producer_byte_rate\s+1048576`).MatchString(out) || !regexp.MustCompile(`user=<default>\s+consumer_byte_rate\s+2097152`).MatchString(out) {
		t.Fatalf("quota describe: %q", out)
	}
	if out = cli(t, addr, "", as(admin, "quota", "describe", "--user-default")...); strings.Contains(out, "ingest") {
		t.Fatalf("quota describe --user-default: %q", out)
	}
	cli(t, addr, "", as(admin, "quota", "set", "--client-id", "ingest", "--delete-config", "request_percentage")...)
	if out = cli(t, addr, "", as(admin, "quota", "describe", "--client-id", "ingest")...); strings.Contains(out, "request_percentage") {
		t.Fatalf("after --delete-config: %q", out)
	}
	if err := cliErr(t, addr, "", as(admin, "quota", "set", "--client-id", "x", "--add-config", "producer_byte_rate=-1")...); !strings.Contains(err.Error(), "INVALID_REQUEST") {
		t.Fatalf("negative quota: %v", err)
	}

	out = cli(t, addr, "", as(admin, "acl", "delete", "--principal", "User:alice", "--topic", "orders")...)
	if !strings.Contains(out, "deleted 2 ACLs") {
		t.Fatalf("acl delete: %q", out)
	}
	if out = cli(t, addr, "", as(alice, "topic", "list")...); strings.Contains(out, "orders") {
		t.Fatalf("alice still sees orders: %q", out)
	}
	if out = cli(t, addr, "", as(admin, "user", "delete", "alice")...); !strings.Contains(out, "1 credentials deleted") {
		t.Fatalf("user delete: %q", out)
	}
	if err := cliErr(t, addr, "", as(alice, "topic", "list")...); !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("deleted user: %v", err)
	}

	for name, tc := range map[string]struct {
		lines []string
		want  string
	}{
		"gssapi":       {[]string{"security.protocol=SASL_SSL", "ssl.truststore.location=" + ca, "sasl.mechanism=GSSAPI"}, "sasl.mechanism=GSSAPI is not supported"},
		"no jaas":      {[]string{"security.protocol=SASL_SSL", "ssl.truststore.location=" + ca, "sasl.mechanism=PLAIN"}, "needs sasl.jaas.config"},
		"wrong module": {[]string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`}, "ScramLoginModule"},
		"jks":          {[]string{"security.protocol=SSL", "ssl.truststore.type=JKS", "ssl.truststore.location=x.jks"}, "only PEM"},
		"unused ssl":   {[]string{"ssl.truststore.location=" + ca}, "would not be used"},
		"protocol":     {[]string{"security.protocol=TLS"}, "security.protocol=TLS"},
		"wrong pw": {[]string{"security.protocol=SASL_SSL", "ssl.truststore.location=" + ca, "sasl.mechanism=PLAIN",
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="nope";`}, "SASL_AUTHENTICATION_FAILED"},
	} {
		err := cliErr(t, addr, "", as(clientProperties(t, tc.lines...), "topic", "list")...)
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "nope") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := cliErr(t, addr, "", as(filepath.Join(t.TempDir(), "missing"), "topic", "list")...); !strings.Contains(err.Error(), "--command-config") {
		t.Errorf("missing file: %v", err)
	}
}
