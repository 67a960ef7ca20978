package broker

// Metadata (key 3), v0–v12.
//
//   - This node is the only broker and the controller; it leads every
//     partition, which has one replica, in the ISR.
//   - A null topic list means all topics; an empty one (v1+) none.
//   - Unknown topics are auto-created with num.partitions when
//     auto.create.topics.enable is on and the request allows it (v4+ flag;
//     always before v4). Illegal names get INVALID_TOPIC_EXCEPTION.
//   - v10+ requests may name topics by ID; unknown IDs get UNKNOWN_TOPIC_ID.
//   - __consumer_offsets is listed with is_internal; naming it creates it
//     with the group coordinator's settings (as FindCoordinator does).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.Metadata, 0, 12, handleMetadata)
}

func handleMetadata(rc *requestContext, req *kmsg.MetadataRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	st := rc.s.clusterState()
	for _, b := range rc.s.liveBrokers(st) {
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
			resp.Topics = append(resp.Topics, rc.metadataTopic(t))
		}
		return resp
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
			resp.Topics = append(resp.Topics, rc.metadataTopic(t))
			continue
		}
		name := *rt.Topic
		t := rc.s.topics.get(name)
		var terr *topicError
		if t == nil {
			if err := validateTopicName(name); err != nil {
				terr = newTopicError(kerr.InvalidTopicException, "%v", err)
			} else if allowAuto {
				t, terr = rc.s.topics.autoCreate(name)
			} else {
				terr = newTopicError(kerr.UnknownTopicOrPartition, "unknown topic")
			}
		}
		if terr != nil {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = &name
			mt.ErrorCode = rc.countError(terr.code)
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, rc.metadataTopic(t))
	}
	return resp
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
			if !st.Live(r) {
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
