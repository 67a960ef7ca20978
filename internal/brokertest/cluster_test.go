package brokertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerIDsAt asks the broker at addr for its Metadata and returns the
// node ids it lists.
func brokerIDsAt(t *testing.T, addr string) map[int32]bool {
	t.Helper()
	ids, _ := metadataAt(t, addr)
	return ids
}

// controllerAt asks the broker at addr which node is the controller.
func controllerAt(t *testing.T, addr string) int32 {
	t.Helper()
	_, controller := metadataAt(t, addr)
	return controller
}

// metadataAt asks the broker at addr for its Metadata: the node ids it
// lists and the controller id.
func metadataAt(t *testing.T, addr string) (map[int32]bool, int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatalf("metadata from %s: %v", addr, err)
	}
	md := resp.(*kmsg.MetadataResponse)
	ids := map[int32]bool{}
	for _, b := range md.Brokers {
		ids[b.NodeID] = true
	}
	return ids, md.ControllerID
}

// TestClusterSmoke starts three nodes, checks each serves as its own node
// id, crashes and restarts one and stops one cleanly.
func TestClusterSmoke(t *testing.T) {
	c := StartCluster(t, 3)
	if len(c.Nodes) != 3 || len(c.links) != 6 {
		t.Fatalf("%d nodes, %d raft links; want 3 and 6", len(c.Nodes), len(c.links))
	}
	for i, b := range c.Nodes {
		if !b.Running() {
			t.Fatalf("node %d not running after StartCluster", i+1)
		}
		if ids := brokerIDsAt(t, b.Addr); !ids[int32(i+1)] {
			t.Fatalf("node %d's Metadata lists brokers %v, not itself", i+1, ids)
		}
	}

	c.Kill(2)
	if c.Node(2).Running() {
		t.Fatal("node 2 running after Kill")
	}
	if got := c.Node(2).ExitStatus(); got != "signal: killed" {
		t.Fatalf("node 2 after Kill: %s, want signal: killed", got)
	}
	c.Restart(2)
	if !c.Node(2).Running() {
		t.Fatal("node 2 not running after Restart")
	}

	if err := c.Stop(3); err != nil {
		t.Fatalf("Stop(3): %v", err)
	}
	if code := c.Node(3).ExitCode(); code != 0 {
		t.Fatalf("node 3 exit code %d after SIGTERM", code)
	}
	c.Restart(3)
}

// TestClusterIsolateController cuts the raft leader (the controller
// Metadata reports) off from the others: they elect another one, and after
// HealAll all three agree on one controller again.
func TestClusterIsolateController(t *testing.T) {
	c := StartCluster(t, 3)
	old := controllerAt(t, c.Node(1).Addr)
	if old < 1 || old > 3 {
		t.Fatalf("Metadata names controller %d", old)
	}
	c.Isolate(old)
	var majority []int32
	for id := int32(1); id <= 3; id++ {
		if id != old {
			majority = append(majority, id)
		}
	}
	WaitFor(t, 20*time.Second, fmt.Sprintf("nodes %v to elect a controller other than the isolated %d", majority, old), func() bool {
		a, b := controllerAt(t, c.Node(majority[0]).Addr), controllerAt(t, c.Node(majority[1]).Addr)
		return a == b && a != old && a >= 1
	})
	c.HealAll()
	WaitFor(t, 20*time.Second, "all three nodes to agree on the controller after HealAll", func() bool {
		first := controllerAt(t, c.Node(1).Addr)
		return first >= 1 && controllerAt(t, c.Node(2).Addr) == first && controllerAt(t, c.Node(3).Addr) == first
	})
}

// TestClusterIsolatedNodeWaitsForHeal starts a cluster whose node 3 has
// every raft link cut: nodes 1 and 2 form the quorum and serve, node 3
// cannot learn the cluster from them and so must not serve until HealAll.
func TestClusterIsolatedNodeWaitsForHeal(t *testing.T) {
	c := newCluster(t, 3, nil)
	c.Isolate(3)
	for _, peer := range []int32{1, 2} {
		if !c.links[link{3, peer}].IsCut() || !c.links[link{peer, 3}].IsCut() {
			t.Fatalf("Isolate(3) left a link with node %d up", peer)
		}
		if c.links[link{1, 2}].IsCut() || c.links[link{2, 1}].IsCut() {
			t.Fatal("Isolate(3) cut the link between nodes 1 and 2")
		}
	}
	for _, b := range c.Nodes {
		if err := b.launch(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int32{1, 2} {
		if err := c.Node(id).awaitReady(30 * time.Second); err != nil {
			t.Fatalf("majority node %d: %v", id, err)
		}
	}
	if err := c.Node(3).awaitReady(3 * time.Second); err == nil {
		t.Fatal("node 3 served while every raft link to it was cut")
	}
	c.HealAll()
	if err := c.Node(3).awaitReady(30 * time.Second); err != nil {
		t.Fatalf("node 3 after HealAll: %v", err)
	}
	WaitFor(t, 10*time.Second, "node 3 to list itself in Metadata", func() bool {
		return brokerIDsAt(t, c.Node(3).Addr)[3]
	})
}

func TestWaitForPolls(t *testing.T) {
	calls := 0
	WaitFor(t, 5*time.Second, "three polls", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3", calls)
	}
}
