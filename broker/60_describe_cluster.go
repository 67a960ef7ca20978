package broker

// DescribeCluster (key 60), v0–v2: the cluster ID, the active controller
// as in Metadata (controllerID: the raft leader, or this node answering
// for a controller-only one; -1 while there is none) and the registered,
// unfenced brokers (this node alone before it has registered). v1 asks for
// an endpoint type; only brokers (1) are answered, anything else is
// UNSUPPORTED_ENDPOINT_TYPE. v2's include_fenced_brokers adds the fenced
// ones, marked is_fenced (KIP-1073).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeCluster, 0, 2, handleDescribeCluster)
}

func handleDescribeCluster(rc *requestContext, req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = rc.countError(kerr.UnsupportedEndpointType.Code)
		return resp
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = rc.authorizedOperations(acl.ResourceCluster, acl.ClusterName, clusterOperations)
	}
	st := rc.s.clusterState()
	resp.ClusterID = st.ClusterID
	resp.ControllerID = rc.s.controllerID()
	for _, b := range rc.s.liveBrokers(st, rc.conn.listener) {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = b.id, b.host, b.port, b.rack
		resp.Brokers = append(resp.Brokers, db)
	}
	if req.Version >= 2 && req.IncludeFencedBrokers {
		for _, id := range st.BrokerIDs() {
			b := st.Brokers[id]
			addr, ok := b.Endpoint(rc.conn.listener.spec.name)
			if !b.Fenced || !ok {
				continue
			}
			ba := rc.s.brokerAddrOf(b.NodeID, addr, b.Rack)
			db := kmsg.NewDescribeClusterResponseBroker()
			db.NodeID, db.Host, db.Port, db.Rack, db.IsFenced = ba.id, ba.host, ba.port, ba.rack, true
			resp.Brokers = append(resp.Brokers, db)
		}
	}
	return resp
}
