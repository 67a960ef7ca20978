package broker

// AlterConfigs (key 33), v0–v2: replaces a topic's, a broker's (or the
// cluster default's) or a group's whole set of dynamic configs (configs
// not listed return to their defaults); bad names or values, and broker
// properties that are not dynamic, get INVALID_CONFIG.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.AlterConfigs, 0, 2, handleAlterConfigs)
	checksACLs(kmsg.AlterConfigs)
}

func handleAlterConfigs(rc *requestContext, req *kmsg.AlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, r := range req.Resources {
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.ResourceType, r.ResourceName
		configs := map[string]string{}
		for _, c := range r.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		code, msg := rc.configDenied(r.ResourceType, r.ResourceName, acl.OpAlterConfigs)
		if code == 0 {
			code, msg = rc.alterTopicConfigs(r.ResourceType, r.ResourceName, configs, req.ValidateOnly)
		}
		if code != 0 {
			out.ErrorCode = rc.countError(code)
			out.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp
}

func (rc *requestContext) alterTopicConfigs(typ kmsg.ConfigResourceType, name string, configs map[string]string, validateOnly bool) (int16, string) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
	case kmsg.ConfigResourceTypeBroker:
		if configs == nil {
			configs = map[string]string{}
		}
		return rc.alterBrokerConfigs(name, configs, validateOnly)
	case kmsg.ConfigResourceTypeGroupConfig:
		if configs == nil {
			configs = map[string]string{}
		}
		return rc.alterGroupConfigs(name, configs, validateOnly)
	case kmsg.ConfigResourceTypeBrokerLogger:
		return kerr.InvalidRequest.Code, "broker loggers change through IncrementalAlterConfigs only"
	default:
		return kerr.InvalidRequest.Code, "unsupported resource type " + typ.String()
	}
	if terr := rc.s.topics.setConfigs(name, configs, validateOnly); terr != nil {
		return terr.code, terr.message
	}
	return 0, ""
}
