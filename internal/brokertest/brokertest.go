// Package brokertest runs real `strata server` processes for tests of the
// packages that talk to a broker only through the Kafka protocol (connect,
// streams, cmd). It builds ./cmd/strata once per test binary (or uses
// $STRATA_E2E_BIN), starts each broker on free loopback ports with a fresh
// data directory, and stops it in the test's cleanup. Kill ends a process as
// a crash would; Restart brings it back on the same ports and data.
//
// StartCluster runs several such processes as one cluster whose raft links
// pass through fault-injecting TCP proxies (see Cluster and Proxy).
//
// Processes are only ever signalled by their own PID.
package brokertest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	startTimeout = 60 * time.Second // until the Kafka port and /healthz answer
	stopTimeout  = 15 * time.Second // from SIGTERM to exit
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of a strata binary built from this module (once
// per test process), or $STRATA_E2E_BIN when set.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("STRATA_E2E_BIN"); bin != "" {
			binPath = bin
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		binPath, buildErr = build(root)
	})
	if buildErr != nil {
		t.Fatalf("brokertest: %v", buildErr)
	}
	return binPath
}

// build builds ./cmd/strata of the module at root into a directory of the
// temp dir named after root, one per checkout rather than one per test
// process (each binary is 140 MB; test processes that die cannot clean up
// after themselves). It builds to a temporary name and renames, so test
// processes of other packages building at the same time, or running the
// previous binary, are not disturbed.
func build(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(os.TempDir(), "strata-brokertest-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "strata-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // after a failed build; gone after the rename
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "./cmd/strata")
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/strata: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "strata")
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// UseBinary makes Binary return path instead of building one, if Binary
// has not run yet in this process. Test packages that build strata
// themselves (e2e) call it to share their binary.
func UseBinary(path string) {
	buildOnce.Do(func() { binPath = path })
}

// Broker is one `strata server` process (or, after Kill, its ports and data).
type Broker struct {
	t        testing.TB
	Addr     string // Kafka listener host:port
	HTTPAddr string // admin HTTP listener host:port
	DataDir  string
	extra    []string
	logDir   string
	name     string // how logs name the process, e.g. "node 2"

	mu     sync.Mutex
	starts int
	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{}    // closed when the current process has exited
	state  *os.ProcessState // of the last process, once it has exited
}

// Start runs a broker with extra flags (e.g. "--set", "k=v") and waits until
// it serves. The test's cleanup kills it and, if the test failed, logs its
// output.
func Start(t testing.TB, extraFlags ...string) *Broker {
	t.Helper()
	b := newBroker(t, "strata server", extraFlags)
	b.start()
	return b
}

// newBroker prepares a broker on fresh ports and data directory, without
// starting it, and registers the cleanup that kills it and, if the test
// failed, logs its output.
func newBroker(t testing.TB, name string, extraFlags []string) *Broker {
	b := &Broker{
		t:        t,
		Addr:     FreeAddr(t),
		HTTPAddr: FreeAddr(t),
		DataDir:  filepath.Join(t.TempDir(), "data"),
		extra:    extraFlags,
		logDir:   t.TempDir(),
		name:     name,
	}
	t.Cleanup(func() {
		b.Kill()
		if t.Failed() {
			b.dumpLogs()
		}
	})
	return b
}

// handedOut is every port FreeAddr returned in this process.
var handedOut portSet

type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

// claim records port and reports whether it was not recorded before.
func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports[port] {
		return false
	}
	if s.ports == nil {
		s.ports = map[int]bool{}
	}
	s.ports[port] = true
	return true
}

// FreeAddr returns a loopback address with a port that was free a moment ago.
//
// The port is chosen below the kernel's ephemeral range (32768 and up on
// Linux): a node restarted on the same port must not find it taken by some
// outgoing connection's ephemeral local port meanwhile.
//
// A port is handed out at most once per process: a test that picks several
// addresses before it binds any (a cluster's raft and Kafka ports) must
// not get the same one twice, which a random pick alone allows.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		if !handedOut.claim(port) {
			continue // given to another caller of this process
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: try another
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	t.Fatal("brokertest: no free port in 20000-31999")
	return ""
}

// Running reports whether the process is alive.
func (b *Broker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runningLocked()
}

func (b *Broker) runningLocked() bool {
	if b.cmd == nil {
		return false
	}
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

func (b *Broker) start() {
	b.t.Helper()
	if err := b.launch(); err != nil {
		b.t.Fatalf("brokertest: %v", err)
	}
	if err := b.awaitReady(startTimeout); err != nil {
		b.t.Fatalf("brokertest: %v", err)
	}
}

// launch starts the process without waiting for it to serve. It does not
// touch the testing.TB, so it may run on any goroutine.
func (b *Broker) launch() error {
	bin := Binary(b.t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runningLocked() {
		return fmt.Errorf("%s: already running", b.name)
	}
	b.starts++
	logFile, err := os.Create(filepath.Join(b.logDir, fmt.Sprintf("server-%d.log", b.starts)))
	if err != nil {
		return err
	}
	// No Iceberg catalog on the default 127.0.0.1:8181 (one port for every
	// test broker on the machine) unless the flags set one: the later
	// --set wins.
	args := append([]string{"server", "--listen", b.Addr, "--http-listen", b.HTTPAddr, "--data-dir", b.DataDir,
		"--set", "iceberg.catalog.listen="}, b.extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("%s: starting %s: %w", b.name, bin, err)
	}
	done := make(chan struct{})
	b.cmd, b.log, b.done, b.state = cmd, logFile, done, nil
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		b.mu.Lock()
		b.state = cmd.ProcessState
		b.mu.Unlock()
		close(done)
	}()
	return nil
}

// awaitReady polls until the Kafka port and /healthz answer, the process
// exits, or timeout passes. It does not touch the testing.TB.
func (b *Broker) awaitReady(timeout time.Duration) error {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("%s exited during startup (%s); log:\n%s", b.name, b.ExitStatus(), b.logTail())
		default:
		}
		if lastErr = b.probe(client); lastErr == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %v; log:\n%s", b.name, timeout, lastErr, b.logTail())
}

func (b *Broker) probe(client *http.Client) error {
	conn, err := net.DialTimeout("tcp", b.Addr, time.Second)
	if err != nil {
		return err
	}
	conn.Close()
	resp, err := client.Get("http://" + b.HTTPAddr + "/healthz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: %s", resp.Status)
	}
	return nil
}

// Stop sends SIGTERM and waits for the process to exit. It fails the test
// only if the process outlives stopTimeout; ExitStatus tells how it ended.
func (b *Broker) Stop() {
	b.t.Helper()
	if err := b.stop(); err != nil {
		b.Kill()
		b.t.Fatalf("brokertest: %v", err)
	}
}

// stop sends SIGTERM and waits up to stopTimeout for the exit.
func (b *Broker) stop() error {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("%s (pid %d): no exit within %s of SIGTERM", b.name, cmd.Process.Pid, stopTimeout)
	}
}

// ExitStatus describes how the last process ended ("exit status 0",
// "signal: killed"), or says that it is running or was never started.
func (b *Broker) ExitStatus() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.cmd == nil:
		return "never started"
	case b.state == nil:
		return "running"
	default:
		return b.state.String()
	}
}

// ExitCode is the last process's exit code: -1 while it runs, if it was
// never started, or if a signal ended it.
func (b *Broker) ExitCode() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == nil {
		return -1
	}
	return b.state.ExitCode()
}

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (b *Broker) Kill() {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		b.t.Errorf("brokertest: SIGKILL pid %d: %v", cmd.Process.Pid, err)
	}
	select {
	case <-done:
	case <-time.After(stopTimeout):
		b.t.Errorf("brokertest: pid %d alive %s after SIGKILL", cmd.Process.Pid, stopTimeout)
	}
}

// Restart starts the broker again on the same ports and data directory.
func (b *Broker) Restart() {
	b.t.Helper()
	b.start()
}

func (b *Broker) logTail() string {
	b.mu.Lock()
	name := b.log.Name()
	b.mu.Unlock()
	data, err := os.ReadFile(name)
	if err != nil {
		return err.Error()
	}
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	return string(data)
}

func (b *Broker) dumpLogs() {
	for i := 1; i <= b.starts; i++ {
		data, err := os.ReadFile(filepath.Join(b.logDir, fmt.Sprintf("server-%d.log", i)))
		if err != nil {
			continue
		}
		s := strings.TrimRight(string(data), "\n")
		if len(s) > 8000 {
			s = s[len(s)-8000:]
		}
		b.t.Logf("%s log, process %d of %d:\n%s", b.name, i, b.starts, s)
	}
}

// Launch starts a broker with extra flags without waiting until it serves
// (a controller started with --controller-join serves only once it is
// added to the quorum); AwaitReady waits. The test's cleanup kills it.
func Launch(t testing.TB, name string, extraFlags ...string) *Broker {
	t.Helper()
	b := newBroker(t, name, extraFlags)
	if err := b.launch(); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	return b
}

// AwaitReady waits until b serves, it exits, or timeout passes.
func (b *Broker) AwaitReady(timeout time.Duration) error { return b.awaitReady(timeout) }
