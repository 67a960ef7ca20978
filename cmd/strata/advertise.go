package main

import (
	"net"
)

// wildcardAdvertise returns hostname:port when listen's host is empty or a
// wildcard (0.0.0.0, ::), the address a node should tell clients instead;
// ok is false when listen names a host, or no host name is known.
func wildcardAdvertise(listen string, hostname func() (string, error)) (string, bool) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", false
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return "", false
	}
	name, err := hostname()
	if err != nil || name == "" {
		return "", false
	}
	return net.JoinHostPort(name, port), true
}
