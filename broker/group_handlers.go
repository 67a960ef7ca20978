package broker

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Helpers shared by the group API handlers (08–16, 42, 47).

// code is a Kafka error's code, 0 for none.
func code(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}

// clientHost is the client's address as Kafka reports it ("/127.0.0.1").
func (rc *requestContext) clientHost() string {
	host, _, err := net.SplitHostPort(rc.conn.remote)
	if err != nil {
		host = rc.conn.remote
	}
	return "/" + host
}
