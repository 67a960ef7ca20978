package broker

// CreateTopics (key 19), v0–v7.
//
//   - num_partitions / replication_factor -1 take num.partitions and
//     default.replication.factor; a manual replica assignment must place
//     each partition on this node alone.
//   - Configs are validated by their Kafka names (INVALID_CONFIG);
//     validate_only checks everything and creates nothing.
//   - TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION (also for a name that
//     differs from an existing one only by '.' versus '_'), INVALID_PARTITIONS,
//     INVALID_REPLICATION_FACTOR; a name twice in one request gets
//     INVALID_REQUEST.
//   - v5+ responses carry the resulting partitions, replication factor and
//     configs; v7 the topic ID.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.CreateTopics, 0, 7, handleCreateTopics)
}

func handleCreateTopics(rc *requestContext, req *kmsg.CreateTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		fail := func(code int16, msg string) {
			st.ErrorCode = rc.countError(code)
			st.ErrorMessage = &msg
			st.NumPartitions, st.ReplicationFactor = -1, -1
		}
		if seen[rt.Topic] > 1 {
			fail(kerr.InvalidRequest.Code, "topic named more than once in the request")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		partitions, rf := rt.NumPartitions, rt.ReplicationFactor
		if len(rt.ReplicaAssignment) > 0 {
			if partitions != -1 || rf != -1 {
				fail(kerr.InvalidRequest.Code, "num_partitions and replication_factor must be -1 with a replica assignment")
				resp.Topics = append(resp.Topics, st)
				continue
			}
			bad := false
			for i, a := range rt.ReplicaAssignment {
				if a.Partition != int32(i) || len(a.Replicas) != 1 || a.Replicas[0] != rc.s.cfg.NodeID {
					bad = true
				}
			}
			if bad {
				fail(kerr.InvalidReplicaAssignment.Code, "replica assignment must list partitions 0..n-1, each on this node alone")
				resp.Topics = append(resp.Topics, st)
				continue
			}
			partitions, rf = int32(len(rt.ReplicaAssignment)), 1
		}
		configs := map[string]string{}
		for _, c := range rt.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		var t *topicState
		var terr *topicError
		if v, ok := configs[recoverFromBucketConfig]; ok {
			// strata topic recover NAME --from-bucket
			t, terr = rc.s.topics.recoverFromBucket(rc.s.ctx, rt.Topic, v, req.ValidateOnly)
			if t != nil {
				partitions, configs = int32(len(t.partitions)), t.meta.Configs
			}
		} else {
			t, terr = rc.s.topics.create(rt.Topic, partitions, rf, configs, req.ValidateOnly)
		}
		if terr != nil {
			fail(terr.code, terr.message)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if partitions == -1 {
			partitions = rc.s.cfg.NumPartitions
		}
		st.NumPartitions, st.ReplicationFactor = partitions, 1
		if t != nil {
			st.TopicID = t.meta.ID
		}
		if req.Version >= 5 {
			eff := resolveTopicConfig(&rc.s.cfg, configs)
			for _, name := range sortedTopicConfigNames() {
				c := kmsg.NewCreateTopicsResponseTopicConfig()
				c.Name = name
				v := eff.values[name]
				c.Value = &v
				c.Source = int8(rc.s.topicConfigSource(name, configs))
				st.Configs = append(st.Configs, c)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
