package metadata_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// controllers lists the cluster's voters as an observer's --controllers.
func controllers(c *metadatatest.Cluster) []metadata.Voter {
	var vs []metadata.Voter
	for _, id := range c.IDs() {
		vs = append(vs, metadata.Voter{ID: id, Addr: c.Addr(id)})
	}
	return vs
}

func startObserver(t *testing.T, c *metadatatest.Cluster, id int32) *metadata.Observer {
	t.Helper()
	o, err := metadata.StartObserver(metadata.ObserverConfig{NodeID: id, Controllers: controllers(c), IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// sameAs waits until m has exactly the state of voter ref.
func sameAs(t *testing.T, c *metadatatest.Cluster, m metadata.Member, ref int32, timeout time.Duration) {
	t.Helper()
	c.WaitFor(fmt.Sprintf("member %d to reach node %d's state", m.ID(), ref), timeout, func() bool {
		n := c.Node(ref)
		return n != nil && encoded(t, m.State()) == encoded(t, n.State())
	})
}

// recorder collects what a subscription delivers.
type recorder struct {
	mu  sync.Mutex
	got []metadata.Applied
}

func (r *recorder) add(a metadata.Applied) {
	r.mu.Lock()
	r.got = append(r.got, a)
	r.mu.Unlock()
}

func (r *recorder) list() []metadata.Applied {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metadata.Applied(nil), r.got...)
}

// proposeAnywhere proposes rec on the running voters until one commits it,
// riding out an election.
func proposeAnywhere(t *testing.T, c *metadatatest.Cluster, rec cluster.Record) metadata.Applied {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, id := range c.IDs() {
			if c.Node(id) == nil {
				continue
			}
			a, err := c.Propose(id, rec, 500*time.Millisecond)
			if err == nil {
				return a
			}
			if errors.Is(err, cluster.ErrRejected) {
				t.Fatalf("proposal rejected: %v", err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no voter committed the proposal")
		}
	}
}

// checkInOrder fails unless the subscription saw strictly increasing
// indices.
func checkInOrder(t *testing.T, got []metadata.Applied) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if got[i].Index <= got[i-1].Index {
			t.Fatalf("delivery %d has index %d after %d", i, got[i].Index, got[i-1].Index)
		}
	}
}

func TestObserverFollowsQuorum(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	o := startObserver(t, c, 10)
	var rec recorder
	defer o.Subscribe(rec.add)()

	var names []string
	for i := range 20 {
		name := fmt.Sprintf("t%02d", i)
		names = append(names, name)
		// From every voter in turn: followers forward to the leader.
		id := c.IDs()[i%3]
		if _, err := c.Propose(id, topicRecord(name), 5*time.Second); err != nil {
			t.Fatalf("propose on %d: %v", id, err)
		}
	}
	sameAs(t, c, o, leader, 10*time.Second)
	if o.AppliedIndex() == 0 || o.AppliedIndex() > c.Node(leader).AppliedIndex() {
		t.Fatalf("observer index %d, leader %d", o.AppliedIndex(), c.Node(leader).AppliedIndex())
	}
	if o.LeaderID() != leader {
		t.Fatalf("observer reports leader %d, want %d", o.LeaderID(), leader)
	}
	c.WaitFor("the subscriber to see every topic", 5*time.Second, func() bool {
		n := 0
		for _, a := range rec.list() {
			if _, ok := a.Record.(cluster.CreateTopic); ok {
				n++
			}
		}
		return n == len(names)
	})
	got := rec.list()
	checkInOrder(t, got)
	var order []string
	for _, a := range got {
		if a.Snapshot {
			t.Fatal("an observer of a fresh quorum got a snapshot")
		}
		if ct, ok := a.Record.(cluster.CreateTopic); ok {
			order = append(order, ct.Name)
			if _, ok := a.After.Topic(ct.Name); !ok {
				t.Fatalf("After of %s lacks the topic", ct.Name)
			}
		}
	}
	if fmt.Sprint(order) != fmt.Sprint(names) {
		t.Fatalf("records out of order: %v", order)
	}
	// Raft between the voters is unaffected by the observer connection.
	if _, err := c.Propose(leader, topicRecord("after-observer"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	sameState(t, c, leader, 5*time.Second)
}

func TestObserverPropose(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	c.WaitLeader(10 * time.Second)
	o := startObserver(t, c, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	a, err := o.Propose(ctx, topicRecord("from-observer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.State().Topic("from-observer"); !ok || o.AppliedIndex() < a.Index {
		t.Fatal("Propose returned before the observer applied the record")
	}
	if ct, ok := a.Record.(cluster.CreateTopic); !ok || ct.Name != "from-observer" {
		t.Fatalf("Applied record %#v", a.Record)
	}
	if _, ok := a.Before.Topic("from-observer"); ok {
		t.Fatal("Before already has the topic")
	}
	c.WaitConverged(a.Index, 5*time.Second)
	for _, id := range c.IDs() {
		if _, ok := c.Node(id).State().Topic("from-observer"); !ok {
			t.Fatalf("voter %d lacks the observer's topic", id)
		}
	}

	// Rejections keep their sentinels across the wire.
	_, err = o.Propose(ctx, topicRecord("from-observer"))
	if !errors.Is(err, cluster.ErrTopicExists) || !errors.Is(err, cluster.ErrRejected) {
		t.Fatalf("duplicate topic: %v", err)
	}
	if _, err = o.Propose(ctx, cluster.DeleteTopic{Name: "missing"}); !errors.Is(err, cluster.ErrTopicNotFound) {
		t.Fatalf("delete of a missing topic: %v", err)
	}
	if _, err = o.Propose(ctx, cluster.BrokerHeartbeat{NodeID: 10, IncarnationID: "inc-1", TimeMs: 1}); !errors.Is(err, cluster.ErrBrokerNotRegistered) {
		t.Fatalf("heartbeat of an unregistered broker: %v", err)
	}
	if _, err = o.Propose(ctx, cluster.RegisterBroker{NodeID: 10, IncarnationID: "inc-1", Addr: "127.0.0.1:9092", TimeMs: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err = o.Propose(ctx, cluster.BrokerHeartbeat{NodeID: 10, IncarnationID: "inc-0", TimeMs: 2}); !errors.Is(err, cluster.ErrStaleIncarnation) {
		t.Fatalf("heartbeat of a stale incarnation: %v", err)
	}
	if errors.Is(err, cluster.ErrTopicExists) {
		t.Fatal("a stale incarnation matches ErrTopicExists")
	}

	// Before is the state just before the record, as on a voter.
	p1, err := o.Propose(ctx, cluster.AllocateProducerIDs{N: 100})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := o.Propose(ctx, cluster.AllocateProducerIDs{N: 100})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Before.NextProducerID != p1.Before.NextProducerID+100 || p2.After.NextProducerID != p2.Before.NextProducerID+100 {
		t.Fatalf("producer id blocks: %d then %d", p1.Before.NextProducerID, p2.Before.NextProducerID)
	}
	sameAs(t, c, o, c.WaitLeader(5*time.Second), 5*time.Second)
}

func TestObserverMember(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	c.WaitLeader(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := metadata.OpenObserver(ctx, metadata.ObserverConfig{NodeID: 10, Controllers: controllers(c)})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var m metadata.Member = o
	if _, isNode := m.(*metadata.Node); isNode {
		t.Fatal("an observer is a raft node")
	}
	if m.State().ClusterID != c.Node(c.IDs()[0]).State().ClusterID {
		t.Fatalf("cluster id %q", m.State().ClusterID)
	}
	memberContract(t, m)
	sameAs(t, c, m, c.WaitLeader(5*time.Second), 5*time.Second)
}

func TestObserverReconnects(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	c.WaitLeader(10 * time.Second)
	o := startObserver(t, c, 10)
	var seen recorder
	defer o.Subscribe(seen.add)()
	for i := range 10 {
		proposeAnywhere(t, c, topicRecord(fmt.Sprintf("a%02d", i)))
	}
	c.WaitFor("the observer to connect", 5*time.Second, func() bool { return o.Controller() >= 0 })
	first := o.Controller()
	// A voter that stays up records the whole log, for comparison.
	var survivor int32 = -1
	for _, id := range c.IDs() {
		if id != first {
			survivor = id
			break
		}
	}
	var want recorder
	defer c.Node(survivor).Subscribe(want.add)()
	sameAs(t, c, o, survivor, 10*time.Second)
	start := o.AppliedIndex()

	c.Kill(first)
	for i := range 10 {
		proposeAnywhere(t, c, topicRecord(fmt.Sprintf("b%02d", i)))
	}
	c.WaitFor("the observer to reconnect", 10*time.Second, func() bool {
		ctl := o.Controller()
		return ctl >= 0 && ctl != first
	})
	// The observer can propose through its new controller.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := o.Propose(ctx, topicRecord("via-new-controller")); err != nil {
		t.Fatal(err)
	}
	sameAs(t, c, o, survivor, 10*time.Second)
	if o.SnapshotsInstalled() != 0 {
		t.Fatalf("%d snapshots for a short outage", o.SnapshotsInstalled())
	}

	// Exactly the voter's records after start, once each, in order.
	c.WaitFor("the subscriptions to drain", 5*time.Second, func() bool {
		w, g := want.list(), seen.list()
		return len(w) > 0 && len(g) > 0 && w[len(w)-1].Index == g[len(g)-1].Index
	})
	var wantIdx, gotIdx []uint64
	for _, a := range want.list() {
		if a.Index > start {
			wantIdx = append(wantIdx, a.Index)
		}
	}
	got := seen.list()
	checkInOrder(t, got)
	for _, a := range got {
		if a.Index > start {
			gotIdx = append(gotIdx, a.Index)
		}
	}
	if fmt.Sprint(gotIdx) != fmt.Sprint(wantIdx) {
		t.Fatalf("observer records after %d: %v; voter's: %v", start, gotIdx, wantIdx)
	}
	if len(gotIdx) < 11 {
		t.Fatalf("only %d records after the kill", len(gotIdx))
	}
}

// TestObserverSnapshotCatchUp: an observer that starts after more records
// than the controllers' rings hold gets a snapshot, delivered to its
// subscribers as Applied{Snapshot: true}, then records.
func TestObserverSnapshotCatchUp(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.ObserverRing = 8
	}})
	leader := c.WaitLeader(10 * time.Second)
	for i := range 40 {
		if _, err := c.Propose(leader, topicRecord(fmt.Sprintf("old%02d", i)), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// A silent "controller" listed first holds the observer until the
	// test has subscribed.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if conn, err := silent.Accept(); err == nil {
			accepted <- conn
		}
	}()
	cfg := metadata.ObserverConfig{NodeID: 10, Controllers: append([]metadata.Voter{{ID: 99, Addr: silent.Addr().String()}}, controllers(c)...)}
	o, err := metadata.StartObserver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var rec recorder
	defer o.Subscribe(rec.add)()
	select {
	case conn := <-accepted:
		conn.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the observer did not dial the first controller")
	}

	sameAs(t, c, o, leader, 10*time.Second)
	if o.SnapshotsInstalled() != 1 {
		t.Fatalf("snapshots installed: %d, want 1", o.SnapshotsInstalled())
	}
	got := rec.list()
	c.WaitFor("the snapshot delivery", 5*time.Second, func() bool { got = rec.list(); return len(got) > 0 })
	// The controller may serve a state a few records short of the
	// latest (its hub follows its applied records): the rest follow as
	// records.
	if !got[0].Snapshot || got[0].Record != nil || len(got[0].After.Topics) < 40-16 || len(got[0].Before.Topics) != 0 {
		t.Fatalf("first delivery: snapshot %v, %d topics", got[0].Snapshot, len(got[0].After.Topics))
	}
	from := got[0].Index
	for i := range 5 {
		if _, err := c.Propose(leader, topicRecord(fmt.Sprintf("new%02d", i)), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	sameAs(t, c, o, leader, 10*time.Second)
	c.WaitFor("five records after the snapshot", 5*time.Second, func() bool {
		n := 0
		for _, a := range rec.list() {
			if ct, ok := a.Record.(cluster.CreateTopic); ok && a.Index > from && ct.Name[:3] == "new" {
				n++
			}
		}
		return n == 5
	})
	checkInOrder(t, rec.list())
	if o.SnapshotsInstalled() != 1 {
		t.Fatalf("snapshots installed: %d, want 1", o.SnapshotsInstalled())
	}
}

// TestObserverBadHandshake: a connection with the observer magic and a
// bad hello is closed; raft between the voters goes on.
func TestObserverBadHandshake(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	conn, err := net.Dial("tcp", c.Addr(leader))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := binary.BigEndian.AppendUint32(nil, 'S'<<24|'O'<<16|'B'<<8|'1')
	msg = binary.BigEndian.AppendUint32(msg, 3) // a frame too short for a hello
	msg = append(msg, 'H', 9, 9)
	if _, err := conn.Write(msg); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 256)
	n, _ := conn.Read(buf)
	if n < 5 || buf[4] != 'E' {
		t.Fatalf("controller answered %q, want an error frame", buf[:n])
	}
	if _, err := conn.Read(buf); err == nil {
		t.Fatal("connection still open after a bad hello")
	}
	if _, err := c.Propose(leader, topicRecord("still-fine"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	sameState(t, c, leader, 5*time.Second)
}

// TestObserverLeavesIsolatedController: a controller cut off from the
// quorum knows no leader and falls behind; the observer moves on to one
// that follows the quorum.
func TestObserverLeavesIsolatedController(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	c.WaitLeader(10 * time.Second)
	o, err := metadata.StartObserver(metadata.ObserverConfig{NodeID: 10, Controllers: controllers(c), IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	c.WaitFor("the observer to connect", 5*time.Second, func() bool { return o.Controller() >= 0 })
	cut := o.Controller()
	c.Isolate(cut)
	var last metadata.Applied
	for i := range 5 {
		last = proposeAnywhere(t, c, topicRecord(fmt.Sprintf("while-cut-%d", i)))
	}
	c.WaitFor("the observer to leave the isolated controller", 10*time.Second, func() bool {
		return o.Controller() >= 0 && o.Controller() != cut
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.WaitApplied(ctx, last.Index); err != nil {
		t.Fatal(err)
	}
	if _, ok := o.State().Topic("while-cut-4"); !ok {
		t.Fatal("observer lacks the records committed while its controller was cut off")
	}
	if c.Node(cut).AppliedIndex() >= last.Index {
		t.Fatal("the isolated controller applied records: the test proves nothing")
	}
}

// TestObserverOfLoneController: a one-voter quorum given a raft address
// listens there for observers.
func TestObserverOfLoneController(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctl, err := metadata.OpenNode(ctx, metadata.Config{NodeID: 1, Dir: t.TempDir(), ListenAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	obs, err := metadata.OpenObserver(ctx, metadata.ObserverConfig{NodeID: 2, Controllers: []metadata.Voter{{ID: 1, Addr: addr}}})
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	if obs.State().ClusterID != ctl.State().ClusterID {
		t.Fatalf("cluster ids %q and %q", obs.State().ClusterID, ctl.State().ClusterID)
	}
	if _, err := obs.Propose(ctx, cluster.CreateTopic{Name: "t", ID: cluster.TopicID(metadata.NewTopicID()), Partitions: onNode(1, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.WaitApplied(ctx, obs.AppliedIndex()); err != nil {
		t.Fatal(err)
	}
	if got := ctl.State().Topics; len(got) != 1 || len(got["t"].Partitions) != 2 {
		t.Fatalf("controller topics: %+v", got)
	}
	if obs.LeaderID() != 1 {
		t.Fatalf("observer's leader: %d", obs.LeaderID())
	}
}

// TestObserverLearnsControllers: an observer started with --controllers
// 1,2,3 keeps following after the quorum became 3,4,5 with node 3 moved
// to a new address: none of the addresses it was started with answers,
// so it can only use what the log taught it (SetControllers,
// UpdateController).
func TestObserverLearnsControllers(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{})
	c.WaitLeader(10 * time.Second)
	o := startObserver(t, c, 10)
	proposeAnywhere(t, c, topicRecord("before"))
	for _, id := range []int32{4, 5} {
		addr := c.Join(id)
		leader := c.WaitLeader(10 * time.Second)
		if err := c.Node(leader).AddVoter(ctxFor(t, 20*time.Second), id, addr, [16]byte{byte(id)}); err != nil {
			t.Fatalf("AddVoter(%d): %v", id, err)
		}
	}
	for _, id := range []int32{1, 2} {
		leader := c.WaitLeader(10 * time.Second)
		if err := c.Node(leader).RemoveVoter(ctxFor(t, 20*time.Second), id, [16]byte{}); err != nil {
			t.Fatalf("RemoveVoter(%d): %v", id, err)
		}
		c.Kill(id)
	}
	waitVoters(t, c, []int32{3, 4, 5}, []int32{3, 4, 5})
	c.Kill(3)
	newAddr := c.Move(3)
	c.Restart(3)
	var leader int32
	c.WaitFor("a leader among 4 and 5", 20*time.Second, func() bool {
		leader = c.Leader()
		return leader == 4 || leader == 5
	})
	if err := c.Node(leader).UpdateVoter(ctxFor(t, 20*time.Second), metadata.VoterUpdate{ID: 3, DirectoryID: [16]byte{3}, Addr: newAddr}); err != nil {
		t.Fatalf("UpdateVoter(3, %s): %v", newAddr, err)
	}
	for i := range 5 {
		proposeAnywhere(t, c, topicRecord(fmt.Sprintf("after%d", i)))
	}
	sameAs(t, c, o, leader, 30*time.Second)
	if ctl := o.Controller(); ctl < 3 || ctl > 5 {
		t.Fatalf("observer follows controller %d, want one of 3, 4, 5", ctl)
	}
	// Its proposals go through the learned controllers too.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := o.Propose(ctx, topicRecord("from-observer")); err != nil {
		t.Fatal(err)
	}
}
