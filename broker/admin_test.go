package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func expectErr(t *testing.T, what string, got error, want *kerr.Error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("%s: %v", what, got)
		}
		return
	}
	if !errors.Is(got, want) {
		t.Errorf("%s: error %v, want %v", what, got, want)
	}
}

func TestCreateTopics(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)

	resp, err := adm.ValidateCreateTopics(ctx, 3, 1, nil, "validate-only")
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "validate-only", resp["validate-only"].Err, nil)
	if tb.srv.topics.get("validate-only") != nil {
		t.Fatal("validate-only created the topic")
	}

	created, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": ptr("3600000")}, "orders")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}
	if created.ID == (kadm.TopicID{}) || created.NumPartitions != 2 || created.ReplicationFactor != 1 {
		t.Errorf("create response: id %v, %d partitions, rf %d", created.ID, created.NumPartitions, created.ReplicationFactor)
	}
	if c, ok := created.Configs["retention.ms"]; !ok || c.Value == nil || *c.Value != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("create response config retention.ms: %+v", c)
	}

	cases := []struct {
		name       string
		topic      string
		partitions int32
		rf         int16
		configs    map[string]*string
		want       *kerr.Error
	}{
		{"existing topic", "orders", 1, 1, nil, kerr.TopicAlreadyExists},
		{"slash in name", "a/b", 1, 1, nil, kerr.InvalidTopicException},
		{"250 characters", strings.Repeat("a", 250), 1, 1, nil, kerr.InvalidTopicException},
		{"dot", ".", 1, 1, nil, kerr.InvalidTopicException},
		{"dot dot", "..", 1, 1, nil, kerr.InvalidTopicException},
		{"unknown config", "cfg1", 1, 1, map[string]*string{"no.such.config": ptr("1")}, kerr.InvalidConfig},
		{"bad config value", "cfg2", 1, 1, map[string]*string{"retention.ms": ptr("soon")}, kerr.InvalidConfig},
		{"replication factor 3", "rf3", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"zero partitions", "p0", 0, 1, nil, kerr.InvalidPartitions},
	}
	for _, tc := range cases {
		resp, err := adm.CreateTopics(ctx, tc.partitions, tc.rf, tc.configs, tc.topic)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		expectErr(t, tc.name, resp[tc.topic].Err, tc.want)
		if tc.want != kerr.TopicAlreadyExists && tb.srv.topics.get(tc.topic) != nil {
			t.Errorf("%s: topic created anyway", tc.name)
		}
	}
	// 249 characters is the longest legal name.
	long := strings.Repeat("b", 249)
	if resp, err := adm.CreateTopics(ctx, 1, 1, nil, long); err != nil || resp[long].Err != nil {
		t.Errorf("249-character name: %v %v", err, resp[long].Err)
	}

	// A manual assignment names registered brokers only (here this node).
	assign := func(replicas ...[]int32) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 5
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "assigned", -1, -1
		for i, r := range replicas {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), r
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		req.Topics = append(req.Topics, rt)
		return req
	}
	ac := tb.dialRaw()
	if got := roundTrip[*kmsg.CreateTopicsResponse](ac, assign([]int32{1}, []int32{2})).Topics[0]; got.ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("assignment to another node: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := roundTrip[*kmsg.CreateTopicsResponse](ac, assign([]int32{1}, []int32{1})).Topics[0]; got.ErrorCode != 0 || got.NumPartitions != 2 {
		t.Errorf("assignment to this node: %v, %d partitions", kerr.ErrorForCode(got.ErrorCode), got.NumPartitions)
	}

	// Validate-only still reports an existing topic.
	if resp, err := adm.ValidateCreateTopics(ctx, 1, 1, nil, "orders"); err != nil || !errors.Is(resp["orders"].Err, kerr.TopicAlreadyExists) {
		t.Errorf("validate-only create of an existing topic: %v %v", err, resp["orders"].Err)
	}
	// Names that differ only in '.' and '_' collide (Kafka's metric names
	// would), whichever comes first.
	tb.createTopic("metrics.events", 1, nil)
	for name, want := range map[string]*kerr.Error{"metrics_events": kerr.InvalidTopicException, "metrics.events": kerr.TopicAlreadyExists} {
		resp, err := adm.CreateTopics(ctx, 1, 1, nil, name)
		if err != nil {
			t.Fatal(err)
		}
		expectErr(t, "colliding name "+name, resp[name].Err, want)
	}

	// Defaults (-1) and a duplicate name in one request, raw.
	c := tb.dialRaw()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 5000
	for _, name := range []string{"defaults", "twice", "twice"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		req.Topics = append(req.Topics, rt)
	}
	raw := roundTrip[*kmsg.CreateTopicsResponse](c, req)
	for _, rt := range raw.Topics {
		switch rt.Topic {
		case "defaults":
			if rt.ErrorCode != 0 || rt.NumPartitions != 1 || rt.ReplicationFactor != 1 || rt.TopicID == [16]byte{} {
				t.Errorf("defaults: error %v, %d partitions, rf %d", kerr.ErrorForCode(rt.ErrorCode), rt.NumPartitions, rt.ReplicationFactor)
			}
		case "twice":
			if rt.ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("name twice in a request: %v", kerr.ErrorForCode(rt.ErrorCode))
			}
		}
	}
	if tb.srv.topics.get("twice") != nil {
		t.Error("topic named twice was created")
	}
}

func TestDeleteTopicsAndRecreate(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	oldID := tb.createTopic("doomed", 2, nil)
	c := tb.dialRaw()
	if got := c.produceRaw("doomed", 1, buildBatch(t, plainBatch(fixtureRecords(5, 12)...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	resp, err := adm.DeleteTopics(ctx, "doomed", "never-was")
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "delete", resp["doomed"].Err, nil)
	expectErr(t, "delete unknown", resp["never-was"].Err, kerr.UnknownTopicOrPartition)
	if got := c.produceRaw("doomed", 1, buildBatch(t, plainBatch(fixtureRecords(1, 12)...))); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to deleted topic: %v", kerr.ErrorForCode(got.ErrorCode))
	}

	newID := tb.createTopic("doomed", 2, nil)
	if newID == oldID {
		t.Fatal("recreated topic reuses the old topic ID")
	}
	for p := int32(0); p < 2; p++ {
		if end := tb.logEnd("doomed", p); end != 0 {
			t.Fatalf("recreated partition %d has log end %d, want 0", p, end)
		}
	}
	fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "doomed", [16]byte{}, map[int32]int64{1: 0}, 1<<20))
	if p := fetch.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch from recreated topic: error %v, %d bytes", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}

	// v6 deletes by topic ID.
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.TimeoutMillis = 5000
	for _, id := range [][16]byte{newID, {1, 2, 3}} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	byID := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
	if len(byID.Topics) != 2 || byID.Topics[0].ErrorCode != 0 || byID.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("delete by id: %+v", byID.Topics)
	}
	if tb.srv.topics.get("doomed") != nil {
		t.Fatal("topic still exists after delete by id")
	}
}

func TestDeleteTopicDisabled(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.DeleteTopicEnable = false })
	tb.createTopic("kept", 1, nil)
	resp, err := tb.admin().DeleteTopics(testContext(t), "kept")
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "delete with delete.topic.enable=false", resp["kept"].Err, kerr.TopicDeletionDisabled)
}

func TestCreatePartitions(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	tb.createTopic("grow", 2, nil)

	check := func(what string, resp kadm.CreatePartitionsResponses, err error, want *kerr.Error, partitions int) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		expectErr(t, what, resp["grow"].Err, want)
		_, _, meta := tb.srv.topics.snapshot(tb.srv.topics.get("grow"))
		if got := int(meta.Partitions()); got != partitions {
			t.Fatalf("%s: %d partitions, want %d", what, got, partitions)
		}
	}
	resp, err := adm.ValidateUpdatePartitions(ctx, 8, "grow")
	check("validate-only grow", resp, err, nil, 2)
	resp, err = adm.UpdatePartitions(ctx, 5, "grow")
	check("grow to 5", resp, err, nil, 5)
	resp, err = adm.UpdatePartitions(ctx, 3, "grow")
	check("shrink to 3", resp, err, kerr.InvalidPartitions, 5)
	resp, err = adm.UpdatePartitions(ctx, 5, "grow")
	check("same count", resp, err, kerr.InvalidPartitions, 5)

	c := tb.dialRaw()
	if got := c.produceRaw("grow", 4, buildBatch(t, plainBatch(fixtureRecords(2, 13)...))); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("produce to a new partition: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = ptr("grow")
	meta.Topics = append(meta.Topics, mt)
	if got := roundTrip[*kmsg.MetadataResponse](c, meta); len(got.Topics[0].Partitions) != 5 {
		t.Fatalf("metadata lists %d partitions after growing to 5", len(got.Topics[0].Partitions))
	}
	// A manual assignment must list exactly the new partitions.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "grow", 8
	for i := 0; i < 2; i++ {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = []int32{1}
		cpt.Assignment = append(cpt.Assignment, a)
	}
	cp.Topics = append(cp.Topics, cpt)
	if got := roundTrip[*kmsg.CreatePartitionsResponse](c, cp).Topics[0]; got.ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("2 assignments for 3 new partitions: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	cp.Topics[0].Assignment = append(cp.Topics[0].Assignment, cp.Topics[0].Assignment[0])
	if got := roundTrip[*kmsg.CreatePartitionsResponse](c, cp).Topics[0]; got.ErrorCode != 0 {
		t.Errorf("3 assignments for 3 new partitions: %v", kerr.ErrorForCode(got.ErrorCode))
	}

	missing, err := adm.UpdatePartitions(ctx, 3, "missing")
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "grow a missing topic", missing["missing"].Err, kerr.UnknownTopicOrPartition)
}

// describeTopicConfig returns one config of a topic as DescribeConfigs shows it.
func describeTopicConfig(t *testing.T, adm *kadm.Client, topic, name string) kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe %s: %+v", topic, rcs)
	}
	for _, c := range rcs[0].Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("describe %s: no config %s", topic, name)
	return kadm.Config{}
}

func expectConfig(t *testing.T, adm *kadm.Client, topic, name, value string, source kmsg.ConfigSource) {
	t.Helper()
	c := describeTopicConfig(t, adm, topic, name)
	if c.Value == nil || *c.Value != value || c.Source != source {
		v := "<nil>"
		if c.Value != nil {
			v = *c.Value
		}
		t.Errorf("%s %s = %s (%v), want %s (%v)", topic, name, v, c.Source, value, source)
	}
}

func TestDescribeConfigs(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		if err := c.Set("log.retention.hours", "48"); err != nil {
			t.Fatal(err)
		}
		if err := c.Set("log.segment.bytes", "2000000"); err != nil {
			t.Fatal(err)
		}
	})
	adm := tb.admin()
	tb.createTopic("described", 1, map[string]*string{"cleanup.policy": ptr("compact")})
	expectConfig(t, adm, "described", "cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "described", "segment.bytes", "2000000", kmsg.ConfigSourceStaticBrokerConfig)
	expectConfig(t, adm, "described", "retention.ms", "172800000", kmsg.ConfigSourceStaticBrokerConfig)
	expectConfig(t, adm, "described", "max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig)

	// Synonyms, most specific first, and named configs only.
	c := tb.dialRaw()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	req.IncludeSynonyms = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeTopic, "described", []string{"retention.ms"}
	req.Resources = append(req.Resources, r)
	resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req)
	if len(resp.Resources) != 1 || len(resp.Resources[0].Configs) != 1 {
		t.Fatalf("describe one config: %+v", resp.Resources)
	}
	syn := resp.Resources[0].Configs[0].ConfigSynonyms
	if len(syn) < 2 || syn[0].Name != "log.retention.hours" || syn[0].Source != kmsg.ConfigSourceStaticBrokerConfig || syn[len(syn)-1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("retention.ms synonyms: %+v", syn)
	}

	// An empty name list, like a null one, means every config.
	r.ConfigNames = []string{}
	req.Resources[0] = r
	if resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req); len(resp.Resources[0].Configs) != len(topicConfigDefs) {
		t.Errorf("empty config name list described %d configs, want all %d", len(resp.Resources[0].Configs), len(topicConfigDefs))
	}

	rcs, err := adm.DescribeTopicConfigs(testContext(t), "missing")
	if err == nil && (len(rcs) != 1 || !errors.Is(rcs[0].Err, kerr.UnknownTopicOrPartition)) {
		t.Errorf("describe missing topic: %+v", rcs)
	}
	brokers, err := adm.DescribeBrokerConfigs(testContext(t), 1)
	if err != nil || len(brokers) != 1 || brokers[0].Err != nil {
		t.Fatalf("describe broker: %v %+v", err, brokers)
	}
	found := false
	for _, bc := range brokers[0].Configs {
		if bc.Key == "log.retention.hours" {
			found = bc.Value != nil && *bc.Value == "48" && bc.Source == kmsg.ConfigSourceStaticBrokerConfig
		}
	}
	if !found {
		t.Error("broker config log.retention.hours=48 not described as static")
	}
}

func TestAlterConfigs(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	tb.createTopic("altered", 1, map[string]*string{"segment.ms": ptr("60000")})

	// AlterConfigs replaces the whole override set.
	resp, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: ptr("3600000")}}, "altered")
	if err != nil || len(resp) != 1 || resp[0].Err != nil {
		t.Fatalf("AlterConfigs: %v %+v", err, resp)
	}
	expectConfig(t, adm, "altered", "retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "altered", "segment.ms", "604800000", kmsg.ConfigSourceDefaultConfig)

	resp, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: ptr("never")}}, "altered")
	if err != nil || len(resp) != 1 {
		t.Fatal(err)
	}
	expectErr(t, "AlterConfigs bad value", resp[0].Err, kerr.InvalidConfig)
	resp, err = adm.ValidateAlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: ptr("5")}}, "altered")
	if err != nil || len(resp) != 1 || resp[0].Err != nil {
		t.Fatalf("validate-only AlterConfigs: %v %+v", err, resp)
	}
	expectConfig(t, adm, "altered", "retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)

	// IncrementalAlterConfigs: set, append to a list, delete.
	inc := func(what string, want *kerr.Error, ops ...kadm.AlterConfig) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, ops, "altered")
		if err != nil || len(resp) != 1 {
			t.Fatalf("%s: %v", what, err)
		}
		expectErr(t, what, resp[0].Err, want)
	}
	inc("set", nil, kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("7200000")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "max.message.bytes", Value: ptr("5000")})
	expectConfig(t, adm, "altered", "retention.ms", "7200000", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "altered", "max.message.bytes", "5000", kmsg.ConfigSourceDynamicTopicConfig)
	inc("append", nil, kadm.AlterConfig{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: ptr("compact")})
	expectConfig(t, adm, "altered", "cleanup.policy", "delete,compact", kmsg.ConfigSourceDynamicTopicConfig)
	inc("delete", nil, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"})
	expectConfig(t, adm, "altered", "retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig)
	expectConfig(t, adm, "altered", "max.message.bytes", "5000", kmsg.ConfigSourceDynamicTopicConfig)
	inc("unknown config", kerr.InvalidConfig, kadm.AlterConfig{Op: kadm.SetConfig, Name: "bogus", Value: ptr("1")})
	inc("append to a non-list", kerr.InvalidConfig, kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: ptr("1")})

	// The new max.message.bytes is enforced on produce.
	c := tb.dialRaw()
	big := buildBatch(t, plainBatch(testRecord{value: []byte(strings.Repeat("x", 6000))}))
	if got := c.produceRaw("altered", 0, big); got.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("produce over the altered max.message.bytes: %v", kerr.ErrorForCode(got.ErrorCode))
	}

	// A broker property that is not dynamic is refused, naming it.
	broker, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.dirs", Value: ptr("/elsewhere")}}, 1)
	if err != nil || len(broker) != 1 || !errors.Is(broker[0].Err, kerr.InvalidConfig) || !strings.Contains(broker[0].ErrMessage, "log.dirs") {
		t.Errorf("altering a static broker config: %v %+v", err, broker)
	}
}

// TestRetentionChangeApplies: lowering retention.ms through
// IncrementalAlterConfigs reaches the open log, whose old segments go.
func TestRetentionChangeApplies(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.LogRetentionCheckIntervalMs = 10 })
	tb.createTopic("shrinking", 1, map[string]*string{"segment.bytes": ptr("200")})
	c := tb.dialRaw()
	for i := 0; i < 5; i++ {
		recs := fixtureRecords(2, uint64(i))
		for j := range recs {
			recs[j].timestamp = time.Now().Add(-time.Hour).UnixMilli()
		}
		if got := c.produceRaw("shrinking", 0, buildBatch(t, plainBatch(recs...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	p := tb.srv.topics.partition("shrinking", 0)
	if p.Log().LogStartOffset() != 0 || p.Log().NumSegments() < 3 {
		t.Fatalf("log start %d with %d segments before the change", p.Log().LogStartOffset(), p.Log().NumSegments())
	}
	resp, err := tb.admin().AlterTopicConfigs(testContext(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("60000")}}, "shrinking")
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, resp)
	}
	waitFor(t, 10*time.Second, "retention to delete old segments", func() bool { return p.Log().LogStartOffset() > 0 })
	if end := p.Log().LogEndOffset(); end != 10 {
		t.Fatalf("log end %d after retention, want 10", end)
	}
}

func TestDeleteRecords(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	tb.createTopic("trimmed", 1, nil)
	c := tb.dialRaw()
	for i := 0; i < 4; i++ {
		if got := c.produceRaw("trimmed", 0, buildBatch(t, plainBatch(fixtureRecords(5, uint64(i))...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	var offsets kadm.Offsets
	offsets.AddOffset("trimmed", 0, 7, -1)
	resp, err := adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp["trimmed"][0]; r.Err != nil || r.LowWatermark != 7 {
		t.Fatalf("delete records to 7: %v, low watermark %d", r.Err, r.LowWatermark)
	}
	starts, err := adm.ListStartOffsets(ctx, "trimmed")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("trimmed", 0); o.Offset != 7 {
		t.Fatalf("earliest offset %d after delete records, want 7", o.Offset)
	}
	for _, tc := range []struct {
		offset int64
		want   *kerr.Error
		first  int64
	}{{0, kerr.OffsetOutOfRange, 0}, {6, kerr.OffsetOutOfRange, 0}, {7, nil, 7}, {12, nil, 12}} {
		fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "trimmed", [16]byte{}, map[int32]int64{0: tc.offset}, 1<<20))
		p := fetch.Topics[0].Partitions[0]
		if want := int16(0); tc.want != nil && p.ErrorCode != tc.want.Code || tc.want == nil && p.ErrorCode != want {
			t.Errorf("fetch at %d: %v, want %v", tc.offset, kerr.ErrorForCode(p.ErrorCode), tc.want)
			continue
		}
		if p.LogStartOffset != 7 {
			t.Errorf("fetch at %d: log start offset %d, want 7", tc.offset, p.LogStartOffset)
		}
		if tc.want == nil {
			_, records := decodeBatches(t, p.RecordBatches)
			if len(records) == 0 || records[0].Offset > tc.first || records[len(records)-1].Offset != 19 {
				t.Errorf("fetch at %d: records %d..%d", tc.offset, records[0].Offset, records[len(records)-1].Offset)
			}
		}
	}

	// Out of range and -1 (the high watermark).
	offsets = nil
	offsets.AddOffset("trimmed", 0, 21, -1)
	resp, err = adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "delete past the high watermark", resp["trimmed"][0].Err, kerr.OffsetOutOfRange)
	offsets = nil
	offsets.AddOffset("trimmed", 0, -1, -1)
	resp, err = adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp["trimmed"][0]; r.Err != nil || r.LowWatermark != 20 {
		t.Fatalf("delete records to -1: %v, low watermark %d", r.Err, r.LowWatermark)
	}
	// A retained log start survives a restart.
	tb.restart()
	if start := tb.srv.topics.partition("trimmed", 0).Log().LogStartOffset(); start != 20 {
		t.Fatalf("log start %d after restart, want 20", start)
	}
}

func TestDescribeCluster(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	metaResp := roundTrip[*kmsg.MetadataResponse](c, meta)
	if metaResp.ClusterID == nil || *metaResp.ClusterID == "" {
		t.Fatal("metadata carries no cluster id")
	}
	for _, version := range []int16{0, 1, 2} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = version
		req.EndpointType, req.IncludeFencedBrokers = 1, version == 2
		resp := roundTrip[*kmsg.DescribeClusterResponse](c, req)
		if resp.ErrorCode != 0 || resp.ClusterID != *metaResp.ClusterID || resp.ControllerID != 1 || len(resp.Brokers) != 1 {
			t.Fatalf("v%d: error %v, cluster %q, controller %d, %d brokers", version, kerr.ErrorForCode(resp.ErrorCode), resp.ClusterID, resp.ControllerID, len(resp.Brokers))
		}
		b := resp.Brokers[0]
		if host, port := tb.srv.advertisedHostPort(); b.NodeID != 1 || b.Host != host || b.Port != port {
			t.Fatalf("v%d: broker %+v", version, b)
		}
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	req.EndpointType = 2
	if resp := roundTrip[*kmsg.DescribeClusterResponse](c, req); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("controller endpoints: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("epochs", 2, nil)
	c := tb.dialRaw()
	if got := c.produceRaw("epochs", 0, buildBatch(t, plainBatch(fixtureRecords(10, 14)...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	ask := func(version int16, partition, current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version = version
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "epochs"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return roundTrip[*kmsg.OffsetForLeaderEpochResponse](c, req).Topics[0].Partitions[0]
	}
	for _, version := range []int16{2, 3, 4} {
		if got := ask(version, 0, 0, 0); got.ErrorCode != 0 || got.LeaderEpoch != 0 || got.EndOffset != 10 {
			t.Errorf("v%d epoch 0: error %v, epoch %d, end %d; want 0, 10", version, kerr.ErrorForCode(got.ErrorCode), got.LeaderEpoch, got.EndOffset)
		}
		if got := ask(version, 1, -1, 0); got.ErrorCode != 0 || got.LeaderEpoch != 0 || got.EndOffset != 0 {
			t.Errorf("v%d empty partition: error %v, epoch %d, end %d; want 0, 0", version, kerr.ErrorForCode(got.ErrorCode), got.LeaderEpoch, got.EndOffset)
		}
		if got := ask(version, 0, 7, 0); got.ErrorCode != kerr.UnknownLeaderEpoch.Code {
			t.Errorf("v%d current epoch from the future: %v", version, kerr.ErrorForCode(got.ErrorCode))
		}
		if got := ask(version, 5, -1, 0); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("v%d missing partition: %v", version, kerr.ErrorForCode(got.ErrorCode))
		}
	}
}

func metadataFor(version int16, allowAuto bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = version
	req.AllowAutoTopicCreation = allowAuto
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, name := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = ptr(name)
		req.Topics = append(req.Topics, mt)
	}
	return req
}

func TestMetadataAutoCreate(t *testing.T) {
	t.Run("enabled", func(t *testing.T) {
		tb := startTestBroker(t, func(c *Config) { c.NumPartitions = 3 })
		c := tb.dialRaw()
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataFor(12, true, "auto-made", "bad/name"))
		for _, mt := range resp.Topics {
			switch *mt.Topic {
			case "auto-made":
				// The creating request is answered as Kafka does; the
				// client asks again (below).
				if mt.ErrorCode != kerr.LeaderNotAvailable.Code || len(mt.Partitions) != 0 || tb.srv.topics.get("auto-made") == nil {
					t.Errorf("auto-creating request: error %v, %d partitions", kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions))
				}
			case "bad/name":
				if mt.ErrorCode != kerr.InvalidTopicException.Code {
					t.Errorf("illegal name: %v", kerr.ErrorForCode(mt.ErrorCode))
				}
			}
		}
		resp = roundTrip[*kmsg.MetadataResponse](c, metadataFor(12, true, "auto-made"))
		if mt := resp.Topics[0]; mt.ErrorCode != 0 || len(mt.Partitions) != 3 || mt.TopicID == [16]byte{} {
			t.Errorf("auto-created: error %v, %d partitions", kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions))
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.Leader != 1 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
				t.Errorf("partition %d: leader %d replicas %v isr %v", p.Partition, p.Leader, p.Replicas, p.ISR)
			}
		}
		resp = roundTrip[*kmsg.MetadataResponse](c, metadataFor(12, false, "not-allowed"))
		if resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || tb.srv.topics.get("not-allowed") != nil {
			t.Errorf("allow_auto_topic_creation=false: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
		}
		// Before v4 the request cannot opt out.
		resp = roundTrip[*kmsg.MetadataResponse](c, metadataFor(3, false, "old-client"))
		if resp.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || tb.srv.topics.get("old-client") == nil {
			t.Errorf("v3 auto-create: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
		}
		if resp = roundTrip[*kmsg.MetadataResponse](c, metadataFor(3, false, "old-client")); resp.Topics[0].ErrorCode != 0 {
			t.Errorf("v3 auto-created: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
		}
		// Empty list: no topics; null list: all.
		if resp := roundTrip[*kmsg.MetadataResponse](c, metadataFor(12, false)); len(resp.Topics) != 0 {
			t.Errorf("empty topic list returned %d topics", len(resp.Topics))
		}
		all := metadataFor(12, false)
		all.Topics = nil
		var names []string
		for _, mt := range roundTrip[*kmsg.MetadataResponse](c, all).Topics {
			if !strings.HasPrefix(*mt.Topic, "__") { // internal topics may exist
				names = append(names, *mt.Topic)
			}
		}
		if len(names) != 2 || names[0] != "auto-made" || names[1] != "old-client" {
			t.Errorf("null topic list returned %v, want [auto-made old-client]", names)
		}
		// By topic ID (v10+).
		byID := metadataFor(12, false)
		mt := kmsg.NewMetadataRequestTopic()
		mt.TopicID = tb.srv.topics.get("auto-made").meta.ID
		byID.Topics = append(byID.Topics, mt)
		if resp := roundTrip[*kmsg.MetadataResponse](c, byID); resp.Topics[0].ErrorCode != 0 || *resp.Topics[0].Topic != "auto-made" {
			t.Errorf("metadata by topic id: %+v", resp.Topics[0])
		}
	})
	t.Run("disabled", func(t *testing.T) {
		tb := startTestBroker(t, func(c *Config) { c.AutoCreateTopics = false })
		c := tb.dialRaw()
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataFor(12, true, "never-made"))
		if resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("auto.create.topics.enable=false: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
		}
		if tb.srv.topics.get("never-made") != nil {
			t.Error("topic created with auto.create.topics.enable=false")
		}
	})
}

// TestAPIVersionsMatchRegistry: ApiVersions advertises exactly the
// registered handlers, and every advertised version decodes.
func TestAPIVersionsMatchRegistry(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	for _, version := range []int16{0, 3, 4, 5} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = version
		req.ClientSoftwareName, req.ClientSoftwareVersion = "strata-test", "1.0"
		resp := roundTrip[*kmsg.ApiVersionsResponse](c, req)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(apis) {
			t.Fatalf("v%d: error %v, %d keys, want %d", version, kerr.ErrorForCode(resp.ErrorCode), len(resp.ApiKeys), len(apis))
		}
		for _, k := range resp.ApiKeys {
			a, ok := apis[k.ApiKey]
			if !ok || a.minVersion != k.MinVersion || a.maxVersion != k.MaxVersion {
				t.Errorf("v%d: advertised %s %d-%d", version, kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion)
			}
		}
	}
}

// TestDeleteTopicWhileProducing: producers racing a topic deletion get
// errors, never a crash, and a recreated topic starts empty.
func TestDeleteTopicWhileProducing(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("racing", 1, nil)
	batch := buildBatch(t, plainBatch(fixtureRecords(5, 25)...))
	type outcome struct {
		ok, failed int
		err        error
	}
	done := make(chan outcome, 2)
	for w := 0; w < 2; w++ {
		c := tb.dialRaw()
		go func() {
			var o outcome
			req := produceRequest(9, "racing", 0, batch)
			for corr := int32(1); o.failed == 0; corr++ {
				if o.err = c.writeRaw(appendRequestFrame(nil, req, corr)); o.err != nil {
					break
				}
				resp, err := c.readResponse(req, corr, 10*time.Second)
				if err != nil {
					o.err = err
					break
				}
				switch code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code {
				case 0:
					o.ok++
				case kerr.UnknownTopicOrPartition.Code, kerr.KafkaStorageError.Code, kerr.NotLeaderForPartition.Code:
					o.failed++
				default:
					o.err = kerr.ErrorForCode(code)
				}
				if o.err != nil {
					break
				}
			}
			done <- o
		}()
	}
	waitFor(t, 10*time.Second, "some appends", func() bool { return tb.logEnd("racing", 0) >= 50 })
	if resp, err := tb.admin().DeleteTopics(testContext(t), "racing"); err != nil || resp["racing"].Err != nil {
		t.Fatalf("delete: %v %v", err, resp["racing"].Err)
	}
	for w := 0; w < 2; w++ {
		if o := <-done; o.err != nil || o.failed == 0 {
			t.Fatalf("producer %d: %d ok, %d failed, error %v", w, o.ok, o.failed, o.err)
		}
	}
	tb.createTopic("racing", 1, nil)
	if end := tb.logEnd("racing", 0); end != 0 {
		t.Fatalf("recreated topic has log end %d", end)
	}
}
