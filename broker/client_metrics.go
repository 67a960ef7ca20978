package broker

// Client-metrics subscriptions (KIP-714): config resources of type
// CLIENT_METRICS, stored in the metadata quorum (cluster.AlterClientMetrics)
// so every node serves the same subscriptions and they survive restarts.
//
//   - Configs: metrics (a list of metric name prefixes, "*" for all),
//     interval.ms (the push interval, 100 to 3600000, default 300000) and
//     match (a list of selector=regex; the selectors are client_instance_id,
//     client_id, client_software_name, client_software_version,
//     client_source_address and client_source_port; a regex must match the
//     whole value; every pattern of a subscription must match, none matches
//     every client).
//   - DescribeConfigs lists the three configs of any name, the set ones
//     with source CLIENT_METRICS_CONFIG, the others their defaults, as
//     Kafka does; an empty name is INVALID_REQUEST.
//   - IncrementalAlterConfigs: SET, DELETE, and APPEND/SUBTRACT on the two
//     lists. Unknown config names and an interval out of range are
//     INVALID_REQUEST, a bad match INVALID_CONFIG (Kafka's
//     ClientMetricsConfigs). A subscription left with no config is deleted.
//   - Both need DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster
//     (configDenied), as in Kafka.
//   - ListConfigResources (74, ListClientMetricsResources before KIP-1142)
//     is in 74_list_config_resources.go.

import (
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// The CLIENT_METRICS configs.
const (
	clientMetricsMetrics  = "metrics"
	clientMetricsInterval = "interval.ms"
	clientMetricsMatch    = "match"

	// clientMetricsAll subscribes to every metric.
	clientMetricsAll = "*"

	defaultPushIntervalMs = 300000
	minPushIntervalMs     = 100
	maxPushIntervalMs     = 3600000
)

// The client selectors a match pattern may name (KIP-714).
const (
	selectorInstanceID      = "client_instance_id"
	selectorClientID        = "client_id"
	selectorSoftwareName    = "client_software_name"
	selectorSoftwareVersion = "client_software_version"
	selectorSourceAddress   = "client_source_address"
	selectorSourcePort      = "client_source_port"
)

var clientMetricsSelectors = []string{selectorInstanceID, selectorClientID, selectorSoftwareName, selectorSoftwareVersion, selectorSourceAddress, selectorSourcePort}

var clientMetricsConfigDocs = map[string]string{
	clientMetricsMetrics:  "The telemetry metric name prefixes the subscription requests from matching clients; * requests all metrics.",
	clientMetricsInterval: "The interval, in milliseconds, at which matching clients push their metrics.",
	clientMetricsMatch:    "The client matching patterns (selector=regex), all of which a client must match; none matches every client.",
}

// clientMetricsConfigNames is the configs in the order they are described.
var clientMetricsConfigNames = []string{clientMetricsInterval, clientMetricsMatch, clientMetricsMetrics}

// clientMetricsSubscription is one parsed subscription.
type clientMetricsSubscription struct {
	name       string
	metrics    []string
	intervalMs int32
	match      map[string]*regexp.Regexp
}

// parseClientMetrics checks a subscription's configs; on failure it
// returns the Kafka error code and a message.
func parseClientMetrics(name string, configs map[string]string) (clientMetricsSubscription, int16, string) {
	sub := clientMetricsSubscription{name: name, intervalMs: defaultPushIntervalMs}
	for k, v := range configs {
		switch k {
		case clientMetricsMetrics:
			sub.metrics = splitList(v)
		case clientMetricsInterval:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n < minPushIntervalMs || n > maxPushIntervalMs {
				return sub, kerr.InvalidRequest.Code, "interval.ms must be a whole number from 100 to 3600000, not " + strconv.Quote(v)
			}
			sub.intervalMs = int32(n)
		case clientMetricsMatch:
			for _, p := range splitList(v) {
				key, pattern, ok := strings.Cut(p, "=")
				key = strings.TrimSpace(key)
				if !ok || !slices.Contains(clientMetricsSelectors, key) {
					return sub, kerr.InvalidConfig.Code, "match " + strconv.Quote(p) + ": want selector=regex with a selector of " + strings.Join(clientMetricsSelectors, ", ")
				}
				if _, dup := sub.match[key]; dup {
					return sub, kerr.InvalidConfig.Code, "match names " + key + " twice"
				}
				re, err := regexp.Compile("^(?:" + pattern + ")$")
				if err != nil {
					return sub, kerr.InvalidConfig.Code, "match " + key + ": bad regex: " + err.Error()
				}
				if sub.match == nil {
					sub.match = map[string]*regexp.Regexp{}
				}
				sub.match[key] = re
			}
		default:
			return sub, kerr.InvalidRequest.Code, "unknown client metrics config " + strconv.Quote(k)
		}
	}
	return sub, 0, ""
}

// matches reports whether every pattern matches the client.
func (s clientMetricsSubscription) matches(sel map[string]string) bool {
	for key, re := range s.match {
		if !re.MatchString(sel[key]) {
			return false
		}
	}
	return true
}

// clientSubscription is what GetTelemetrySubscriptions tells one client.
type clientSubscription struct {
	id         int32
	metrics    []string // requested prefixes; [""] for all, empty for none
	intervalMs int32
}

// subscriptionFor combines the subscriptions matching a client: the union
// of their metrics and the smallest of their intervals (the default when
// none matches). The id hashes the result, so a client sees a change.
func subscriptionFor(subs []clientMetricsSubscription, sel map[string]string) clientSubscription {
	out := clientSubscription{intervalMs: defaultPushIntervalMs}
	var matched []string
	all := false
	for _, s := range subs {
		if !s.matches(sel) {
			continue
		}
		if len(matched) == 0 || s.intervalMs < out.intervalMs {
			out.intervalMs = s.intervalMs
		}
		matched = append(matched, s.name)
		for _, m := range s.metrics {
			if m == clientMetricsAll {
				all = true
			} else if !slices.Contains(out.metrics, m) {
				out.metrics = append(out.metrics, m)
			}
		}
	}
	slices.Sort(out.metrics)
	if all {
		out.metrics = []string{""}
	}
	h := fnv.New32a()
	h.Write([]byte(strconv.Itoa(int(out.intervalMs))))
	for _, m := range out.metrics {
		h.Write([]byte{0})
		h.Write([]byte(m))
	}
	h.Write([]byte{1})
	h.Write([]byte(sel[selectorInstanceID]))
	out.id = int32(h.Sum32())
	return out
}

// requested reports whether a metric name is among the requested prefixes.
func (c clientSubscription) requested(name string) bool {
	for _, p := range c.metrics {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (c clientSubscription) interval() time.Duration {
	return time.Duration(c.intervalMs) * time.Millisecond
}

// parsedClientMetrics parses the state's subscriptions, skipping any
// that fail to (they were validated when proposed).
func parsedClientMetrics(st cluster.State) []clientMetricsSubscription {
	var out []clientMetricsSubscription
	for _, name := range st.ClientMetricsNames() {
		if sub, code, _ := parseClientMetrics(name, st.ClientMetrics[name]); code == 0 {
			out = append(out, sub)
		}
	}
	return out
}

// describeClientMetricsResource fills out with one subscription's configs.
func describeClientMetricsResource(rc *requestContext, r kmsg.DescribeConfigsRequestResource, req *kmsg.DescribeConfigsRequest, out *kmsg.DescribeConfigsResponseResource) {
	if r.ResourceName == "" {
		out.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
		out.ErrorMessage = kmsg.StringPtr("a client metrics subscription needs a name")
		return
	}
	set := rc.s.clusterState().ClientMetrics[r.ResourceName]
	defaults := map[string]string{clientMetricsMetrics: "", clientMetricsInterval: strconv.Itoa(defaultPushIntervalMs), clientMetricsMatch: ""}
	for _, name := range clientMetricsConfigNames {
		if len(r.ConfigNames) > 0 && !slices.Contains(r.ConfigNames, name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = name
		v, ok := set[name]
		if ok {
			c.Source = kmsg.ConfigSourceClientMetricsConfig
		} else {
			v, c.Source, c.IsDefault = defaults[name], kmsg.ConfigSourceDefaultConfig, true
		}
		c.Value = kmsg.StringPtr(v)
		c.ConfigType = kmsg.ConfigTypeList
		if name == clientMetricsInterval {
			c.ConfigType = kmsg.ConfigTypeInt
		}
		if req.IncludeSynonyms && ok {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Value, syn.Source = name, kmsg.StringPtr(v), c.Source
			c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
		}
		if req.IncludeDocumentation {
			c.Documentation = kmsg.StringPtr(clientMetricsConfigDocs[name])
		}
		out.Configs = append(out.Configs, c)
	}
}

// alterClientMetricsResource applies IncrementalAlterConfigs' operations to
// one subscription and commits the result.
func alterClientMetricsResource(rc *requestContext, r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if r.ResourceName == "" {
		return kerr.InvalidRequest.Code, "a client metrics subscription needs a name"
	}
	// Read-modify-write from the applied state, as topic configs do: a
	// concurrent change of the same subscription may be overwritten.
	seen := map[string]bool{}
	for _, op := range r.Configs {
		if !slices.Contains(clientMetricsConfigNames, op.Name) {
			return kerr.InvalidRequest.Code, "unknown client metrics config " + strconv.Quote(op.Name)
		}
		if seen[op.Name] {
			return kerr.InvalidRequest.Code, "config " + op.Name + " appears more than once"
		}
		seen[op.Name] = true
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete:
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if op.Name == clientMetricsInterval {
				return kerr.InvalidConfig.Code, "interval.ms is not a list: APPEND and SUBTRACT apply to metrics and match"
			}
		default:
			return kerr.InvalidRequest.Code, "unknown config operation " + strconv.Itoa(int(op.Op))
		}
	}
	next, errMsg := applyIncremental(rc.s.clusterState().ClientMetrics[r.ResourceName], r.Configs,
		func(name string) bool { return name != clientMetricsInterval }, func(string) string { return "" })
	if errMsg != "" {
		return kerr.InvalidConfig.Code, errMsg
	}
	if _, code, msg := parseClientMetrics(r.ResourceName, next); code != 0 {
		return code, msg
	}
	rec := cluster.AlterClientMetrics{Name: r.ResourceName, Configs: next}
	if err := rec.Validate(); err != nil {
		return kerr.InvalidRequest.Code, err.Error()
	}
	if validateOnly {
		return 0, ""
	}
	return proposeSecurity(rc, rec)
}
