package broker

// Ending followers' long polls when this node takes a partition's
// leadership.
//
// A follower replicates each leader with one sessionless Fetch at a time,
// which names the partitions it followed on that leader when it was sent
// and may wait up to replica.fetch.wait.max.ms for records. When this node
// becomes the leader of another partition the follower also replicates,
// the fetch in flight does not name it: Kafka's followers start on it only
// when that long poll ends, and the partition's acks=all producers wait
// with them (up to 500 ms by default, after every leader election,
// reassignment or balancer move). Here the new leader ends the followers'
// long polls at once, and for a short while a follower's fetch that still
// lacks such a partition (the follower has not applied the election yet)
// waits at most leaderGainPoll, so its next fetch comes soon.

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// leaderGainWindow is how long after a gain follower fetches lacking
	// the partition are kept short.
	leaderGainWindow = time.Second
	// leaderGainPoll is the longest such a fetch waits.
	leaderGainPoll = 10 * time.Millisecond
)

type leaderGains struct {
	// last is the time of the newest gain (Unix ns; 0: none), read
	// without the lock by every follower fetch.
	last atomic.Int64
	mu   sync.Mutex
	// waiters are the parked follower long polls.
	waiters map[chan struct{}]struct{}
	// recent are the gains of the last leaderGainWindow (older ones are
	// dropped at the next gain): a node starting with thousands of
	// partitions gains them all at once.
	recent    map[*partition]leaderGain
	lastPrune time.Time
}

type leaderGain struct {
	replicas []int32
	at       time.Time
}

// gained records that this node now leads p, with those replicas, and
// wakes the parked follower long polls.
func (g *leaderGains) gained(p *partition, replicas []int32, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.recent == nil {
		g.recent = map[*partition]leaderGain{}
	}
	if now.Sub(g.lastPrune) > leaderGainWindow {
		for q, r := range g.recent {
			if now.Sub(r.at) > leaderGainWindow {
				delete(g.recent, q)
			}
		}
		g.lastPrune = now
	}
	g.recent[p] = leaderGain{replicas: replicas, at: now}
	g.last.Store(now.UnixNano())
	for w := range g.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// park registers (or, with on false, removes) a follower long poll's
// waiter.
func (g *leaderGains) park(w chan struct{}, on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !on {
		delete(g.waiters, w)
		return
	}
	if g.waiters == nil {
		g.waiters = map[chan struct{}]struct{}{}
	}
	g.waiters[w] = struct{}{}
}

// missing reports whether this node gained, within leaderGainWindow, the
// leadership of a partition that replica follows and that the fetch's
// targets do not name.
func (g *leaderGains) missing(replica int32, targets []fetchTarget, now time.Time) bool {
	if last := g.last.Load(); last == 0 || now.Sub(time.Unix(0, last)) > leaderGainWindow {
		return false
	}
	g.mu.Lock()
	var lacking []*partition
	for p, r := range g.recent {
		if now.Sub(r.at) <= leaderGainWindow && slices.Contains(r.replicas, replica) {
			lacking = append(lacking, p)
		}
	}
	g.mu.Unlock()
	if len(lacking) == 0 {
		return false
	}
	named := make(map[sessionKey]bool, len(targets))
	for i := range targets {
		named[targets[i].key] = true
	}
	for _, p := range lacking {
		if !named[sessionKey{topic: p.topic.name, partition: p.index}] && p.IsLeader() {
			return true // (one lost again since is not waited for)
		}
	}
	return false
}
