package metadata

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// maxRaftFrame bounds one message on the wire (snapshots included).
const maxRaftFrame = 256 << 20

// TCPConfig configures a TCPTransport.
type TCPConfig struct {
	// NodeID is this node.
	NodeID int32
	// Listener, when set, is used as is; otherwise Listen is bound.
	Listener net.Listener
	// Listen is the address to bind (--controller-listen).
	Listen string
	// Peers are the other voters.
	Peers []Voter
	// Faults drops messages on cut links (tests).
	Faults *Faults
	// QueueLength bounds messages waiting per peer (default 4096).
	QueueLength int
	// Logger receives connection errors (default: discard).
	Logger *slog.Logger
	// TLS, if set, secures every connection with mutual TLS.
	TLS *TLS
}

// TLS secures the raft port: peers and observers dial with Client and
// present its certificate; the listener serves with Server (which must
// require and verify client certificates) and Authorize, if set, accepts
// or refuses each verified peer before a byte of raft is read.
type TLS struct {
	Server    *tls.Config
	Client    *tls.Config
	Authorize func(tls.ConnectionState) error
}

// tlsHandshakeTimeout bounds a TLS handshake on the raft port.
const tlsHandshakeTimeout = 10 * time.Second

// dial connects to addr, over TLS when cfg is set.
func (c *TLS) dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if c == nil {
		return d.DialContext(ctx, "tcp", addr)
	}
	cfg := c.Client.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	td := &tls.Dialer{NetDialer: d, Config: cfg}
	return td.DialContext(ctx, "tcp", addr)
}

// accept completes the server side of a TLS connection and checks the
// peer; without TLS it returns c as is.
func (c *TLS) accept(conn net.Conn) (net.Conn, error) {
	if c == nil {
		return conn, nil
	}
	tc := tls.Server(conn, c.Server)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	if c.Authorize != nil {
		if err := c.Authorize(tc.ConnectionState()); err != nil {
			return nil, err
		}
	}
	return tc, nil
}

// TCPTransport sends raft messages over one persistent TCP connection per
// peer, as frames of a 4-byte big-endian length and a marshaled
// raftpb.Message; it redials with backoff after a failure. Inbound
// connections are accepted from anyone and their frames delivered; one
// that opens with the observer magic instead of a frame length is handed
// to the node's observer service (see observerMagic).
type TCPTransport struct {
	cfg      TCPConfig
	listener net.Listener
	deliver  func(*raftpb.Message)
	// observe serves an inbound connection that opened with
	// observerMagic (set by the node before Start; nil: refuse them).
	observe func(net.Conn, *bufio.Reader)
	done    chan struct{}
	wg      sync.WaitGroup

	mu struct {
		sync.Mutex
		closed  bool
		inbound map[net.Conn]struct{}
	}
	// peers change at run time (SetPeers: the quorum's membership).
	peers struct {
		sync.RWMutex
		m       map[int32]*tcpPeer
		started bool
	}
}

type tcpPeer struct {
	id    int32
	addr  string
	queue chan []byte
	stop  chan struct{} // closed when the peer is removed or replaced
}

// NewTCPTransport binds the listener; Start begins accepting and sending.
func NewTCPTransport(cfg TCPConfig) (*TCPTransport, error) {
	if cfg.QueueLength <= 0 {
		cfg.QueueLength = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("metadata: controller listener: %w", err)
		}
	}
	t := &TCPTransport{cfg: cfg, listener: ln, done: make(chan struct{})}
	t.mu.inbound = map[net.Conn]struct{}{}
	t.peers.m = map[int32]*tcpPeer{}
	t.SetPeers(cfg.Peers)
	return t, nil
}

// setObserverHandler makes inbound connections that open with the
// observer magic go to serve; call it before Start.
func (t *TCPTransport) setObserverHandler(serve func(net.Conn, *bufio.Reader)) {
	t.observe = serve
}

// Addr is the bound listener address.
func (t *TCPTransport) Addr() string { return t.listener.Addr().String() }

// Start implements Transport.
func (t *TCPTransport) Start(deliver func(*raftpb.Message)) error {
	t.deliver = deliver
	t.wg.Add(1)
	go t.acceptLoop()
	t.peers.Lock()
	t.peers.started = true
	for _, p := range t.peers.m {
		t.wg.Add(1)
		go t.sendLoop(p)
	}
	t.peers.Unlock()
	return nil
}

// SetPeers makes peers the nodes this transport sends to (this node
// excluded): new ones get a connection, removed ones lose theirs, and a
// changed address redials. Safe at any time, also before Start.
func (t *TCPTransport) SetPeers(peers []Voter) {
	want := map[int32]string{}
	for _, p := range peers {
		if p.ID != t.cfg.NodeID && p.Addr != "" {
			want[p.ID] = p.Addr
		}
	}
	t.mu.Lock()
	closed := t.mu.closed
	t.mu.Unlock()
	t.peers.Lock()
	defer t.peers.Unlock()
	for id, p := range t.peers.m {
		if addr, ok := want[id]; !ok || addr != p.addr {
			close(p.stop)
			delete(t.peers.m, id)
		}
	}
	if closed {
		return
	}
	for id, addr := range want {
		if _, ok := t.peers.m[id]; ok {
			continue
		}
		p := &tcpPeer{id: id, addr: addr, queue: make(chan []byte, t.cfg.QueueLength), stop: make(chan struct{})}
		t.peers.m[id] = p
		if t.peers.started {
			t.wg.Add(1)
			go t.sendLoop(p)
		}
	}
}

// Send implements Transport.
func (t *TCPTransport) Send(msgs []*raftpb.Message) {
	t.peers.RLock()
	defer t.peers.RUnlock()
	for _, m := range msgs {
		p := t.peers.m[nodeID(m.GetTo())]
		if p == nil || t.cfg.Faults.Blocked(t.cfg.NodeID, p.id) {
			continue
		}
		// Marshal here, in the raft loop, as raft asks: nothing changes
		// the message while it is encoded.
		b, err := proto.Marshal(m)
		if err != nil || len(b) > maxRaftFrame {
			t.cfg.Logger.Warn("metadata: raft message not sent", "to", p.id, "bytes", len(b), "err", err)
			continue
		}
		select {
		case p.queue <- b:
		default: // the peer is slow or gone: drop, raft retransmits
		}
	}
}

// Close implements Transport: it closes the listener and every connection
// at once, without draining queues.
func (t *TCPTransport) Close() error {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.closed = true
	close(t.done)
	err := t.listener.Close()
	for c := range t.mu.inbound {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (t *TCPTransport) acceptLoop() {
	defer t.wg.Done()
	for {
		c, err := t.listener.Accept()
		if err != nil {
			select {
			case <-t.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			t.cfg.Logger.Warn("metadata: controller accept", "err", err)
			return
		}
		t.mu.Lock()
		if t.mu.closed {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.mu.inbound[c] = struct{}{}
		t.mu.Unlock()
		t.wg.Add(1)
		go t.readLoop(c)
	}
}

func (t *TCPTransport) readLoop(raw net.Conn) {
	defer t.wg.Done()
	defer func() {
		raw.Close()
		t.mu.Lock()
		delete(t.mu.inbound, raw)
		t.mu.Unlock()
	}()
	c, err := t.cfg.TLS.accept(raw)
	if err != nil {
		t.cfg.Logger.Warn("metadata: controller connection refused", "remote", raw.RemoteAddr(), "err", err)
		return
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [4]byte
	for first := true; ; first = false {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if first && n == observerMagic && t.observe != nil {
			// An observer (a broker-only node), not a raft peer.
			t.observe(c, r)
			return
		}
		if n == 0 || n > maxRaftFrame {
			t.cfg.Logger.Warn("metadata: bad raft frame length; closing", "remote", c.RemoteAddr(), "length", n)
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(buf, m); err != nil {
			t.cfg.Logger.Warn("metadata: undecodable raft message; closing", "remote", c.RemoteAddr(), "err", err)
			return
		}
		if nodeID(m.GetTo()) != t.cfg.NodeID || t.cfg.Faults.Blocked(nodeID(m.GetFrom()), t.cfg.NodeID) {
			continue
		}
		t.deliver(m)
	}
}

func (t *TCPTransport) sendLoop(p *tcpPeer) {
	defer t.wg.Done()
	var (
		conn    net.Conn
		w       *bufio.Writer
		backoff time.Duration
		retryAt time.Time
	)
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	// Close unblocks a write stuck on a dead peer.
	stop := make(chan struct{})
	defer close(stop)
	var connMu sync.Mutex
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		select {
		case <-t.done:
		case <-p.stop:
		case <-stop:
			return
		}
		connMu.Lock()
		if conn != nil {
			conn.Close()
		}
		connMu.Unlock()
	}()
	for {
		var frame []byte
		select {
		case <-t.done:
			return
		case <-p.stop:
			return
		case frame = <-p.queue:
		}
		if conn == nil {
			if time.Now().Before(retryAt) {
				continue // drop while backing off
			}
			c, err := t.cfg.TLS.dial(context.Background(), p.addr, time.Second)
			if err != nil {
				backoff = min(max(2*backoff, 20*time.Millisecond), time.Second)
				retryAt = time.Now().Add(backoff)
				continue
			}
			connMu.Lock()
			conn, w = c, bufio.NewWriterSize(c, 64<<10)
			connMu.Unlock()
			backoff = 0
		}
		err := writeFrame(w, frame)
		if err == nil && len(p.queue) == 0 {
			err = w.Flush()
		}
		if err != nil {
			t.cfg.Logger.Debug("metadata: raft connection lost", "peer", p.id, "err", err)
			connMu.Lock()
			conn.Close()
			conn, w = nil, nil
			connMu.Unlock()
		}
	}
}

func writeFrame(w *bufio.Writer, frame []byte) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(frame)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(frame)
	return err
}
