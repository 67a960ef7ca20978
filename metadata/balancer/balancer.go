// Package balancer plans replica moves that keep a cluster balanced: what
// Kafka leaves to an external tool (cruise-control). It is pure: Plan
// takes the applied cluster state, the partitions' measured loads and the
// time, and returns reassignments (cluster.ReassignPartition targets) for
// the active controller to propose, with a status for operators. No I/O,
// no clock.
//
// Goals, in priority order; a lower goal never undoes a higher one:
//
//  1. Drain: no replica on a node being decommissioned, or on a node dead
//     (fenced) longer than Config.DeadNodeTimeoutMs — self-healing: its
//     replicas are created again elsewhere.
//  2. Rack spread: a partition's replicas span min(replicas, racks)
//     racks (broker.rack), when every node has a rack.
//  3. Replica count: every node holds within one replica of the others.
//  4. Leader count: preferred leaders (first replicas) within one of each
//     other — a reorder of the replica list, no data moves; the
//     controller's preferred-leader election then moves the leadership.
//  5. Disk: local bytes per node (tiered data does not count: loads carry
//     local bytes only) within Config.Threshold of the mean, by moving a
//     replica or swapping two.
//  6. Network in, from the partitions' measured rates: every replica takes
//     the bytes in (the leader from producers, followers by replication),
//     evened out like the disk.
//  7. Network out: the preferred leader sends the consumers' bytes and
//     one copy of the bytes in to each follower. Evened out first by
//     handing preferred leaderships to followers (a reorder, no data
//     moves; leader counts stay within one), then by moving or swapping
//     replicas when no leadership change helps.
//
// Never more than needed: a move is planned only to fix a goal that is
// off, each move is the one that fixes most of it with the least data
// (smaller partitions, followers before leaders), a swap must shift at
// least a quarter of the bigger load (alike partitions are left alone:
// their difference is noise, or for disk not worth the copy), and at most
// Config.MaxMoves reassignments are in flight (those already running
// count). A partition being reassigned is left alone.
package balancer

import (
	"cmp"
	"slices"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// Config are the planner's knobs.
type Config struct {
	// MaxMoves bounds the reassignments in flight, the running ones
	// included.
	MaxMoves int
	// DeadNodeTimeoutMs is how long a fenced node may stay away before its
	// replicas are re-created elsewhere (strata.balancer.dead.node.timeout).
	// 0 disables self-healing.
	DeadNodeTimeoutMs int64
	// NowMs is the controller's clock, compared with the nodes' last
	// heartbeats.
	NowMs int64
	// Drain are the nodes being decommissioned.
	Drain []int32
	// Threshold is the imbalance the disk and network goals allow: a node
	// may hold up to mean × (1+Threshold).
	Threshold float64
	// MinBytes is the disk difference between two nodes below which the
	// disk goal does nothing (moving less is not worth a copy).
	MinBytes int64
	// MinRate is the network goals' equivalent, in bytes per second.
	MinRate float64
}

// DefaultConfig is what the controller uses unless configured.
func DefaultConfig() Config {
	return Config{MaxMoves: 5, DeadNodeTimeoutMs: 10 * 60 * 1000, Threshold: 0.10, MinBytes: 64 << 20, MinRate: 1 << 20}
}

// PartitionID names one partition.
type PartitionID struct {
	Topic     string
	Partition int32
}

// Load is what one replica of a partition costs its node.
type Load struct {
	Bytes   int64   // local log bytes
	InRate  float64 // bytes/s appended by producers
	OutRate float64 // bytes/s fetched by consumers (from the leader)
}

// share is the load the replica at index i of rs (index 0: the preferred
// leader) puts on its node.
type share func(id PartitionID, rs []int32, i int) float64

// Move is one planned reassignment.
type Move struct {
	Topic     string
	Partition int32
	From      []int32 // the replicas now
	Target    []int32 // the replicas wanted (first: the preferred leader)
	Goal      string  // which goal it serves
	Bytes     int64   // what the added replicas copy
}

// Status is the balance of the cluster as the planner saw it.
type Status struct {
	InFlight       int             // reassignments running
	Planned        int             // moves in this plan
	BytesToMove    int64           // what the planned moves copy
	RackViolations int             // partitions spread over too few racks
	Draining       map[int32]int   // replicas left on nodes being drained
	Replicas       map[int32]int   // replicas per node (after the plan)
	Leaders        map[int32]int   // preferred leaders per node (after the plan)
	Bytes          map[int32]int64 // local bytes per node (after the plan)
	// Score is 0 when balanced: the rack violations and replicas to drain,
	// plus how far replica and leader counts spread beyond one, plus the
	// disk's max/mean beyond the threshold (×100).
	Score float64
}

// Goals' names, as Move.Goal reports them.
const (
	GoalDrain    = "drain"
	GoalRack     = "rack"
	GoalReplicas = "replica-count"
	GoalLeaders  = "leader-count"
	GoalDisk     = "disk"
	GoalNetIn    = "network-in"
	GoalNetOut   = "network-out"
)

// planner is the working copy a plan changes as it goes.
type planner struct {
	s       cluster.State
	loads   map[PartitionID]Load
	cfg     Config
	members []int32 // nodes that may take replicas, in id order
	leaving map[int32]bool
	racks   bool // every member has a rack
	nracks  int
	parts   []PartitionID           // in topic/partition order
	repl    map[PartitionID][]int32 // replicas (a reassignment's target)
	moved   map[PartitionID]bool    // reassigning, or moved by this plan
	budget  int
	moves   []Move
	status  Status
}

// Plan returns the moves that bring s closer to balance, and its status.
func Plan(s cluster.State, loads map[PartitionID]Load, cfg Config) ([]Move, Status) {
	p := &planner{s: s, loads: loads, cfg: cfg, leaving: map[int32]bool{}, repl: map[PartitionID][]int32{}, moved: map[PartitionID]bool{}}
	for _, id := range cfg.Drain {
		p.leaving[id] = true
	}
	for _, id := range s.BrokerIDs() {
		b := s.Brokers[id]
		if b.Fenced && cfg.DeadNodeTimeoutMs > 0 && cfg.NowMs-b.LastHeartbeatMs > cfg.DeadNodeTimeoutMs {
			p.leaving[id] = true
		}
		if s.Eligible(id) && !p.leaving[id] {
			p.members = append(p.members, id)
		}
	}
	rackSet := map[string]bool{}
	p.racks = len(p.members) > 0
	for _, id := range p.members {
		r := s.Brokers[id].Rack
		if r == "" {
			p.racks = false
		}
		rackSet[r] = true
	}
	p.nracks = len(rackSet)
	inFlight := 0
	for _, name := range s.TopicNames() {
		for i, part := range s.Topics[name].Partitions {
			id := PartitionID{name, int32(i)}
			p.parts = append(p.parts, id)
			p.repl[id] = slices.Clone(part.Replicas)
			if part.Reassigning() {
				// Counted where it is going, and left alone.
				inFlight++
				p.repl[id] = part.TargetReplicas()
				p.moved[id] = true
			}
		}
	}
	p.status.InFlight = inFlight
	p.budget = cfg.MaxMoves - inFlight
	if len(p.members) > 0 {
		p.drain()
		p.rackSpread()
		p.replicaCount()
		p.leaderCount()
		p.resource(GoalDisk, func(id PartitionID, _ []int32, _ int) float64 { return float64(p.loads[id].Bytes) }, float64(cfg.MinBytes))
		p.resource(GoalNetIn, func(id PartitionID, _ []int32, _ int) float64 { return p.loads[id].InRate }, cfg.MinRate)
		p.leaderOut()
		p.resource(GoalNetOut, p.outShare, cfg.MinRate)
	}
	p.fillStatus()
	return p.moves, p.status
}

func (p *planner) full() bool { return p.budget <= 0 }

// movable reports whether id may be moved now.
func (p *planner) movable(id PartitionID) bool { return !p.moved[id] }

// propose records the move of id to target.
func (p *planner) propose(id PartitionID, target []int32, goal string) {
	from := p.s.Topics[id.Topic].Partitions[id.Partition].Replicas
	var bytes int64
	for _, r := range target {
		if !slices.Contains(from, r) {
			bytes += p.loads[id].Bytes
		}
	}
	p.moves = append(p.moves, Move{Topic: id.Topic, Partition: id.Partition, From: slices.Clone(from), Target: target, Goal: goal, Bytes: bytes})
	p.repl[id] = target
	p.moved[id] = true
	p.budget--
}

// counts are replicas, preferred leaders and load per member now.
func (p *planner) counts(load func(Load) float64) (replicas, leaders map[int32]int, sum map[int32]float64) {
	replicas, leaders, sum = map[int32]int{}, map[int32]int{}, map[int32]float64{}
	for _, id := range p.members {
		replicas[id], leaders[id], sum[id] = 0, 0, 0
	}
	for _, id := range p.parts {
		rs := p.repl[id]
		for i, r := range rs {
			replicas[r]++
			if i == 0 {
				leaders[r]++
			}
			if load != nil {
				sum[r] += load(p.loads[id])
			}
		}
	}
	return replicas, leaders, sum
}

// racksOf counts the distinct racks of rs.
func (p *planner) racksOf(rs []int32) int {
	seen := map[string]bool{}
	for _, r := range rs {
		seen[p.s.Brokers[r].Rack] = true
	}
	return len(seen)
}

// wantRacks is how many racks rs should span.
func (p *planner) wantRacks(rs []int32) int {
	if !p.racks {
		return 0
	}
	return min(len(rs), p.nracks)
}

// sharesRack reports whether another replica of rs is on r's rack.
func (p *planner) sharesRack(rs []int32, r int32) bool {
	for _, o := range rs {
		if o != r && p.s.Brokers[o].Rack == p.s.Brokers[r].Rack {
			return true
		}
	}
	return false
}

// rackOK reports whether rs spans the racks it should.
func (p *planner) rackOK(rs []int32) bool { return p.racksOf(rs) >= p.wantRacks(rs) }

func replace(rs []int32, old, with int32) []int32 {
	out := slices.Clone(rs)
	out[slices.Index(out, old)] = with
	return out
}

// bestTarget is the member to take over replica old of rs: not a replica
// yet, on a rack rs does not use yet when racks matter, then the fewest
// replicas, the fewest bytes, the lowest id. -1 when none.
func (p *planner) bestTarget(rs []int32, old int32) int32 {
	replicas, _, bytes := p.counts(func(l Load) float64 { return float64(l.Bytes) })
	others := slices.DeleteFunc(slices.Clone(rs), func(r int32) bool { return r == old })
	used := map[string]bool{}
	for _, r := range others {
		used[p.s.Brokers[r].Rack] = true
	}
	best := int32(-1)
	for _, c := range p.members {
		if slices.Contains(rs, c) {
			continue
		}
		if best < 0 {
			best = c
			continue
		}
		score := func(n int32) [3]float64 {
			rackUsed := 0.0
			if p.racks && used[p.s.Brokers[n].Rack] {
				rackUsed = 1
			}
			return [3]float64{rackUsed, float64(replicas[n]), bytes[n]}
		}
		if sc, sb := score(c), score(best); slices.Compare(sc[:], sb[:]) < 0 {
			best = c
		}
	}
	return best
}

// drain moves every replica off the nodes leaving.
func (p *planner) drain() {
	for _, id := range p.parts {
		if p.full() {
			return
		}
		rs := p.repl[id]
		if !p.movable(id) {
			continue
		}
		target := rs
		for _, r := range rs {
			if !p.leaving[r] {
				continue
			}
			c := p.bestTarget(target, r)
			if c < 0 {
				break // fewer members than replicas: nowhere to go
			}
			target = replace(target, r, c)
		}
		if !slices.Equal(target, rs) {
			p.propose(id, target, GoalDrain)
		}
	}
}

// rackSpread moves a replica off a rack the partition uses twice onto a
// rack it does not use.
func (p *planner) rackSpread() {
	if !p.racks {
		return
	}
	for _, id := range p.parts {
		if p.full() {
			return
		}
		rs := p.repl[id]
		if !p.movable(id) || p.rackOK(rs) {
			continue
		}
		target := rs
		// Replace replicas sharing a rack, from the last: followers go
		// before the preferred leader.
		for i := len(target) - 1; i >= 0 && !p.rackOK(target); i-- {
			r := target[i]
			if !p.sharesRack(target, r) {
				continue
			}
			if c := p.bestTarget(target, r); c >= 0 && p.racksOf(replace(target, r, c)) > p.racksOf(target) {
				target = replace(target, r, c)
			}
		}
		if !slices.Equal(target, rs) {
			p.propose(id, target, GoalRack)
		}
	}
}

// extremes are the members with the most and the fewest of v (ties: the
// lower id).
func extremes[V cmp.Ordered](members []int32, v map[int32]V) (hi, lo int32) {
	hi, lo = members[0], members[0]
	for _, id := range members[1:] {
		if v[id] > v[hi] {
			hi = id
		}
		if v[id] < v[lo] {
			lo = id
		}
	}
	return hi, lo
}

// replicaCount moves replicas from the fullest node to the emptiest until
// they are within one, the smallest follower replica first.
func (p *planner) replicaCount() {
	for !p.full() {
		replicas, _, _ := p.counts(nil)
		hi, lo := extremes(p.members, replicas)
		if replicas[hi]-replicas[lo] <= 1 {
			return
		}
		best, found := PartitionID{}, false
		bestKey := [2]int64{}
		for _, id := range p.parts {
			rs := p.repl[id]
			if !p.movable(id) || !slices.Contains(rs, hi) || slices.Contains(rs, lo) || !p.rackOK(replace(rs, hi, lo)) {
				continue
			}
			leader := int64(0)
			if rs[0] == hi {
				leader = 1
			}
			key := [2]int64{leader, p.loads[id].Bytes}
			if !found || slices.Compare(key[:], bestKey[:]) < 0 {
				best, bestKey, found = id, key, true
			}
		}
		if !found {
			return
		}
		p.propose(best, replace(p.repl[best], hi, lo), GoalReplicas)
	}
}

// leaderCount reorders replica lists so that preferred leaders spread:
// the node with the fewest takes a leadership from one with at least two
// more. When no such node shares a partition with it (racks: two nodes of
// one rack never do), the leadership goes along a chain — a node hands one
// to a follower, which hands one on, … — so the nodes between keep their
// counts. Each step takes a leadership from a node with at least two more
// than the one that gains it, so the plan ends.
func (p *planner) leaderCount() {
	for !p.full() {
		_, leaders, _ := p.counts(nil)
		hi, lo := extremes(p.members, leaders)
		if leaders[hi]-leaders[lo] <= 1 {
			return
		}
		chain := p.leadershipChain(leaders, lo)
		if chain == nil || len(chain) > p.budget {
			return
		}
		for _, step := range chain {
			p.propose(step.id, leadBy(p.repl[step.id], step.to), GoalLeaders)
		}
	}
}

// handover is one preferred leadership passed to a follower.
type handover struct {
	id PartitionID
	to int32
}

// leadershipChain is the shortest chain of handovers that ends at lo and
// starts at a member leading at least two more partitions than lo; nil
// when there is none.
func (p *planner) leadershipChain(leaders map[int32]int, lo int32) []handover {
	// into[v]: the movable partitions v follows, by their leader.
	type edge struct {
		from int32
		id   PartitionID
	}
	into := map[int32][]edge{}
	for _, id := range p.parts {
		rs := p.repl[id]
		if !p.movable(id) {
			continue
		}
		for _, f := range rs[1:] {
			into[f] = append(into[f], edge{rs[0], id})
		}
	}
	isMember := map[int32]bool{}
	for _, id := range p.members {
		isMember[id] = true
	}
	// next[u] is u's handover toward lo.
	next := map[int32]handover{}
	queue := []int32{lo}
	seen := map[int32]bool{lo: true}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range into[v] {
			if seen[e.from] || !isMember[e.from] {
				continue
			}
			seen[e.from] = true
			next[e.from] = handover{e.id, v}
			if leaders[e.from] >= leaders[lo]+2 {
				var chain []handover
				for u := e.from; u != lo; u = next[u].to {
					chain = append(chain, next[u])
				}
				return chain
			}
			queue = append(queue, e.from)
		}
	}
	return nil
}

// perNode sums a load over each member's replicas.
func (p *planner) perNode(load share) map[int32]float64 {
	sum := make(map[int32]float64, len(p.members))
	for _, id := range p.members {
		sum[id] = 0
	}
	for _, id := range p.parts {
		rs := p.repl[id]
		for i, r := range rs {
			if _, ok := sum[r]; ok {
				sum[r] += load(id, rs, i)
			}
		}
	}
	return sum
}

// outShare is the network out of a replica: the preferred leader serves
// the consumers and sends the bytes in to every follower.
func (p *planner) outShare(id PartitionID, rs []int32, i int) float64 {
	if i != 0 {
		return 0
	}
	l := p.loads[id]
	return l.OutRate + l.InRate*float64(len(rs)-1)
}

// spread is the member with the most of sum, the mean, and whether the
// most loaded is over the threshold.
func (p *planner) spread(sum map[int32]float64) (hi int32, lo int32, over bool) {
	total := 0.0
	for _, v := range sum {
		total += v
	}
	mean := total / float64(len(p.members))
	hi, lo = extremes(p.members, sum)
	return hi, lo, mean > 0 && sum[hi] > mean*(1+p.cfg.Threshold)
}

// leaderOut evens out network out by handing the preferred leadership of
// a partition the busiest node leads to one of its followers — the move
// that takes the most off it without loading the follower beyond it —
// or, when that node does not lead more partitions than the follower
// (leader counts stay as they are), by swapping leaderships between the
// two. A reorder: no data moves.
func (p *planner) leaderOut() {
	for !p.full() {
		_, leaders, _ := p.counts(nil)
		sum := p.perNode(p.outShare)
		hi, _, over := p.spread(sum)
		if !over {
			return
		}
		type leadership struct {
			id   PartitionID
			size float64
		}
		// Per follower f: what hi leads with f following (give), and what
		// f leads with hi following (take).
		give, take := map[int32][]leadership{}, map[int32][]leadership{}
		for _, id := range p.parts {
			rs := p.repl[id]
			if !p.movable(id) || len(rs) < 2 {
				continue
			}
			size := p.outShare(id, rs, 0)
			switch {
			case rs[0] == hi:
				for _, f := range rs[1:] {
					if _, member := sum[f]; member {
						give[f] = append(give[f], leadership{id, size})
					}
				}
			case slices.Contains(rs[1:], hi):
				if _, member := sum[rs[0]]; member {
					take[rs[0]] = append(take[rs[0]], leadership{id, size})
				}
			}
		}
		var bestA, bestB PartitionID
		var bestTo int32
		bestDelta, swap := 0.0, false
		for _, f := range p.members {
			gap := sum[hi] - sum[f]
			if f == hi || gap < p.cfg.MinRate {
				continue
			}
			if leaders[hi] > leaders[f] {
				for _, a := range give[f] {
					// A single reorder wins a tie with a swap.
					if a.size <= gap/2 && (a.size > bestDelta || a.size == bestDelta && swap) {
						bestA, bestTo, bestDelta, swap = a.id, f, a.size, false
					}
				}
				continue
			}
			ts := take[f]
			slices.SortFunc(ts, func(x, y leadership) int { return cmp.Compare(x.size, y.size) })
			for _, a := range give[f] {
				i, _ := slices.BinarySearchFunc(ts, a.size-gap/2, func(l leadership, t float64) int { return cmp.Compare(l.size, t) })
				if i < len(ts) {
					if d := a.size - ts[i].size; d > bestDelta && d <= gap/2 && swapWorth(a.size, ts[i].size, p.cfg.MinRate) {
						bestA, bestB, bestTo, bestDelta, swap = a.id, ts[i].id, f, d, true
					}
				}
			}
		}
		if bestDelta == 0 || (swap && p.budget < 2) {
			return
		}
		p.propose(bestA, leadBy(p.repl[bestA], bestTo), GoalNetOut)
		if swap {
			p.propose(bestB, leadBy(p.repl[bestB], hi), GoalNetOut)
		}
	}
}

// swapWorth reports whether swapping loads a and b (a > b) is worth its
// two handovers: it must shift at least minDiff and a quarter of a. Two
// partitions closer than that are alike within a measurement's noise —
// the partitions of one topic fed by one producer differ by a few
// percent from round to round — so the swap would only be undone later,
// and on a cluster that cannot fit the threshold at all (16 equal
// partitions led by three nodes, 6, 5 and 5) such swaps came every round,
// each leadership handover stalling the partition's clients. For disk,
// a swap copies a+b bytes: it must move a fair part of that.
func swapWorth(a, b, minDiff float64) bool {
	d := a - b
	return d > 0 && d >= minDiff && d >= a/4
}

// leadBy is rs reordered with r first.
func leadBy(rs []int32, r int32) []int32 {
	return append([]int32{r}, slices.DeleteFunc(slices.Clone(rs), func(o int32) bool { return o == r })...)
}

// resource evens out one load (bytes, or a rate) between the most and the
// least loaded node: by moving one replica when the fuller node also
// holds more replicas, else by swapping a bigger replica for a smaller
// one, so that the replica counts stay as they are. A replica moved keeps
// its place in the list (a preferred leader's stays the preferred leader),
// and a move that would hand a preferred leadership to the node with more
// of them is passed over (the leader goal stays met).
func (p *planner) resource(goal string, load share, minDiff float64) {
	for !p.full() {
		replicas, leaders, _ := p.counts(nil)
		sum := p.perNode(load)
		hi, lo, over := p.spread(sum)
		diff := sum[hi] - sum[lo]
		if !over || diff < minDiff {
			return
		}
		var onHi, onLo []PartitionID
		for _, id := range p.parts {
			if !p.movable(id) {
				continue
			}
			rs := p.repl[id]
			switch {
			case slices.Contains(rs, hi) && !slices.Contains(rs, lo) && p.rackOK(replace(rs, hi, lo)):
				onHi = append(onHi, id)
			case slices.Contains(rs, lo) && !slices.Contains(rs, hi) && p.rackOK(replace(rs, lo, hi)):
				onLo = append(onLo, id)
			}
		}
		// size is what the replica of id on node n costs it.
		size := func(id PartitionID, n int32) float64 {
			rs := p.repl[id]
			return load(id, rs, slices.Index(rs, n))
		}
		// leads is 1 when n is id's preferred leader.
		leads := func(id PartitionID, n int32) int {
			if p.repl[id][0] == n {
				return 1
			}
			return 0
		}
		// leadersKept reports whether hi handing over lost preferred
		// leaderships to lo (net; negative: taking) keeps the leader goal:
		// the count moves only from the node with more.
		leadersKept := func(lost int) bool {
			return lost == 0 || (lost == 1 && leaders[hi] > leaders[lo]) || (lost == -1 && leaders[lo] > leaders[hi])
		}
		if replicas[hi] > replicas[lo] {
			// One move: the biggest replica not over half the difference.
			var best PartitionID
			bestSize := 0.0
			for _, id := range onHi {
				if sz := size(id, hi); sz <= diff/2 && sz > bestSize && leadersKept(leads(id, hi)) {
					best, bestSize = id, sz
				}
			}
			if bestSize == 0 {
				return
			}
			p.propose(best, replace(p.repl[best], hi, lo), goal)
			continue
		}
		// A swap: sizes a > b with a−b as large as possible, at most half
		// the difference.
		slices.SortFunc(onLo, func(a, b PartitionID) int { return cmp.Compare(size(a, lo), size(b, lo)) })
		var bestA, bestB PartitionID
		bestDelta := 0.0
		for _, a := range onHi {
			sa := size(a, hi)
			i, _ := slices.BinarySearchFunc(onLo, sa-diff/2, func(id PartitionID, t float64) int { return cmp.Compare(size(id, lo), t) })
			// From the best fit down, the first swap that keeps the leaders;
			// d only shrinks from there, so once it is no better than the
			// best or not worth a swap, neither is any after it.
			for ; i < len(onLo); i++ {
				sb := size(onLo[i], lo)
				d := sa - sb
				if d <= bestDelta || !swapWorth(sa, sb, minDiff) {
					break
				}
				if leadersKept(leads(a, hi) - leads(onLo[i], lo)) {
					bestA, bestB, bestDelta = a, onLo[i], d
					break
				}
			}
		}
		if bestDelta == 0 || p.budget < 2 {
			return
		}
		p.propose(bestA, replace(p.repl[bestA], hi, lo), goal)
		p.propose(bestB, replace(p.repl[bestB], lo, hi), goal)
	}
}

func (p *planner) fillStatus() {
	st := &p.status
	st.Planned = len(p.moves)
	for _, m := range p.moves {
		st.BytesToMove += m.Bytes
	}
	st.Draining = map[int32]int{}
	for _, id := range p.parts {
		rs := p.repl[id]
		if !p.rackOK(rs) {
			st.RackViolations++
		}
		for _, r := range rs {
			if p.leaving[r] {
				st.Draining[r]++
			}
		}
	}
	replicas, leaders, bytes := p.counts(func(l Load) float64 { return float64(l.Bytes) })
	st.Replicas, st.Leaders, st.Bytes = replicas, leaders, map[int32]int64{}
	for id, b := range bytes {
		st.Bytes[id] = int64(b)
	}
	score := float64(st.RackViolations)
	for _, n := range st.Draining {
		score += float64(n)
	}
	if len(p.members) > 0 {
		hi, lo := extremes(p.members, replicas)
		score += float64(max(0, replicas[hi]-replicas[lo]-1))
		hi, lo = extremes(p.members, leaders)
		score += float64(max(0, leaders[hi]-leaders[lo]-1))
		total := 0.0
		for _, b := range bytes {
			total += b
		}
		if mean := total / float64(len(p.members)); mean > 0 {
			hi, _ = extremes(p.members, bytes)
			score += max(0, bytes[hi]/mean-1-p.cfg.Threshold) * 100
		}
	}
	st.Score = score
}
