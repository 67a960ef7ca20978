package acl

import "strings"

// Authorizer decides requests against one set of bindings, as Kafka's
// StandardAuthorizer does:
//   - super users may do everything;
//   - the bindings that apply to a resource are its LITERAL ones, the
//     LITERAL "*" of its type and every PREFIXED one its name starts with;
//   - of those, the ones naming the principal (or User:*) and the host
//     (or *) decide: a DENY of the operation (or ALL) wins over any ALLOW;
//     an ALLOW of the operation, of ALL, or of one that implies it
//     (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
//     DESCRIBE_CONFIGS) allows;
//   - with no binding on the resource at all, allowEveryoneIfNoACLFound
//     decides (false by default: deny).
//
// It is immutable: the broker builds a new one when the ACLs change.
type Authorizer struct {
	superUsers   map[string]bool
	allowIfNoACL bool
	byType       map[ResourceType]*typeIndex
}

// typeIndex holds one resource type's bindings, by pattern.
type typeIndex struct {
	literal  map[string][]Binding // includes "*"
	prefixed map[string][]Binding
	// maxPrefix is the longest prefixed name, bounding the lookups.
	maxPrefix int
}

// NewAuthorizer indexes bindings. superUsers are principals ("User:admin").
func NewAuthorizer(bindings []Binding, superUsers []string, allowEveryoneIfNoACLFound bool) *Authorizer {
	a := &Authorizer{superUsers: map[string]bool{}, allowIfNoACL: allowEveryoneIfNoACLFound, byType: map[ResourceType]*typeIndex{}}
	for _, u := range superUsers {
		if u = strings.TrimSpace(u); u != "" {
			a.superUsers[u] = true
		}
	}
	for _, b := range bindings {
		t := ResourceType(b.ResourceType)
		idx := a.byType[t]
		if idx == nil {
			idx = &typeIndex{literal: map[string][]Binding{}, prefixed: map[string][]Binding{}}
			a.byType[t] = idx
		}
		if b.PatternType == int8(PatternPrefixed) {
			idx.prefixed[b.ResourceName] = append(idx.prefixed[b.ResourceName], b)
			idx.maxPrefix = max(idx.maxPrefix, len(b.ResourceName))
		} else {
			idx.literal[b.ResourceName] = append(idx.literal[b.ResourceName], b)
		}
	}
	return a
}

// IsSuperUser reports whether principal is in super.users.
func (a *Authorizer) IsSuperUser(principal string) bool { return a.superUsers[principal] }

// Authorize reports whether principal, connected from host, may perform
// op on the resource of type t named name.
func (a *Authorizer) Authorize(principal, host string, op Operation, t ResourceType, name string) bool {
	if a.superUsers[principal] {
		return true
	}
	idx := a.byType[t]
	if idx == nil {
		return a.allowIfNoACL
	}
	found, allowed := false, false
	visit := func(bs []Binding) bool { // false: denied
		for _, b := range bs {
			found = true
			if !appliesTo(b, principal, host) {
				continue
			}
			switch Permission(b.Permission) {
			case PermissionDeny:
				if b.Operation == int8(OpAll) || b.Operation == int8(op) {
					return false
				}
			case PermissionAllow:
				if implies(Operation(b.Operation), op) {
					allowed = true
				}
			}
		}
		return true
	}
	if !visit(idx.literal[name]) || !visit(idx.literal[WildcardResource]) {
		return false
	}
	if len(idx.prefixed) > 0 {
		for n := min(len(name), idx.maxPrefix); n > 0; n-- {
			if !visit(idx.prefixed[name[:n]]) {
				return false
			}
		}
	}
	if allowed {
		return true
	}
	return !found && a.allowIfNoACL
}

// AuthorizeAny reports whether principal may perform op on some resource
// of type t: Kafka's authorizeByResourceType, which KIP-679 uses to let a
// producer with WRITE on any topic be idempotent. An ALLOW counts unless
// a DENY of the principal covers every resource it could apply to (a
// LITERAL "*" DENY, or a DENY whose pattern contains the ALLOW's).
func (a *Authorizer) AuthorizeAny(principal, host string, op Operation, t ResourceType) bool {
	if a.superUsers[principal] {
		return true
	}
	idx := a.byType[t]
	if idx == nil {
		return a.allowIfNoACL
	}
	var allows, denies []Binding
	collect := func(m map[string][]Binding) {
		for _, bs := range m {
			for _, b := range bs {
				if !appliesTo(b, principal, host) {
					continue
				}
				if b.Permission == int8(PermissionDeny) && (b.Operation == int8(OpAll) || b.Operation == int8(op)) {
					denies = append(denies, b)
				} else if b.Permission == int8(PermissionAllow) && implies(Operation(b.Operation), op) {
					allows = append(allows, b)
				}
			}
		}
	}
	collect(idx.literal)
	collect(idx.prefixed)
	for _, al := range allows {
		covered := false
		for _, d := range denies {
			if covers(d, al) {
				covered = true
				break
			}
		}
		if !covered {
			return true
		}
	}
	return false
}

// covers reports whether deny's pattern contains every name allow's does.
func covers(deny, allow Binding) bool {
	if deny.PatternType == int8(PatternLiteral) {
		if deny.ResourceName == WildcardResource {
			return true
		}
		return allow.PatternType == int8(PatternLiteral) && allow.ResourceName == deny.ResourceName
	}
	return allow.ResourceName != WildcardResource && strings.HasPrefix(allow.ResourceName, deny.ResourceName)
}

func appliesTo(b Binding, principal, host string) bool {
	return (b.Principal == principal || b.Principal == WildcardPrincipal) && (b.Host == host || b.Host == WildcardHost)
}

// implies reports whether an ALLOW of granted allows op.
func implies(granted, op Operation) bool {
	switch {
	case granted == OpAll, granted == op:
		return true
	case op == OpDescribe:
		return granted == OpRead || granted == OpWrite || granted == OpDelete || granted == OpAlter
	case op == OpDescribeConfigs:
		return granted == OpAlterConfigs
	}
	return false
}
