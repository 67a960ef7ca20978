package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func ptr(s string) *string { return &s }

// TestAdminSurfaceSarama drives the real binary with sarama's ClusterAdmin,
// an encoder Strata does not share: dynamic broker configs (the cluster
// default and a node's, live and across a restart), Kafka's sources for
// values set by flags, log levels through BROKER_LOGGER, log dirs and
// preferred leader election.
func TestAdminSurfaceSarama(t *testing.T) {
	srv := startServer(t, "--node-id", "1")
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Admin.Timeout = 20 * time.Second
	admin, err := sarama.NewClusterAdmin([]string{srv.addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { admin.Close() }()
	if err := admin.CreateTopic("orders", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}

	describe := func(a sarama.ClusterAdmin, typ sarama.ConfigResourceType, name string, names ...string) map[string]sarama.ConfigEntry {
		t.Helper()
		entries, err := a.DescribeConfig(sarama.ConfigResource{Type: typ, Name: name, ConfigNames: names})
		if err != nil {
			t.Fatalf("describe %v %s: %v", typ, name, err)
		}
		out := map[string]sarama.ConfigEntry{}
		for _, e := range entries {
			out[e.Name] = e
		}
		return out
	}

	// Flags are STATIC_BROKER_CONFIG, Kafka's defaults DEFAULT_CONFIG.
	b := describe(admin, sarama.BrokerResource, "1", "node.id", "log.dirs", "num.partitions")
	if e := b["node.id"]; e.Value != "1" || e.Source != sarama.SourceStaticBroker || !e.ReadOnly {
		t.Errorf("node.id: %+v", e)
	}
	if e := b["log.dirs"]; e.Value != srv.dataDir || e.Source != sarama.SourceStaticBroker {
		t.Errorf("log.dirs: %+v", e)
	}
	if e := b["num.partitions"]; e.Value != "1" || e.Source != sarama.SourceDefault {
		t.Errorf("num.partitions: %+v", e)
	}

	// The cluster default, then the node's own value.
	if err := admin.IncrementalAlterConfig(sarama.BrokerResource, "", map[string]sarama.IncrementalAlterConfigsEntry{
		"log.retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: ptr("86400000")},
	}, false); err != nil {
		t.Fatalf("alter the cluster default: %v", err)
	}
	if err := admin.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"log.cleaner.backoff.ms": ptr("2000")}, false); err != nil {
		t.Fatalf("alter broker 1: %v", err)
	}
	check := func(a sarama.ClusterAdmin) {
		t.Helper()
		topic := describe(a, sarama.TopicResource, "orders", "retention.ms")
		if e := topic["retention.ms"]; e.Value != "86400000" || e.Source != sarama.SourceDynamicDefaultBroker {
			t.Errorf("topic retention.ms: %+v", e)
		}
		b := describe(a, sarama.BrokerResource, "1", "log.cleaner.backoff.ms", "log.retention.ms")
		if e := b["log.cleaner.backoff.ms"]; e.Value != "2000" || e.Source != sarama.SourceDynamicBroker || e.ReadOnly {
			t.Errorf("log.cleaner.backoff.ms: %+v", e)
		}
		if e := b["log.retention.ms"]; e.Value != "86400000" || e.Source != sarama.SourceDynamicDefaultBroker {
			t.Errorf("log.retention.ms: %+v", e)
		}
	}
	check(admin)
	if err := admin.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"log.dirs": ptr("/elsewhere")}, false); err == nil || !strings.Contains(err.Error(), "log.dirs") {
		t.Errorf("altering log.dirs: %v", err)
	}

	// BROKER_LOGGER: request lines appear in the process's log.
	if err := admin.IncrementalAlterConfig(sarama.BrokerLoggerResource, "1", map[string]sarama.IncrementalAlterConfigsEntry{
		"kafka.request.logger": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: ptr("DEBUG")},
	}, false); err != nil {
		t.Fatalf("raise kafka.request.logger: %v", err)
	}
	if e := describe(admin, sarama.BrokerLoggerResource, "1")["kafka.request.logger"]; e.Value != "DEBUG" {
		t.Errorf("kafka.request.logger: %+v", e)
	}
	if _, err := admin.ListTopics(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a DEBUG request line in the server log", func() (bool, string) {
		data, _ := os.ReadFile(srv.log.Name())
		return strings.Contains(string(data), "msg=request api=Metadata"), "no request line yet"
	})

	// Log dirs and a preferred election (nothing to move on one node).
	dirs, err := admin.DescribeLogDirs([]int32{1})
	if err != nil || len(dirs[1]) == 0 || dirs[1][0].Path != srv.dataDir {
		t.Errorf("log dirs: %v %+v", err, dirs)
	}
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{"orders": {0, 1}})
	if err != nil {
		t.Fatalf("elect leaders: %v", err)
	}
	for p, r := range res["orders"] {
		if r.ErrorCode != sarama.ErrElectionNotNeeded {
			t.Errorf("partition %d: %v", p, r.ErrorCode)
		}
	}

	// The dynamic configs survive a restart.
	admin.Close()
	srv.stop()
	srv.restart()
	admin, err = sarama.NewClusterAdmin([]string{srv.addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(admin)
}
