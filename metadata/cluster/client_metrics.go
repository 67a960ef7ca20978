package cluster

import (
	"maps"
	"slices"
)

// ClientMetrics subscriptions (KIP-714) are config resources of type
// CLIENT_METRICS: a name and its configs (metrics, interval.ms, match),
// which the broker validates before proposing. A name with no configs
// does not exist.

// maxClientMetricsName bounds a subscription's name.
const maxClientMetricsName = 255

// AlterClientMetrics replaces one subscription's configs; empty Configs
// delete it.
type AlterClientMetrics struct {
	Name    string            `json:"name"`
	Configs map[string]string `json:"configs,omitempty"`
}

// Type implements Record.
func (AlterClientMetrics) Type() RecordType { return TypeAlterClientMetrics }

// Validate implements Record.
func (r AlterClientMetrics) Validate() error {
	if r.Name == "" || len(r.Name) > maxClientMetricsName {
		return invalid("client metrics: name %q", r.Name)
	}
	for k := range r.Configs {
		if k == "" {
			return invalid("client metrics %s: empty config name", r.Name)
		}
	}
	return nil
}

func applyAlterClientMetrics(s State, r AlterClientMetrics) State {
	next := maps.Clone(s.ClientMetrics)
	if next == nil {
		next = map[string]map[string]string{}
	}
	if len(r.Configs) == 0 {
		delete(next, r.Name)
	} else {
		next[r.Name] = maps.Clone(r.Configs)
	}
	s.ClientMetrics = next
	s.ClientMetricsVersion++
	return s
}

// ClientMetricsNames lists the subscriptions in name order.
func (s State) ClientMetricsNames() []string {
	return slices.Sorted(maps.Keys(s.ClientMetrics))
}
