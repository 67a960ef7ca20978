package cluster

import (
	"maps"
	"strconv"
)

// Config resources other than topics whose configs the quorum keeps
// (KIP-226 dynamic broker configs, KIP-848 group configs). A topic's
// configs stay on the topic (AlterConfigs).
const (
	// ConfigBroker is a broker's dynamic configs: Name is the node id, or
	// "" for the cluster-wide default.
	ConfigBroker = "broker"
	// ConfigGroup is a consumer group's configs: Name is the group id.
	ConfigGroup = "group"
)

// ConfigResourceKey is the key of a resource in State.ResourceConfigs.
func ConfigResourceKey(kind, name string) string { return kind + "/" + name }

// AlterResourceConfigs replaces the dynamic configs of one resource as a
// whole (an empty Configs removes them all).
type AlterResourceConfigs struct {
	Kind    string            `json:"kind"`
	Name    string            `json:"name"`
	Configs map[string]string `json:"configs,omitempty"`
}

// Type implements Record.
func (AlterResourceConfigs) Type() RecordType { return TypeAlterResourceConfigs }

// Validate implements Record. The values themselves are the broker's to
// check: the record only has to name a resource.
func (r AlterResourceConfigs) Validate() error {
	switch r.Kind {
	case ConfigBroker:
		if r.Name != "" {
			if id, err := strconv.ParseInt(r.Name, 10, 32); err != nil || id < 0 {
				return invalid("broker configs: bad node id %q", r.Name)
			}
		}
	case ConfigGroup:
		if r.Name == "" {
			return invalid("group configs: empty group id")
		}
	default:
		return invalid("configs of unknown kind %q", r.Kind)
	}
	for k := range r.Configs {
		if k == "" {
			return invalid("configs: empty name")
		}
	}
	return nil
}

func applyAlterResourceConfigs(s State, r AlterResourceConfigs) State {
	next := maps.Clone(s.ResourceConfigs)
	if next == nil {
		next = map[string]map[string]string{}
	}
	key := ConfigResourceKey(r.Kind, r.Name)
	if len(r.Configs) == 0 {
		delete(next, key)
	} else {
		next[key] = maps.Clone(r.Configs)
	}
	s.ResourceConfigs = next
	s.ConfigVersion++
	return s
}

// ResourceConfig returns the dynamic configs of a resource (nil if none);
// the map must not be modified.
func (s State) ResourceConfig(kind, name string) map[string]string {
	return s.ResourceConfigs[ConfigResourceKey(kind, name)]
}
