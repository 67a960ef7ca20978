package tiering_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/strata-streaming/strata/tiering"
	"github.com/strata-streaming/strata/tiering/storetest"
)

// storeCounter numbers the prefixes that keep the S3 tests apart.
var storeCounter atomic.Int64

// newS3Store opens an S3Store on the shared MinIO through tiering.Open,
// under a prefix of its own, and a minio-go inspector of that prefix.
func newS3Store(t *testing.T) (tiering.ObjectStore, bucketInspector, *minioServer) {
	server := requireMinIO(t)
	prefix := fmt.Sprintf("test-%04d", storeCounter.Add(1))
	store, err := tiering.Open(t.Context(), server.storeURL(prefix))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return store, bucketInspector{client: server.client, prefix: prefix + "/"}, server
}

func TestS3StoreContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) (tiering.ObjectStore, storetest.Inspector) {
			store, inspector, _ := newS3Store(t)
			return store, inspector
		},
		PartSize: tiering.DefaultPartSize,
	})
}

// TestS3MultipartUpload checks what a large Put leaves in the bucket, as
// minio-go sees it: one object of the right size and bytes whose ETag marks
// a multipart upload of ceil(size / 16 MiB) parts.
func TestS3MultipartUpload(t *testing.T) {
	t.Parallel()
	store, inspector, server := newS3Store(t)
	ctx := t.Context()
	const size = 40<<20 + 12345
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(data)
	// A reader that cannot seek, as from a pipe.
	if err := store.Put(ctx, "segments/00000000000000000000.log", io.MultiReader(bytes.NewReader(data)), size); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := store.Put(ctx, "segments/small", strings.NewReader("small"), 5); err != nil {
		t.Fatalf("Put: %v", err)
	}
	full := inspector.prefix + "segments/00000000000000000000.log"
	info, err := server.client.StatObject(ctx, minioBucket, full, minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("minio-go stat: %v", err)
	}
	if info.Size != size {
		t.Errorf("minio-go: size %d, want %d", info.Size, size)
	}
	if wantParts := "-3"; !strings.HasSuffix(info.ETag, wantParts) {
		t.Errorf("minio-go: ETag %q, want a multipart ETag ending in %q (3 parts of 16 MiB)", info.ETag, wantParts)
	}
	small, err := server.client.StatObject(ctx, minioBucket, inspector.prefix+"segments/small", minio.StatObjectOptions{})
	if err != nil || strings.Contains(small.ETag, "-") || small.Size != 5 {
		t.Errorf("minio-go: small object %+v, %v; want size 5 and a single-part ETag", small, err)
	}
	got, ok := inspector.Read(t, "segments/00000000000000000000.log")
	if !ok || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Errorf("minio-go: content differs from what was put (%d bytes read)", len(got))
	}
	if keys := inspector.Keys(t, ""); len(keys) != 2 {
		t.Errorf("minio-go: keys %q, want the two objects", keys)
	}
	if uploads := inspector.IncompleteUploads(t); len(uploads) != 0 {
		t.Errorf("minio-go: incomplete uploads %q", uploads)
	}
	head, err := store.Head(ctx, "segments/00000000000000000000.log")
	if err != nil || head.Size != size || head.ETag != strings.Trim(info.ETag, `"`) {
		t.Errorf("Head = %+v, %v; want size %d, ETag %q", head, err, size, info.ETag)
	}
}

// TestS3MissingBucket: a wrong bucket is an error that names it, not a
// silent ErrNotFound on Get or a success on Put.
func TestS3MissingBucket(t *testing.T) {
	t.Parallel()
	server := requireMinIO(t)
	store, err := tiering.Open(t.Context(), fmt.Sprintf("s3://no-such-bucket/x?endpoint=%s&region=us-east-1", server.endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	err = store.Put(t.Context(), "k", strings.NewReader("v"), 1)
	if err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Errorf("Put into a missing bucket: %v, want an error naming NoSuchBucket", err)
	}
	if _, err := store.Get(t.Context(), "k"); err == nil || errors.Is(err, tiering.ErrNotFound) {
		t.Errorf("Get from a missing bucket: %v, want an error that is not ErrNotFound", err)
	}
}

// TestNewS3StoreDirect builds a store from an S3Config instead of a URL,
// as a caller with its own configuration would.
func TestNewS3StoreDirect(t *testing.T) {
	t.Parallel()
	server := requireMinIO(t)
	store, err := tiering.NewS3Store(t.Context(), tiering.S3Config{
		Bucket: minioBucket, Prefix: "direct/config", Endpoint: server.endpoint, PathStyle: true,
		PartSize: tiering.MinPartSize, UploadConcurrency: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const size = 2*tiering.MinPartSize + 1
	if err := store.Put(t.Context(), "k", bytes.NewReader(make([]byte, size)), size); err != nil {
		t.Fatalf("Put: %v", err)
	}
	info, err := server.client.StatObject(t.Context(), minioBucket, "direct/config/k", minio.StatObjectOptions{})
	if err != nil || info.Size != size || !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("minio-go stat = %+v, %v; want %d bytes in 3 parts of 5 MiB", info, err, size)
	}
}
