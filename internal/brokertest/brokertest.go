// Package brokertest runs real `strata server` processes for tests of the
// packages that talk to a broker only through the Kafka protocol (connect,
// streams, cmd). It builds ./cmd/strata once per test binary (or uses
// $STRATA_E2E_BIN), starts each broker on free loopback ports with a fresh
// data directory, and stops it in the test's cleanup. Kill ends a process as
// a crash would; Restart brings it back on the same ports and data.
//
// Processes are only ever signalled by their own PID.
package brokertest

import (
	"errors"
	"fmt"
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
		dir, err := os.MkdirTemp("", "strata-brokertest-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "strata")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/strata: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("brokertest: %v", buildErr)
	}
	return binPath
}

// Broker is one `strata server` process (or, after Kill, its ports and data).
type Broker struct {
	t        testing.TB
	Addr     string // Kafka listener host:port
	HTTPAddr string // admin HTTP listener host:port
	DataDir  string
	extra    []string
	logDir   string

	mu     sync.Mutex
	starts int
	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{}
}

// Start runs a broker with extra flags (e.g. "--set", "k=v") and waits until
// it serves. The test's cleanup kills it and, if the test failed, logs its
// output.
func Start(t testing.TB, extraFlags ...string) *Broker {
	t.Helper()
	b := &Broker{
		t:        t,
		Addr:     FreeAddr(t),
		HTTPAddr: FreeAddr(t),
		DataDir:  filepath.Join(t.TempDir(), "data"),
		extra:    extraFlags,
		logDir:   t.TempDir(),
	}
	t.Cleanup(func() {
		b.Kill()
		if t.Failed() {
			b.dumpLogs()
		}
	})
	b.start()
	return b
}

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("brokertest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
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
	bin := Binary(b.t)
	b.mu.Lock()
	if b.runningLocked() {
		b.mu.Unlock()
		b.t.Fatalf("brokertest: already running")
	}
	b.starts++
	logFile, err := os.Create(filepath.Join(b.logDir, fmt.Sprintf("server-%d.log", b.starts)))
	if err != nil {
		b.mu.Unlock()
		b.t.Fatalf("brokertest: %v", err)
	}
	args := append([]string{"server", "--listen", b.Addr, "--http-listen", b.HTTPAddr, "--data-dir", b.DataDir}, b.extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.mu.Unlock()
		logFile.Close()
		b.t.Fatalf("brokertest: starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	b.cmd, b.log, b.done = cmd, logFile, done
	b.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	b.waitReady(done)
}

func (b *Broker) waitReady(done chan struct{}) {
	b.t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			b.t.Fatalf("brokertest: strata server exited during startup; log:\n%s", b.logTail())
		default:
		}
		if lastErr = b.probe(client); lastErr == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("brokertest: not ready after %s: %v; log:\n%s", startTimeout, lastErr, b.logTail())
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

// Stop sends SIGTERM and waits for a clean exit.
func (b *Broker) Stop() {
	b.t.Helper()
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		b.Kill()
		b.t.Fatalf("brokertest: no exit within %s of SIGTERM", stopTimeout)
	}
}

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (b *Broker) Kill() {
	b.mu.Lock()
	cmd, done, logFile := b.cmd, b.done, b.log
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
	logFile.Close()
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
		b.t.Logf("strata server log, process %d of %d:\n%s", i, b.starts, s)
	}
}
