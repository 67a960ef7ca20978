package main

// The pure parts of `strata perf`: producer latency statistics, the output
// lines of kafka-producer-perf-test and kafka-consumer-perf-test, Java-style
// number formatting, the throughput throttle and --producer-props parsing.
// Nothing here touches the network or the clock; callers pass times in.
//
// Output lines reproduce Kafka's tools byte for byte (MB = 1024*1024):
//
//	producer, every 5 s:
//	  N records sent, X.X records/sec (Y.YY MB/sec), A.A ms avg latency, M.M ms max latency.
//	producer, at the end:
//	  N records sent, X.XXXXXX records/sec (Y.YY MB/sec), A.AA ms avg latency, M.MM ms max latency, P50 ms 50th, P95 ms 95th, P99 ms 99th, P999 ms 99.9th.
//	consumer:
//	  start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
//	  2024-05-01 10:00:00:000, 2024-05-01 10:00:01:500, 9.5367, 6.3578, 100000, 66666.6667, 300, 1200, 7.9473, 83333.3333

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// bytesPerMB is Kafka's MB in its perf tools.
	bytesPerMB = 1024 * 1024
	// maxLatencySamples bounds the latencies kept for percentiles, as
	// kafka-producer-perf-test does (it samples every n-th record).
	maxLatencySamples = 500_000
	// minBatchBytes is the smallest batch.size kgo accepts.
	minBatchBytes = 512
	// producerReportInterval is how often perf produce prints a window.
	producerReportInterval = 5 * time.Second
)

// perfCounts accumulates delivered records over a period.
type perfCounts struct {
	records      int64
	bytes        int64
	latencySumMs int64
	latencyMaxMs int64
}

func (c *perfCounts) add(latencyMs int64, bytes int) {
	c.records++
	c.bytes += int64(bytes)
	c.latencySumMs += latencyMs
	c.latencyMaxMs = max(c.latencyMaxMs, latencyMs)
}

// producerPerfStats keeps the totals, the current reporting window and a
// sample of latencies (every sampling-th delivery) for the percentiles.
// It is not safe for concurrent use; kgo calls produce promises serially.
type producerPerfStats struct {
	start          time.Time
	reportInterval time.Duration
	sampling       int64
	samples        []int64
	deliveries     int64
	total          perfCounts
	window         perfCounts
	windowStart    time.Time
}

func newProducerPerfStats(numRecords int64, start time.Time, reportInterval time.Duration) *producerPerfStats {
	sampling := int64(1)
	if numRecords > maxLatencySamples {
		sampling = numRecords / maxLatencySamples
	}
	return &producerPerfStats{
		start:          start,
		reportInterval: reportInterval,
		sampling:       sampling,
		samples:        make([]int64, 0, min(numRecords/sampling+1, maxLatencySamples+1)),
		windowStart:    start,
	}
}

// record counts one delivered record. When the window is older than the
// report interval it returns the window's line and starts a new window.
func (s *producerPerfStats) record(latencyMs int64, bytes int, now time.Time) (line string, report bool) {
	s.total.add(latencyMs, bytes)
	s.window.add(latencyMs, bytes)
	if s.deliveries%s.sampling == 0 {
		s.samples = append(s.samples, latencyMs)
	}
	s.deliveries++
	if now.Sub(s.windowStart) < s.reportInterval {
		return "", false
	}
	line = producerWindowLine(s.window, now.Sub(s.windowStart).Milliseconds())
	s.window = perfCounts{}
	s.windowStart = now
	return line, true
}

// totalLine is the final summary as of now.
func (s *producerPerfStats) totalLine(now time.Time) string {
	p := latencyPercentiles(s.samples, 0.5, 0.95, 0.99, 0.999)
	return producerTotalLine(s.total, now.Sub(s.start).Milliseconds(), p[0], p[1], p[2], p[3])
}

// producerWindowLine is Kafka's periodic producer line.
func producerWindowLine(c perfCounts, elapsedMs int64) string {
	recsPerSec := 1000.0 * float64(c.records) / float64(elapsedMs)
	mbPerSec := 1000.0 * float64(c.bytes) / float64(elapsedMs) / bytesPerMB
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.",
		c.records,
		javaFixed(recsPerSec, 1),
		javaFixed(mbPerSec, 2),
		javaFixed(float64(c.latencySumMs)/float64(c.records), 1),
		javaFixed(float64(c.latencyMaxMs), 1))
}

// producerTotalLine is Kafka's final producer line.
func producerTotalLine(c perfCounts, elapsedMs, p50, p95, p99, p999 int64) string {
	recsPerSec := 1000.0 * float64(c.records) / float64(elapsedMs)
	mbPerSec := 1000.0 * float64(c.bytes) / float64(elapsedMs) / bytesPerMB
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, "+
		"%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		c.records,
		javaFixed(recsPerSec, 6),
		javaFixed(mbPerSec, 2),
		javaFixed(float64(c.latencySumMs)/float64(c.records), 2),
		javaFixed(float64(c.latencyMaxMs), 2),
		p50, p95, p99, p999)
}

// latencyPercentiles returns, for each p in [0,1), the sample at index
// floor(p*len) of the sorted samples (Kafka's nearest-rank rule); 0 when
// there are no samples. samples is not modified.
func latencyPercentiles(samples []int64, ps ...float64) []int64 {
	out := make([]int64, len(ps))
	if len(samples) == 0 {
		return out
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	for i, p := range ps {
		idx := min(int(p*float64(len(sorted))), len(sorted)-1)
		out[i] = sorted[max(idx, 0)]
	}
	return out
}

// consumerPerfHeader is kafka-consumer-perf-test's header line.
func consumerPerfHeader(detailed bool) string {
	const tail = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	if detailed {
		return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + tail
	}
	return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + tail
}

// consumerPerfTotals is what perf consume measured over the whole run.
type consumerPerfTotals struct {
	start, end  time.Time
	bytes       int64
	messages    int64
	rebalanceMs int64 // time spent joining the group
}

// consumerSummaryLine is kafka-consumer-perf-test's final values line.
func consumerSummaryLine(t consumerPerfTotals) string {
	elapsedMs := t.end.Sub(t.start).Milliseconds()
	elapsedSec := float64(elapsedMs) / 1000.0
	fetchMs := elapsedMs - t.rebalanceMs
	mb := float64(t.bytes) / bytesPerMB
	return fmt.Sprintf("%s, %s, %s, %s, %d, %s, %d, %d, %s, %s",
		formatKafkaTime(t.start),
		formatKafkaTime(t.end),
		javaFixed(mb, 4),
		javaFixed(mb/elapsedSec, 4),
		t.messages,
		javaFixed(float64(t.messages)/elapsedSec, 4),
		t.rebalanceMs,
		fetchMs,
		javaFixed(mb/(float64(fetchMs)/1000.0), 4),
		javaFixed(float64(t.messages)/(float64(fetchMs)/1000.0), 4))
}

// consumerProgress is one --show-detailed-stats interval.
type consumerProgress struct {
	lastReport, now           time.Time
	bytes, lastBytes          int64
	messages, lastMessages    int64
	rebalanceMsInThisInterval int64
}

// consumerProgressLine is kafka-consumer-perf-test's detailed-stats line.
func consumerProgressLine(p consumerProgress) string {
	elapsedMs := float64(p.now.Sub(p.lastReport).Milliseconds())
	totalMB := float64(p.bytes) / bytesPerMB
	intervalMB := float64(p.bytes-p.lastBytes) / bytesPerMB
	intervalMessages := p.messages - p.lastMessages
	fetchMs := p.now.Sub(p.lastReport).Milliseconds() - p.rebalanceMsInThisInterval
	fetchMBPerSec, fetchMsgPerSec := 0.0, 0.0
	if fetchMs > 0 {
		fetchMBPerSec = 1000.0 * intervalMB / float64(fetchMs)
		fetchMsgPerSec = 1000.0 * float64(intervalMessages) / float64(fetchMs)
	}
	return fmt.Sprintf("%s, %d, %s, %s, %d, %s, %d, %d, %s, %s",
		formatKafkaTime(p.now), 0,
		javaFixed(totalMB, 4),
		javaFixed(1000.0*intervalMB/elapsedMs, 4),
		p.messages,
		javaFixed(float64(intervalMessages)/elapsedMs*1000.0, 4),
		p.rebalanceMsInThisInterval,
		fetchMs,
		javaFixed(fetchMBPerSec, 4),
		javaFixed(fetchMsgPerSec, 4))
}

// formatKafkaTime formats t in local time like Kafka's default perf-test
// date format "yyyy-MM-dd HH:mm:ss:SSS" (note the colon before the
// milliseconds, which Go layouts cannot express).
func formatKafkaTime(t time.Time) string {
	return fmt.Sprintf("%s:%03d", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/int(time.Millisecond))
}

// javaFixed formats v like Java's String.format("%.<prec>f", v): the
// shortest decimal that round-trips v, rounded half-up to prec digits, and
// "NaN", "Infinity", "-Infinity" for the special values (a division by a
// zero elapsed time prints these in Kafka's tools too).
func javaFixed(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	neg := math.Signbit(v)
	digits := strconv.FormatFloat(math.Abs(v), 'f', -1, 64)
	intPart, frac, _ := strings.Cut(digits, ".")
	if len(frac) <= prec {
		frac += strings.Repeat("0", prec-len(frac))
		return signed(neg, joinFixed(intPart, frac))
	}
	roundUp := frac[prec] >= '5'
	all := []byte(intPart + frac[:prec])
	if roundUp {
		i := len(all) - 1
		for ; i >= 0; i-- {
			if all[i] != '9' {
				all[i]++
				break
			}
			all[i] = '0'
		}
		if i < 0 {
			all = append([]byte{'1'}, all...)
		}
	}
	split := len(all) - prec
	return signed(neg, joinFixed(string(all[:split]), string(all[split:])))
}

func joinFixed(intPart, frac string) string {
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

func signed(neg bool, s string) string {
	if neg && strings.Trim(s, "0.") != "" {
		return "-" + s
	}
	return s
}

// throttleDelay paces perf produce like Kafka's --throughput: record number
// sent (0-based) may go out once sent/throughput seconds have elapsed since
// the start. It returns how long to wait before sending it; throughput < 0
// disables the throttle.
func throttleDelay(sent int64, elapsed time.Duration, throughput float64) time.Duration {
	if throughput < 0 || sent == 0 {
		return 0
	}
	due := time.Duration(float64(sent) / throughput * float64(time.Second))
	if due <= elapsed {
		return 0
	}
	return due - elapsed
}

// perfProducerConfig is what --producer-props (and --producer.config)
// asked for, mapped to kgo. Zero values mean "kgo default".
type perfProducerConfig struct {
	brokers         []string // bootstrap.servers
	acks            string   // "all", "1", "0"
	linger          time.Duration
	lingerSet       bool
	batchMaxBytes   int32
	compression     string
	maxInflight     int
	idempotence     *bool
	clientID        string
	requestTimeout  time.Duration
	deliveryTimeout time.Duration
	retries         int
	retriesSet      bool
}

// ignoredProducerProps are accepted for compatibility but have no kgo
// counterpart; each gets a note.
var ignoredProducerProps = map[string]string{
	"buffer.memory":        "kgo bounds buffered records, not bytes",
	"key.serializer":       "records are raw bytes",
	"value.serializer":     "records are raw bytes",
	"send.buffer.bytes":    "kernel defaults are used",
	"receive.buffer.bytes": "kernel defaults are used",
	"max.block.ms":         "produce blocks until buffer space frees up",
	"partitioner.class":    "kgo's sticky key partitioner is used",
}

// parseProducerProps maps Kafka producer properties to a config. Unknown
// or ignored properties produce notes (printed by the caller); invalid
// values and contradictions are errors, as in Kafka.
func parseProducerProps(props map[string]string) (cfg perfProducerConfig, notes []string, err error) {
	cfg.acks = "all"
	for _, key := range sortedKeys(props) {
		value := strings.TrimSpace(props[key])
		bad := func(want string) error {
			return fmt.Errorf("invalid producer property %s=%q: want %s", key, props[key], want)
		}
		switch key {
		case "bootstrap.servers":
			cfg.brokers = seedBrokers(value)
			if len(cfg.brokers) == 0 {
				return cfg, nil, bad("host:port[,host:port...]")
			}
		case "acks":
			a, perr := parseAcks(value)
			if perr != nil {
				return cfg, nil, bad("all, -1, 0 or 1")
			}
			switch a {
			case kgo.AllISRAcks():
				cfg.acks = "all"
			case kgo.LeaderAck():
				cfg.acks = "1"
			default:
				cfg.acks = "0"
			}
		case "linger.ms":
			ms, perr := strconv.ParseInt(value, 10, 64)
			if perr != nil || ms < 0 {
				return cfg, nil, bad("milliseconds >= 0")
			}
			cfg.linger, cfg.lingerSet = time.Duration(ms)*time.Millisecond, true
		case "batch.size":
			n, perr := strconv.ParseInt(value, 10, 32)
			if perr != nil || n < 0 {
				return cfg, nil, bad("bytes >= 0")
			}
			if n < minBatchBytes {
				// Kafka's batch.size=0 disables batching; kgo's
				// smallest batch limit is 512 bytes.
				notes = append(notes, fmt.Sprintf("note: batch.size=%d raised to kgo's minimum of %d", n, minBatchBytes))
				n = minBatchBytes
			}
			cfg.batchMaxBytes = int32(n)
		case "compression.type":
			if _, perr := parseCompression(value); perr != nil {
				return cfg, nil, bad("none, gzip, snappy, lz4 or zstd")
			}
			cfg.compression = strings.ToLower(value)
		case "max.in.flight.requests.per.connection":
			n, perr := strconv.Atoi(value)
			if perr != nil || n < 1 {
				return cfg, nil, bad("a count >= 1")
			}
			cfg.maxInflight = n
		case "enable.idempotence":
			b, perr := strconv.ParseBool(value)
			if perr != nil {
				return cfg, nil, bad("true or false")
			}
			cfg.idempotence = &b
		case "client.id":
			cfg.clientID = value
		case "request.timeout.ms", "delivery.timeout.ms":
			ms, perr := strconv.ParseInt(value, 10, 64)
			if perr != nil || ms <= 0 {
				return cfg, nil, bad("milliseconds > 0")
			}
			if key == "request.timeout.ms" {
				cfg.requestTimeout = time.Duration(ms) * time.Millisecond
			} else {
				cfg.deliveryTimeout = time.Duration(ms) * time.Millisecond
			}
		case "retries":
			n, perr := strconv.Atoi(value)
			if perr != nil || n < 0 {
				return cfg, nil, bad("a count >= 0")
			}
			cfg.retries, cfg.retriesSet = n, true
		case "transactional.id":
			return cfg, nil, fmt.Errorf("producer property %s: transactions are not supported by perf produce", key)
		default:
			if why, ok := ignoredProducerProps[key]; ok {
				notes = append(notes, fmt.Sprintf("note: ignoring producer property %s (%s)", key, why))
			} else {
				notes = append(notes, fmt.Sprintf("note: ignoring unsupported producer property %s", key))
			}
		}
	}
	idempotent := cfg.idempotence == nil || *cfg.idempotence
	if cfg.idempotence != nil && *cfg.idempotence {
		if cfg.acks != "all" {
			return cfg, nil, fmt.Errorf("enable.idempotence=true requires acks=all (got acks=%s)", cfg.acks)
		}
		if cfg.maxInflight > 5 {
			return cfg, nil, fmt.Errorf("enable.idempotence=true requires max.in.flight.requests.per.connection <= 5 (got %d)", cfg.maxInflight)
		}
	}
	if cfg.idempotence == nil && (cfg.acks != "all" || cfg.maxInflight > 5) {
		// Kafka turns idempotence off implicitly in these cases.
		idempotent = false
	}
	if !idempotent {
		f := false
		cfg.idempotence = &f
	} else {
		t := true
		cfg.idempotence = &t
		if cfg.maxInflight > 0 {
			notes = append(notes, "note: max.in.flight.requests.per.connection applies only with enable.idempotence=false; "+
				"idempotent producing keeps up to 5 requests in flight")
		}
	}
	return cfg, notes, nil
}

// kgoOpts turns the config into client options.
func (c perfProducerConfig) kgoOpts() []kgo.Opt {
	var opts []kgo.Opt
	acks, _ := parseAcks(c.acks)
	opts = append(opts, kgo.RequiredAcks(acks))
	if c.idempotence != nil && !*c.idempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
		if c.maxInflight > 0 {
			opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(c.maxInflight))
		}
	}
	if c.lingerSet {
		opts = append(opts, kgo.ProducerLinger(c.linger))
	}
	if c.batchMaxBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(c.batchMaxBytes))
	}
	// Kafka's producer default is compression.type=none (franz-go's is
	// snappy): keep Kafka's so figures compare with kafka-producer-perf-test.
	codec := kgo.NoCompression()
	if c.compression != "" {
		codec, _ = parseCompression(c.compression)
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if c.clientID != "" {
		opts = append(opts, kgo.ClientID(c.clientID))
	}
	if c.requestTimeout > 0 {
		opts = append(opts, kgo.ProduceRequestTimeout(c.requestTimeout))
	}
	if c.deliveryTimeout > 0 {
		opts = append(opts, kgo.RecordDeliveryTimeout(c.deliveryTimeout))
	}
	if c.retriesSet {
		opts = append(opts, kgo.RecordRetries(c.retries))
	}
	return opts
}

// parsePropertiesFile reads a Java .properties-style file (key=value or
// key: value lines, '#' and '!' comments). Continuation lines and escapes
// are not supported.
func parsePropertiesFile(content string) (map[string]string, error) {
	props := make(map[string]string)
	for i, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		sep := strings.IndexAny(line, "=:")
		if sep <= 0 {
			return nil, fmt.Errorf("line %d: want key=value, got %q", i+1, line)
		}
		props[strings.TrimSpace(line[:sep])] = strings.TrimSpace(line[sep+1:])
	}
	return props, nil
}
