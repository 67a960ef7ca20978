// Package metadatatest runs controller quorums in-process for tests: N
// metadata.Nodes on loopback TCP (or an in-memory network) with fault
// injection, killing and restarting nodes with their data intact, and
// waiting for conditions.
package metadatatest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Options configure a Cluster.
type Options struct {
	// Memory uses an in-memory network instead of loopback TCP.
	Memory bool
	// Config adjusts each node's configuration before it starts.
	Config func(*metadata.Config)
}

// Cluster is a quorum of nodes with ids 1..n.
type Cluster struct {
	t      testing.TB
	opts   Options
	Faults *metadata.Faults
	mem    *metadata.MemNetwork
	voters []metadata.Voter

	mu      sync.Mutex
	members map[int32]*member
}

type member struct {
	dir  string
	addr string
	join bool           // started by Join: not in the bootstrap voters
	node *metadata.Node // nil while down
}

// NewCluster starts n nodes and stops them when the test ends.
func NewCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, opts: opts, Faults: &metadata.Faults{}, members: map[int32]*member{}}
	if opts.Memory {
		c.mem = &metadata.MemNetwork{Faults: c.Faults}
	}
	listeners := map[int32]net.Listener{}
	base := t.TempDir()
	for i := 1; i <= n; i++ {
		id := int32(i)
		m := &member{dir: filepath.Join(base, fmt.Sprintf("node-%d", id))}
		if !opts.Memory {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			listeners[id] = ln
			m.addr = ln.Addr().String()
		} else {
			m.addr = fmt.Sprintf("mem-%d:1", id)
		}
		c.members[id] = m
		c.voters = append(c.voters, metadata.Voter{ID: id, Addr: m.addr})
	}
	for id := int32(1); id <= int32(n); id++ {
		if err := c.start(id, listeners[id]); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.StopAll)
	return c
}

func (c *Cluster) start(id int32, ln net.Listener) error {
	m := c.members[id]
	cfg := metadata.Config{NodeID: id, Voters: c.voters, Dir: m.dir, Join: m.join}
	if m.join {
		cfg.ListenAddr = m.addr
	}
	if c.opts.Config != nil {
		c.opts.Config(&cfg)
	}
	if c.mem != nil {
		cfg.Transport = c.mem.Transport(id)
	} else {
		if ln == nil {
			var err error
			// The port was ours a moment ago; retry briefly in case the
			// old listener's close has not settled.
			for attempt := 0; ; attempt++ {
				if ln, err = net.Listen("tcp", m.addr); err == nil || attempt == 50 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				return fmt.Errorf("relisten %s: %w", m.addr, err)
			}
		}
		tr, err := metadata.NewTCPTransport(metadata.TCPConfig{NodeID: id, Listener: ln, Peers: c.voters, Faults: c.Faults})
		if err != nil {
			return err
		}
		cfg.Transport = tr
	}
	node, err := metadata.StartNode(cfg)
	if err != nil {
		cfg.Transport.Close()
		return err
	}
	c.mu.Lock()
	m.node = node
	c.mu.Unlock()
	return nil
}

// IDs returns the ids of every node the harness started (1..n and those
// added with Join), running or not.
func (c *Cluster) IDs() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]int32, 0, len(c.members))
	for id := range c.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Join starts node id, new to the harness, as a controller that is not a
// voter yet (metadata.Config.Join, with the bootstrap voters as its
// --controllers), on a fresh directory and a free loopback port, and
// returns its raft address: AddVoter on the leader makes it a voter.
func (c *Cluster) Join(id int32) string {
	c.t.Helper()
	c.mu.Lock()
	_, exists := c.members[id]
	c.mu.Unlock()
	if exists {
		c.t.Fatalf("node %d exists", id)
	}
	m := &member{dir: filepath.Join(c.t.TempDir(), fmt.Sprintf("node-%d", id)), join: true}
	var ln net.Listener
	if c.mem == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			c.t.Fatal(err)
		}
		m.addr = ln.Addr().String()
	} else {
		m.addr = fmt.Sprintf("mem-%d:1", id)
	}
	c.mu.Lock()
	c.members[id] = m
	c.mu.Unlock()
	if err := c.start(id, ln); err != nil {
		c.t.Fatalf("join node %d: %v", id, err)
	}
	return m.addr
}

// Wipe deletes the data directory of node id, which must be down: the
// node is gone for good.
func (c *Cluster) Wipe(id int32) {
	c.t.Helper()
	if c.Node(id) != nil {
		c.t.Fatalf("node %d is running", id)
	}
	if err := os.RemoveAll(c.members[id].dir); err != nil {
		c.t.Fatal(err)
	}
}

// Node returns node id, nil while it is down.
func (c *Cluster) Node(id int32) *metadata.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[id].node
}

// Addr is node id's raft address.
func (c *Cluster) Addr(id int32) string { return c.members[id].addr }

// Kill stops node id abruptly: its goroutines and connections end at once,
// nothing is flushed beyond what it already made durable; its data
// directory stays for Restart.
func (c *Cluster) Kill(id int32) {
	c.t.Helper()
	c.mu.Lock()
	n := c.members[id].node
	c.members[id].node = nil
	c.mu.Unlock()
	if n != nil {
		_ = n.Close()
	}
}

// Restart starts a killed node again on the same directory and address.
func (c *Cluster) Restart(id int32) {
	c.t.Helper()
	if c.Node(id) != nil {
		c.t.Fatalf("node %d is running", id)
	}
	if err := c.start(id, nil); err != nil {
		c.t.Fatalf("restart node %d: %v", id, err)
	}
}

// Move gives node id, which must be down and on loopback TCP, a new free
// address and returns it: the next Restart listens there. The others keep
// dialing the old address until the quorum records the new one
// (metadata.Node.UpdateVoter).
func (c *Cluster) Move(id int32) string {
	c.t.Helper()
	if c.mem != nil || c.Node(id) != nil {
		c.t.Fatalf("node %d: Move needs a stopped node on TCP", id)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // start listens again, retrying briefly
	c.mu.Lock()
	c.members[id].addr = addr
	c.mu.Unlock()
	return addr
}

// StopAll kills every running node.
func (c *Cluster) StopAll() {
	for _, id := range c.IDs() {
		c.Kill(id)
	}
}

// StartAll restarts every stopped node.
func (c *Cluster) StartAll() {
	c.t.Helper()
	for _, id := range c.IDs() {
		if c.Node(id) == nil {
			c.Restart(id)
		}
	}
}

// Cut drops all messages between a and b, both ways.
func (c *Cluster) Cut(a, b int32) { c.Faults.Cut(a, b); c.Faults.Cut(b, a) }

// CutOneWay drops messages from → to only.
func (c *Cluster) CutOneWay(from, to int32) { c.Faults.Cut(from, to) }

// Heal restores the links between a and b.
func (c *Cluster) Heal(a, b int32) { c.Faults.Heal(a, b); c.Faults.Heal(b, a) }

// Isolate cuts id off from every other node.
func (c *Cluster) Isolate(id int32) {
	for _, o := range c.IDs() {
		if o != id {
			c.Cut(id, o)
		}
	}
}

// HealAll restores every link.
func (c *Cluster) HealAll() { c.Faults.HealAll() }

// Leader returns the node that leads with a majority of all voters
// (itself included) acknowledging it, or -1.
func (c *Cluster) Leader() int32 {
	votes := map[int32]int{}
	for _, id := range c.IDs() {
		if n := c.Node(id); n != nil {
			if l := n.LeaderID(); l >= 0 {
				votes[l]++
			}
		}
	}
	for id, v := range votes {
		n := c.Node(id)
		if n == nil || !n.IsLeader() {
			continue
		}
		voters := 0
		for _, m := range n.Members() {
			if !m.Learner {
				voters++
			}
		}
		if v > voters/2 {
			return id
		}
	}
	return -1
}

// WaitFor polls cond until it holds, failing the test after timeout.
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitLeader waits for a leader and returns it.
func (c *Cluster) WaitLeader(timeout time.Duration) int32 {
	c.t.Helper()
	var leader int32 = -1
	c.WaitFor("a leader", timeout, func() bool { leader = c.Leader(); return leader >= 0 })
	return leader
}

// Propose proposes rec on node id with timeout.
func (c *Cluster) Propose(id int32, rec cluster.Record, timeout time.Duration) (metadata.Applied, error) {
	n := c.Node(id)
	if n == nil {
		return metadata.Applied{}, fmt.Errorf("node %d is down", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return n.Propose(ctx, rec)
}

// WaitConverged waits until every running node has applied at least index.
func (c *Cluster) WaitConverged(index uint64, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(fmt.Sprintf("all nodes to apply index %d", index), timeout, func() bool {
		for _, id := range c.IDs() {
			if n := c.Node(id); n != nil && n.AppliedIndex() < index {
				return false
			}
		}
		return true
	})
}

// FakeClock is a controller clock that moves only when told.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock starts at start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now implements metadata.Clock.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
