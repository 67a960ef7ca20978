package broker

// CreatePartitions (key 37), v0–v3.
//
//   - The count can only grow (INVALID_PARTITIONS otherwise); validate_only
//     creates nothing. A topic named twice is INVALID_REQUEST.
//   - Without an assignment the controller's plan places the new
//     partitions (with the topic's replication factor). A manual
//     assignment is positional — one replica list per new partition, in
//     partition order, first replica the preferred leader — and must list
//     exactly the new partitions, each with the topic's replication factor
//     and distinct registered brokers (INVALID_REPLICA_ASSIGNMENT with a
//     message); the partitions are placed as it says.
//   - The topics that pass the checks grow together as one TopicBatch
//     record (topic_batch.go).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.CreatePartitions, 0, 3, handleCreatePartitions)
	checksACLs(kmsg.CreatePartitions)
}

func handleCreatePartitions(rc *requestContext, req *kmsg.CreatePartitionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	// Every topic is checked first; those that pass grow together with
	// one metadata record (growBatch) and are answered after it.
	batch := rc.s.topics.newGrowBatch(time.Duration(req.TimeoutMillis) * time.Millisecond)
	var at []int
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, kmsg.NewCreatePartitionsResponseTopic())
		st := &resp.Topics[len(resp.Topics)-1]
		st.Topic = rt.Topic
		fail := func(code int16, msg string) {
			st.ErrorCode = rc.countError(code)
			st.ErrorMessage = &msg
		}
		if seen[rt.Topic] > 1 {
			fail(kerr.InvalidRequest.Code, "topic named more than once in the request")
			continue
		}
		if !rc.authorize(acl.OpAlter, acl.ResourceTopic, rt.Topic) {
			fail(kerr.TopicAuthorizationFailed.Code, "adding partitions needs ALTER on the topic")
			continue
		}
		if rc.mutationQuotaExceeded() && req.Version >= 3 {
			fail(kerr.ThrottlingQuotaExceeded.Code, "controller_mutation_rate quota exceeded; retry after the throttle time")
			continue
		}
		var assignments [][]int32
		for _, a := range rt.Assignment {
			assignments = append(assignments, a.Replicas)
		}
		before := 0
		if ct, ok := rc.s.clusterState().Topic(rt.Topic); ok {
			before = len(ct.Partitions)
		}
		if terr := batch.add(rt.Topic, rt.Count, assignments, req.ValidateOnly); terr != nil {
			fail(terr.code, terr.message)
			continue
		}
		if !req.ValidateOnly {
			// Counted as checked: the next topic's quota check sees it.
			rc.recordMutations(int(rt.Count) - before)
			at = append(at, len(resp.Topics)-1)
		}
	}
	for i, terr := range batch.commit() {
		if terr != nil {
			st := &resp.Topics[at[i]]
			st.ErrorCode = rc.countError(terr.code)
			st.ErrorMessage = &terr.message
		}
	}
	return resp
}
