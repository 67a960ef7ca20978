// Package tlsconf builds crypto/tls configurations from Kafka's ssl.*
// properties with PEM material (KIP-651): a listener's server side, and
// the client side the broker's own connections to other nodes use.
//
// Key and certificate files are re-read when they change (checked at most
// once per ReloadInterval, on the next handshake), so certificates rotate
// without a restart. A file that fails to parse after a change keeps the
// previous material in service and reports the error through OnError.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Properties Strata reads; any other ssl.* key is refused by New, so a
// setting that would not be enforced never passes silently.
const (
	KeystoreType          = "ssl.keystore.type"
	KeystoreLocation      = "ssl.keystore.location"
	KeystoreKey           = "ssl.keystore.key"
	KeystoreChain         = "ssl.keystore.certificate.chain"
	KeystorePassword      = "ssl.keystore.password"
	KeyPassword           = "ssl.key.password"
	TruststoreType        = "ssl.truststore.type"
	TruststoreLocation    = "ssl.truststore.location"
	TruststoreCerts       = "ssl.truststore.certificates"
	TruststorePassword    = "ssl.truststore.password"
	ClientAuth            = "ssl.client.auth"
	EnabledProtocols      = "ssl.enabled.protocols"
	Protocol              = "ssl.protocol"
	CipherSuites          = "ssl.cipher.suites"
	PrincipalMappingRules = "ssl.principal.mapping.rules"
	EndpointIdentAlg      = "ssl.endpoint.identification.algorithm"
)

var known = map[string]bool{
	KeystoreType: true, KeystoreLocation: true, KeystoreKey: true, KeystoreChain: true,
	KeystorePassword: true, KeyPassword: true, TruststoreType: true, TruststoreLocation: true,
	TruststoreCerts: true, TruststorePassword: true, ClientAuth: true, EnabledProtocols: true,
	Protocol: true, CipherSuites: true, PrincipalMappingRules: true, EndpointIdentAlg: true,
}

// Known reports whether key is an ssl.* property this package reads.
func Known(key string) bool { return known[key] }

// Sensitive reports whether the property's value is a secret (never
// logged, described as null).
func Sensitive(key string) bool {
	return key == KeystoreKey || strings.HasSuffix(key, ".password")
}

// ReloadInterval is how often, at most, the files are checked for changes.
const ReloadInterval = time.Second

// Source holds one set of TLS material and settings.
type Source struct {
	props      map[string]string
	clientAuth tls.ClientAuthType
	minVersion uint16
	maxVersion uint16
	suites     []uint16
	rules      *Rules
	verifyHost bool
	// OnError, if set, is told when reloading changed files failed.
	OnError func(error)

	mu        sync.Mutex
	checked   time.Time
	stamps    map[string]fileStamp
	cert      *tls.Certificate
	pool      *x509.CertPool
	server    *tls.Config
	loadedErr error
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// New checks props (ssl.* keys, listener prefixes removed) and loads the
// material they name.
func New(props map[string]string) (*Source, error) {
	s := &Source{props: props, minVersion: tls.VersionTLS12, maxVersion: tls.VersionTLS13, verifyHost: true}
	for k := range props {
		if !known[k] {
			return nil, fmt.Errorf("tls: unknown property %s", k)
		}
	}
	for _, k := range []string{KeystoreType, TruststoreType} {
		if v, ok := props[k]; ok && !strings.EqualFold(v, "PEM") {
			return nil, fmt.Errorf("tls: %s=%s: only PEM is supported (convert with openssl pkcs12 -nodes)", k, v)
		}
	}
	for _, k := range []string{KeystorePassword, KeyPassword, TruststorePassword} {
		if props[k] != "" {
			return nil, fmt.Errorf("tls: %s: encrypted PEM keys are not supported; use an unencrypted key protected by file permissions", k)
		}
	}
	if props[KeystoreLocation] != "" && (props[KeystoreKey] != "" || props[KeystoreChain] != "") {
		return nil, fmt.Errorf("tls: set either %s or %s with %s, not both", KeystoreLocation, KeystoreKey, KeystoreChain)
	}
	if (props[KeystoreKey] == "") != (props[KeystoreChain] == "") {
		return nil, fmt.Errorf("tls: %s and %s go together", KeystoreKey, KeystoreChain)
	}
	if props[TruststoreLocation] != "" && props[TruststoreCerts] != "" {
		return nil, fmt.Errorf("tls: set either %s or %s, not both", TruststoreLocation, TruststoreCerts)
	}
	switch v := strings.ToLower(props[ClientAuth]); v {
	case "", "none":
		s.clientAuth = tls.NoClientCert
	case "requested":
		s.clientAuth = tls.VerifyClientCertIfGiven
	case "required":
		s.clientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("tls: %s=%s: must be none, requested or required", ClientAuth, v)
	}
	if err := s.parseProtocols(); err != nil {
		return nil, err
	}
	if v := props[CipherSuites]; v != "" {
		byName := map[string]uint16{}
		for _, cs := range tls.CipherSuites() {
			byName[cs.Name] = cs.ID
		}
		for _, name := range splitList(v) {
			id, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("tls: %s: %s is not a supported secure cipher suite", CipherSuites, name)
			}
			s.suites = append(s.suites, id)
		}
	}
	rules, err := ParseRules(props[PrincipalMappingRules])
	if err != nil {
		return nil, err
	}
	s.rules = rules
	switch v := props[EndpointIdentAlg]; strings.ToLower(v) {
	case "https":
	case "":
		if _, set := props[EndpointIdentAlg]; set {
			s.verifyHost = false
		}
	default:
		return nil, fmt.Errorf("tls: %s=%s: must be https or empty", EndpointIdentAlg, v)
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Source) parseProtocols() error {
	versions := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	list := splitList(s.props[EnabledProtocols])
	if len(list) == 0 {
		switch p := s.props[Protocol]; p {
		case "", "TLS", "TLSv1.3":
		case "TLSv1.2":
			s.maxVersion = tls.VersionTLS12
		default:
			return fmt.Errorf("tls: %s=%s: must be TLSv1.2 or TLSv1.3", Protocol, p)
		}
		return nil
	}
	s.minVersion, s.maxVersion = 0, 0
	for _, name := range list {
		v, ok := versions[name]
		if !ok {
			return fmt.Errorf("tls: %s: %s is not supported (TLSv1.2 and TLSv1.3 are)", EnabledProtocols, name)
		}
		if s.minVersion == 0 || v < s.minVersion {
			s.minVersion = v
		}
		s.maxVersion = max(s.maxVersion, v)
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// HasKeystore reports whether a key and certificate are configured.
func (s *Source) HasKeystore() bool { return s.cert != nil }

// NotAfter is when the keystore's certificate chain in service stops
// being valid: the earliest NotAfter of its certificates (the leaf's, or
// an intermediate's that expires first), after reloading changed files.
// ok is false without a keystore. The broker exports it as
// strata_tls_certificate_expiry_timestamp_seconds.
func (s *Source) NotAfter() (notAfter time.Time, ok bool) {
	_, cert, _ := s.current()
	if cert == nil {
		return time.Time{}, false
	}
	for _, der := range cert.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			continue // tls.X509KeyPair parsed the leaf; a bad intermediate only fails handshakes
		}
		if !ok || c.NotAfter.Before(notAfter) {
			notAfter, ok = c.NotAfter, true
		}
	}
	return notAfter, ok
}

// ClientAuthRequired reports ssl.client.auth=required.
func (s *Source) ClientAuthRequired() bool { return s.clientAuth == tls.RequireAndVerifyClientCert }

// Rules is ssl.principal.mapping.rules.
func (s *Source) Rules() *Rules { return s.rules }

// files lists the files the material comes from.
func (s *Source) files() []string {
	var out []string
	for _, k := range []string{KeystoreLocation, TruststoreLocation} {
		if f := s.props[k]; f != "" {
			out = append(out, f)
		}
	}
	return out
}

// load reads the material; on success it replaces what is in service.
func (s *Source) load() error {
	stamps := map[string]fileStamp{}
	for _, f := range s.files() {
		fi, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		stamps[f] = fileStamp{fi.ModTime(), fi.Size()}
	}
	var keyPEM, chainPEM []byte
	if f := s.props[KeystoreLocation]; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("tls: %s: %w", KeystoreLocation, err)
		}
		keyPEM, chainPEM = splitPEM(b)
		if keyPEM == nil || chainPEM == nil {
			return fmt.Errorf("tls: %s: the file must hold a PEM private key and its certificate chain", KeystoreLocation)
		}
	} else if s.props[KeystoreKey] != "" {
		keyPEM, chainPEM = []byte(s.props[KeystoreKey]), []byte(s.props[KeystoreChain])
	}
	var cert *tls.Certificate
	if keyPEM != nil || chainPEM != nil {
		c, err := tls.X509KeyPair(chainPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("tls: keystore: %w", err)
		}
		cert = &c
	}
	var pool *x509.CertPool
	trust := []byte(s.props[TruststoreCerts])
	if f := s.props[TruststoreLocation]; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("tls: %s: %w", TruststoreLocation, err)
		}
		trust = b
	}
	if len(trust) > 0 {
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(trust) {
			return errors.New("tls: truststore holds no PEM certificate")
		}
	}
	if s.clientAuth != tls.NoClientCert && pool == nil {
		return fmt.Errorf("tls: %s needs %s (the CAs client certificates are checked against)", ClientAuth, TruststoreLocation)
	}
	s.stamps, s.cert, s.pool = stamps, cert, pool
	s.server = &tls.Config{
		// Kafka responses are bulk transfers: full-size records from the start.
		DynamicRecordSizingDisabled: true,
		MinVersion:                  s.minVersion,
		MaxVersion:                  s.maxVersion,
		CipherSuites:                s.suites,
		ClientAuth:                  s.clientAuth,
		ClientCAs:                   pool,
	}
	if cert != nil {
		s.server.Certificates = []tls.Certificate{*cert}
	}
	return nil
}

// splitPEM separates a keystore file's private key from its certificates.
func splitPEM(b []byte) (key, chain []byte) {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return key, chain
		}
		enc := pem.EncodeToMemory(block)
		if strings.Contains(block.Type, "PRIVATE KEY") {
			key = append(key, enc...)
		} else {
			chain = append(chain, enc...)
		}
	}
}

// current returns the material in service, reloading changed files first.
func (s *Source) current() (*tls.Config, *tls.Certificate, *x509.CertPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := time.Now(); now.Sub(s.checked) >= ReloadInterval {
		s.checked = now
		if s.changed() {
			if err := s.load(); err != nil {
				if s.OnError != nil && (s.loadedErr == nil || s.loadedErr.Error() != err.Error()) {
					s.OnError(err)
				}
				s.loadedErr = err
			} else {
				s.loadedErr = nil
			}
		}
	}
	return s.server, s.cert, s.pool
}

func (s *Source) changed() bool {
	for _, f := range s.files() {
		fi, err := os.Stat(f)
		if err != nil {
			return true
		}
		if st := s.stamps[f]; !st.mod.Equal(fi.ModTime()) || st.size != fi.Size() {
			return true
		}
	}
	return false
}

// ServerConfig is the listener side: each handshake gets the material in
// service at that moment.
func (s *Source) ServerConfig() (*tls.Config, error) {
	if s.cert == nil {
		return nil, fmt.Errorf("tls: an SSL listener needs %s (or %s and %s)", KeystoreLocation, KeystoreKey, KeystoreChain)
	}
	return &tls.Config{
		MinVersion: s.minVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cfg, _, _ := s.current()
			return cfg, nil
		},
	}, nil
}

// ClientConfig is the side of the node's own connections (replica
// fetchers, transaction markers, raft): the truststore verifies the
// server, the keystore's certificate is presented when asked for.
func (s *Source) ClientConfig() *tls.Config {
	_, _, pool := s.current()
	cfg := &tls.Config{
		MinVersion:   s.minVersion,
		MaxVersion:   s.maxVersion,
		CipherSuites: s.suites,
		RootCAs:      pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			_, cert, _ := s.current()
			if cert == nil {
				return &tls.Certificate{}, nil
			}
			return cert, nil
		},
	}
	if !s.verifyHost {
		// Chain still verified, host name not (ssl.endpoint.identification.algorithm=).
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			_, _, pool := s.current()
			if len(cs.PeerCertificates) == 0 {
				return errors.New("tls: server sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return cfg
}

// PeerPrincipal is the mapped principal name of a verified TLS peer, ""
// when the peer sent no certificate.
func (s *Source) PeerPrincipal(cs tls.ConnectionState) (string, error) {
	if len(cs.PeerCertificates) == 0 {
		return "", nil
	}
	return s.rules.Apply(DistinguishedName(cs.PeerCertificates[0]))
}
