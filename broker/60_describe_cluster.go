package broker

// DescribeCluster (key 60), v0–v1: the cluster ID, this node as controller
// and only broker. v1 asks for an endpoint type; only brokers (1) exist.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.DescribeCluster, 0, 1, handleDescribeCluster)
}

func handleDescribeCluster(rc *requestContext, req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = rc.countError(kerr.UnsupportedEndpointType.Code)
		return resp
	}
	resp.ClusterID = rc.s.store.ClusterID()
	resp.ControllerID = rc.s.cfg.NodeID
	host, port := rc.s.advertisedHostPort()
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = rc.s.cfg.NodeID, host, port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp
}
