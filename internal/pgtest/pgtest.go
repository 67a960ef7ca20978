// Package pgtest runs a real PostgreSQL server for integration tests: the
// JDBC connectors' tests and benchmarks.
//
// The binaries (initdb, postgres) come from the newest
// /usr/lib/postgresql/*/bin (Debian's layout, installed by
// scripts/install-test-deps.sh), else from $PATH. A test that needs them and
// finds none skips, or fails when the CI environment variable is set.
//
// Each server lives in a fresh temporary directory (data, Unix socket, log),
// listens on a free 127.0.0.1 port, trusts every local connection and runs
// with fsync, synchronous_commit and full_page_writes off: fast, and
// durable only as long as the process lives. When the test runs as root,
// initdb runs through `runuser -u postgres` and the server as the postgres
// user (PostgreSQL refuses to run as root).
//
// Processes are only ever signalled by their own PID: Stop sends SIGINT
// (PostgreSQL's fast shutdown) and SIGKILL after a bound.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

const (
	// Database is the database every server starts with; DSN names it.
	Database = "strata"
	// Install says how to get PostgreSQL, for skip and failure messages.
	Install = "make deps (scripts/install-test-deps.sh installs Debian's postgresql package)"

	readyTimeout   = 60 * time.Second
	stopTimeout    = 15 * time.Second
	launchAttempts = 3
	initdbTimeout  = 2 * time.Minute
)

// ErrNoBinaries reports that initdb or postgres could not be found.
var ErrNoBinaries = errors.New("pgtest: PostgreSQL binaries not found")

// Option changes how Start configures a server.
type Option func(*options)

type options struct {
	timeZone string
	settings []string
}

// WithTimeZone sets the server's TimeZone setting (-c timezone=zone; UTC
// without this option), the session time zone every connection starts
// with, e.g. "America/New_York".
func WithTimeZone(zone string) Option {
	return func(o *options) { o.timeZone = zone }
}

// WithSetting passes one more `-c name=value` to the server.
func WithSetting(name, value string) Option {
	return func(o *options) { o.settings = append(o.settings, name+"="+value) }
}

// Server is one running PostgreSQL server.
type Server struct {
	// DSN connects to Database as the superuser "postgres" over TCP, e.g.
	// postgres://postgres@127.0.0.1:5432/strata?sslmode=disable.
	DSN string
	// Port is the TCP port on 127.0.0.1.
	Port int

	binDir  string
	dir     string // temporary root: data/, sock/, postgres.log
	logPath string

	mu struct {
		sync.Mutex
		cmd    *exec.Cmd
		exited chan struct{}
	}
}

// BinDir returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/*/bin with both, else the directory of initdb on
// $PATH.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", fmt.Errorf("%w: no /usr/lib/postgresql/*/bin/initdb and none on $PATH", ErrNoBinaries)
	}
	if resolved, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = resolved
	}
	dir := filepath.Dir(initdb)
	if !isExecutable(filepath.Join(dir, "postgres")) {
		return "", fmt.Errorf("%w: %s has initdb but no postgres", ErrNoBinaries, dir)
	}
	return dir, nil
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// RequireBinaries returns BinDir; without binaries the test skips, or fails
// under CI.
func RequireBinaries(t testing.TB) string {
	t.Helper()
	dir, err := BinDir()
	if err != nil {
		msg := fmt.Sprintf("PostgreSQL is missing (%v); install it with: %s", err, Install)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// Start runs a server for this test alone and stops it, removing its files,
// when the test ends; if the test failed, the end of the server's log is
// logged.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	binDir := RequireBinaries(t)
	server, err := Launch(binDir, opts...)
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("PostgreSQL log (%s):\n%s", server.logPath, server.LogTail())
		}
		if err := server.Stop(); err != nil {
			t.Errorf("stopping PostgreSQL: %v", err)
		}
	})
	return server
}

// Launch initialises a cluster in a fresh temporary directory with the
// binaries in binDir, starts the server on a free loopback port, waits until
// it accepts connections and creates Database. The caller must Stop it.
func Launch(binDir string, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{binDir: binDir}
	if err := s.initCluster(); err != nil {
		s.removeDir()
		return nil, err
	}
	var lastErr error
	for range launchAttempts {
		port, err := freePort()
		if err != nil {
			s.removeDir()
			return nil, err
		}
		s.Port = port
		if lastErr = s.startProcess(o); lastErr != nil {
			break
		}
		if lastErr = s.waitReady(); lastErr == nil {
			if lastErr = s.createDatabase(); lastErr == nil {
				s.DSN = s.dsn(Database)
				return s, nil
			}
		}
		s.stopProcess()
		if !strings.Contains(s.LogTail(), "could not bind") && !strings.Contains(s.LogTail(), "in use") {
			break
		}
	}
	tail := s.LogTail()
	s.removeDir()
	return nil, fmt.Errorf("pgtest: server did not start: %w\nlog:\n%s", lastErr, tail)
}

// runAs reports whether the server must run as the postgres user (the test
// runs as root) and that user's ids.
func runAs() (asUser bool, uid, gid uint32, err error) {
	if os.Geteuid() != 0 {
		return false, 0, 0, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return false, 0, 0, fmt.Errorf("pgtest: running as root needs a postgres user: %w", err)
	}
	id, err1 := strconv.ParseUint(u.Uid, 10, 32)
	group, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return false, 0, 0, fmt.Errorf("pgtest: postgres user ids: %w", err)
	}
	return true, uint32(id), uint32(group), nil
}

func (s *Server) initCluster() error {
	asUser, uid, gid, err := runAs()
	if err != nil {
		return err
	}
	// Not t.TempDir: its directories are 0700 and owned by root, so the
	// postgres user could not reach the data directory.
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return fmt.Errorf("pgtest: temp dir: %w", err)
	}
	s.dir = dir
	s.logPath = filepath.Join(dir, "postgres.log")
	for _, sub := range []string{"data", "sock"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	if asUser {
		if err := checkTraversable(dir); err != nil {
			return err
		}
		for _, p := range []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, "sock")} {
			if err := os.Chown(p, int(uid), int(gid)); err != nil {
				return fmt.Errorf("pgtest: chown %s to postgres: %w", p, err)
			}
		}
	}
	args := []string{"-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust",
		"--no-locale", "--encoding=UTF8", "--no-sync"}
	initdb := filepath.Join(s.binDir, "initdb")
	ctx, cancel := context.WithTimeout(context.Background(), initdbTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if asUser {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", initdb}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, initdb, args...)
	}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: %s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return nil
}

// checkTraversable makes sure every parent of dir lets others search it, so
// the postgres user can reach its data directory.
func checkTraversable(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if info.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("pgtest: the postgres user cannot reach %s: %s has mode %v (set TMPDIR to a directory others can search)", dir, p, info.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) startProcess(o options) error {
	asUser, uid, gid, err := runAs()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: log: %w", err)
	}
	defer logFile.Close()
	args := []string{
		"-D", filepath.Join(s.dir, "data"),
		"-k", filepath.Join(s.dir, "sock"),
		"-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=50",
	}
	// UTC unless asked otherwise: initdb copies the machine's zone.
	zone := "UTC"
	if o.timeZone != "" {
		zone = o.timeZone
	}
	args = append(args, "-c", "timezone="+zone)
	for _, setting := range o.settings {
		args = append(args, "-c", setting)
	}
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), args...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = procAttr(asUser, uid, gid)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.mu.cmd, s.mu.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// waitReady polls until the server accepts a query, the process exits, or
// readyTimeout passes.
func (s *Server) waitReady() error {
	s.mu.Lock()
	exited := s.mu.exited
	s.mu.Unlock()
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v: %w", readyTimeout, err)
		}
	}
}

func (s *Server) createDatabase() error {
	return s.CreateDatabase(Database)
}

// CreateDatabase creates one more database (name must be a plain SQL
// identifier) and returns nil when it exists afterwards.
func (s *Server) CreateDatabase(name string) error {
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return fmt.Errorf("pgtest: database name %q: use lower-case letters, digits and _", name)
		}
	}
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return nil
}

// DatabaseDSN returns the DSN of another database on the same server.
func (s *Server) DatabaseDSN(name string) string { return s.dsn(name) }

// Open returns a database/sql handle on DSN (driver "pgx"), closed when the
// test ends.
func (s *Server) Open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// PID returns the server process's id, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cmd == nil || s.mu.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.mu.exited:
		return 0
	default:
		return s.mu.cmd.Process.Pid
	}
}

// LogTail returns the last few KiB of the server's log.
func (s *Server) LogTail() string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	const max = 4 << 10
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return string(data)
}

// stopProcess sends SIGINT (fast shutdown) to the server's own PID, waits up
// to stopTimeout, then sends SIGKILL and waits for the exit.
func (s *Server) stopProcess() error {
	s.mu.Lock()
	cmd, exited := s.mu.cmd, s.mu.exited
	s.mu.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pgtest: SIGINT to %d: %w", cmd.Process.Pid, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopTimeout):
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pgtest: SIGKILL to %d: %w", cmd.Process.Pid, err)
	}
	<-exited
	return fmt.Errorf("pgtest: postgres %d ignored SIGINT for %v and was killed", cmd.Process.Pid, stopTimeout)
}

func (s *Server) removeDir() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Stop shuts the server down and removes its files.
func (s *Server) Stop() error {
	err := s.stopProcess()
	s.removeDir()
	return err
}
