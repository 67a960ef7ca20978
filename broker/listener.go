package broker

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// kafkaListener is one bound Kafka listener.
type kafkaListener struct {
	spec listenerSpec
	ln   net.Listener
	// tls is the server side of SSL listeners (nil for PLAINTEXT); each
	// handshake takes the material in service then, so certificates
	// rotate without a restart.
	tls *tls.Config
}

// bindListeners binds every listener; a listener without an advertised
// address advertises the bound one (so port 0 works in tests).
func (s *Server) bindListeners(specs []listenerSpec) error {
	for _, spec := range specs {
		l := &kafkaListener{spec: spec}
		if spec.tls != nil {
			name := spec.name
			spec.tls.OnError = func(err error) {
				s.logger.Error("tls material changed but cannot be loaded; the previous one stays in service", "listener", name, "err", err)
			}
			cfg, err := spec.tls.ServerConfig()
			if err != nil {
				s.closeBound()
				return fmt.Errorf("broker: listener %s: %w", spec.name, err)
			}
			l.tls = cfg
		}
		ln, err := net.Listen("tcp", spec.bind)
		if err != nil {
			s.closeBound()
			return fmt.Errorf("broker: listen %s (%s): %w", spec.bind, spec.name, err)
		}
		l.ln = ln
		if l.spec.advertised == "" {
			l.spec.advertised = ln.Addr().String()
		}
		s.listeners = append(s.listeners, l)
	}
	return nil
}

func (s *Server) closeBound() {
	for _, l := range s.listeners {
		l.ln.Close()
	}
	s.listeners = nil
}

// listenerSummary is "NAME://addr,…" of the bound listeners, for the log.
func (s *Server) listenerSummary() string {
	parts := make([]string, len(s.listeners))
	for i, l := range s.listeners {
		parts[i] = l.spec.name + "://" + l.ln.Addr().String()
	}
	return strings.Join(parts, ",")
}

// endpoints are the advertised listeners this node registers.
func (s *Server) endpoints() []cluster.Endpoint {
	out := make([]cluster.Endpoint, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = cluster.Endpoint{Name: l.spec.name, Addr: l.spec.advertised, SecurityProtocol: l.spec.protocol}
	}
	return out
}

// interBrokerOpts are the client options of this node's connections to
// other nodes' inter-broker listeners (replica fetchers, transaction
// markers): TLS with the listener's truststore and keystore when it is
// SSL.
func (s *Server) interBrokerOpts() []kgo.Opt {
	l := s.listeners[0]
	if l.spec.tls == nil {
		return nil
	}
	return []kgo.Opt{kgo.DialTLSConfig(l.spec.tls.ClientConfig())}
}
