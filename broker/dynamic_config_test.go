package broker

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// describeBroker returns broker 1's configs by name, described by kadm.
func describeBroker(t *testing.T, adm *kadm.Client) map[string]kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeBrokerConfigs(testContext(t), 1)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe broker 1: %v %+v", err, rcs)
	}
	out := map[string]kadm.Config{}
	for _, c := range rcs[0].Configs {
		out[c.Key] = c
	}
	return out
}

func expectBrokerConfig(t *testing.T, adm *kadm.Client, name, value string, source kmsg.ConfigSource) {
	t.Helper()
	c, ok := describeBroker(t, adm)[name]
	if !ok || c.Value == nil || *c.Value != value || c.Source != source {
		t.Errorf("broker 1 %s = %v (%v), want %s (%v)", name, c.MaybeValue(), c.Source, value, source)
	}
}

// TestDynamicBrokerConfigs: a cluster-default log.retention.ms set with
// kadm reaches an open log that has no override (its old segments go),
// a per-broker value wins over the default, DescribeConfigs reports
// Kafka's sources for broker and topic configs, bad changes are refused
// with the property named, and the values survive a restart.
func TestDynamicBrokerConfigs(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		c.LogRetentionCheckIntervalMs = 10
		if err := c.Set("log.retention.hours", "48"); err != nil {
			t.Fatal(err)
		}
		if err := c.Set("node.id", "1"); err != nil {
			t.Fatal(err)
		}
	})
	adm := tb.admin()
	ctx := testContext(t)
	tb.createTopic("aging", 1, map[string]*string{"segment.bytes": ptr("200")})
	c := tb.dialRaw()
	for i := 0; i < 5; i++ {
		recs := fixtureRecords(2, uint64(i))
		for j := range recs {
			recs[j].timestamp = time.Now().Add(-time.Hour).UnixMilli()
		}
		if got := c.produceRaw("aging", 0, buildBatch(t, plainBatch(recs...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	p := tb.srv.topics.partition("aging", 0)
	if p.Log().LogStartOffset() != 0 || p.Log().NumSegments() < 3 {
		t.Fatalf("log start %d with %d segments before the change", p.Log().LogStartOffset(), p.Log().NumSegments())
	}

	// Static values and types as given (kadm has no type or read-only:
	// a raw DescribeConfigs).
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType, dres.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	dreq.Resources = append(dreq.Resources, dres)
	dresp, err := dreq.RequestWith(ctx, tb.client())
	if err != nil || dresp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe: %v %+v", err, dresp)
	}
	cfgs := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range dresp.Resources[0].Configs {
		cfgs[c.Name] = c
	}
	for name, want := range map[string]struct {
		src      kmsg.ConfigSource
		typ      kmsg.ConfigType
		readOnly bool
	}{
		"node.id":                    {kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeInt, true},
		"log.retention.hours":        {kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeLong, false},
		"log.retention.ms":           {kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeLong, false}, // from log.retention.hours
		"auto.create.topics.enable":  {kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeBoolean, true},
		"process.roles":              {kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeList, true},
		"default.replication.factor": {kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeShort, true},
	} {
		got := cfgs[name]
		if got.Source != want.src || got.ConfigType != want.typ || got.ReadOnly != want.readOnly {
			t.Errorf("%s: source %v type %v read-only %v, want %v %v %v", name, got.Source, got.ConfigType, got.ReadOnly, want.src, want.typ, want.readOnly)
		}
	}

	// Refusals, each naming what is wrong; nothing changes.
	for _, tc := range []struct {
		what  string
		cfg   kadm.AlterConfig
		want  error
		inMsg string
	}{
		{"static property", kadm.AlterConfig{Name: "log.dirs", Value: ptr("/x")}, kerr.InvalidConfig, "log.dirs"},
		{"security property", kadm.AlterConfig{Name: "ssl.keystore.location", Value: ptr("/x")}, kerr.InvalidConfig, "ssl.keystore.location"},
		{"unknown property", kadm.AlterConfig{Name: "log.retention.weeks", Value: ptr("1")}, kerr.InvalidConfig, "log.retention.weeks"},
		{"bad value", kadm.AlterConfig{Name: "log.retention.ms", Value: ptr("soon")}, kerr.InvalidConfig, "log.retention.ms"},
		{"whole-config check", kadm.AlterConfig{Name: "log.segment.bytes", Value: ptr("10")}, kerr.InvalidConfig, "log.segment.bytes"},
		{"append to a non-list", kadm.AlterConfig{Op: kadm.AppendConfig, Name: "log.retention.ms", Value: ptr("1")}, kerr.InvalidConfig, "list"},
	} {
		resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{tc.cfg})
		if err != nil || len(resp) != 1 || !errors.Is(resp[0].Err, tc.want) || !strings.Contains(resp[0].ErrMessage, tc.inMsg) {
			t.Errorf("%s: %v %+v, want %v naming %s", tc.what, err, resp, tc.want, tc.inMsg)
		}
	}
	// A resource name that is no node id.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "one"
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "log.retention.ms", ptr("1000")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	raw, err := req.RequestWith(ctx, tb.client())
	if err != nil || raw.Resources[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("broker resource \"one\": %v %+v", err, raw)
	}
	// validate_only changes nothing.
	vresp, err := adm.ValidateAlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: ptr("60000")}})
	if err != nil || vresp[0].Err != nil {
		t.Fatalf("validate only: %v %+v", err, vresp)
	}
	expectConfig(t, adm, "aging", "retention.ms", "172800000", kmsg.ConfigSourceStaticBrokerConfig)

	// The cluster default: live, and the topic config follows it.
	resp, err := adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: ptr("60000")}})
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter the cluster default: %v %+v", err, resp)
	}
	waitFor(t, 10*time.Second, "retention to delete old segments", func() bool { return p.Log().LogStartOffset() > 0 })
	expectConfig(t, adm, "aging", "retention.ms", "60000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expectBrokerConfig(t, adm, "log.retention.ms", "60000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	def, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(def) != 1 || len(def[0].Configs) != 1 || def[0].Configs[0].Key != "log.retention.ms" {
		t.Errorf("describe the cluster default: %v %+v", err, def)
	}

	// The node's own value wins; synonyms list every layer.
	resp, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.minutes", Value: ptr("2")}, {Name: "message.max.bytes", Value: ptr("3000")}}, 1)
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter broker 1: %v %+v", err, resp)
	}
	expectConfig(t, adm, "aging", "retention.ms", "120000", kmsg.ConfigSourceDynamicBrokerConfig)
	expectConfig(t, adm, "aging", "max.message.bytes", "3000", kmsg.ConfigSourceDynamicBrokerConfig)
	big := buildBatch(t, plainBatch(testRecord{value: bytes.Repeat([]byte("x"), 4000)}))
	if got := c.produceRaw("aging", 0, big); got.ErrorCode != kerr.MessageTooLarge.Code {
		t.Errorf("produce over the dynamic message.max.bytes: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var synonyms []string
	for _, c := range rcs[0].Configs {
		if c.Key == "log.retention.ms" {
			for _, s := range c.Synonyms {
				synonyms = append(synonyms, s.Key+"="+*s.Value+"/"+s.Source.String())
			}
		}
	}
	want := "log.retention.minutes=2/DYNAMIC_BROKER_CONFIG log.retention.ms=60000/DYNAMIC_DEFAULT_BROKER_CONFIG log.retention.hours=48/STATIC_BROKER_CONFIG log.retention.hours=168/DEFAULT_CONFIG"
	if got := strings.Join(synonyms, " "); got != want {
		t.Errorf("synonyms of log.retention.ms:\n got %s\nwant %s", got, want)
	}

	// Survives a restart (the quorum keeps it).
	tb.restart()
	adm = tb.admin()
	expectConfig(t, adm, "aging", "retention.ms", "120000", kmsg.ConfigSourceDynamicBrokerConfig)
	// A property's source is its most specific unit synonym's.
	expectBrokerConfig(t, adm, "log.retention.ms", "120000", kmsg.ConfigSourceDynamicBrokerConfig)
	expectBrokerConfig(t, adm, "log.retention.hours", "0", kmsg.ConfigSourceDynamicBrokerConfig)

	// Deleting the node's values falls back to the cluster default.
	resp, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "log.retention.minutes"}, {Op: kadm.DeleteConfig, Name: "message.max.bytes"}}, 1)
	if err != nil || resp[0].Err != nil {
		t.Fatalf("delete broker 1's values: %v %+v", err, resp)
	}
	expectConfig(t, adm, "aging", "retention.ms", "60000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expectConfig(t, adm, "aging", "max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig)
}

// TestDynamicCleanerConfigs: the log cleaner's topic defaults
// (log.cleaner.delete.retention.ms, .min.cleanable.ratio,
// .min.compaction.lag.ms, .max.compaction.lag.ms) are broker properties
// with Kafka's defaults and types, dynamic, and the synonyms of the
// compaction topic configs: a static min compaction lag of an hour keeps
// the cleaner off a compacted log until a cluster-wide 0 lets it clean;
// topic DescribeConfigs reports each layer's source and synonyms; values
// out of range are refused with INVALID_CONFIG naming the property.
func TestDynamicCleanerConfigs(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		if err := c.Set("log.cleaner.min.compaction.lag.ms", "3600000"); err != nil {
			t.Fatal(err)
		}
	})
	adm := tb.admin()
	ctx := testContext(t)
	tb.createTopic("table", 1, map[string]*string{"cleanup.policy": ptr("compact"), "segment.bytes": ptr("1024")})
	producer := tb.client(kgo.DefaultProduceTopic("table"))
	for i := range 100 {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%5), Value: fmt.Appendf(nil, "%d", i)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	p := tb.srv.topics.partition("table", 0)
	if res, err := p.Clean(time.Now()); err != nil || res.Cleaned {
		t.Fatalf("clean within the static min compaction lag: %v %+v", err, res)
	}
	expectConfig(t, adm, "table", "min.compaction.lag.ms", "3600000", kmsg.ConfigSourceStaticBrokerConfig)
	expectConfig(t, adm, "table", "min.cleanable.dirty.ratio", "0.5", kmsg.ConfigSourceDefaultConfig)
	expectConfig(t, adm, "table", "delete.retention.ms", "86400000", kmsg.ConfigSourceDefaultConfig)
	expectConfig(t, adm, "table", "max.compaction.lag.ms", "9223372036854775807", kmsg.ConfigSourceDefaultConfig)
	// Types and read-only flags (kadm has neither: a raw DescribeConfigs).
	wantTypes := map[string]kmsg.ConfigType{
		"log.cleaner.delete.retention.ms":   kmsg.ConfigTypeLong,
		"log.cleaner.min.cleanable.ratio":   kmsg.ConfigTypeDouble,
		"log.cleaner.min.compaction.lag.ms": kmsg.ConfigTypeLong,
		"log.cleaner.max.compaction.lag.ms": kmsg.ConfigTypeLong,
	}
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType, dres.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	dres.ConfigNames = slices.Sorted(maps.Keys(wantTypes))
	dreq.Resources = append(dreq.Resources, dres)
	dresp, err := dreq.RequestWith(ctx, tb.client())
	if err != nil || len(dresp.Resources) != 1 || len(dresp.Resources[0].Configs) != len(wantTypes) {
		t.Fatalf("describe broker 1: %v %+v", err, dresp)
	}
	for _, c := range dresp.Resources[0].Configs {
		if c.ConfigType != wantTypes[c.Name] || c.ReadOnly || c.Source != kmsg.ConfigSourceDefaultConfig && c.Name != "log.cleaner.min.compaction.lag.ms" {
			t.Errorf("broker property %s: type %v read-only %v source %v, want %v, dynamic, DEFAULT_CONFIG", c.Name, c.ConfigType, c.ReadOnly, c.Source, wantTypes[c.Name])
		}
	}

	// Refused, naming the property; nothing changes.
	for name, bad := range map[string]string{
		"log.cleaner.min.cleanable.ratio":   "1.5",
		"log.cleaner.delete.retention.ms":   "-1",
		"log.cleaner.min.compaction.lag.ms": "-1",
		"log.cleaner.max.compaction.lag.ms": "0",
	} {
		resp, err := adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: name, Value: ptr(bad)}})
		if err != nil || len(resp) != 1 || !errors.Is(resp[0].Err, kerr.InvalidConfig) || !strings.Contains(resp[0].ErrMessage, name) {
			t.Errorf("%s=%s: %v %+v, want INVALID_CONFIG naming it", name, bad, err, resp)
		}
	}
	// NaN compares false with both bounds; it is no ratio.
	if resp, err := adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: "log.cleaner.min.cleanable.ratio", Value: ptr("NaN")}}); err != nil || !errors.Is(resp[0].Err, kerr.InvalidConfig) {
		t.Errorf("ratio NaN: %v %+v", err, resp)
	}

	// Cluster-wide: the topic configs follow, and the cleaner with them.
	resp, err := adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{
		{Name: "log.cleaner.min.compaction.lag.ms", Value: ptr("0")},
		{Name: "log.cleaner.min.cleanable.ratio", Value: ptr("0.25")},
		{Name: "log.cleaner.delete.retention.ms", Value: ptr("5000")},
	})
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter the cluster default: %v %+v", err, resp)
	}
	expectConfig(t, adm, "table", "min.compaction.lag.ms", "0", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expectConfig(t, adm, "table", "min.cleanable.dirty.ratio", "0.25", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expectConfig(t, adm, "table", "delete.retention.ms", "5000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	waitFor(t, 10*time.Second, "the log's config following the defaults", func() bool {
		c := p.Log().(*storage.Log).Config()
		return c.MinCompactionLagMs == 0 && c.MinCleanableDirtyRatio == 0.25 && c.DeleteRetentionMs == 5000
	})
	if res, err := p.Clean(time.Now()); err != nil || !res.Cleaned || res.RecordsRemoved == 0 {
		t.Fatalf("clean with no min compaction lag: %v %+v", err, res)
	}

	// Per broker: wins over the default; the synonyms list each layer.
	resp, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.cleaner.max.compaction.lag.ms", Value: ptr("60000")}, {Name: "log.cleaner.min.compaction.lag.ms", Value: ptr("10")}}, 1)
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter broker 1: %v %+v", err, resp)
	}
	expectConfig(t, adm, "table", "max.compaction.lag.ms", "60000", kmsg.ConfigSourceDynamicBrokerConfig)
	waitFor(t, 10*time.Second, "the log's max compaction lag", func() bool { return p.Log().(*storage.Log).Config().MaxCompactionLagMs == 60000 })
	rcs, err := adm.DescribeTopicConfigs(ctx, "table")
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe: %v %+v", err, rcs)
	}
	var synonyms []string
	for _, c := range rcs[0].Configs {
		if c.Key == "min.compaction.lag.ms" {
			for _, s := range c.Synonyms {
				synonyms = append(synonyms, s.Key+"="+*s.Value+"/"+s.Source.String())
			}
		}
	}
	want := "log.cleaner.min.compaction.lag.ms=10/DYNAMIC_BROKER_CONFIG log.cleaner.min.compaction.lag.ms=0/DYNAMIC_DEFAULT_BROKER_CONFIG " +
		"log.cleaner.min.compaction.lag.ms=3600000/STATIC_BROKER_CONFIG log.cleaner.min.compaction.lag.ms=0/DEFAULT_CONFIG"
	if got := strings.Join(synonyms, " "); got != want {
		t.Errorf("synonyms of min.compaction.lag.ms:\n got %s\nwant %s", got, want)
	}
}

// TestDynamicBrokerConfigsSarama: sarama's ClusterAdmin (its own encoder)
// sets a broker config with AlterConfigs and IncrementalAlterConfigs and
// reads back the source and read-only flag.
func TestDynamicBrokerConfigsSarama(t *testing.T) {
	tb := startTestBroker(t)
	sa, err := sarama.NewClusterAdmin([]string{tb.addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	if err := sa.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"log.cleaner.backoff.ms": ptr("500")}, false); err != nil {
		t.Fatalf("sarama AlterConfig: %v", err)
	}
	if err := sa.IncrementalAlterConfig(sarama.BrokerResource, "", map[string]sarama.IncrementalAlterConfigsEntry{
		"log.cleanup.policy": {Operation: sarama.IncrementalAlterConfigsOperationAppend, Value: ptr("compact")},
	}, false); err != nil {
		t.Fatalf("sarama IncrementalAlterConfig: %v", err)
	}
	entries, err := sa.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: "1", ConfigNames: []string{"log.cleaner.backoff.ms", "log.cleanup.policy", "log.dirs"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sarama.ConfigEntry{}
	for _, e := range entries {
		got[e.Name] = e
	}
	if e := got["log.cleaner.backoff.ms"]; e.Value != "500" || e.Source != sarama.SourceDynamicBroker || e.ReadOnly {
		t.Errorf("log.cleaner.backoff.ms: %+v", e)
	}
	if e := got["log.cleanup.policy"]; e.Value != "delete,compact" || e.Source != sarama.SourceDynamicDefaultBroker {
		t.Errorf("log.cleanup.policy: %+v", e)
	}
	if e := got["log.dirs"]; !e.ReadOnly || e.Source != sarama.SourceDefault {
		t.Errorf("log.dirs: %+v", e)
	}
	if err := sa.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"num.partitions": ptr("3")}, false); err == nil || !strings.Contains(err.Error(), "num.partitions") {
		t.Errorf("sarama altering a static property: %v", err)
	}
	// Pool sizes are dynamic: the tiered-storage limiters read them at
	// each admission.
	if err := sa.IncrementalAlterConfig(sarama.BrokerResource, "1", map[string]sarama.IncrementalAlterConfigsEntry{
		"remote.log.reader.threads": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: ptr("3")},
	}, false); err != nil {
		t.Fatalf("sarama setting remote.log.reader.threads: %v", err)
	}
	if tb.srv.conf().RemoteLogReaderThreads != 3 {
		t.Errorf("remote.log.reader.threads after the change: %d", tb.srv.conf().RemoteLogReaderThreads)
	}
	// AlterConfigs replaces the node's whole set: an empty set clears it.
	if err := sa.AlterConfig(sarama.BrokerResource, "1", map[string]*string{}, false); err != nil {
		t.Fatal(err)
	}
	if tb.srv.conf().LogCleanerBackoffMs != 15000 {
		t.Errorf("log.cleaner.backoff.ms after clearing: %d", tb.srv.conf().LogCleanerBackoffMs)
	}
}

// lockedBuffer is a bytes.Buffer for a log written by several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBrokerLoggers: BROKER_LOGGER configs list the loggers; raising
// kafka.request.logger to DEBUG makes a line per request appear in a log
// running at INFO, deleting it stops them; bad levels and operations are
// refused.
func TestBrokerLoggers(t *testing.T) {
	var log lockedBuffer
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.HTTPListen = "127.0.0.1:0", ""
	srv, err := NewServer(cfg, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tb := &testBroker{t: t, srv: srv, cfg: cfg}
	adm := tb.admin()
	ctx := testContext(t)

	describe := func() map[string]string {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, tb.client())
		if err != nil || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("describe loggers: %v %+v", err, resp)
		}
		out := map[string]string{}
		for _, c := range resp.Resources[0].Configs {
			if c.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig {
				t.Errorf("logger %s source %v", c.Name, c.Source)
			}
			out[c.Name] = *c.Value
		}
		return out
	}
	alter := func(cfgs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeBrokerLogger, "1", cfgs
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, tb.client())
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if m := resp.Resources[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Resources[0].ErrorCode, msg
	}
	op := func(o kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Op, c.Name, c.Value = o, name, value
		return c
	}

	levels := describe()
	for _, name := range []string{"root", "strata.broker", "strata.metadata", "kafka.request.logger"} {
		if levels[name] != "INFO" {
			t.Errorf("logger %s at %q, want INFO", name, levels[name])
		}
	}
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "msg=request") {
		t.Fatal("request lines at INFO")
	}

	if code, msg := alter(op(kmsg.IncrementalAlterConfigOpSet, "kafka.request.logger", ptr("debug"))); code != 0 {
		t.Fatalf("set DEBUG: %v %s", kerr.ErrorForCode(code), msg)
	}
	if got := describe()["kafka.request.logger"]; got != "DEBUG" {
		t.Fatalf("kafka.request.logger at %s after the change", got)
	}
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a request line", func() bool { return strings.Contains(log.String(), "msg=request api=Metadata") })

	// Errors: an unknown level, APPEND, AlterConfigs, another node.
	if code, msg := alter(op(kmsg.IncrementalAlterConfigOpSet, "root", ptr("LOUD"))); code != kerr.InvalidConfig.Code || !strings.Contains(msg, "LOUD") {
		t.Errorf("level LOUD: %v %s", kerr.ErrorForCode(code), msg)
	}
	if code, _ := alter(op(kmsg.IncrementalAlterConfigOpAppend, "root", ptr("DEBUG"))); code != kerr.InvalidRequest.Code {
		t.Errorf("APPEND: %v", kerr.ErrorForCode(code))
	}
	if code, _ := alter(op(kmsg.IncrementalAlterConfigOpDelete, "no.such.logger", nil)); code != kerr.InvalidConfig.Code {
		t.Errorf("delete an unknown logger: %v", kerr.ErrorForCode(code))
	}
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
	legacy.Resources = append(legacy.Resources, lr)
	if resp, err := legacy.RequestWith(ctx, tb.client()); err != nil || resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("AlterConfigs on broker loggers: %v %+v", err, resp)
	}

	// DELETE returns the logger to its parent's level: no more lines.
	if code, msg := alter(op(kmsg.IncrementalAlterConfigOpDelete, "kafka.request.logger", nil)); code != 0 {
		t.Fatalf("delete: %v %s", kerr.ErrorForCode(code), msg)
	}
	if got := describe()["kafka.request.logger"]; got != "INFO" {
		t.Errorf("kafka.request.logger at %s after delete", got)
	}
	before := strings.Count(log.String(), "msg=request")
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	if after := strings.Count(log.String(), "msg=request"); after != before {
		t.Errorf("%d request lines after the level went back to INFO", after-before)
	}
}

// TestGroupConfigs: GROUP configs (KIP-848) within the broker's bounds,
// described with GROUP_CONFIG, and used by the coordinator: a consumer's
// heartbeat interval is the group's.
func TestGroupConfigs(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		c.GroupConsumerMinSessionTimeoutMs = 1000
		c.GroupConsumerMinHeartbeatIntervalMs = 100
	})
	tb.createTopic("work", 1, nil)
	ctx := testContext(t)
	cl := tb.client()
	alter := func(group string, cfgs map[string]string) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		for k, v := range cfgs {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = k, ptr(v)
			r.Configs = append(r.Configs, c)
		}
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if m := resp.Resources[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Resources[0].ErrorCode, msg
	}
	for _, tc := range []struct {
		cfgs  map[string]string
		inMsg string
	}{
		{map[string]string{"consumer.session.timeout.ms": "500"}, "outside"},
		{map[string]string{"consumer.heartbeat.interval.ms": "16000"}, "outside"},
		{map[string]string{"consumer.session.timeout.ms": "2000", "consumer.heartbeat.interval.ms": "3000"}, "less than"},
		{map[string]string{"consumer.rebalance.timeout.ms": "1"}, "unknown group config"},
		{map[string]string{"consumer.session.timeout.ms": "soon"}, "not an integer"},
	} {
		if code, msg := alter("g1", tc.cfgs); code != kerr.InvalidConfig.Code || !strings.Contains(msg, tc.inMsg) {
			t.Errorf("%v: %v %q", tc.cfgs, kerr.ErrorForCode(code), msg)
		}
	}
	if code, msg := alter("g1", map[string]string{"consumer.session.timeout.ms": "3000", "consumer.heartbeat.interval.ms": "700"}); code != 0 {
		t.Fatalf("set: %v %s", kerr.ErrorForCode(code), msg)
	}

	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, g := range []string{"g1", "g2"} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, g
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			got[r.ResourceName+" "+c.Name] = *c.Value + "/" + c.Source.String()
		}
	}
	for k, v := range map[string]string{
		"g1 consumer.session.timeout.ms":    "3000/GROUP_CONFIG",
		"g1 consumer.heartbeat.interval.ms": "700/GROUP_CONFIG",
		"g2 consumer.session.timeout.ms":    "45000/DEFAULT_CONFIG",
		"g2 consumer.heartbeat.interval.ms": "5000/DEFAULT_CONFIG",
	} {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}

	hb := func(group string) int32 {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, "member-"+group, 0, 5000
		req.SubscribedTopicNames = []string{"work"}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		var resp *kmsg.ConsumerGroupHeartbeatResponse
		waitFor(t, 10*time.Second, "a heartbeat answer", func() bool {
			r, err := req.RequestWith(ctx, cl)
			if err != nil || r.ErrorCode == kerr.CoordinatorLoadInProgress.Code || r.ErrorCode == kerr.CoordinatorNotAvailable.Code {
				return false
			}
			resp = r
			return true
		})
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat %s: %v", group, kerr.ErrorForCode(resp.ErrorCode))
		}
		return resp.HeartbeatIntervalMillis
	}
	if got := hb("g1"); got != 700 {
		t.Errorf("g1 heartbeat interval %d, want its group config's 700", got)
	}
	if got := hb("g2"); got != 5000 {
		t.Errorf("g2 heartbeat interval %d, want the broker's 5000", got)
	}

	// KIP-1142: GROUP lists the groups with configs (g0 has configs but
	// no members) and the groups that exist; BROKER_LOGGER the node.
	if code, msg := alter("g0", map[string]string{"consumer.session.timeout.ms": "60000"}); code != 0 {
		t.Fatalf("set g0: %v %s", kerr.ErrorForCode(code), msg)
	}
	adm := kadm.NewClient(cl)
	listed, err := adm.ListConfigResources(ctx, kadm.ConfigResourceGroupConfig, kadm.ConfigResourceBrokerLogger)
	if err != nil || listed.Err != nil {
		t.Fatalf("list: %v %v", err, listed.Err)
	}
	var names []string
	for _, r := range listed.Resources {
		names = append(names, r.Type.String()+" "+r.Name)
	}
	if want := []string{"BROKER_LOGGER 1", "GROUP_CONFIG g0", "GROUP_CONFIG g1", "GROUP_CONFIG g2"}; !slices.Equal(names, want) {
		t.Errorf("ListConfigResources: %v, want %v", names, want)
	}
}
