// Package testcerts generates a throwaway certificate authority and the
// certificates tests need (servers, clients, nodes), written as PEM files
// under a test's temporary directory. Nothing it makes is ever committed.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	t    testing.TB
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate's PEM file (a truststore).
	File string
	// PEM is its content.
	PEM []byte
}

// NewCA makes a CA whose files go to dir.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Strata tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, dir: dir, cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.File = filepath.Join(dir, name+"-ca.pem")
	write(t, ca.File, ca.PEM)
	return ca
}

// Leaf is an issued certificate and its key.
type Leaf struct {
	// Keystore is one PEM file with the key and the certificate
	// (ssl.keystore.location with ssl.keystore.type=PEM).
	Keystore string
	// CertFile and KeyFile hold the certificate and the key apart (kcat's
	// ssl.certificate.location and ssl.key.location).
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
}

// Issue signs a certificate for subject (the CommonName, with
// OU=Strata) valid for the given hosts (DNS names or IPs), usable by
// servers and clients alike.
func (ca *CA) Issue(name string, hosts ...string) Leaf {
	return ca.IssueValid(name, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour), hosts...)
}

// IssueValid is Issue with an explicit validity (expired certificates).
func (ca *CA) IssueValid(name string, notBefore, notAfter time.Time, hosts ...string) Leaf {
	t := ca.t
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name, OrganizationalUnit: []string{"Strata"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
	}
	l.Keystore = filepath.Join(ca.dir, name+"-keystore.pem")
	l.CertFile = filepath.Join(ca.dir, name+"-cert.pem")
	l.KeyFile = filepath.Join(ca.dir, name+"-key.pem")
	write(t, l.Keystore, append(append([]byte{}, l.KeyPEM...), l.CertPEM...))
	write(t, l.CertFile, l.CertPEM)
	write(t, l.KeyFile, l.KeyPEM)
	return l
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func write(t testing.TB, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// HTTPSClient is an HTTP client that trusts only this CA.
func (ca *CA) HTTPSClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}
