package broker

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-streaming/strata/internal/tlsconf"
	"github.com/strata-streaming/strata/metadata"
)

// controllerListenerName is controller.listener.names, upper-case ("" if
// unset).
func (c *Config) controllerListenerName() string {
	return strings.ToUpper(strings.TrimSpace(c.ControllerListenerNames))
}

// controllerTLS is the raft port's security (controller.listener.names):
// nil for PLAINTEXT; for SSL, mutual TLS with the listener's ssl.*
// settings, every peer and observer presenting a certificate the
// truststore verifies and, with an authorizer, mapping to a super user
// (Kafka's controller requests need CLUSTER_ACTION, which only the nodes
// hold). SASL on the raft port is not supported.
func (c *Config) controllerTLS() (*metadata.TLS, error) {
	name := c.controllerListenerName()
	if name == "" {
		return nil, nil
	}
	if strings.Contains(name, ",") {
		return nil, fmt.Errorf("broker: controller.listener.names=%s: the raft port has one listener", name)
	}
	protocols, err := c.securityProtocols()
	if err != nil {
		return nil, err
	}
	proto, ok := protocols[name]
	if !ok {
		return nil, fmt.Errorf("broker: controller listener %s has no entry in listener.security.protocol.map", name)
	}
	switch proto {
	case protoPlaintext:
		return nil, nil
	case protoSSL:
	default:
		return nil, fmt.Errorf("broker: controller listener %s is %s: the raft port takes PLAINTEXT or SSL (mutual TLS)", name, proto)
	}
	props := c.listenerSSL(name)
	if v, ok := props[tlsconf.ClientAuth]; ok && !strings.EqualFold(v, "required") {
		return nil, fmt.Errorf("broker: controller listener %s: %s=%s: the raft port always requires client certificates", name, tlsconf.ClientAuth, v)
	}
	props[tlsconf.ClientAuth] = "required"
	src, err := tlsconf.New(props)
	if err != nil {
		return nil, fmt.Errorf("broker: controller listener %s: %w", name, err)
	}
	server, err := src.ServerConfig()
	if err != nil {
		return nil, fmt.Errorf("broker: controller listener %s: %w", name, err)
	}
	if !src.HasKeystore() {
		return nil, fmt.Errorf("broker: controller listener %s needs a keystore: nodes present it to each other", name)
	}
	supers, err := c.superUsers()
	if err != nil {
		return nil, err
	}
	authorizing := c.authorizationEnabled()
	return &metadata.TLS{
		Server: server,
		Client: src.ClientConfig(),
		Authorize: func(cs tls.ConnectionState) error {
			p, err := src.PeerPrincipal(cs)
			if err != nil {
				return err
			}
			if authorizing && !slices.Contains(supers, "User:"+p) {
				return fmt.Errorf("raft peer User:%s is not in super.users", p)
			}
			return nil
		},
	}, nil
}
