package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// voterIDs are the voters node n has applied.
func voterIDs(n *metadata.Node) []int32 {
	var ids []int32
	for _, m := range n.Members() {
		if !m.Learner {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// waitVoters waits until every running node of ids has applied exactly want as voters.
func waitVoters(t *testing.T, c *metadatatest.Cluster, ids []int32, want []int32) {
	t.Helper()
	c.WaitFor(fmt.Sprintf("voters %v on nodes %v", want, ids), 20*time.Second, func() bool {
		for _, id := range ids {
			n := c.Node(id)
			if n == nil || !slices.Equal(voterIDs(n), want) {
				return false
			}
		}
		return true
	})
}

func allocate(t *testing.T, c *metadatatest.Cluster, on int32) metadata.Applied {
	t.Helper()
	a, err := c.Propose(on, cluster.AllocateProducerIDs{N: 10}, 10*time.Second)
	if err != nil {
		t.Fatalf("propose on %d: %v", on, err)
	}
	return a
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A voter lost for good (killed, its directory wiped) is replaced: a
// fresh node joins, is added, the dead one removed; the new quorum
// commits without an original voter, and a restart of every node keeps
// the new membership (it does not fall back to the bootstrap voters).
func TestMembershipReplaceLostVoter(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	for range 5 {
		allocate(t, c, leader)
	}
	lost := int32(3)
	if lost == leader {
		lost = 2
	}
	c.Kill(lost)
	c.Wipe(lost)

	addr := c.Join(4)
	leader = c.WaitLeader(10 * time.Second)
	dir := [16]byte{4, 4}
	if err := c.Node(leader).AddVoter(ctxFor(t, 20*time.Second), 4, addr, dir); err != nil {
		t.Fatalf("AddVoter(4): %v", err)
	}
	waitVoters(t, c, []int32{leader, 4}, []int32{1, 2, 3, 4})
	if err := c.Node(leader).RemoveVoter(ctxFor(t, 20*time.Second), lost, [16]byte{}); err != nil {
		t.Fatalf("RemoveVoter(%d): %v", lost, err)
	}
	live := slices.DeleteFunc([]int32{1, 2, 3, 4}, func(id int32) bool { return id == lost })
	waitVoters(t, c, live, live)
	last := allocate(t, c, 4)
	c.WaitConverged(last.Index, 10*time.Second)
	if got := c.Node(4).State().NextProducerID; got != last.After.NextProducerID {
		t.Fatalf("node 4 next producer id %d, want %d", got, last.After.NextProducerID)
	}
	m, _ := c.Node(4).State().ControllerByID(4)
	if m.Addr != addr || m.DirectoryID != cluster.TopicID(dir) {
		t.Fatalf("node 4 recorded as %+v, want addr %s", m, addr)
	}

	// The quorum of the two originals' survivor and node 4 commits with
	// the other original down: node 4 votes.
	other := live[0]
	if other == 4 {
		other = live[1]
	}
	survivor := live[0] + live[1] + live[2] - other - 4
	c.Kill(other)
	c.WaitFor("a leader among the two left", 20*time.Second, func() bool {
		l := c.Leader()
		return l == survivor || l == 4
	})
	allocate(t, c, survivor)

	// Restart everyone: the membership comes from the log and snapshot.
	c.StopAll()
	for _, id := range live {
		c.Restart(id)
	}
	leader = c.WaitLeader(20 * time.Second)
	waitVoters(t, c, live, live)
	st, err := c.Node(leader).QuorumStatus(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for _, v := range st.Voters {
		got = append(got, v.ID)
	}
	if !slices.Equal(got, live) {
		t.Fatalf("QuorumStatus voters %v, want %v", got, live)
	}
	allocate(t, c, leader)
}

// One controller grows to three, and the quorum then survives the loss
// of the first; the leader removing itself hands over.
func TestMembershipGrowFromOne(t *testing.T) {
	c := metadatatest.NewCluster(t, 1, metadatatest.Options{})
	c.WaitLeader(10 * time.Second)
	allocate(t, c, 1)
	for _, id := range []int32{2, 3} {
		addr := c.Join(id)
		if err := c.Node(1).AddVoter(ctxFor(t, 20*time.Second), id, addr, [16]byte{}); err != nil {
			t.Fatalf("AddVoter(%d): %v", id, err)
		}
	}
	waitVoters(t, c, []int32{1, 2, 3}, []int32{1, 2, 3})
	a := allocate(t, c, 3)
	c.WaitConverged(a.Index, 10*time.Second)

	c.Kill(1)
	c.WaitFor("a leader among 2 and 3", 20*time.Second, func() bool { l := c.Leader(); return l == 2 || l == 3 })
	allocate(t, c, 2)
	c.Restart(1)
	leader := c.WaitLeader(20 * time.Second)

	// The leader removes itself and steps down; the two others go on.
	if err := c.Node(leader).RemoveVoter(ctxFor(t, 20*time.Second), leader, [16]byte{}); err != nil {
		t.Fatalf("leader %d removing itself: %v", leader, err)
	}
	rest := slices.DeleteFunc([]int32{1, 2, 3}, func(id int32) bool { return id == leader })
	waitVoters(t, c, rest, rest)
	c.WaitFor("a new leader", 20*time.Second, func() bool { l := c.Leader(); return l == rest[0] || l == rest[1] })
	allocate(t, c, rest[0])
	if c.Node(leader).IsLeader() {
		t.Fatalf("removed node %d still leads", leader)
	}
}

func TestMembershipErrors(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	follower := int32(1)
	if follower == leader {
		follower = 2
	}
	ln := c.Node(leader)
	if err := ln.AddVoter(ctxFor(t, 5*time.Second), follower, c.Addr(follower), [16]byte{}); !errors.Is(err, metadata.ErrDuplicateVoter) {
		t.Errorf("adding voter %d again: %v, want ErrDuplicateVoter", follower, err)
	}
	if err := ln.RemoveVoter(ctxFor(t, 5*time.Second), 99, [16]byte{}); !errors.Is(err, metadata.ErrVoterNotFound) {
		t.Errorf("removing unknown voter: %v, want ErrVoterNotFound", err)
	}
	// A follower names the leader once it has heard from it.
	c.WaitFor("the follower to know the leader", 10*time.Second, func() bool { return c.Node(follower).LeaderID() == leader })
	var nl *metadata.NotLeaderError
	if err := c.Node(follower).RemoveVoter(ctxFor(t, 5*time.Second), leader, [16]byte{}); !errors.As(err, &nl) || nl.Leader != leader {
		t.Errorf("RemoveVoter on follower: %v, want NotLeaderError with leader %d", err, leader)
	}
	if err := ln.AddVoter(ctxFor(t, 5*time.Second), 7, "no-port", [16]byte{}); !errors.Is(err, cluster.ErrInvalid) {
		t.Errorf("bad address: %v, want ErrInvalid", err)
	}

	// A node that never comes up stays a learner: AddVoter gives up.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	err = ln.AddVoter(ctxFor(t, 2*time.Second), 5, deadAddr, [16]byte{5})
	if !errors.Is(err, metadata.ErrNotCaughtUp) {
		t.Fatalf("adding a node that is down: %v, want ErrNotCaughtUp", err)
	}
	st, err := ln.QuorumStatus(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Voters) != 3 || !slices.ContainsFunc(st.Observers, func(p metadata.ReplicaProgress) bool { return p.ID == 5 }) {
		t.Fatalf("learner 5 not listed as an observer (voters %v, observers %v)", st.Voters, st.Observers)
	}
	// A wrong directory id does not find it; the right one removes it.
	if err := ln.RemoveVoter(ctxFor(t, 5*time.Second), 5, [16]byte{9}); !errors.Is(err, metadata.ErrVoterNotFound) {
		t.Errorf("removing with another directory id: %v, want ErrVoterNotFound", err)
	}
	if err := ln.RemoveVoter(ctxFor(t, 5*time.Second), 5, [16]byte{5}); err != nil {
		t.Fatalf("removing learner 5: %v", err)
	}
	if _, ok := ln.State().ControllerByID(5); ok {
		t.Fatal("learner 5 still recorded after its removal")
	}
	allocate(t, c, follower)
}

func TestMembershipLastVoter(t *testing.T) {
	c := metadatatest.NewCluster(t, 1, metadatatest.Options{})
	c.WaitLeader(10 * time.Second)
	if err := c.Node(1).RemoveVoter(ctxFor(t, 5*time.Second), 1, [16]byte{}); !errors.Is(err, metadata.ErrLastVoter) {
		t.Fatalf("removing the only voter: %v, want ErrLastVoter", err)
	}
}

// A voter restarted on a new raft address is cut off until the leader
// records the address (UpdateVoter, KIP-853's UpdateRaftVoter); then every
// member dials it and it catches up. Error paths: not the leader, not a
// member, another directory id.
func TestMembershipUpdateVoterAddress(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	moved := int32(3)
	if moved == leader {
		moved = 2
	}
	dir := [16]byte{3, 3}
	var nl *metadata.NotLeaderError
	if err := c.Node(moved).UpdateVoter(ctxFor(t, 5*time.Second), metadata.VoterUpdate{ID: moved, DirectoryID: dir, Addr: c.Addr(moved)}); !errors.As(err, &nl) || nl.Leader != leader {
		t.Fatalf("UpdateVoter on a follower: %v, want NotLeaderError naming %d", err, leader)
	}
	if err := c.Node(leader).UpdateVoter(ctxFor(t, 5*time.Second), metadata.VoterUpdate{ID: 9, Addr: "127.0.0.1:1"}); !errors.Is(err, metadata.ErrVoterNotFound) {
		t.Fatalf("UpdateVoter of node 9: %v, want ErrVoterNotFound", err)
	}

	c.Kill(moved)
	newAddr := c.Move(moved)
	c.Restart(moved)
	last := allocate(t, c, leader)
	if got := c.Node(moved).AppliedIndex(); got >= last.Index {
		t.Fatalf("node %d on an address nobody dials applied %d (>= %d)", moved, got, last.Index)
	}
	listeners := []cluster.ControllerListener{{Name: "CONTROLLER", Addr: newAddr}}
	err := c.Node(leader).UpdateVoter(ctxFor(t, 10*time.Second), metadata.VoterUpdate{ID: moved, DirectoryID: dir, Addr: newAddr, Listeners: listeners, KRaftMax: 1})
	if err != nil {
		t.Fatalf("UpdateVoter(%d, %s): %v", moved, newAddr, err)
	}
	c.WaitConverged(last.Index, 20*time.Second)
	for _, id := range c.IDs() {
		i := slices.IndexFunc(c.Node(id).Members(), func(m metadata.QuorumMember) bool { return m.ID == moved })
		ms := c.Node(id).Members()
		if len(ms) != 3 || i < 0 || ms[i].Addr != newAddr || ms[i].DirectoryID != dir {
			t.Fatalf("node %d members %+v, want node %d at %s", id, ms, moved, newAddr)
		}
		rec, _ := c.Node(id).State().ControllerByID(moved)
		if !slices.Equal(rec.Listeners, listeners) || rec.KRaftMax != 1 {
			t.Fatalf("node %d records %+v", id, rec)
		}
	}
	if err := c.Node(leader).UpdateVoter(ctxFor(t, 5*time.Second), metadata.VoterUpdate{ID: moved, DirectoryID: [16]byte{7}, Addr: newAddr}); !errors.Is(err, metadata.ErrVoterNotFound) {
		t.Fatalf("UpdateVoter with another directory id: %v, want ErrVoterNotFound", err)
	}
	// The moved node votes at its new address: the quorum commits with
	// the third node down.
	other := 6 - leader - moved
	c.Kill(other)
	allocate(t, c, moved)
}
