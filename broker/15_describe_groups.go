package broker

// DescribeGroups (key 15), v0–v6.
//
//   - State, protocol type, and members (id, instance id, client id and
//     host); the protocol, member metadata and assignments only while the
//     group is Stable, as Kafka shows them.
//   - A group that does not exist is "Dead" with no error before v6 and
//     GROUP_ID_NOT_FOUND from v6 (KIP-1043).
//   - Authorized operations (v3+, on request): READ, DELETE, DESCRIBE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeGroups, 0, 6, handleDescribeGroups)
	checksACLs(kmsg.DescribeGroups)
}

func handleDescribeGroups(rc *requestContext, req *kmsg.DescribeGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group = id
		if req.IncludeAuthorizedOperations {
			g.AuthorizedOperations = rc.groupAuthorizedOperations(id)
		}
		if g.ErrorCode = rc.groupDenied(acl.OpDescribe, id); g.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, g)
			continue
		}
		d, ok, err := rc.s.groups.describe(id)
		switch {
		case err != nil:
			g.ErrorCode = rc.countError(err.Code)
		case !ok && req.Version >= 6:
			g.ErrorCode = rc.countError(kerr.GroupIDNotFound.Code)
			g.ErrorMessage = kmsg.StringPtr("group " + id + " not found")
		case !ok:
			g.State = "Dead"
		default:
			g.State = d.StateName
			g.ProtocolType = d.ProtocolType
			g.Protocol = d.Protocol
			for _, m := range d.Members {
				gm := kmsg.NewDescribeGroupsResponseGroupMember()
				gm.MemberID = m.MemberID
				gm.InstanceID = m.InstanceID
				gm.ClientID = m.ClientID
				gm.ClientHost = m.ClientHost
				gm.ProtocolMetadata = m.Metadata
				gm.MemberAssignment = m.Assignment
				if gm.ProtocolMetadata == nil {
					gm.ProtocolMetadata = []byte{}
				}
				if gm.MemberAssignment == nil {
					gm.MemberAssignment = []byte{}
				}
				g.Members = append(g.Members, gm)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
