package broker

// Dynamic broker configs (KIP-226) and group configs (KIP-848).
//
// A broker's effective configuration is four layers, most specific first,
// as in Kafka: DYNAMIC_BROKER_CONFIG (this node's id), DYNAMIC_DEFAULT_BROKER_CONFIG
// (the cluster default, resource name ""), STATIC_BROKER_CONFIG (flags,
// --config, --set, STRATA_* variables) and DEFAULT_CONFIG. The two dynamic
// layers are cluster.AlterResourceConfigs records in the metadata quorum, so
// every node sees them, they survive restarts and a node that was down
// picks them up when it catches up.
//
// s.cfg stays the static configuration; s.conf() is the effective one, an
// immutable *Config swapped whole (atomic pointer) by the reconcile loop
// when the quorum's ConfigVersion moves. Topic configs resolve against it
// in the same pass, so a lowered log.retention.ms reaches every open log
// without a restart; the housekeeping and tiering loops reset their
// tickers. Only properties that are read through s.conf() where they act
// are dynamic (dynamicBrokerConfigs); the others answer INVALID_CONFIG
// naming them. Unlike Kafka, an unknown property is refused too (Kafka
// stores it for plugins): a typo must not look like a change.
//
// Kafka needs listener TLS material re-read through a dynamic config
// change; Strata re-reads changed key and certificate files by itself
// (internal/tlsconf), so ssl.* settings stay static.
//
// Groups: consumer.session.timeout.ms and consumer.heartbeat.interval.ms
// per group, within group.consumer.{min,max}.{session.timeout,heartbeat.interval}.ms,
// read by the group coordinator on every heartbeat.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// dynamicBrokerConfigs are the broker properties that change at run time.
var dynamicBrokerConfigs = map[string]bool{
	// Defaults of topic configs (their broker synonyms).
	"log.segment.bytes": true, "log.roll.ms": true, "log.roll.hours": true,
	"log.retention.ms": true, "log.retention.minutes": true, "log.retention.hours": true, "log.retention.bytes": true,
	"log.flush.interval.messages": true, "log.flush.interval.ms": true,
	"log.index.interval.bytes": true, "log.index.size.max.bytes": true,
	"log.cleanup.policy": true, "file.delete.delay.ms": true,
	"log.cleaner.delete.retention.ms": true, "log.cleaner.min.cleanable.ratio": true,
	"log.cleaner.min.compaction.lag.ms": true, "log.cleaner.max.compaction.lag.ms": true,
	"log.message.timestamp.type": true, "log.message.timestamp.before.max.ms": true, "log.message.timestamp.after.max.ms": true,
	"message.max.bytes": true, "min.insync.replicas": true,
	"compression.type": true, "compression.gzip.level": true, "compression.lz4.level": true, "compression.zstd.level": true,
	// Loops that reset their tickers.
	"log.cleaner.backoff.ms": true, "log.retention.check.interval.ms": true,
	"log.flush.scheduler.interval.ms": true, "log.flush.offset.checkpoint.interval.ms": true,
	"remote.log.manager.task.interval.ms": true, "strata.remote.log.upload.on.roll": true,
	// Replication throttles (replication_throttle.go), read per fetch.
	"leader.replication.throttled.rate": true, "follower.replication.throttled.rate": true,
	// Pool sizes read at each admission (limiter.go).
	"remote.log.manager.thread.pool.size": true, "remote.log.reader.threads": true,
	// Self-balancing (balancer.go), read every round.
	"strata.balancer.enable": true, "strata.balancer.interval.ms": true, "strata.balancer.max.concurrent.moves": true,
	"strata.balancer.dead.node.timeout.ms": true, "strata.balancer.disk.threshold.percent": true, decommissionConfig: true,
	// The Iceberg writer's CPU floor (iceberg_pacer.go), read every window.
	icebergWriterCPUMinFractionConfig: true,
}

// dynamicConfig is the effective configuration at one quorum ConfigVersion.
type dynamicConfig struct {
	version int64
	eff     *Config
	// cluster and node are the dynamic layers (read-only).
	cluster, node map[string]string
}

// conf is the effective broker configuration: never modified, replaced
// whole when a dynamic config changes.
func (s *Server) conf() *Config { return s.dyn.Load().eff }

func (s *Server) initDynamic() {
	c := s.cfg
	s.dyn.Store(&dynamicConfig{eff: &c})
}

// layerOrder sorts a layer's names so that a finer unit is applied after a
// coarser one (log.retention.hours, then .minutes, then .ms): the finer wins.
func layerOrder(layer map[string]string) []string {
	names := slices.Collect(maps.Keys(layer))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(len(finerUnits[b]), len(finerUnits[a])); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return names
}

// withDynamic returns a copy of static with the layers applied in order
// (least specific first). The copy shares static's maps, which it does not
// change.
func withDynamic(static *Config, layers ...map[string]string) (*Config, error) {
	c := *static
	for _, layer := range layers {
		for _, name := range layerOrder(layer) {
			p, ok := brokerProperties[name]
			if !ok || !dynamicBrokerConfigs[name] {
				return nil, fmt.Errorf("%s cannot be changed at run time", name)
			}
			if err := p.set(&c, layer[name]); err != nil {
				return nil, fmt.Errorf("invalid value for %s: %w", name, err)
			}
		}
	}
	if err := c.validateDynamic(); err != nil {
		return nil, err
	}
	return &c, nil
}

// validateDynamic checks what a dynamic change can break.
func (c *Config) validateDynamic() error {
	switch {
	case c.LogSegmentBytes < 14:
		return fmt.Errorf("log.segment.bytes must be at least 14")
	case c.MessageMaxBytes < 0:
		return fmt.Errorf("message.max.bytes must not be negative")
	case c.RemoteLogTaskIntervalMs < 1:
		return fmt.Errorf("remote.log.manager.task.interval.ms must be positive")
	}
	return nil
}

// refreshDynamic makes the effective configuration that of st's dynamic
// layers; it reports whether it changed. The reconcile loop calls it.
func (s *Server) refreshDynamic(st cluster.State) bool {
	cur := s.dyn.Load()
	if st.ConfigVersion == cur.version {
		return false
	}
	clusterLayer := st.ResourceConfig(cluster.ConfigBroker, "")
	nodeLayer := st.ResourceConfig(cluster.ConfigBroker, strconv.Itoa(int(s.cfg.NodeID)))
	if maps.Equal(clusterLayer, cur.cluster) && maps.Equal(nodeLayer, cur.node) {
		s.dyn.Store(&dynamicConfig{version: st.ConfigVersion, eff: cur.eff, cluster: cur.cluster, node: cur.node})
		return false
	}
	eff, err := withDynamic(&s.cfg, clusterLayer, nodeLayer)
	if err != nil {
		// Checked before the record was proposed; a record from a
		// newer version this node cannot apply keeps the last good
		// configuration.
		s.logger.Error("dynamic broker configs not applied", "err", err)
		eff = cur.eff
	}
	s.dyn.Store(&dynamicConfig{version: st.ConfigVersion, eff: eff, cluster: clusterLayer, node: nodeLayer})
	s.logger.Info("dynamic broker configs applied", "cluster_default", slices.Sorted(maps.Keys(clusterLayer)), "node", slices.Sorted(maps.Keys(nodeLayer)))
	select {
	case s.confChanged <- struct{}{}:
	default:
	}
	return true
}

// brokerConfigSource says where a broker property's effective value comes
// from: the most specific layer that sets it or a unit synonym of it
// (log.retention.minutes set per broker makes log.retention.ms's source
// DYNAMIC_BROKER_CONFIG, as its value is that one's).
func (s *Server) brokerConfigSource(d *dynamicConfig, name string) kmsg.ConfigSource {
	best := kmsg.ConfigSourceDefaultConfig
	for _, n := range unitFamily(name) {
		best = min(best, s.layerSource(d, n))
	}
	return best
}

// layerSource is the most specific layer that sets the property name.
func (s *Server) layerSource(d *dynamicConfig, name string) kmsg.ConfigSource {
	_, node := d.node[name]
	_, def := d.cluster[name]
	_, explicit := s.cfg.explicit[name]
	switch {
	case node:
		return kmsg.ConfigSourceDynamicBrokerConfig
	case def:
		return kmsg.ConfigSourceDynamicDefaultBrokerConfig
	case explicit:
		return kmsg.ConfigSourceStaticBrokerConfig
	}
	return kmsg.ConfigSourceDefaultConfig
}

// unitFamilies are the properties that set one value in several units,
// finest first.
var unitFamilies = [][]string{
	{"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	{"log.roll.ms", "log.roll.hours"},
}

// unitFamily is the family of a property, or the property alone.
func unitFamily(name string) []string {
	for _, fam := range unitFamilies {
		if slices.Contains(fam, name) {
			return fam
		}
	}
	return []string{name}
}

// brokerSynonyms lists where a broker property's value could come from,
// most specific first, as DescribeConfigs' synonyms.
func (s *Server) brokerSynonyms(d *dynamicConfig, name string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(n, v string, src kmsg.ConfigSource) {
		syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		syn.Name, syn.Source = n, src
		syn.Value = &v
		out = append(out, syn)
	}
	fam := unitFamily(name)
	for _, layer := range []struct {
		values map[string]string
		src    kmsg.ConfigSource
	}{{d.node, kmsg.ConfigSourceDynamicBrokerConfig}, {d.cluster, kmsg.ConfigSourceDynamicDefaultBrokerConfig}, {s.cfg.explicit, kmsg.ConfigSourceStaticBrokerConfig}} {
		for _, n := range fam {
			if v, ok := layer.values[n]; ok {
				add(n, v, layer.src)
			}
		}
	}
	def := DefaultConfig()
	add(fam[len(fam)-1], brokerProperties[fam[len(fam)-1]].get(&def), kmsg.ConfigSourceDefaultConfig)
	return out
}

// describeBrokerConfigs answers DescribeConfigs for a BROKER resource:
// this node (every property, effective values) or the cluster default
// ("": the dynamic defaults set).
func (rc *requestContext) describeBrokerConfigs(r kmsg.DescribeConfigsRequestResource, req *kmsg.DescribeConfigsRequest, out *kmsg.DescribeConfigsResponseResource) {
	wanted := func(name string) bool { return len(r.ConfigNames) == 0 || contains(r.ConfigNames, name) }
	s := rc.s
	d := s.dyn.Load()
	if r.ResourceName == "" {
		for _, name := range slices.Sorted(maps.Keys(d.cluster)) {
			if !wanted(name) {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name = name
			v := d.cluster[name]
			c.Value = &v
			c.Source = kmsg.ConfigSourceDynamicDefaultBrokerConfig
			c.ConfigType = brokerProperties[name].configType()
			if req.IncludeSynonyms {
				syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				syn.Name, syn.Value, syn.Source = name, &v, c.Source
				c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
			}
			if req.IncludeDocumentation {
				c.Documentation = configDoc(name)
			}
			out.Configs = append(out.Configs, c)
		}
		return
	}
	if r.ResourceName != strconv.Itoa(int(s.cfg.NodeID)) {
		out.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
		msg := fmt.Sprintf("broker %s: ask that broker; this is broker %d", r.ResourceName, s.cfg.NodeID)
		out.ErrorMessage = &msg
		return
	}
	for _, p := range d.eff.describe() {
		if !wanted(p.name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = p.name
		if p.sensitive {
			c.IsSensitive = true
			c.ConfigType = kmsg.ConfigTypePassword
		} else {
			v := p.value
			c.Value = &v
			c.ConfigType = brokerProperties[p.name].configType()
		}
		c.ReadOnly = !dynamicBrokerConfigs[p.name]
		if _, known := brokerProperties[p.name]; known {
			c.Source = s.brokerConfigSource(d, p.name)
		} else {
			c.Source = kmsg.ConfigSourceStaticBrokerConfig // a security setting as given
		}
		c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
		if req.IncludeSynonyms {
			if _, known := brokerProperties[p.name]; known && !p.sensitive {
				c.ConfigSynonyms = s.brokerSynonyms(d, p.name)
			}
		}
		if req.IncludeDocumentation {
			c.Documentation = configDoc(p.name)
		}
		out.Configs = append(out.Configs, c)
	}
}

func (p brokerProperty) configType() kmsg.ConfigType {
	if p.typ == 0 {
		return kmsg.ConfigTypeString
	}
	return p.typ
}

// alterBrokerConfigs validates and stores the next dynamic configs of a
// BROKER resource ("" or a node id): the whole next set (AlterConfigs), or
// the current one changed by ops (IncrementalAlterConfigs).
func (rc *requestContext) alterBrokerConfigs(name string, next map[string]string, validateOnly bool) (int16, string) {
	if name != "" {
		if id, err := strconv.ParseInt(name, 10, 32); err != nil || id < 0 {
			return kerr.InvalidRequest.Code, fmt.Sprintf("broker resource name %q: a node id, or empty for the cluster default", name)
		}
	}
	var bad []string
	for k := range next {
		_, known := brokerProperties[k]
		switch {
		case !known && securityProperty(k):
			bad = append(bad, k)
		case !known:
			return kerr.InvalidConfig.Code, fmt.Sprintf("unknown broker config %q", k)
		case !dynamicBrokerConfigs[k]:
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return kerr.InvalidConfig.Code, "cannot update these configs dynamically: " + strings.Join(bad, ", ") + " (set them in the config file, --set or STRATA_* variables and restart)"
	}
	st := rc.s.clusterState()
	layers := []map[string]string{st.ResourceConfig(cluster.ConfigBroker, ""), st.ResourceConfig(cluster.ConfigBroker, strconv.Itoa(int(rc.s.cfg.NodeID)))}
	if name == "" {
		layers[0] = next
	} else {
		layers[1] = next
	}
	if _, err := withDynamic(&rc.s.cfg, layers...); err != nil {
		return kerr.InvalidConfig.Code, err.Error()
	}
	if validateOnly || maps.Equal(next, st.ResourceConfig(cluster.ConfigBroker, name)) {
		return 0, ""
	}
	return rc.proposeConfigs(cluster.AlterResourceConfigs{Kind: cluster.ConfigBroker, Name: name, Configs: next})
}

// proposeConfigs commits a config record and waits until this node acts
// on it.
func (rc *requestContext) proposeConfigs(rec cluster.AlterResourceConfigs) (int16, string) {
	ctx, cancel := context.WithTimeout(rc.s.ctx, proposeTimeout)
	defer cancel()
	index, err := rc.s.meta.proposeIndex(ctx, rec)
	if err != nil {
		return quorumErrorCode(err, "storing configs")
	}
	if err := rc.s.meta.waitApplied(ctx, index); err != nil {
		return kerr.RequestTimedOut.Code, "the configs are stored but this node does not use them yet: " + err.Error()
	}
	return 0, ""
}

// quorumErrorCode is quorumError as a code and message.
func quorumErrorCode(err error, what string) (int16, string) {
	terr := quorumError(err, what)
	return terr.code, terr.message
}

// Group configs (resource type GROUP, KIP-848).
var groupConfigNames = []string{"consumer.heartbeat.interval.ms", "consumer.session.timeout.ms"}

// groupConfigBounds is the range the broker allows a group config.
func (c *Config) groupConfigBounds(name string) (lo, hi int64, synonym string, def int64) {
	if name == "consumer.session.timeout.ms" {
		return c.GroupConsumerMinSessionTimeoutMs, c.GroupConsumerMaxSessionTimeoutMs, "group.consumer.session.timeout.ms", c.GroupConsumerSessionTimeoutMs
	}
	return c.GroupConsumerMinHeartbeatIntervalMs, c.GroupConsumerMaxHeartbeatIntervalMs, "group.consumer.heartbeat.interval.ms", c.GroupConsumerHeartbeatIntervalMs
}

// validateGroupConfigs checks a group's whole set of configs.
func (c *Config) validateGroupConfigs(configs map[string]string) error {
	vals := map[string]int64{}
	for k, v := range configs {
		if check, ok := shareGroupConfigs[k]; ok {
			if err := check(v); err != nil {
				return fmt.Errorf("invalid value for %s: %w", k, err)
			}
			continue
		}
		if !slices.Contains(groupConfigNames, k) {
			return fmt.Errorf("unknown group config %q (known: %s, %s)", k, strings.Join(groupConfigNames, ", "), strings.Join(slices.Sorted(maps.Keys(shareGroupConfigs)), ", "))
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return fmt.Errorf("invalid value for %s: not an integer: %q", k, v)
		}
		lo, hi, syn, _ := c.groupConfigBounds(k)
		if n < lo || n > hi {
			return fmt.Errorf("invalid value for %s: %d is outside [%d, %d] (the broker's %s bounds)", k, n, lo, hi, strings.Replace(syn, "group.consumer.", "group.consumer.{min,max}.", 1))
		}
		vals[k] = n
	}
	session, ok1 := vals["consumer.session.timeout.ms"]
	if !ok1 {
		session = c.GroupConsumerSessionTimeoutMs
	}
	heartbeat, ok2 := vals["consumer.heartbeat.interval.ms"]
	if !ok2 {
		heartbeat = c.GroupConsumerHeartbeatIntervalMs
	}
	if (ok1 || ok2) && heartbeat >= session {
		return fmt.Errorf("consumer.heartbeat.interval.ms (%d) must be less than consumer.session.timeout.ms (%d)", heartbeat, session)
	}
	return nil
}

// groupOverrides is groups.Config.ConsumerOverrides: a group's own
// session timeout and heartbeat interval from the quorum.
func (s *Server) groupOverrides(group string) (session, heartbeat time.Duration) {
	cfgs := s.clusterState().ResourceConfig(cluster.ConfigGroup, group)
	ms := func(name string) time.Duration {
		n, _ := strconv.ParseInt(cfgs[name], 10, 64)
		return time.Duration(n) * time.Millisecond
	}
	if len(cfgs) == 0 {
		return 0, 0
	}
	return ms("consumer.session.timeout.ms"), ms("consumer.heartbeat.interval.ms")
}

func (rc *requestContext) describeGroupConfigs(r kmsg.DescribeConfigsRequestResource, req *kmsg.DescribeConfigsRequest, out *kmsg.DescribeConfigsResponseResource) {
	if r.ResourceName == "" {
		out.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
		msg := "group configs need a group id"
		out.ErrorMessage = &msg
		return
	}
	own := rc.s.clusterState().ResourceConfig(cluster.ConfigGroup, r.ResourceName)
	eff := rc.s.conf()
	for _, name := range groupConfigNames {
		if len(r.ConfigNames) > 0 && !contains(r.ConfigNames, name) {
			continue
		}
		_, _, syn, def := eff.groupConfigBounds(name)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = name
		c.ConfigType = kmsg.ConfigTypeInt
		v, ok := own[name]
		if ok {
			c.Source = kmsg.ConfigSourceGroupConfig
		} else {
			v = strconv.FormatInt(def, 10)
			c.Source = rc.s.brokerConfigSource(rc.s.dyn.Load(), syn)
			c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
		}
		c.Value = &v
		if req.IncludeSynonyms {
			if ok {
				s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				s.Name, s.Source = name, kmsg.ConfigSourceGroupConfig
				s.Value = &v
				c.ConfigSynonyms = append(c.ConfigSynonyms, s)
			}
			bv := strconv.FormatInt(def, 10)
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			s.Name, s.Source, s.Value = syn, rc.s.brokerConfigSource(rc.s.dyn.Load(), syn), &bv
			c.ConfigSynonyms = append(c.ConfigSynonyms, s)
		}
		if req.IncludeDocumentation {
			c.Documentation = configDoc(syn)
		}
		out.Configs = append(out.Configs, c)
	}
}

func (rc *requestContext) alterGroupConfigs(name string, next map[string]string, validateOnly bool) (int16, string) {
	if name == "" {
		return kerr.InvalidRequest.Code, "group configs need a group id"
	}
	if err := rc.s.conf().validateGroupConfigs(next); err != nil {
		return kerr.InvalidConfig.Code, err.Error()
	}
	if validateOnly || maps.Equal(next, rc.s.clusterState().ResourceConfig(cluster.ConfigGroup, name)) {
		return 0, ""
	}
	return rc.proposeConfigs(cluster.AlterResourceConfigs{Kind: cluster.ConfigGroup, Name: name, Configs: next})
}

// currentConfigs is a resource's dynamic configs now (a copy).
func (rc *requestContext) currentConfigs(kind, name string) map[string]string {
	return maps.Clone(rc.s.clusterState().ResourceConfig(kind, name))
}

// shareGroupConfigs are the GROUP configs of share groups (KIP-932) and
// their checks; share_coordinator.go reads them.
var shareGroupConfigs = map[string]func(v string) error{
	"share.auto.offset.reset": oneOf("earliest", "latest"),
	"share.isolation.level":   oneOf("read_uncommitted", "read_committed"),
	// Kafka bounds it by group.share.{min,max}.record.lock.duration.ms
	// (15 s–60 s); Strata allows from 100 ms so tests can be quick.
	"share.record.lock.duration.ms": intIn(100, 3_600_000),
	"share.delivery.count.limit":    intIn(2, 10),
}

func oneOf(values ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(values, v) {
			return fmt.Errorf("%q is not one of %s", v, strings.Join(values, ", "))
		}
		return nil
	}
}

func intIn(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%d is outside [%d, %d]", n, lo, hi)
		}
		return nil
	}
}
