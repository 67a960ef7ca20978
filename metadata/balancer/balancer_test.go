package balancer

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/strata-streaming/strata/internal/puritytest"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// node is a broker of a test cluster.
type node struct {
	id     int32
	rack   string
	fenced bool
	lastHb int64
}

// clusterOf builds a state with the nodes and topics (one replica list
// per partition) through the state machine's own records.
func clusterOf(t *testing.T, nodes []node, topics map[string][][]int32) cluster.State {
	t.Helper()
	var recs []cluster.Record
	for _, n := range nodes {
		recs = append(recs, cluster.RegisterBroker{NodeID: n.id, IncarnationID: fmt.Sprint("inc", n.id), Addr: fmt.Sprintf("h%d:9092", n.id), Rack: n.rack, TimeMs: n.lastHb})
	}
	for i, name := range slices.Sorted(maps.Keys(topics)) {
		var parts []cluster.PartitionAssignment
		for _, rs := range topics[name] {
			parts = append(parts, cluster.PartitionAssignment{Replicas: rs})
		}
		recs = append(recs, cluster.CreateTopic{Name: name, ID: cluster.TopicID{byte(i + 1)}, Partitions: parts})
	}
	for _, n := range nodes {
		if n.fenced {
			recs = append(recs, cluster.FenceBroker{NodeID: n.id})
		}
	}
	s, err := cluster.ApplyAll(cluster.State{}, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// completed is s with every move finished (replicas, ISR and leader as
// the target says).
func completed(s cluster.State, moves []Move) cluster.State {
	topics := maps.Clone(s.Topics)
	for _, m := range moves {
		tp := topics[m.Topic]
		tp.Partitions = slices.Clone(tp.Partitions)
		p := tp.Partitions[m.Partition]
		p.Replicas, p.ISR, p.Leader = slices.Clone(m.Target), slices.Clone(m.Target), m.Target[0]
		tp.Partitions[m.Partition] = p
		topics[m.Topic] = tp
	}
	s.Topics = topics
	return s
}

// converge plans and completes moves until the planner has none left,
// returning every move made (bounded rounds).
func converge(t *testing.T, s cluster.State, loads map[PartitionID]Load, cfg Config) (cluster.State, []Move, Status) {
	t.Helper()
	var all []Move
	for range 100 {
		moves, st := Plan(s, loads, cfg)
		if len(moves) == 0 {
			return s, all, st
		}
		if len(moves) > cfg.MaxMoves {
			t.Fatalf("%d moves planned, limit %d", len(moves), cfg.MaxMoves)
		}
		all = append(all, moves...)
		s = completed(s, moves)
	}
	t.Fatal("the planner did not converge in 100 rounds")
	return s, nil, Status{}
}

func replicasPerNode(s cluster.State) map[int32]int {
	out := map[int32]int{}
	for _, tp := range s.Topics {
		for _, p := range tp.Partitions {
			for _, r := range p.Replicas {
				out[r]++
			}
		}
	}
	return out
}

func testConfig() Config {
	c := DefaultConfig()
	c.MaxMoves = 3
	c.MinBytes = 1
	return c
}

func three() []node { return []node{{id: 1}, {id: 2}, {id: 3}} }

func TestBalancedClusterNeedsNothing(t *testing.T) {
	s := clusterOf(t, three(), map[string][][]int32{"t": {{1, 2}, {2, 3}, {3, 1}}})
	moves, st := Plan(s, nil, testConfig())
	if len(moves) != 0 || st.Score != 0 || st.RackViolations != 0 {
		t.Fatalf("moves %+v status %+v", moves, st)
	}
}

// A fourth node gets its share of replicas: exactly as many moves as it
// takes (12 replicas over 4 nodes: 3 each), never more than MaxMoves at a
// time, and leaders spread too.
func TestNodeAddedGetsItsShare(t *testing.T) {
	topics := map[string][][]int32{"t": {{1, 2}, {2, 3}, {3, 1}, {1, 3}, {2, 1}, {3, 2}}}
	s := clusterOf(t, append(three(), node{id: 4}), topics)
	moves, _ := Plan(s, nil, testConfig())
	if len(moves) != 3 {
		t.Fatalf("first plan: %d moves, want the limit 3: %+v", len(moves), moves)
	}
	final, all, st := converge(t, s, nil, testConfig())
	counts := replicasPerNode(final)
	for id := int32(1); id <= 4; id++ {
		if counts[id] != 3 {
			t.Errorf("node %d holds %d replicas, want 3 (%v)", id, counts[id], counts)
		}
	}
	replicaMoves := 0
	for _, m := range all {
		if m.Goal == GoalReplicas {
			replicaMoves++
		}
	}
	if replicaMoves != 3 {
		t.Errorf("%d replica moves, want exactly 3: %+v", replicaMoves, all)
	}
	if st.Score != 0 {
		t.Errorf("final score %v: %+v", st.Score, st)
	}
	for _, n := range st.Leaders {
		if n < 1 || n > 2 {
			t.Errorf("preferred leaders per node %v, want 1 or 2 each", st.Leaders)
		}
	}
}

// Decommissioning drains every replica off the node, onto the others
// evenly; the status counts what is left.
func TestDrain(t *testing.T) {
	s := clusterOf(t, append(three(), node{id: 4}), map[string][][]int32{"t": {{1, 4}, {4, 2}, {3, 4}, {1, 2}}})
	cfg := testConfig()
	cfg.Drain = []int32{4}
	moves, st := Plan(s, nil, cfg)
	if len(moves) != 3 || st.Draining[4] != 0 {
		t.Fatalf("moves %+v, left on node 4: %d", moves, st.Draining[4])
	}
	for _, m := range moves {
		if m.Goal != GoalDrain || slices.Contains(m.Target, 4) || len(m.Target) != 2 {
			t.Errorf("move %+v", m)
		}
	}
	// With room for one move, two replicas stay, and the status says so.
	cfg.MaxMoves = 1
	if moves, st = Plan(s, nil, cfg); len(moves) != 1 || st.Draining[4] != 2 || st.Score < 2 {
		t.Fatalf("limited: moves %+v status %+v", moves, st)
	}
	cfg.MaxMoves = 3
	final, _, st := converge(t, s, nil, cfg)
	if counts := replicasPerNode(final); counts[4] != 0 || counts[1] < 2 || counts[2] < 2 || counts[3] < 2 || st.Score != 0 {
		t.Fatalf("drained: %v, status %+v", counts, st)
	}
}

// A node fenced longer than the dead-node timeout has its replicas
// re-created elsewhere; one that has just gone away keeps them.
func TestDeadNodeSelfHealing(t *testing.T) {
	nodes := append(three(), node{id: 4, fenced: true, lastHb: 1_000})
	s := clusterOf(t, nodes, map[string][][]int32{"t": {{4, 1}, {2, 3}}})
	cfg := testConfig()
	cfg.DeadNodeTimeoutMs = 60_000
	cfg.NowMs = 30_000
	if moves, _ := Plan(s, nil, cfg); len(moves) != 0 {
		t.Fatalf("recently fenced node: moves %+v", moves)
	}
	cfg.NowMs = 100_000
	moves, _ := Plan(s, nil, cfg)
	if len(moves) != 1 || moves[0].Goal != GoalDrain || slices.Contains(moves[0].Target, 4) || moves[0].Target[1] != 1 {
		t.Fatalf("dead node: moves %+v", moves)
	}
	cfg.DeadNodeTimeoutMs = 0
	if moves, _ := Plan(s, nil, cfg); len(moves) != 0 {
		t.Fatalf("self-healing off: moves %+v", moves)
	}
}

// Replicas spread over racks: a partition on two nodes of one rack gets a
// replica on the other rack, and later goals keep the spread.
func TestRackSpread(t *testing.T) {
	nodes := []node{{id: 1, rack: "a"}, {id: 2, rack: "a"}, {id: 3, rack: "b"}, {id: 4, rack: "b"}}
	s := clusterOf(t, nodes, map[string][][]int32{"t": {{1, 2}, {3, 4}, {1, 3}, {2, 4}}})
	final, all, st := converge(t, s, nil, testConfig())
	if st.RackViolations != 0 || st.Score != 0 {
		t.Fatalf("status %+v after %+v", st, all)
	}
	for _, p := range final.Topics["t"].Partitions {
		if final.Brokers[p.Replicas[0]].Rack == final.Brokers[p.Replicas[1]].Rack {
			t.Errorf("replicas %v on one rack", p.Replicas)
		}
	}
	if all[0].Goal != GoalRack {
		t.Errorf("first move %+v, want a rack move", all[0])
	}
	// Without racks on every node the goal does not apply.
	nodes[3].rack = ""
	if _, st := Plan(clusterOf(t, nodes, map[string][][]int32{"t": {{1, 2}}}), nil, testConfig()); st.RackViolations != 0 {
		t.Fatalf("partial racks: %+v", st)
	}
}

// Preferred leaders piled on one node are spread by reordering replica
// lists: no data moves.
func TestLeaderSpreadMovesNoData(t *testing.T) {
	s := clusterOf(t, three(), map[string][][]int32{"t": {{1, 2}, {1, 3}, {1, 2}, {1, 3}, {2, 3}, {3, 2}}})
	loads := map[PartitionID]Load{}
	for i := range int32(6) {
		loads[PartitionID{"t", i}] = Load{Bytes: 1 << 30}
	}
	_, all, st := converge(t, s, loads, testConfig())
	for _, m := range all {
		if m.Goal != GoalLeaders || m.Bytes != 0 || !slices.Equal(slices.Sorted(slices.Values(m.Target)), slices.Sorted(slices.Values(m.From))) {
			t.Errorf("move %+v: want a reorder", m)
		}
	}
	if len(all) == 0 || st.Leaders[1] != 2 || st.Leaders[2] != 2 || st.Leaders[3] != 2 {
		t.Fatalf("leaders %v after %+v", st.Leaders, all)
	}
}

// Leaders across racks: node 4 (rack b) shares no partition with node 3,
// the other node of its rack, which leads the most; leaderships reach it
// through nodes 1 and 2 (chains of handovers), no data moves, and every
// node ends with two.
func TestLeaderSpreadThroughChains(t *testing.T) {
	nodes := []node{{id: 1, rack: "a"}, {id: 2, rack: "a"}, {id: 3, rack: "b"}, {id: 4, rack: "b"}}
	s := clusterOf(t, nodes, map[string][][]int32{"t": {{3, 1}, {3, 2}, {3, 1}, {3, 2}, {1, 4}, {2, 4}, {1, 4}, {2, 4}}})
	_, all, st := converge(t, s, nil, testConfig())
	for _, m := range all {
		if m.Goal != GoalLeaders || m.Bytes != 0 || !slices.Equal(slices.Sorted(slices.Values(m.Target)), slices.Sorted(slices.Values(m.From))) {
			t.Errorf("move %+v: want a reorder", m)
		}
	}
	for id := int32(1); id <= 4; id++ {
		if st.Leaders[id] != 2 {
			t.Fatalf("leaders %v after %+v", st.Leaders, all)
		}
	}
}

// Disk: equal replica counts but one node with the big partitions; a swap
// evens the bytes without changing the counts.
func TestDiskSwap(t *testing.T) {
	s := clusterOf(t, three(), map[string][][]int32{"t": {{1}, {1}, {2}, {2}, {3}, {3}}})
	const g = 1 << 30
	loads := map[PartitionID]Load{
		{"t", 0}: {Bytes: 4 * g}, {"t", 1}: {Bytes: 4 * g},
		{"t", 2}: {Bytes: g}, {"t", 3}: {Bytes: g}, {"t", 4}: {Bytes: 2 * g}, {"t", 5}: {Bytes: 2 * g},
	}
	// Node 1 holds 8 GiB, node 2 2 GiB, node 3 4 GiB: one swap of a
	// 4 GiB replica for a 1 GiB one gives 5, 5 and 4.
	final, all, st := converge(t, s, loads, testConfig())
	if len(all) == 0 {
		t.Fatal("no move")
	}
	for _, m := range all {
		if m.Goal != GoalDisk {
			t.Errorf("move %+v", m)
		}
	}
	before, after := replicasPerNode(s), replicasPerNode(final)
	if !maps.Equal(before, after) {
		t.Errorf("replica counts changed: %v → %v", before, after)
	}
	if len(all) != 2 || all[0].Bytes != 4*g || all[1].Bytes != g {
		t.Errorf("moves %+v, want one swap", all)
	}
	mean := float64(14*g) / 3
	for id, b := range st.Bytes {
		if float64(b) > mean*1.1+1 {
			t.Errorf("node %d holds %d bytes, mean %.0f: %v", id, b, mean, st.Bytes)
		}
	}
}

// A topic whose partitions cannot be led evenly (16 over three nodes:
// 6, 5 and 5, node 1 over the threshold for good) with rates a few
// percent apart, as one producer spreads them — measured on a three-node
// run, 2026-12-05: no swap of alike leaderships, round after round. The
// other topic (no traffic, as __consumer_offsets) evens out the leader
// counts so that swaps, not single handovers, are what is on offer.
func TestNetworkOutLeavesAlikeLeadershipsAlone(t *testing.T) {
	rates := []float64{1322700, 1357557, 1346642, 1357555, 1293985, 1287726, 1364169, 1300800,
		1412071, 1333632, 1388084, 1320404, 1331416, 1396789, 1333536, 1403068}
	var parts [][]int32
	loads := map[PartitionID]Load{}
	for i, r := range rates {
		parts = append(parts, [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}[i%3])
		loads[PartitionID{"t", int32(i)}] = Load{InRate: r, OutRate: r}
	}
	s := clusterOf(t, three(), map[string][][]int32{"t": parts, "o": {{2, 1, 3}, {3, 1, 2}}})
	moves, st := Plan(s, loads, testConfig())
	if len(moves) != 0 {
		t.Errorf("moves %+v", moves)
	}
	if st.Leaders[1] != 6 || st.Leaders[2] != 6 || st.Leaders[3] != 6 {
		t.Errorf("leaders %v, want 6 each (the swap path)", st.Leaders)
	}
	// A partition twice as hot as the others is still worth a swap.
	hot := loads[PartitionID{"t", 0}]
	hot.InRate, hot.OutRate = 2*hot.InRate, 2*hot.OutRate
	loads[PartitionID{"t", 0}] = hot
	moves, _ = Plan(s, loads, testConfig())
	if len(moves) != 2 || moves[0].Goal != GoalNetOut || moves[0].Target[0] == 1 || moves[1].Target[0] != 1 {
		t.Errorf("hot partition: moves %+v, want node 1 to swap a leadership away", moves)
	}
}

// Swapping two replicas of nearly the same size copies both to move
// almost nothing: left alone.
func TestDiskLeavesAlikeReplicasAlone(t *testing.T) {
	s := clusterOf(t, three(), map[string][][]int32{"t": {{1}, {1}, {2}, {2}, {3}, {3}}})
	const g = 1 << 30
	loads := map[PartitionID]Load{
		{"t", 0}: {Bytes: 4 * g}, {"t", 1}: {Bytes: 4 * g},
		{"t", 2}: {Bytes: 16 * g / 5}, {"t", 3}: {Bytes: 16 * g / 5}, {"t", 4}: {Bytes: 16 * g / 5}, {"t", 5}: {Bytes: 16 * g / 5},
	}
	// Node 1 holds 8 GiB against a mean of 6.9: over the threshold, but
	// the only swap moves 0.8 GiB for 7.2 GiB copied.
	if moves, _ := Plan(s, loads, testConfig()); len(moves) != 0 {
		t.Errorf("moves %+v", moves)
	}
}

// Network out is the preferred leader's: the consumers' reads and a copy
// of the bytes in per follower. It is evened out by reordering replica
// lists (no data moves, leader counts kept) and, when no leadership change
// helps, by moving replicas.
func TestNetworkOut(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name   string
		nodes  []node // three() when nil
		topics [][]int32
		loads  map[int32]Load // by partition of topic t
		want   []Move         // Topic "t"; From is not compared
	}{{
		name:   "a follower with fewer leaderships takes one over",
		topics: [][]int32{{1, 2}, {1, 3}, {2, 3}, {3, 2}, {2, 1}},
		loads:  map[int32]Load{0: {OutRate: 30 * mib}, 1: {OutRate: 30 * mib}},
		want:   []Move{{Partition: 1, Target: []int32{3, 1}}},
	}, {
		name:   "even leader counts: two leaderships swap",
		nodes:  []node{{id: 1}, {id: 2}},
		topics: [][]int32{{1, 2}, {1, 2}, {2, 1}, {2, 1}},
		loads:  map[int32]Load{0: {OutRate: 40 * mib}, 1: {OutRate: 40 * mib}, 2: {OutRate: 10 * mib}, 3: {OutRate: 10 * mib}},
		want:   []Move{{Partition: 0, Target: []int32{2, 1}}, {Partition: 2, Target: []int32{1, 2}}},
	}, {
		name:   "replication counts as the leader's out",
		topics: [][]int32{{1, 2, 3}, {1, 2, 3}, {2, 3, 1}, {3, 1, 2}},
		loads:  map[int32]Load{0: {InRate: 20 * mib}, 1: {InRate: 20 * mib}},
		want:   []Move{{Partition: 0, Target: []int32{2, 1, 3}}},
	}, {
		name:   "single replicas: no follower to lead, replicas swap",
		topics: [][]int32{{1}, {1}, {2}, {3}, {2}, {3}},
		loads:  map[int32]Load{0: {OutRate: 50 * mib}, 1: {OutRate: 50 * mib}},
		want:   []Move{{Partition: 0, Target: []int32{2}}, {Partition: 2, Target: []int32{1}}},
	}, {
		name:   "under MinRate apart: nothing",
		topics: [][]int32{{1, 2}, {2, 3}, {3, 1}},
		loads:  map[int32]Load{0: {OutRate: mib / 2}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := tc.nodes
			if nodes == nil {
				nodes = three()
			}
			s := clusterOf(t, nodes, map[string][][]int32{"t": tc.topics})
			loads := map[PartitionID]Load{}
			for i, l := range tc.loads {
				loads[PartitionID{"t", i}] = l
			}
			moves, st := Plan(s, loads, testConfig())
			if len(moves) != len(tc.want) {
				t.Fatalf("moves %+v, want %+v", moves, tc.want)
			}
			for i, m := range moves {
				w := tc.want[i]
				if m.Goal != GoalNetOut || m.Topic != "t" || m.Partition != w.Partition || !slices.Equal(m.Target, w.Target) || m.Bytes != w.Bytes {
					t.Errorf("move %d: %+v, want partition %d to %v (%d bytes) for %s", i, m, w.Partition, w.Target, w.Bytes, GoalNetOut)
				}
			}
			// The leader goal stays met.
			lo, hi := len(tc.topics), 0
			for _, n := range st.Leaders {
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				t.Errorf("preferred leaders per node %v", st.Leaders)
			}
		})
	}
}

// A partition being reassigned counts as in flight, is counted where it
// goes and is not moved again.
func TestInFlightReassignments(t *testing.T) {
	s := clusterOf(t, append(three(), node{id: 4}), map[string][][]int32{"t": {{1, 2}, {2, 3}, {3, 1}, {1, 3}, {2, 1}, {3, 2}}})
	s, err := cluster.Apply(s, cluster.ReassignPartition{Topic: "t", Partition: 0, Target: []int32{4, 2}})
	if err != nil {
		t.Fatal(err)
	}
	moves, st := Plan(s, nil, testConfig())
	if st.InFlight != 1 || len(moves) != 2 {
		t.Fatalf("in flight %d, moves %+v", st.InFlight, moves)
	}
	for _, m := range moves {
		if m.Partition == 0 {
			t.Errorf("moved the partition being reassigned: %+v", m)
		}
	}
	if st.Replicas[4] != 3 {
		t.Errorf("node 4 counts %d replicas, want its in-flight one and two planned", st.Replicas[4])
	}
}

// TestPurePlanner keeps the planner free of I/O and clock reads.
func TestPurePlanner(t *testing.T) {
	puritytest.Check(t, "the balancer", "cmp", "slices", "github.com/strata-streaming/strata/metadata/cluster")
}

// BenchmarkPlan10kPartitions: one plan over 10,000 partitions (RF 3, 12
// nodes, one node just added), the controller's periodic cost.
func BenchmarkPlan10kPartitions(b *testing.B) {
	var recs []cluster.Record
	for id := int32(1); id <= 12; id++ {
		recs = append(recs, cluster.RegisterBroker{NodeID: id, IncarnationID: "i", Addr: "h:1", Rack: fmt.Sprint("r", id%3)})
	}
	loads := map[PartitionID]Load{}
	for tp := range 100 {
		var parts []cluster.PartitionAssignment
		for i := range 100 {
			n := int32(tp*100+i) % 11
			parts = append(parts, cluster.PartitionAssignment{Replicas: []int32{n + 1, (n+1)%11 + 1, (n+2)%11 + 1}})
			loads[PartitionID{fmt.Sprint("t", tp), int32(i)}] = Load{Bytes: int64(i) << 20}
		}
		recs = append(recs, cluster.CreateTopic{Name: fmt.Sprint("t", tp), ID: cluster.TopicID{byte(tp), byte(tp >> 8), 1}, Partitions: parts})
	}
	s, err := cluster.ApplyAll(cluster.State{}, recs...)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if moves, _ := Plan(s, loads, cfg); len(moves) == 0 {
			b.Fatal("no move toward the new node")
		}
	}
}
