package streams

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testMember is one member's state as it joins: what it owns and the
// changelog positions of its local tasks.
type testMember struct {
	id    string
	owned map[string][]int32
	local map[topicPartition]int64
}

// balanceResult is one member's share: its partitions and standbys.
type balanceResult struct {
	partitions map[string][]int32
	standbys   []topicPartition
}

func testBalancer(standbys int, groups map[string]string, stateful ...string) *taskBalancer {
	b := &taskBalancer{groups: groups, stateful: map[string]bool{}, standbys: standbys, logger: slog.New(slog.DiscardHandler)}
	for _, t := range stateful {
		b.stateful[t] = true
	}
	return b
}

// balance runs one leader's balance over the members (in order) and parses
// each member's assignment as the member would.
func balance(t *testing.T, b *taskBalancer, topics map[string]int32, members ...testMember) map[string]balanceResult {
	t.Helper()
	var join []kmsg.JoinGroupResponseMember
	interests := slices.Sorted(maps.Keys(topics))
	for _, m := range members {
		mb := *b
		mb.local = func() map[topicPartition]int64 { return m.local }
		join = append(join, kmsg.JoinGroupResponseMember{MemberID: m.id, ProtocolMetadata: mb.JoinGroupMetadata(interests, m.owned, 1)})
	}
	gmb, _, err := b.MemberBalancer(join)
	if err != nil {
		t.Fatal(err)
	}
	into, err := gmb.(kgo.GroupMemberBalancerOrError).BalanceOrError(topics)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]balanceResult{}
	for _, a := range into.IntoSyncAssignment() {
		var got []topicPartition
		mb := *b
		mb.onStandbys = func(tps []topicPartition) { got = tps }
		parts, err := mb.ParseSyncAssignment(a.MemberAssignment)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(x, y topicPartition) int { return int(x.partition - y.partition) })
		out[a.MemberID] = balanceResult{partitions: parts, standbys: got}
	}
	return out
}

func sorted(ps []int32) []int32 { return slices.Sorted(slices.Values(ps)) }

func TestBalancerScalesOutStickily(t *testing.T) {
	b := testBalancer(0, nil, "in")
	topics := map[string]int32{"in": 6}
	a := testMember{id: "a", owned: map[string][]int32{"in": {0, 1, 2}}}
	bb := testMember{id: "b", owned: map[string][]int32{"in": {3, 4, 5}}}
	c := testMember{id: "c"}
	// First round: the owners keep their fair share, the rest is revoked
	// (cooperative), nothing moves directly.
	got := balance(t, b, topics, a, bb, c)
	if fmt.Sprint(sorted(got["a"].partitions["in"]), sorted(got["b"].partitions["in"]), got["c"].partitions["in"]) != "[0 1] [3 4] []" {
		t.Fatalf("first round: %v", got)
	}
	// Second round: the revoked tasks go to the member with room.
	a.owned, bb.owned = map[string][]int32{"in": {0, 1}}, map[string][]int32{"in": {3, 4}}
	got = balance(t, b, topics, a, bb, c)
	if fmt.Sprint(sorted(got["a"].partitions["in"]), sorted(got["b"].partitions["in"]), sorted(got["c"].partitions["in"])) != "[0 1] [3 4] [2 5]" {
		t.Fatalf("second round: %v", got)
	}
}

func TestBalancerGivesAFailedMembersTasksToTheirStandbys(t *testing.T) {
	b := testBalancer(1, nil, "in")
	topics := map[string]int32{"in": 6}
	// c owned 4 and 5 and died; a has a caught-up standby of 5, b one of
	// 4, and a also a stale copy of 4.
	a := testMember{id: "a", owned: map[string][]int32{"in": {0, 1}},
		local: map[topicPartition]int64{{"in", 0}: 50, {"in", 1}: 50, {"in", 4}: 10, {"in", 5}: 90}}
	bb := testMember{id: "b", owned: map[string][]int32{"in": {2, 3}},
		local: map[topicPartition]int64{{"in", 2}: 50, {"in", 3}: 50, {"in", 4}: 100}}
	got := balance(t, b, topics, a, bb)
	if fmt.Sprint(sorted(got["a"].partitions["in"]), sorted(got["b"].partitions["in"])) != "[0 1 5] [2 3 4]" {
		t.Fatalf("takeover: %v", got)
	}
	// Every task has its standby on the other member.
	for id, r := range got {
		if len(r.standbys) != 3 {
			t.Errorf("%s keeps standbys %v, want the other's 3 tasks", id, r.standbys)
		}
		for _, s := range r.standbys {
			if slices.Contains(r.partitions["in"], s.partition) {
				t.Errorf("%s keeps a standby of its own task %d", id, s.partition)
			}
		}
	}
}

func TestBalancerSpreadsStandbysOfOneOwner(t *testing.T) {
	b := testBalancer(1, nil, "in")
	topics := map[string]int32{"in": 6}
	members := []testMember{
		{id: "a", owned: map[string][]int32{"in": {0, 1}}},
		{id: "b", owned: map[string][]int32{"in": {2, 3}}},
		{id: "c", owned: map[string][]int32{"in": {4, 5}}},
	}
	got := balance(t, b, topics, members...)
	again := balance(t, b, topics, members...)
	if fmt.Sprint(got) != fmt.Sprint(again) {
		t.Fatalf("placement not deterministic:\n%v\n%v", got, again)
	}
	holder := map[int32]string{}
	for id, r := range got {
		if len(r.standbys) != 2 {
			t.Errorf("%s keeps %d standbys, want 2", id, len(r.standbys))
		}
		for _, s := range r.standbys {
			holder[s.partition] = id
		}
	}
	for _, m := range members {
		ps := m.owned["in"]
		if holder[ps[0]] == holder[ps[1]] || holder[ps[0]] == m.id || holder[ps[0]] == "" || holder[ps[1]] == "" {
			t.Errorf("%s's tasks %v have standbys on %q and %q, want two other members", m.id, ps, holder[ps[0]], holder[ps[1]])
		}
	}
}

func TestBalancerKeepsJoinedPartitionsTogether(t *testing.T) {
	b := testBalancer(1, map[string]string{"right": "left", "left": "left"}, "left")
	topics := map[string]int32{"left": 4, "right": 4, "other": 2}
	got := balance(t, b, topics, testMember{id: "a"}, testMember{id: "b"}, testMember{id: "c"})
	total := 0
	for id, r := range got {
		if fmt.Sprint(sorted(r.partitions["left"])) != fmt.Sprint(sorted(r.partitions["right"])) {
			t.Errorf("%s holds left %v and right %v", id, r.partitions["left"], r.partitions["right"])
		}
		n := len(r.partitions["left"]) + len(r.partitions["other"])
		if n != 2 {
			t.Errorf("%s holds %d tasks, want 2 of 6", id, n)
		}
		total += n
		for _, s := range r.standbys {
			if s.topic != "left" {
				t.Errorf("%s keeps a standby of stateless %v", id, s)
			}
		}
	}
	if total != 6 {
		t.Errorf("%d tasks assigned, want 6", total)
	}
}

func TestTaskUserDataRoundTripsAndRejectsGarbage(t *testing.T) {
	tasks := map[topicPartition]int64{{"a", 1}: 7, {"bb", 0}: 1 << 40}
	got, err := decodeTasks(encodeTasks(tasks))
	if err != nil || !maps.Equal(got, tasks) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	enc := encodeTasks(tasks)
	for _, bad := range [][]byte{{0}, {0, 1, 0, 0, 0, 0}, enc[:len(enc)-1], append(slices.Clone(enc), 0)} {
		if _, err := decodeTasks(bad); err == nil {
			t.Errorf("decodeTasks(%x) accepted garbage", bad)
		}
	}
}

// FuzzDecodeTasks: user data from other members never panics the leader,
// and what decodes re-encodes to the same tasks.
func FuzzDecodeTasks(f *testing.F) {
	f.Add(encodeTasks(map[topicPartition]int64{{"in", 3}: 42}))
	f.Add([]byte{0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, err := decodeTasks(data)
		if err != nil {
			return
		}
		again, err := decodeTasks(encodeTasks(tasks))
		if err != nil || !maps.Equal(again, tasks) {
			t.Fatalf("re-encoded %v decodes to %v, %v", tasks, again, err)
		}
	})
}
