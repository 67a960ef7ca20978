package metadata

import (
	"sync"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// MemNetwork connects in-process transports, for tests. Messages are
// copied, so nodes share nothing.
type MemNetwork struct {
	// Faults, when set, drops messages on cut links.
	Faults *Faults

	mu    sync.Mutex
	nodes map[int32]func(*raftpb.Message)
}

// Transport returns node's transport on the network.
func (n *MemNetwork) Transport(node int32) Transport { return &memTransport{net: n, node: node} }

type memTransport struct {
	net  *MemNetwork
	node int32
}

func (t *memTransport) Start(deliver func(*raftpb.Message)) error {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	if t.net.nodes == nil {
		t.net.nodes = map[int32]func(*raftpb.Message){}
	}
	t.net.nodes[t.node] = deliver
	return nil
}

func (t *memTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		to := nodeID(m.GetTo())
		if t.net.Faults.Blocked(t.node, to) {
			continue
		}
		t.net.mu.Lock()
		deliver := t.net.nodes[to]
		t.net.mu.Unlock()
		if deliver != nil {
			deliver(proto.Clone(m).(*raftpb.Message))
		}
	}
}

func (t *memTransport) Close() error {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	delete(t.net.nodes, t.node)
	return nil
}
