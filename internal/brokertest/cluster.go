package brokertest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Cluster is n `strata server` processes forming one metadata quorum. Node
// ids are 1..n; Nodes[i] is node i+1.
//
// Every raft link passes through a Proxy owned by the harness: node i's
// --controllers entry for a peer j is the address of the proxy for the
// directed link i→j, which forwards to j's real --controller-listen (node
// i's own entry is its real listener). Raft sends each message one way, over
// a connection the sender dials, so cutting the link i→j stops exactly the
// messages from i to j. Kafka traffic between brokers (replica fetches)
// does not pass through the proxies.
type Cluster struct {
	t     testing.TB
	Nodes []*Broker

	raftAddrs []string        // real --controller-listen of node i+1
	links     map[link]*Proxy // every directed raft link between two nodes
}

type link struct{ from, to int32 }

// StartCluster starts n nodes concurrently (a node only serves once a raft
// majority is up) with extraFlags added to each, and waits until all serve.
// The test's cleanup kills every process, closes the proxies and, if the
// test failed, logs every process's output.
func StartCluster(t testing.TB, n int, extraFlags ...string) *Cluster {
	t.Helper()
	c := newCluster(t, n, extraFlags)
	c.launchAndAwait(c.ids())
	return c
}

// newCluster prepares the proxies and nodes of StartCluster without
// starting any process.
func newCluster(t testing.TB, n int, extraFlags []string) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("brokertest: StartCluster(%d): need at least one node", n)
	}
	c := &Cluster{t: t, links: map[link]*Proxy{}}
	for range n {
		c.raftAddrs = append(c.raftAddrs, FreeAddr(t))
	}
	for from := int32(1); from <= int32(n); from++ {
		for to := int32(1); to <= int32(n); to++ {
			if from == to {
				continue
			}
			p, err := NewProxy(c.raftAddrs[to-1])
			if err != nil {
				t.Fatalf("brokertest: %v", err)
			}
			// Registered before the nodes' cleanups, so it runs after them.
			t.Cleanup(func() { _ = p.Close() })
			c.links[link{from, to}] = p
		}
	}
	for id := int32(1); id <= int32(n); id++ {
		voters := make([]string, 0, n)
		for peer := int32(1); peer <= int32(n); peer++ {
			addr := c.raftAddrs[peer-1]
			if peer != id {
				addr = c.links[link{id, peer}].Addr()
			}
			voters = append(voters, fmt.Sprintf("%d@%s", peer, addr))
		}
		flags := append([]string{
			"--node-id", fmt.Sprint(id),
			"--controllers", strings.Join(voters, ","),
			"--controller-listen", c.raftAddrs[id-1],
		}, extraFlags...)
		c.Nodes = append(c.Nodes, newBroker(t, fmt.Sprintf("node %d", id), flags))
	}
	return c
}

func (c *Cluster) ids() []int32 {
	ids := make([]int32, len(c.Nodes))
	for i := range c.Nodes {
		ids[i] = int32(i + 1)
	}
	return ids
}

// launchAndAwait starts the given nodes together and then waits until each
// serves, all within one startTimeout.
func (c *Cluster) launchAndAwait(ids []int32) {
	c.t.Helper()
	for _, id := range ids {
		if err := c.Node(id).launch(); err != nil {
			c.t.Fatalf("brokertest: %v", err)
		}
	}
	deadline := time.Now().Add(startTimeout)
	for _, id := range ids {
		if err := c.Node(id).awaitReady(time.Until(deadline)); err != nil {
			c.t.Fatalf("brokertest: %v", err)
		}
	}
}

// Node returns node id (1-based).
func (c *Cluster) Node(id int32) *Broker {
	c.t.Helper()
	if id < 1 || int(id) > len(c.Nodes) {
		c.t.Fatalf("brokertest: no node %d in a %d-node cluster", id, len(c.Nodes))
	}
	return c.Nodes[id-1]
}

// Bootstrap is every node's Kafka address, comma-separated.
func (c *Cluster) Bootstrap() string {
	return strings.Join(c.Addrs(), ",")
}

// Addrs returns the Kafka addresses of the given nodes, or of every node
// when ids is empty.
func (c *Cluster) Addrs(ids ...int32) []string {
	c.t.Helper()
	if len(ids) == 0 {
		ids = c.ids()
	}
	addrs := make([]string, 0, len(ids))
	for _, id := range ids {
		addrs = append(addrs, c.Node(id).Addr)
	}
	return addrs
}

// RaftAddr is node id's real --controller-listen address.
func (c *Cluster) RaftAddr(id int32) string {
	c.t.Helper()
	c.Node(id)
	return c.raftAddrs[id-1]
}

// Kill ends node id with SIGKILL, as a crash would, and waits until it is
// gone.
func (c *Cluster) Kill(id int32) {
	c.t.Helper()
	c.Node(id).Kill()
}

// Restart starts node id again on its ports, raft address and data
// directory, and waits until it serves (which needs a raft majority).
func (c *Cluster) Restart(id int32) {
	c.t.Helper()
	c.launchAndAwait([]int32{id})
}

// RestartAll starts every node that is not running, concurrently, and waits
// until each serves.
func (c *Cluster) RestartAll() {
	c.t.Helper()
	var down []int32
	for _, id := range c.ids() {
		if !c.Node(id).Running() {
			down = append(down, id)
		}
	}
	c.launchAndAwait(down)
}

// Stop sends node id SIGTERM and waits for it to exit. It returns an error
// if the process did not exit within the stop timeout (it is then killed)
// or exited with a status other than 0.
func (c *Cluster) Stop(id int32) error {
	c.t.Helper()
	b := c.Node(id)
	if err := b.stop(); err != nil {
		b.Kill()
		return err
	}
	if code := b.ExitCode(); code != 0 {
		return fmt.Errorf("brokertest: %s: %s", b.name, b.ExitStatus())
	}
	return nil
}

// Cut drops the raft link from node from to node to (one direction): live
// connections close and new ones fail until Heal.
func (c *Cluster) Cut(from, to int32) {
	c.t.Helper()
	c.link(from, to).Cut()
}

// Heal restores the raft link from node from to node to.
func (c *Cluster) Heal(from, to int32) {
	c.t.Helper()
	c.link(from, to).Heal()
}

// Isolate cuts node id's raft links with every other node, both ways.
func (c *Cluster) Isolate(id int32) {
	c.t.Helper()
	for _, peer := range c.ids() {
		if peer != id {
			c.Cut(id, peer)
			c.Cut(peer, id)
		}
	}
}

// HealAll restores every raft link.
func (c *Cluster) HealAll() {
	for _, p := range c.links {
		p.Heal()
	}
}

func (c *Cluster) link(from, to int32) *Proxy {
	c.t.Helper()
	c.Node(from)
	c.Node(to)
	p, ok := c.links[link{from, to}]
	if !ok {
		c.t.Fatalf("brokertest: no raft link from node %d to itself", from)
	}
	return p
}

// WaitFor polls cond every 50 ms until it holds, and fails the test, naming
// what it waited for, if timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("brokertest: gave up after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
