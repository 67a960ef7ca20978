package broker

// ElectLeaders (key 43), v0-2 (KIP-183, KIP-460):
//   - election_type 0 (preferred) makes each partition's first replica its
//     leader when it is eligible and in the ISR (PREFERRED_LEADER_NOT_AVAILABLE
//     otherwise; ELECTION_NOT_NEEDED when it already leads); 1 (unclean)
//     elects a leader for a partition that has none, from outside the ISR
//     if it must (ELECTION_NOT_NEEDED when it has one,
//     ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is alive). As in
//     Kafka's controller (ReplicationControlManager.electLeader), a
//     partition whose preferred replica leads, or (unclean) that has a
//     leader, needs no election; one that no eligible replica can lead
//     answers the type's own error. Another election_type is
//     INVALID_REQUEST, top-level and per partition, as Kafka answers.
//   - Null topics means every partition; their answers leave out the
//     partitions that needed no election, as Kafka does.
//   - Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED: top-level
//     from v1, per partition in v0).
//   - Each election is a cluster.ElectLeader record; the answer comes once
//     this node applied it, within the request's timeout.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.ElectLeaders, 0, 2, handleElectLeaders)
	checksACLs(kmsg.ElectLeaders)
}

func handleElectLeaders(rc *requestContext, req *kmsg.ElectLeadersRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	unclean := req.Version >= 1 && req.ElectionType == 1
	allowed := rc.authorizeCluster(acl.OpAlter)
	if !allowed && req.Version >= 1 {
		resp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
		return resp
	}
	if req.Version >= 1 && req.ElectionType != 0 && req.ElectionType != 1 {
		return invalidElectionType(rc, req, resp)
	}
	st := rc.s.clusterState()
	type target struct {
		topic     string
		partition int32
	}
	all := req.Topics == nil
	var targets []target
	if all {
		for _, name := range st.TopicNames() {
			for i := range st.Topics[name].Partitions {
				targets = append(targets, target{name, int32(i)})
			}
		}
	} else {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				targets = append(targets, target{t.Topic, p})
			}
		}
	}
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(rc.s.ctx, timeout)
	defer cancel()
	byTopic := map[string]int{}
	for _, tg := range targets {
		code, msg := rc.electLeader(ctx, tg.topic, tg.partition, allowed, unclean)
		if all && code == kerr.ElectionNotNeeded.Code {
			continue
		}
		i, ok := byTopic[tg.topic]
		if !ok {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = tg.topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			byTopic[tg.topic] = i
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = tg.partition, rc.countError(code)
		if msg != "" {
			rp.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp
}

// invalidElectionType answers an election_type Kafka does not know as its
// controller's InvalidRequestException does: INVALID_REQUEST at the top
// and for every partition asked about.
func invalidElectionType(rc *requestContext, req *kmsg.ElectLeadersRequest, resp *kmsg.ElectLeadersResponse) kmsg.Response {
	msg := fmt.Sprintf("unknown election type %d: 0 (preferred) or 1 (unclean)", req.ElectionType)
	resp.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, kerr.InvalidRequest.Code, kmsg.StringPtr(msg)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// electLeader runs one election and returns its Kafka error and message.
func (rc *requestContext) electLeader(ctx context.Context, topic string, partition int32, allowed, unclean bool) (int16, string) {
	if !allowed {
		return kerr.ClusterAuthorizationFailed.Code, "electing leaders needs ALTER on the cluster"
	}
	st := rc.s.clusterState()
	t, ok := st.Topic(topic)
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return kerr.UnknownTopicOrPartition.Code, ""
	}
	p := t.Partitions[partition]
	if len(p.Replicas) == 0 {
		return kerr.UnknownTopicOrPartition.Code, ""
	}
	preferred := p.Replicas[0]
	rec := cluster.ElectLeader{Topic: topic, Partition: partition}
	switch {
	case unclean && p.Leader >= 0 && st.EligibleReplica(p, p.Leader):
		return kerr.ElectionNotNeeded.Code, "the partition has a leader"
	case unclean:
		rec.Unclean = true
	case p.Leader == preferred:
		return kerr.ElectionNotNeeded.Code, "the preferred replica leads already"
	case !st.EligibleReplica(p, preferred) || !slices.Contains(p.ISR, preferred):
		return kerr.PreferredLeaderNotAvailable.Code, "the preferred replica is not alive and in the ISR"
	default:
		rec.Preferred = true
	}
	if _, err := rc.s.meta.propose(ctx, rec); err != nil {
		switch {
		case errors.Is(err, cluster.ErrTopicNotFound), errors.Is(err, cluster.ErrPartitionNotFound):
			return kerr.UnknownTopicOrPartition.Code, err.Error() // deleted meanwhile
		case errors.Is(err, cluster.ErrRejected) && unclean:
			return kerr.EligibleLeadersNotAvailable.Code, err.Error()
		case errors.Is(err, cluster.ErrRejected):
			return kerr.PreferredLeaderNotAvailable.Code, err.Error()
		}
		return kerr.RequestTimedOut.Code, "the metadata quorum did not apply the election in time"
	}
	after, _ := rc.s.clusterState().Topic(topic)
	np := after.Partitions[partition]
	switch {
	case unclean && (np.Leader < 0 || !rc.s.clusterState().EligibleReplica(np, np.Leader)):
		return kerr.EligibleLeadersNotAvailable.Code, "no replica is alive to lead"
	case !unclean && np.Leader != preferred:
		return kerr.PreferredLeaderNotAvailable.Code, "the preferred replica did not become leader"
	}
	return 0, ""
}
