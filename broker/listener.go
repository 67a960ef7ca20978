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
	// sasl is set on SASL_PLAINTEXT and SASL_SSL listeners.
	sasl *saslListener
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
		if spec.protocol == protoSASLPlaintext || spec.protocol == protoSASLSSL {
			sl, err := s.newSASLListener(spec)
			if err != nil {
				s.closeBound()
				return err
			}
			l.sasl = sl
		}
		ln, err := net.Listen("tcp", spec.bind)
		if err != nil {
			if l.sasl != nil {
				l.sasl.close()
			}
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
	s.closeListeners()
	s.listeners = nil
}

// closeListeners closes every bound listener and stops its mechanisms.
func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.ln.Close()
		if l.sasl != nil {
			l.sasl.close()
		}
	}
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
// SSL or SASL_SSL, SASL with the node's own credentials when it is
// SASL_*.
func (s *Server) interBrokerOpts() []kgo.Opt {
	l := s.listeners[0]
	var opts []kgo.Opt
	if l.spec.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(l.spec.tls.ClientConfig()))
	}
	if l.sasl != nil {
		// Checked by Validate: the inter-broker credentials are present.
		if m, err := s.cfg.interBrokerSASL(l.spec); err == nil {
			opts = append(opts, kgo.SASL(m))
		}
	}
	return opts
}
