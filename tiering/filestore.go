package tiering

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// FileStore is an ObjectStore in a local directory: key "a/b/c" is the file
// <root>/a/b/c. Put writes a temporary file in the target directory, fsyncs
// it, renames it over the target and fsyncs the directory, so an object is
// either absent, the old version or the whole new version, also after a
// crash. Delete removes the file and then any directories it left empty.
//
// One limit the other stores lack: a key cannot also be the directory of
// other keys ("a" and "a/b" cannot both exist); Put of the second fails.
type FileStore struct {
	root string
}

var _ ObjectStore = (*FileStore)(nil)

// NewFileStore opens (creating if needed) a store rooted at dir.
func NewFileStore(dir string) (*FileStore, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tiering: file store %q: %w", dir, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("tiering: file store: %w", err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("tiering: file store: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("tiering: file store: %s is not a directory", root)
	}
	return &FileStore{root: root}, nil
}

// Root returns the absolute directory the store keeps its objects in.
func (s *FileStore) Root() string { return s.root }

// path maps a validated key to its file. ValidateKey guarantees that the
// result stays under root.
func (s *FileStore) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// Put implements ObjectStore.
func (s *FileStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	if err := s.put(ctx, key, r, size); err != nil {
		return fmt.Errorf("tiering: file put %q: %w", key, err)
	}
	return nil
}

// PutIfAbsent implements ConditionalPutter: the temporary file is linked
// to the key's path, which link(2) refuses if the path exists.
func (s *FileStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	if err := s.putWith(ctx, key, r, size, os.Link); err != nil {
		if errors.Is(err, fs.ErrExist) {
			err = ErrExists
		}
		return fmt.Errorf("tiering: file put-if-absent %q: %w", key, err)
	}
	return nil
}

func (s *FileStore) put(ctx context.Context, key string, r io.Reader, size int64) error {
	return s.putWith(ctx, key, r, size, os.Rename)
}

// putWith writes a temporary file and moves it to the key's path with
// place (rename: replace; link: only if absent, the temporary name then
// removed).
func (s *FileStore) putWith(ctx context.Context, key string, r io.Reader, size int64, place func(oldpath, newpath string) error) error {
	target := s.path(key)
	dir := filepath.Dir(target)
	tmp, err := s.createTemp(dir)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := readExactly(ctx, tmp, r, key, size); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := place(tmp.Name(), target); err != nil {
		return err
	}
	committed = true
	os.Remove(tmp.Name()) // after a link; a renamed temporary is gone already
	return syncDir(dir)
}

// createTemp makes the directories down to dir (fsyncing each parent that
// gained an entry) and a temporary file in dir. A concurrent Delete may
// remove a directory it has just emptied between those two steps, so this
// retries a few times.
func (s *FileStore) createTemp(dir string) (*os.File, error) {
	var err error
	for range 5 {
		if err = s.mkdirAll(dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		var f *os.File
		f, err = os.CreateTemp(dir, tempMarker+"*")
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, err
}

// mkdirAll creates dir and its missing parents below root, fsyncing the
// parent of each directory it creates so the new entries are durable.
func (s *FileStore) mkdirAll(dir string) error {
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	rel, err := filepath.Rel(s.root, dir)
	if err != nil {
		return err
	}
	current := s.root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		parent := current
		current = filepath.Join(current, part)
		err := os.Mkdir(current, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	return nil
}

// Get implements ObjectStore.
func (s *FileStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.check(ctx, "get", key); err != nil {
		return nil, err
	}
	f, _, err := s.open("get", key)
	if err != nil {
		return nil, err
	}
	return newCtxReadCloser(ctx, f, f), nil
}

// GetRange implements ObjectStore.
func (s *FileStore) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := s.check(ctx, "get range", key); err != nil {
		return nil, err
	}
	if err := validateRange(key, offset, length); err != nil {
		return nil, err
	}
	f, info, err := s.open("get range", key)
	if err != nil {
		return nil, err
	}
	length, err = clampRange(key, offset, length, info.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	return newCtxReadCloser(ctx, io.NewSectionReader(f, offset, length), f), nil
}

// open opens the object's file, which must be a regular file.
func (s *FileStore) open(op, key string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(s.path(key))
	if err != nil {
		return nil, nil, s.statError(op, key, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("tiering: file %s %q: %w", op, key, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("tiering: file %s %q: %w", op, key, ErrNotFound)
	}
	return f, info, nil
}

// Head implements ObjectStore.
func (s *FileStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := s.check(ctx, "head", key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := os.Stat(s.path(key))
	if err != nil {
		return ObjectInfo{}, s.statError("head", key, err)
	}
	if !info.Mode().IsRegular() {
		return ObjectInfo{}, fmt.Errorf("tiering: file head %q: %w", key, ErrNotFound)
	}
	return fileInfo(key, info), nil
}

// List implements ObjectStore. It walks only the directory named by the
// complete segments of prefix, so listing one partition's objects does not
// read the whole tree.
func (s *FileStore) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tiering: file list %q: %w", prefix, err)
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	dir, partial := splitPrefix(prefix)
	start := s.root
	if dir != "" {
		start = s.path(dir)
	}
	infos := []ObjectInfo{}
	err := filepath.WalkDir(start, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			if path == start && isNotExist(err) {
				return fs.SkipAll // nothing under this prefix
			}
			if isNotExist(err) {
				return nil // removed while we walked
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path == start {
			return nil
		}
		name := entry.Name()
		if filepath.Dir(path) == start && !strings.HasPrefix(name, partial) {
			if entry.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if entry.IsDir() || !entry.Type().IsRegular() || strings.HasPrefix(name, tempMarker) {
			return nil
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) || ValidateKey(key) != nil {
			return nil // a file no key can name; not ours
		}
		info, err := entry.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		infos = append(infos, fileInfo(key, info))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tiering: file list %q: %w", prefix, err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	return infos, nil
}

// Delete implements ObjectStore.
func (s *FileStore) Delete(ctx context.Context, key string) error {
	if err := s.check(ctx, "delete", key); err != nil {
		return err
	}
	path := s.path(key)
	info, err := os.Lstat(path)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("tiering: file delete %q: %w", key, err)
	}
	if info.IsDir() {
		return nil // a directory of other keys, not an object
	}
	if err := os.Remove(path); err != nil && !isNotExist(err) {
		return fmt.Errorf("tiering: file delete %q: %w", key, err)
	}
	dir := filepath.Dir(path)
	if err := syncDir(dir); err != nil && !isNotExist(err) {
		return fmt.Errorf("tiering: file delete %q: %w", key, err)
	}
	s.removeEmptyDirs(dir)
	return nil
}

// removeEmptyDirs removes dir and its parents below root while they are
// empty. Failure (a directory that is not empty) ends it quietly.
func (s *FileStore) removeEmptyDirs(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Close implements ObjectStore; a FileStore holds nothing open.
func (s *FileStore) Close() error { return nil }

func (s *FileStore) check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tiering: file %s %q: %w", op, key, err)
	}
	return ValidateKey(key)
}

func (s *FileStore) statError(op, key string, err error) error {
	if isNotExist(err) {
		return fmt.Errorf("tiering: file %s %q: %w", op, key, ErrNotFound)
	}
	return fmt.Errorf("tiering: file %s %q: %w", op, key, err)
}

// isNotExist: the path is missing, or a parent of it is a file (ENOTDIR),
// which for a key means the same.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func fileInfo(key string, info os.FileInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime(), ETag: fileETag(info)}
}

// syncDir fsyncs a directory so the entries created or removed in it are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if closeErr := d.Close(); err == nil {
		err = closeErr
	}
	return err
}
