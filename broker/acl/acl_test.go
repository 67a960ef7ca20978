package acl

import "testing"

func bind(t ResourceType, name string, pat PatternType, principal, host string, op Operation, perm Permission) Binding {
	return Binding{ResourceType: int8(t), ResourceName: name, PatternType: int8(pat), Principal: principal, Host: host, Operation: int8(op), Permission: int8(perm)}
}

func TestAuthorize(t *testing.T) {
	bs := []Binding{
		bind(ResourceTopic, "orders", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow),
		bind(ResourceTopic, "logs-", PatternPrefixed, "User:alice", "*", OpWrite, PermissionAllow),
		bind(ResourceTopic, "logs-secret", PatternLiteral, "User:alice", "*", OpAll, PermissionDeny),
		bind(ResourceTopic, "*", PatternLiteral, "User:*", "*", OpDescribe, PermissionAllow),
		bind(ResourceTopic, "pinned", PatternLiteral, "User:carol", "10.0.0.1", OpRead, PermissionAllow),
		bind(ResourceGroup, "g", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow),
		bind(ResourceGroup, "g", PatternLiteral, "User:alice", "*", OpDescribe, PermissionDeny),
		bind(ResourceCluster, ClusterName, PatternLiteral, "User:ops", "*", OpAlterConfigs, PermissionAllow),
	}
	a := NewAuthorizer(bs, []string{"User:admin"}, false)
	cases := []struct {
		principal, host string
		op              Operation
		typ             ResourceType
		name            string
		want            bool
	}{
		{"User:alice", "1.2.3.4", OpRead, ResourceTopic, "orders", true},
		{"User:alice", "1.2.3.4", OpWrite, ResourceTopic, "orders", false},
		{"User:alice", "1.2.3.4", OpDescribe, ResourceTopic, "orders", true}, // READ implies DESCRIBE, and the wildcard
		{"User:bob", "1.2.3.4", OpRead, ResourceTopic, "orders", false},
		{"User:bob", "1.2.3.4", OpDescribe, ResourceTopic, "orders", true}, // User:* on "*"
		{"User:alice", "1.2.3.4", OpWrite, ResourceTopic, "logs-app", true},
		{"User:alice", "1.2.3.4", OpWrite, ResourceTopic, "logs-secret", false}, // DENY ALL wins
		{"User:alice", "1.2.3.4", OpDescribe, ResourceTopic, "logs-secret", false},
		{"User:alice", "1.2.3.4", OpWrite, ResourceTopic, "logs", false}, // shorter than the prefix
		{"User:carol", "10.0.0.1", OpRead, ResourceTopic, "pinned", true},
		{"User:carol", "10.0.0.2", OpRead, ResourceTopic, "pinned", false},
		{"User:alice", "1.2.3.4", OpRead, ResourceGroup, "g", true},
		{"User:alice", "1.2.3.4", OpDescribe, ResourceGroup, "g", false}, // explicit DENY of DESCRIBE beats implied
		{"User:ops", "1.2.3.4", OpDescribeConfigs, ResourceCluster, ClusterName, true},
		{"User:ops", "1.2.3.4", OpAlter, ResourceCluster, ClusterName, false},
		{"User:admin", "1.2.3.4", OpAlter, ResourceCluster, ClusterName, true},
		{"User:alice", "1.2.3.4", OpWrite, ResourceTransactionalID, "tx", false}, // no ACLs: deny by default
	}
	for _, c := range cases {
		if got := a.Authorize(c.principal, c.host, c.op, c.typ, c.name); got != c.want {
			t.Errorf("Authorize(%s@%s, %d, %d %q) = %v, want %v", c.principal, c.host, c.op, c.typ, c.name, got, c.want)
		}
	}
}

func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	bs := []Binding{bind(ResourceTopic, "guarded", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow)}
	a := NewAuthorizer(bs, nil, true)
	if !a.Authorize("User:bob", "h", OpWrite, ResourceTopic, "open") {
		t.Error("a topic without ACLs is closed with allow.everyone.if.no.acl.found=true")
	}
	if a.Authorize("User:bob", "h", OpRead, ResourceTopic, "guarded") {
		t.Error("a topic with an ACL for someone else is open to bob")
	}
	if !a.Authorize("User:bob", "h", OpRead, ResourceGroup, "any") {
		t.Error("a group without ACLs is closed with allow.everyone.if.no.acl.found=true")
	}
	if NewAuthorizer(bs, nil, false).Authorize("User:bob", "h", OpWrite, ResourceTopic, "open") {
		t.Error("a topic without ACLs is open by default")
	}
}

func TestAuthorizeAny(t *testing.T) {
	bs := []Binding{
		bind(ResourceTopic, "t-", PatternPrefixed, "User:alice", "*", OpWrite, PermissionAllow),
		bind(ResourceTopic, "x", PatternLiteral, "User:bob", "*", OpWrite, PermissionAllow),
		bind(ResourceTopic, "*", PatternLiteral, "User:bob", "*", OpWrite, PermissionDeny),
		bind(ResourceTopic, "y", PatternLiteral, "User:carol", "*", OpWrite, PermissionAllow),
		bind(ResourceTopic, "", PatternPrefixed, "User:carol", "*", OpAll, PermissionDeny),
		bind(ResourceTopic, "z", PatternLiteral, "User:dave", "*", OpRead, PermissionAllow),
	}
	a := NewAuthorizer(bs, nil, false)
	for principal, want := range map[string]bool{"User:alice": true, "User:bob": false, "User:carol": false, "User:dave": false, "User:eve": false} {
		if got := a.AuthorizeAny(principal, "h", OpWrite, ResourceTopic); got != want {
			t.Errorf("AuthorizeAny(%s, WRITE, TOPIC) = %v, want %v", principal, got, want)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	str := func(s string) *string { return &s }
	lit := bind(ResourceTopic, "orders", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow)
	wild := bind(ResourceTopic, "*", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow)
	pre := bind(ResourceTopic, "ord", PatternPrefixed, "User:alice", "*", OpRead, PermissionAllow)
	grp := bind(ResourceGroup, "orders", PatternLiteral, "User:alice", "*", OpRead, PermissionAllow)
	all := []Binding{lit, wild, pre, grp}
	any := Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}
	cases := []struct {
		name string
		f    func(Filter) Filter
		want []Binding
	}{
		{"everything", func(f Filter) Filter { return f }, all},
		{"topics", func(f Filter) Filter { f.ResourceType = ResourceTopic; return f }, []Binding{lit, wild, pre}},
		{"any pattern, exact name", func(f Filter) Filter { f.ResourceName = str("orders"); return f }, []Binding{lit, grp}},
		{"match", func(f Filter) Filter {
			f.ResourceType, f.PatternType, f.ResourceName = ResourceTopic, PatternMatch, str("orders")
			return f
		}, []Binding{lit, wild, pre}},
		{"prefixed only", func(f Filter) Filter { f.PatternType = PatternPrefixed; return f }, []Binding{pre}},
		{"other principal", func(f Filter) Filter { f.Principal = str("User:bob"); return f }, nil},
		{"deny only", func(f Filter) Filter { f.Permission = PermissionDeny; return f }, nil},
		{"read", func(f Filter) Filter { f.Operation = OpRead; f.Host = str("*"); return f }, all},
	}
	for _, c := range cases {
		got := Select(all, c.f(any))
		if len(got) != len(c.want) {
			t.Errorf("%s: selected %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: selected %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestValidateBinding(t *testing.T) {
	good := bind(ResourceTopic, "t", PatternLiteral, "User:a", "*", OpRead, PermissionAllow)
	if err := ValidateBinding(good); err != nil {
		t.Fatalf("valid binding refused: %v", err)
	}
	bad := map[string]func(b *Binding){
		"any resource":   func(b *Binding) { b.ResourceType = int8(ResourceAny) },
		"match pattern":  func(b *Binding) { b.PatternType = int8(PatternMatch) },
		"empty name":     func(b *Binding) { b.ResourceName = "" },
		"cluster name":   func(b *Binding) { b.ResourceType = int8(ResourceCluster) },
		"any operation":  func(b *Binding) { b.Operation = int8(OpAny) },
		"any permission": func(b *Binding) { b.Permission = int8(PermissionAny) },
		"principal":      func(b *Binding) { b.Principal = "alice" },
		"empty host":     func(b *Binding) { b.Host = "" },
	}
	for name, mutate := range bad {
		b := good
		mutate(&b)
		if ValidateBinding(b) == nil {
			t.Errorf("%s: accepted %+v", name, b)
		}
	}
}

func BenchmarkAuthorize(b *testing.B) {
	var bs []Binding
	for i := range 1000 {
		bs = append(bs, bind(ResourceTopic, "topic-"+string(rune('a'+i%26))+string(rune('a'+i/26%26)), PatternLiteral, "User:u", "*", OpRead, PermissionAllow))
	}
	bs = append(bs, bind(ResourceTopic, "logs-", PatternPrefixed, "User:u", "*", OpRead, PermissionAllow))
	a := NewAuthorizer(bs, nil, false)
	b.ReportAllocs()
	for b.Loop() {
		if !a.Authorize("User:u", "127.0.0.1", OpRead, ResourceTopic, "logs-application-events") {
			b.Fatal("denied")
		}
	}
}
