package broker

// ListConfigResources (key 74), v0–v1: KIP-714's ListClientMetricsResources,
// generalised by KIP-1142.
//
//   - v0 lists the client-metrics subscriptions (client_metrics.go).
//   - v1 lists the resource types asked for: CLIENT_METRICS (16), TOPIC (2),
//     BROKER (4) and BROKER_LOGGER (8) (the registered node ids), and GROUP
//     (32: the groups with dynamic configs, existing or not — KIP-1142's
//     point — and the groups this node coordinates, as a Kafka broker
//     lists its own); none asked lists them all. Another type is
//     INVALID_REQUEST.
//   - Needs DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED).

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
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
	supported := []int8{int8(kmsg.ConfigResourceTypeTopic), int8(kmsg.ConfigResourceTypeBroker), int8(kmsg.ConfigResourceTypeBrokerLogger),
		int8(kmsg.ConfigResourceTypeClientMetrics), int8(kmsg.ConfigResourceTypeGroupConfig)}
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
		case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
			for _, id := range st.BrokerIDs() {
				add(kmsg.ConfigResourceType(t), strconv.Itoa(int(id)))
			}
		case kmsg.ConfigResourceTypeGroupConfig:
			for _, name := range configuredGroups(rc.s, st) {
				add(kmsg.ConfigResourceTypeGroupConfig, name)
			}
		}
	}
	return resp
}

// configuredGroups are the groups with dynamic configs and the groups this
// node coordinates, sorted.
func configuredGroups(s *Server, st cluster.State) []string {
	names := map[string]bool{}
	prefix := cluster.ConfigResourceKey(cluster.ConfigGroup, "")
	for key := range st.ResourceConfigs {
		if name, ok := strings.CutPrefix(key, prefix); ok {
			names[name] = true
		}
	}
	if s.groups != nil {
		listed, _ := s.groups.list() // a loading shard lists what it has
		for _, g := range listed {
			names[g.id] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}
