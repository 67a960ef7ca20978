package tiering_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// A real MinIO server for the S3 tests (see internal/miniotest), started
// once per test binary on the first test that asks for it and stopped by
// TestMain. Each test works under its own key prefix in one bucket.
const minioBucket = miniotest.Bucket

// minioServer is the shared server; the stores under test find its
// credentials through the standard AWS chain in this process's environment.
type minioServer struct {
	*miniotest.Server
	endpoint string // http://127.0.0.1:port
	client   *minio.Client
}

var (
	minioOnce    sync.Once
	minioRunning *minioServer
	minioErr     error
	minioMu      sync.Mutex // guards minioRunning for stopMinIO
)

// requireMinIO returns the shared MinIO server, starting it on first use.
// Without bin/minio the test skips, or fails under CI.
func requireMinIO(t testing.TB) *minioServer {
	t.Helper()
	bin := miniotest.RequireBinary(t)
	minioOnce.Do(func() {
		server, err := miniotest.Start(bin)
		minioMu.Lock()
		defer minioMu.Unlock()
		if err != nil {
			minioErr = err
			return
		}
		server.SetAWSEnv()
		minioRunning = &minioServer{Server: server, endpoint: server.Endpoint(), client: server.Client()}
	})
	if minioErr != nil {
		t.Fatalf("starting MinIO: %v", minioErr)
	}
	return minioRunning
}

func stopMinIO() error {
	minioMu.Lock()
	defer minioMu.Unlock()
	if minioRunning == nil {
		return nil
	}
	err := minioRunning.Stop()
	minioRunning = nil
	return err
}

// storeURL is the s3:// URL of a store under prefix in the test bucket.
func (m *minioServer) storeURL(prefix string) string { return m.StoreURL(prefix) }

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
