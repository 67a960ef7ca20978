package broker

// DescribeConfigs (key 32), v0–v4.
//
//   - Topics: every topic config with its effective value, source
//     (DYNAMIC_TOPIC_CONFIG for overrides, STATIC_BROKER_CONFIG when any
//     broker synonym was set — log.retention.hours counts for
//     retention.ms — else DEFAULT_CONFIG), synonyms on request and type
//     (v3+).
//   - A null or empty config name list describes every config, as Kafka does.
//   - v3+ include_documentation: one sentence per config (config_docs.go).
//   - Brokers (this node's id): every broker property Strata knows with its
//     effective value, Kafka's source (DYNAMIC_BROKER_CONFIG,
//     DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG),
//     type and synonyms, read_only unless it is dynamic, and the security
//     settings given (passwords, private keys and JAAS lines as null,
//     is_sensitive); "" (the cluster default): the dynamic defaults set
//     (dynamic_config.go).
//   - Broker loggers (this node's id): every logger's level (broker_logger.go).
//   - Groups: consumer.session.timeout.ms and consumer.heartbeat.interval.ms,
//     GROUP_CONFIG when the group sets them (dynamic_config.go).

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeConfigs, 0, 4, handleDescribeConfigs)
	checksACLs(kmsg.DescribeConfigs)
}

func handleDescribeConfigs(rc *requestContext, req *kmsg.DescribeConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		out := kmsg.NewDescribeConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.ResourceType, r.ResourceName
		wanted := func(name string) bool { return len(r.ConfigNames) == 0 || contains(r.ConfigNames, name) }
		if code, msg := rc.configDenied(r.ResourceType, r.ResourceName, acl.OpDescribeConfigs); code != 0 {
			out.ErrorCode, out.ErrorMessage = rc.countError(code), &msg
			resp.Resources = append(resp.Resources, out)
			continue
		}
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			t := rc.s.topics.get(r.ResourceName)
			if t == nil {
				out.ErrorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
				msg := "unknown topic " + strconv.Quote(r.ResourceName)
				out.ErrorMessage = &msg
				break
			}
			_, eff, meta := rc.s.topics.snapshot(t)
			for _, name := range sortedTopicConfigNames() {
				if !wanted(name) {
					continue
				}
				c := kmsg.NewDescribeConfigsResponseResourceConfig()
				c.Name = name
				v := eff.values[name]
				c.Value = &v
				c.Source = rc.s.topicConfigSource(name, meta.Configs)
				c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
				c.ConfigType = topicConfigType(name)
				if req.IncludeSynonyms {
					c.ConfigSynonyms = rc.topicConfigSynonyms(name, meta.Configs)
				}
				if req.IncludeDocumentation {
					c.Documentation = configDoc(name)
				}
				out.Configs = append(out.Configs, c)
			}
		case kmsg.ConfigResourceTypeBroker:
			rc.describeBrokerConfigs(r, req, &out)
		case kmsg.ConfigResourceTypeBrokerLogger:
			rc.describeBrokerLoggers(r, &out)
		case kmsg.ConfigResourceTypeGroupConfig:
			rc.describeGroupConfigs(r, req, &out)
		case kmsg.ConfigResourceTypeClientMetrics:
			describeClientMetricsResource(rc, r, req, &out) // client_metrics.go
		default:
			out.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
			msg := "unsupported resource type " + r.ResourceType.String()
			out.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp
}

// topicConfigSynonyms lists, most specific first, where a value could come from.
func (rc *requestContext) topicConfigSynonyms(name string, overrides map[string]string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(n, v string, src kmsg.ConfigSource) {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Source = n, src
		s.Value = &v
		out = append(out, s)
	}
	if v, ok := overrides[name]; ok {
		add(name, v, kmsg.ConfigSourceDynamicTopicConfig)
	}
	def := topicConfigDefs[name]
	d := rc.s.dyn.Load()
	for _, layer := range []struct {
		values map[string]string
		src    kmsg.ConfigSource
	}{{d.node, kmsg.ConfigSourceDynamicBrokerConfig}, {d.cluster, kmsg.ConfigSourceDynamicDefaultBrokerConfig}, {rc.s.cfg.explicit, kmsg.ConfigSourceStaticBrokerConfig}} {
		for _, syn := range def.brokerSynonyms {
			if v, ok := layer.values[syn]; ok {
				add(syn, v, layer.src)
			}
		}
	}
	if len(def.brokerSynonyms) > 0 {
		d := DefaultConfig()
		add(def.brokerSynonyms[0], def.defaultValue(&d), kmsg.ConfigSourceDefaultConfig)
	}
	return out
}
