package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileStoreSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	cluster := s.ClusterID()
	if cluster == "" {
		t.Fatal("empty cluster id")
	}
	topic := Topic{Name: "orders", ID: NewTopicID(), LeaderEpochs: []int32{0, 0, 0}, Configs: map[string]string{"retention.ms": "1000"}}
	if err := s.CreateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic(topic); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("second create: %v", err)
	}
	topic.LeaderEpochs = append(topic.LeaderEpochs, 0)
	if err := s.UpdateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic(Topic{Name: "gone", ID: NewTopicID(), LeaderEpochs: []int32{0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic("gone"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	first, err := s.AllocateProducerIDs(1000)
	if err != nil {
		t.Fatal(err)
	}

	s2, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2.ClusterID() != cluster {
		t.Errorf("cluster id changed: %s → %s", cluster, s2.ClusterID())
	}
	topics := s2.Topics()
	if len(topics) != 1 || topics[0].Name != "orders" || topics[0].ID != topic.ID || topics[0].Partitions() != 4 || topics[0].Configs["retention.ms"] != "1000" {
		t.Fatalf("topics after reopen: %+v", topics)
	}
	next, err := s2.AllocateProducerIDs(1000)
	if err != nil {
		t.Fatal(err)
	}
	if next != first+1000 {
		t.Errorf("producer ids reused: first block %d, next %d", first, next)
	}
	// Copies, not aliases.
	topics[0].Configs["retention.ms"] = "x"
	if s2.Topics()[0].Configs["retention.ms"] != "1000" {
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
