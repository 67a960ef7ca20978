package replica

import (
	"slices"
	"time"
)

// The leader's replication decisions as pure functions of what it knows,
// in the manner of etcd raft's tracker and quorum packages: the Replica
// gathers the inputs under its locks and applies the outcome; the rules
// themselves are here, with table tests (progress_test.go).

// follower is what a leader knows of one follower.
type follower struct {
	leo            int64 // the follower's log end offset (its last fetch offset); -1 unknown
	lastCaughtUpMs int64 // last time the follower had everything the leader had
	prevLeaderLEO  int64 // the leader's log end offset at the follower's previous fetch; -1 none
	prevFetchMs    int64
}

// newFollower is a follower the leader has not heard from yet. It counts
// as caught up at nowMs: a grace period of replica.lag.time.max.ms to show
// otherwise.
func newFollower(nowMs int64) follower {
	return follower{leo: -1, lastCaughtUpMs: nowMs, prevLeaderLEO: -1}
}

// fetched is f after a fetch at offset (the follower's log end offset)
// while the leader's log ends at leaderLEO, as Kafka's
// Replica.updateFetchState decides it: the follower is caught up now if it
// has everything, or was caught up as of its previous fetch if it has
// everything the leader had then.
func (f follower) fetched(offset, leaderLEO, nowMs int64) follower {
	switch {
	case offset >= leaderLEO:
		f.lastCaughtUpMs = nowMs
	case f.prevLeaderLEO >= 0 && offset >= f.prevLeaderLEO:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, f.prevFetchMs)
	}
	f.prevLeaderLEO, f.prevFetchMs = leaderLEO, nowMs
	f.leo = offset
	return f
}

// highWatermark is the offset a leader may commit up to: the smallest log
// end offset among the ISR, its own being leaderLEO. A follower being added
// to the ISR (pendingAdd, -1 none) counts too once its offset is known —
// Kafka's "maximal ISR", so that it never joins lacking committed records.
// ok is false while an ISR member's offset is unknown: nothing moves then.
func highWatermark(self int32, leaderLEO int64, isr []int32, pendingAdd int32, followers map[int32]follower) (hw int64, ok bool) {
	hw = leaderLEO
	for _, id := range isr {
		if id == self {
			continue
		}
		f, known := followers[id]
		if !known || f.leo < 0 {
			return 0, false
		}
		hw = min(hw, f.leo)
	}
	if pendingAdd >= 0 {
		if f, known := followers[pendingAdd]; known && f.leo >= 0 {
			hw = min(hw, f.leo)
		}
	}
	return hw, true
}

// mayJoinISR reports whether a follower outside the ISR that fetched at
// offset may be proposed for it: it has everything committed (the high
// watermark) and the start of the leader's epoch, so it has no divergent
// tail (Kafka's rule).
func mayJoinISR(offset, hw, epochStart int64) bool {
	return offset >= hw && offset >= epochStart
}

// shrunkISR is the ISR without the followers that have not caught up for
// more than lagMaxMs (replica.lag.time.max.ms), or nil if none lags. The
// leader never drops itself; a follower it has no progress for stays.
func shrunkISR(self int32, isr []int32, followers map[int32]follower, nowMs, lagMaxMs int64) []int32 {
	keep := make([]int32, 0, len(isr))
	for _, id := range isr {
		if f, known := followers[id]; id != self && known && nowMs-f.lastCaughtUpMs > lagMaxMs {
			continue
		}
		keep = append(keep, id)
	}
	if len(keep) == len(isr) {
		return nil
	}
	return keep
}

// The wait after a failed ISR proposal before the next: it doubles per
// failure up to the maximum, and a new role resets it.
const (
	ISRRetryBackoff    = 100 * time.Millisecond
	ISRRetryBackoffMax = 5 * time.Second
)

// nextISRBackoff is the wait after a failed proposal when the previous
// wait was prevMs (0: none).
func nextISRBackoff(prevMs int64) int64 {
	return min(max(2*prevMs, ISRRetryBackoff.Milliseconds()), ISRRetryBackoffMax.Milliseconds())
}

// followersFor is the progress map of a leader of replicas: kept entries
// for followers still assigned, new ones (newFollower) for new followers,
// none for self. fresh drops all earlier progress (a new leader epoch).
func followersFor(self int32, replicas []int32, old map[int32]follower, fresh bool, nowMs int64) map[int32]follower {
	out := make(map[int32]follower, len(replicas))
	for _, id := range replicas {
		if id == self {
			continue
		}
		if f, ok := old[id]; ok && !fresh {
			out[id] = f
		} else {
			out[id] = newFollower(nowMs)
		}
	}
	return out
}

// soloISR reports whether isr is self alone: the high watermark then
// follows the log end offset.
func soloISR(self int32, isr []int32) bool {
	return len(isr) == 1 && isr[0] == self
}

// sameRole reports whether two roles are the same assignment.
func sameRole(a, b *Role) bool {
	return a != nil && b != nil && a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch &&
		a.PartitionEpoch == b.PartitionEpoch && slices.Equal(a.ISR, b.ISR) && slices.Equal(a.Replicas, b.Replicas)
}
