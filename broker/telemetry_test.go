package broker

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// alterClientMetrics sends one IncrementalAlterConfigs on a CLIENT_METRICS
// resource (kadm alters only topics and brokers) and returns its code.
func alterClientMetrics(t *testing.T, cl *kgo.Client, name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeClientMetrics, name, ops
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Resources[0].ErrorCode
}

func cmOp(op kmsg.IncrementalAlterConfigOp, name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = op, name, kmsg.StringPtr(value)
	return c
}

// describeClientMetrics returns the configs of a CLIENT_METRICS resource
// as name → value/source, and the resource's error code.
func describeClientMetrics(t *testing.T, cl *kgo.Client, name string) (map[string]string, int16) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	req.Resources = append(req.Resources, r)
	req.IncludeDocumentation = true
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range resp.Resources[0].Configs {
		if c.Documentation == nil || *c.Documentation == "" {
			t.Errorf("%s: no documentation", c.Name)
		}
		out[c.Name] = *c.Value + "/" + c.Source.String()
	}
	return out, resp.Resources[0].ErrorCode
}

// TestClientMetricsConfigs: CLIENT_METRICS subscriptions through
// IncrementalAlterConfigs and DescribeConfigs (kmsg and sarama's
// ClusterAdmin), listed by kadm's ListConfigResources, validated as
// Kafka does, stored in the quorum (they survive a restart), deleted when
// no config is left.
func TestClientMetricsConfigs(t *testing.T) {
	tb := startTestBroker(t)
	cl := tb.client()
	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	if code := alterClientMetrics(t, cl, "producers",
		cmOp(set, "metrics", "org.apache.kafka.producer."),
		cmOp(set, "interval.ms", "60000"),
		cmOp(set, "match", "client_id=app.*")); code != 0 {
		t.Fatalf("create: %v", kerr.ErrorForCode(code))
	}
	if code := alterClientMetrics(t, cl, "producers",
		cmOp(kmsg.IncrementalAlterConfigOpAppend, "metrics", "org.apache.kafka.consumer.,org.apache.kafka.producer."),
		cmOp(kmsg.IncrementalAlterConfigOpAppend, "match", "client_software_name=kgo")); code != 0 {
		t.Fatalf("append: %v", kerr.ErrorForCode(code))
	}
	got, code := describeClientMetrics(t, cl, "producers")
	want := map[string]string{
		"metrics":     "org.apache.kafka.producer.,org.apache.kafka.consumer./CLIENT_METRICS_CONFIG",
		"interval.ms": "60000/CLIENT_METRICS_CONFIG",
		"match":       "client_id=app.*,client_software_name=kgo/CLIENT_METRICS_CONFIG",
	}
	if code != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("describe: %v %v, want %v", kerr.ErrorForCode(code), got, want)
	}
	// Any name describes, with the defaults.
	got, code = describeClientMetrics(t, cl, "nothing")
	if want := map[string]string{"metrics": "/DEFAULT_CONFIG", "interval.ms": "300000/DEFAULT_CONFIG", "match": "/DEFAULT_CONFIG"}; code != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("describe an unknown name: %v %v", kerr.ErrorForCode(code), got)
	}
	if _, code := describeClientMetrics(t, cl, ""); code != kerr.InvalidRequest.Code {
		t.Errorf("describe without a name: %v", kerr.ErrorForCode(code))
	}

	for _, tc := range []struct {
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		want *kerr.Error
	}{
		{cmOp(set, "interval.ms", "50"), kerr.InvalidRequest},
		{cmOp(set, "interval.ms", "ten"), kerr.InvalidRequest},
		{cmOp(set, "match", "client_rack=a"), kerr.InvalidConfig},
		{cmOp(set, "match", "client_id=("), kerr.InvalidConfig},
		{cmOp(set, "match", "client_id"), kerr.InvalidConfig},
		{cmOp(set, "bogus", "1"), kerr.InvalidRequest},
		{cmOp(kmsg.IncrementalAlterConfigOpAppend, "interval.ms", "1"), kerr.InvalidConfig},
	} {
		if code := alterClientMetrics(t, cl, "producers", tc.op); code != tc.want.Code {
			t.Errorf("%s=%s: %v, want %v", tc.op.Name, *tc.op.Value, kerr.ErrorForCode(code), tc.want)
		}
	}
	if code := alterClientMetrics(t, cl, "", cmOp(set, "metrics", "*")); code != kerr.InvalidRequest.Code {
		t.Errorf("alter without a name: %v", kerr.ErrorForCode(code))
	}

	// sarama, an independent encoder, creates and describes one too.
	scfg := saramaConfig()
	sadm, err := sarama.NewClusterAdmin([]string{tb.addr()}, scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sadm.Close()
	cmType := sarama.ConfigResourceType(kmsg.ConfigResourceTypeClientMetrics)
	all := "*"
	if err := sadm.IncrementalAlterConfig(cmType, "everything", map[string]sarama.IncrementalAlterConfigsEntry{
		"metrics": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &all},
	}, false); err != nil {
		t.Fatalf("sarama alter: %v", err)
	}
	entries, err := sadm.DescribeConfig(sarama.ConfigResource{Type: cmType, Name: "everything"})
	if err != nil {
		t.Fatalf("sarama describe: %v", err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		seen[e.Name] = e.Value
	}
	if seen["metrics"] != "*" || seen["interval.ms"] != "300000" {
		t.Errorf("sarama describe: %v", seen)
	}

	adm := kadm.NewClient(cl)
	listed := func() []string {
		t.Helper()
		l, err := adm.ListConfigResources(testContext(t), kadm.ConfigResourceClientMetrics)
		if err != nil || l.Err != nil {
			t.Fatalf("list: %v %v", err, l.Err)
		}
		return l.Names()
	}
	if got := listed(); !slices.Equal(got, []string{"everything", "producers"}) {
		t.Fatalf("listed %v", got)
	}
	tb.restart()
	cl = tb.client()
	adm = kadm.NewClient(cl)
	if got, _ := describeClientMetrics(t, cl, "producers"); got["interval.ms"] != "60000/CLIENT_METRICS_CONFIG" {
		t.Fatalf("after a restart: %v", got)
	}
	if code := alterClientMetrics(t, cl, "everything", cmOp(del, "metrics", "")); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if got := listed(); !slices.Equal(got, []string{"producers"}) {
		t.Fatalf("after deleting the last config: %v", got)
	}
}

// otlpGauge and otlpSum build OTLP metrics with one data point.
func otlpGauge(name string, v float64, attrs map[string]string) *metricspb.Metric {
	return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
		DataPoints: []*metricspb.NumberDataPoint{otlpPoint(v, attrs)},
	}}}
}

func otlpDeltaSum(name string, v float64, attrs map[string]string) *metricspb.Metric {
	return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		IsMonotonic:            true,
		AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
		DataPoints:             []*metricspb.NumberDataPoint{otlpPoint(v, attrs)},
	}}}
}

func otlpPoint(v float64, attrs map[string]string) *metricspb.NumberDataPoint {
	dp := &metricspb.NumberDataPoint{TimeUnixNano: uint64(time.Now().UnixNano()), Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: v}}
	for k, a := range attrs {
		dp.Attributes = append(dp.Attributes, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: a}}})
	}
	return dp
}

func otlpPayload(t *testing.T, metrics ...*metricspb.Metric) []byte {
	t.Helper()
	b, err := proto.Marshal(&metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: metrics}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func zstdCompress(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// scrapeClientMetrics returns the strata_client_* samples of /metrics.
func scrapeClientMetrics(t *testing.T, tb *testBroker) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + tb.srv.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v %s", resp.StatusCode, err, body)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "strata_client_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

type telemetryClient struct {
	t  *testing.T
	cl *kgo.Client
}

func (c telemetryClient) get(id [16]byte) *kmsg.GetTelemetrySubscriptionsResponse {
	c.t.Helper()
	req := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	req.ClientInstanceID = id
	resp, err := req.RequestWith(testContext(c.t), c.cl)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c telemetryClient) push(id [16]byte, sub int32, terminating bool, codec int8, payload []byte) error {
	c.t.Helper()
	req := kmsg.NewPtrPushTelemetryRequest()
	req.ClientInstanceID, req.SubscriptionID, req.Terminating, req.CompressionType, req.Metrics = id, sub, terminating, codec, payload
	resp, err := req.RequestWith(testContext(c.t), c.cl)
	if err != nil {
		c.t.Fatal(err)
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

// TestTelemetry: KIP-714 through franz-go's kmsg. A client matching a
// subscription (by client id and software name) gets a new instance id and
// the subscription; another gets nothing requested. Pushes are checked in
// Kafka's order (too large, bad compression, unknown subscription, too
// early, after terminating, undecodable), the requested metrics of a zstd
// push appear on /metrics with client_id and client_instance_id, deltas
// accumulate, a changed subscription is noticed, an instance's series are
// bounded, and a silent instance's series expire.
func TestTelemetry(t *testing.T) {
	tb := startTestBroker(t)
	admin := tb.client()
	set := kmsg.IncrementalAlterConfigOpSet
	if code := alterClientMetrics(t, admin, "apps",
		cmOp(set, "metrics", "org.apache.kafka.producer."),
		cmOp(set, "interval.ms", "60000"),
		cmOp(set, "match", "client_id=app-.*,client_software_name=kgo")); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	// Capped at Kafka 4.1's versions kgo sends ApiVersions v4 with its
	// software name, as the Java client and librdkafka do (uncapped it
	// sends v5: TestApiVersionsV5).
	kafka41 := kgo.MaxVersions(kversion.V4_1_0())
	app := telemetryClient{t, tb.client(kgo.ClientID("app-1"), kafka41)}
	other := telemetryClient{t, tb.client(kgo.ClientID("billing"))}

	g := app.get([16]byte{})
	id, sub := g.ClientInstanceID, g.SubscriptionID
	if g.ErrorCode != 0 || id == ([16]byte{}) || g.PushIntervalMillis != 60000 || !g.DeltaTemporality ||
		!slices.Equal(g.RequestedMetrics, []string{"org.apache.kafka.producer."}) || g.TelemetryMaxBytes != 1<<20 ||
		!slices.Contains(g.AcceptedCompressionTypes, 4) {
		t.Fatalf("get: %+v", g)
	}
	if o := other.get([16]byte{}); o.ErrorCode != 0 || len(o.RequestedMetrics) != 0 || o.PushIntervalMillis != 300000 || o.ClientInstanceID == id {
		t.Fatalf("get of an unmatched client: %+v", o)
	}

	payload := otlpPayload(t,
		otlpGauge("org.apache.kafka.producer.node.request.latency.avg", 12.5, map[string]string{"node.id": "1"}),
		otlpDeltaSum("org.apache.kafka.producer.record.send.total", 10, nil),
		otlpGauge("org.apache.kafka.consumer.fetch.latency.avg", 3, nil), // not requested
	)
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	check("too large", app.push(id, sub, false, 0, make([]byte, 1<<20+1)), kerr.TelemetryTooLarge)
	check("compression 9", app.push(id, sub, false, 9, payload), kerr.UnsupportedCompressionType)
	check("zero instance", app.push([16]byte{}, sub, false, 0, payload), kerr.InvalidRequest)
	check("unknown instance", app.push([16]byte{1}, sub, false, 0, payload), kerr.UnknownSubscriptionID)
	check("wrong subscription", app.push(id, sub+1, false, 0, payload), kerr.UnknownSubscriptionID)
	// UNKNOWN_SUBSCRIPTION_ID lets the client ask again at once.
	if g := app.get(id); g.ErrorCode != 0 || g.SubscriptionID != sub || g.ClientInstanceID != id {
		t.Fatalf("get after an unknown subscription: %+v", g)
	}
	check("zstd push", app.push(id, sub, false, 4, zstdCompress(t, payload)), nil)
	check("push too early", app.push(id, sub, false, 0, payload), kerr.ThrottlingQuotaExceeded)
	if g := app.get(id); g.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("get within the interval: %+v", g)
	}

	idLabel := instanceIDString(id)
	gauge := `strata_client_org_apache_kafka_producer_node_request_latency_avg{client_id="app-1",client_instance_id="` + idLabel + `",node_id="1"}`
	sum := `strata_client_org_apache_kafka_producer_record_send_total{client_id="app-1",client_instance_id="` + idLabel + `"}`
	samples := scrapeClientMetrics(t, tb)
	if samples[gauge] != 12.5 || samples[sum] != 10 {
		t.Fatalf("/metrics: %v", samples)
	}
	for k := range samples {
		if strings.Contains(k, "consumer") {
			t.Errorf("an unrequested metric is exported: %s", k)
		}
	}
	// The terminating push is not throttled; its delta adds up.
	check("terminating push", app.push(id, sub, true, 0, otlpPayload(t, otlpDeltaSum("org.apache.kafka.producer.record.send.total", 5, nil))), nil)
	if got := scrapeClientMetrics(t, tb)[sum]; got != 15 {
		t.Errorf("delta sum after the terminating push: %v, want 15", got)
	}
	check("push after terminating", app.push(id, sub, true, 0, payload), kerr.InvalidRequest)

	// A second instance: an undecodable payload, then a subscription change.
	app2 := telemetryClient{t, tb.client(kgo.ClientID("app-2"), kafka41)}
	g2 := app2.get([16]byte{})
	check("garbage", app2.push(g2.ClientInstanceID, g2.SubscriptionID, false, 4, []byte("not zstd")), kerr.InvalidRecord)
	if code := alterClientMetrics(t, admin, "apps", cmOp(set, "metrics", "*")); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	check("push after the subscription changed", app2.push(g2.ClientInstanceID, g2.SubscriptionID, false, 0, payload), kerr.UnknownSubscriptionID)
	if g := app2.get(g2.ClientInstanceID); g.ErrorCode != 0 || g.SubscriptionID == g2.SubscriptionID || !slices.Equal(g.RequestedMetrics, []string{""}) {
		t.Fatalf("get after the change: %+v", g)
	}

	// Bounded series: 600 distinct ones keep 500.
	bulk := telemetryClient{t, tb.client(kgo.ClientID("app-bulk"), kafka41)}
	gb := bulk.get([16]byte{})
	// An empty attribute is no label: these two are one series, and
	// /metrics keeps answering.
	many := []*metricspb.Metric{
		otlpGauge("org.apache.kafka.producer.dup", 1, map[string]string{"k": ""}),
		otlpGauge("org.apache.kafka.producer.dup", 2, nil),
	}
	for i := range 600 {
		many = append(many, otlpGauge("org.apache.kafka.producer.g", float64(i), map[string]string{"i": strconv.Itoa(i)}))
	}
	check("bulk push", bulk.push(gb.ClientInstanceID, gb.SubscriptionID, false, 0, otlpPayload(t, many...)), nil)
	n := 0
	for k := range scrapeClientMetrics(t, tb) {
		if strings.Contains(k, instanceIDString(gb.ClientInstanceID)) {
			n++
		}
	}
	if n != maxTelemetrySeriesPerClient {
		t.Errorf("bulk client exports %d series, want %d", n, maxTelemetrySeriesPerClient)
	}

	// A client on a 100 ms interval that stops pushing expires.
	if code := alterClientMetrics(t, admin, "fast", cmOp(set, "metrics", "org."), cmOp(set, "interval.ms", "100"), cmOp(set, "match", "client_id=fast")); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	fast := telemetryClient{t, tb.client(kgo.ClientID("fast"))}
	gf := fast.get([16]byte{})
	if gf.PushIntervalMillis != 100 {
		t.Fatalf("fast get: %+v", gf)
	}
	check("fast push", fast.push(gf.ClientInstanceID, gf.SubscriptionID, false, 0, payload), nil)
	fastGauge := `strata_client_org_apache_kafka_producer_node_request_latency_avg{client_id="fast",client_instance_id="` + instanceIDString(gf.ClientInstanceID) + `",node_id="1"}`
	if _, ok := scrapeClientMetrics(t, tb)[fastGauge]; !ok {
		// Three intervals are 300 ms: a slow machine may already have
		// expired it, so this is not fatal, only the expiry below is.
		t.Logf("fast series not seen before expiry")
	}
	waitUntil(t, 10*time.Second, "the silent client's series to expire", func() bool {
		_, ok := scrapeClientMetrics(t, tb)[fastGauge]
		return !ok
	})
	check("push of an expired instance", fast.push(gf.ClientInstanceID, gf.SubscriptionID, false, 0, payload), kerr.UnknownSubscriptionID)
}

// TestTelemetryAuthorize: with an authorizer, CLIENT_METRICS configs need
// DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster, while the telemetry APIs
// need only an authenticated connection.
func TestTelemetryAuthorize(t *testing.T) {
	tb, _ := startSASLBroker(t, func(c *Config) { mustSet(t, c, "authorizer.class.name", "strata", "super.users", "User:admin") })
	addr := tb.srv.ListenerAddr("SASL_PLAINTEXT")
	admin := saslClient(t, addr, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()))
	carol := saslClient(t, addr, kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism()))
	set := kmsg.IncrementalAlterConfigOpSet
	if _, code := describeClientMetrics(t, carol, "s"); code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("carol describes: %v", kerr.ErrorForCode(code))
	}
	if code := alterClientMetrics(t, carol, "s", cmOp(set, "metrics", "*")); code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("carol alters: %v", kerr.ErrorForCode(code))
	}
	if _, err := kadm.NewClient(carol).ListConfigResources(testContext(t), kadm.ConfigResourceClientMetrics); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol lists: %v", err)
	}
	if code := alterClientMetrics(t, admin, "s", cmOp(set, "metrics", "*")); code != 0 {
		t.Fatalf("admin alters: %v", kerr.ErrorForCode(code))
	}
	res, err := kadm.NewClient(admin).CreateACLs(testContext(t), kadm.NewACLs().Allow("User:carol").AllowHosts("*").Clusters().Operations(kadm.OpDescribeConfigs))
	if err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	if got, code := describeClientMetrics(t, carol, "s"); code != 0 || got["metrics"] != "*/CLIENT_METRICS_CONFIG" {
		t.Fatalf("carol with DESCRIBE_CONFIGS describes: %v %v", kerr.ErrorForCode(code), got)
	}
	c := telemetryClient{t, carol}
	g := c.get([16]byte{})
	if g.ErrorCode != 0 || !slices.Equal(g.RequestedMetrics, []string{""}) {
		t.Fatalf("carol gets her subscription: %+v", g)
	}
	if err := c.push(g.ClientInstanceID, g.SubscriptionID, false, 0, otlpPayload(t, otlpGauge("a.b", 1, nil))); err != nil {
		t.Fatalf("carol pushes: %v", err)
	}
}

// TestSubscriptionFor: the subscriptions matching a client combine into
// the union of their prefixes (* asking for all), the smallest interval,
// and an id that changes with them; every pattern must match the whole
// value of its selector.
func TestSubscriptionFor(t *testing.T) {
	parse := func(name string, configs map[string]string) clientMetricsSubscription {
		t.Helper()
		s, code, msg := parseClientMetrics(name, configs)
		if code != 0 {
			t.Fatalf("%s: %s", name, msg)
		}
		return s
	}
	producers := parse("producers", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "60000", "match": "client_id=app.*,client_software_name=apache-kafka-java"})
	local := parse("local", map[string]string{"metrics": "org.apache.kafka.consumer.", "interval.ms": "30000", "match": "client_source_address=127\\.0\\.0\\.1,client_source_port=5[0-9]+"})
	all := parse("all", map[string]string{"metrics": "*", "match": "client_software_version=3\\..*"})
	subs := []clientMetricsSubscription{producers, local, all}
	sel := func(clientID, software, version, addr, port string) map[string]string {
		return map[string]string{selectorClientID: clientID, selectorSoftwareName: software, selectorSoftwareVersion: version, selectorSourceAddress: addr, selectorSourcePort: port, selectorInstanceID: "x"}
	}
	for _, tc := range []struct {
		name     string
		sel      map[string]string
		metrics  []string
		interval int32
	}{
		{"none", sel("billing", "librdkafka", "2.5.0", "10.0.0.1", "5000"), nil, 300000},
		{"a prefix of the id is not a match", sel("my-app", "apache-kafka-java", "4.0.0", "10.0.0.1", "1"), nil, 300000},
		{"producers", sel("app-1", "apache-kafka-java", "4.0.0", "10.0.0.1", "1"), []string{"org.apache.kafka.producer."}, 60000},
		{"producers and local", sel("app-1", "apache-kafka-java", "4.0.0", "127.0.0.1", "51234"), []string{"org.apache.kafka.consumer.", "org.apache.kafka.producer."}, 30000},
		{"all", sel("app-1", "apache-kafka-java", "3.9.1", "10.0.0.1", "1"), []string{""}, 60000},
	} {
		got := subscriptionFor(subs, tc.sel)
		if !slices.Equal(got.metrics, tc.metrics) || got.intervalMs != tc.interval {
			t.Errorf("%s: %+v, want %v every %d ms", tc.name, got, tc.metrics, tc.interval)
		}
	}
	a := subscriptionFor(subs, sel("app-1", "apache-kafka-java", "4.0.0", "10.0.0.1", "1"))
	b := subscriptionFor(subs[:1], sel("app-1", "apache-kafka-java", "4.0.0", "10.0.0.1", "1"))
	c := subscriptionFor([]clientMetricsSubscription{parse("producers", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000", "match": "client_id=app.*"})}, sel("app-1", "apache-kafka-java", "4.0.0", "10.0.0.1", "1"))
	if a.id != b.id || a.id == c.id {
		t.Errorf("subscription ids: same content %d %d, other interval %d", a.id, b.id, c.id)
	}
}

// FuzzDecodeTelemetry: any payload under any codec decodes or fails with
// an error, and what decodes records without panicking.
func FuzzDecodeTelemetry(f *testing.F) {
	payload := otlpPayload(&testing.T{}, otlpGauge("a.b", 1, map[string]string{"x.y": "z"}), otlpDeltaSum("c", 2, nil))
	f.Add(int8(0), payload)
	f.Add(int8(4), zstdCompress(&testing.T{}, payload))
	f.Add(int8(1), []byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, codec int8, b []byte) {
		points, err := decodeTelemetry(codec, b, clientSubscription{metrics: []string{""}})
		if err != nil {
			return
		}
		inst := &clientInstance{}
		inst.record(points)
		if len(inst.series) > maxTelemetrySeriesPerClient {
			t.Fatalf("%d series", len(inst.series))
		}
	})
}

// TestClientMetricsAcrossNodes: a subscription created through one node of
// a three-node cluster is committed to the quorum, so every node describes
// it and hands it to a matching client.
func TestClientMetricsAcrossNodes(t *testing.T) {
	c := startTestCluster(t, 3)
	cl := c.client(kgo.ClientID("app-1"))
	ctx := testContext(t)
	waitUntil(t, 20*time.Second, "three brokers", func() bool {
		md, err := kadm.NewClient(cl).Metadata(ctx)
		return err == nil && len(md.Brokers) == 3
	})
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "apps"
	r.Configs = append(r.Configs, cmOp(kmsg.IncrementalAlterConfigOpSet, "metrics", "org.apache.kafka."), cmOp(kmsg.IncrementalAlterConfigOpSet, "match", "client_id=app-.*"))
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("create on node 1: %v %+v", err, resp)
	}
	for id := 1; id <= 3; id++ {
		waitUntil(t, 20*time.Second, fmt.Sprintf("node %d to hand out the subscription", id), func() bool {
			g, err := kmsg.NewPtrGetTelemetrySubscriptionsRequest().RequestWith(ctx, cl.Broker(id))
			return err == nil && g.ErrorCode == 0 && slices.Equal(g.RequestedMetrics, []string{"org.apache.kafka."})
		})
	}
}
