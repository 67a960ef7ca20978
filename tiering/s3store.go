package tiering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const (
	// DefaultPartSize is the S3 multipart part size: objects of at least
	// this many bytes are uploaded in parts of this size.
	DefaultPartSize = 16 << 20
	// MinPartSize is S3's smallest part (all but the last).
	MinPartSize = 5 << 20
	// MaxParts is S3's limit on parts per upload.
	MaxParts = 10000
	// DefaultUploadConcurrency is how many parts of one object are in
	// flight at once; memory use is this times the part size.
	DefaultUploadConcurrency = 4
	// abortTimeout bounds the clean-up of a failed multipart upload, which
	// runs even when the caller's context is already cancelled.
	abortTimeout = 30 * time.Second
)

// S3Config says where an S3Store keeps its objects. Open fills it from an
// s3:// URL; credentials always come from the standard AWS chain
// (environment, shared config files, instance roles).
type S3Config struct {
	Bucket string
	// Prefix is prepended, with a '/', to every key; empty for none.
	Prefix string
	// Endpoint is the base URL of an S3-compatible service (MinIO, Ceph…);
	// empty for AWS S3 itself.
	Endpoint string
	// Region is the signing region; empty takes the AWS chain's
	// (AWS_REGION, ~/.aws/config), and with an Endpoint falls back to
	// us-east-1.
	Region string
	// PathStyle addresses the bucket as endpoint/bucket/key instead of
	// bucket.endpoint/key. Open sets it whenever an endpoint is given.
	PathStyle bool
	// PartSize is the multipart threshold and part size; 0 means
	// DefaultPartSize. At least MinPartSize.
	PartSize int64
	// UploadConcurrency bounds the parts of one Put in flight; 0 means
	// DefaultUploadConcurrency.
	UploadConcurrency int
}

// S3Store is an ObjectStore in an S3 bucket (AWS S3 or any S3-compatible
// service) through aws-sdk-go-v2. Objects smaller than the part size go up
// with one PutObject; larger ones with a multipart upload whose parts are
// sent concurrently and which is aborted if anything fails, so a failed Put
// leaves no object and no dangling parts. Every upload (the PutObject, each
// part) carries a CRC-32C checksum that the service verifies.
type S3Store struct {
	client    *s3.Client
	bucket    string
	keyPrefix string // "" or Prefix + "/"
	partSize  int64
	parallel  int
}

var _ ObjectStore = (*S3Store)(nil)

// Validate checks the configuration and fills in defaults.
func (c *S3Config) Validate() error {
	if err := validateBucket(c.Bucket); err != nil {
		return err
	}
	if c.Prefix != "" {
		if err := ValidateKey(c.Prefix); err != nil {
			return fmt.Errorf("%w: s3 prefix: %w", ErrInvalidURL, err)
		}
	}
	if c.PartSize == 0 {
		c.PartSize = DefaultPartSize
	}
	if c.PartSize < MinPartSize {
		return fmt.Errorf("%w: s3 part size %d is below the minimum %d", ErrInvalidURL, c.PartSize, MinPartSize)
	}
	if c.UploadConcurrency == 0 {
		c.UploadConcurrency = DefaultUploadConcurrency
	}
	if c.UploadConcurrency < 1 || c.UploadConcurrency > 64 {
		return fmt.Errorf("%w: s3 upload concurrency %d is not in 1..64", ErrInvalidURL, c.UploadConcurrency)
	}
	return nil
}

// validateBucket applies S3's bucket naming rules in brief: 3 to 63
// characters of lower-case letters, digits, '.' and '-', starting and
// ending with a letter or digit.
func validateBucket(bucket string) error {
	if len(bucket) < 3 || len(bucket) > 63 {
		return fmt.Errorf("%w: s3 bucket name %q must be 3 to 63 characters", ErrInvalidURL, bucket)
	}
	for i, c := range bucket {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && ((c != '.' && c != '-') || i == 0 || i == len(bucket)-1) {
			return fmt.Errorf("%w: s3 bucket name %q: only a-z, 0-9, '.' and '-' (not at either end)", ErrInvalidURL, bucket)
		}
	}
	return nil
}

// NewS3Store builds a client for cfg. It sends no request: a wrong bucket or
// missing credentials show up on first use.
func NewS3Store(ctx context.Context, cfg S3Config) (*S3Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var options []func(*config.LoadOptions) error
	if cfg.Region != "" {
		options = append(options, config.WithRegion(cfg.Region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, options...)
	if err != nil {
		return nil, fmt.Errorf("tiering: s3: loading AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		if cfg.Endpoint == "" {
			return nil, fmt.Errorf("%w: s3: no region; add ?region= to the URL or set AWS_REGION", ErrInvalidURL)
		}
		awsCfg.Region = "us-east-1"
	}
	store := &S3Store{
		bucket:   cfg.Bucket,
		partSize: cfg.PartSize,
		parallel: cfg.UploadConcurrency,
	}
	if cfg.Prefix != "" {
		store.keyPrefix = cfg.Prefix + "/"
	}
	// The SDK's own HTTP client is kept: it honours AWS_CA_BUNDLE, proxies
	// and the SDK's timeouts.
	store.client = s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// Ranged reads and multipart objects carry no whole-object checksum
		// to validate; the SDK would log that on every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	return store, nil
}

// Put implements ObjectStore.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("tiering: s3 put %q: %w: negative size %d", key, ErrSizeMismatch, size)
	}
	input := ctxReader{ctx, r}
	if size >= s.partSize {
		return s.putMultipart(ctx, key, input, size)
	}
	return s.wrap(ctx, "put", key, s.putSingle(ctx, key, input, size, nil))
}

// putSingle stores an object under one part size with one PutObject. S3
// over plain HTTP signs the payload, which needs a seekable body, so the
// object is read into memory first.
func (s *S3Store) putSingle(ctx context.Context, key string, input io.Reader, size int64, ifNoneMatch *string) error {
	buf := make([]byte, size)
	if err := readPart(input, buf, key, 0, size); err != nil {
		return err
	}
	if err := expectEOF(input, key, size); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:            &s.bucket,
		Key:               aws.String(s.keyPrefix + key),
		Body:              bytes.NewReader(buf),
		ContentLength:     aws.Int64(size),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
		IfNoneMatch:       ifNoneMatch,
	})
	return err
}

// PutIfAbsent implements ConditionalPutter with a single PutObject carrying
// If-None-Match: * (412 PreconditionFailed, or 409 ConditionalRequestConflict
// for a racing write, when the key is taken).
func (s *S3Store) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	if size < 0 || size >= s.partSize {
		return fmt.Errorf("tiering: s3 put-if-absent %q: %w: %d bytes; at most one part (%d)", key, ErrSizeMismatch, size, s.partSize)
	}
	err := s.putSingle(ctx, key, ctxReader{ctx, r}, size, aws.String("*"))
	if code := s3ErrorCode(err); code == "PreconditionFailed" || code == "ConditionalRequestConflict" {
		return fmt.Errorf("tiering: s3 put-if-absent %q: %w: %w", key, ErrExists, err)
	}
	return s.wrap(ctx, "put-if-absent", key, err)
}

// readPart fills buf from r, turning a short stream into ErrSizeMismatch.
func readPart(r io.Reader, buf []byte, key string, done, size int64) error {
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %q reader ended after %d of %d bytes", ErrSizeMismatch, key, done+int64(n), size)
	}
	return err
}

// putMultipart uploads size bytes of r in parts of s.partSize, up to
// s.parallel parts at once. Parts are read from r in order by this
// goroutine; each is sent by its own goroutine, all of which Put waits for.
// Any failure aborts the upload.
func (s *S3Store) putMultipart(ctx context.Context, key string, r io.Reader, size int64) error {
	parts := int((size + s.partSize - 1) / s.partSize)
	if parts > MaxParts {
		return fmt.Errorf("tiering: s3 put %q: %d bytes need %d parts of %d, more than S3's %d", key, size, parts, s.partSize, MaxParts)
	}
	fullKey := aws.String(s.keyPrefix + key)
	created, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:            &s.bucket,
		Key:               fullKey,
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
	})
	if err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	uploadID := created.UploadId

	uploadCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// buffers is both the pool of part buffers and the bound on parts in
	// flight: a part is read only once a buffer is free.
	buffers := make(chan []byte, s.parallel)
	for range s.parallel {
		buffers <- nil
	}
	completed := make([]types.CompletedPart, parts)
	var wg sync.WaitGroup
	var readErr error
	for i := range parts {
		var buf []byte
		select {
		case buf = <-buffers:
		case <-uploadCtx.Done():
		}
		if uploadCtx.Err() != nil {
			break
		}
		if buf == nil {
			buf = make([]byte, s.partSize)
		}
		offset := int64(i) * s.partSize
		part := buf[:min(s.partSize, size-offset)]
		if readErr = readPart(r, part, key, offset, size); readErr != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { buffers <- buf }()
			number := aws.Int32(int32(i + 1))
			out, err := s.client.UploadPart(uploadCtx, &s3.UploadPartInput{
				Bucket:            &s.bucket,
				Key:               fullKey,
				UploadId:          uploadID,
				PartNumber:        number,
				Body:              bytes.NewReader(part),
				ContentLength:     aws.Int64(int64(len(part))),
				ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
			})
			if err != nil {
				cancel(fmt.Errorf("part %d: %w", i+1, err))
				return
			}
			completed[i] = types.CompletedPart{PartNumber: number, ETag: out.ETag, ChecksumCRC32C: out.ChecksumCRC32C}
		}()
	}
	if readErr == nil && uploadCtx.Err() == nil {
		readErr = expectEOF(r, key, size)
	}
	wg.Wait()
	err = readErr
	if err == nil {
		err = context.Cause(uploadCtx)
	}
	if err == nil {
		_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket:          &s.bucket,
			Key:             fullKey,
			UploadId:        uploadID,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: completed},
		})
	}
	if err != nil {
		abortCtx, cancelAbort := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancelAbort()
		if _, abortErr := s.client.AbortMultipartUpload(abortCtx, &s3.AbortMultipartUploadInput{
			Bucket: &s.bucket, Key: fullKey, UploadId: uploadID,
		}); abortErr != nil {
			err = fmt.Errorf("%w (and aborting multipart upload %s failed: %v)", err, aws.ToString(uploadID), abortErr)
		}
		return s.wrap(ctx, "put", key, err)
	}
	return nil
}

// Get implements ObjectStore.
func (s *S3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.check(ctx, "get", key); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.keyPrefix + key)})
	if err != nil {
		return nil, s.wrap(ctx, "get", key, err)
	}
	return newCtxReadCloser(ctx, out.Body, out.Body), nil
}

// GetRange implements ObjectStore.
func (s *S3Store) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := s.check(ctx, "get range", key); err != nil {
		return nil, err
	}
	if err := validateRange(key, offset, length); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket,
		Key:    aws.String(s.keyPrefix + key),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", offset, rangeEnd(offset, length))),
	})
	if err != nil {
		return nil, s.wrap(ctx, "get range", key, err)
	}
	body := io.Reader(out.Body)
	if out.ContentRange == nil {
		// The service ignored the range (some do for empty objects) and
		// sent the whole object: cut the range out here.
		length, err = clampRange(key, offset, length, aws.ToInt64(out.ContentLength))
		if err == nil {
			_, err = io.CopyN(io.Discard, out.Body, offset)
		}
		if err != nil {
			out.Body.Close()
			return nil, s.wrap(ctx, "get range", key, err)
		}
		body = io.LimitReader(out.Body, length)
	}
	return newCtxReadCloser(ctx, body, out.Body), nil
}

// Head implements ObjectStore. A missing bucket also reports ErrNotFound:
// a HEAD response has no body to tell the two apart.
func (s *S3Store) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := s.check(ctx, "head", key); err != nil {
		return ObjectInfo{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.keyPrefix + key)})
	if err != nil {
		return ObjectInfo{}, s.wrap(ctx, "head", key, err)
	}
	return ObjectInfo{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		ETag:    strings.Trim(aws.ToString(out.ETag), `"`),
	}, nil
}

// List implements ObjectStore, following ListObjectsV2 continuation tokens
// (1000 keys a page) to the end.
func (s *S3Store) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tiering: s3 list %q: %w", prefix, err)
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.bucket,
		Prefix: aws.String(s.keyPrefix + prefix),
	})
	infos := []ObjectInfo{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.wrap(ctx, "list", prefix, err)
		}
		for _, obj := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(obj.Key), s.keyPrefix)
			if !ok || ValidateKey(key) != nil {
				continue // not an object this store could have written
			}
			infos = append(infos, ObjectInfo{
				Key:     key,
				Size:    aws.ToInt64(obj.Size),
				ModTime: aws.ToTime(obj.LastModified),
				ETag:    strings.Trim(aws.ToString(obj.ETag), `"`),
			})
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	return infos, nil
}

// Delete implements ObjectStore. S3 answers a delete of a missing key with
// success, which is the contract.
func (s *S3Store) Delete(ctx context.Context, key string) error {
	if err := s.check(ctx, "delete", key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.keyPrefix + key)})
	if err != nil && isS3NotFound(err) {
		err = nil
	}
	return s.wrap(ctx, "delete", key, err)
}

// Close does nothing yet: the SDK's HTTP client offers no way to close its
// pool, whose idle connections time out by themselves (90 s). The store must
// not be used afterwards all the same.
func (s *S3Store) Close() error { return nil }

func (s *S3Store) check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tiering: s3 %s %q: %w", op, key, err)
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	if len(s.keyPrefix)+len(key) > MaxKeyLength {
		return fmt.Errorf("%w: %q with the store's prefix %q is longer than %d bytes", ErrInvalidKey, key, s.keyPrefix, MaxKeyLength)
	}
	return nil
}

// wrap adds the operation and key to err, and the matching sentinel:
// ErrNotFound for a missing key, ErrInvalidRange for an unsatisfiable
// range, ctx.Err() when the caller's context ended. nil stays nil.
func (s *S3Store) wrap(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("tiering: s3 %s %q: %w: %w", op, key, ctx.Err(), err)
	case isS3NotFound(err):
		return fmt.Errorf("tiering: s3 %s %q: %w: %w", op, key, ErrNotFound, err)
	case s3ErrorCode(err) == "InvalidRange":
		return fmt.Errorf("tiering: s3 %s %q: %w: %w", op, key, ErrInvalidRange, err)
	}
	return fmt.Errorf("tiering: s3 %s %q: %w", op, key, err)
}

// isS3NotFound: the key does not exist. GET answers NoSuchKey; HEAD, having
// no body, only a 404 that the SDK names NotFound.
func isS3NotFound(err error) bool {
	code := s3ErrorCode(err)
	return code == "NoSuchKey" || code == "NotFound"
}

func s3ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
