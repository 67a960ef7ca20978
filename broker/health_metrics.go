package broker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// The series the alert rules in deploy/prometheus/alerts.yml watch beyond
// traffic and lag, read at scrape time (healthCollector):
//
//   - strata_raft_leader_id, strata_raft_has_leader: the metadata quorum's
//     leader as this node sees it (-1 / 0 when it knows none).
//   - strata_brokers{state}: registered brokers in the applied metadata by
//     state (active, fenced, shutting_down).
//   - strata_partitions_offline: partitions without a leader, cluster-wide
//     (every node reports the same count from its applied metadata; alert
//     on max, not sum).
//   - strata_partitions_leader, strata_partitions_under_replicated:
//     partitions this node leads, and those of them whose ISR is smaller
//     than their replica set (Kafka's UnderReplicatedPartitions: summed
//     over the nodes, each partition counts once).
//   - strata_log_dir_total_bytes, strata_log_dir_free_bytes,
//     strata_log_dir_offline {dir}: each log.dirs directory's file system
//     (free = usable by the broker) and whether the directory went offline.
//   - strata_tls_certificate_expiry_timestamp_seconds{listener}: when the
//     certificate chain in service on each SSL / SASL_SSL Kafka listener
//     expires (rotated files are followed).
//
// ISR changes are counters of metrics (strata_isr_shrinks_total,
// strata_isr_expands_total), counted when the quorum commits them.

// healthCollector reports the cluster-health series above.
type healthCollector struct {
	s                                           *Server
	raftLeader, raftHasLeader, brokers          *prometheus.Desc
	offline, led, underReplicated               *prometheus.Desc
	dirTotal, dirFree, dirOffline, certNotAfter *prometheus.Desc
}

func newHealthCollector(s *Server) *healthCollector {
	return &healthCollector{
		s:             s,
		raftLeader:    prometheus.NewDesc("strata_raft_leader_id", "Node id of the metadata quorum's leader as this node knows it; -1 when it knows none.", nil, nil),
		raftHasLeader: prometheus.NewDesc("strata_raft_has_leader", "1 while this node knows a metadata quorum leader, 0 otherwise.", nil, nil),
		brokers:       prometheus.NewDesc("strata_brokers", "Registered brokers in the applied metadata, by state (active, fenced, shutting_down).", []string{"state"}, nil),
		offline:       prometheus.NewDesc("strata_partitions_offline", "Partitions without a leader in the applied metadata, cluster-wide (the same on every node).", nil, nil),
		led:           prometheus.NewDesc("strata_partitions_leader", "Partitions this node leads.", nil, nil),
		underReplicated: prometheus.NewDesc("strata_partitions_under_replicated",
			"Partitions this node leads whose ISR is smaller than their replica set.", nil, nil),
		dirTotal:   prometheus.NewDesc("strata_log_dir_total_bytes", "Size of the file system holding the log directory.", []string{"dir"}, nil),
		dirFree:    prometheus.NewDesc("strata_log_dir_free_bytes", "Bytes of the log directory's file system available to the broker.", []string{"dir"}, nil),
		dirOffline: prometheus.NewDesc("strata_log_dir_offline", "1 once the log directory went offline after an I/O error (until a restart).", []string{"dir"}, nil),
		certNotAfter: prometheus.NewDesc("strata_tls_certificate_expiry_timestamp_seconds",
			"Unix time at which the certificate chain in service on the TLS listener expires (its earliest NotAfter).", []string{"listener"}, nil),
	}
}

func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.raftLeader, c.raftHasLeader, c.brokers, c.offline, c.led, c.underReplicated, c.dirTotal, c.dirFree, c.dirOffline, c.certNotAfter} {
		ch <- d
	}
}

func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	leader := s.member.LeaderID()
	gauge(c.raftLeader, float64(leader))
	gauge(c.raftHasLeader, boolFloat(leader >= 0))

	h := partitionHealthOf(s.clusterState(), s.cfg.NodeID)
	for _, state := range []string{"active", "fenced", "shutting_down"} {
		gauge(c.brokers, float64(h.brokers[state]), state)
	}
	gauge(c.offline, float64(h.offline))
	gauge(c.led, float64(h.led))
	gauge(c.underReplicated, float64(h.underReplicated))

	if s.logDirs != nil {
		for _, d := range s.logDirs.dirs {
			gauge(c.dirOffline, boolFloat(d.offline()), d.path)
			if total, free := usage(d.path); total >= 0 {
				gauge(c.dirTotal, float64(total), d.path)
				gauge(c.dirFree, float64(free), d.path)
			}
		}
	}
	for _, l := range s.listeners {
		if l.spec.tls == nil {
			continue
		}
		if notAfter, ok := l.spec.tls.NotAfter(); ok {
			gauge(c.certNotAfter, float64(notAfter.Unix()), l.spec.name)
		}
	}
}

// partitionHealth is what healthCollector counts in one applied state.
type partitionHealth struct {
	brokers                       map[string]int // by state
	offline, led, underReplicated int
}

// partitionHealthOf counts brokers by state, leaderless partitions, and
// the partitions node leads with those of them under-replicated.
func partitionHealthOf(st cluster.State, node int32) partitionHealth {
	h := partitionHealth{brokers: map[string]int{}}
	for _, b := range st.Brokers {
		switch {
		case b.ShuttingDown:
			h.brokers["shutting_down"]++
		case b.Fenced:
			h.brokers["fenced"]++
		default:
			h.brokers["active"]++
		}
	}
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			switch {
			case p.Leader == cluster.NoLeader:
				h.offline++
			case p.Leader == node:
				h.led++
				if len(p.ISR) < len(p.Replicas) {
					h.underReplicated++
				}
			}
		}
	}
	return h
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
