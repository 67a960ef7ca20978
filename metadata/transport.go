package metadata

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-streaming/strata/metadata/cluster"
	"go.etcd.io/raft/v3/raftpb"
)

// Voter is one member of the controller quorum: a node id and its raft
// address (Kafka's controller.quorum.voters entry "id@host:port").
type Voter struct {
	ID   int32
	Addr string
}

// ParseVoters parses "1@host:port,2@host:port,…". An empty string is an
// empty list (a one-voter quorum of the node itself).
func ParseVoters(s string) ([]Voter, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []Voter
	seen := map[int32]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		idStr, addr, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("metadata: voter %q: want id@host:port", item)
		}
		id, err := strconv.ParseInt(idStr, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("metadata: voter %q: bad node id", item)
		}
		if err := cluster.ValidateHostPort(addr); err != nil {
			return nil, fmt.Errorf("metadata: voter %q: %w", item, err)
		}
		if seen[int32(id)] {
			return nil, fmt.Errorf("metadata: voter id %d listed twice", id)
		}
		seen[int32(id)] = true
		out = append(out, Voter{ID: int32(id), Addr: addr})
	}
	return out, nil
}

// raftID maps a Kafka node id (≥ 0) to a raft id (≥ 1: raft reserves 0).
func raftID(node int32) uint64 { return uint64(node) + 1 }

// nodeID maps a raft id back to the Kafka node id; -1 for raft's "none".
func nodeID(id uint64) int32 {
	if id == 0 {
		return -1
	}
	return int32(id - 1)
}

// Transport carries raft messages between controllers. Implementations
// never block Send on the network: a message that cannot be delivered is
// dropped (raft retransmits).
type Transport interface {
	// Start begins delivering inbound messages to deliver; called once.
	Start(deliver func(*raftpb.Message)) error
	// Send queues messages for the nodes in their To fields.
	Send(msgs []*raftpb.Message)
	// Close stops the transport and waits for its goroutines.
	Close() error
}

// ErrTransportClosed is returned by a closed transport.
var ErrTransportClosed = errors.New("metadata: transport closed")

// Faults is fault injection shared by the transports of a test cluster:
// a cut link drops every message from one node to another. The zero value
// cuts nothing; a nil *Faults is valid too.
type Faults struct {
	mu  sync.Mutex
	cut map[[2]int32]bool
}

// Cut drops messages from → to (one direction).
func (f *Faults) Cut(from, to int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut == nil {
		f.cut = map[[2]int32]bool{}
	}
	f.cut[[2]int32{from, to}] = true
}

// Heal restores from → to.
func (f *Faults) Heal(from, to int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cut, [2]int32{from, to})
}

// HealAll restores every link.
func (f *Faults) HealAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = nil
}

// Blocked reports whether from → to is cut.
func (f *Faults) Blocked(from, to int32) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut[[2]int32{from, to}]
}

// nopTransport is the transport of a one-voter quorum: there is nobody to talk to.
type nopTransport struct{}

func (nopTransport) Start(func(*raftpb.Message)) error { return nil }
func (nopTransport) Send([]*raftpb.Message)            {}
func (nopTransport) Close() error                      { return nil }

// Roles is what a node runs (--roles): the controller, the broker or both.
type Roles struct {
	Controller bool
	Broker     bool
}

// ParseRoles parses "controller,broker", "controller" or "broker".
func ParseRoles(s string) (Roles, error) {
	var r Roles
	for _, item := range strings.Split(s, ",") {
		switch strings.TrimSpace(item) {
		case "controller":
			r.Controller = true
		case "broker":
			r.Broker = true
		default:
			return Roles{}, fmt.Errorf("metadata: role %q: want controller, broker or both", item)
		}
	}
	return r, nil
}
