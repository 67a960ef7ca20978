package broker

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic configs as the admin APIs report and change them, shared by
// CreateTopics (19), DescribeConfigs (32) and IncrementalAlterConfigs (44):
// where a value comes from, its Kafka type, and the incremental operations.
// The definitions themselves are in topic_config.go, the broker properties
// in broker_config.go.

// topicConfigSource says where a topic config's effective value comes from.
func (s *Server) topicConfigSource(name string, overrides map[string]string) kmsg.ConfigSource {
	if _, ok := overrides[name]; ok {
		return kmsg.ConfigSourceDynamicTopicConfig
	}
	// The most specific layer any synonym is set in (dynamic_config.go).
	d := s.dyn.Load()
	best := kmsg.ConfigSourceDefaultConfig
	for _, syn := range topicConfigDefs[name].brokerSynonyms {
		if src := s.brokerConfigSource(d, syn); src < best {
			best = src
		}
	}
	return best
}

// topicConfigType is the type Kafka reports for each topic config.
func topicConfigType(name string) kmsg.ConfigType {
	switch name {
	case "cleanup.policy", leaderThrottledReplicas, followerThrottledReplicas:
		return kmsg.ConfigTypeList
	case "compression.type", "message.timestamp.type",
		valueSubjectStrategyConfig, keySubjectStrategyConfig, schemaValidationModeConfig,
		icebergModeConfig, icebergValueSubjectConfig, icebergTableLocationConfig, icebergNamespaceConfig, icebergPartitionSpecConfig:
		return kmsg.ConfigTypeString
	case "min.cleanable.dirty.ratio":
		return kmsg.ConfigTypeDouble
	case "preallocate", "remote.storage.enable", "unclean.leader.election.enable",
		valueSchemaValidationConfig, keySchemaValidationConfig, icebergEnabledConfig:
		return kmsg.ConfigTypeBoolean
	case "max.message.bytes", "min.insync.replicas", "index.interval.bytes", "segment.bytes", "segment.index.bytes",
		"compression.gzip.level", "compression.lz4.level", "compression.zstd.level":
		return kmsg.ConfigTypeInt
	}
	return kmsg.ConfigTypeLong
}

// applyIncremental applies IncrementalAlterConfigs operations to a copy of
// a resource's overrides. List configs (isList: cleanup.policy, say)
// support APPEND and SUBTRACT, starting from base when not overridden.
func applyIncremental(current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, isList func(string) bool, base func(string) string) (map[string]string, string) {
	next := make(map[string]string, len(current))
	for k, v := range current {
		next[k] = v
	}
	for _, op := range ops {
		value := ""
		if op.Value != nil {
			value = *op.Value
		}
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			next[op.Name] = value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(next, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !isList(op.Name) {
				return nil, "APPEND and SUBTRACT apply only to list configs, not " + op.Name
			}
			cur, ok := next[op.Name]
			if !ok {
				cur = base(op.Name)
			}
			items := splitList(cur)
			for _, v := range splitList(value) {
				idx := indexOf(items, v)
				if op.Op == kmsg.IncrementalAlterConfigOpAppend && idx < 0 {
					items = append(items, v)
				}
				if op.Op == kmsg.IncrementalAlterConfigOpSubtract && idx >= 0 {
					items = slices.DeleteFunc(items, func(x string) bool { return x == v })
				}
			}
			next[op.Name] = strings.Join(items, ",")
		default:
			return nil, "unknown operation"
		}
	}
	return next, ""
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
