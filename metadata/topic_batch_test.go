package metadata_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// bigTopicBatch creates topics x partitions topics, replicas on nodes 1..3.
func bigTopicBatch(prefix string, topics, partitions int) cluster.TopicBatch {
	var b cluster.TopicBatch
	for i := range topics {
		ct := cluster.CreateTopic{Name: fmt.Sprintf("%s-%05d", prefix, i), ID: cluster.TopicID{byte(i >> 16), byte(i >> 8), byte(i), 1, 2, 3, prefix[0]}}
		for p := range partitions {
			ct.Partitions = append(ct.Partitions, cluster.PartitionAssignment{Replicas: []int32{int32(p%3 + 1), int32((p+1)%3 + 1)}})
		}
		b.Records = append(b.Records, ct)
	}
	return b
}

// TestTopicBatchOfManyPartitions: batches of 12,000 and 10,000 partitions
// (raft entries of hundreds of kilobytes) commit on three nodes; a node
// that was down catches up by a snapshot holding all 22,000 partitions; a
// whole restart loads them from the snapshots and WALs.
func TestTopicBatchOfManyPartitions(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
		cfg.SnapshotEvery = 3
		cfg.CatchUpEntries = 1
	}})
	leader := c.WaitLeader(10 * time.Second)
	lagger := follower(c, leader)
	c.Kill(lagger)
	for i, b := range []cluster.TopicBatch{bigTopicBatch("a", 1200, 10), bigTopicBatch("b", 1, 10_000)} {
		a, err := c.Propose(leader, b, 30*time.Second)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if _, errs := cluster.ApplyTopicBatch(a.Before, b); errs[0] != nil {
			t.Fatalf("batch %d: %v", i, errs[0])
		}
	}
	for i := 0; i < 5; i++ { // past SnapshotEvery: the log below is compacted
		if _, err := c.Propose(leader, cluster.AllocateProducerIDs{N: 1}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	c.Restart(lagger)
	c.WaitFor("the lagging node to catch up", 30*time.Second, func() bool {
		_, ok := c.Node(lagger).State().Topic("b-00000")
		return ok
	})
	if c.Node(lagger).SnapshotsInstalled() == 0 {
		t.Fatal("the lagging node caught up without a snapshot")
	}
	sameState(t, c, leader, 10*time.Second)
	want := encoded(t, c.Node(leader).State())
	c.StopAll()
	c.StartAll()
	leader = c.WaitLeader(10 * time.Second)
	sameState(t, c, leader, 10*time.Second)
	st := c.Node(leader).State()
	if got := encoded(t, st); got != want {
		t.Fatal("state after a full restart differs")
	}
	n := 0
	for _, tp := range st.Topics {
		n += len(tp.Partitions)
	}
	if len(st.Topics) != 1201 || n != 22_000 {
		t.Fatalf("%d topics, %d partitions after restart", len(st.Topics), n)
	}
}
