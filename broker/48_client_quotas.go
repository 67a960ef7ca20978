package broker

// DescribeClientQuotas (48) and AlterClientQuotas (49), v0-1 (KIP-546):
//   - Entities are user and client-id parts, each a name or the default
//     (a null name); ip entities (KIP-612's connection_creation_rate) are
//     not supported: INVALID_REQUEST.
//   - Describe needs DESCRIBE_CONFIGS on the cluster, Alter ALTER_CONFIGS
//     (CLUSTER_AUTHORIZATION_FAILED). A describe filter component matches
//     a name exactly (match type 0), the default (1) or any part of its
//     type, default included (2); strict asks for entities with no other
//     part, as in Kafka.
//   - Alter validates every entry (known keys, positive values, whole
//     numbers for byte rates, no entity or key twice) and commits the
//     valid ones as one cluster.AlterClientQuotas record; validate_only
//     commits nothing.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/quota"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.DescribeClientQuotas, 0, 1, handleDescribeClientQuotas)
	registerAPI(kmsg.AlterClientQuotas, 0, 1, handleAlterClientQuotas)
	checksACLs(kmsg.DescribeClientQuotas, kmsg.AlterClientQuotas)
}

const (
	quotaEntityUser   = "user"
	quotaEntityClient = "client-id"
	quotaEntityIP     = "ip"
)

// quotaEntityPart returns the part of entity typ names.
func quotaEntityPart(e cluster.QuotaEntity, typ string) *string {
	if typ == quotaEntityUser {
		return e.User
	}
	return e.ClientID
}

func handleDescribeClientQuotas(rc *requestContext, req *kmsg.DescribeClientQuotasRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(code int16, msg string) kmsg.Response {
		resp.ErrorCode, resp.ErrorMessage = rc.countError(code), &msg
		return resp
	}
	if !rc.authorizeCluster(acl.OpDescribeConfigs) {
		return fail(kerr.ClusterAuthorizationFailed.Code, "describing client quotas needs DESCRIBE_CONFIGS on the cluster")
	}
	seen := map[string]bool{}
	for _, c := range req.Components {
		switch {
		case c.EntityType == quotaEntityIP:
			return fail(kerr.InvalidRequest.Code, "ip quota entities are not supported")
		case c.EntityType != quotaEntityUser && c.EntityType != quotaEntityClient:
			return fail(kerr.InvalidRequest.Code, "unknown quota entity type "+c.EntityType+" (user or client-id)")
		case seen[c.EntityType]:
			return fail(kerr.InvalidRequest.Code, "entity type "+c.EntityType+" appears more than once in the filter")
		case c.MatchType == 0 && c.Match == nil:
			return fail(kerr.InvalidRequest.Code, "an exact match (match type 0) needs a name")
		case c.MatchType != 0 && c.Match != nil:
			return fail(kerr.InvalidRequest.Code, "only an exact match (match type 0) takes a name")
		case c.MatchType < 0 || c.MatchType > 2:
			return fail(kerr.InvalidRequest.Code, "unknown match type")
		}
		seen[c.EntityType] = true
	}
	matches := func(e cluster.QuotaEntity) bool {
		parts := 0
		if e.User != nil {
			parts++
		}
		if e.ClientID != nil {
			parts++
		}
		if req.Strict && parts != len(req.Components) {
			return false
		}
		for _, c := range req.Components {
			p := quotaEntityPart(e, c.EntityType)
			switch {
			case p == nil:
				return false
			case c.MatchType == 0 && *p != *c.Match, c.MatchType == 1 && *p != "":
				return false
			}
		}
		return true
	}
	for _, q := range rc.s.clusterState().SortedClientQuotas() {
		if !matches(q.Entity) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, typ := range []string{quotaEntityUser, quotaEntityClient} {
			if p := quotaEntityPart(q.Entity, typ); p != nil {
				part := kmsg.NewDescribeClientQuotasResponseEntryEntity()
				part.Type = typ
				if *p != "" {
					part.Name = kmsg.StringPtr(*p)
				}
				entry.Entity = append(entry.Entity, part)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(q.Values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, q.Values[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp
}

func handleAlterClientQuotas(rc *requestContext, req *kmsg.AlterClientQuotasRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	allowed := rc.authorizeCluster(acl.OpAlterConfigs)
	var alterations []cluster.QuotaAlteration
	var pending []int // response entries waiting for the record
	seenEntity := map[string]bool{}
	for _, e := range req.Entries {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		for _, p := range e.Entity {
			part := kmsg.NewAlterClientQuotasResponseEntryEntity()
			part.Type, part.Name = p.Type, p.Name
			out.Entity = append(out.Entity, part)
		}
		code, msg := int16(0), ""
		var alt cluster.QuotaAlteration
		if !allowed {
			code, msg = kerr.ClusterAuthorizationFailed.Code, "altering client quotas needs ALTER_CONFIGS on the cluster"
		} else {
			alt, msg = quotaAlteration(e)
			if msg == "" && seenEntity[alt.Entity.Key()] {
				msg = "the entity appears more than once in the request"
			}
			if msg != "" {
				code = kerr.InvalidRequest.Code
			}
		}
		if code != 0 {
			out.ErrorCode, out.ErrorMessage = rc.countError(code), kmsg.StringPtr(msg)
		} else {
			seenEntity[alt.Entity.Key()] = true
			alterations = append(alterations, alt)
			pending = append(pending, len(resp.Entries))
		}
		resp.Entries = append(resp.Entries, out)
	}
	if len(alterations) == 0 || req.ValidateOnly {
		return resp
	}
	if code, msg := proposeSecurity(rc, cluster.AlterClientQuotas{Alterations: alterations}); code != 0 {
		for _, i := range pending {
			resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = rc.countError(code), kmsg.StringPtr(msg)
		}
	}
	return resp
}

// quotaAlteration checks one entry; msg says what is wrong with it.
func quotaAlteration(e kmsg.AlterClientQuotasRequestEntry) (alt cluster.QuotaAlteration, msg string) {
	if len(e.Entity) == 0 {
		return alt, "the entity is empty"
	}
	for _, p := range e.Entity {
		var slot **string
		switch p.Type {
		case quotaEntityUser:
			slot = &alt.Entity.User
		case quotaEntityClient:
			slot = &alt.Entity.ClientID
		case quotaEntityIP:
			return alt, "ip quota entities are not supported"
		default:
			return alt, "unknown quota entity type " + p.Type + " (user or client-id)"
		}
		if *slot != nil {
			return alt, "entity type " + p.Type + " appears more than once"
		}
		name := ""
		if p.Name != nil {
			if *p.Name == "" {
				return alt, "an entity name may not be empty (a null name is the default)"
			}
			name = *p.Name
		}
		*slot = &name
	}
	seenKey := map[string]bool{}
	for _, op := range e.Ops {
		if seenKey[op.Key] {
			return alt, "quota " + op.Key + " appears more than once"
		}
		seenKey[op.Key] = true
		if op.Remove {
			if !quota.Known(op.Key) {
				return alt, "unknown quota " + op.Key
			}
			alt.Remove = append(alt.Remove, op.Key)
			continue
		}
		if err := quota.Validate(op.Key, op.Value); err != nil {
			return alt, err.Error()
		}
		if alt.Set == nil {
			alt.Set = map[string]float64{}
		}
		alt.Set[op.Key] = op.Value
	}
	if len(alt.Set) == 0 && len(alt.Remove) == 0 {
		return alt, "no quota to set or remove"
	}
	return alt, ""
}
