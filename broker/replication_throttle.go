package broker

// Replication throttles, Kafka's way (KIP-73): a replica is throttled when
// its topic's leader.replication.throttled.replicas /
// follower.replication.throttled.replicas lists it ("partition:broker"
// entries, or "*" for every replica) — and, doing better than Kafka, which
// needs kafka-reassign-partitions --throttle to set those lists, whenever
// it is being added by a reassignment (the balancer's moves and any
// other). The brokers' leader.replication.throttled.rate and
// follower.replication.throttled.rate (bytes/s, dynamic, unlimited by
// default) bound the bytes of throttled replicas: over its rate, a
// follower leaves throttled partitions out of its next fetch, and a leader
// answers a throttled follower's fetch without records, until the rate's
// token bucket (one second of burst) refills. Replicas in sync are never
// slowed unless listed.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// Throttled-replica topic configs.
const (
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// throttle is a token bucket over a dynamic rate (math.MaxInt64:
// unlimited).
type throttle struct {
	rate   func() int64
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newThrottle(rate func() int64) *throttle { return &throttle{rate: rate} }

// unlimited reports whether no rate is set.
func (t *throttle) unlimited() bool { r := t.rate(); return r <= 0 || r == math.MaxInt64 }

// exceeded refills the bucket and reports whether it is empty.
func (t *throttle) exceeded() bool {
	if t.unlimited() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refillLocked(time.Now())
	return t.tokens <= 0
}

// record charges n bytes.
func (t *throttle) record(n int64) {
	if n <= 0 || t.unlimited() {
		return
	}
	t.mu.Lock()
	t.refillLocked(time.Now())
	t.tokens -= float64(n)
	t.mu.Unlock()
}

func (t *throttle) refillLocked(now time.Time) {
	rate := float64(t.rate())
	if t.last.IsZero() {
		t.tokens, t.last = rate, now
		return
	}
	t.tokens = min(rate, t.tokens+now.Sub(t.last).Seconds()*rate)
	t.last = now
}

// replicaThrottled reports whether node's replica of p is throttled for the
// side whose topic config is listConfig.
func (s *Server) replicaThrottled(st cluster.State, p *partition, node int32, listConfig string) bool {
	t, ok := st.TopicByID(cluster.TopicID(p.topic.id))
	if !ok || int(p.index) >= len(t.Partitions) {
		return false
	}
	if slices.Contains(t.Partitions[p.index].AddingReplicas, node) {
		return true
	}
	return throttledListHas(t.Configs[listConfig], p.index, node)
}

// throttledListHas reads a throttled-replicas list: "*", or
// "partition:broker" entries separated by commas.
func throttledListHas(list string, partition, node int32) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "*" {
			return true
		}
		ps, bs, ok := strings.Cut(e, ":")
		if !ok {
			continue
		}
		p, perr := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		b, berr := strconv.ParseInt(strings.TrimSpace(bs), 10, 32)
		if perr == nil && berr == nil && int32(p) == partition && int32(b) == node {
			return true
		}
	}
	return false
}

// validateThrottledReplicas accepts "", "*" or "partition:broker" entries.
func validateThrottledReplicas(v string) error {
	if strings.TrimSpace(v) == "" || strings.TrimSpace(v) == "*" {
		return nil
	}
	for _, e := range strings.Split(v, ",") {
		ps, bs, ok := strings.Cut(strings.TrimSpace(e), ":")
		p, perr := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		b, berr := strconv.ParseInt(strings.TrimSpace(bs), 10, 32)
		if !ok || perr != nil || berr != nil || p < 0 || b < 0 {
			return fmt.Errorf("%q is not partition:broker (or give * alone)", e)
		}
	}
	return nil
}
