package broker

import (
	"crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the peer of c has closed it, from the
// kernel's TCP state (TCP_INFO): a FIN received puts the socket in
// CLOSE_WAIT (or a later closing state) and a reset in CLOSE, however
// many bytes it still holds unread — a leader killed while its last fetch
// response sits in this node's receive buffer is seen as gone at once. It
// reads nothing and takes no lock of the connection (RawConn.Control), so
// a reader blocked on c is not disturbed.
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = raw.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return
		}
		switch info.State {
		case tcpCloseWait, tcpLastAck, tcpClose, tcpClosing, tcpTimeWait:
			closed = true
		}
	})
	return closed
}

// Linux TCP states (include/net/tcp_states.h) in which the peer has sent
// its FIN or a reset.
const (
	tcpTimeWait  = 6
	tcpClose     = 7
	tcpCloseWait = 8
	tcpLastAck   = 9
	tcpClosing   = 11
)
