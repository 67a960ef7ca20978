package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestConsoleSecurityAPI: the console's ACL, SCRAM user and quota API
// against a broker with SASL/SCRAM and the authorizer. Bad input answers
// 400 (or 404) with a JSON error and changes nothing; what the API adds
// and removes is seen by kadm, a user it adds logs in with franz-go's
// SCRAM and is refused once removed, and no answer echoes a password.
func TestConsoleSecurityAPI(t *testing.T) {
	tb, _ := startSASLBroker(t, func(c *Config) {
		mustSet(t, c, "authorizer.class.name", "strata", "super.users", "User:admin;User:ANONYMOUS")
	})
	base := "http://" + tb.srv.HTTPAddr()
	ctx := testContext(t)
	saslAddr := tb.srv.ListenerAddr("SASL_PLAINTEXT")
	adm := kadm.NewClient(tb.client())

	acl := map[string]any{"principal": "User:alice", "resourceType": "TOPIC", "resourceName": "orders", "operation": "READ"}
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range acl {
			out[key] = val
		}
		out[k] = v
		return out
	}
	entity := []map[string]any{{"type": "user", "name": "alice"}}
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		status       int
		code         string
		errorHas     string
	}{
		{name: "ACL with an unknown operation", method: "POST", path: "/api/v1/acls", body: with("operation", "SMASH"), status: 400, errorHas: "operation"},
		{name: "ACL with a bad principal", method: "POST", path: "/api/v1/acls", body: with("principal", "alice"), status: 400, errorHas: "Type:name"},
		{name: "ACL without a principal", method: "POST", path: "/api/v1/acls", body: with("principal", ""), status: 400, errorHas: "principal is required"},
		{name: "ACL with operation ANY", method: "POST", path: "/api/v1/acls", body: with("operation", "ANY"), status: 400, errorHas: "operation is required"},
		{name: "ACL with an unknown resource type", method: "POST", path: "/api/v1/acls", body: with("resourceType", "TABLE"), status: 400, errorHas: "resourceType"},
		{name: "ACL with pattern MATCH", method: "POST", path: "/api/v1/acls", body: with("patternType", "MATCH"), status: 400, errorHas: "patternType"},
		{name: "ACL without a resource name", method: "POST", path: "/api/v1/acls", body: with("resourceName", ""), status: 400, errorHas: "resourceName"},
		{name: "ACL with an unknown field", method: "POST", path: "/api/v1/acls", body: with("resource", "x"), status: 400, errorHas: "resource"},
		{name: "ACL filter with an unknown operation", method: "GET", path: "/api/v1/acls?operation=SMASH", status: 400, errorHas: "operation"},
		{name: "delete an ACL that does not exist", method: "DELETE", path: "/api/v1/acls", body: acl, status: 404, errorHas: "no such ACL"},
		{name: "user with a weak iteration count", method: "POST", path: "/api/v1/users", body: map[string]any{"user": "weak", "password": "pw", "iterations": 1000}, status: 400, errorHas: "iterations 1000"},
		{name: "user with too many iterations", method: "POST", path: "/api/v1/users", body: map[string]any{"user": "slow", "password": "pw", "iterations": 100000}, status: 400, errorHas: "iterations"},
		{name: "user with an unknown mechanism", method: "POST", path: "/api/v1/users", body: map[string]any{"user": "md5", "password": "pw", "mechanism": "SCRAM-MD5"}, status: 400, errorHas: "mechanism"},
		{name: "user without a password", method: "POST", path: "/api/v1/users", body: map[string]any{"user": "nopw"}, status: 400, errorHas: "password is required"},
		{name: "user without a name", method: "POST", path: "/api/v1/users", body: map[string]any{"password": "pw"}, status: 400, errorHas: "user is required"},
		{name: "delete an unknown user", method: "DELETE", path: "/api/v1/users/nobody", status: 404, code: "RESOURCE_NOT_FOUND"},
		{name: "delete with an unknown mechanism", method: "DELETE", path: "/api/v1/users/admin?mechanism=SHA-1", status: 400, errorHas: "mechanism"},
		{name: "quota with an unknown key", method: "PUT", path: "/api/v1/quotas", body: map[string]any{"entity": entity, "values": map[string]any{"speed": 1}}, status: 400, errorHas: `"speed"`},
		{name: "quota with a negative value", method: "PUT", path: "/api/v1/quotas", body: map[string]any{"entity": entity, "values": map[string]any{"producer_byte_rate": -1}}, status: 400, errorHas: "positive"},
		{name: "quota with an unknown entity type", method: "PUT", path: "/api/v1/quotas", body: map[string]any{"entity": []map[string]any{{"type": "group", "name": "g"}}, "values": map[string]any{"producer_byte_rate": 1}}, status: 400, errorHas: "entity type"},
		{name: "quota without an entity", method: "PUT", path: "/api/v1/quotas", body: map[string]any{"values": map[string]any{"producer_byte_rate": 1}}, status: 400, errorHas: "entity is required"},
		{name: "quota removal without keys", method: "DELETE", path: "/api/v1/quotas", body: map[string]any{"entity": entity}, status: 400, errorHas: "keys"},
		{name: "users: wrong method", method: "PUT", path: "/api/v1/users", body: "{}", status: 405, errorHas: "PUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := callConsole(t, base, tc.method, tc.path, tc.body, true)
			var e struct{ Error, Code string }
			got.decode(t, &e)
			if got.status != tc.status || e.Code != tc.code || e.Error == "" || !strings.Contains(e.Error, tc.errorHas) {
				t.Fatalf("%s %s: %d %s; want %d code %q error containing %q", tc.method, tc.path, got.status, got.body, tc.status, tc.code, tc.errorHas)
			}
		})
	}
	users, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil || len(users) != 1 {
		t.Fatalf("SCRAM users after the refused requests: %v %v", users, err)
	}

	// ACLs: added through the console, seen by kadm, listed with a
	// filter, removed.
	if got := callConsole(t, base, "POST", "/api/v1/acls", acl, true); got.status != 201 {
		t.Fatalf("create ACL: %d %s", got.status, got.body)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil || len(described) != 1 || len(described[0].Described) != 1 || described[0].Described[0].Operation != kadm.OpRead {
		t.Fatalf("kadm describing the console's ACL: %v %+v", err, described)
	}
	var listed struct {
		Enabled bool
		ACLs    []struct{ Principal, ResourceName, Operation string }
	}
	callConsole(t, base, "GET", "/api/v1/acls?principal=User:alice&operation=READ", nil, false).decode(t, &listed)
	if !listed.Enabled || len(listed.ACLs) != 1 || listed.ACLs[0].ResourceName != "orders" {
		t.Fatalf("listed ACLs: %+v", listed)
	}
	callConsole(t, base, "GET", "/api/v1/acls?operation=WRITE", nil, false).decode(t, &listed)
	if len(listed.ACLs) != 0 {
		t.Fatalf("ACLs with operation WRITE: %+v", listed)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/acls", acl, true); got.status != 200 || !strings.Contains(string(got.body), `"deleted":1`) {
		t.Fatalf("delete ACL: %d %s", got.status, got.body)
	}
	described, err = adm.DescribeACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().AnyResource().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil || len(described[0].Described) != 0 {
		t.Fatalf("alice's ACLs after the delete: %v %+v", err, described)
	}

	// SCRAM users: added through the console (the answer has no
	// password), logs in, is listed with its iterations, removed.
	const password = "dave-s3cret-pw"
	got := callConsole(t, base, "POST", "/api/v1/users", map[string]any{"user": "dave", "password": password, "mechanism": "SCRAM-SHA-256", "iterations": 8192}, true)
	if got.status != 201 || strings.Contains(string(got.body), password) {
		t.Fatalf("add user: %d %s", got.status, got.body)
	}
	dave := func() error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr), kgo.SASL(scram.Auth{User: "dave", Pass: password}.AsSha256Mechanism()))
		if err != nil {
			return err
		}
		defer cl.Close()
		return cl.Ping(ctx)
	}
	waitFor(t, 10*time.Second, "dave to log in", func() bool { return dave() == nil })
	var ul struct {
		Users []struct {
			User        string
			Credentials []struct {
				Mechanism  string
				Iterations int32
			}
		}
	}
	got = callConsole(t, base, "GET", "/api/v1/users", nil, false)
	got.decode(t, &ul)
	if len(ul.Users) != 2 || ul.Users[1].User != "dave" || ul.Users[1].Credentials[0].Iterations != 8192 || strings.Contains(string(got.body), password) {
		t.Fatalf("listed users: %s", got.body)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/users/dave", nil, true); got.status != 204 {
		t.Fatalf("delete user: %d %s", got.status, got.body)
	}
	waitFor(t, 10*time.Second, "dave to be refused", func() bool { return errors.Is(dave(), kerr.SaslAuthenticationFailed) })

	// Quotas: set through the console, seen by kadm, removed.
	q := map[string]any{"entity": entity, "values": map[string]any{"producer_byte_rate": 1048576}}
	if got := callConsole(t, base, "PUT", "/api/v1/quotas", q, true); got.status != 200 {
		t.Fatalf("set quota: %d %s", got.status, got.body)
	}
	quotas, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil || len(quotas) != 1 || *quotas[0].Entity[0].Name != "alice" || quotas[0].Values[0].Value != 1048576 {
		t.Fatalf("kadm describing the console's quota: %v %+v", err, quotas)
	}
	if got := callConsole(t, base, "GET", "/api/v1/quotas", nil, false); !strings.Contains(string(got.body), `"producer_byte_rate":1048576`) {
		t.Fatalf("listed quotas: %d %s", got.status, got.body)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/quotas", map[string]any{"entity": entity, "keys": []string{"producer_byte_rate"}}, true); got.status != 204 {
		t.Fatalf("remove quota: %d %s", got.status, got.body)
	}
	if quotas, err = adm.DescribeClientQuotas(ctx, false, nil); err != nil || len(quotas) != 0 {
		t.Fatalf("quotas after the removal: %v %+v", err, quotas)
	}
}

// TestConsoleSecurityDisabled: without an authorizer the ACL list says
// so instead of failing.
func TestConsoleSecurityDisabled(t *testing.T) {
	tb := startTestBroker(t)
	got := callConsole(t, "http://"+tb.srv.HTTPAddr(), "GET", "/api/v1/acls", nil, false)
	if got.status != 200 || !strings.Contains(string(got.body), `"enabled":false`) {
		t.Fatalf("ACLs without an authorizer: %d %s", got.status, got.body)
	}
}
