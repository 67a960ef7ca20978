package broker

// ListConfigResources (key 74), v0–v1: KIP-714's ListClientMetricsResources,
// generalised by KIP-1142.
//
//   - v0 lists the client-metrics subscriptions (client_metrics.go).
//   - v1 lists the resource types asked for: CLIENT_METRICS (16), TOPIC (2)
//     and BROKER (4, the registered node ids); none asked lists all three.
//     Another type (GROUP, BROKER_LOGGER) is INVALID_REQUEST.
//   - Needs DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED).

import (
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.ListConfigResources, 0, 1, handleListConfigResources)
	checksACLs(kmsg.ListConfigResources)
}

func handleListConfigResources(rc *requestContext, req *kmsg.ListConfigResourcesRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !rc.authorizeCluster(acl.OpDescribeConfigs) {
		resp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
		return resp
	}
	supported := []int8{int8(kmsg.ConfigResourceTypeTopic), int8(kmsg.ConfigResourceTypeBroker), int8(kmsg.ConfigResourceTypeClientMetrics)}
	types := req.ResourceTypes
	switch {
	case req.Version == 0:
		types = []int8{int8(kmsg.ConfigResourceTypeClientMetrics)}
	case len(types) == 0:
		types = supported
	}
	for _, t := range types {
		if !slices.Contains(supported, t) {
			resp.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
			return resp
		}
	}
	st := rc.s.clusterState()
	add := func(t kmsg.ConfigResourceType, name string) {
		r := kmsg.NewListConfigResourcesResponseConfigResource()
		r.Name, r.Type = name, int8(t)
		resp.ConfigResources = append(resp.ConfigResources, r)
	}
	for _, t := range supported {
		if !slices.Contains(types, t) {
			continue
		}
		switch kmsg.ConfigResourceType(t) {
		case kmsg.ConfigResourceTypeClientMetrics:
			for _, name := range st.ClientMetricsNames() {
				add(kmsg.ConfigResourceTypeClientMetrics, name)
			}
		case kmsg.ConfigResourceTypeTopic:
			for _, name := range st.TopicNames() {
				add(kmsg.ConfigResourceTypeTopic, name)
			}
		case kmsg.ConfigResourceTypeBroker:
			for _, id := range st.BrokerIDs() {
				add(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id)))
			}
		}
	}
	return resp
}
