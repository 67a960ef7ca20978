package brokertest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer accepts connections on a loopback port and writes back every
// line it reads, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// roundTrip writes line and reads the echo with a deadline.
func roundTrip(c net.Conn, r *bufio.Reader, line string) (string, error) {
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func dialProxy(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatalf("dial proxy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// expectDropped checks that the connection is closed by the proxy: a read
// ends with EOF or a reset instead of an echo or a timeout.
func expectDropped(t *testing.T, c net.Conn, r *bufio.Reader, what string) {
	t.Helper()
	_, err := roundTrip(c, r, "lost")
	if err == nil {
		t.Fatalf("%s: echo came back through a cut link", what)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: connection hung instead of being dropped: %v", what, err)
	}
}

func TestProxyForwardsCutsAndHeals(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	live, liveR := dialProxy(t, p)
	if got, err := roundTrip(live, liveR, "hello"); err != nil || got != "hello" {
		t.Fatalf("through the proxy: got %q, %v; want the echo", got, err)
	}

	p.Cut()
	if !p.IsCut() {
		t.Fatal("IsCut false after Cut")
	}
	expectDropped(t, live, liveR, "connection open before the cut")
	fresh, freshR := dialProxy(t, p)
	expectDropped(t, fresh, freshR, "connection dialled during the cut")

	p.Heal()
	if p.IsCut() {
		t.Fatal("IsCut true after Heal")
	}
	healed, healedR := dialProxy(t, p)
	for _, line := range []string{"one", "two", "three"} {
		if got, err := roundTrip(healed, healedR, line); err != nil || got != line {
			t.Fatalf("after Heal: got %q, %v; want %q", got, err, line)
		}
	}
}

func TestProxyTargetDown(t *testing.T) {
	target := FreeAddr(t) // nothing listens here
	p, err := NewProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Target() != target {
		t.Fatalf("Target() = %s, want %s", p.Target(), target)
	}
	c, r := dialProxy(t, p)
	expectDropped(t, c, r, "link to a target that is down")
}

func TestProxyCloseEndsConnections(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c, r := dialProxy(t, p)
	if got, err := roundTrip(c, r, "x"); err != nil || got != "x" {
		t.Fatalf("got %q, %v", got, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return while a connection was open")
	}
	expectDropped(t, c, r, "connection open at Close")
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("proxy still accepts after Close")
	}
	if err := p.Close(); !errors.Is(err, ErrProxyClosed) {
		t.Fatalf("second Close: %v, want ErrProxyClosed", err)
	}
}
