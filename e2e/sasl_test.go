package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/testcerts"
	"github.com/strata-streaming/strata/internal/testoauth"
)

// TestSASLClients: one broker with a SASL_SSL listener (SCRAM-SHA-512 and
// PLAIN, the first admin from --add-scram) driven by librdkafka (kcat) and
// kafkajs with their own SASL and TLS code: produce and consume round-trip,
// a wrong password and an unknown mechanism are refused.
func TestSASLClients(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "sasl")
	broker := ca.Issue("broker", "127.0.0.1")
	s := newServer(t, nil, nil)
	saslAddr := freeAddr(t)
	s.extra = []string{
		"--set", fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_SSL://%s", s.addr, saslAddr),
		"--set", "ssl.keystore.location=" + broker.Keystore,
		"--set", "sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN",
		"--set", `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="carol-secret";`,
		"--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]",
	}
	s.start()

	kcatArgs := func(mech, user, pass string) []string {
		return []string{"-b", saslAddr, "-X", "security.protocol=sasl_ssl", "-X", "ssl.ca.location=" + ca.File,
			"-X", "sasl.mechanisms=" + mech, "-X", "sasl.username=" + user, "-X", "sasl.password=" + pass}
	}
	for _, c := range []struct{ mech, user, pass string }{
		{"SCRAM-SHA-512", "admin", "admin-secret"},
		{"PLAIN", "carol", "carol-secret"},
	} {
		t.Run("kcat-"+c.mech, func(t *testing.T) {
			args := kcatArgs(c.mech, c.user, c.pass)
			topic := "sasl-" + strings.ToLower(c.mech)
			input, want := kcatLines(0, 200)
			mustRun(t, time.Minute, input, kcat, append(args, "-P", "-t", topic, "-K", ":")...)
			got := mustRun(t, 30*time.Second, "", kcat, append(args, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o %k %s\n")...)
			if got.stdout != want {
				t.Fatalf("consumed over SASL_SSL %s: %s", c.mech, firstLineDiff(got.stdout, want))
			}
		})
	}
	t.Run("kcat-refused", func(t *testing.T) {
		res := runCmd(t, 30*time.Second, "", kcat, append(kcatArgs("SCRAM-SHA-512", "admin", "not-the-password"), "-L", "-m", "5")...)
		if res.exitCode == 0 || !strings.Contains(res.stderr, "authentication failed: invalid credentials") {
			t.Fatalf("wrong SCRAM password: exit %d, stderr %s", res.exitCode, clip(res.stderr, 1500))
		}
		res = runCmd(t, 30*time.Second, "", kcat, append(kcatArgs("SCRAM-SHA-256", "admin", "admin-secret"), "-L", "-m", "5")...)
		if res.exitCode == 0 || !strings.Contains(res.stderr, "SCRAM-SHA-256") {
			t.Fatalf("mechanism the listener lacks: exit %d, stderr %s", res.exitCode, clip(res.stderr, 1500))
		}
	})
	t.Run("kafkajs", func(t *testing.T) {
		node := requireTool(t, "node", "apt-get install -y nodejs")
		script := filepath.Join(moduleRoot, "e2e", "kafkajs", "sasl.js")
		run := func(pass, topic string) (map[string]any, cmdResult) {
			res := runCmd(t, 2*time.Minute, "", node, script, saslAddr, ca.File, "scram-sha-512", "admin", pass, topic, "25")
			return lastJSONLine(res.stdout), res
		}
		out, res := run("admin-secret", "sasl-kafkajs")
		if out["ok"] != true || out["consumed"] != float64(25) {
			t.Fatalf("kafkajs SCRAM-SHA-512 over TLS: %v (%s)", out, res)
		}
		out, res = run("wrong", "sasl-kafkajs-refused")
		if out["ok"] != false || out["type"] != "KafkaJSSASLAuthenticationError" {
			t.Fatalf("kafkajs with a wrong password: %v (%s)", out, res)
		}
	})
}

// TestOAuthBearerClients: a SASL_SSL listener with OAUTHBEARER validating
// JWTs against the JWKS of a local authorization server (fetched over
// HTTP). librdkafka (confluent-kafka-python's oauth_cb) and kafkajs
// present tokens signed here; an expired token is refused with the
// reason.
func TestOAuthBearerClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "oauth")
	broker := ca.Issue("broker", "127.0.0.1")
	iss := testoauth.New(t)
	base := iss.Serve(t, time.Hour)
	s := newServer(t, nil, nil)
	saslAddr := freeAddr(t)
	s.extra = []string{
		"--set", fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_SSL://%s", s.addr, saslAddr),
		"--set", "ssl.keystore.location=" + broker.Keystore,
		"--set", "sasl.enabled.mechanisms=OAUTHBEARER",
		"--set", "sasl.oauthbearer.jwks.endpoint.url=" + base + "/jwks",
		"--set", "sasl.oauthbearer.expected.issuer=" + iss.Name,
		"--set", "sasl.oauthbearer.expected.audience=" + iss.Audience,
	}
	s.start()

	t.Run("librdkafka", func(t *testing.T) {
		py := requireTool(t, "/usr/bin/python3", "apt-get install -y python3-confluent-kafka")
		script := filepath.Join(moduleRoot, "e2e", "python", "oauth_roundtrip.py")
		run := func(ttl time.Duration, topic string) (map[string]any, cmdResult) {
			// librdkafka is told the token lasts an hour, so that an
			// expired one reaches the broker rather than being refused
			// by the client.
			tok := iss.Token(t, "alice", ttl)
			exp := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
			res := runCmd(t, 2*time.Minute, "", py, script, saslAddr, ca.File, tok, exp, topic, "50")
			return lastJSONLine(res.stdout), res
		}
		out, res := run(time.Hour, "oauth-librdkafka")
		if out["ok"] != true || out["consumed"] != float64(50) {
			t.Fatalf("librdkafka OAUTHBEARER over TLS: %v (%s)", out, res)
		}
		out, res = run(-time.Minute, "oauth-librdkafka-refused")
		if out["ok"] != false || !strings.Contains(fmt.Sprint(out), "invalid token: expired") {
			t.Fatalf("librdkafka with an expired token: %v (%s)", out, res)
		}
	})
	t.Run("kafkajs", func(t *testing.T) {
		node := requireTool(t, "node", "apt-get install -y nodejs")
		script := filepath.Join(moduleRoot, "e2e", "kafkajs", "sasl.js")
		run := func(token, topic string) (map[string]any, cmdResult) {
			res := runCmd(t, 2*time.Minute, "", node, script, saslAddr, ca.File, "oauthbearer", "-", token, topic, "25")
			return lastJSONLine(res.stdout), res
		}
		out, res := run(iss.Token(t, "bob", time.Hour), "oauth-kafkajs")
		if out["ok"] != true || out["consumed"] != float64(25) {
			t.Fatalf("kafkajs OAUTHBEARER over TLS: %v (%s)", out, res)
		}
		out, res = run(iss.Token(t, "bob", -time.Minute), "oauth-kafkajs-refused")
		if out["ok"] != false || out["type"] != "KafkaJSSASLAuthenticationError" || !strings.Contains(fmt.Sprint(out["error"]), "expired") {
			t.Fatalf("kafkajs with an expired token: %v (%s)", out, res)
		}
	})
}

// lastJSONLine decodes the summary a client script prints as its last line
// (nil if it printed none).
func lastJSONLine(stdout string) map[string]any {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var out map[string]any
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &out)
	return out
}
