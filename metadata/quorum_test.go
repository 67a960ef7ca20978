package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

func topicRecord(name string) cluster.CreateTopic {
	var id cluster.TopicID
	copy(id[:], fmt.Sprintf("%-16s", name))
	return cluster.CreateTopic{Name: name, ID: id, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{1, 2, 3}}}}
}

func encoded(t *testing.T, s cluster.State) string {
	t.Helper()
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameState waits until every running node has the state of node ref.
func sameState(t *testing.T, c *metadatatest.Cluster, ref int32, timeout time.Duration) {
	t.Helper()
	c.WaitFor("every node to reach the same state", timeout, func() bool {
		want := encoded(t, c.Node(ref).State())
		for _, id := range c.IDs() {
			if n := c.Node(id); n != nil && encoded(t, n.State()) != want {
				return false
			}
		}
		return true
	})
}

func follower(c *metadatatest.Cluster, leader int32) int32 {
	for _, id := range c.IDs() {
		if id != leader && c.Node(id) != nil {
			return id
		}
	}
	return -1
}

func TestQuorumCommitsFromAnyNode(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	f := follower(c, leader)
	a, err := c.Propose(f, topicRecord("from-follower"), 5*time.Second)
	if err != nil {
		t.Fatalf("proposal on follower %d: %v", f, err)
	}
	// Applied locally before Propose returned.
	if _, ok := c.Node(f).State().Topic("from-follower"); !ok || c.Node(f).AppliedIndex() < a.Index {
		t.Fatal("Propose returned before the record was applied locally")
	}
	if _, err := c.Propose(leader, topicRecord("from-leader"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Rejections come back to the proposer, whichever node it is.
	if _, err := c.Propose(f, topicRecord("from-leader"), 5*time.Second); !errors.Is(err, cluster.ErrTopicExists) {
		t.Fatalf("duplicate topic: %v", err)
	}
	c.WaitConverged(a.Index+1, 5*time.Second)
	sameState(t, c, leader, 5*time.Second)
	c.WaitFor("the controller to set the cluster id", 5*time.Second, func() bool { return c.Node(f).State().ClusterID != "" })
}

// TestLeaderFailover kills the leader: a new one is elected and commits
// within a few seconds; the old leader comes back and catches up.
func TestLeaderFailover(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	old := c.WaitLeader(10 * time.Second)
	if _, err := c.Propose(old, topicRecord("before"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	survivor := follower(c, old)
	killed := time.Now()
	c.Kill(old)
	var a metadata.Applied
	for i := 0; ; i++ {
		var err error
		a, err = c.Propose(survivor, topicRecord(fmt.Sprintf("after-%d", i)), 300*time.Millisecond)
		if err == nil {
			break
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("no commit 10 s after killing the leader: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // bounded retry of a failed proposal
	}
	failover := time.Since(killed)
	t.Logf("leader %d killed; a new leader (%d) committed after %v", old, c.Leader(), failover)
	if failover > 4*time.Second {
		t.Errorf("failover took %v", failover)
	}
	if l := c.Leader(); l == old || l < 0 {
		t.Fatalf("leader after failover: %d", l)
	}

	c.Restart(old)
	c.WaitFor("the old leader to catch up", 10*time.Second, func() bool {
		n := c.Node(old)
		return n.AppliedIndex() >= a.Index
	})
	sameState(t, c, survivor, 5*time.Second)
	if _, ok := c.Node(old).State().Topic("before"); !ok {
		t.Fatal("restarted node lost its state")
	}
}

// TestMinorityCannotCommit partitions the leader away: it cannot commit,
// the majority elects a new leader and can; after healing all converge.
func TestMinorityCannotCommit(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	old := c.WaitLeader(10 * time.Second)
	c.Isolate(old)
	_, err := c.Propose(old, topicRecord("minority"), 1500*time.Millisecond)
	if err == nil {
		t.Fatal("an isolated node committed a record")
	}
	if !errors.Is(err, metadata.ErrNotLeader) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("isolated proposal: %v", err)
	}
	majority := follower(c, old)
	c.WaitFor("the majority to commit", 10*time.Second, func() bool {
		_, err = c.Propose(majority, topicRecord("majority"), 500*time.Millisecond)
		return err == nil || errors.Is(err, cluster.ErrTopicExists)
	})
	if _, ok := c.Node(old).State().Topic("majority"); ok {
		t.Fatal("the isolated node applied a record it could not have received")
	}
	c.HealAll()
	c.WaitFor("the old leader to converge", 10*time.Second, func() bool {
		_, ok := c.Node(old).State().Topic("majority")
		return ok
	})
	sameState(t, c, majority, 5*time.Second)
	if _, ok := c.Node(old).State().Topic("minority"); ok {
		t.Fatal("the minority's uncommitted record survived")
	}
}

// TestRestartsKeepStateWithSnapshots runs enough records for several
// snapshots and compactions: a node that was down catches up (by snapshot
// when its entries are gone), and a whole-cluster stop and start keeps
// everything from the WAL and snapshots.
func TestRestartsKeepStateWithSnapshots(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
		cfg.SnapshotEvery = 20
		cfg.CatchUpEntries = 5
		cfg.SegmentBytes = 2048
	}})
	leader := c.WaitLeader(10 * time.Second)
	lagger := follower(c, leader)
	c.Kill(lagger)
	var last metadata.Applied
	for i := 0; i < 80; i++ {
		var err error
		if last, err = c.Propose(leader, cluster.AllocateProducerIDs{N: 10}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Propose(leader, topicRecord("kept"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if si := c.Node(leader).SnapshotIndex(); si < 60 {
		t.Fatalf("leader snapshot index %d after %d entries", si, last.Index)
	}
	c.Restart(lagger)
	c.WaitFor("the lagging node to catch up", 10*time.Second, func() bool {
		_, ok := c.Node(lagger).State().Topic("kept")
		return ok
	})
	if c.Node(lagger).SnapshotsInstalled() == 0 {
		t.Fatal("the lagging node caught up without a snapshot though the leader compacted its log")
	}
	sameState(t, c, leader, 5*time.Second)
	want := encoded(t, c.Node(leader).State())

	c.StopAll()
	c.StartAll()
	for _, id := range c.IDs() {
		// Before any new election the snapshot is already loaded.
		if idx := c.Node(id).AppliedIndex(); idx < 60 {
			t.Errorf("node %d restarted with applied index %d: snapshot not loaded", id, idx)
		}
	}
	leader = c.WaitLeader(10 * time.Second)
	sameState(t, c, leader, 10*time.Second)
	if got := encoded(t, c.Node(leader).State()); got != want {
		t.Fatalf("state after full restart:\n%s\nwant\n%s", got, want)
	}
	if s := c.Node(leader).State(); s.NextProducerID != 800 {
		t.Fatalf("producer ids after restart: %d", s.NextProducerID)
	}
}

func TestMemoryNetworkQuorum(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Memory: true, Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 20 * time.Millisecond
	}})
	leader := c.WaitLeader(10 * time.Second)
	// A one-way cut from the leader to a follower: the follower stops
	// hearing heartbeats but the quorum still commits through the third.
	f := follower(c, leader)
	c.CutOneWay(leader, f)
	var a metadata.Applied
	c.WaitFor("a commit with a one-way cut", 10*time.Second, func() bool {
		var err error
		l := c.Leader()
		if l < 0 {
			return false
		}
		a, err = c.Propose(l, cluster.AllocateProducerIDs{N: 1}, 500*time.Millisecond)
		return err == nil
	})
	c.HealAll()
	c.WaitConverged(a.Index, 10*time.Second)
}

func TestSingleNodeQuorum(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	n, err := metadata.StartNode(metadata.Config{NodeID: 0, Dir: dir, ClusterID: "solo"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := n.Propose(context.Background(), topicRecord("solo-topic"))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("one-voter quorum took %v to commit its first record", d)
	}
	if n.LeaderID() != 0 || !n.IsLeader() {
		t.Fatalf("leader %d", n.LeaderID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.WaitApplied(ctx, a.Index); err != nil {
		t.Fatal(err)
	}
	for n.State().ClusterID == "" {
		if ctx.Err() != nil {
			t.Fatal("no cluster id")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Propose(context.Background(), topicRecord("late")); !errors.Is(err, metadata.ErrClosed) {
		t.Fatalf("propose after close: %v", err)
	}
	n2, err := metadata.StartNode(metadata.Config{NodeID: 0, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if err := n2.WaitApplied(ctx, a.Index); err != nil {
		t.Fatal(err)
	}
	s := n2.State()
	if _, ok := s.Topic("solo-topic"); !ok || s.ClusterID != "solo" {
		t.Fatalf("state after restart: %+v", s)
	}
}

func TestParseVoters(t *testing.T) {
	got, err := metadata.ParseVoters("1@a:9093, 2@[::1]:9093,0@10.0.0.3:1")
	if err != nil {
		t.Fatal(err)
	}
	want := []metadata.Voter{{ID: 1, Addr: "a:9093"}, {ID: 2, Addr: "[::1]:9093"}, {ID: 0, Addr: "10.0.0.3:1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	if v, err := metadata.ParseVoters(""); err != nil || v != nil {
		t.Fatalf("empty: %v %v", v, err)
	}
	for _, bad := range []string{"1", "x@a:1", "-1@a:1", "1@a", "1@a:0", "1@a:1,1@b:2", "1@a:1,", "1@::1:5"} {
		if _, err := metadata.ParseVoters(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := metadata.StartNode(metadata.Config{NodeID: 4, Dir: t.TempDir(), Voters: want}); err == nil {
		t.Error("a node outside the voter list started")
	}
}

// TestGarbageOnRaftPort: a client writing nonsense to a controller's raft
// port loses its connection; the quorum goes on.
func TestGarbageOnRaftPort(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	leader := c.WaitLeader(10 * time.Second)
	for _, payload := range [][]byte{{0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 3, 1, 2, 3}} {
		conn, err := net.Dial("tcp", c.Addr(leader))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(payload); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("connection still open after a bad frame")
		}
		conn.Close()
	}
	if _, err := c.Propose(leader, topicRecord("still-fine"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestParseRoles(t *testing.T) {
	for in, want := range map[string]metadata.Roles{
		"controller,broker":  {Controller: true, Broker: true},
		"broker, controller": {Controller: true, Broker: true},
		"controller":         {Controller: true},
		"broker":             {Broker: true},
	} {
		if got, err := metadata.ParseRoles(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "both", "controller,"} {
		if _, err := metadata.ParseRoles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestAcknowledgedRecordsSurviveFailover proposes producer-id blocks from
// every node while the leader is killed and restarted: every acknowledged
// block is distinct and below the final state's next id, on every node.
func TestAcknowledgedRecordsSurviveFailover(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
		cfg.SnapshotEvery = 50
		cfg.CatchUpEntries = 10
	}})
	leader := c.WaitLeader(10 * time.Second)
	type ack struct {
		first int64
		node  int32
	}
	acks := make(chan ack, 10000)
	stop := make(chan struct{})
	done := make(chan struct{})
	workers := 0
	for _, id := range c.IDs() {
		n := c.Node(id)
		workers++
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				a, err := n.Propose(ctx, cluster.AllocateProducerIDs{N: 1})
				cancel()
				if errors.Is(err, metadata.ErrClosed) {
					return
				}
				if err == nil {
					acks <- ack{first: a.Before.NextProducerID, node: n.ID()}
				}
			}
		}()
	}
	countAcks := func(min int) {
		c.WaitFor(fmt.Sprintf("%d acknowledged proposals", min), 10*time.Second, func() bool { return len(acks) >= min })
	}
	countAcks(30)
	c.Kill(leader)
	countAcks(len(acks) + 30) // the survivors go on under a new leader
	c.Restart(leader)
	countAcks(len(acks) + 10)
	close(stop)
	for i := 0; i < workers; i++ {
		<-done
	}
	close(acks)

	final := c.WaitLeader(10 * time.Second)
	// A no-op barrier: once it is applied everywhere, all nodes agree.
	a, err := c.Propose(final, cluster.AllocateProducerIDs{N: 1}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(a.Index, 10*time.Second)
	sameState(t, c, final, 10*time.Second)
	next := c.Node(final).State().NextProducerID
	seen := map[int64]int32{}
	total := 0
	for ack := range acks {
		total++
		if other, dup := seen[ack.first]; dup {
			t.Fatalf("block %d acknowledged twice (nodes %d and %d)", ack.first, other, ack.node)
		}
		seen[ack.first] = ack.node
		if ack.first >= next {
			t.Fatalf("acknowledged block %d lost: next producer id is %d", ack.first, next)
		}
	}
	t.Logf("%d acknowledged blocks, next producer id %d", total, next)
}
