package broker

// IncrementalAlterConfigs (key 44), v0–v1: SET, DELETE, APPEND and
// SUBTRACT (list configs) on a topic's overrides, a broker's or the
// cluster default's dynamic configs, or a group's configs; the result is
// validated as a whole before anything changes. Broker loggers: SET and
// DELETE (broker_logger.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs)
	checksACLs(kmsg.IncrementalAlterConfigs)
}

func handleIncrementalAlterConfigs(rc *requestContext, req *kmsg.IncrementalAlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range req.Resources {
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.ResourceType, r.ResourceName
		code, msg := rc.configDenied(r.ResourceType, r.ResourceName, acl.OpAlterConfigs)
		if code == 0 {
			code, msg = rc.incrementalAlter(r, req.ValidateOnly)
		}
		if code != 0 {
			out.ErrorCode = rc.countError(code)
			out.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp
}

func (rc *requestContext) incrementalAlter(r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	switch r.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
	case kmsg.ConfigResourceTypeBroker:
		eff := rc.s.conf()
		next, errMsg := applyIncremental(rc.currentConfigs(cluster.ConfigBroker, r.ResourceName), r.Configs,
			func(name string) bool { return brokerProperties[name].typ == kmsg.ConfigTypeList },
			func(name string) string { return brokerProperties[name].get(eff) })
		if errMsg != "" {
			return kerr.InvalidConfig.Code, errMsg
		}
		return rc.alterBrokerConfigs(r.ResourceName, next, validateOnly)
	case kmsg.ConfigResourceTypeGroupConfig:
		next, errMsg := applyIncremental(rc.currentConfigs(cluster.ConfigGroup, r.ResourceName), r.Configs,
			func(string) bool { return false }, func(string) string { return "" })
		if errMsg != "" {
			return kerr.InvalidConfig.Code, errMsg
		}
		return rc.alterGroupConfigs(r.ResourceName, next, validateOnly)
	case kmsg.ConfigResourceTypeClientMetrics:
		return alterClientMetricsResource(rc, r, validateOnly) // client_metrics.go
	case kmsg.ConfigResourceTypeBrokerLogger:
		return rc.alterBrokerLoggers(r, validateOnly)
	default:
		return rc.alterTopicConfigs(r.ResourceType, r.ResourceName, nil, validateOnly)
	}
	// Read from the applied state, as setConfigs validates. The
	// read-modify-write races only with another config change of the same
	// topic; the later commit wins, as in Kafka without a version check.
	ct, ok := rc.s.clusterState().Topic(r.ResourceName)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, "unknown topic " + r.ResourceName
	}
	eff := resolveTopicConfig(rc.s.conf(), ct.Configs)
	next, errMsg := applyIncremental(ct.Configs, r.Configs,
		func(name string) bool { return topicConfigType(name) == kmsg.ConfigTypeList },
		func(name string) string { return eff.values[name] })
	if errMsg != "" {
		return kerr.InvalidConfig.Code, errMsg
	}
	return rc.alterTopicConfigs(r.ResourceType, r.ResourceName, next, validateOnly)
}
