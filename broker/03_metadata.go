package broker

// Metadata (key 3), v0–v12.
//
//   - Brokers are the registered, unfenced nodes (this node alone before it
//     has registered); controller_id is the active controller, or a broker
//     answering for a controller-only one (controllerID). Topics are this
//     node's applied view of the metadata quorum: per partition its
//     replicas, ISR, leader and leader epoch, and as offline replicas the
//     ones not live; a leaderless partition has LEADER_NOT_AVAILABLE.
//   - A null topic list means all topics; an empty one (v1+) none.
//   - Unknown topics are auto-created with num.partitions and
//     default.replication.factor when auto.create.topics.enable is on and
//     the request allows it (v4+ flag; always before v4). As in Kafka, the
//     response of the request that creates a topic lists it with
//     LEADER_NOT_AVAILABLE — its name and is_internal, a zero topic ID, no
//     partitions — and the client asks again. The creation has committed
//     through the quorum and been applied on this node before that
//     response, so the next Metadata here lists the topic.
//   - Unlike Kafka, a name whose topic deletion this node applied less than
//     recreateGuardWindow (5 s) ago is not auto-created: the answer is
//     UNKNOWN_TOPIC_OR_PARTITION, so the refreshes that follow a deletion
//     (sarama's RefreshMetadata, clients of the topic reacting to the
//     deletion) do not bring it back. CreateTopics is not affected.
//   - Illegal names get INVALID_TOPIC_EXCEPTION.
//   - While a listed partition's leader refused this node's connections
//     and its fence is not applied yet, or closed this node's replica
//     fetch connection and was not redialed yet, the answer waits for the
//     verdict (at most 2.5 s, unreachable.go), so it names the new leader.
//   - v10+ requests may name topics by ID; unknown IDs get UNKNOWN_TOPIC_ID.
//   - __consumer_offsets and __transaction_state are listed with
//     is_internal; naming one creates it with its coordinator's settings
//     (as FindCoordinator does), answered LEADER_NOT_AVAILABLE like any
//     auto-created topic.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.Metadata, 0, 12, handleMetadata)
	checksACLs(kmsg.Metadata)
}

func handleMetadata(rc *requestContext, req *kmsg.MetadataRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	defer rc.metadataAuthorizedOperations(req, resp)
	rc.s.awaitSuspectFences(rc.s.ctx, metadataTopicNames(req))
	st := rc.s.clusterState()
	for _, b := range rc.s.liveBrokers(st, rc.conn.listener) {
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port, mb.Rack = b.id, b.host, b.port, b.rack
		resp.Brokers = append(resp.Brokers, mb)
	}
	clusterID := st.ClusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = rc.s.controllerID()

	allowAuto := req.Version < 4 || req.AllowAutoTopicCreation
	if req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0) {
		for _, t := range rc.s.topics.all() {
			if rc.authorize(acl.OpDescribe, acl.ResourceTopic, t.name) { // others are not listed
				resp.Topics = append(resp.Topics, rc.metadataTopic(t))
			}
		}
		return resp
	}
	denied := func(name string, id [16]byte) kmsg.MetadataResponseTopic {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = &name, id
		mt.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
		return mt
	}
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			t := rc.s.topics.getByID(metadata.TopicID(rt.TopicID))
			if t == nil {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = rt.TopicID
				mt.ErrorCode = rc.countError(kerr.UnknownTopicID.Code)
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, t.name) {
				resp.Topics = append(resp.Topics, denied(t.name, rt.TopicID))
				continue
			}
			resp.Topics = append(resp.Topics, rc.metadataTopic(t))
			continue
		}
		name := *rt.Topic
		if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, name) {
			resp.Topics = append(resp.Topics, denied(name, [16]byte{}))
			continue
		}
		if t := rc.s.topics.get(name); t != nil {
			resp.Topics = append(resp.Topics, rc.metadataTopic(t))
			continue
		}
		var code int16
		switch {
		case validateTopicName(name) != nil:
			code = kerr.InvalidTopicException.Code
		case !allowAuto:
			code = kerr.UnknownTopicOrPartition.Code
		case !rc.authorizeCluster(acl.OpCreate) && !rc.authorize(acl.OpCreate, acl.ResourceTopic, name):
			code = kerr.TopicAuthorizationFailed.Code
		default:
			code = kerr.LeaderNotAvailable.Code // created: the client asks again
			if terr := rc.s.topics.autoCreate(name); terr != nil {
				code = terr.code
			}
		}
		// What Kafka lists for a topic it has no partitions of: the name,
		// is_internal, a zero topic ID.
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &name
		mt.IsInternal = isInternalTopic(name)
		mt.ErrorCode = rc.countError(code)
		resp.Topics = append(resp.Topics, mt)
	}
	return resp
}

// metadataAuthorizedOperations fills KIP-430's fields a v8+ request asks for.
// metadataTopicNames lists the topics a request names (nil: all of them,
// or some named by id).
func metadataTopicNames(req *kmsg.MetadataRequest) []string {
	if req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0) {
		return nil
	}
	names := make([]string, 0, len(req.Topics))
	for _, t := range req.Topics {
		if t.Topic == nil {
			return nil
		}
		names = append(names, *t.Topic)
	}
	return names
}

func (rc *requestContext) metadataAuthorizedOperations(req *kmsg.MetadataRequest, resp *kmsg.MetadataResponse) {
	if req.Version < 8 {
		return
	}
	if req.IncludeClusterAuthorizedOperations && req.Version <= 10 {
		resp.AuthorizedOperations = rc.authorizedOperations(acl.ResourceCluster, acl.ClusterName, clusterOperations)
	}
	if req.IncludeTopicAuthorizedOperations {
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.ErrorCode == 0 && t.Topic != nil {
				t.AuthorizedOperations = rc.authorizedOperations(acl.ResourceTopic, *t.Topic, topicOperations)
			}
		}
	}
}

func (rc *requestContext) metadataTopic(t *topicState) kmsg.MetadataResponseTopic {
	_, _, meta := rc.s.topics.snapshot(t)
	mt := kmsg.NewMetadataResponseTopic()
	name := meta.Name
	mt.Topic = &name
	mt.TopicID = meta.ID
	mt.IsInternal = isInternalTopic(name)
	st := rc.s.clusterState()
	ct, ok := st.Topic(name)
	if !ok || metadata.TopicID(ct.ID) != meta.ID {
		mt.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
		return mt
	}
	for i, cp := range ct.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = int32(i)
		mp.Leader = cp.Leader
		mp.LeaderEpoch = cp.LeaderEpoch
		mp.Replicas = slices.Clone(cp.Replicas)
		mp.ISR = slices.Clone(cp.ISR)
		mp.OfflineReplicas = []int32{}
		for _, r := range cp.Replicas {
			if !st.LiveReplica(cp, r) {
				mp.OfflineReplicas = append(mp.OfflineReplicas, r)
			}
		}
		if cp.Leader == cluster.NoLeader {
			mp.ErrorCode = rc.countError(kerr.LeaderNotAvailable.Code)
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
