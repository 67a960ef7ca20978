package brokertest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ErrProxyClosed is returned by Proxy methods used after Close.
var ErrProxyClosed = errors.New("brokertest: proxy closed")

// Proxy forwards TCP connections from its own loopback listener to one
// target address, and can cut the link: Cut closes every forwarded
// connection and, until Heal, closes each new connection as soon as it is
// accepted (a dial succeeds, the first write or read then fails), the way a
// link dropping all traffic looks to a sender that redials.
type Proxy struct {
	listener net.Listener
	target   string

	mu struct {
		sync.Mutex
		cut    bool
		closed bool
		conns  map[net.Conn]struct{} // both ends of every forwarded connection
	}
	wg sync.WaitGroup // the accept loop and every forwarding goroutine
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("brokertest: proxy listener: %w", err)
	}
	p := &Proxy{listener: ln, target: target}
	p.mu.conns = map[net.Conn]struct{}{}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the proxy's own host:port, the address to dial instead of the
// target.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Cut closes the forwarded connections and refuses new ones until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.mu.cut = true
	p.closeConnsLocked()
	p.mu.Unlock()
}

// Heal lets new connections through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.mu.cut = false
	p.mu.Unlock()
}

// IsCut reports whether the link is cut.
func (p *Proxy) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.cut
}

// Close stops listening, closes every connection and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return ErrProxyClosed
	}
	p.mu.closed = true
	err := p.listener.Close()
	p.closeConnsLocked()
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) closeConnsLocked() {
	for c := range p.mu.conns {
		c.Close()
	}
	clear(p.mu.conns)
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		p.mu.Lock()
		refuse := p.mu.cut || p.mu.closed
		p.mu.Unlock()
		if refuse {
			client.Close()
			continue
		}
		p.wg.Add(1)
		go p.forward(client)
	}
}

// forward dials the target for one accepted connection and copies bytes
// both ways until either side ends or the link is cut.
func (p *Proxy) forward(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	if p.mu.cut || p.mu.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.mu.conns[client] = struct{}{}
	p.mu.conns[server] = struct{}{}
	p.mu.Unlock()

	var copies sync.WaitGroup
	copies.Add(2)
	pipe := func(dst, src net.Conn) {
		defer copies.Done()
		_, _ = io.Copy(dst, src)
		// One direction ending ends the connection, as a dropped link would.
		client.Close()
		server.Close()
	}
	go pipe(server, client)
	go pipe(client, server)
	copies.Wait()

	p.mu.Lock()
	delete(p.mu.conns, client)
	delete(p.mu.conns, server)
	p.mu.Unlock()
}
