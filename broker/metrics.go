package broker

import (
	"net/http"
	"net/http/pprof"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the broker's Prometheus series, on their own registry so
// several in-process brokers (tests) never collide.
type metrics struct {
	registry        *prometheus.Registry
	bytesIn         *prometheus.CounterVec
	recordsIn       *prometheus.CounterVec
	bytesOut        *prometheus.CounterVec
	requestLatency  *prometheus.HistogramVec
	errorsTotal     *prometheus.CounterVec
	openConnections prometheus.Gauge
	// saslAuthentications counts SASL exchanges by mechanism and result.
	saslAuthentications *prometheus.CounterVec
	// authorizationDenied counts ACL denials by API.
	authorizationDenied *prometheus.CounterVec
	// quotaThrottle sums throttle times by quota and the entity's user
	// and client id.
	quotaThrottle *prometheus.CounterVec
	// isrShrinks and isrExpands count the ISR changes of partitions this
	// node leads that the quorum committed (Kafka's IsrShrinksPerSec,
	// IsrExpandsPerSec).
	isrShrinks, isrExpands prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_bytes_in_total", Help: "Record-batch bytes appended by producers, per topic.",
		}, []string{"topic"}),
		recordsIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_records_in_total", Help: "Records appended by producers, per topic.",
		}, []string{"topic"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_bytes_out_total", Help: "Record-batch bytes sent to consumers, per topic.",
		}, []string{"topic"}),
		requestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_request_duration_seconds",
			Help:    "Time from reading a request to having its response ready, per Kafka API (long-poll waits included).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2.5, 14),
		}, []string{"api"}),
		errorsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_errors_total", Help: "Kafka error codes returned to clients, by error name.",
		}, []string{"error"}),
		openConnections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "strata_open_connections", Help: "Open Kafka client connections.",
		}),
		saslAuthentications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_sasl_authentications_total", Help: "SASL authentications by mechanism and result (success, failure).",
		}, []string{"mechanism", "result"}),
		authorizationDenied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_authorization_denied_total", Help: "Requests or parts of requests the ACLs denied, by Kafka API (each connection counts a decision once per ACL version).",
		}, []string{"api"}),
		quotaThrottle: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_quota_throttle_seconds_total", Help: "Throttle time given to clients over a quota, by quota and the user and client id of the quota entity that applied (empty where the entity has no such part).",
		}, []string{"quota", "user", "client_id"}),
		isrShrinks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_isr_shrinks_total", Help: "ISR shrinks committed for partitions this node leads (a follower fell behind replica.lag.time.max.ms).",
		}),
		isrExpands: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_isr_expands_total", Help: "ISR expansions committed for partitions this node leads (a follower caught up).",
		}),
	}
	// Go runtime and process series come from the default registry, which
	// /metrics serves too (adminHandler).
	m.registry.MustRegister(m.bytesIn, m.recordsIn, m.bytesOut, m.requestLatency, m.errorsTotal, m.openConnections, m.saslAuthentications, m.authorizationDenied, m.quotaThrottle, m.isrShrinks, m.isrExpands)
	return m
}

// partitionCollector reports per-partition log gauges at scrape time.
type partitionCollector struct {
	topics                                     *topicManager
	size, startOffset, endOffset, hw, segments *prometheus.Desc
}

func newPartitionCollector(t *topicManager) *partitionCollector {
	labels := []string{"topic", "partition"}
	return &partitionCollector{
		topics:      t,
		size:        prometheus.NewDesc("strata_partition_log_size_bytes", "Bytes of all local segments of the partition.", labels, nil),
		startOffset: prometheus.NewDesc("strata_partition_log_start_offset", "First offset still readable.", labels, nil),
		endOffset:   prometheus.NewDesc("strata_partition_log_end_offset", "Offset the next record will get.", labels, nil),
		hw:          prometheus.NewDesc("strata_partition_high_watermark", "Offset below which records are visible to consumers.", labels, nil),
		segments:    prometheus.NewDesc("strata_partition_segments", "Local segment count.", labels, nil),
	}
}

func (c *partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.size
	ch <- c.startOffset
	ch <- c.endOffset
	ch <- c.hw
	ch <- c.segments
}

func (c *partitionCollector) Collect(ch chan<- prometheus.Metric) {
	c.topics.forEachPartition(func(p *partition) {
		labels := []string{p.topic.name, strconv.Itoa(int(p.index))}
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(p.Log().Size()), labels...)
		ch <- prometheus.MustNewConstMetric(c.startOffset, prometheus.GaugeValue, float64(p.logStartOffset()), labels...)
		ch <- prometheus.MustNewConstMetric(c.endOffset, prometheus.GaugeValue, float64(p.Log().LogEndOffset()), labels...)
		ch <- prometheus.MustNewConstMetric(c.hw, prometheus.GaugeValue, float64(p.HighWatermark()), labels...)
		ch <- prometheus.MustNewConstMetric(c.segments, prometheus.GaugeValue, float64(p.Log().NumSegments()), labels...)
	})
}

// adminHandler serves /metrics, /healthz, /readyz, the /v1/groups lag API, the
// purge of deleted topics from the object store and the web console.
func (s *Server) adminHandler() http.Handler {
	s.metrics.registry.MustRegister(newPartitionCollector(s.topics), &s.telemetry, newHealthCollector(s))
	mux := http.NewServeMux()
	// The broker's own registry, plus the process-wide default one where
	// what runs beside the broker in `strata server` (stream jobs, the
	// connect worker) and the Go runtime register their series.
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{s.metrics.registry, prometheus.DefaultGatherer}, promhttp.HandlerOpts{}))
	s.mountLag(mux)                   // consumer lag: series on /metrics, /v1/groups (lag_http.go)
	s.tiered.mountTieredRoutes(mux)   // DELETE /v1/remote/topics/{topic} (tiered_purge.go)
	s.iceberg.mountIcebergRoutes(mux) // /v1/iceberg/topics status and commit (iceberg.go)
	s.mountIcebergCatalog(mux)        // the read-only Iceberg REST catalog under /iceberg (iceberg_catalog.go)
	s.mountConsole(mux)               // the web console at / and its /api/v1 (console_http.go)
	// Go's profiler, for operators chasing a hot path (loopback by default).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if s.ctx.Err() != nil {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.serveReadyz) // readyz.go
	return mux
}
