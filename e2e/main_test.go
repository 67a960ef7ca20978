package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// strataBin is the path of the strata binary under test, set by TestMain.
var strataBin string

// moduleRoot is the repository root (the parent of this package's directory).
var moduleRoot string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	moduleRoot = root

	if bin := os.Getenv("STRATA_E2E_BIN"); bin != "" {
		strataBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "strata-e2e-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	strataBin = filepath.Join(dir, "strata")
	start := time.Now()
	build := exec.Command("go", "build", "-o", strataBin, "./cmd/strata")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/strata: %v\n%s", err, out)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: built %s in %s\n", strataBin, time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// inCI reports whether the tests run under CI, where a missing external tool
// is a failure instead of a skip.
func inCI() bool { return os.Getenv("CI") != "" }

// missingTool skips the test, or under CI fails it, because something the
// test needs is not installed.
func missingTool(t testing.TB, what, install string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not installed; install it with: %s (or run scripts/install-test-deps.sh)", what, install)
	if inCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// requireTool returns the path of the named executable or skips/fails the
// test (see missingTool).
func requireTool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missingTool(t, name, install)
	}
	return path
}

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("closing probe listener: %v", err)
	}
	return addr
}

// cmdResult is what a finished external command produced.
type cmdResult struct {
	stdout, stderr string
	exitCode       int
	err            error // non-nil if it could not run or did not exit by itself
}

func (r cmdResult) String() string {
	return fmt.Sprintf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", r.exitCode, r.err, clip(r.stdout, 4000), clip(r.stderr, 4000))
}

// runCmd runs name with args, stdin as its input, and a deadline; it never
// fails the test itself, so callers can check a failure they expect.
func runCmd(t testing.TB, timeout time.Duration, stdin string, name string, args ...string) cmdResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	res := cmdResult{stdout: stdout.String(), stderr: stderr.String(), exitCode: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		res.err = fmt.Errorf("%s did not finish within %s", name, timeout)
	} else if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		res.err = err
	}
	return res
}

// mustRun runs the command and fails the test unless it exits 0.
func mustRun(t testing.TB, timeout time.Duration, stdin string, name string, args ...string) cmdResult {
	t.Helper()
	res := runCmd(t, timeout, stdin, name, args...)
	if res.err != nil || res.exitCode != 0 {
		t.Fatalf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), res)
	}
	return res
}

// clip shortens s to its last n bytes for failure messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
