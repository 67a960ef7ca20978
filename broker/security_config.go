package broker

import (
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"

	"github.com/strata-streaming/strata/internal/httpsec"
	"github.com/strata-streaming/strata/internal/tlsconf"
)

// Security protocols of Kafka's listener model.
const (
	protoPlaintext     = "PLAINTEXT"
	protoSSL           = "SSL"
	protoSASLPlaintext = "SASL_PLAINTEXT"
	protoSASLSSL       = "SASL_SSL"
)

// listenerSpec is one resolved entry of listeners: where it binds, what it
// advertises, its security protocol and (SSL) its TLS material.
type listenerSpec struct {
	name       string
	protocol   string
	bind       string
	advertised string
	tls        *tlsconf.Source // SSL and SASL_SSL listeners
}

// parseListenerList parses "NAME://host:port,…" (listeners and
// advertised.listeners); names are upper-cased, as Kafka does.
func parseListenerList(prop, v string) ([]string, map[string]string, error) {
	var names []string
	addrs := map[string]string{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, addr, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("broker: %s: %q is not NAME://host:port", prop, item)
		}
		name = strings.ToUpper(name)
		if _, dup := addrs[name]; dup {
			return nil, nil, fmt.Errorf("broker: %s: listener %s appears twice", prop, name)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, nil, fmt.Errorf("broker: %s: listener %s: %v", prop, name, err)
		}
		names = append(names, name)
		addrs[name] = addr
	}
	return names, addrs, nil
}

// resolveListeners turns listeners, advertised.listeners,
// listener.security.protocol.map, inter.broker.listener.name and the
// ssl.* / listener.name.<l>.ssl.* properties into listener specs, the
// inter-broker listener first. Without listeners, --listen (and
// --advertise) make one PLAINTEXT listener.
func (c *Config) resolveListeners() ([]listenerSpec, error) {
	listeners := c.Listeners
	if listeners == "" {
		listeners = "PLAINTEXT://" + c.Listen
	}
	names, binds, err := parseListenerList("listeners", listeners)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("broker: listeners names no listener")
	}
	_, advertised, err := parseListenerList("advertised.listeners", c.AdvertisedListeners)
	if err != nil {
		return nil, err
	}
	for name := range advertised {
		if _, ok := binds[name]; !ok {
			return nil, fmt.Errorf("broker: advertised.listeners names %s, which listeners does not define", name)
		}
	}
	if c.Listeners == "" && c.Advertise != "" {
		advertised[names[0]] = c.Advertise
	}
	protocols, err := c.securityProtocols()
	if err != nil {
		return nil, err
	}
	inter := strings.ToUpper(c.InterBrokerListenerName)
	if inter == "" {
		inter = names[0]
		if _, ok := binds[protoPlaintext]; ok {
			inter = protoPlaintext
		}
	}
	if _, ok := binds[inter]; !ok {
		return nil, fmt.Errorf("broker: inter.broker.listener.name %s is not one of listeners (%s)", inter, strings.Join(names, ","))
	}
	known := maps.Clone(binds)
	if name := c.controllerListenerName(); name != "" {
		known[name] = ""
	}
	if err := c.checkSecurityKeys(known); err != nil {
		return nil, err
	}
	var specs []listenerSpec
	for _, name := range names {
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("broker: listener %s has no entry in listener.security.protocol.map", name)
		}
		spec := listenerSpec{name: name, protocol: proto, bind: binds[name], advertised: advertised[name]}
		switch proto {
		case protoPlaintext:
		case protoSSL, protoSASLSSL:
			src, err := tlsconf.New(c.listenerSSL(name))
			if err != nil {
				return nil, fmt.Errorf("broker: listener %s: %w", name, err)
			}
			if _, err := src.ServerConfig(); err != nil {
				return nil, fmt.Errorf("broker: listener %s: %w", name, err)
			}
			spec.tls = src
		case protoSASLPlaintext:
		default:
			return nil, fmt.Errorf("broker: listener %s: unknown security protocol %s", name, proto)
		}
		if proto == protoSASLPlaintext || proto == protoSASLSSL {
			if err := c.checkMechanisms(name); err != nil {
				return nil, err
			}
			if name == inter {
				if _, err := c.interBrokerSASL(spec); err != nil {
					return nil, err
				}
			}
		}
		if name == inter {
			specs = append([]listenerSpec{spec}, specs...)
		} else {
			specs = append(specs, spec)
		}
	}
	return specs, nil
}

// securityProtocols is listener.security.protocol.map, by default each
// protocol's name mapped to itself.
func (c *Config) securityProtocols() (map[string]string, error) {
	protocols := map[string]string{protoPlaintext: protoPlaintext, protoSSL: protoSSL, protoSASLPlaintext: protoSASLPlaintext, protoSASLSSL: protoSASLSSL}
	if c.ListenerSecurityProtocolMap == "" {
		return protocols, nil
	}
	protocols = map[string]string{}
	for _, item := range strings.Split(c.ListenerSecurityProtocolMap, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, proto, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("broker: listener.security.protocol.map: %q is not NAME:PROTOCOL", item)
		}
		protocols[strings.ToUpper(strings.TrimSpace(name))] = strings.ToUpper(strings.TrimSpace(proto))
	}
	return protocols, nil
}

// listenerSSL is the ssl.* settings of one listener: the broker-wide
// ones, overridden by listener.name.<name>.ssl.* (lower-case name, as in
// Kafka).
func (c *Config) listenerSSL(name string) map[string]string {
	out := map[string]string{}
	prefix := "listener.name." + strings.ToLower(name) + "."
	for k, v := range c.security {
		if strings.HasPrefix(k, "ssl.") {
			if _, overridden := c.security[prefix+k]; !overridden {
				out[k] = v
			}
		} else if strings.HasPrefix(k, prefix+"ssl.") {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// checkSecurityKeys refuses security properties that would not be
// enforced: an ssl.* key Strata does not read, or a listener.name.*
// override of a listener that does not exist or of a setting it lacks.
func (c *Config) checkSecurityKeys(binds map[string]string) error {
	keys := make([]string, 0, len(c.security))
	for k := range c.security {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := k
		if rest, ok := strings.CutPrefix(k, adminHTTPPrefix); ok {
			if !httpsec.Known(rest) {
				return fmt.Errorf("broker: property %s is not supported", k)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(k, consoleConnectPrefix); ok {
			if !consoleConnectKnown(rest) {
				return fmt.Errorf("broker: property %s is not supported", k)
			}
			if rest == "url" {
				if err := checkConsoleConnectURL(c.security[k]); err != nil {
					return err
				}
			}
			continue
		}
		if rest, ok := strings.CutPrefix(k, "listener.name."); ok {
			name, setting, ok := strings.Cut(rest, ".")
			if _, known := binds[strings.ToUpper(name)]; !ok || !known {
				return fmt.Errorf("broker: %s: no listener %s in listeners", k, strings.ToUpper(name))
			}
			key = setting
		}
		if !tlsconf.Known(key) && !saslKnown(key) {
			return fmt.Errorf("broker: property %s is not supported", k)
		}
	}
	return nil
}

// securityProperty reports whether key is stored in Config.security.
func securityProperty(key string) bool {
	return strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.") || strings.HasPrefix(key, "listener.name.") || strings.HasPrefix(key, adminHTTPPrefix) ||
		strings.HasPrefix(key, consoleConnectPrefix)
}

// checkMechanisms checks sasl.enabled.mechanisms of a SASL listener
// without building the mechanisms (that needs the server).
func (c *Config) checkMechanisms(listener string) error {
	n := 0
	for _, m := range strings.Split(c.saslSetting(listener, "sasl.enabled.mechanisms"), ",") {
		switch strings.ToUpper(strings.TrimSpace(m)) {
		case "":
		case mechPlain, mechScram256, mechScram512, mechOAuthBearer:
			n++
		default:
			return fmt.Errorf("broker: listener %s: sasl.enabled.mechanisms: %s is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER are)", listener, strings.TrimSpace(m))
		}
	}
	if n == 0 {
		return fmt.Errorf("broker: listener %s uses SASL: set sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", listener)
	}
	return nil
}
