package broker

// DeleteTopics (key 20), v0–v6.
//
//   - v6 names topics by name or ID (looked up in the applied metadata).
//     The topic leaves the metadata first (a DeleteTopic record), then
//     each node that applies it removes its partition directories; the
//     answer comes once this node has. A crash in between is finished at
//     the next start (orphan directories are removed).
//   - UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID, TOPIC_DELETION_DISABLED.
//   - The topics that pass the checks are deleted together as one
//     TopicBatch record (topic_batch.go).
//   - Each node that applies the deletion refuses, for recreateGuardWindow
//     (5 s), to auto-create the name through Metadata (03_metadata.go), so
//     the metadata refreshes that follow a deletion do not bring the topic
//     back; CreateTopics recreates it at once.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.DeleteTopics, 0, 6, handleDeleteTopics)
	checksACLs(kmsg.DeleteTopics)
}

func handleDeleteTopics(rc *requestContext, req *kmsg.DeleteTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if req.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, target{name: t.Topic, id: t.TopicID})
		}
	} else {
		for i := range req.TopicNames {
			targets = append(targets, target{name: &req.TopicNames[i]})
		}
	}
	// Every topic is checked first; those that pass are deleted together
	// with one metadata record (deleteMany) and answered after it.
	var names []string
	var at []int
	for _, t := range targets {
		resp.Topics = append(resp.Topics, kmsg.NewDeleteTopicsResponseTopic())
		st := &resp.Topics[len(resp.Topics)-1]
		st.TopicID = t.id
		applied := rc.s.clusterState()
		name := ""
		if t.name != nil {
			name = *t.name
		} else if ct, ok := applied.TopicByID(cluster.TopicID(t.id)); ok {
			name = ct.Name
		} else {
			st.ErrorCode = rc.countError(kerr.UnknownTopicID.Code)
			continue
		}
		st.Topic = &name
		if st.ErrorCode = rc.topicDenied(acl.OpDelete, name); st.ErrorCode != 0 {
			if t.name == nil {
				st.Topic = nil // asked by id: the name is not told
			}
			continue
		}
		if rc.mutationQuotaExceeded() && req.Version >= 5 {
			st.ErrorCode = rc.countError(kerr.ThrottlingQuotaExceeded.Code)
			st.ErrorMessage = kmsg.StringPtr("controller_mutation_rate quota exceeded; retry after the throttle time")
			continue
		}
		partitions := 0
		if ct, ok := applied.Topic(name); ok {
			st.TopicID = ct.ID
			partitions = len(ct.Partitions)
		}
		// Counted as checked (the next topic's quota check sees it), not
		// for a topic that does not exist.
		if partitions > 0 && rc.s.cfg.DeleteTopicEnable && !isInternalTopic(name) {
			rc.recordMutations(partitions)
		}
		names = append(names, name)
		at = append(at, len(resp.Topics)-1)
	}
	for i, terr := range rc.s.topics.deleteMany(names, time.Duration(req.TimeoutMillis)*time.Millisecond) {
		if terr != nil {
			st := &resp.Topics[at[i]]
			st.ErrorCode = rc.countError(terr.code)
			st.ErrorMessage = &terr.message
		}
	}
	return resp
}
