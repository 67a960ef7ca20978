package console

// Security: ACLs, SCRAM users and client quotas, through kadm
// (DescribeACLs/CreateACLs/DeleteACLs, DescribeUserSCRAMCredentials/
// AlterUserSCRAMCredentials, DescribeClientQuotas/AlterClientQuotas).
// Input is checked before the cluster is asked (400 with what is wrong);
// a password goes to kadm, which salts it, and is never answered, logged
// or kept. A cluster without an authorizer answers the ACL list with
// {"enabled": false}.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SCRAM iteration bounds (Kafka's: 4096 to 16384).
const (
	minScramIterations = 4096
	maxScramIterations = 16384
)

// principalRE is Kafka's principal form Type:name (User:alice, User:*).
var principalRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*:.+$`)

// quotaKeys are the client quota settings Kafka knows.
var quotaKeys = map[string]bool{
	"producer_byte_rate": true, "consumer_byte_rate": true, "request_percentage": true,
	"controller_mutation_rate": true, "connection_creation_rate": true,
}

// quotaEntityTypes are the entity types of a client quota.
var quotaEntityTypes = map[string]bool{"user": true, "client-id": true, "ip": true}

// writeSecurityError answers the security APIs' own Kafka errors, and
// everything else as writeKafkaError does.
func (c *Console) writeSecurityError(w http.ResponseWriter, doing string, err error) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		status := 0
		switch ke.Code {
		case kerr.SecurityDisabled.Code, kerr.UnsupportedSaslMechanism.Code, kerr.InvalidPrincipalType.Code,
			kerr.UnacceptableCredential.Code, kerr.DuplicateResource.Code:
			status = http.StatusBadRequest
		case kerr.ResourceNotFound.Code:
			status = http.StatusNotFound
		}
		if status != 0 {
			writeError(w, status, ke.Message, "%s: %s", doing, ke.Description)
			return
		}
	}
	c.writeKafkaError(w, doing, err)
}

type aclJSON struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	PatternType  string `json:"patternType"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// aclFilter is a parsed ACL: the fields of an aclJSON, checked.
type aclFilter struct {
	resource   kmsg.ACLResourceType
	pattern    kmsg.ACLResourcePatternType
	operation  kmsg.ACLOperation
	permission kmsg.ACLPermissionType
}

// parseACLField parses one enum field; empty is def.
func parseACLField[T any](field, value string, def T, parse func(string) (T, error), allowed string) (T, error) {
	if value == "" {
		return def, nil
	}
	v, err := parse(value)
	if err != nil {
		return def, fmt.Errorf("%s %q: want one of %s", field, value, allowed)
	}
	return v, nil
}

const (
	aclOperations   = "ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS"
	aclResources    = "TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER"
	aclPatterns     = "LITERAL, PREFIXED"
	aclPermissions  = "ALLOW, DENY"
	anyACLFieldNote = " (or empty for any)"
)

// parseACL checks a, for creating or deleting one ACL (every field
// given) or, when filter, for listing (empty fields match any).
func parseACL(a aclJSON, filter bool) (aclFilter, error) {
	var f aclFilter
	var err error
	note := ""
	def := aclFilter{resource: kmsg.ACLResourceTypeUnknown, pattern: kmsg.ACLResourcePatternTypeLiteral,
		operation: kmsg.ACLOperationUnknown, permission: kmsg.ACLPermissionTypeAllow}
	if filter {
		note = anyACLFieldNote
		def = aclFilter{resource: kmsg.ACLResourceTypeAny, pattern: kmsg.ACLResourcePatternTypeAny,
			operation: kmsg.ACLOperationAny, permission: kmsg.ACLPermissionTypeAny}
	}
	if f.operation, err = parseACLField("operation", a.Operation, def.operation, kmsg.ParseACLOperation, aclOperations+note); err != nil {
		return f, err
	}
	if f.resource, err = parseACLField("resourceType", a.ResourceType, def.resource, kmsg.ParseACLResourceType, aclResources+note); err != nil {
		return f, err
	}
	if f.pattern, err = parseACLField("patternType", a.PatternType, def.pattern, kmsg.ParseACLResourcePatternType, aclPatterns+note); err != nil {
		return f, err
	}
	if f.permission, err = parseACLField("permission", a.Permission, def.permission, kmsg.ParseACLPermissionType, aclPermissions+note); err != nil {
		return f, err
	}
	if a.Principal != "" && !principalRE.MatchString(a.Principal) {
		return f, fmt.Errorf("principal %q: want Type:name, as User:alice or User:*", a.Principal)
	}
	if filter {
		return f, nil
	}
	switch {
	case a.Principal == "":
		return f, errors.New("principal is required (Type:name, as User:alice)")
	case f.operation == kmsg.ACLOperationAny || f.operation == kmsg.ACLOperationUnknown:
		return f, fmt.Errorf("operation is required: one of %s", aclOperations)
	case f.resource == kmsg.ACLResourceTypeAny || f.resource == kmsg.ACLResourceTypeUnknown:
		return f, fmt.Errorf("resourceType is required: one of %s", aclResources)
	case f.pattern != kmsg.ACLResourcePatternTypeLiteral && f.pattern != kmsg.ACLResourcePatternTypePrefixed:
		return f, fmt.Errorf("patternType %q: want one of %s", a.PatternType, aclPatterns)
	case f.permission != kmsg.ACLPermissionTypeAllow && f.permission != kmsg.ACLPermissionTypeDeny:
		return f, fmt.Errorf("permission %q: want one of %s", a.Permission, aclPermissions)
	case f.resource != kmsg.ACLResourceTypeCluster && a.ResourceName == "":
		return f, errors.New("resourceName is required")
	}
	return f, nil
}

// aclBuilder is the kadm builder of exactly one ACL, for creating or
// deleting it.
func aclBuilder(a aclJSON, f aclFilter) *kadm.ACLBuilder {
	host := a.Host
	if host == "" {
		host = "*"
	}
	b := kadm.NewACLs().Operations(f.operation).ResourcePatternType(f.pattern)
	if f.permission == kmsg.ACLPermissionTypeAllow {
		b.MaybeAllow(a.Principal).MaybeAllowHosts(host)
	} else {
		b.MaybeDeny(a.Principal).MaybeDenyHosts(host)
	}
	switch f.resource {
	case kmsg.ACLResourceTypeTopic:
		b.MaybeTopics(a.ResourceName)
	case kmsg.ACLResourceTypeGroup:
		b.MaybeGroups(a.ResourceName)
	case kmsg.ACLResourceTypeCluster:
		b.MaybeClusters(true)
	case kmsg.ACLResourceTypeTransactionalId:
		b.MaybeTransactionalIDs(a.ResourceName)
	case kmsg.ACLResourceTypeDelegationToken:
		b.MaybeDelegationTokens(a.ResourceName)
	}
	return b
}

func describedACLJSON(d kadm.DescribedACL) aclJSON {
	return aclJSON{Principal: d.Principal, Host: d.Host, ResourceType: d.Type.String(), ResourceName: d.Name,
		PatternType: d.Pattern.String(), Operation: d.Operation.String(), Permission: d.Permission.String()}
}

// listACLs: GET /api/v1/acls?principal=&host=&resourceType=&resourceName=
// &patternType=&operation=&permission=: every ACL the filters match
// (resourceName: a substring), or {"enabled": false} without an
// authorizer.
func (c *Console) listACLs(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	q := r.URL.Query()
	want := aclJSON{Principal: q.Get("principal"), Host: q.Get("host"), ResourceType: q.Get("resourceType"),
		ResourceName: q.Get("resourceName"), PatternType: q.Get("patternType"), Operation: q.Get("operation"), Permission: q.Get("permission")}
	f, err := parseACL(want, true)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	all := kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny)
	res, err := kadm.NewClient(cl).DescribeACLs(ctx, all)
	if err == nil {
		for _, one := range res {
			if one.Err != nil {
				err = one.Err
			}
		}
	}
	out := struct {
		Enabled bool      `json:"enabled"`
		ACLs    []aclJSON `json:"acls"`
	}{Enabled: true, ACLs: []aclJSON{}}
	if errors.Is(err, kerr.SecurityDisabled) {
		out.Enabled = false
		writeJSON(w, http.StatusOK, out)
		return
	}
	if err != nil {
		c.writeSecurityError(w, "describing ACLs", err)
		return
	}
	seen := map[aclJSON]bool{}
	for _, one := range res {
		for _, d := range one.Described {
			match := (want.Principal == "" || d.Principal == want.Principal) &&
				(want.Host == "" || d.Host == want.Host) &&
				(f.resource == kmsg.ACLResourceTypeAny || d.Type == f.resource) &&
				(f.pattern == kmsg.ACLResourcePatternTypeAny || d.Pattern == f.pattern) &&
				(f.operation == kmsg.ACLOperationAny || d.Operation == f.operation) &&
				(f.permission == kmsg.ACLPermissionTypeAny || d.Permission == f.permission) &&
				strings.Contains(d.Name, want.ResourceName)
			if a := describedACLJSON(d); match && !seen[a] {
				seen[a] = true
				out.ACLs = append(out.ACLs, a)
			}
		}
	}
	sort.Slice(out.ACLs, func(i, j int) bool {
		a, b := out.ACLs[i], out.ACLs[j]
		return fmt.Sprint(a.Principal, a.ResourceType, a.ResourceName, a.Operation, a.Permission, a.Host) <
			fmt.Sprint(b.Principal, b.ResourceType, b.ResourceName, b.Operation, b.Permission, b.Host)
	})
	writeJSON(w, http.StatusOK, out)
}

// createACL: POST /api/v1/acls with one ACL (host defaults to *,
// patternType to LITERAL, permission to ALLOW); 201 with it.
func (c *Console) createACL(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var a aclJSON
	if !decodeBody(w, r, &a) {
		return
	}
	f, err := parseACL(a, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	res, err := kadm.NewClient(cl).CreateACLs(ctx, aclBuilder(a, f))
	if err == nil && len(res) != 1 {
		err = fmt.Errorf("%d results for one ACL", len(res))
	}
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		c.writeSecurityError(w, "creating an ACL", err)
		return
	}
	writeJSON(w, http.StatusCreated, aclJSON{Principal: res[0].Principal, Host: res[0].Host, ResourceType: res[0].Type.String(),
		ResourceName: res[0].Name, PatternType: res[0].Pattern.String(), Operation: res[0].Operation.String(), Permission: res[0].Permission.String()})
}

// deleteACL: DELETE /api/v1/acls with one ACL as the body (every field as
// listed): 200 with {"deleted": n}; 404 when it matched none.
func (c *Console) deleteACL(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var a aclJSON
	if !decodeBody(w, r, &a) {
		return
	}
	f, err := parseACL(a, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	res, err := kadm.NewClient(cl).DeleteACLs(ctx, aclBuilder(a, f))
	deleted := 0
	for _, one := range res {
		if one.Err != nil && err == nil {
			err = one.Err
		}
		for _, d := range one.Deleted {
			if d.Err != nil && err == nil {
				err = d.Err
			}
			deleted++
		}
	}
	if err != nil {
		c.writeSecurityError(w, "deleting an ACL", err)
		return
	}
	if deleted == 0 {
		writeError(w, http.StatusNotFound, "", "no such ACL")
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": deleted})
}

type scramCredentialJSON struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

type scramUserJSON struct {
	User        string                `json:"user"`
	Credentials []scramCredentialJSON `json:"credentials"`
}

// listUsers: GET /api/v1/users: every SCRAM user with its mechanisms and
// iterations (never a salt or a key).
func (c *Console) listUsers(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	described, err := kadm.NewClient(cl).DescribeUserSCRAMs(ctx)
	if err != nil {
		c.writeSecurityError(w, "describing SCRAM users", err)
		return
	}
	out := struct {
		Users []scramUserJSON `json:"users"`
	}{Users: []scramUserJSON{}}
	for _, d := range described.Sorted() {
		if d.Err != nil {
			c.writeSecurityError(w, fmt.Sprintf("describing SCRAM user %q", d.User), d.Err)
			return
		}
		u := scramUserJSON{User: d.User, Credentials: []scramCredentialJSON{}}
		for _, ci := range d.CredInfos {
			u.Credentials = append(u.Credentials, scramCredentialJSON{Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
		out.Users = append(out.Users, u)
	}
	writeJSON(w, http.StatusOK, out)
}

func parseMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", s)
}

// upsertUser: POST /api/v1/users {user, password, mechanism, iterations}:
// creates the credential or replaces its password; 201 with the user and
// mechanism only.
func (c *Console) upsertUser(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var in struct {
		User       string `json:"user"`
		Password   string `json:"password"`
		Mechanism  string `json:"mechanism"`
		Iterations int32  `json:"iterations"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	if in.Mechanism == "" {
		in.Mechanism = "SCRAM-SHA-512"
	}
	if in.Iterations == 0 {
		in.Iterations = minScramIterations
	}
	mech, err := parseMechanism(in.Mechanism)
	switch {
	case err != nil:
	case in.User == "":
		err = errors.New("user is required")
	case in.Password == "":
		err = errors.New("password is required")
	case in.Iterations < minScramIterations || in.Iterations > maxScramIterations:
		err = fmt.Errorf("iterations %d: want %d to %d", in.Iterations, minScramIterations, maxScramIterations)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: in.User, Mechanism: mech, Iterations: in.Iterations, Password: in.Password}})
	if err == nil {
		err = res[in.User].Err
	}
	if err != nil {
		c.writeSecurityError(w, fmt.Sprintf("setting SCRAM user %q", in.User), err)
		return
	}
	writeJSON(w, http.StatusCreated, scramUserJSON{User: in.User, Credentials: []scramCredentialJSON{{Mechanism: mech.String(), Iterations: in.Iterations}}})
}

// deleteUser: DELETE /api/v1/users/{user}?mechanism=: removes one
// mechanism's credential, or all the user has; 204, 404 for none.
func (c *Console) deleteUser(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	user := r.PathValue("user")
	adm := kadm.NewClient(cl)
	var mechs []kadm.ScramMechanism
	if m := r.URL.Query().Get("mechanism"); m != "" {
		mech, err := parseMechanism(m)
		if err != nil {
			writeError(w, http.StatusBadRequest, "", "%v", err)
			return
		}
		mechs = append(mechs, mech)
	} else {
		described, err := adm.DescribeUserSCRAMs(ctx, user)
		if err == nil {
			err = described[user].Err
		}
		if err != nil {
			c.writeSecurityError(w, fmt.Sprintf("describing SCRAM user %q", user), err)
			return
		}
		for _, ci := range described[user].CredInfos {
			mechs = append(mechs, ci.Mechanism)
		}
	}
	if len(mechs) == 0 {
		writeError(w, http.StatusNotFound, kerr.ResourceNotFound.Message, "SCRAM user %q not found", user)
		return
	}
	dels := make([]kadm.DeleteSCRAM, len(mechs))
	for i, m := range mechs {
		dels[i] = kadm.DeleteSCRAM{User: user, Mechanism: m}
	}
	res, err := adm.AlterUserSCRAMs(ctx, dels, nil)
	if err == nil {
		err = res[user].Err
	}
	if err != nil {
		c.writeSecurityError(w, fmt.Sprintf("deleting SCRAM user %q", user), err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type quotaEntityJSON struct {
	Type string  `json:"type"`
	Name *string `json:"name"` // null: the default entity
}

type quotaJSON struct {
	Entity []quotaEntityJSON  `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// listQuotas: GET /api/v1/quotas: every client quota entity and its
// values.
func (c *Console) listQuotas(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	described, err := kadm.NewClient(cl).DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		c.writeSecurityError(w, "describing client quotas", err)
		return
	}
	out := struct {
		Quotas []quotaJSON `json:"quotas"`
	}{Quotas: []quotaJSON{}}
	for _, d := range described {
		q := quotaJSON{Entity: []quotaEntityJSON{}, Values: map[string]float64{}}
		for _, e := range d.Entity {
			q.Entity = append(q.Entity, quotaEntityJSON{Type: e.Type, Name: e.Name})
		}
		for _, v := range d.Values {
			q.Values[v.Key] = v.Value
		}
		out.Quotas = append(out.Quotas, q)
	}
	sort.Slice(out.Quotas, func(i, j int) bool {
		return fmt.Sprint(out.Quotas[i].Entity) < fmt.Sprint(out.Quotas[j].Entity)
	})
	writeJSON(w, http.StatusOK, out)
}

// parseQuotaEntity checks an entity: known types, each at most once.
func parseQuotaEntity(in []quotaEntityJSON) (kadm.ClientQuotaEntity, error) {
	if len(in) == 0 {
		return nil, errors.New("entity is required: [{type: user|client-id|ip, name: … or null for the default}]")
	}
	seen := map[string]bool{}
	var out kadm.ClientQuotaEntity
	for _, e := range in {
		if !quotaEntityTypes[e.Type] {
			return nil, fmt.Errorf("entity type %q: want user, client-id or ip", e.Type)
		}
		if seen[e.Type] {
			return nil, fmt.Errorf("entity type %q given twice", e.Type)
		}
		seen[e.Type] = true
		out = append(out, kadm.ClientQuotaEntityComponent{Type: e.Type, Name: e.Name})
	}
	return out, nil
}

func quotaKeyError(k string) error {
	return fmt.Errorf("quota %q: want producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate or connection_creation_rate", k)
}

// alterQuota runs one AlterClientQuotas entry.
func (c *Console) alterQuota(ctx context.Context, w http.ResponseWriter, cl *kgo.Client, doing string, entry kadm.AlterClientQuotaEntry) bool {
	res, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{entry})
	if err == nil {
		for _, one := range res {
			if one.Err != nil {
				err = one.Err
			}
		}
	}
	if err != nil {
		c.writeSecurityError(w, doing, err)
		return false
	}
	return true
}

// setQuota: PUT /api/v1/quotas {entity, values}: sets the values; 200
// with them.
func (c *Console) setQuota(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var in quotaJSON
	if !decodeBody(w, r, &in) {
		return
	}
	entity, err := parseQuotaEntity(in.Entity)
	if err == nil && len(in.Values) == 0 {
		err = errors.New("values is required: {producer_byte_rate: 1048576, …}")
	}
	entry := kadm.AlterClientQuotaEntry{Entity: entity}
	for _, k := range slices.Sorted(maps.Keys(in.Values)) {
		v := in.Values[k]
		switch {
		case err != nil:
		case !quotaKeys[k]:
			err = quotaKeyError(k)
		case v <= 0 || math.IsInf(v, 0) || math.IsNaN(v):
			err = fmt.Errorf("quota %s=%v: want a positive number", k, v)
		}
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: v})
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	if c.alterQuota(ctx, w, cl, "setting client quotas", entry) {
		writeJSON(w, http.StatusOK, in)
	}
}

// deleteQuota: DELETE /api/v1/quotas {entity, keys}: removes those
// settings of the entity; 204.
func (c *Console) deleteQuota(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var in struct {
		Entity []quotaEntityJSON `json:"entity"`
		Keys   []string          `json:"keys"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	entity, err := parseQuotaEntity(in.Entity)
	if err == nil && len(in.Keys) == 0 {
		err = errors.New("keys is required: the quota settings to remove")
	}
	entry := kadm.AlterClientQuotaEntry{Entity: entity}
	for _, k := range in.Keys {
		if err == nil && !quotaKeys[k] {
			err = quotaKeyError(k)
		}
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	if c.alterQuota(ctx, w, cl, "removing client quotas", entry) {
		w.WriteHeader(http.StatusNoContent)
	}
}
