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
)

func init() {
	registerAPI(kmsg.FindCoordinator, 0, 5, handleFindCoordinator)
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
	switch keyType {
	case 0:
		if _, code := rc.s.groups.shardFor(key); code != nil {
			fail(code, "the group coordinator is not available")
			return c
		}
		host, port := rc.s.advertisedHostPort()
		c.NodeID, c.Host, c.Port = rc.s.cfg.NodeID, host, port
	case 1:
		if _, code := rc.s.txns.shardFor(key); code != nil {
			fail(code, "the transaction coordinator is not available")
			return c
		}
		host, port := rc.s.advertisedHostPort()
		c.NodeID, c.Host, c.Port = rc.s.cfg.NodeID, host, port
	default:
		fail(kerr.InvalidRequest, "unknown coordinator key type")
	}
	return c
}
