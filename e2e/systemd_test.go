package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// deploy/systemd: the unit is checked by systemd-analyze verify and its
// ExecStart is run for real with the example server.properties.

const (
	systemdUnit   = "deploy/systemd/strata.service"
	systemdConfig = "deploy/systemd/server.properties"
)

// unitSection reads one [section] of a unit file into key -> values (a
// key may repeat).
func unitSection(t testing.TB, path, section string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	current := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			current = strings.Trim(line, "[]")
		case current == section:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: %q is not key=value", path, line)
			}
			out[k] = append(out[k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSystemdUnit checks the unit's settings that matter for a broker and
// has systemd-analyze verify it. Without systemd-analyze the verify step
// skips with its reason, under CI too: CI machines need not run systemd.
func TestSystemdUnit(t *testing.T) {
	unit := filepath.Join(moduleRoot, systemdUnit)
	svc := unitSection(t, unit, "Service")
	one := func(k string) string {
		if len(svc[k]) != 1 {
			t.Errorf("[Service] %s: %v, want exactly one", k, svc[k])
			return ""
		}
		return svc[k][0]
	}
	for k, want := range map[string]string{
		"Type": "simple", "User": "strata", "Restart": "on-failure",
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes", "ProtectHome": "yes",
		"ReadWritePaths": "/var/lib/strata", "KillSignal": "SIGTERM",
	} {
		if got := one(k); got != want {
			t.Errorf("[Service] %s=%s, want %s", k, got, want)
		}
	}
	if n, err := strconv.Atoi(one("LimitNOFILE")); err != nil || n < 100000 {
		t.Errorf("LimitNOFILE=%s: want at least 100000 (one file per segment and index, one per connection)", one("LimitNOFILE"))
	}
	// Longer than the e2e harness allows a controlled shutdown.
	if d, err := time.ParseDuration(one("TimeoutStopSec")); err != nil || d < 4*stopTimeout {
		t.Errorf("TimeoutStopSec=%s: want at least %s", one("TimeoutStopSec"), 4*stopTimeout)
	}
	// The data directory of the example configuration is writable.
	if dirs := readProperties(t, filepath.Join(moduleRoot, systemdConfig))["log.dirs"]; dirs != one("ReadWritePaths") {
		t.Errorf("log.dirs=%s of %s is not ReadWritePaths=%s", dirs, systemdConfig, one("ReadWritePaths"))
	}
	if got := unitSection(t, unit, "Install")["WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("[Install] WantedBy=%v", got)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd); skipped under CI too, which need not run systemd")
	}
	// verify wants ExecStart's binary to exist: point it at the one under
	// test; nothing else in the copy differs.
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "strata.service")
	if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(data), "ExecStart=/usr/bin/strata ", "ExecStart="+strataBin+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCmd(t, time.Minute, "", analyze, "verify", copyPath)
	if res.err != nil || res.exitCode != 0 || strings.TrimSpace(res.stdout+res.stderr) != "" {
		t.Errorf("systemd-analyze verify %s: %s", systemdUnit, res)
	}
}

// readProperties reads a server.properties file (key=value lines).
func readProperties(t testing.TB, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// TestSystemdExecStart runs the unit's ExecStart as written, with
//   - /usr/bin/strata -> the binary under test;
//   - --config's /etc/strata/server.properties -> a copy of the example
//     whose log.dirs is a temporary directory and whose listener (and
//     advertised listener) is a free loopback port; nothing else changes;
//   - $STRATA_SERVER_FLAGS (from /etc/default/strata) -> --http-listen on
//     a free loopback port (systemd splits an unbraced $VAR into words);
//
// and checks the node serves Kafka (Metadata names it) and /healthz, uses
// every property of the example, and exits 0 on SIGTERM.
func TestSystemdExecStart(t *testing.T) {
	svc := unitSection(t, filepath.Join(moduleRoot, systemdUnit), "Service")
	if len(svc["ExecStart"]) != 1 {
		t.Fatalf("ExecStart: %v", svc["ExecStart"])
	}
	words := strings.Fields(svc["ExecStart"][0])
	if len(words) < 2 || words[0] != "/usr/bin/strata" || words[1] != "server" {
		t.Fatalf("ExecStart=%s: want /usr/bin/strata server …", svc["ExecStart"][0])
	}

	dataDir := filepath.Join(t.TempDir(), "var-lib-strata")
	kafka, httpAddr := freeAddr(t), freeAddr(t)
	data, err := os.ReadFile(filepath.Join(moduleRoot, systemdConfig))
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{
		"log.dirs":             dataDir,
		"listeners":            "PLAINTEXT://" + kafka,
		"advertised.listeners": "PLAINTEXT://" + kafka,
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		k, _, ok := strings.Cut(line, "=")
		if v, found := replace[k]; ok && found {
			lines[i] = k + "=" + v
			delete(replace, k)
		}
	}
	if len(replace) > 0 {
		t.Fatalf("%s does not set %v", systemdConfig, replace)
	}
	config := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(config, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	var args []string
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "$STRATA_SERVER_FLAGS":
			args = append(args, "--http-listen", httpAddr)
		case strings.HasPrefix(w, "$"):
			t.Fatalf("ExecStart: %s is not mapped by this test", w)
		case w == "--config" && i+1 < len(words) && words[i+1] == "/etc/strata/server.properties":
			args = append(args, w, config)
			i++
		default:
			args = append(args, w)
		}
	}
	t.Logf("strata %s", strings.Join(args, " "))
	node := startBackground(t, "strata.service", strataBin, args...)
	waitHealthy(t, node, httpAddr, kafka, startTimeout)

	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, newClient(t, kafka))
	if err != nil {
		t.Fatalf("Metadata: %v", err)
	}
	if len(meta.Brokers) != 1 || meta.Brokers[0].NodeID != 1 || meta.Brokers[0].Host+":"+strconv.Itoa(int(meta.Brokers[0].Port)) != kafka {
		t.Errorf("Metadata brokers = %+v, want node 1 at %s", meta.Brokers, kafka)
	}
	if entries, err := os.ReadDir(dataDir); err != nil || len(entries) == 0 {
		t.Errorf("log.dirs %s holds nothing: %v", dataDir, err)
	}

	node.stop(syscall.SIGTERM) // fails unless it exits 0
	logData := node.stderr.String()
	if strings.Contains(logData, "ignoring property") {
		t.Errorf("the example names properties Strata does not use:\n%s", clip(logData, 4000))
	}
}
