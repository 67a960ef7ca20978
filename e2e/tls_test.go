package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/testcerts"
)

// TestKcatTLS drives librdkafka (kcat) over an SSL listener and an mTLS
// listener of one broker whose certificates are generated here: metadata
// names the listener's own port, produce and consume round-trip, a client
// without a certificate is refused on the mTLS listener, and a client that
// does not trust the broker's CA refuses the broker.
func TestKcatTLS(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "e2e")
	broker := ca.Issue("broker", "127.0.0.1")
	client := ca.Issue("kcat-client")
	stranger := testcerts.NewCA(t, dir, "stranger")

	s := newServer(t, nil, nil)
	sslAddr, mtlsAddr := freeAddr(t), freeAddr(t)
	s.extra = []string{
		"--set", fmt.Sprintf("listeners=PLAINTEXT://%s,SSL://%s,MTLS://%s", s.addr, sslAddr, mtlsAddr),
		"--set", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
		"--set", "ssl.keystore.type=PEM",
		"--set", "ssl.keystore.location=" + broker.Keystore,
		"--set", "ssl.truststore.location=" + ca.File,
		"--set", "listener.name.mtls.ssl.client.auth=required",
	}
	s.start()

	sslArgs := []string{"-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + ca.File}
	mtlsArgs := append(append([]string{}, sslArgs...), "-X", "ssl.certificate.location="+client.CertFile, "-X", "ssl.key.location="+client.KeyFile)
	for _, l := range []struct {
		name, addr string
		args       []string
	}{{"ssl", sslAddr, sslArgs}, {"mtls", mtlsAddr, mtlsArgs}} {
		t.Run(l.name, func(t *testing.T) {
			res := mustRun(t, 30*time.Second, "", kcat, append([]string{"-b", l.addr, "-L", "-J"}, l.args...)...)
			var md struct {
				Brokers []struct {
					Name string `json:"name"`
				} `json:"brokers"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &md); err != nil {
				t.Fatalf("kcat -L -J: %v\n%s", err, res.stdout)
			}
			_, port, _ := net.SplitHostPort(l.addr)
			if len(md.Brokers) != 1 || !strings.HasSuffix(md.Brokers[0].Name, ":"+port) {
				t.Fatalf("metadata over %s lists %+v, want the listener's port %s", l.name, md.Brokers, port)
			}
			topic := "tls-" + l.name
			input, want := kcatLines(0, 300)
			mustRun(t, time.Minute, input, kcat, append([]string{"-P", "-b", l.addr, "-t", topic, "-K", ":", "-z", "lz4"}, l.args...)...)
			got := mustRun(t, 30*time.Second, "", kcat, append([]string{"-C", "-b", l.addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o %k %s\n"}, l.args...)...)
			if got.stdout != want {
				t.Fatalf("consumed over %s: %s", l.name, firstLineDiff(got.stdout, want))
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		// No client certificate on the mTLS listener.
		res := runCmd(t, 30*time.Second, "", kcat, append([]string{"-b", mtlsAddr, "-L", "-m", "3"}, sslArgs...)...)
		if res.exitCode == 0 {
			t.Fatalf("kcat without a client certificate got metadata from the mTLS listener:\n%s", res.stdout)
		}
		// A truststore that does not hold the broker's CA.
		res = runCmd(t, 30*time.Second, "", kcat, "-b", sslAddr, "-L", "-m", "3", "-X", "security.protocol=ssl", "-X", "ssl.ca.location="+stranger.File)
		if res.exitCode == 0 || !strings.Contains(res.stderr, "certificate verify failed") {
			t.Fatalf("kcat trusting another CA: exit %d, stderr %s", res.exitCode, clip(res.stderr, 1000))
		}
		// The PLAINTEXT listener still answers, unchanged.
		mustRun(t, 30*time.Second, "", kcat, "-b", s.addr, "-L")
	})
}
