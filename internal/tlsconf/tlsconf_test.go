package tlsconf

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/testcerts"
)

func TestRules(t *testing.T) {
	dn := "CN=Alice Smith,OU=Eng,O=Example,C=US"
	cases := []struct {
		rules string
		want  string
		err   error
	}{
		{"", dn, nil},
		{"DEFAULT", dn, nil},
		{"RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$3/L,DEFAULT", "alice smith@example", nil},
		{"RULE:^CN=(.*?),OU=([^,]*).*$/$2/U", "ENG", nil},
		{"RULE:^CN=Bob,.*$/bob/, DEFAULT", dn, nil},
		{"RULE:^CN=Bob,.*$/bob/", "", ErrNoRuleMatched},
		{`RULE:^CN=(.*?),OU=(.*?),.*$/$2\/$1/`, "Eng/Alice Smith", nil},
	}
	for _, c := range cases {
		r, err := ParseRules(c.rules)
		if err != nil {
			t.Fatalf("ParseRules(%q): %v", c.rules, err)
		}
		got, err := r.Apply(dn)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("rules %q: got %q, %v; want %q, %v", c.rules, got, err, c.want, c.err)
		}
	}
	for _, bad := range []string{"RULE:abc", "RULE:a/b", "NOPE", "RULE:(/x/", "DEFAULT junk"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("ParseRules(%q) accepted", bad)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "refuse")
	leaf := ca.Issue("server", "127.0.0.1")
	cases := map[string]map[string]string{
		"jks":             {KeystoreType: "JKS", KeystoreLocation: leaf.Keystore},
		"password":        {KeystoreLocation: leaf.Keystore, KeyPassword: "secret"},
		"both":            {KeystoreLocation: leaf.Keystore, KeystoreKey: string(leaf.KeyPEM), KeystoreChain: string(leaf.CertPEM)},
		"key alone":       {KeystoreKey: string(leaf.KeyPEM)},
		"client auth":     {KeystoreLocation: leaf.Keystore, ClientAuth: "required"},
		"bad client auth": {KeystoreLocation: leaf.Keystore, ClientAuth: "always"},
		"unknown":         {KeystoreLocation: leaf.Keystore, "ssl.keymanager.algorithm": "SunX509"},
		"old protocol":    {KeystoreLocation: leaf.Keystore, EnabledProtocols: "TLSv1.1"},
		"cipher":          {KeystoreLocation: leaf.Keystore, CipherSuites: "TLS_RSA_WITH_RC4_128_SHA"},
		"missing file":    {KeystoreLocation: dir + "/nope.pem"},
		"not pem":         {KeystoreLocation: ca.File + ".x"},
	}
	if err := os.WriteFile(ca.File+".x", []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, props := range cases {
		if _, err := New(props); err == nil {
			t.Errorf("%s: New accepted %v", name, props)
		}
	}
	src, err := New(map[string]string{KeystoreKey: string(leaf.KeyPEM), KeystoreChain: string(leaf.CertPEM)})
	if err != nil || !src.HasKeystore() {
		t.Fatalf("inline PEM keystore: %v", err)
	}
	for _, k := range []string{KeystoreKey, KeyPassword, "ssl.truststore.password"} {
		if !Sensitive(k) {
			t.Errorf("%s is not sensitive", k)
		}
	}
	if Sensitive(KeystoreLocation) {
		t.Error("a file location is not a secret")
	}
}

// handshake runs one TLS handshake over loopback; it returns the server's
// view of the connection and the client's error.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		cs  tls.ConnectionState
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer nc.Close()
		tc := tls.Server(nc, server)
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		err = tc.Handshake()
		if err == nil {
			// TLS 1.3 client certificates are checked after the client's
			// Finished: read to let a failure reach the client.
			_, err = tc.Write([]byte{1})
		}
		done <- result{tc.ConnectionState(), err}
	}()
	cc, err := tls.Dial("tcp", ln.Addr().String(), client)
	var cerr error
	if err != nil {
		cerr = err
	} else {
		_ = cc.SetDeadline(time.Now().Add(5 * time.Second))
		_, cerr = cc.Read(make([]byte, 1))
		cc.Close()
	}
	r := <-done
	if cerr == nil && r.err != nil {
		cerr = r.err
	}
	return r.cs, cerr
}

func TestMutualTLSAndReload(t *testing.T) {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "mtls")
	server := ca.Issue("broker", "127.0.0.1")
	client := ca.Issue("alice")
	other := testcerts.NewCA(t, dir, "other").Issue("mallory")

	src, err := New(map[string]string{
		KeystoreLocation: server.Keystore, TruststoreLocation: ca.File, ClientAuth: "required",
		PrincipalMappingRules: "RULE:^CN=([^,]*),.*$/$1/L",
	})
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := src.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	clientSrc, err := New(map[string]string{KeystoreLocation: client.Keystore, TruststoreLocation: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := handshake(t, scfg, clientSrc.ClientConfig())
	if err != nil {
		t.Fatalf("mTLS handshake: %v", err)
	}
	if p, err := src.PeerPrincipal(cs); err != nil || p != "alice" {
		t.Fatalf("principal %q, %v; want alice", p, err)
	}

	// No client certificate, and one from another CA: refused.
	trustOnly, err := New(map[string]string{TruststoreLocation: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, scfg, trustOnly.ClientConfig()); err == nil {
		t.Fatal("client without a certificate was accepted with ssl.client.auth=required")
	}
	mallory, err := New(map[string]string{KeystoreLocation: other.Keystore, TruststoreLocation: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, scfg, mallory.ClientConfig()); err == nil {
		t.Fatal("client certificate of an unknown CA was accepted")
	}

	// Rotation: a new server certificate written over the keystore file is
	// served on the next handshake after ReloadInterval, without New.
	rotated := ca.Issue("broker-rotated", "127.0.0.1")
	if err := os.WriteFile(server.Keystore, append(append([]byte{}, rotated.KeyPEM...), rotated.CertPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(server.Keystore, future, future); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.checked = time.Time{} // the next handshake checks the files now
	src.mu.Unlock()
	var seen string
	check := clientSrc.ClientConfig()
	check.VerifyConnection = func(s tls.ConnectionState) error {
		seen = s.PeerCertificates[0].Subject.CommonName
		return nil
	}
	if _, err := handshake(t, scfg, check); err != nil {
		t.Fatal(err)
	}
	if seen != "broker-rotated" {
		t.Fatalf("after rotation the server presented %q", seen)
	}

	// A broken file keeps the old material in service and reports once.
	var reported []error
	src.OnError = func(err error) { reported = append(reported, err) }
	if err := os.WriteFile(server.Keystore, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.checked = time.Time{}
	src.mu.Unlock()
	if _, err := handshake(t, scfg, check); err != nil || seen != "broker-rotated" {
		t.Fatalf("broken keystore file: handshake %v, served %q", err, seen)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "keystore") {
		t.Fatalf("reload errors reported: %v", reported)
	}
}

func TestClientVerifiesHost(t *testing.T) {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "host")
	wrongHost := ca.Issue("broker", "broker.example")
	src, err := New(map[string]string{KeystoreLocation: wrongHost.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	scfg, _ := src.ServerConfig()
	strict, _ := New(map[string]string{TruststoreLocation: ca.File})
	if _, err := handshake(t, scfg, strict.ClientConfig()); err == nil {
		t.Fatal("a certificate for broker.example was accepted for 127.0.0.1")
	}
	lax, _ := New(map[string]string{TruststoreLocation: ca.File, EndpointIdentAlg: ""})
	if _, err := handshake(t, scfg, lax.ClientConfig()); err != nil {
		t.Fatalf("ssl.endpoint.identification.algorithm= still checks the chain only: %v", err)
	}
	foreign, _ := New(map[string]string{TruststoreLocation: testcerts.NewCA(t, dir, "foreign").File, EndpointIdentAlg: ""})
	if _, err := handshake(t, scfg, foreign.ClientConfig()); err == nil {
		t.Fatal("without host verification an unknown CA was still accepted")
	}
	tls12, _ := New(map[string]string{KeystoreLocation: wrongHost.Keystore, EnabledProtocols: "TLSv1.2"})
	s12, _ := tls12.ServerConfig()
	cs, err := handshake(t, s12, lax.ClientConfig())
	if err != nil || cs.Version != tls.VersionTLS12 {
		t.Fatalf("ssl.enabled.protocols=TLSv1.2: version %x, %v", cs.Version, err)
	}
}

// TestNotAfter: the expiry of the chain in service, followed through a
// rotation of the keystore file; none without a keystore.
func TestNotAfter(t *testing.T) {
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "expiry")
	first := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	leaf := ca.IssueValid("broker", time.Now().Add(-time.Hour), first, "127.0.0.1")
	src, err := New(map[string]string{KeystoreLocation: leaf.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := src.NotAfter(); !ok || !got.Equal(first) {
		t.Fatalf("NotAfter = %v, %v; want %v", got, ok, first)
	}

	// Rotate: the same file now holds a certificate valid for longer.
	second := first.Add(48 * time.Hour)
	rotated := ca.IssueValid("broker", time.Now().Add(-time.Hour), second, "127.0.0.1")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(rotated.Keystore, later, later); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ReloadInterval + 50*time.Millisecond)
	if got, ok := src.NotAfter(); !ok || !got.Equal(second) {
		t.Fatalf("after rotation NotAfter = %v, %v; want %v", got, ok, second)
	}

	trustOnly, err := New(map[string]string{TruststoreLocation: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := trustOnly.NotAfter(); ok {
		t.Fatalf("NotAfter without a keystore = %v, true; want false", got)
	}
}
