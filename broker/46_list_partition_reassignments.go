package broker

// ListPartitionReassignments (key 46), v0 (KIP-455).
//
//   - Lists the partitions with a reassignment in progress in this node's
//     applied metadata: all of them when topics is null, else those among
//     the requested partitions. Replicas is the full set during the move
//     (target first, then the replicas leaving), with AddingReplicas and
//     RemovingReplicas.
//   - Like Kafka, unknown topics and partitions and partitions not being
//     reassigned are left out rather than reported as errors.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.ListPartitionReassignments, 0, 0, handleListPartitionReassignments)
	checksACLs(kmsg.ListPartitionReassignments)
}

func handleListPartitionReassignments(rc *requestContext, req *kmsg.ListPartitionReassignmentsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode = rc.clusterDenied(acl.OpDescribe); resp.ErrorCode != 0 {
		return resp
	}
	st := rc.s.clusterState()
	listed := func(name string, t cluster.Topic, partitions []int32) {
		out := kmsg.NewListPartitionReassignmentsResponseTopic()
		out.Topic = name
		seen := map[int32]bool{}
		for _, i := range partitions {
			if i < 0 || int(i) >= len(t.Partitions) || !t.Partitions[i].Reassigning() || seen[i] {
				continue
			}
			seen[i] = true
			p := t.Partitions[i]
			lp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			lp.Partition = i
			lp.Replicas = slices.Clone(p.Replicas)
			lp.AddingReplicas = nonNil(p.AddingReplicas)
			lp.RemovingReplicas = nonNil(p.RemovingReplicas)
			out.Partitions = append(out.Partitions, lp)
		}
		if len(out.Partitions) > 0 {
			resp.Topics = append(resp.Topics, out)
		}
	}
	if req.Topics == nil {
		names := make([]string, 0, len(st.Topics))
		for name := range st.Topics {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			t := st.Topics[name]
			all := make([]int32, len(t.Partitions))
			for i := range all {
				all[i] = int32(i)
			}
			listed(name, t, all)
		}
		return resp
	}
	for _, rt := range req.Topics {
		if t, ok := st.Topic(rt.Topic); ok {
			listed(rt.Topic, t, rt.Partitions)
		}
	}
	return resp
}

// nonNil returns a copy of ids that encodes as an empty array, not null.
func nonNil(ids []int32) []int32 {
	return append([]int32{}, ids...)
}
