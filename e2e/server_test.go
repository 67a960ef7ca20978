package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	startTimeout = 30 * time.Second // until the Kafka port and /healthz answer
	stopTimeout  = 15 * time.Second // from SIGTERM to exit
)

// server is one `strata server` process. Restarting it keeps its ports and
// data directory, so it is the same broker to clients.
type server struct {
	t        testing.TB
	addr     string   // Kafka listener, host:port
	httpAddr string   // admin HTTP listener, host:port
	dataDir  string   // --data-dir
	extra    []string // more flags, e.g. --set k=v
	env      []string // KEY=value added to the inherited environment
	logDir   string

	starts int // how many processes were started, for log names
	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{} // closed when the process has exited
	state  *os.ProcessState
}

// startServer starts a broker on free loopback ports with a fresh data
// directory and waits until it is ready. The test's cleanup kills it if it
// is still running and, if the test failed, prints its logs.
func startServer(t testing.TB, extraFlags ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, extraFlags...)
}

// startServerEnv is startServer with env (KEY=value) added to the process's
// environment, e.g. object store credentials.
func startServerEnv(t testing.TB, env []string, extraFlags ...string) *server {
	t.Helper()
	s := newServer(t, env, extraFlags)
	s.start()
	return s
}

// newServer prepares a server on free ports without starting it, so a
// test can name its address in more flags (listeners) first.
func newServer(t testing.TB, env []string, extraFlags []string) *server {
	t.Helper()
	s := &server{
		t:        t,
		addr:     freeAddr(t),
		httpAddr: freeAddr(t),
		dataDir:  filepath.Join(t.TempDir(), "data"),
		extra:    extraFlags,
		env:      env,
		logDir:   t.TempDir(),
	}
	t.Cleanup(func() {
		if s.running() {
			s.kill()
		}
		if t.Failed() {
			s.dumpLogs()
		}
	})
	return s
}

func (s *server) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// start launches the process and waits for readiness.
func (s *server) start() {
	s.t.Helper()
	s.launch()
	s.waitReady()
}

// launch starts the process without waiting for readiness, for a test
// that measures how long startup takes.
func (s *server) launch() {
	s.t.Helper()
	if s.running() {
		s.t.Fatalf("server already running (pid %d)", s.cmd.Process.Pid)
	}
	s.starts++
	logPath := filepath.Join(s.logDir, fmt.Sprintf("server-%d.log", s.starts))
	logFile, err := os.Create(logPath)
	if err != nil {
		s.t.Fatalf("creating server log: %v", err)
	}
	args := append([]string{
		"server",
		"--listen", s.addr,
		"--http-listen", s.httpAddr,
		"--data-dir", s.dataDir,
		// No Iceberg catalog on the default 127.0.0.1:8181 (one port
		// for every test server on the machine) unless the test's flags
		// set one: the later --set wins.
		"--set", "iceberg.catalog.listen=",
	}, s.extra...)
	cmd := exec.Command(strataBin, args...)
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		s.t.Fatalf("starting %s: %v", strataBin, err)
	}
	s.cmd, s.log, s.done, s.state = cmd, logFile, make(chan struct{}), nil
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		s.state = cmd.ProcessState
		close(done)
	}(cmd, s.done)
}

// waitReady polls until the Kafka port accepts connections and /healthz
// returns 200, failing early if the process exits.
func (s *server) waitReady() {
	s.t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.t.Fatalf("strata server exited during startup (%v); log:\n%s", s.state, s.logTail())
		default:
		}
		lastErr = s.probe(client)
		if lastErr == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("strata server not ready after %s: %v; log:\n%s", startTimeout, lastErr, s.logTail())
}

func (s *server) probe(client *http.Client) error {
	conn, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return fmt.Errorf("kafka listener: %w", err)
	}
	conn.Close()
	resp, err := client.Get("http://" + s.httpAddr + "/healthz")
	if err != nil {
		return fmt.Errorf("healthz: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: status %s", resp.Status)
	}
	return nil
}

// stop sends SIGTERM and waits for the exit; it fails the test unless the
// process exits 0 within stopTimeout. It returns how long the exit took.
func (s *server) stop() time.Duration {
	s.t.Helper()
	if !s.running() {
		s.t.Fatalf("stop: server is not running")
	}
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM to pid %d: %v", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		s.kill()
		s.t.Fatalf("strata server did not exit within %s of SIGTERM; log:\n%s", stopTimeout, s.logTail())
	}
	took := time.Since(start)
	s.log.Close()
	if code := s.state.ExitCode(); code != 0 {
		s.t.Fatalf("strata server exited with %v after SIGTERM, want exit 0; log:\n%s", s.state, s.logTail())
	}
	return took
}

// kill sends SIGKILL, as a crash would, and waits for the process to go.
func (s *server) kill() {
	if !s.running() {
		return
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Errorf("SIGKILL to pid %d: %v", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		s.t.Errorf("pid %d still running %s after SIGKILL", s.cmd.Process.Pid, stopTimeout)
	}
	s.log.Close()
}

// restart starts the process again on the same ports and data directory.
func (s *server) restart() {
	s.t.Helper()
	s.start()
}

// logTail returns the end of the current process's log.
func (s *server) logTail() string {
	if s.log == nil {
		return ""
	}
	data, err := os.ReadFile(s.log.Name())
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", s.log.Name(), err)
	}
	return clip(string(data), 8000)
}

// metrics returns the Prometheus text the server serves on /metrics.
func (s *server) metrics(t testing.TB) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + s.httpAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: reading body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	return string(body)
}

// dumpLogs prints every process's log; called when a test failed.
func (s *server) dumpLogs() {
	for i := 1; i <= s.starts; i++ {
		path := filepath.Join(s.logDir, fmt.Sprintf("server-%d.log", i))
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s.t.Logf("strata server log, process %d of %d (%s):\n%s", i, s.starts, path, clip(strings.TrimRight(string(data), "\n"), 8000))
	}
}
