package broker

// A replica fetcher's connections to its leader, watched from the side.
// kill -9 of a leader closes its sockets at once (the kernel sends a FIN
// or a reset), but this node's fetcher learns of it only when its
// goroutine next runs, which on a loaded machine can be later than a
// client that lost the same leader asks this node for metadata. Metadata
// therefore asks the kernel directly, from each fetcher connection's TCP
// state (peerClosed), whether the leader closed it: if so
// the leader is in doubt (unreachable.go) and the answer waits for the
// fetcher's redial to tell a crash (refused) from a restart or a dropped
// connection (answered).

import (
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// peerConns is the set of open connections of one fetcher's client, kept
// by kgo's connect and disconnect hooks.
type peerConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	// reported holds the connections closedByPeer already reported: each
	// counts once (a leader that closed an idle connection and still
	// answers must not put every later Metadata in doubt).
	reported map[net.Conn]struct{}
}

var (
	_ kgo.HookBrokerConnect    = (*peerConns)(nil)
	_ kgo.HookBrokerDisconnect = (*peerConns)(nil)
)

func (p *peerConns) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, conn net.Conn, err error) {
	if err != nil || conn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = map[net.Conn]struct{}{}
	}
	p.conns[conn] = struct{}{}
}

func (p *peerConns) OnBrokerDisconnect(_ kgo.BrokerMetadata, conn net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, conn)
	delete(p.reported, conn)
}

// closedByPeer reports whether the peer closed one of the connections (a
// FIN or a reset is waiting in the kernel) that no earlier call reported,
// without reading from them.
func (p *peerConns) closedByPeer() bool {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		if _, done := p.reported[c]; !done {
			conns = append(conns, c)
		}
	}
	p.mu.Unlock()
	closed := false
	for _, c := range conns {
		if !peerClosed(c) {
			continue
		}
		closed = true
		p.mu.Lock()
		if _, open := p.conns[c]; open {
			if p.reported == nil {
				p.reported = map[net.Conn]struct{}{}
			}
			p.reported[c] = struct{}{}
		}
		p.mu.Unlock()
	}
	return closed
}
