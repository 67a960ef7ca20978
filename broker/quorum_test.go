package broker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
)

// TestMetadataMigratesFileStore: a data directory written before the
// metadata quorum (one FileStore JSON document) starts on the quorum with
// the same cluster id, topics (ids, partitions, configs) and producer-id
// counter; the document is set aside and later starts read the raft log.
func TestMetadataMigratesFileStore(t *testing.T) {
	dataDir := t.TempDir()
	fs, err := metadata.OpenFileStore(filepath.Join(dataDir, metadataDir))
	if err != nil {
		t.Fatal(err)
	}
	id := metadata.NewTopicID()
	if err := fs.CreateTopic(metadata.Topic{Name: "legacy", ID: id, LeaderEpochs: make([]int32, 3), Configs: map[string]string{"retention.ms": "1234"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.AllocateProducerIDs(5000); err != nil {
		t.Fatal(err)
	}
	clusterID := fs.ClusterID()

	tb := startTestBroker(t, func(c *Config) { c.DataDir = dataDir })
	check := func(when string) {
		t.Helper()
		if got := tb.srv.store.ClusterID(); got != clusterID {
			t.Fatalf("%s: cluster id %q, want %q", when, got, clusterID)
		}
		topic := tb.srv.topics.get("legacy")
		if topic == nil || topic.meta.ID != id || topic.meta.Partitions() != 3 || topic.meta.Configs["retention.ms"] != "1234" {
			t.Fatalf("%s: topic %+v", when, topic)
		}
		req := kmsg.NewPtrInitProducerIDRequest()
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp := roundTrip[*kmsg.InitProducerIDResponse](tb.dialRaw(), req)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil || resp.ProducerID < 5000 {
			t.Fatalf("%s: producer id %d (%v), want one past the migrated 5000", when, resp.ProducerID, err)
		}
	}
	check("after the migration")
	if _, err := os.Stat(filepath.Join(dataDir, metadataDir, legacyMetadataFile)); !os.IsNotExist(err) {
		t.Fatalf("the migrated document is still in place: %v", err)
	}
	tb.restart()
	check("after a restart on the raft log")
}

// TestMetadataRefusesOtherVoters: until replication lands, a quorum of
// other nodes is refused at start with a clear error.
func TestMetadataRefusesOtherVoters(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.ControllerQuorumVoters = "1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3"
	if _, err := openMetadata(cfg, nil); err == nil {
		t.Fatal("a three-voter quorum was accepted")
	}
}
