package broker

// DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), v0-3:
//   - Without authorizer.class.name all three answer SECURITY_DISABLED,
//     as Kafka does.
//   - Describe needs DESCRIBE on the cluster; Create and Delete need ALTER
//     (CLUSTER_AUTHORIZATION_FAILED).
//   - Bindings live in the metadata quorum (cluster.CreateACLs and
//     DeleteACLs records); a response is sent once the change is applied
//     on this node, so the next request here sees it. Other brokers see it
//     when they apply the record.
//   - v0 knows no pattern type: its filters and bindings are LITERAL.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.DescribeACLs, 0, 3, handleDescribeACLs)
	registerAPI(kmsg.CreateACLs, 0, 3, handleCreateACLs)
	registerAPI(kmsg.DeleteACLs, 0, 3, handleDeleteACLs)
	checksACLs(kmsg.DescribeACLs, kmsg.CreateACLs, kmsg.DeleteACLs)
}

// securityDisabled is the message of SECURITY_DISABLED answers.
const securityDisabled = "no authorizer is configured on the broker (authorizer.class.name)"

// aclAccessCheck answers the common errors of the ACL APIs: no
// authorizer, or a principal without op on the cluster.
func aclAccessCheck(rc *requestContext, op acl.Operation) (int16, *string) {
	if !rc.s.cfg.authorizationEnabled() {
		msg := securityDisabled
		return rc.countError(kerr.SecurityDisabled.Code), &msg
	}
	if !rc.authorizeCluster(op) {
		msg := "the ACL APIs need " + opName(op) + " on the cluster"
		return rc.countError(kerr.ClusterAuthorizationFailed.Code), &msg
	}
	return 0, nil
}

func aclFilter(version int16, typ kmsg.ACLResourceType, name *string, pattern kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) acl.Filter {
	if version == 0 {
		pattern = kmsg.ACLResourcePatternTypeLiteral
	}
	return acl.Filter{ResourceType: acl.ResourceType(typ), ResourceName: name, PatternType: acl.PatternType(pattern),
		Principal: principal, Host: host, Operation: acl.Operation(op), Permission: acl.Permission(perm)}
}

func handleDescribeACLs(rc *requestContext, req *kmsg.DescribeACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if resp.ErrorCode, resp.ErrorMessage = aclAccessCheck(rc, acl.OpDescribe); resp.ErrorCode != 0 {
		return resp
	}
	f := aclFilter(req.Version, req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Principal, req.Host, req.Operation, req.PermissionType)
	if err := f.Validate(); err != nil {
		msg := err.Error()
		resp.ErrorCode, resp.ErrorMessage = rc.countError(kerr.InvalidRequest.Code), &msg
		return resp
	}
	type resource struct {
		typ     int8
		name    string
		pattern int8
	}
	index := map[resource]int{}
	for _, b := range acl.Select(rc.s.clusterState().ACLs, f) {
		k := resource{b.ResourceType, b.ResourceName, b.PatternType}
		i, ok := index[k]
		if !ok {
			i = len(resp.Resources)
			index[k] = i
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			resp.Resources = append(resp.Resources, r)
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, a)
	}
	return resp
}

func handleCreateACLs(rc *requestContext, req *kmsg.CreateACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
	}
	fail := func(i int, code int16, msg string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = rc.countError(code), &msg
	}
	if code, msg := aclAccessCheck(rc, acl.OpAlter); code != 0 {
		for i := range resp.Results {
			fail(i, code, *msg)
		}
		return resp
	}
	var rec cluster.CreateACLs
	var proposed []int
	for i, c := range req.Creations {
		pattern := c.ResourcePatternType
		if req.Version == 0 {
			pattern = kmsg.ACLResourcePatternTypeLiteral
		}
		b := acl.Binding{ResourceType: int8(c.ResourceType), ResourceName: c.ResourceName, PatternType: int8(pattern),
			Principal: c.Principal, Host: c.Host, Operation: int8(c.Operation), Permission: int8(c.PermissionType)}
		if err := acl.ValidateBinding(b); err != nil {
			fail(i, kerr.InvalidRequest.Code, err.Error())
			continue
		}
		rec.Bindings = append(rec.Bindings, b)
		proposed = append(proposed, i)
	}
	if len(rec.Bindings) > 0 {
		if code, msg := proposeSecurity(rc, rec); code != 0 {
			for _, i := range proposed {
				fail(i, code, msg)
			}
		}
	}
	return resp
}

func handleDeleteACLs(rc *requestContext, req *kmsg.DeleteACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	fail := func(i int, code int16, msg string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = rc.countError(code), &msg
		resp.Results[i].MatchingACLs = nil
	}
	if code, msg := aclAccessCheck(rc, acl.OpAlter); code != 0 {
		for i := range resp.Results {
			fail(i, code, *msg)
		}
		return resp
	}
	st := rc.s.clusterState()
	var rec cluster.DeleteACLs
	seen := map[acl.Binding]bool{}
	var matched []int
	for i, f := range req.Filters {
		filter := aclFilter(req.Version, f.ResourceType, f.ResourceName, f.ResourcePatternType, f.Principal, f.Host, f.Operation, f.PermissionType)
		if err := filter.Validate(); err != nil {
			fail(i, kerr.InvalidRequest.Code, err.Error())
			continue
		}
		for _, b := range acl.Select(st.ACLs, filter) {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			if !seen[b] {
				seen[b] = true
				rec.Bindings = append(rec.Bindings, b)
			}
		}
		if len(resp.Results[i].MatchingACLs) > 0 {
			matched = append(matched, i)
		}
	}
	if len(rec.Bindings) > 0 {
		if code, msg := proposeSecurity(rc, rec); code != 0 {
			for _, i := range matched {
				fail(i, code, msg)
			}
		}
	}
	return resp
}

// proposeSecurity commits one security record and waits for it to apply
// here; it returns the Kafka error for a change that did not.
func proposeSecurity(rc *requestContext, rec cluster.Record) (int16, string) {
	ctx, cancel := context.WithTimeout(rc.s.ctx, 30*time.Second)
	defer cancel()
	if _, err := rc.s.meta.propose(ctx, rec); err != nil {
		if rc.s.ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return kerr.NotController.Code, "this node is shutting down"
		}
		return kerr.RequestTimedOut.Code, "the metadata quorum did not apply the change in time; it may still take effect"
	}
	return 0, ""
}
