package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkInvariants fails t when a partition of s is inconsistent.
func checkInvariants(t *testing.T, s State, step string) {
	t.Helper()
	for name, tp := range s.Topics {
		for i, p := range tp.Partitions {
			where := fmt.Sprintf("%s: %s-%d %+v", step, name, i, p)
			distinct := func(ids []int32) bool {
				c := slices.Clone(ids)
				slices.Sort(c)
				return len(slices.Compact(c)) == len(ids)
			}
			subset := func(a, b []int32) bool {
				for _, id := range a {
					if !slices.Contains(b, id) {
						return false
					}
				}
				return true
			}
			switch {
			case len(p.ISR) == 0:
				t.Fatalf("empty isr: %s", where)
			case !distinct(p.Replicas) || !distinct(p.ISR):
				t.Fatalf("duplicate ids: %s", where)
			case !subset(p.ISR, p.Replicas):
				t.Fatalf("isr outside the replicas: %s", where)
			case p.Leader != NoLeader && !slices.Contains(p.ISR, p.Leader):
				t.Fatalf("leader outside the isr: %s", where)
			case p.Leader != NoLeader && !s.Live(p.Leader):
				t.Fatalf("leader not live: %s", where)
			case !subset(p.AddingReplicas, p.Replicas) || !subset(p.RemovingReplicas, p.Replicas):
				t.Fatalf("adding/removing outside the replicas: %s", where)
			case slices.ContainsFunc(p.AddingReplicas, func(id int32) bool { return slices.Contains(p.RemovingReplicas, id) }):
				t.Fatalf("a replica both added and removed: %s", where)
			case len(p.TargetReplicas()) == 0:
				t.Fatalf("empty target: %s", where)
			}
		}
	}
}

// TestRandomWalkKeepsInvariants applies random records (and the
// controller's plans) to a small cluster and checks after every step that
// partitions stay consistent, epochs never go back, and Apply never
// modifies its input.
func TestRandomWalkKeepsInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 150; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := scenarioState(t)
		ids := func() []int32 {
			n := 1 + rng.IntN(3)
			perm := rng.Perm(5)
			out := make([]int32, n)
			for i := range out {
				out[i] = int32(perm[i] + 1)
			}
			return out
		}
		for step := 0; step < 150; step++ {
			node := int32(1 + rng.IntN(5))
			inc := fmt.Sprintf("i%d", rng.IntN(2))
			pi := int32(rng.IntN(2))
			p := s.Topics["orders"].Partitions[pi]
			var recs []Record
			switch rng.IntN(10) {
			case 0:
				recs = []Record{RegisterBroker{NodeID: node, IncarnationID: inc, Addr: "h:1", TimeMs: int64(step)}}
			case 1:
				recs = []Record{FenceBroker{NodeID: node}}
			case 2:
				recs = []Record{UnfenceBroker{NodeID: node}}
			case 3:
				inc = s.Brokers[node].IncarnationID
				if inc == "" {
					inc = "x"
				}
				recs = []Record{ControlledShutdown{NodeID: node, IncarnationID: inc}}
			case 4, 5:
				isr := p.ISR
				if rng.IntN(2) == 0 || len(isr) == 1 {
					isr = append(slices.Clone(isr), p.Replicas[rng.IntN(len(p.Replicas))])
					slices.Sort(isr)
					isr = slices.Compact(isr)
				} else {
					isr = slices.Delete(slices.Clone(isr), 0, 1)
				}
				ap := AlterPartition{Topic: "orders", Partition: pi, PartitionEpoch: p.PartitionEpoch, LeaderEpoch: -1, NewISR: isr}
				if rng.IntN(3) == 0 {
					ap.Leader = ptr(isr[rng.IntN(len(isr))])
				}
				recs = []Record{ap}
			case 6:
				var target []int32
				if rng.IntN(4) != 0 {
					target = ids()
				}
				recs = []Record{ReassignPartition{Topic: "orders", Partition: pi, Target: target}}
			case 7:
				recs = []Record{ElectLeader{Topic: "orders", Partition: pi, Preferred: rng.IntN(2) == 0, Unclean: rng.IntN(4) == 0}}
			case 8:
				recs = PlanElections(s)
			case 9:
				recs = PlanPreferredElections(s)
			}
			for _, r := range recs {
				before, err := s.Encode()
				if err != nil {
					t.Fatal(err)
				}
				next, err := Apply(s, r)
				after, _ := s.Encode()
				if string(before) != string(after) {
					t.Fatalf("seed %d step %d: Apply(%#v) modified its input", seed, step, r)
				}
				if err != nil {
					continue
				}
				label := fmt.Sprintf("seed %d step %d %#v", seed, step, r)
				checkInvariants(t, next, label)
				for name, tp := range next.Topics {
					for i, np := range tp.Partitions {
						if old, ok := s.Topics[name]; ok && i < len(old.Partitions) {
							op := old.Partitions[i]
							if np.PartitionEpoch < op.PartitionEpoch || np.LeaderEpoch < op.LeaderEpoch ||
								(np.Leader != op.Leader && np.LeaderEpoch == op.LeaderEpoch) {
								t.Fatalf("%s: epochs %+v -> %+v", label, op, np)
							}
						}
					}
				}
				s = next
			}
		}
	}
}
