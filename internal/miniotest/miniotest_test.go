package miniotest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// TestKillRestart checks the fault-test contract: after Kill the endpoint
// refuses requests, after Restart it serves the same bucket and objects on
// the same endpoint.
func TestKillRestart(t *testing.T) {
	server := miniotest.New(t)
	endpoint := server.Endpoint()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := []byte("survives a crash")
	if _, err := server.Client().PutObject(ctx, miniotest.Bucket, "k", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := server.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
	probe := &http.Client{Timeout: 2 * time.Second}
	if resp, err := probe.Get(endpoint + "/minio/health/live"); err == nil {
		resp.Body.Close()
		t.Fatalf("MinIO answered %s after Kill", resp.Status)
	}

	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if server.Endpoint() != endpoint {
		t.Fatalf("endpoint changed from %s to %s", endpoint, server.Endpoint())
	}
	obj, err := server.Client().GetObject(ctx, miniotest.Bucket, "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("after restart read %q, %v; want %q", got, err, body)
	}
}
