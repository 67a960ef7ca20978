package tiering

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// ObjectStore is a flat namespace of immutable-once-written objects addressed
// by key. Every implementation (FileStore, MemStore, S3Store) passes the same
// contract suite in tiering/storetest; doc.go states the contract in full.
//
// All methods are safe for concurrent use. Every method honours ctx: a call
// made with a cancelled or expired context returns an error that wraps
// ctx.Err().
type ObjectStore interface {
	// Put stores exactly size bytes read from r under key, replacing any
	// object already there. The object becomes visible whole or not at all:
	// readers never see a partial object. If r yields fewer or more than
	// size bytes, Put fails with ErrSizeMismatch and stores nothing.
	Put(ctx context.Context, key string, r io.Reader, size int64) error

	// Get opens the whole object. The caller must close the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, error)

	// GetRange opens length bytes of the object starting at offset. offset
	// must be >= 0 and below the object's size and length must be > 0, else
	// ErrInvalidRange; a range running past the end is cut short at the end
	// (a short read, as HTTP range requests do). The caller must close the
	// reader.
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)

	// Head describes the object without reading it.
	Head(ctx context.Context, key string) (ObjectInfo, error)

	// List returns every object whose key starts with prefix (a plain string
	// prefix, not a directory), sorted by key. Paging is internal: the result
	// is complete. No match is an empty result, not an error.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)

	// Delete removes the object. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error

	// Close releases what the store holds (nothing yet for any of the
	// three). Use no store after Close.
	Close() error
}

// ConditionalPutter is a store that can create an object only if its key
// is free: of two racing PutIfAbsent calls on one key exactly one succeeds,
// the other fails with ErrExists and stores nothing. FileStore, MemStore and
// S3Store implement it (S3: a PutObject with If-None-Match: *, which AWS S3
// and MinIO honour); a writer that needs a compare-and-swap (an Iceberg
// commit) asks for it with a type assertion. Objects are small: no
// multipart.
type ConditionalPutter interface {
	PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag is an opaque version token: it is non-empty and changes when the
	// object is overwritten with different content. Compare it only with
	// ETags from the same store.
	ETag string
}

// Sentinel errors. Methods wrap them with the operation and key, so test
// with errors.Is.
var (
	// ErrNotFound: no object has this key.
	ErrNotFound = errors.New("tiering: object not found")
	// ErrInvalidKey: the key breaks the rules of ValidateKey.
	ErrInvalidKey = errors.New("tiering: invalid object key")
	// ErrInvalidRange: GetRange was given a negative offset, a length <= 0,
	// or an offset at or past the end of the object.
	ErrInvalidRange = errors.New("tiering: invalid range")
	// ErrSizeMismatch: Put's reader did not yield exactly size bytes.
	ErrSizeMismatch = errors.New("tiering: object size mismatch")
	// ErrExists: PutIfAbsent found the key taken.
	ErrExists = errors.New("tiering: object exists")
	// ErrInvalidURL: Open could not make sense of an object store URL.
	ErrInvalidURL = errors.New("tiering: invalid object store URL")
)

// MaxKeyLength is the longest key accepted, in bytes (S3's limit; an S3
// store's prefix counts towards it).
const MaxKeyLength = 1024

// MaxSegmentLength is the longest '/'-separated segment of a key, in bytes
// (the usual limit on a file name).
const MaxSegmentLength = 255

// tempMarker starts the name of the filesystem store's temporary files; no
// key segment may start with it, so a temporary file is never mistaken for
// an object.
const tempMarker = ".strata-tmp-"

// ValidateKey reports whether key may name an object, wrapping ErrInvalidKey
// if not. A key is one or more '/'-separated segments, at most MaxKeyLength
// bytes of valid UTF-8 in all, where no segment is empty, ".", "..", longer
// than MaxSegmentLength or starts with ".strata-tmp-", and no byte is NUL or
// a backslash. So a key never
// starts or ends with '/', never climbs out of the store, and maps to the
// same relative path on every platform.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxKeyLength {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidKey, len(key), MaxKeyLength)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, key)
	}
	if strings.ContainsAny(key, "\x00\\") {
		return fmt.Errorf("%w: %q contains NUL or a backslash", ErrInvalidKey, key)
	}
	for _, segment := range strings.Split(key, "/") {
		if err := validateSegment(key, segment); err != nil {
			return err
		}
	}
	return nil
}

func validateSegment(key, segment string) error {
	switch {
	case segment == "":
		return fmt.Errorf("%w: %q has an empty segment (leading, trailing or double '/')", ErrInvalidKey, key)
	case segment == "." || segment == "..":
		return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, segment)
	case len(segment) > MaxSegmentLength:
		return fmt.Errorf("%w: a segment of %q is %d bytes, more than %d", ErrInvalidKey, key, len(segment), MaxSegmentLength)
	case strings.HasPrefix(segment, tempMarker):
		return fmt.Errorf("%w: %q has a segment starting with the reserved %q", ErrInvalidKey, key, tempMarker)
	}
	return nil
}

// validatePrefix checks a List prefix: every complete segment (those before
// the last '/') follows the key rules; the final, partial segment may be
// anything, including empty. The empty prefix lists everything.
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if len(prefix) > MaxKeyLength || !utf8.ValidString(prefix) || strings.ContainsAny(prefix, "\x00\\") || prefix[0] == '/' {
		return fmt.Errorf("%w: bad list prefix %q", ErrInvalidKey, prefix)
	}
	dir, _ := splitPrefix(prefix)
	if dir == "" {
		return nil
	}
	for _, segment := range strings.Split(dir, "/") {
		if err := validateSegment(prefix, segment); err != nil {
			return err
		}
	}
	return nil
}

// splitPrefix splits a prefix at its last '/': "a/b/c" → ("a/b", "c"),
// "a/" → ("a", ""), "abc" → ("", "abc").
func splitPrefix(prefix string) (dir, partial string) {
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return "", prefix
	}
	return prefix[:i], prefix[i+1:]
}

// validateRange checks GetRange arguments that do not depend on the object.
func validateRange(key string, offset, length int64) error {
	if offset < 0 || length <= 0 {
		return fmt.Errorf("%w: %q offset %d length %d", ErrInvalidRange, key, offset, length)
	}
	return nil
}

// clampRange checks offset against the object size and returns the length
// actually readable (cut at the end of the object).
func clampRange(key string, offset, length, size int64) (int64, error) {
	if offset >= size {
		return 0, fmt.Errorf("%w: %q offset %d is not below the object size %d", ErrInvalidRange, key, offset, size)
	}
	if length > size-offset {
		length = size - offset
	}
	return length, nil
}

// rangeEnd returns the last byte index of a range, saturating instead of
// overflowing for huge lengths.
func rangeEnd(offset, length int64) int64 {
	if length > math.MaxInt64-offset {
		return math.MaxInt64 - 1
	}
	return offset + length - 1
}

// ctxReader fails reads once ctx is done, so copying a long stream stops
// promptly when the caller gives up.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReadCloser is ctxReader with a Close.
type ctxReadCloser struct {
	ctxReader
	io.Closer
}

func newCtxReadCloser(ctx context.Context, r io.Reader, c io.Closer) io.ReadCloser {
	return ctxReadCloser{ctxReader{ctx, r}, c}
}

// readExactly reads exactly size bytes of r into w and then checks that r
// has nothing more, wrapping ErrSizeMismatch otherwise.
func readExactly(ctx context.Context, w io.Writer, r io.Reader, key string, size int64) error {
	if size < 0 {
		return fmt.Errorf("%w: %q negative size %d", ErrSizeMismatch, key, size)
	}
	cr := ctxReader{ctx, r}
	n, err := io.Copy(w, io.LimitReader(cr, size))
	if err != nil {
		return err
	}
	if n < size {
		return fmt.Errorf("%w: %q reader ended after %d of %d bytes", ErrSizeMismatch, key, n, size)
	}
	return expectEOF(cr, key, size)
}

// expectEOF checks that r, having yielded size bytes, has no more.
func expectEOF(r io.Reader, key string, size int64) error {
	var probe [1]byte
	for range 100 {
		n, err := r.Read(probe[:])
		if n > 0 {
			return fmt.Errorf("%w: %q reader has more than %d bytes", ErrSizeMismatch, key, size)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}
