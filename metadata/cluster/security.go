package cluster

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// The metadata of security: SCRAM credentials (KIP-554), ACLs and client
// quotas (KIP-546). The broker decides what a request changes and proposes
// the exact change; Apply only makes it, deterministically.

// SCRAM mechanisms whose credentials the quorum stores.
const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// ScramCredential is one user's salted credential for one mechanism
// (RFC 5802: never the password).
type ScramCredential struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int    `json:"iterations"`
}

// ScramUpsert sets a user's credential for a mechanism.
type ScramUpsert struct {
	User       string          `json:"user"`
	Mechanism  string          `json:"mechanism"`
	Credential ScramCredential `json:"credential"`
}

// ScramDeletion removes a user's credential for a mechanism.
type ScramDeletion struct {
	User      string `json:"user"`
	Mechanism string `json:"mechanism"`
}

// AlterScramCredentials applies one AlterUserScramCredentials request:
// deletions, then upserts. Deleting a credential that does not exist is a
// no-op (the broker reports RESOURCE_NOT_FOUND before proposing).
type AlterScramCredentials struct {
	Deletions []ScramDeletion `json:"deletions,omitempty"`
	Upserts   []ScramUpsert   `json:"upserts,omitempty"`
}

// Type implements Record.
func (AlterScramCredentials) Type() RecordType { return TypeAlterScramCredentials }

// Validate implements Record.
func (r AlterScramCredentials) Validate() error {
	if len(r.Deletions)+len(r.Upserts) == 0 {
		return invalid("scram credentials: nothing to alter")
	}
	for _, d := range r.Deletions {
		if d.User == "" || !validScramMechanism(d.Mechanism) {
			return invalid("scram deletion of user %q, mechanism %q", d.User, d.Mechanism)
		}
	}
	for _, u := range r.Upserts {
		c := u.Credential
		if u.User == "" || !validScramMechanism(u.Mechanism) {
			return invalid("scram upsert of user %q, mechanism %q", u.User, u.Mechanism)
		}
		if len(c.Salt) == 0 || len(c.StoredKey) == 0 || len(c.ServerKey) == 0 || c.Iterations < 1 {
			return invalid("scram upsert of user %q: incomplete credential", u.User)
		}
	}
	return nil
}

func validScramMechanism(m string) bool { return m == ScramSHA256 || m == ScramSHA512 }

func applyAlterScram(s State, r AlterScramCredentials) State {
	next := make(map[string]map[string]ScramCredential, len(s.Scram))
	for user, creds := range s.Scram {
		next[user] = creds
	}
	touch := func(user string) map[string]ScramCredential {
		m := maps.Clone(next[user])
		if m == nil {
			m = map[string]ScramCredential{}
		}
		next[user] = m
		return m
	}
	for _, d := range r.Deletions {
		if _, ok := next[d.User][d.Mechanism]; !ok {
			continue
		}
		m := touch(d.User)
		delete(m, d.Mechanism)
		if len(m) == 0 {
			delete(next, d.User)
		}
	}
	for _, u := range r.Upserts {
		touch(u.User)[u.Mechanism] = u.Credential
	}
	s.Scram = next
	return s
}

// ACLBinding is one ACL with Kafka's wire values for its enums (resource
// type TOPIC=2 … USER=7, pattern LITERAL=3 / PREFIXED=4, operation READ=3
// …, permission DENY=2 / ALLOW=3); broker/acl gives them meaning.
type ACLBinding struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

func (b ACLBinding) valid() bool {
	return b.ResourceType >= 2 && b.ResourceType <= 7 && b.ResourceName != "" &&
		(b.PatternType == 3 || b.PatternType == 4) && strings.Contains(b.Principal, ":") &&
		b.Host != "" && b.Operation >= 2 && b.Operation <= 14 && (b.Permission == 2 || b.Permission == 3)
}

// CreateACLs adds bindings (a binding already present stays once).
type CreateACLs struct {
	Bindings []ACLBinding `json:"bindings"`
}

// DeleteACLs removes exactly these bindings (those absent are ignored).
type DeleteACLs struct {
	Bindings []ACLBinding `json:"bindings"`
}

// Type implements Record.
func (CreateACLs) Type() RecordType { return TypeCreateACLs }

// Type implements Record.
func (DeleteACLs) Type() RecordType { return TypeDeleteACLs }

// Validate implements Record.
func (r CreateACLs) Validate() error { return validateBindings("create", r.Bindings) }

// Validate implements Record.
func (r DeleteACLs) Validate() error { return validateBindings("delete", r.Bindings) }

func validateBindings(what string, bs []ACLBinding) error {
	if len(bs) == 0 {
		return invalid("%s acls: no binding", what)
	}
	for _, b := range bs {
		if !b.valid() {
			return invalid("%s acls: binding %+v", what, b)
		}
	}
	return nil
}

func applyACLs(s State, add, remove []ACLBinding) State {
	set := make(map[ACLBinding]bool, len(s.ACLs)+len(add))
	for _, b := range s.ACLs {
		set[b] = true
	}
	for _, b := range remove {
		delete(set, b)
	}
	for _, b := range add {
		set[b] = true
	}
	out := make([]ACLBinding, 0, len(set))
	for b := range set {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return aclLess(out[i], out[j]) })
	s.ACLs = out
	s.ACLVersion++
	return s
}

func aclLess(a, b ACLBinding) bool {
	if a.ResourceType != b.ResourceType {
		return a.ResourceType < b.ResourceType
	}
	if a.ResourceName != b.ResourceName {
		return a.ResourceName < b.ResourceName
	}
	if a.PatternType != b.PatternType {
		return a.PatternType < b.PatternType
	}
	if a.Principal != b.Principal {
		return a.Principal < b.Principal
	}
	if a.Host != b.Host {
		return a.Host < b.Host
	}
	if a.Operation != b.Operation {
		return a.Operation < b.Operation
	}
	return a.Permission < b.Permission
}

// QuotaEntity names a client-quota entity (KIP-546): each part absent
// (nil), the default (pointer to ""), or a name. Kafka has no user or
// client id "" to collide with: an empty name is refused.
type QuotaEntity struct {
	User     *string `json:"user,omitempty"`
	ClientID *string `json:"client_id,omitempty"`
}

// Key is the entity as one string, unique per entity.
func (e QuotaEntity) Key() string {
	part := func(p *string) string {
		switch {
		case p == nil:
			return "-"
		case *p == "":
			return "<default>"
		default:
			return "=" + *p
		}
	}
	return "user" + part(e.User) + "/client" + part(e.ClientID)
}

// ClientQuota is one entity's quota values.
type ClientQuota struct {
	Entity QuotaEntity        `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// QuotaAlteration sets and removes values of one entity.
type QuotaAlteration struct {
	Entity QuotaEntity        `json:"entity"`
	Set    map[string]float64 `json:"set,omitempty"`
	Remove []string           `json:"remove,omitempty"`
}

// AlterClientQuotas applies one AlterClientQuotas request.
type AlterClientQuotas struct {
	Alterations []QuotaAlteration `json:"alterations"`
}

// Type implements Record.
func (AlterClientQuotas) Type() RecordType { return TypeAlterClientQuotas }

// Validate implements Record.
func (r AlterClientQuotas) Validate() error {
	if len(r.Alterations) == 0 {
		return invalid("client quotas: nothing to alter")
	}
	for _, a := range r.Alterations {
		if a.Entity.User == nil && a.Entity.ClientID == nil {
			return invalid("client quotas: empty entity")
		}
		for k, v := range a.Set {
			if k == "" || v < 0 {
				return invalid("client quotas: %s=%v", k, v)
			}
		}
	}
	return nil
}

func applyAlterClientQuotas(s State, r AlterClientQuotas) State {
	next := maps.Clone(s.ClientQuotas)
	if next == nil {
		next = map[string]ClientQuota{}
	}
	for _, a := range r.Alterations {
		key := a.Entity.Key()
		q := next[key]
		values := maps.Clone(q.Values)
		if values == nil {
			values = map[string]float64{}
		}
		for _, k := range a.Remove {
			delete(values, k)
		}
		maps.Copy(values, a.Set)
		if len(values) == 0 {
			delete(next, key)
			continue
		}
		next[key] = ClientQuota{Entity: a.Entity, Values: values}
	}
	s.ClientQuotas = next
	s.QuotaVersion++
	return s
}

// SortedClientQuotas lists the client quotas by entity key.
func (s State) SortedClientQuotas() []ClientQuota {
	keys := slices.Sorted(maps.Keys(s.ClientQuotas))
	out := make([]ClientQuota, len(keys))
	for i, k := range keys {
		out[i] = s.ClientQuotas[k]
	}
	return out
}
