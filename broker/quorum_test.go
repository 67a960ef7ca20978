package broker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/metadata"
)

// TestMetadataMigratesFileStore: a data directory written before the
// metadata quorum (one FileStore JSON document) starts on the quorum with
// the same cluster id, topics (ids, partitions, configs) and producer-id
// counter; the document is set aside and later starts read the raft log.
func TestMetadataMigratesFileStore(t *testing.T) {
	dataDir := t.TempDir()
	// The document as the pre-quorum broker wrote it (metadata.FileStore).
	id := metadata.NewTopicID()
	clusterID := "mIgRaTeD-cluster-id-01"
	doc, err := json.Marshal(map[string]any{
		"cluster_id":       clusterID,
		"next_producer_id": 5000,
		"topics": map[string]any{
			"legacy": map[string]any{"name": "legacy", "id": id, "leader_epochs": make([]int32, 3), "configs": map[string]string{"retention.ms": "1234"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dataDir, metadataDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, metadataDir, legacyMetadataFile), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := metadata.OpenFileStore(filepath.Join(dataDir, metadataDir))
	if err != nil || fs.ClusterID() != clusterID || len(fs.Topics()) != 1 {
		t.Fatalf("the fixture does not read back: %v", err)
	}

	tb := startTestBroker(t, func(c *Config) { c.DataDir = dataDir })
	check := func(when string) {
		t.Helper()
		if got := tb.srv.clusterState().ClusterID; got != clusterID {
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

// TestMetadataStartFailsWithoutMajority: a node whose quorum has no
// majority up (here the other two voters do not exist) gives up after
// metadataStartTimeout with an error naming the quorum, rather than
// serving without metadata.
func TestMetadataStartFailsWithoutMajority(t *testing.T) {
	defer func(d time.Duration) { metadataStartTimeout = d }(metadataStartTimeout)
	metadataStartTimeout = 2 * time.Second
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.ControllerListen = brokertest.FreeAddr(t)
	cfg.ControllerQuorumVoters = "1@" + cfg.ControllerListen + ",2@127.0.0.1:1,3@127.0.0.1:2"
	start := time.Now()
	_, err := openMetadata(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "metadata quorum") {
		t.Fatalf("start without a majority: %v, want a metadata quorum error", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("gave up after %v, want about %v", took, metadataStartTimeout)
	}
}
