package main

// The pure parts of `strata perf omb`: the OpenMessaging Benchmark workload
// file, the rate split among producers, payloads and keys, the latency
// recorder (HDR histograms), OMB's log lines, its TestResult JSON and the
// .hgrm percentile files. Nothing here touches the network; callers pass
// times and values in.
//
// Lines follow OMB's WorkloadGenerator (MB = 1024*1024, latencies recorded
// in microseconds):
//
//	every period (10 s, shorter at the end of a phase):
//	  Pub rate 2000.1 msg/s / 2.0 MB/s | Pub err 0.0 err/s | Cons rate 1999.8 msg/s / 2.0 MB/s | Backlog: 0.0 K |
//	  Pub Latency (ms) avg: 2.1 - 50%: 1.9 - 99%: 4.7 - 99.9%: 8.0 - Max: 12.3 |
//	  Pub Delay Latency (us) avg: 51.2 - 50%: 48 - 99%: 120 - 99.9%: 300 - Max: 900   (one line)
//	at the end of the test phase:
//	  ----- Aggregated Pub Latency (ms) avg: ... - 50%: ... - 95%: ... - 99%: ... - 99.9%: ... - 99.99%: ... - Max: ...
//	  ----- Aggregated E2E Latency (ms) avg: ... (same percentiles)

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/goccy/go-yaml"
)

const (
	// ombStatsInterval is how often OMB prints a period line.
	ombStatsInterval = 10 * time.Second
	// ombMaxLatencyMicros is the largest latency the histograms hold
	// (OMB's: 60 s); larger values are recorded as this.
	ombMaxLatencyMicros = int64(60 * time.Second / time.Microsecond)
	// ombHistogramDigits is the histograms' precision: 3 significant
	// digits (0.1 %) keeps each histogram small; OMB uses 5.
	ombHistogramDigits = 3
	// ombUniqueKeys and ombKeyBytes shape OMB's key distributors: a fixed
	// set of random keys, picked round robin or at random.
	ombUniqueKeys = 10_000
	ombKeyBytes   = 7
	// ombDriver names this tool in the result's driver field.
	ombDriver = "strata-perf"
)

// Key distributors of OMB's keyDistributor field.
const (
	ombNoKey          = "NO_KEY"
	ombKeyRoundRobin  = "KEY_ROUND_ROBIN"
	ombKeyRandomNano  = "RANDOM_NANO"
	bytesPerGB        = 1024 * 1024 * 1024
	ombDefaultWarmupM = 1
)

// ombWorkload is an OMB workload file (workloads/*.yaml), with OMB's field
// names. consumerBacklogSizeGB may be fractional here (OMB: whole GB), so
// a test can build a backlog of a few MB.
type ombWorkload struct {
	Name                      string   `yaml:"name"`
	Topics                    int      `yaml:"topics"`
	PartitionsPerTopic        int      `yaml:"partitionsPerTopic"`
	MessageSize               int      `yaml:"messageSize"`
	PayloadFile               string   `yaml:"payloadFile"`
	UseRandomizedPayloads     bool     `yaml:"useRandomizedPayloads"`
	RandomBytesRatio          float64  `yaml:"randomBytesRatio"`
	RandomizedPayloadPoolSize int      `yaml:"randomizedPayloadPoolSize"`
	KeyDistributor            string   `yaml:"keyDistributor"`
	SubscriptionsPerTopic     int      `yaml:"subscriptionsPerTopic"`
	ConsumerPerSubscription   int      `yaml:"consumerPerSubscription"`
	ProducersPerTopic         int      `yaml:"producersPerTopic"`
	ProducerRate              float64  `yaml:"producerRate"`
	ConsumerBacklogSizeGB     float64  `yaml:"consumerBacklogSizeGB"`
	TestDurationMinutes       float64  `yaml:"testDurationMinutes"`
	WarmupDurationMinutes     *float64 `yaml:"warmupDurationMinutes"`
}

// parseOMBWorkload decodes a workload file, applies OMB's defaults
// (keyDistributor NO_KEY, warmupDurationMinutes 1) and checks it. An
// unknown field is an error naming it.
func parseOMBWorkload(data []byte) (ombWorkload, error) {
	var w ombWorkload
	if err := yaml.UnmarshalWithOptions(data, &w, yaml.DisallowUnknownField()); err != nil {
		return w, errors.New(strings.ReplaceAll(yaml.FormatError(err, false, false), "\n", " "))
	}
	if w.KeyDistributor == "" {
		w.KeyDistributor = ombNoKey
	}
	if w.WarmupDurationMinutes == nil {
		warmup := float64(ombDefaultWarmupM)
		w.WarmupDurationMinutes = &warmup
	}
	return w, w.validate()
}

func (w ombWorkload) validate() error {
	switch {
	case w.Topics <= 0:
		return errors.New("topics must be at least 1")
	case w.PartitionsPerTopic <= 0:
		return errors.New("partitionsPerTopic must be at least 1")
	case w.MessageSize <= 0 && w.PayloadFile == "":
		return errors.New("messageSize must be at least 1 (or give a payloadFile)")
	case w.ProducersPerTopic <= 0:
		return errors.New("producersPerTopic must be at least 1")
	case w.SubscriptionsPerTopic < 0 || w.ConsumerPerSubscription < 0:
		return errors.New("subscriptionsPerTopic and consumerPerSubscription must not be negative")
	case w.SubscriptionsPerTopic > 0 && w.ConsumerPerSubscription == 0:
		return errors.New("consumerPerSubscription must be at least 1 when there are subscriptions")
	case w.ProducerRate < 0:
		return errors.New("producerRate must not be negative (0 means no limit)")
	case w.ConsumerBacklogSizeGB < 0:
		return errors.New("consumerBacklogSizeGB must not be negative")
	case w.ConsumerBacklogSizeGB > 0 && w.SubscriptionsPerTopic == 0:
		return errors.New("consumerBacklogSizeGB needs at least one subscription to drain the backlog")
	case w.TestDurationMinutes < 0 || *w.WarmupDurationMinutes < 0:
		return errors.New("testDurationMinutes and warmupDurationMinutes must not be negative")
	case w.UseRandomizedPayloads && (w.RandomBytesRatio < 0 || w.RandomBytesRatio > 1):
		return errors.New("randomBytesRatio must be between 0 and 1")
	}
	switch w.KeyDistributor {
	case ombNoKey, ombKeyRoundRobin, ombKeyRandomNano:
	default:
		return fmt.Errorf("keyDistributor %q: want NO_KEY, KEY_ROUND_ROBIN or RANDOM_NANO", w.KeyDistributor)
	}
	return nil
}

// minutes turns a workload's minutes into a duration.
func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }

// backlogTargetBytes is the backlog, in bytes, backlog mode builds.
func (w ombWorkload) backlogTargetBytes() int64 {
	return int64(w.ConsumerBacklogSizeGB * bytesPerGB)
}

// splitProducerRate shares the workload's total rate (messages/s) among n
// producers; 0 (no limit) stays 0 for each.
func splitProducerRate(total float64, n int) []float64 {
	rates := make([]float64, n)
	for i := range rates {
		rates[i] = total / float64(n)
	}
	return rates
}

// ombPayloads builds the payloads producers send: the payload file's
// content, a pool of randomizedPayloadPoolSize payloads whose first
// randomBytesRatio of bytes are random (the rest zeros), or one random
// (incompressible) payload of messageSize.
func ombPayloads(w ombWorkload, fileContent []byte, rng *rand.Rand) [][]byte {
	if w.PayloadFile != "" {
		return [][]byte{fileContent}
	}
	if w.UseRandomizedPayloads {
		pool := make([][]byte, max(w.RandomizedPayloadPoolSize, 1))
		randomBytes := int(float64(w.MessageSize) * w.RandomBytesRatio)
		for i := range pool {
			pool[i] = make([]byte, w.MessageSize)
			fillRandomBytes(pool[i][:randomBytes], rng)
		}
		return pool
	}
	payload := make([]byte, w.MessageSize)
	fillRandomBytes(payload, rng)
	return [][]byte{payload}
}

func fillRandomBytes(b []byte, rng *rand.Rand) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// ombKeys hands out record keys per keyDistributor: none, a fixed set of
// random keys in turn, or a random one of them.
type ombKeys struct {
	distributor string
	keys        [][]byte
	next        int
	rng         *rand.Rand
}

func newOMBKeys(distributor string, rng *rand.Rand) *ombKeys {
	k := &ombKeys{distributor: distributor, rng: rng}
	if distributor == ombNoKey {
		return k
	}
	k.keys = make([][]byte, ombUniqueKeys)
	for i := range k.keys {
		k.keys[i] = make([]byte, ombKeyBytes)
		fillRandomLetters(k.keys[i], rng)
	}
	return k
}

func (k *ombKeys) key() []byte {
	switch k.distributor {
	case ombKeyRoundRobin:
		key := k.keys[k.next]
		k.next = (k.next + 1) % len(k.keys)
		return key
	case ombKeyRandomNano:
		return k.keys[k.rng.IntN(len(k.keys))]
	}
	return nil
}

// newLatencyHistogram holds latencies in microseconds.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, ombMaxLatencyMicros, ombHistogramDigits)
}

func recordMicros(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(d.Microseconds(), 1), ombMaxLatencyMicros))
}

// ombCounts are the messages and bytes of a period or a phase.
type ombCounts struct {
	sent, sentBytes, errors, received, receivedBytes int64
}

// ombLatencies are the histograms of a period or a phase.
type ombLatencies struct {
	publish, publishDelay, endToEnd *hdrhistogram.Histogram
}

func newOMBLatencies() ombLatencies {
	return ombLatencies{newLatencyHistogram(), newLatencyHistogram(), newLatencyHistogram()}
}

// ombRecorder accumulates one run's statistics: the current period, the
// current phase (warmup, then test; reset between them) and the totals of
// the whole run, which the backlog is computed from. It is not safe for
// concurrent use; the runner guards it with a mutex.
type ombRecorder struct {
	period, phase           ombCounts
	periodLat, phaseLat     ombLatencies
	totalSent, totalRecv    int64
	periodStart, phaseStart time.Time
	// drainTarget, when > 0, is the totalRecv that ends a backlog drain;
	// drainedAt is when a consumer reached it.
	drainTarget int64
	drainedAt   time.Time
}

func newOMBRecorder(now time.Time) *ombRecorder {
	return &ombRecorder{
		periodLat: newOMBLatencies(), phaseLat: newOMBLatencies(),
		periodStart: now, phaseStart: now,
	}
}

// published counts one acknowledged message.
func (r *ombRecorder) published(bytes int, latency, delay time.Duration) {
	r.period.sent++
	r.period.sentBytes += int64(bytes)
	r.phase.sent++
	r.phase.sentBytes += int64(bytes)
	r.totalSent++
	recordMicros(r.periodLat.publish, latency)
	recordMicros(r.phaseLat.publish, latency)
	recordMicros(r.periodLat.publishDelay, delay)
	recordMicros(r.phaseLat.publishDelay, delay)
}

// publishFailed counts one message the broker did not take.
func (r *ombRecorder) publishFailed() {
	r.period.errors++
	r.phase.errors++
}

// received counts one message consumed at now and its end-to-end latency.
func (r *ombRecorder) received(bytes int, endToEnd time.Duration, now time.Time) {
	r.period.received++
	r.period.receivedBytes += int64(bytes)
	r.phase.received++
	r.phase.receivedBytes += int64(bytes)
	r.totalRecv++
	if r.drainTarget > 0 && r.totalRecv >= r.drainTarget && r.drainedAt.IsZero() {
		r.drainedAt = now
	}
	recordMicros(r.periodLat.endToEnd, endToEnd)
	recordMicros(r.phaseLat.endToEnd, endToEnd)
}

// watchDrain starts timing a drain: it ends when every message sent so
// far has been received by every subscription.
func (r *ombRecorder) watchDrain(subscriptionsPerTopic int) {
	r.drainTarget = int64(subscriptionsPerTopic) * r.totalSent
	r.drainedAt = time.Time{}
}

// backlog is OMB's: messages every subscription still has to read.
func (r *ombRecorder) backlog(subscriptionsPerTopic int) int64 {
	return max(int64(subscriptionsPerTopic)*r.totalSent-r.totalRecv, 0)
}

// ombPeriod is one period's figures, as printed and as stored in the result.
type ombPeriod struct {
	elapsed        time.Duration
	counts         ombCounts
	backlog        int64
	publish, e2e   ombLatencySummary
	publishDelayUs ombLatencySummary // in microseconds, not milliseconds
}

// endPeriod returns the period ending now and starts the next.
func (r *ombRecorder) endPeriod(now time.Time, subscriptionsPerTopic int) ombPeriod {
	p := ombPeriod{
		elapsed:        now.Sub(r.periodStart),
		counts:         r.period,
		backlog:        r.backlog(subscriptionsPerTopic),
		publish:        summarize(r.periodLat.publish, 1000),
		e2e:            summarize(r.periodLat.endToEnd, 1000),
		publishDelayUs: summarize(r.periodLat.publishDelay, 1),
	}
	r.period = ombCounts{}
	r.periodLat = newOMBLatencies()
	r.periodStart = now
	return p
}

// endPhase returns the phase's figures and length and starts a new phase,
// so the returned histograms are no longer written to.
func (r *ombRecorder) endPhase(now time.Time) (ombCounts, ombLatencies, time.Duration) {
	counts, lat, elapsed := r.phase, r.phaseLat, now.Sub(r.phaseStart)
	r.phase, r.phaseLat, r.phaseStart = ombCounts{}, newOMBLatencies(), now
	return counts, lat, elapsed
}

// resetPhase discards the warmup's figures; the run's totals stay.
func (r *ombRecorder) resetPhase(now time.Time) {
	r.period, r.phase = ombCounts{}, ombCounts{}
	r.periodLat, r.phaseLat = newOMBLatencies(), newOMBLatencies()
	r.periodStart, r.phaseStart = now, now
}

// ombLatencySummary is a histogram's OMB figures, scaled (micros/scale).
type ombLatencySummary struct {
	avg, p50, p75, p95, p99, p999, p9999, p99999, max float64
}

func summarize(h *hdrhistogram.Histogram, scale float64) ombLatencySummary {
	at := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / scale }
	return ombLatencySummary{
		avg: h.Mean() / scale,
		p50: at(50), p75: at(75), p95: at(95), p99: at(99), p999: at(99.9), p9999: at(99.99), p99999: at(99.999),
		max: float64(h.Max()) / scale,
	}
}

// oneDecimal is OMB's "0.0" format.
func oneDecimal(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// perSecond is n per second over d (0 for an empty period).
func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ombPeriodLine is OMB's period line.
func ombPeriodLine(p ombPeriod) string {
	c := p.counts
	return fmt.Sprintf("Pub rate %s msg/s / %s MB/s | Pub err %s err/s | Cons rate %s msg/s / %s MB/s | Backlog: %s K | "+
		"Pub Latency (ms) avg: %s - 50%%: %s - 99%%: %s - 99.9%%: %s - Max: %s | "+
		"Pub Delay Latency (us) avg: %s - 50%%: %d - 99%%: %d - 99.9%%: %d - Max: %d",
		oneDecimal(perSecond(c.sent, p.elapsed)), oneDecimal(perSecond(c.sentBytes, p.elapsed)/bytesPerMB),
		oneDecimal(perSecond(c.errors, p.elapsed)),
		oneDecimal(perSecond(c.received, p.elapsed)), oneDecimal(perSecond(c.receivedBytes, p.elapsed)/bytesPerMB),
		oneDecimal(float64(p.backlog)/1000),
		oneDecimal(p.publish.avg), oneDecimal(p.publish.p50), oneDecimal(p.publish.p99), oneDecimal(p.publish.p999),
		oneDecimal(p.publish.max),
		oneDecimal(p.publishDelayUs.avg), int64(p.publishDelayUs.p50), int64(p.publishDelayUs.p99),
		int64(p.publishDelayUs.p999), int64(p.publishDelayUs.max))
}

// ombAggregatedLine is OMB's end-of-test latency line; what is "Pub" or "E2E".
func ombAggregatedLine(what string, s ombLatencySummary) string {
	return fmt.Sprintf("----- Aggregated %s Latency (ms) avg: %s - 50%%: %s - 95%%: %s - 99%%: %s - 99.9%%: %s - 99.99%%: %s - Max: %s",
		what, oneDecimal(s.avg), oneDecimal(s.p50), oneDecimal(s.p95), oneDecimal(s.p99), oneDecimal(s.p999),
		oneDecimal(s.p9999), oneDecimal(s.max))
}

// ombThroughputLine is the test phase's publish and consume throughput.
func ombThroughputLine(c ombCounts, elapsed time.Duration) string {
	return fmt.Sprintf("----- Aggregated Pub rate %s msg/s / %s MB/s | Cons rate %s msg/s / %s MB/s | Pub err %d | Published %d | Consumed %d",
		oneDecimal(perSecond(c.sent, elapsed)), oneDecimal(perSecond(c.sentBytes, elapsed)/bytesPerMB),
		oneDecimal(perSecond(c.received, elapsed)), oneDecimal(perSecond(c.receivedBytes, elapsed)/bytesPerMB),
		c.errors, c.sent, c.received)
}

// ombDrain is backlog mode's measurement: the backlog at the moment the
// consumers resumed and how long they took to read it.
type ombDrain struct {
	messages int64
	bytes    int64
	elapsed  time.Duration
}

func ombDrainLine(d ombDrain) string {
	return fmt.Sprintf("----- Backlog drained: %d messages (%s MB) in %s s | Drain rate %s msg/s / %s MB/s",
		d.messages, oneDecimal(float64(d.bytes)/bytesPerMB), strconv.FormatFloat(d.elapsed.Seconds(), 'f', 3, 64),
		oneDecimal(perSecond(d.messages, d.elapsed)), oneDecimal(perSecond(d.bytes, d.elapsed)/bytesPerMB))
}

// ombResult is OMB's TestResult JSON. Latencies are milliseconds, publish
// delay microseconds. The backlogDrain* fields are Strata's (OMB logs the
// drain but keeps no figure of it).
type ombResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg      []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct    []float64 `json:"publishLatency50pct"`
	PublishLatency75pct    []float64 `json:"publishLatency75pct"`
	PublishLatency95pct    []float64 `json:"publishLatency95pct"`
	PublishLatency99pct    []float64 `json:"publishLatency99pct"`
	PublishLatency999pct   []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct  []float64 `json:"publishLatency9999pct"`
	PublishLatency99999pct []float64 `json:"publishLatency99999pct"`
	PublishLatencyMax      []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg      []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct    []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct    []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct    []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct    []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct   []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct  []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatency99999pct []int64   `json:"publishDelayLatency99999pct"`
	PublishDelayLatencyMax      []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg      float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct    float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct    float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct    float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct    float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct   float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct  float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatency99999pct float64 `json:"aggregatedPublishLatency99999pct"`
	AggregatedPublishLatencyMax      float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg      float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct    int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct    int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct    int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct    int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct   int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct  int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatency99999pct int64   `json:"aggregatedPublishDelayLatency99999pct"`
	AggregatedPublishDelayLatencyMax      int64   `json:"aggregatedPublishDelayLatencyMax"`

	AggregatedPublishLatencyQuantiles      map[string]float64 `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles map[string]int64   `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg      []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct    []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct    []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct    []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct    []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct   []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct  []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatency99999pct []float64 `json:"endToEndLatency99999pct"`
	EndToEndLatencyMax      []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles map[string]float64 `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg      float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct    float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct    float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct    float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct    float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct   float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct  float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatency99999pct float64 `json:"aggregatedEndToEndLatency99999pct"`
	AggregatedEndToEndLatencyMax      float64 `json:"aggregatedEndToEndLatencyMax"`

	BacklogDrainMessages int64   `json:"backlogDrainMessages,omitempty"`
	BacklogDrainSeconds  float64 `json:"backlogDrainSeconds,omitempty"`
	BacklogDrainRate     float64 `json:"backlogDrainRate,omitempty"`
}

func newOMBResult(w ombWorkload, messageSize int) *ombResult {
	return &ombResult{
		Workload:          w.Name,
		Driver:            ombDriver,
		MessageSize:       int64(messageSize),
		Topics:            w.Topics,
		Partitions:        w.PartitionsPerTopic,
		ProducersPerTopic: w.ProducersPerTopic,
		ConsumersPerTopic: w.SubscriptionsPerTopic * w.ConsumerPerSubscription,
	}
}

// addPeriod appends one test period's figures.
func (res *ombResult) addPeriod(p ombPeriod) {
	c := p.counts
	res.PublishRate = append(res.PublishRate, perSecond(c.sent, p.elapsed))
	res.PublishErrorRate = append(res.PublishErrorRate, perSecond(c.errors, p.elapsed))
	res.ConsumeRate = append(res.ConsumeRate, perSecond(c.received, p.elapsed))
	res.Backlog = append(res.Backlog, p.backlog)

	appendFamily(p.publish, &res.PublishLatencyAvg, [8]*[]float64{&res.PublishLatency50pct, &res.PublishLatency75pct,
		&res.PublishLatency95pct, &res.PublishLatency99pct, &res.PublishLatency999pct, &res.PublishLatency9999pct,
		&res.PublishLatency99999pct, &res.PublishLatencyMax})
	appendFamily(p.publishDelayUs, &res.PublishDelayLatencyAvg, [8]*[]int64{&res.PublishDelayLatency50pct,
		&res.PublishDelayLatency75pct, &res.PublishDelayLatency95pct, &res.PublishDelayLatency99pct,
		&res.PublishDelayLatency999pct, &res.PublishDelayLatency9999pct, &res.PublishDelayLatency99999pct,
		&res.PublishDelayLatencyMax})
	appendFamily(p.e2e, &res.EndToEndLatencyAvg, [8]*[]float64{&res.EndToEndLatency50pct, &res.EndToEndLatency75pct,
		&res.EndToEndLatency95pct, &res.EndToEndLatency99pct, &res.EndToEndLatency999pct, &res.EndToEndLatency9999pct,
		&res.EndToEndLatency99999pct, &res.EndToEndLatencyMax})
}

// setAggregated fills the aggregated figures from the test phase's
// histograms.
func (res *ombResult) setAggregated(lat ombLatencies) {
	setFamily(summarize(lat.publish, 1000), &res.AggregatedPublishLatencyAvg, [8]*float64{
		&res.AggregatedPublishLatency50pct, &res.AggregatedPublishLatency75pct, &res.AggregatedPublishLatency95pct,
		&res.AggregatedPublishLatency99pct, &res.AggregatedPublishLatency999pct, &res.AggregatedPublishLatency9999pct,
		&res.AggregatedPublishLatency99999pct, &res.AggregatedPublishLatencyMax})
	setFamily(summarize(lat.publishDelay, 1), &res.AggregatedPublishDelayLatencyAvg, [8]*int64{
		&res.AggregatedPublishDelayLatency50pct, &res.AggregatedPublishDelayLatency75pct,
		&res.AggregatedPublishDelayLatency95pct, &res.AggregatedPublishDelayLatency99pct,
		&res.AggregatedPublishDelayLatency999pct, &res.AggregatedPublishDelayLatency9999pct,
		&res.AggregatedPublishDelayLatency99999pct, &res.AggregatedPublishDelayLatencyMax})
	setFamily(summarize(lat.endToEnd, 1000), &res.AggregatedEndToEndLatencyAvg, [8]*float64{
		&res.AggregatedEndToEndLatency50pct, &res.AggregatedEndToEndLatency75pct, &res.AggregatedEndToEndLatency95pct,
		&res.AggregatedEndToEndLatency99pct, &res.AggregatedEndToEndLatency999pct, &res.AggregatedEndToEndLatency9999pct,
		&res.AggregatedEndToEndLatency99999pct, &res.AggregatedEndToEndLatencyMax})

	res.AggregatedPublishLatencyQuantiles = latencyQuantiles(lat.publish, 1000)
	res.AggregatedEndToEndLatencyQuantiles = latencyQuantiles(lat.endToEnd, 1000)
	res.AggregatedPublishDelayLatencyQuantiles = map[string]int64{}
	for q, v := range latencyQuantiles(lat.publishDelay, 1) {
		res.AggregatedPublishDelayLatencyQuantiles[q] = int64(v)
	}
}

// percentilesAndMax are a summary's figures after the average, in the
// order of OMB's field families: 50, 75, 95, 99, 99.9, 99.99, 99.999 pct, max.
func (s ombLatencySummary) percentilesAndMax() [8]float64 {
	return [8]float64{s.p50, s.p75, s.p95, s.p99, s.p999, s.p9999, s.p99999, s.max}
}

// appendFamily appends one period's summary to a latency family's lists
// (publish delay holds whole microseconds, hence T).
func appendFamily[T float64 | int64](s ombLatencySummary, avg *[]float64, lists [8]*[]T) {
	*avg = append(*avg, s.avg)
	for i, v := range s.percentilesAndMax() {
		*lists[i] = append(*lists[i], T(v))
	}
}

// setFamily sets a latency family's aggregated fields from s.
func setFamily[T float64 | int64](s ombLatencySummary, avg *float64, fields [8]*T) {
	*avg = s.avg
	for i, v := range s.percentilesAndMax() {
		*fields[i] = T(v)
	}
}

// setDrain records backlog mode's drain.
func (res *ombResult) setDrain(d ombDrain) {
	res.BacklogDrainMessages = d.messages
	res.BacklogDrainSeconds = d.elapsed.Seconds()
	res.BacklogDrainRate = perSecond(d.messages, d.elapsed)
}

// latencyQuantiles is OMB's quantile map: the histogram's percentile
// iteration (100 ticks per half distance), keyed by the percentile as Java
// prints a double ("50.0", "99.9"), values scaled.
func latencyQuantiles(h *hdrhistogram.Histogram, scale float64) map[string]float64 {
	out := map[string]float64{}
	if h.TotalCount() == 0 {
		return out
	}
	for _, b := range h.CumulativeDistributionWithTicks(100) {
		out[javaDouble(b.Quantile)] = float64(b.ValueAt) / scale
	}
	return out
}

// javaDouble formats v as Java's Double.toString does for plain values:
// the shortest digits, with ".0" for whole numbers.
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// writeHgrm writes h (microseconds) in HdrHistogram's percentile
// distribution text format (.hgrm), values in milliseconds, 5 ticks per
// half distance as HistogramLogProcessor prints by default.
func writeHgrm(w io.Writer, h *hdrhistogram.Histogram) error {
	_, err := h.PercentilesPrint(w, 5, 1000)
	return err
}
