package broker

import (
	"net"
	"testing"
	"time"
)

// TestPeerClosed checks the kernel's view against real loopback sockets:
// an open connection, one with unread bytes, one the peer closed while a
// goroutine is blocked reading it, one the peer closed behind bytes not
// read yet, and one the peer reset.
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (client, server net.Conn) {
		t.Helper()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				accepted <- nil
				return
			}
			accepted <- c
		}()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server = <-accepted
		if server == nil {
			t.Fatal("accept failed")
		}
		t.Cleanup(func() { client.Close(); server.Close() })
		return client, server
	}
	waitClosed := func(c net.Conn, want bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for peerClosed(c) != want {
			if time.Now().After(deadline) {
				t.Fatalf("peerClosed = %v, want %v", !want, want)
			}
			time.Sleep(time.Millisecond)
		}
	}

	open, _ := pair()
	if peerClosed(open) {
		t.Fatal("an open, idle connection reported closed")
	}

	pending, srv := pair()
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	// On loopback a completed write is in the peer's receive queue.
	if peerClosed(pending) {
		t.Fatal("a connection with unread bytes reported closed")
	}
	buf := make([]byte, 1)
	if _, err := pending.Read(buf); err != nil || buf[0] != 'x' {
		t.Fatalf("the peek consumed the byte: %q, %v", buf, err)
	}

	// A reader blocked on the connection, as kgo's is during a long poll.
	closed, srv := pair()
	readErr := make(chan error, 1)
	go func() {
		_, err := closed.Read(make([]byte, 1))
		readErr <- err
	}()
	srv.Close()
	waitClosed(closed, true)
	<-readErr

	// The realistic crash: a response the fetcher has not read yet, then
	// the process dies. The unread bytes must not hide the close.
	unread, srv := pair()
	if _, err := srv.Write([]byte("response")); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	waitClosed(unread, true)
	if n, err := unread.Read(make([]byte, 8)); n != 8 || err != nil {
		t.Fatalf("the unread bytes were lost: %d, %v", n, err)
	}

	reset, srv := pair()
	srv.(*net.TCPConn).SetLinger(0)
	srv.Close()
	waitClosed(reset, true)
}
