// Package miniotest runs a real MinIO server for integration tests: the
// tiering package's S3 store tests and the end-to-end tiered storage tests.
//
// The server is bin/minio at the module root (built by
// scripts/install-test-deps.sh) or $STRATA_MINIO_BIN. A test that needs it
// and finds no binary skips, or fails when the CI environment variable is
// set. Each server listens on free loopback ports, keeps its data in a fresh
// temporary directory, and starts with one bucket, Bucket, already made.
//
// For fault tests Kill ends the process as a crash would (SIGKILL) and
// Restart brings it back on the same port and data directory, so clients
// configured with Endpoint reach it again.
//
// Processes are only ever signalled by their own PID.
package miniotest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

const (
	// User and Password are the root credentials every server starts with.
	User     = "strata-test"
	Password = "strata-test-secret"
	// Bucket is created at the first start of every server.
	Bucket = "strata-test"
	// Region is what the servers answer to and StoreURL names.
	Region = "us-east-1"

	// Install says how to get bin/minio, for skip and failure messages.
	Install = "make deps (builds bin/minio with go install github.com/minio/minio@<version in scripts/install-test-deps.sh>)"

	// readyTimeout bounds a start or restart, until the bucket answers.
	readyTimeout = 60 * time.Second
	// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	stopTimeout = 10 * time.Second
	// launchAttempts is how often Start tries fresh ports when the ones
	// it picked were taken before MinIO could bind them.
	launchAttempts = 3
)

// Server is one MinIO process (or, after Kill, the ports and data of one).
type Server struct {
	bin         string
	apiAddr     string // 127.0.0.1:port, kept across restarts
	consoleAddr string
	dir         string // temporary root: data/ and minio.log
	logPath     string
	endpoint    string // http://apiAddr
	client      *minio.Client

	mu struct {
		sync.Mutex
		cmd    *exec.Cmd
		exited chan struct{} // closed when cmd has exited
	}
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("miniotest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Binary returns $STRATA_MINIO_BIN, or bin/minio at the module root; it
// does not check that the file exists.
func Binary() (string, error) {
	if bin := os.Getenv("STRATA_MINIO_BIN"); bin != "" {
		return filepath.Abs(bin)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "minio"), nil
}

// RequireBinary returns the MinIO binary's path; without one the test
// skips, or fails under CI.
func RequireBinary(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		msg := fmt.Sprintf("MinIO server is missing (%v); install it with: %s", err, Install)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// New starts a server for this test alone and stops it (removing its data)
// when the test ends; if the test failed, the end of MinIO's log is logged.
func New(t testing.TB) *Server {
	t.Helper()
	server, err := Start(RequireBinary(t))
	if err != nil {
		t.Fatalf("starting MinIO: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("MinIO log (%s):\n%s", server.logPath, server.LogTail())
		}
		if err := server.Stop(); err != nil {
			t.Errorf("stopping MinIO: %v", err)
		}
	})
	return server
}

// Start launches bin on free loopback ports with a fresh data directory,
// waits until it serves and creates Bucket. It tries other ports if the
// first ones were taken in the meantime.
func Start(bin string) (*Server, error) {
	var lastErr error
	for range launchAttempts {
		server, err := launch(bin)
		if err == nil {
			return server, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(bin string) (*Server, error) {
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	consoleAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "strata-minio-")
	if err != nil {
		return nil, err
	}
	client, err := minio.New(apiAddr, &minio.Options{
		Creds:  credentials.NewStaticV4(User, Password, ""),
		Secure: false,
		Region: Region,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	server := &Server{
		bin:         bin,
		apiAddr:     apiAddr,
		consoleAddr: consoleAddr,
		dir:         dir,
		logPath:     filepath.Join(dir, "minio.log"),
		endpoint:    "http://" + apiAddr,
		client:      client,
	}
	start := time.Now()
	if err := server.startProcess(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := server.waitReady(true); err != nil {
		server.Stop()
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "miniotest: MinIO (pid %d) serving at %s after %s\n", server.pid(), server.endpoint, time.Since(start).Round(time.Millisecond))
	return server, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startProcess runs MinIO on the server's ports and data directory,
// appending its output to minio.log.
func (s *Server) startProcess() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runningLocked() {
		return fmt.Errorf("miniotest: MinIO already running (pid %d)", s.mu.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(s.bin, "server", filepath.Join(s.dir, "data"),
		"--address", s.apiAddr, "--console-address", s.consoleAddr, "--quiet")
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+User,
		"MINIO_ROOT_PASSWORD="+Password,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"MINIO_CI_CD=1",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	s.mu.cmd, s.mu.exited = cmd, exited
	return nil
}

func (s *Server) runningLocked() bool {
	if s.mu.cmd == nil {
		return false
	}
	select {
	case <-s.mu.exited:
		return false
	default:
		return true
	}
}

func (s *Server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cmd == nil {
		return 0
	}
	return s.mu.cmd.Process.Pid
}

// waitReady polls /minio/health/live, then the bucket: made on the first
// start, found on a restart (both retried while the object layer still
// initialises), all within readyTimeout.
func (s *Server) waitReady(makeBucket bool) error {
	s.mu.Lock()
	cmd, exited := s.mu.cmd, s.mu.exited
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	httpClient := &http.Client{Timeout: 2 * time.Second}
	var lastErr error
	live := false
	for {
		select {
		case <-exited:
			return fmt.Errorf("minio exited early: %v\n%s", cmd.ProcessState, s.LogTail())
		case <-ctx.Done():
			return fmt.Errorf("minio not ready within %s (last error: %v)\n%s", readyTimeout, lastErr, s.LogTail())
		case <-time.After(50 * time.Millisecond):
		}
		if !live {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint+"/minio/health/live", nil)
			resp, err := httpClient.Do(req)
			if err != nil {
				lastErr = err
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				lastErr = fmt.Errorf("health: %s", resp.Status)
				continue
			}
			live = true
		}
		if makeBucket {
			lastErr = s.client.MakeBucket(ctx, Bucket, minio.MakeBucketOptions{Region: Region})
		} else {
			var exists bool
			exists, lastErr = s.client.BucketExists(ctx, Bucket)
			if lastErr == nil && !exists {
				lastErr = fmt.Errorf("bucket %s missing after restart", Bucket)
			}
		}
		if lastErr == nil {
			return nil
		}
	}
}

// Endpoint is the server's http://127.0.0.1:port, the same across restarts.
func (s *Server) Endpoint() string { return s.endpoint }

// Client is a minio-go client for the server, independent of the AWS SDK
// that Strata's S3 store uses, for checking what a test left in the bucket.
func (s *Server) Client() *minio.Client { return s.client }

// StoreURL is the s3:// URL of a Strata object store under prefix in
// Bucket, as --object-store and tiering.Open take it.
func (s *Server) StoreURL(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s", Bucket, prefix, s.endpoint, Region)
}

// AWSEnv is the environment (KEY=value) that points the standard AWS
// credential chain at this server's root user; the shared config files
// are pointed away so a developer's ~/.aws cannot interfere.
func (s *Server) AWSEnv() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + User,
		"AWS_SECRET_ACCESS_KEY=" + Password,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=" + filepath.Join(s.dir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(s.dir, "no-aws-credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// SetAWSEnv sets AWSEnv in this process's environment, for code under test
// that runs in the test binary itself.
func (s *Server) SetAWSEnv() {
	for _, kv := range s.AWSEnv() {
		key, value, _ := strings.Cut(kv, "=")
		os.Setenv(key, value)
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits until it
// has exited; the data directory stays for Restart. Killing a server that
// is not running does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, exited := s.mu.cmd, s.mu.exited
	running := s.runningLocked()
	s.mu.Unlock()
	if !running {
		return nil
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("miniotest: SIGKILL to pid %d: %w", cmd.Process.Pid, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("miniotest: pid %d still running %s after SIGKILL", cmd.Process.Pid, stopTimeout)
	}
}

// Restart starts the server again on the same port and data directory
// after Kill and waits until it serves Bucket again.
func (s *Server) Restart() error {
	start := time.Now()
	if err := s.startProcess(); err != nil {
		return err
	}
	if err := s.waitReady(false); err != nil {
		s.Kill()
		return err
	}
	fmt.Fprintf(os.Stderr, "miniotest: MinIO restarted (pid %d) at %s after %s\n", s.pid(), s.endpoint, time.Since(start).Round(time.Millisecond))
	return nil
}

// Stop ends the process by its PID (SIGTERM, then SIGKILL after
// stopTimeout) and removes its data.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, exited := s.mu.cmd, s.mu.exited
	running := s.runningLocked()
	s.mu.Unlock()
	var err error
	if running {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			err = fmt.Errorf("miniotest: minio ignored SIGTERM for %s; killed", stopTimeout)
			cmd.Process.Kill()
			<-exited
		}
	}
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

// LogTail is the end of MinIO's log, over all its processes.
func (s *Server) LogTail() string {
	data, _ := os.ReadFile(s.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}
