package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestACLsWithKcat: a broker with authorizer.class.name and PLAIN users
// on a SASL_PLAINTEXT listener. The super user creates ACLs with kadm;
// librdkafka (kcat) as alice produces and consumes the topic she was
// granted, and is refused another; bob, with no ACL, sees no topics and
// cannot produce.
func TestACLsWithKcat(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	s := newServer(t, nil, nil)
	saslAddr := freeAddr(t)
	s.extra = []string{
		"--set", fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_PLAINTEXT://%s", s.addr, saslAddr),
		"--set", "sasl.enabled.mechanisms=PLAIN",
		"--set", `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";`,
		"--set", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
		"--set", "super.users=User:admin",
	}
	s.start()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr), kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "acl-orders", "acl-secret"); err != nil {
		t.Fatal(err)
	}
	res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("acl-orders").Operations(kadm.OpRead, kadm.OpWrite))
	if err != nil || res[0].Err != nil {
		t.Fatalf("create ACLs: %v %+v", err, res)
	}

	as := func(user string) []string {
		return []string{"-b", saslAddr, "-X", "security.protocol=sasl_plaintext", "-X", "sasl.mechanisms=PLAIN",
			"-X", "sasl.username=" + user, "-X", "sasl.password=" + user + "-pw"}
	}
	input, want := kcatLines(0, 100)
	mustRun(t, time.Minute, input, kcat, append(as("alice"), "-P", "-t", "acl-orders", "-K", ":")...)
	got := mustRun(t, 30*time.Second, "", kcat, append(as("alice"), "-C", "-t", "acl-orders", "-o", "beginning", "-e", "-q", "-f", "%o %k %s\n")...)
	if got.stdout != want {
		t.Fatalf("alice consumed: %s", firstLineDiff(got.stdout, want))
	}
	md := mustRun(t, 30*time.Second, "", kcat, append(as("alice"), "-L", "-J")...)
	if !strings.Contains(md.stdout, `"acl-orders"`) || strings.Contains(md.stdout, `"acl-secret"`) {
		t.Fatalf("alice's metadata lists %s", clip(md.stdout, 1500))
	}
	denied := runCmd(t, 30*time.Second, "refused\n", kcat, append(as("alice"), "-P", "-t", "acl-secret")...)
	if denied.exitCode == 0 || !strings.Contains(strings.ToLower(denied.stderr), "authoriz") {
		t.Fatalf("alice producing to acl-secret: exit %d, stderr %s", denied.exitCode, clip(denied.stderr, 1500))
	}
	md = mustRun(t, 30*time.Second, "", kcat, append(as("bob"), "-L", "-J")...)
	if strings.Contains(md.stdout, `"acl-orders"`) {
		t.Fatalf("bob's metadata lists acl-orders: %s", clip(md.stdout, 1500))
	}
	denied = runCmd(t, 30*time.Second, "refused\n", kcat, append(as("bob"), "-P", "-t", "acl-orders")...)
	if denied.exitCode == 0 || !strings.Contains(strings.ToLower(denied.stderr), "authoriz") {
		t.Fatalf("bob producing to acl-orders: exit %d, stderr %s", denied.exitCode, clip(denied.stderr, 1500))
	}
}
