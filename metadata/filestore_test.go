package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// oldDocument is a cluster-metadata.json as the pre-quorum broker wrote it
// (json.MarshalIndent of its document): topic ids as 16 numbers, one
// leader epoch per partition, configs omitted when empty.
const oldDocument = `{
  "cluster_id": "q1Sx3aHwQ_W9dYkP2mZb4A",
  "next_producer_id": 2000,
  "topics": {
    "orders": {
      "name": "orders",
      "id": [
        76, 195, 10, 98, 1, 240, 72, 9, 170, 5, 33, 217, 44, 100, 3, 251
      ],
      "leader_epochs": [
        0,
        0,
        0,
        0
      ],
      "configs": {
        "retention.ms": "1000"
      }
    },
    "plain": {
      "name": "plain",
      "id": [
        1, 2, 3, 4, 5, 6, 71, 8, 137, 10, 11, 12, 13, 14, 15, 16
      ],
      "leader_epochs": [
        0
      ]
    }
  }
}`

func TestFileStoreReadsOldDocument(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fileStoreName), []byte(oldDocument), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ClusterID(); got != "q1Sx3aHwQ_W9dYkP2mZb4A" {
		t.Errorf("cluster id %q", got)
	}
	if got := s.NextProducerID(); got != 2000 {
		t.Errorf("next producer id %d, want 2000", got)
	}
	wantID := TopicID{76, 195, 10, 98, 1, 240, 72, 9, 170, 5, 33, 217, 44, 100, 3, 251}
	topics := s.Topics()
	if len(topics) != 2 || topics[0].Name != "orders" || topics[0].ID != wantID || topics[0].Partitions() != 4 || topics[0].Configs["retention.ms"] != "1000" {
		t.Fatalf("topics: %+v", topics)
	}
	if topics[1].Name != "plain" || topics[1].Partitions() != 1 || len(topics[1].Configs) != 0 {
		t.Fatalf("second topic: %+v", topics[1])
	}
	// Copies, not aliases.
	topics[0].Configs["retention.ms"] = "x"
	if s.Topics()[0].Configs["retention.ms"] != "1000" {
		t.Error("Topics returned an alias of the stored config")
	}
}

func TestFileStoreRejectsCorruptDocument(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fileStoreName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileStore(dir); err == nil {
		t.Fatal("corrupt metadata accepted")
	}
}

func TestFileStoreMissingDocument(t *testing.T) {
	if _, err := OpenFileStore(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a directory without the document: %v, want os.ErrNotExist", err)
	}
}
