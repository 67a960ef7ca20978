package broker

// Client telemetry (KIP-714): the client instances this broker knows, what
// each was told (subscription id, push interval, requested metrics), its
// get/push timestamps, and the metrics it pushed, exported on /metrics.
//
//   - The instances live in memory, like Kafka's ClientMetricsManager cache:
//     a client that comes back after a broker restart pushes with an unknown
//     instance, gets UNKNOWN_SUBSCRIPTION_ID and asks again.
//   - Pushed OTLP MetricsData: gauges and sums become series named
//     strata_client_<name> (characters outside [a-zA-Z0-9_:] become _),
//     labelled client_id, client_instance_id and the data point's
//     attributes; monotonic sums are counters. Delta sums (the temporality
//     the broker asks for) are accumulated, cumulative ones and gauges set.
//     Histograms and summaries are ignored.
//   - Bounds: at most maxTelemetryClients instances (an expired one, else the
//     one heard from longest ago, makes room) and maxTelemetrySeriesPerClient
//     series each (further series are dropped); an instance not heard from
//     for three push intervals expires with its series. Expiry runs on each
//     request and scrape: no goroutine.

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

const (
	// telemetryMaxBytes is Kafka's telemetry.max.bytes default: the largest
	// PushTelemetry payload accepted, compressed.
	telemetryMaxBytes = 1 << 20
	// telemetryMaxInflated bounds a payload once decompressed.
	telemetryMaxInflated = 16 << 20
	// maxTelemetryClients bounds the client instances kept.
	maxTelemetryClients = 1024
	// maxTelemetrySeriesPerClient bounds the series one instance exports.
	maxTelemetrySeriesPerClient = 500
	// maxTelemetryLabels bounds the attributes kept per data point, and
	// maxTelemetryLabelValue the length of one value.
	maxTelemetryLabels     = 16
	maxTelemetryLabelValue = 256
	// telemetryExpiryIntervals is how many push intervals of silence expire
	// an instance.
	telemetryExpiryIntervals = 3
)

// telemetryCompressionTypes are the codecs a push may use, in the order
// clients should prefer them (Kafka's: zstd, lz4, gzip, snappy); none is
// always accepted.
var telemetryCompressionTypes = []int8{storage.CodecZstd, storage.CodecLZ4, storage.CodecGzip, storage.CodecSnappy}

// clientTelemetry is the server's telemetry state; the zero value is ready.
type clientTelemetry struct {
	// now is the clock; nil means time.Now.
	now func() time.Time
	mu  struct {
		sync.Mutex
		instances map[[16]byte]*clientInstance
		// subs are the parsed subscriptions of subsVersion.
		subs        []clientMetricsSubscription
		subsVersion int64
		subsParsed  bool
	}
}

// clientInstance is one client instance (one client object of one process).
type clientInstance struct {
	id       [16]byte
	selector map[string]string // the KIP-714 selectors: client_id, …
	sub      clientSubscription
	// subsVersion is the ClientMetricsVersion sub was computed at.
	subsVersion         int64
	lastGet, lastPush   time.Time
	lastSeen            time.Time
	lastError           int16
	terminating         bool
	series              map[string]*clientSeries
	droppedSeries       int
	clientID, idDisplay string
}

// clientSeries is one exported series of an instance.
type clientSeries struct {
	name    string // the Prometheus name
	help    string
	counter bool
	labels  []telemetryLabel // sorted by name
	value   float64
}

type telemetryLabel struct{ name, value string }

func (t *clientTelemetry) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// subscriptionsLocked returns the parsed subscriptions of st, reparsing
// when they changed.
func (t *clientTelemetry) subscriptionsLocked(st cluster.State) []clientMetricsSubscription {
	if !t.mu.subsParsed || t.mu.subsVersion != st.ClientMetricsVersion {
		t.mu.subs, t.mu.subsVersion, t.mu.subsParsed = parsedClientMetrics(st), st.ClientMetricsVersion, true
	}
	return t.mu.subs
}

func (i *clientInstance) expiresAt() time.Time {
	return i.lastSeen.Add(telemetryExpiryIntervals * i.sub.interval())
}

// expireLocked drops the instances not heard from for three intervals.
func (t *clientTelemetry) expireLocked(now time.Time) {
	for id, inst := range t.mu.instances {
		if now.After(inst.expiresAt()) {
			delete(t.mu.instances, id)
		}
	}
}

// makeRoomLocked evicts the instance heard from longest ago when full.
func (t *clientTelemetry) makeRoomLocked() {
	if len(t.mu.instances) < maxTelemetryClients {
		return
	}
	var oldest *clientInstance
	for _, inst := range t.mu.instances {
		if oldest == nil || inst.lastSeen.Before(oldest.lastSeen) {
			oldest = inst
		}
	}
	delete(t.mu.instances, oldest.id)
}

// newInstanceID returns a random, non-zero instance id not in use.
func (t *clientTelemetry) newInstanceIDLocked() [16]byte {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
		if _, used := t.mu.instances[id]; !used && id != ([16]byte{}) {
			return id
		}
	}
}

// instanceIDString renders an instance id as Kafka's Uuid.toString does.
func instanceIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// clientSelector is the KIP-714 selectors of a client on a connection.
func clientSelector(rc *requestContext, id [16]byte) map[string]string {
	host, port, err := net.SplitHostPort(rc.conn.remote)
	if err != nil {
		host = rc.conn.remote
	}
	return map[string]string{
		selectorInstanceID:      instanceIDString(id),
		selectorClientID:        rc.header.clientID,
		selectorSoftwareName:    rc.conn.softwareName,
		selectorSoftwareVersion: rc.conn.softwareVersion,
		selectorSourceAddress:   host,
		selectorSourcePort:      port,
	}
}

// refreshLocked recomputes the instance's subscription when the
// subscriptions changed; it reports whether its id changed.
func (t *clientTelemetry) refreshLocked(inst *clientInstance, st cluster.State) bool {
	if inst.subsVersion == st.ClientMetricsVersion && inst.sub.id != 0 {
		return false
	}
	old := inst.sub.id
	inst.sub = subscriptionFor(t.subscriptionsLocked(st), inst.selector)
	inst.subsVersion = st.ClientMetricsVersion
	return inst.sub.id != old
}

// getResult is what GetTelemetrySubscriptions answers.
type getResult struct {
	code int16
	id   [16]byte
	sub  clientSubscription
}

// get handles a GetTelemetrySubscriptions from a client.
func (t *clientTelemetry) get(rc *requestContext, id [16]byte, st cluster.State) getResult {
	now := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.instances == nil {
		t.mu.instances = map[[16]byte]*clientInstance{}
	}
	t.expireLocked(now)
	if id == ([16]byte{}) {
		id = t.newInstanceIDLocked()
	}
	inst, known := t.mu.instances[id]
	if !known {
		t.makeRoomLocked()
		inst = &clientInstance{id: id, selector: clientSelector(rc, id), clientID: rc.header.clientID, idDisplay: instanceIDString(id)}
		t.mu.instances[id] = inst
	}
	changed := t.refreshLocked(inst, st)
	inst.lastSeen = now
	// Asking again within the push interval is throttled unless the
	// subscription changed or the last push told the client to ask.
	if known && !changed && !inst.lastGet.IsZero() && now.Sub(inst.lastGet) < inst.sub.interval() &&
		inst.lastError != errUnknownSubscription && inst.lastError != errUnsupportedCompression {
		inst.lastError = errThrottled
		return getResult{code: errThrottled, id: id, sub: inst.sub}
	}
	inst.lastGet, inst.lastError = now, 0
	return getResult{id: id, sub: inst.sub}
}

// Error codes of the telemetry APIs.
var (
	errInvalidRequest         = kerr.InvalidRequest.Code
	errUnsupportedCompression = kerr.UnsupportedCompressionType.Code
	errInvalidRecord          = kerr.InvalidRecord.Code
	errThrottled              = kerr.ThrottlingQuotaExceeded.Code
	errUnknownSubscription    = kerr.UnknownSubscriptionID.Code
	errTelemetryTooLarge      = kerr.TelemetryTooLarge.Code
)

// pushRequest is the part of a PushTelemetry the checks need.
type pushRequest struct {
	id             [16]byte
	subscriptionID int32
	terminating    bool
	compression    int8
	metrics        []byte
}

// push handles a PushTelemetry: checks it against the instance, then
// decodes and records its metrics. It returns the error code and a reason.
func (t *clientTelemetry) push(req pushRequest, st cluster.State) (int16, string) {
	if req.id == ([16]byte{}) {
		return errInvalidRequest, "a push needs the client instance id GetTelemetrySubscriptions assigned"
	}
	now := t.clock()
	t.mu.Lock()
	t.expireLocked(now)
	inst, ok := t.mu.instances[req.id]
	code, msg := int16(0), ""
	switch {
	case !ok:
		code, msg = errUnknownSubscription, "unknown client instance (get the subscriptions again)"
	case inst.terminating:
		code, msg = errInvalidRequest, "the client instance already sent its terminating push"
	default:
		t.refreshLocked(inst, st)
		inst.lastSeen = now
		switch {
		case req.subscriptionID != inst.sub.id:
			code, msg = errUnknownSubscription, "the subscription changed (get the subscriptions again)"
		case req.compression != storage.CodecNone && !slices.Contains(telemetryCompressionTypes, req.compression):
			code, msg = errUnsupportedCompression, fmt.Sprintf("compression type %d is not accepted", req.compression)
		case !req.terminating && !inst.lastPush.IsZero() && !inst.lastGet.After(inst.lastPush) && now.Sub(inst.lastPush) < inst.sub.interval():
			code, msg = errThrottled, "pushed before the push interval elapsed"
		case len(req.metrics) > telemetryMaxBytes:
			code, msg = errTelemetryTooLarge, fmt.Sprintf("%d bytes of metrics, at most %d", len(req.metrics), telemetryMaxBytes)
		}
		inst.lastError = code
		if code == 0 {
			inst.lastPush, inst.terminating = now, req.terminating
		}
	}
	var sub clientSubscription
	if code == 0 {
		sub = inst.sub
	}
	t.mu.Unlock()
	if code != 0 || len(req.metrics) == 0 || len(sub.metrics) == 0 {
		return code, msg
	}
	points, err := decodeTelemetry(req.compression, req.metrics, sub)
	if err != nil {
		return errInvalidRecord, err.Error()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.mu.instances[req.id]; ok && cur == inst {
		inst.record(points)
	}
	return 0, ""
}

// telemetryPoint is one decoded data point.
type telemetryPoint struct {
	series clientSeries
	delta  bool
}

var errTelemetryPayload = errors.New("broker: telemetry payload")

// decodeTelemetry decompresses and decodes an OTLP MetricsData payload into
// the data points of the requested metrics.
func decodeTelemetry(codec int8, payload []byte, sub clientSubscription) ([]telemetryPoint, error) {
	raw, err := storage.Decompress(codec, payload, telemetryMaxInflated)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errTelemetryPayload, err)
	}
	var data metricspb.MetricsData
	if err := proto.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("%w: not OTLP MetricsData: %v", errTelemetryPayload, err)
	}
	var out []telemetryPoint
	for _, rm := range data.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if !sub.requested(m.GetName()) {
					continue
				}
				name := prometheusMetricName(m.GetName())
				help := m.GetDescription()
				if help == "" {
					help = "Client metric " + m.GetName() + " pushed by KIP-714 telemetry."
				}
				var (
					dps            []*metricspb.NumberDataPoint
					counter, delta bool
				)
				switch d := m.GetData().(type) {
				case *metricspb.Metric_Gauge:
					dps = d.Gauge.GetDataPoints()
				case *metricspb.Metric_Sum:
					dps = d.Sum.GetDataPoints()
					counter = d.Sum.GetIsMonotonic()
					delta = d.Sum.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
				default:
					continue
				}
				for _, dp := range dps {
					var v float64
					switch dp.GetValue().(type) {
					case *metricspb.NumberDataPoint_AsDouble:
						v = dp.GetAsDouble()
					case *metricspb.NumberDataPoint_AsInt:
						v = float64(dp.GetAsInt())
					default:
						continue
					}
					if math.IsNaN(v) {
						continue
					}
					out = append(out, telemetryPoint{
						series: clientSeries{name: name, help: help, counter: counter, labels: telemetryLabels(dp.GetAttributes()), value: v},
						delta:  delta,
					})
				}
			}
		}
	}
	return out, nil
}

// record merges decoded points into the instance's series.
func (i *clientInstance) record(points []telemetryPoint) {
	if i.series == nil {
		i.series = map[string]*clientSeries{}
	}
	for _, p := range points {
		key := seriesKey(p.series)
		s, ok := i.series[key]
		if !ok {
			if len(i.series) >= maxTelemetrySeriesPerClient {
				i.droppedSeries++
				continue
			}
			cp := p.series
			if p.delta {
				cp.value = 0
			}
			s = &cp
			i.series[key] = s
		}
		if p.delta {
			s.value += p.series.value
		} else {
			s.value = p.series.value
		}
	}
}

func seriesKey(s clientSeries) string {
	var b strings.Builder
	b.WriteString(s.name)
	for _, l := range s.labels {
		b.WriteByte(0)
		b.WriteString(l.name)
		b.WriteByte(1)
		b.WriteString(l.value)
	}
	return b.String()
}

// prometheusMetricName is strata_client_ and the OTLP name with every
// character outside Prometheus' [a-zA-Z0-9_:] replaced by _.
func prometheusMetricName(otlp string) string {
	return "strata_client_" + sanitizePrometheus(otlp, true)
}

func sanitizePrometheus(s string, colon bool) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || colon && c == ':'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// telemetryLabels turns data point attributes into label pairs with valid
// Prometheus names, sorted, the first of colliding names kept; the
// client_id and client_instance_id labels are the broker's.
func telemetryLabels(attrs []*commonpb.KeyValue) []telemetryLabel {
	var out []telemetryLabel
	seen := map[string]bool{telemetryLabelClientID: true, telemetryLabelInstanceID: true}
	for _, kv := range attrs {
		if len(out) == maxTelemetryLabels {
			break
		}
		name := sanitizePrometheus(kv.GetKey(), false)
		switch {
		case name == "":
			continue
		case name[0] >= '0' && name[0] <= '9':
			name = "_" + name
		case strings.HasPrefix(name, "__"):
			name = "attr" + name
		}
		v := attributeString(kv.GetValue())
		// An empty label is an absent one in Prometheus: keeping it would
		// let {a=""} and {} be two series that gather as duplicates.
		if seen[name] || v == "" {
			continue
		}
		seen[name] = true
		if len(v) > maxTelemetryLabelValue {
			v = v[:maxTelemetryLabelValue]
		}
		out = append(out, telemetryLabel{name: name, value: v})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

func attributeString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	default:
		return ""
	}
}

const (
	telemetryLabelClientID   = "client_id"
	telemetryLabelInstanceID = "client_instance_id"
)

// Describe implements prometheus.Collector: the series are not known in
// advance, so the collector is unchecked.
func (t *clientTelemetry) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: every live instance's series,
// one family per name with the union of its label names (absent labels
// empty); a name pushed as a counter by one client and a gauge by another
// keeps the type of the first instance in id order.
func (t *clientTelemetry) Collect(ch chan<- prometheus.Metric) {
	type member struct {
		inst *clientInstance
		s    clientSeries
	}
	type family struct {
		help    string
		counter bool
		labels  map[string]bool
		members []member
	}
	t.mu.Lock()
	t.expireLocked(t.clock())
	ids := make([][16]byte, 0, len(t.mu.instances))
	for id := range t.mu.instances {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b [16]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
	families := map[string]*family{}
	for _, id := range ids {
		inst := t.mu.instances[id]
		for _, s := range inst.series {
			f, ok := families[s.name]
			if !ok {
				f = &family{help: s.help, counter: s.counter, labels: map[string]bool{}}
				families[s.name] = f
			}
			if f.counter != s.counter {
				continue
			}
			for _, l := range s.labels {
				f.labels[l.name] = true
			}
			f.members = append(f.members, member{inst: inst, s: *s})
		}
	}
	t.mu.Unlock()
	for name, f := range families {
		names := append([]string{telemetryLabelClientID, telemetryLabelInstanceID}, slices.Sorted(maps.Keys(f.labels))...)
		desc := prometheus.NewDesc(name, f.help, names, nil)
		typ := prometheus.GaugeValue
		if f.counter {
			typ = prometheus.CounterValue
		}
		for _, m := range f.members {
			values := make([]string, len(names))
			values[0], values[1] = m.inst.clientID, m.inst.idDisplay
			for _, l := range m.s.labels {
				values[slices.Index(names, l.name)] = l.value
			}
			if metric, err := prometheus.NewConstMetric(desc, typ, m.s.value, values...); err == nil {
				ch <- metric
			}
		}
	}
}
