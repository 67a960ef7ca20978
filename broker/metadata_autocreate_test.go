package broker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopicAnswer sends a Metadata request of the version for one
// topic (allow_auto_topic_creation true where the version has it) and
// returns the topic's entry.
func metadataTopicAnswer(t *testing.T, c *rawConn, version int16, topic string) kmsg.MetadataResponseTopic {
	t.Helper()
	resp := roundTrip[*kmsg.MetadataResponse](c, metadataFor(version, true, topic))
	if len(resp.Topics) != 1 || resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != topic {
		t.Fatalf("v%d metadata for %s: topics %+v", version, topic, resp.Topics)
	}
	return resp.Topics[0]
}

// freezeDeletionClock stops the clock of tb's deleted-topic guard, so a
// test takes as long as it needs inside recreateGuardWindow; advance moves
// it forward.
func freezeDeletionClock(tb *testBroker) (advance func(time.Duration)) {
	m := tb.srv.topics
	m.deleted.Lock()
	defer m.deleted.Unlock()
	frozen := time.Now()
	m.deleted.now = func() time.Time { return frozen } // called under m.deleted
	return func(d time.Duration) {
		m.deleted.Lock()
		defer m.deleted.Unlock()
		frozen = frozen.Add(d)
	}
}

// TestMetadataAutoCreateAnswersLeaderNotAvailable: the Metadata request
// that auto-creates a topic is answered as Kafka answers it —
// LEADER_NOT_AVAILABLE, the name and is_internal, a zero topic ID, no
// partitions — and the next one lists the topic ready, for old (v1) and
// current (v12) requests and for the internal topics.
func TestMetadataAutoCreateAnswersLeaderNotAvailable(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		c.NumPartitions = 3
		c.TransactionStateLogNumPartitions = 4
	})
	c := tb.dialRaw()
	for _, tc := range []struct {
		version    int16
		topic      string
		partitions int
		internal   bool
	}{
		{1, "auto-v1", 3, false},
		{12, "auto-v12", 3, false},
		{12, transactionStateTopic, 4, true},
	} {
		first := metadataTopicAnswer(t, c, tc.version, tc.topic)
		if first.ErrorCode != kerr.LeaderNotAvailable.Code || len(first.Partitions) != 0 || first.TopicID != [16]byte{} || first.IsInternal != tc.internal {
			t.Errorf("v%d creating %s: error %v, %d partitions, topic id %x, internal %v; want LEADER_NOT_AVAILABLE, none, zero, %v",
				tc.version, tc.topic, kerr.ErrorForCode(first.ErrorCode), len(first.Partitions), first.TopicID, first.IsInternal, tc.internal)
		}
		created := tb.srv.topics.get(tc.topic)
		if created == nil {
			t.Fatalf("v%d: %s not created by the request that answered LEADER_NOT_AVAILABLE", tc.version, tc.topic)
		}
		next := metadataTopicAnswer(t, c, tc.version, tc.topic)
		if next.ErrorCode != 0 || len(next.Partitions) != tc.partitions || next.IsInternal != tc.internal {
			t.Errorf("v%d next metadata for %s: error %v, %d partitions, internal %v; want none, %d, %v",
				tc.version, tc.topic, kerr.ErrorForCode(next.ErrorCode), len(next.Partitions), next.IsInternal, tc.partitions, tc.internal)
		}
		if tc.version >= 10 && next.TopicID != created.id {
			t.Errorf("v%d next metadata for %s: topic id %x, want %x", tc.version, tc.topic, next.TopicID, created.id)
		}
		for _, p := range next.Partitions {
			if p.ErrorCode != 0 || p.Leader != 1 {
				t.Errorf("%s-%d: error %v, leader %d", tc.topic, p.Partition, kerr.ErrorForCode(p.ErrorCode), p.Leader)
			}
		}
	}
	// Naming __transaction_state creates that topic, not the group one.
	if tb.srv.topics.get(consumerOffsetsTopic) != nil {
		t.Errorf("metadata for %s created %s", transactionStateTopic, consumerOffsetsTopic)
	}
}

// TestAutoCreateThroughProducers: clients that learn of a new topic from
// Metadata retry LEADER_NOT_AVAILABLE with their default settings, so
// producing to a topic that does not exist yet still works.
func TestAutoCreateThroughProducers(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)

	// franz-go asks for auto-creation only when told to; nothing else tuned.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fresh-franz", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("franz-go produce to a new topic: %v", err)
	}

	prod, err := sarama.NewSyncProducer([]string{tb.addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "fresh-sarama", Value: sarama.StringEncoder("v")}); err != nil {
		t.Fatalf("sarama produce to a new topic: %v", err)
	}
	for _, topic := range []string{"fresh-franz", "fresh-sarama"} {
		if end := tb.logEnd(topic, 0); end != 1 {
			t.Errorf("%s: log end %d, want 1", topic, end)
		}
	}
}

// TestMetadataDoesNotRecreateDeletedTopic: for recreateGuardWindow after
// a deletion Metadata does not auto-create the name (whatever the
// request's version), while CreateTopics recreates it at once; after the
// window auto-creation is back.
func TestMetadataDoesNotRecreateDeletedTopic(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	c := tb.dialRaw()
	advance := freezeDeletionClock(tb)
	tb.createTopic("doomed", 1, nil)

	deleteTopic := func() {
		t.Helper()
		resp, err := adm.DeleteTopics(ctx, "doomed")
		if err != nil || resp["doomed"].Err != nil {
			t.Fatalf("delete: %v %v", err, resp["doomed"].Err)
		}
	}
	notRecreated := func(what string) {
		t.Helper()
		if tb.srv.topics.get("doomed") != nil {
			t.Fatalf("%s: the deleted topic was recreated", what)
		}
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if listed.Has("doomed") {
			t.Fatalf("%s: ListTopics lists the deleted topic", what)
		}
	}

	deleteTopic()
	for _, version := range []int16{1, 3, 4, 12} {
		if got := metadataTopicAnswer(t, c, version, "doomed"); got.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(got.Partitions) != 0 {
			t.Errorf("v%d metadata right after the deletion: %v, %d partitions; want UNKNOWN_TOPIC_OR_PARTITION", version, kerr.ErrorForCode(got.ErrorCode), len(got.Partitions))
		}
		notRecreated(fmt.Sprintf("v%d metadata", version))
	}

	// An explicit CreateTopics is never held back.
	created, err := adm.CreateTopic(ctx, 2, 1, nil, "doomed")
	if err != nil || created.Err != nil {
		t.Fatalf("CreateTopics right after the deletion: %v %v", err, created.Err)
	}
	if got := metadataTopicAnswer(t, c, 1, "doomed"); got.ErrorCode != 0 || len(got.Partitions) != 2 {
		t.Fatalf("metadata of the recreated topic: %v, %d partitions", kerr.ErrorForCode(got.ErrorCode), len(got.Partitions))
	}

	// Past the window, Metadata auto-creates the name again.
	deleteTopic()
	if got := metadataTopicAnswer(t, c, 1, "doomed"); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v1 metadata after the second deletion: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	notRecreated("after the second deletion")
	advance(recreateGuardWindow - time.Millisecond)
	if got := metadataTopicAnswer(t, c, 1, "doomed"); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v1 metadata just inside the window: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	advance(time.Millisecond)
	if got := metadataTopicAnswer(t, c, 1, "doomed"); got.ErrorCode != kerr.LeaderNotAvailable.Code || tb.srv.topics.get("doomed") == nil {
		t.Fatalf("v1 metadata %v after the deletion: %v, want LEADER_NOT_AVAILABLE and the topic created", recreateGuardWindow, kerr.ErrorForCode(got.ErrorCode))
	}
}

// TestDeletedTopicNotRecreatedByAnyNode: every node applies a deletion
// and then refuses to auto-create the name, not only the one that
// handled DeleteTopics.
func TestDeletedTopicNotRecreatedByAnyNode(t *testing.T) {
	c := startTestCluster(t, 2)
	cl := c.client()
	ctx := testContext(t)
	waitUntil(t, 10*time.Second, "both nodes registered everywhere", func() bool {
		return len(c.node(1).srv.clusterState().Brokers) == 2 && len(c.node(2).srv.clusterState().Brokers) == 2
	})
	create := assignedTopicRequest("shared", []int32{0}, func(int32) []int32 { return []int32{1, 2} })
	if resp, err := create.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	waitUntil(t, 10*time.Second, "both nodes to open the topic", func() bool {
		return c.node(1).srv.topics.get("shared") != nil && c.node(2).srv.topics.get("shared") != nil
	})
	for _, nb := range c.nodes {
		freezeDeletionClock(nb)
	}
	conns := []*rawConn{c.node(1).dialRaw(), c.node(2).dialRaw()}
	if resp, err := kadm.NewClient(cl).DeleteTopics(ctx, "shared"); err != nil || resp["shared"].Err != nil {
		t.Fatalf("delete: %v %v", err, resp["shared"].Err)
	}
	// A node that has not applied the deletion yet still lists the topic;
	// none may answer as if it had created it.
	for i, conn := range conns {
		waitUntil(t, 10*time.Second, "node to answer UNKNOWN_TOPIC_OR_PARTITION", func() bool {
			got := metadataTopicAnswer(t, conn, 1, "shared")
			if got.ErrorCode == kerr.LeaderNotAvailable.Code {
				t.Fatalf("node %d recreated the deleted topic", i+1)
			}
			return got.ErrorCode == kerr.UnknownTopicOrPartition.Code
		})
	}
	for _, nb := range c.nodes {
		if nb.srv.topics.get("shared") != nil {
			t.Errorf("node %d has the deleted topic", nb.cfg.NodeID)
		}
	}
}

// TestSaramaRefreshAfterDeleteTopic: a sarama client that knows a topic
// deleted through sarama's ClusterAdmin refreshes its metadata (Metadata
// v11 with allow_auto_topic_creation, sarama's default, and v1 for a
// client configured for Kafka 0.10.0) without bringing the topic back.
func TestSaramaRefreshAfterDeleteTopic(t *testing.T) {
	tb := startTestBroker(t)
	freezeDeletionClock(tb)
	tb.createTopic("sarama-doomed", 1, nil)

	oldCfg := saramaConfig()
	oldCfg.Version = sarama.V0_10_0_0 // Metadata v1: cannot opt out of auto-creation
	var clients []sarama.Client
	for _, cfg := range []*sarama.Config{saramaConfig(), oldCfg} {
		cl, err := sarama.NewClient([]string{tb.addr()}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if parts, err := cl.Partitions("sarama-doomed"); err != nil || len(parts) != 1 {
			t.Fatalf("sarama %v partitions: %v %v", cfg.Version, parts, err)
		}
		clients = append(clients, cl)
	}
	admin, err := sarama.NewClusterAdminFromClient(clients[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteTopic("sarama-doomed"); err != nil {
		t.Fatalf("sarama DeleteTopic: %v", err)
	}
	for i, cl := range clients {
		if err := cl.RefreshMetadata("sarama-doomed"); !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			t.Errorf("client %d: RefreshMetadata of the deleted topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", i, err)
		}
		if tb.srv.topics.get("sarama-doomed") != nil {
			t.Fatalf("client %d: RefreshMetadata recreated the deleted topic", i)
		}
	}
	listed, err := tb.admin().ListTopics(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if listed.Has("sarama-doomed") {
		t.Fatal("ListTopics lists the deleted topic")
	}
}
