package metadata_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// storeContract is what the broker relies on from any Store.
func storeContract(t *testing.T, s metadata.Store) {
	t.Helper()
	if s.ClusterID() == "" {
		t.Fatal("empty cluster id")
	}
	topic := metadata.Topic{Name: "orders", ID: metadata.NewTopicID(), LeaderEpochs: []int32{0, 0, 0}, Configs: map[string]string{"retention.ms": "1000"}}
	if err := s.CreateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic(topic); !errors.Is(err, metadata.ErrTopicExists) {
		t.Fatalf("second create: %v", err)
	}
	topic.LeaderEpochs = append(topic.LeaderEpochs, 0)
	topic.Configs = map[string]string{"retention.ms": "2000", "cleanup.policy": "compact"}
	if err := s.UpdateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTopic(metadata.Topic{Name: "nope", ID: metadata.NewTopicID(), LeaderEpochs: []int32{0}}); !errors.Is(err, metadata.ErrTopicNotFound) {
		t.Fatalf("update of a missing topic: %v", err)
	}
	if err := s.CreateTopic(metadata.Topic{Name: "gone", ID: metadata.NewTopicID(), LeaderEpochs: []int32{0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic("gone"); !errors.Is(err, metadata.ErrTopicNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	first, err := s.AllocateProducerIDs(1000)
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.AllocateProducerIDs(1000)
	if err != nil {
		t.Fatal(err)
	}
	if next != first+1000 {
		t.Fatalf("producer id blocks overlap: %d then %d", first, next)
	}
	topics := s.Topics()
	if len(topics) != 1 || topics[0].Name != "orders" || topics[0].ID != topic.ID || topics[0].Partitions() != 4 ||
		topics[0].Configs["retention.ms"] != "2000" || topics[0].Configs["cleanup.policy"] != "compact" {
		t.Fatalf("topics: %+v", topics)
	}
	topics[0].Configs["retention.ms"] = "x"
	if s.Topics()[0].Configs["retention.ms"] != "2000" {
		t.Fatal("Topics returned an alias of the stored configs")
	}
}

func TestFileStoreContract(t *testing.T) {
	s, err := metadata.OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeContract(t, s)
}

func TestRaftStoreOneNode(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := metadata.OpenRaftStore(ctx, metadata.Config{NodeID: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	storeContract(t, s)
	cluster := s.ClusterID()
	nextBefore, err := s.AllocateProducerIDs(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := metadata.OpenRaftStore(ctx, metadata.Config{NodeID: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.ClusterID() != cluster {
		t.Fatalf("cluster id changed: %s → %s", cluster, s2.ClusterID())
	}
	if topics := s2.Topics(); len(topics) != 1 || topics[0].Partitions() != 4 {
		t.Fatalf("topics after reopen: %+v", topics)
	}
	if next, err := s2.AllocateProducerIDs(1); err != nil || next != nextBefore+1 {
		t.Fatalf("producer ids after reopen: %d, %v (before %d)", next, err, nextBefore)
	}
}

func TestRaftStoreThreeNodes(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	leader := c.WaitLeader(10 * time.Second)
	f := follower(c, leader)
	c.WaitFor("a cluster id", 5*time.Second, func() bool { return c.Node(f).State().ClusterID != "" })
	// The broker on a follower changes metadata through the quorum.
	s := metadata.NewRaftStore(c.Node(f), 5*time.Second)
	storeContract(t, s)
	// Every node sees the same topics.
	want := s.Topics()
	for _, id := range c.IDs() {
		other := metadata.NewRaftStore(c.Node(id), 0)
		c.WaitFor("the topics on every node", 5*time.Second, func() bool {
			got := other.Topics()
			return len(got) == len(want) && got[0].Partitions() == want[0].Partitions() && got[0].ID == want[0].ID
		})
	}
}
