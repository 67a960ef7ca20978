package metadata_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// TestControllerStepFencesWithInjectedClock drives the controller by hand
// on a one-voter quorum (node 9, which is not one of the brokers: its own
// broker would count as alive): fencing and unfencing follow the fake clock, and
// a subscriber sees every record in log order.
func TestControllerStepFencesWithInjectedClock(t *testing.T) {
	clock := metadatatest.NewFakeClock(time.UnixMilli(1_000_000))
	n, err := metadata.StartNode(metadata.Config{NodeID: 9, Dir: t.TempDir(), Clock: clock, DisableController: true,
		SessionTimeout: 9 * time.Second, ClusterID: "fenced"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var (
		mu   sync.Mutex
		seen []metadata.Applied
	)
	stop := n.Subscribe(func(a metadata.Applied) {
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
	})
	defer stop()

	propose := func(r cluster.Record) metadata.Applied {
		t.Helper()
		a, err := n.Propose(ctx, r)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		return a
	}
	step := func() {
		t.Helper()
		if err := n.ControllerStep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now := func() int64 { return clock.Now().UnixMilli() }
	for !n.IsLeader() { // a one-voter quorum elects itself on its first ready
		if ctx.Err() != nil {
			t.Fatal("no leader")
		}
		time.Sleep(time.Millisecond)
	}
	step()
	if n.State().ClusterID != "fenced" {
		t.Fatalf("cluster id %q", n.State().ClusterID)
	}
	propose(cluster.RegisterBroker{NodeID: 0, IncarnationID: "i0", Addr: "127.0.0.1:9092", TimeMs: now()})
	propose(cluster.RegisterBroker{NodeID: 1, IncarnationID: "i1", Addr: "127.0.0.1:9093", TimeMs: now()})
	propose(cluster.CreateTopic{Name: "t", ID: cluster.TopicID{1}, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{0, 1}}}})

	clock.Advance(5 * time.Second)
	propose(cluster.BrokerHeartbeat{NodeID: 1, IncarnationID: "i1", TimeMs: now()})
	step()
	if !n.State().Live(0) {
		t.Fatal("fenced before the session timeout")
	}
	clock.Advance(4*time.Second + time.Millisecond)
	step()
	s := n.State()
	if s.Live(0) || !s.Live(1) {
		t.Fatalf("after timeout: broker 0 live %v, broker 1 live %v", s.Live(0), s.Live(1))
	}
	if p := s.Topics["t"].Partitions[0]; p.Leader != 1 || len(p.ISR) != 1 || p.LeaderEpoch != 1 {
		t.Fatalf("partition after fencing: %+v", p)
	}
	propose(cluster.BrokerHeartbeat{NodeID: 0, IncarnationID: "i0", TimeMs: now()})
	step()
	if !n.State().Live(0) {
		t.Fatal("not unfenced after a heartbeat")
	}

	var types []cluster.RecordType
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		types = types[:0]
		for _, a := range seen {
			types = append(types, a.Record.Type())
		}
		mu.Unlock()
		if len(types) >= 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := []cluster.RecordType{cluster.TypeInitCluster, cluster.TypeRegisterBroker, cluster.TypeRegisterBroker,
		cluster.TypeCreateTopic, cluster.TypeBrokerHeartbeat, cluster.TypeFenceBroker, cluster.TypeBrokerHeartbeat, cluster.TypeUnfenceBroker}
	if len(types) != len(want) {
		t.Fatalf("subscriber saw %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("subscriber saw %v, want %v", types, want)
		}
	}
	mu.Lock()
	fence := seen[5]
	mu.Unlock()
	if fence.Before.Topics["t"].Partitions[0].Leader != 0 || fence.After.Topics["t"].Partitions[0].Leader != 1 {
		t.Fatal("the fence record's before/after states do not show the leadership move")
	}
}

// TestControllerLoopSurvivesFailover: the controller runs on whichever node
// leads; a broker that stops heartbeating is fenced, and after the leader
// dies the next leader's controller unfences it when it returns.
func TestControllerLoopSurvivesFailover(t *testing.T) {
	clock := metadatatest.NewFakeClock(time.UnixMilli(5_000_000))
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
		cfg.ControllerInterval = 50 * time.Millisecond
		cfg.SessionTimeout = 2 * time.Second
		cfg.Clock = clock
	}})
	leader := c.WaitLeader(10 * time.Second)
	now := func() int64 { return clock.Now().UnixMilli() }
	if _, err := c.Propose(leader, cluster.RegisterBroker{NodeID: 7, IncarnationID: "x", Addr: "127.0.0.1:1234", TimeMs: now()}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2500 * time.Millisecond)
	c.WaitFor("broker 7 fenced everywhere", 5*time.Second, func() bool {
		for _, id := range c.IDs() {
			if c.Node(id).State().Live(7) {
				return false
			}
		}
		return true
	})
	c.Kill(leader)
	next := c.WaitLeader(10 * time.Second)
	if _, err := c.Propose(next, cluster.BrokerHeartbeat{NodeID: 7, IncarnationID: "x", TimeMs: now()}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("broker 7 unfenced by the new leader's controller", 5*time.Second, func() bool { return c.Node(next).State().Live(7) })
}

// TestCloseWithBlockedSubscriber: a subscriber that proposes from its
// callback does not deadlock Close.
func TestCloseWithBlockedSubscriber(t *testing.T) {
	n, err := metadata.StartNode(metadata.Config{NodeID: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{}, 1)
	n.Subscribe(func(a metadata.Applied) {
		select {
		case entered <- struct{}{}:
		default:
		}
		// Proposes with no deadline: only Close can end this.
		_, _ = n.Propose(context.Background(), cluster.AllocateProducerIDs{N: 1})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := n.Propose(ctx, cluster.AllocateProducerIDs{N: 1}); err != nil {
		t.Fatal(err)
	}
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a subscriber blocked in Propose")
	}
}

// TestControllerPreferredLeaderRebalance: with the rebalance on, the
// controller gives a partition back to its first replica once that replica
// is eligible and in the ISR, at most once per check interval of the
// injected clock; a zero interval means the 5 s default; with the
// rebalance disabled it never does.
func TestControllerPreferredLeaderRebalance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		disable  bool
		// restoredAfter is the clock advance after which the leader is back
		// on replica 0 (0: never).
		restoredAfter time.Duration
	}{
		{name: "default interval", interval: 0, restoredAfter: metadata.DefaultLeaderImbalanceCheckInterval},
		{name: "negative interval takes the default", interval: -time.Second, restoredAfter: 5 * time.Second},
		{name: "custom interval", interval: 2 * time.Second, restoredAfter: 2 * time.Second},
		{name: "disabled", interval: time.Second, disable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := metadatatest.NewFakeClock(time.UnixMilli(1_000_000))
			n, err := metadata.StartNode(metadata.Config{NodeID: 0, Dir: t.TempDir(), Clock: clock, DisableController: true,
				SessionTimeout: time.Hour, ClusterID: "rebalance",
				LeaderImbalanceCheckInterval: tc.interval, DisableAutoLeaderRebalance: tc.disable})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			propose := func(r cluster.Record) {
				t.Helper()
				if _, err := n.Propose(ctx, r); err != nil {
					t.Fatalf("%T: %v", r, err)
				}
			}
			step := func() {
				t.Helper()
				if err := n.ControllerStep(ctx); err != nil {
					t.Fatal(err)
				}
			}
			leader := func() int32 { return n.State().Topics["t"].Partitions[0].Leader }
			for !n.IsLeader() {
				if ctx.Err() != nil {
					t.Fatal("no leader")
				}
				time.Sleep(time.Millisecond)
			}
			// The first step runs the (empty) rebalance check: the interval starts now.
			step()
			now := clock.Now().UnixMilli()
			propose(cluster.RegisterBroker{NodeID: 0, IncarnationID: "i0", Addr: "127.0.0.1:9092", TimeMs: now})
			propose(cluster.RegisterBroker{NodeID: 1, IncarnationID: "i1", Addr: "127.0.0.1:9093", TimeMs: now})
			propose(cluster.CreateTopic{Name: "t", ID: cluster.TopicID{1}, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{0, 1}}}})
			// Broker 0 leaves (controlled shutdown) and comes back as a new
			// incarnation that catches up into the ISR.
			propose(cluster.ControlledShutdown{NodeID: 0, IncarnationID: "i0"})
			if leader() != 1 || n.State().LeadersOn(0) != 0 {
				t.Fatalf("leader after shutdown: %d", leader())
			}
			propose(cluster.RegisterBroker{NodeID: 0, IncarnationID: "i0b", Addr: "127.0.0.1:9092", TimeMs: now})
			p := n.State().Topics["t"].Partitions[0]
			propose(cluster.AlterPartition{Topic: "t", Partition: 0, PartitionEpoch: p.PartitionEpoch, LeaderEpoch: p.LeaderEpoch, NewISR: []int32{1, 0}})

			step()
			if leader() != 1 {
				t.Fatalf("rebalanced before the interval: leader %d", leader())
			}
			if tc.restoredAfter == 0 {
				for range 3 {
					clock.Advance(time.Minute)
					step()
				}
				if leader() != 1 {
					t.Fatalf("rebalanced while disabled: leader %d", leader())
				}
				return
			}
			clock.Advance(tc.restoredAfter - time.Millisecond)
			step()
			if leader() != 1 {
				t.Fatalf("rebalanced %v early: leader %d", time.Millisecond, leader())
			}
			clock.Advance(time.Millisecond)
			step()
			if leader() != 0 {
				t.Fatalf("not rebalanced after %v: leader %d", tc.restoredAfter, leader())
			}
		})
	}
}
