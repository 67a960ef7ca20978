package broker

// CreateTopics (key 19), v0–v7.
//
//   - num_partitions / replication_factor -1 take num.partitions and
//     default.replication.factor; the replicas are spread over the
//     eligible brokers (and racks) by the controller's plan; a replication
//     factor above the eligible brokers is INVALID_REPLICATION_FACTOR. A
//     manual replica assignment lists partitions 0..n-1, each with the same
//     number of distinct registered brokers (INVALID_REPLICA_ASSIGNMENT).
//   - Configs are validated by their Kafka names (INVALID_CONFIG);
//     validate_only checks everything and creates nothing.
//   - TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION (also for a name that
//     differs from an existing one only by '.' versus '_'), INVALID_PARTITIONS,
//     INVALID_REPLICATION_FACTOR; a name twice in one request gets
//     INVALID_REQUEST.
//   - v5+ responses carry the resulting partitions, replication factor and
//     configs; v7 the topic ID.
//   - Every topic is checked first; those that pass are created together
//     as one TopicBatch record (one raft round for the request) and each
//     still gets its own answer (topic_batch.go).
//   - The partitions created count against controller_mutation_rate; once
//     it is used up, v6+ topics get THROTTLING_QUOTA_EXCEEDED (KIP-599),
//     older versions are created and throttled.

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.CreateTopics, 0, 7, handleCreateTopics)
	checksACLs(kmsg.CreateTopics)
}

func handleCreateTopics(rc *requestContext, req *kmsg.CreateTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	// Every topic is checked first; those that pass are created together
	// with one metadata record (createBatch) and answered after it.
	batch := rc.s.topics.newCreateBatch(time.Duration(req.TimeoutMillis) * time.Millisecond)
	type queued struct {
		at         int // index in resp.Topics
		partitions int32
		rf         int16
		configs    map[string]string
	}
	var waiting []queued
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, kmsg.NewCreateTopicsResponseTopic())
		st := &resp.Topics[len(resp.Topics)-1]
		st.Topic = rt.Topic
		fail := func(code int16, msg string) {
			st.ErrorCode = rc.countError(code)
			st.ErrorMessage = &msg
			st.NumPartitions, st.ReplicationFactor = -1, -1
		}
		if seen[rt.Topic] > 1 {
			fail(kerr.InvalidRequest.Code, "topic named more than once in the request")
			continue
		}
		if !rc.authorizeCluster(acl.OpCreate) && !rc.authorize(acl.OpCreate, acl.ResourceTopic, rt.Topic) {
			fail(kerr.TopicAuthorizationFailed.Code, "creating a topic needs CREATE on the cluster or the topic")
			continue
		}
		if rc.mutationQuotaExceeded() && req.Version >= 6 {
			fail(kerr.ThrottlingQuotaExceeded.Code, "controller_mutation_rate quota exceeded; retry after the throttle time")
			continue
		}
		partitions, rf := rt.NumPartitions, rt.ReplicationFactor
		var assignments [][]int32
		if len(rt.ReplicaAssignment) > 0 {
			if partitions != -1 || rf != -1 {
				fail(kerr.InvalidRequest.Code, "num_partitions and replication_factor must be -1 with a replica assignment")
				continue
			}
			var msg string
			if assignments, msg = replicaAssignment(rc.s.clusterState(), rt.ReplicaAssignment); msg != "" {
				fail(kerr.InvalidReplicaAssignment.Code, msg)
				continue
			}
			partitions, rf = int32(len(assignments)), int16(len(assignments[0]))
		}
		configs := map[string]string{}
		for _, c := range rt.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		if v, ok := configs[recoverFromBucketConfig]; ok {
			// strata topic recover NAME --from-bucket: one topic at a time.
			t, terr := rc.s.topics.recoverFromBucket(rc.s.ctx, rt.Topic, v, req.ValidateOnly)
			if terr != nil {
				fail(terr.code, terr.message)
				continue
			}
			if t != nil {
				parts, _, meta := rc.s.topics.snapshot(t)
				partitions, configs = int32(len(parts)), meta.Configs
				rc.recordMutations(int(partitions))
			}
			rc.createdTopic(req, st, t, partitions, rf, configs)
			continue
		}
		if terr := batch.add(rt.Topic, partitions, rf, configs, assignments, req.ValidateOnly, nil); terr != nil {
			fail(terr.code, terr.message)
			continue
		}
		if req.ValidateOnly {
			rc.createdTopic(req, st, nil, partitions, rf, configs)
			continue
		}
		if partitions == -1 {
			partitions = rc.s.cfg.NumPartitions
		}
		// Counted as checked, as Kafka's controller does: the next
		// topic's quota check sees it.
		rc.recordMutations(int(partitions))
		waiting = append(waiting, queued{at: len(resp.Topics) - 1, partitions: partitions, rf: rf, configs: configs})
	}
	for i, res := range batch.commit() {
		q := waiting[i]
		st := &resp.Topics[q.at]
		if res.err != nil {
			st.ErrorCode = rc.countError(res.err.code)
			st.ErrorMessage = &res.err.message
			st.NumPartitions, st.ReplicationFactor = -1, -1
			continue
		}
		rc.createdTopic(req, st, res.topic, q.partitions, q.rf, q.configs)
	}
	return resp
}

// createdTopic fills in the answer for a topic created (or, validate_only,
// that would be): partitions, replication factor, topic ID (v7) and the
// resulting configs (v5+).
func (rc *requestContext) createdTopic(req *kmsg.CreateTopicsRequest, st *kmsg.CreateTopicsResponseTopic, t *topicState, partitions int32, rf int16, configs map[string]string) {
	if partitions == -1 {
		partitions = rc.s.cfg.NumPartitions
	}
	if rf == -1 {
		rf = rc.s.cfg.DefaultReplicationFactor
	}
	st.NumPartitions, st.ReplicationFactor = partitions, rf
	if t != nil {
		st.TopicID = t.id
	}
	if req.Version >= 5 {
		eff := resolveTopicConfig(rc.s.conf(), configs)
		for _, name := range sortedTopicConfigNames() {
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name = name
			v := eff.values[name]
			c.Value = &v
			c.Source = int8(rc.s.topicConfigSource(name, configs))
			st.Configs = append(st.Configs, c)
		}
	}
}

// replicaAssignment checks a manual replica assignment against the applied
// state and returns one replica list per partition, in partition order.
// The entries may come in any order but must name each of partitions
// 0..n-1 exactly once, each with the same non-zero number of distinct
// registered brokers. msg is "" or what is wrong.
func replicaAssignment(st cluster.State, as []kmsg.CreateTopicsRequestTopicReplicaAssignment) (assignments [][]int32, msg string) {
	n := len(as)
	byPartition := make(map[int32][]int32, n)
	for _, a := range as {
		if _, dup := byPartition[a.Partition]; dup {
			return nil, fmt.Sprintf("partition %d is assigned more than once", a.Partition)
		}
		byPartition[a.Partition] = a.Replicas
	}
	assignments = make([][]int32, n)
	for i := range assignments {
		replicas, ok := byPartition[int32(i)]
		if !ok {
			return nil, fmt.Sprintf("partition %d is not assigned: the %d assignments must number the partitions 0..%d, each once", i, n, n-1)
		}
		if problem := replicaSetProblem(st, replicas); problem != "" {
			return nil, fmt.Sprintf("partition %d: %s", i, problem)
		}
		if i > 0 && len(replicas) != len(assignments[0]) {
			return nil, fmt.Sprintf("partition %d has %d replicas, partition 0 has %d: every partition needs the same number", i, len(replicas), len(assignments[0]))
		}
		assignments[i] = replicas
	}
	return assignments, ""
}
