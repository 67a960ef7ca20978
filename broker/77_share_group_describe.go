package broker

// ShareGroupDescribe (key 77), v1: the share groups this node
// coordinates, with their members, subscriptions and assignments.
// GROUP_ID_NOT_FOUND for a group that is not a share group here (Kafka
// answers so for a group of another type too).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
)

func init() {
	checksACLs(kmsg.ShareGroupDescribe)
	registerOptionalAPI(kmsg.ShareGroupDescribe, 1, 1, shareGroupsEnabled, handleShareGroupDescribe)
}

func handleShareGroupDescribe(rc *requestContext, req *kmsg.ShareGroupDescribeRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		g := kmsg.NewShareGroupDescribeResponseGroup()
		g.GroupID = id
		g.AuthorizedOperations = -2147483648
		if g.ErrorCode = rc.groupDenied(acl.OpDescribe, id); g.ErrorCode != 0 {
			resp.Groups = append(resp.Groups, g)
			continue
		}
		view, found, err := rc.s.shares.describe(id)
		switch {
		case err != nil:
			g.ErrorCode = rc.countError(err.Code)
		case !found:
			g.ErrorCode = rc.countError(kerr.GroupIDNotFound.Code)
			g.ErrorMessage = kmsg.StringPtr("group " + id + " is not a share group")
		default:
			g.GroupState, g.GroupEpoch, g.AssignmentEpoch, g.Assignor = view.state, view.epoch, view.epoch, "simple"
			for _, m := range view.members {
				dm := kmsg.NewShareGroupDescribeResponseGroupMember()
				dm.MemberID, dm.MemberEpoch, dm.ClientID, dm.ClientHost, dm.RackID = m.ID, m.Epoch, m.ClientID, m.ClientHost, m.RackID
				dm.SubscribedTopicNames = m.Subscribed
				for tid, ps := range m.Assignment {
					tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
					tp.TopicID, tp.Partitions = tid, ps
					if t := rc.s.topics.getByID(metadata.TopicID(tid)); t != nil {
						tp.Topic = t.name
					}
					dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, tp)
				}
				g.Members = append(g.Members, dm)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
