package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/strata-streaming/strata/metadata/wal"
)

// fileStoreName is the document FileStore keeps in its directory.
const fileStoreName = "cluster-metadata.json"

// FileStore is a single-node Store kept as one JSON document.
type FileStore struct {
	path string

	mu struct {
		sync.Mutex
		doc document
	}
}

type document struct {
	ClusterID      string           `json:"cluster_id"`
	NextProducerID int64            `json:"next_producer_id"`
	Topics         map[string]Topic `json:"topics"`
}

// OpenFileStore opens (or initialises) the store in dir.
func OpenFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	s := &FileStore{path: filepath.Join(dir, fileStoreName)}
	raw, err := os.ReadFile(s.path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &s.mu.doc); err != nil {
			return nil, fmt.Errorf("metadata: corrupt %s: %w", s.path, err)
		}
	case os.IsNotExist(err):
		var id [16]byte
		_, _ = rand.Read(id[:])
		s.mu.doc.ClusterID = base64.RawURLEncoding.EncodeToString(id[:])
		if err := s.persistLocked(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if s.mu.doc.Topics == nil {
		s.mu.doc.Topics = map[string]Topic{}
	}
	return s, nil
}

// ClusterID implements Store.
func (s *FileStore) ClusterID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.doc.ClusterID
}

// Topics implements Store; the result is sorted by name.
func (s *FileStore) Topics() []Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Topic, 0, len(s.mu.doc.Topics))
	for _, t := range s.mu.doc.Topics {
		out = append(out, t.Clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateTopic implements Store.
func (s *FileStore) CreateTopic(t Topic) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.doc.Topics[t.Name]; ok {
		return fmt.Errorf("%w: %s", ErrTopicExists, t.Name)
	}
	s.mu.doc.Topics[t.Name] = t.Clone()
	if err := s.persistLocked(); err != nil {
		delete(s.mu.doc.Topics, t.Name)
		return err
	}
	return nil
}

// UpdateTopic implements Store.
func (s *FileStore) UpdateTopic(t Topic) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.mu.doc.Topics[t.Name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrTopicNotFound, t.Name)
	}
	s.mu.doc.Topics[t.Name] = t.Clone()
	if err := s.persistLocked(); err != nil {
		s.mu.doc.Topics[t.Name] = old
		return err
	}
	return nil
}

// DeleteTopic implements Store.
func (s *FileStore) DeleteTopic(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.mu.doc.Topics[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrTopicNotFound, name)
	}
	delete(s.mu.doc.Topics, name)
	if err := s.persistLocked(); err != nil {
		s.mu.doc.Topics[name] = old
		return err
	}
	return nil
}

// AllocateProducerIDs implements Store.
func (s *FileStore) AllocateProducerIDs(n int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.mu.doc.NextProducerID
	s.mu.doc.NextProducerID += n
	if err := s.persistLocked(); err != nil {
		s.mu.doc.NextProducerID = first
		return 0, err
	}
	return first, nil
}

// Close implements Store.
func (s *FileStore) Close() error { return nil }

// persistLocked writes the document crash-safely: a reader after any crash
// sees either the old or the new document, never a mix.
func (s *FileStore) persistLocked() error {
	raw, err := json.MarshalIndent(&s.mu.doc, "", "  ")
	if err != nil {
		return fmt.Errorf("metadata: encode: %w", err)
	}
	if err := wal.WriteFileAtomic(s.path, raw); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	return nil
}
