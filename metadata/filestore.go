package metadata

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// fileStoreName is the document FileStore reads in its directory.
const fileStoreName = "cluster-metadata.json"

// FileStore is the metadata of a data directory written before the
// controller quorum: one JSON document, cluster-metadata.json, that the
// single-node broker of those days rewrote atomically on every change.
// The broker now only reads it, once, to migrate such a directory into
// the quorum (broker/quorum.go); nothing writes it any more.
//
// The document, as those brokers wrote it:
//
//	{
//	  "cluster_id": "<base64url, 22 characters>",
//	  "next_producer_id": <first producer id not yet handed out>,
//	  "topics": {
//	    "<name>": {
//	      "name": "<name>",
//	      "id": [<16 bytes as numbers>],
//	      "leader_epochs": [<one per partition>],
//	      "configs": {"<kafka name>": "<value>", …}   (omitted when empty)
//	    }, …
//	  }
//	}
type FileStore struct {
	doc document
}

type document struct {
	ClusterID      string           `json:"cluster_id"`
	NextProducerID int64            `json:"next_producer_id"`
	Topics         map[string]Topic `json:"topics"`
}

// OpenFileStore reads the document in dir. A missing document is an error
// matching os.ErrNotExist; a document that is not valid JSON is refused.
func OpenFileStore(dir string) (*FileStore, error) {
	path := filepath.Join(dir, fileStoreName)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	s := &FileStore{}
	if err := json.Unmarshal(raw, &s.doc); err != nil {
		return nil, fmt.Errorf("metadata: corrupt %s: %w", path, err)
	}
	return s, nil
}

// ClusterID is the cluster id the document recorded.
func (s *FileStore) ClusterID() string { return s.doc.ClusterID }

// NextProducerID is the first producer id the old broker had not handed out.
func (s *FileStore) NextProducerID() int64 { return s.doc.NextProducerID }

// Topics returns a copy of every topic, sorted by name.
func (s *FileStore) Topics() []Topic {
	out := make([]Topic, 0, len(s.doc.Topics))
	for name, t := range s.doc.Topics {
		t = t.Clone()
		t.Name = name
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
