package broker

// DeleteGroups (key 42), v0–v3.
//
//   - Only an Empty group can be deleted (NON_EMPTY_GROUP otherwise); its
//     offsets and metadata get tombstones in __consumer_offsets, written
//     before the answer.
//   - GROUP_ID_NOT_FOUND for a group that does not exist; v3 adds a message.
//   - A share group (KIP-932) is deleted with its share-partitions' state
//     held on this node, NON_EMPTY_GROUP while it has members.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DeleteGroups, 0, 3, handleDeleteGroups)
	checksACLs(kmsg.DeleteGroups)
}

func handleDeleteGroups(rc *requestContext, req *kmsg.DeleteGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group = id
		if g.ErrorCode = rc.groupDenied(acl.OpDelete, id); g.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if found, err := rc.s.shares.deleteGroup(id); found {
			// A share group: its members and the state of its
			// share-partitions here go.
			if err != nil {
				g.ErrorCode = rc.countError(err.Code)
			}
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if err := rc.s.groups.deleteGroup(id); err != nil {
			g.ErrorCode = rc.countError(err.Code)
			if req.Version >= 3 {
				g.ErrorMessage = kmsg.StringPtr(err.Description)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
