package broker

// CreatePartitions (key 37), v0–v3.
//
//   - The count can only grow (INVALID_PARTITIONS otherwise); a manual
//     assignment must list exactly the new partitions, each on this node
//     alone (INVALID_REPLICA_ASSIGNMENT); validate_only creates nothing. A
//     topic named twice is INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.CreatePartitions, 0, 3, handleCreatePartitions)
}

func handleCreatePartitions(rc *requestContext, req *kmsg.CreatePartitionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		fail := func(code int16, msg string) {
			st.ErrorCode = rc.countError(code)
			st.ErrorMessage = &msg
		}
		switch {
		case seen[rt.Topic] > 1:
			fail(kerr.InvalidRequest.Code, "topic named more than once in the request")
		case !validAssignment(rt.Assignment, rc.s.cfg.NodeID):
			fail(kerr.InvalidReplicaAssignment.Code, "each new partition must be placed on this node alone")
		default:
			if terr := rc.s.topics.grow(rt.Topic, rt.Count, len(rt.Assignment), req.ValidateOnly); terr != nil {
				fail(terr.code, terr.message)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func validAssignment(as []kmsg.CreatePartitionsRequestTopicAssignment, node int32) bool {
	for _, a := range as {
		if len(a.Replicas) != 1 || a.Replicas[0] != node {
			return false
		}
	}
	return true
}
