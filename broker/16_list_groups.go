package broker

// ListGroups (key 16), v0–v5.
//
//   - Every group this node coordinates, with its protocol type ("" for
//     offsets-only groups), state (v4+) and type (v5+: "classic",
//     "consumer" for KIP-848 groups, whose states are Empty, Assigning,
//     Reconciling and Stable, or "share" for KIP-932 share groups, Empty
//     or Stable, protocol type "share").
//   - The states (v4+) and types (v5+) filters match case-insensitively.
//   - COORDINATOR_LOAD_IN_PROGRESS, with the groups known so far, while a
//     __consumer_offsets partition is still loading.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.ListGroups, 0, 5, handleListGroups)
	checksACLs(kmsg.ListGroups)
}

func handleListGroups(rc *requestContext, req *kmsg.ListGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	matches := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	listed, err := rc.s.groups.list()
	if err != nil {
		resp.ErrorCode = rc.countError(err.Code)
	}
	if rc.s.conf().GroupShareEnable {
		listed = append(listed, rc.s.shares.list()...)
	}
	// DESCRIBE on the cluster lists every group, else those with DESCRIBE.
	all := rc.authorizeCluster(acl.OpDescribe)
	for _, g := range listed {
		if !matches(req.StatesFilter, g.stateName) || !matches(req.TypesFilter, g.groupType) {
			continue
		}
		if !all && !rc.authorize(acl.OpDescribe, acl.ResourceGroup, g.id) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = g.id
		lg.ProtocolType = g.protocolType
		lg.GroupState = g.stateName
		lg.GroupType = g.groupType
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}
