package broker

// The self-balancing loop (strata.balancer.enable, on by default). On the
// node that is the active controller (or, when that is a controller-only
// node, the live broker with the lowest id), every
// strata.balancer.interval.ms:
//
//   - the partitions' loads are gathered over the Kafka protocol with the
//     node's inter-broker identity: DescribeLogDirs on every broker gives
//     each replica's local bytes (tiered data is not local, so it does not
//     count), the largest replica standing for the partition, and — asked
//     with Strata's tagged field — each node's counters of producer bytes
//     in and consumer bytes out per partition (partition_traffic.go),
//     whose growth since the last round gives the rates;
//   - metadata/balancer plans moves against the applied state, with the
//     nodes of strata.balancer.decommission.nodes (a dynamic cluster
//     config: `strata cluster decommission N`) to drain;
//   - each move is proposed as a cluster.ReassignPartition (KIP-455's
//     record, so kafka-reassign-partitions --list and
//     ListPartitionReassignments show it), at most
//     strata.balancer.max.concurrent.moves in flight.
//
// The last status (imbalance score, moves in flight, bytes to move,
// replicas left to drain) is on /metrics of that node.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/balancer"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// decommissionConfig is the dynamic cluster config listing the nodes to
// drain.
const decommissionConfig = "strata.balancer.decommission.nodes"

// balancerRun is the loop's state between rounds.
type balancerRun struct {
	s       *Server
	cluster *clusterGroups

	// prevTraffic are the traffic counters of the last round, per
	// node's replica, taken at prevAt.
	prevTraffic map[nodePartition]trafficCounters
	prevAt      time.Time

	score, inFlight, bytesToMove, draining prometheus.Gauge
	moves                                  *prometheus.CounterVec
}

func (s *Server) startBalancer() {
	b := &balancerRun{
		s:       s,
		cluster: newClusterGroups(s.interBrokerSeed, append(s.interBrokerOpts(), kgo.ClientID("strata-broker-balancer"))),
		score: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strata_balancer_imbalance_score",
			Help: "The self-balancer's imbalance score at its last round on the active controller (0: balanced)."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strata_balancer_moves_in_flight",
			Help: "Partition reassignments in progress at the balancer's last round."}),
		bytesToMove: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strata_balancer_bytes_to_move",
			Help: "Local bytes the moves planned at the balancer's last round copy."}),
		draining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strata_balancer_replicas_to_drain",
			Help: "Replicas still on decommissioned or long-dead nodes."}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_balancer_moves_total",
			Help: "Reassignments the balancer proposed, by goal."}, []string{"goal"}),
	}
	s.metrics.registry.MustRegister(b.score, b.inFlight, b.bytesToMove, b.draining, b.moves)
	s.goTask(func() {
		defer b.cluster.close()
		b.loop()
	})
}

func (b *balancerRun) loop() {
	s := b.s
	for {
		d := time.Duration(max(s.conf().BalancerIntervalMs, 100)) * time.Millisecond
		t := time.NewTimer(d)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		c := s.conf()
		if !c.BalancerEnable || !s.runsBalancer(s.clusterState()) {
			b.prevTraffic = nil
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, d+10*time.Second)
		b.round(ctx, c)
		cancel()
	}
}

// runsBalancer reports whether this node plans: the raft leader when it is
// a live broker, else (the leader is a controller-only node, or unknown)
// the live broker with the lowest id.
func (s *Server) runsBalancer(st cluster.State) bool {
	if leader := s.member.LeaderID(); leader >= 0 && st.Live(leader) {
		return leader == s.cfg.NodeID
	}
	for _, id := range st.BrokerIDs() {
		if st.Live(id) {
			return id == s.cfg.NodeID
		}
	}
	return false
}

// round gathers the loads, plans and proposes the moves.
func (b *balancerRun) round(ctx context.Context, c *Config) {
	s := b.s
	loads, err := b.loads(ctx)
	if err != nil {
		if s.ctx.Err() == nil {
			s.logger.Debug("balancer: gathering partition loads failed; planning without them", "err", err)
		}
	}
	cfg := balancer.DefaultConfig()
	cfg.MaxMoves = int(c.BalancerMaxMoves)
	cfg.DeadNodeTimeoutMs = c.BalancerDeadNodeTimeoutMs
	cfg.Threshold = float64(c.BalancerThresholdPercent) / 100
	cfg.NowMs = time.Now().UnixMilli()
	cfg.Drain = parseNodeList(c.BalancerDecommissionNodes)
	st := s.clusterState()
	moves, status := balancer.Plan(st, loads, cfg)
	for _, m := range moves {
		rec := cluster.ReassignPartition{Topic: m.Topic, Partition: m.Partition, Target: m.Target}
		if _, err := s.meta.propose(ctx, rec); err != nil {
			if s.ctx.Err() == nil {
				s.logger.Warn("balancer: reassignment not committed", "topic", m.Topic, "partition", m.Partition, "target", m.Target, "goal", m.Goal, "err", err)
			}
			break
		}
		b.moves.WithLabelValues(m.Goal).Inc()
		s.logger.Info("balancer: moving partition", "topic", m.Topic, "partition", m.Partition, "from", m.From, "to", m.Target, "goal", m.Goal, "bytes", m.Bytes)
	}
	b.score.Set(status.Score)
	b.inFlight.Set(float64(status.InFlight + len(moves)))
	b.bytesToMove.Set(float64(status.BytesToMove))
	left := 0
	for _, n := range status.Draining {
		left += n
	}
	b.draining.Set(float64(left))
}

// loads are each partition's local bytes (its largest replica) and its
// bytes-in and bytes-out rates since the last round: the growth of every
// node's traffic counters for it (partition_traffic.go), summed over the
// nodes. A counter seen for the first time, or lower than last round (the
// node restarted, or the partition came back to it), gives no rate this
// round.
func (b *balancerRun) loads(ctx context.Context) (map[balancer.PartitionID]balancer.Load, error) {
	cl, err := b.cluster.client()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrDescribeLogDirsRequest() // no topics: every partition, from every broker
	askTraffic(req)
	bytes := map[balancer.PartitionID]int64{}
	traffic := map[nodePartition]trafficCounters{}
	var errs []error
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", shard.Meta.NodeID, shard.Err))
			continue
		}
		resp := shard.Resp.(*kmsg.DescribeLogDirsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", shard.Meta.NodeID, err))
			continue
		}
		for _, d := range resp.Dirs {
			for _, t := range d.Topics {
				for i := range t.Partitions {
					p := &t.Partitions[i]
					if p.IsFuture {
						continue
					}
					id := balancer.PartitionID{Topic: t.Topic, Partition: p.Partition}
					bytes[id] = max(bytes[id], p.Size)
					if c, err := trafficOf(p); err == nil {
						traffic[nodePartition{shard.Meta.NodeID, id}] = c
					}
				}
			}
		}
	}
	now := time.Now()
	out := make(map[balancer.PartitionID]balancer.Load, len(bytes))
	for id, n := range bytes {
		out[id] = balancer.Load{Bytes: n}
	}
	if dt := now.Sub(b.prevAt).Seconds(); b.prevTraffic != nil && dt > 0 {
		for k, c := range traffic {
			prev, ok := b.prevTraffic[k]
			if !ok || c.BytesIn < prev.BytesIn || c.BytesOut < prev.BytesOut {
				continue
			}
			l := out[k.partition]
			l.InRate += float64(c.BytesIn-prev.BytesIn) / dt
			l.OutRate += float64(c.BytesOut-prev.BytesOut) / dt
			out[k.partition] = l
		}
	}
	b.prevTraffic, b.prevAt = traffic, now
	return out, errors.Join(errs...)
}

// nodePartition is one node's replica of a partition.
type nodePartition struct {
	node      int32
	partition balancer.PartitionID
}

// parseNodeList reads a comma-separated list of node ids, skipping what is
// not one (the config's validation refuses those).
func parseNodeList(v string) []int32 {
	var out []int32
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
			out = append(out, int32(n))
		}
	}
	return out
}
