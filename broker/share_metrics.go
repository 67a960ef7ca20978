package broker

// Share group lag on /metrics, exported by the node holding each
// share-partition (its data partition's leader), like the consumer
// group series are by the group's coordinator:
//
//	strata_share_group_lag_records{group,topic,partition}   records up to the high watermark neither acknowledged nor archived
//	strata_share_group_start_offset{group,topic,partition}  the share-partition start offset (every record before it is done)
//
// Only share-partitions in use since this node became the leader are
// reported (a share-partition is loaded by its first share fetch or
// acknowledgement).

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

type shareLagCollector struct {
	c                 *shareCoordinator
	lagRecords, start *prometheus.Desc
}

func newShareLagCollector(c *shareCoordinator) *shareLagCollector {
	labels := []string{"group", "topic", "partition"}
	return &shareLagCollector{
		c: c,
		lagRecords: prometheus.NewDesc("strata_share_group_lag_records",
			"Records of the partition up to the high watermark that the share group has neither acknowledged nor archived.", labels, nil),
		start: prometheus.NewDesc("strata_share_group_start_offset",
			"The share group's start offset on the partition: every record before it is acknowledged or archived.", labels, nil),
	}
}

func (sc *shareLagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sc.lagRecords
	ch <- sc.start
}

// shareLagSample is one share-partition's series.
type shareLagSample struct {
	group, topic string
	partition    int32
	start, lag   int64
}

// lagSamples measures the initialized share-partitions held here against
// their high watermarks. It holds mu for CPU only.
func (c *shareCoordinator) lagSamples() []shareLagSample {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]shareLagSample, 0, len(c.mu.partitions))
	for key, held := range c.mu.partitions {
		ts := c.s.topics.getByID(key.topic)
		if ts == nil || !held.Initialized() {
			continue
		}
		p := c.s.topics.partition(ts.name, key.partition)
		if p == nil {
			continue
		}
		out = append(out, shareLagSample{group: key.group, topic: ts.name, partition: key.partition, start: held.Start(), lag: held.Lag(p.HighWatermark())})
	}
	return out
}

func (sc *shareLagCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range sc.c.lagSamples() {
		labels := []string{s.group, s.topic, strconv.Itoa(int(s.partition))}
		ch <- prometheus.MustNewConstMetric(sc.lagRecords, prometheus.GaugeValue, float64(s.lag), labels...)
		ch <- prometheus.MustNewConstMetric(sc.start, prometheus.GaugeValue, float64(s.start), labels...)
	}
}
