package tiering

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemStore is an ObjectStore in memory: the twin of FileStore and S3Store
// for tests. Objects are copied in on Put and served from that copy; a
// reader opened before an overwrite keeps reading the old content. The zero
// value is not usable; call NewMemStore (or Open "mem://").
type MemStore struct {
	mu struct {
		sync.Mutex
		objects map[string]memObject
	}
}

type memObject struct {
	data    []byte
	modTime time.Time
	etag    string
}

var _ ObjectStore = (*MemStore)(nil)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	s := &MemStore{}
	s.mu.objects = make(map[string]memObject)
	return s
}

// Put implements ObjectStore.
func (s *MemStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	var buf bytes.Buffer
	if size > 0 && size < 1<<30 {
		buf.Grow(int(size))
	}
	if err := readExactly(ctx, &buf, r, key, size); err != nil {
		return fmt.Errorf("tiering: mem put %q: %w", key, err)
	}
	sum := md5.Sum(buf.Bytes())
	obj := memObject{data: buf.Bytes(), modTime: time.Now(), etag: hex.EncodeToString(sum[:])}
	s.mu.Lock()
	s.mu.objects[key] = obj
	s.mu.Unlock()
	return nil
}

// PutIfAbsent implements ConditionalPutter.
func (s *MemStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := readExactly(ctx, &buf, r, key, size); err != nil {
		return fmt.Errorf("tiering: mem put-if-absent %q: %w", key, err)
	}
	sum := md5.Sum(buf.Bytes())
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.mu.objects[key]; taken {
		return fmt.Errorf("tiering: mem put-if-absent %q: %w", key, ErrExists)
	}
	s.mu.objects[key] = memObject{data: buf.Bytes(), modTime: time.Now(), etag: hex.EncodeToString(sum[:])}
	return nil
}

// Get implements ObjectStore.
func (s *MemStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.check(ctx, "get", key); err != nil {
		return nil, err
	}
	obj, err := s.lookup("get", key)
	if err != nil {
		return nil, err
	}
	return newCtxReadCloser(ctx, bytes.NewReader(obj.data), io.NopCloser(nil)), nil
}

// GetRange implements ObjectStore.
func (s *MemStore) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := s.check(ctx, "get range", key); err != nil {
		return nil, err
	}
	if err := validateRange(key, offset, length); err != nil {
		return nil, err
	}
	obj, err := s.lookup("get range", key)
	if err != nil {
		return nil, err
	}
	length, err = clampRange(key, offset, length, int64(len(obj.data)))
	if err != nil {
		return nil, err
	}
	return newCtxReadCloser(ctx, bytes.NewReader(obj.data[offset:offset+length]), io.NopCloser(nil)), nil
}

// Head implements ObjectStore.
func (s *MemStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := s.check(ctx, "head", key); err != nil {
		return ObjectInfo{}, err
	}
	obj, err := s.lookup("head", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	return obj.info(key), nil
}

// List implements ObjectStore.
func (s *MemStore) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tiering: mem list %q: %w", prefix, err)
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	s.mu.Lock()
	infos := []ObjectInfo{}
	for key, obj := range s.mu.objects {
		if strings.HasPrefix(key, prefix) {
			infos = append(infos, obj.info(key))
		}
	}
	s.mu.Unlock()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	return infos, nil
}

// Delete implements ObjectStore.
func (s *MemStore) Delete(ctx context.Context, key string) error {
	if err := s.check(ctx, "delete", key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.mu.objects, key)
	s.mu.Unlock()
	return nil
}

// Close implements ObjectStore; a MemStore keeps working after Close.
func (s *MemStore) Close() error { return nil }

func (s *MemStore) check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tiering: mem %s %q: %w", op, key, err)
	}
	return ValidateKey(key)
}

func (s *MemStore) lookup(op, key string) (memObject, error) {
	s.mu.Lock()
	obj, ok := s.mu.objects[key]
	s.mu.Unlock()
	if !ok {
		return memObject{}, fmt.Errorf("tiering: mem %s %q: %w", op, key, ErrNotFound)
	}
	return obj, nil
}

func (o memObject) info(key string) ObjectInfo {
	return ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime, ETag: o.etag}
}
