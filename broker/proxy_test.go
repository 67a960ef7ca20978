package broker

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// lossyProxy sits between clients and the broker (which advertises the
// proxy's address) and can lose acknowledgements: while
// dropProduceResponses is positive, the next Produce response is swallowed
// and both sides of that connection are closed, as if the network failed
// after the broker appended.
type lossyProxy struct {
	t  testing.TB
	ln net.Listener

	dropProduceResponses atomic.Int32
	dropped              atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newLossyProxy(t testing.TB) *lossyProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{t: t, ln: ln}
	t.Cleanup(p.close)
	return p
}

func (p *lossyProxy) addr() string { return p.ln.Addr().String() }

// start forwards accepted connections to target.
func (p *lossyProxy) start(target string) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			client, err := p.ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, client, server)
			p.mu.Unlock()
			p.pipe(client, server)
		}
	}()
}

func (p *lossyProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// pipe copies frames both ways, remembering which correlation ids belong
// to Produce requests.
func (p *lossyProxy) pipe(client, server net.Conn) {
	var produceIDs sync.Map // correlation id -> struct{}
	closeBoth := func() {
		client.Close()
		server.Close()
	}
	p.wg.Add(2)
	go func() { // requests
		defer p.wg.Done()
		defer closeBoth()
		for {
			frame, err := readSizedFrame(client)
			if err != nil {
				return
			}
			if len(frame) >= 12 && int16(binary.BigEndian.Uint16(frame[4:])) == kmsg.Produce.Int16() {
				produceIDs.Store(binary.BigEndian.Uint32(frame[8:]), struct{}{})
			}
			if _, err := server.Write(frame); err != nil {
				return
			}
		}
	}()
	go func() { // responses
		defer p.wg.Done()
		defer closeBoth()
		for {
			frame, err := readSizedFrame(server)
			if err != nil {
				return
			}
			if len(frame) >= 8 {
				if _, ok := produceIDs.LoadAndDelete(binary.BigEndian.Uint32(frame[4:])); ok && p.takeDrop() {
					p.dropped.Add(1)
					return
				}
			}
			if _, err := client.Write(frame); err != nil {
				return
			}
		}
	}()
}

func (p *lossyProxy) takeDrop() bool {
	for {
		n := p.dropProduceResponses.Load()
		if n <= 0 {
			return false
		}
		if p.dropProduceResponses.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// readSizedFrame reads one frame including its 4-byte size prefix.
func readSizedFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(frame, size[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}
