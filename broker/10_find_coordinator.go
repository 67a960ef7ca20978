package broker

// FindCoordinator (key 10), v0–v5.
//
//   - Key type 0 (group): this node, which leads the group's
//     __consumer_offsets partition (abs(javaHashCode(group)) % partitions,
//     as Kafka computes it). The topic is created on first use.
//   - Key type 1 (transactional id): COORDINATOR_NOT_AVAILABLE until
//     transactions are built. Any other key type: INVALID_REQUEST.
//   - v4+ batches keys (KIP-699) and answers each; v5 only adds an error
//     code the client understands (KIP-890). v6 (share groups) is not
//     offered.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.FindCoordinator, 0, 5, handleFindCoordinator)
	checksACLs(kmsg.FindCoordinator)
}

func handleFindCoordinator(rc *requestContext, req *kmsg.FindCoordinatorRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, rc.findCoordinator(req.CoordinatorType, key))
		}
		return resp
	}
	c := rc.findCoordinator(req.CoordinatorType, req.CoordinatorKey)
	resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
	resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
	return resp
}

func (rc *requestContext) findCoordinator(keyType int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	fail := func(err *kerr.Error, msg string) {
		c.ErrorCode = rc.countError(err.Code)
		c.ErrorMessage = &msg
	}
	var topic string
	switch keyType {
	case 0:
		if !rc.authorize(acl.OpDescribe, acl.ResourceGroup, key) {
			fail(kerr.GroupAuthorizationFailed, "finding the coordinator needs DESCRIBE on the group")
			return c
		}
		if rc.s.groups.ensureTopic() == nil {
			fail(kerr.CoordinatorNotAvailable, "the group coordinator is not available")
			return c
		}
		topic = consumerOffsetsTopic
	case 1:
		if !rc.authorize(acl.OpDescribe, acl.ResourceTransactionalID, key) {
			fail(kerr.TransactionalIDAuthorizationFailed, "finding the coordinator needs DESCRIBE on the transactional id")
			return c
		}
		if rc.s.txns.ensureTopic() == nil {
			fail(kerr.CoordinatorNotAvailable, "the transaction coordinator is not available")
			return c
		}
		topic = transactionStateTopic
	default:
		fail(kerr.InvalidRequest, "unknown coordinator key type")
		return c
	}
	// The coordinator is the leader of the key's partition of the
	// internal topic, wherever that is.
	st := rc.s.clusterState()
	t, ok := st.Topic(topic)
	if !ok || len(t.Partitions) == 0 {
		fail(kerr.CoordinatorNotAvailable, "the coordinator topic is not available")
		return c
	}
	leader := t.Partitions[groupPartition(key, len(t.Partitions))].Leader
	b, ok := st.Brokers[leader]
	if !ok || b.Fenced {
		fail(kerr.CoordinatorNotAvailable, "the coordinator's partition has no leader")
		return c
	}
	endpoint, ok := b.Endpoint(rc.conn.listener.spec.name)
	if !ok {
		fail(kerr.CoordinatorNotAvailable, "the coordinator has no listener "+rc.conn.listener.spec.name)
		return c
	}
	addr := rc.s.brokerAddrOf(b.NodeID, endpoint, b.Rack)
	c.NodeID, c.Host, c.Port = addr.id, addr.host, addr.port
	return c
}
