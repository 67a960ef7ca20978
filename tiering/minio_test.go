package tiering_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// A real MinIO server for the S3 tests: bin/minio (built by
// scripts/install-test-deps.sh), started once per test binary on the first
// test that asks for it and stopped by TestMain. Each test works under its
// own key prefix in one bucket.
const (
	minioUser     = "strata-test"
	minioPassword = "strata-test-secret"
	minioBucket   = "strata-test"
	minioInstall  = "make deps (builds bin/minio with go install github.com/minio/minio@<version in scripts/install-test-deps.sh>)"
	minioDeadline = 60 * time.Second
)

type minioServer struct {
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
	dataDir  string
	logPath  string
	endpoint string // http://127.0.0.1:port
	client   *minio.Client
}

var (
	minioOnce    sync.Once
	minioRunning *minioServer
	minioErr     error
	minioMu      sync.Mutex // guards minioRunning for stopMinIO
)

// minioBinary is bin/minio at the module root, or $STRATA_MINIO_BIN.
func minioBinary() string {
	if bin := os.Getenv("STRATA_MINIO_BIN"); bin != "" {
		return bin
	}
	abs, err := filepath.Abs(filepath.Join("..", "bin", "minio"))
	if err != nil {
		return filepath.Join("..", "bin", "minio")
	}
	return abs
}

// requireMinIO returns the shared MinIO server, starting it on first use.
// Without bin/minio the test skips, or fails under CI.
func requireMinIO(t testing.TB) *minioServer {
	t.Helper()
	bin := minioBinary()
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("MinIO server %s is missing; install it with: %s", bin, minioInstall)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	minioOnce.Do(func() {
		server, err := startMinIO(bin)
		minioMu.Lock()
		minioRunning, minioErr = server, err
		minioMu.Unlock()
	})
	if minioErr != nil {
		t.Fatalf("starting MinIO: %v", minioErr)
	}
	return minioRunning
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startMinIO launches the server, tries again on other ports if the first
// choice was taken in the meantime, waits until it serves, creates the
// bucket and points the AWS credential chain at it.
func startMinIO(bin string) (*minioServer, error) {
	var lastErr error
	for range 3 {
		server, err := launchMinIO(bin)
		if err == nil {
			return server, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launchMinIO(bin string) (*minioServer, error) {
	apiAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	consoleAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp("", "strata-minio-")
	if err != nil {
		return nil, err
	}
	server := &minioServer{
		dataDir:  dataDir,
		logPath:  filepath.Join(dataDir, "minio.log"),
		endpoint: "http://" + apiAddr,
		exited:   make(chan struct{}),
	}
	logFile, err := os.Create(server.logPath)
	if err != nil {
		os.RemoveAll(dataDir)
		return nil, err
	}
	defer logFile.Close()
	server.cmd = exec.Command(bin, "server", filepath.Join(dataDir, "data"),
		"--address", apiAddr, "--console-address", consoleAddr, "--quiet")
	server.cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+minioUser,
		"MINIO_ROOT_PASSWORD="+minioPassword,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"MINIO_CI_CD=1",
	)
	server.cmd.Stdout, server.cmd.Stderr = logFile, logFile
	server.cmd.SysProcAttr = minioProcAttr()
	start := time.Now()
	if err := server.cmd.Start(); err != nil {
		os.RemoveAll(dataDir)
		return nil, err
	}
	go func() {
		server.cmd.Wait()
		close(server.exited)
	}()
	if err := server.waitReady(); err != nil {
		server.stop()
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "tiering: MinIO (pid %d) serving at %s after %s\n", server.cmd.Process.Pid, server.endpoint, time.Since(start).Round(time.Millisecond))

	// The stores under test find these through the standard AWS chain;
	// the shared config files are pointed away so a developer's ~/.aws
	// cannot interfere.
	for key, value := range map[string]string{
		"AWS_ACCESS_KEY_ID":           minioUser,
		"AWS_SECRET_ACCESS_KEY":       minioPassword,
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(dataDir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dataDir, "no-aws-credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		os.Setenv(key, value)
	}
	return server, nil
}

// waitReady polls /minio/health/live, then creates the bucket (retrying
// while the object layer still initialises), all within minioDeadline.
func (m *minioServer) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), minioDeadline)
	defer cancel()
	var lastErr error
	live := false
	for {
		select {
		case <-m.exited:
			return fmt.Errorf("minio exited early: %v\n%s", m.cmd.ProcessState, m.logTail())
		case <-ctx.Done():
			return fmt.Errorf("minio not ready within %s (last error: %v)\n%s", minioDeadline, lastErr, m.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if !live {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.endpoint+"/minio/health/live", nil)
			resp, err := http.DefaultClient.Do(req)
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
			client, err := minio.New(strings.TrimPrefix(m.endpoint, "http://"), &minio.Options{
				Creds:  credentials.NewStaticV4(minioUser, minioPassword, ""),
				Secure: false,
			})
			if err != nil {
				return err
			}
			m.client = client
		}
		err := m.client.MakeBucket(ctx, minioBucket, minio.MakeBucketOptions{Region: "us-east-1"})
		if err == nil {
			return nil
		}
		lastErr = err
	}
}

func (m *minioServer) logTail() string {
	data, _ := os.ReadFile(m.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// stop ends the process by its PID (SIGTERM, then SIGKILL after 10 s) and
// removes its data.
func (m *minioServer) stop() error {
	var err error
	if m.cmd.Process != nil {
		m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			err = errors.New("minio ignored SIGTERM for 10s; killed")
			m.cmd.Process.Kill()
			<-m.exited
		}
	}
	os.RemoveAll(m.dataDir)
	return err
}

func stopMinIO() error {
	minioMu.Lock()
	defer minioMu.Unlock()
	if minioRunning == nil {
		return nil
	}
	err := minioRunning.stop()
	minioRunning = nil
	return err
}

// storeURL is the s3:// URL of a store under prefix in the test bucket.
func (m *minioServer) storeURL(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=us-east-1", minioBucket, prefix, m.endpoint)
}

// bucketInspector reads the bucket with minio-go, a client independent of
// the aws-sdk-go-v2 one under test.
type bucketInspector struct {
	client *minio.Client
	prefix string // the store's key prefix, with its trailing '/'
}

func (b bucketInspector) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for obj := range b.client.ListObjects(context.Background(), minioBucket, minio.ListObjectsOptions{Prefix: b.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			t.Fatalf("minio-go list %q: %v", b.prefix+prefix, obj.Err)
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, b.prefix))
	}
	slices.Sort(keys)
	return keys
}

func (b bucketInspector) Read(t testing.TB, key string) ([]byte, bool) {
	t.Helper()
	ctx := context.Background()
	info, err := b.client.StatObject(ctx, minioBucket, b.prefix+key, minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return nil, false
	}
	if err != nil {
		t.Fatalf("minio-go stat %q: %v", key, err)
	}
	obj, err := b.client.GetObject(ctx, minioBucket, b.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("minio-go get %q: %v", key, err)
	}
	defer obj.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, obj); err != nil {
		t.Fatalf("minio-go read %q: %v", key, err)
	}
	if int64(buf.Len()) != info.Size {
		t.Fatalf("minio-go %q: read %d bytes, stat says %d", key, buf.Len(), info.Size)
	}
	return buf.Bytes(), true
}

func (b bucketInspector) IncompleteUploads(t testing.TB) []string {
	t.Helper()
	var keys []string
	for upload := range b.client.ListIncompleteUploads(context.Background(), minioBucket, b.prefix, true) {
		if upload.Err != nil {
			t.Fatalf("minio-go list uploads: %v", upload.Err)
		}
		keys = append(keys, upload.Key)
	}
	return keys
}
