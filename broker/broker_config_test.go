package broker

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfigFinerUnitWins(t *testing.T) {
	for _, order := range [][2]string{{"log.retention.ms", "log.retention.hours"}, {"log.retention.hours", "log.retention.ms"}} {
		c := DefaultConfig()
		values := map[string]string{"log.retention.ms": "1234", "log.retention.hours": "5"}
		for _, k := range order {
			if err := c.Set(k, values[k]); err != nil {
				t.Fatal(err)
			}
		}
		if c.LogRetentionMs != 1234 {
			t.Errorf("set %v: retention = %d ms, want 1234 (ms wins)", order, c.LogRetentionMs)
		}
	}
	c := DefaultConfig()
	if err := c.Set("log.retention.hours", "2"); err != nil || c.LogRetentionMs != 2*3600*1000 {
		t.Errorf("hours alone: %d, %v", c.LogRetentionMs, err)
	}
	if err := c.Set("log.retention.ms", "x"); err == nil {
		t.Error("bad value accepted")
	}
}

func TestConfigSourcesPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.properties")
	content := "# a Kafka file\nlog.dirs=/var/lib/x\nnum.partitions: 3\nzookeeper.connect=zk:2181\nlog.segment.bytes=1048576\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	unknown, err := c.LoadProperties(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(unknown) != 1 || unknown[0] != "zookeeper.connect" {
		t.Errorf("unknown = %v", unknown)
	}
	if err := c.LoadEnv([]string{"STRATA_NUM_PARTITIONS=7", "STRATA_BROKERS=ignored:1", "PATH=/bin"}); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/var/lib/x" || c.NumPartitions != 7 || c.LogSegmentBytes != 1<<20 {
		t.Errorf("got dirs=%q partitions=%d segment=%d", c.DataDir, c.NumPartitions, c.LogSegmentBytes)
	}
	if err := c.Set("no.such.property", "1"); err == nil {
		t.Error("unknown property accepted by Set")
	}
	if err := c.LoadEnv([]string{"STRATA_NUM_PARTITIONS=zero"}); err == nil {
		t.Error("bad env value accepted")
	}
	bad := filepath.Join(dir, "bad.properties")
	_ = os.WriteFile(bad, []byte("just a line\n"), 0o644)
	if _, err := c.LoadProperties(bad); err == nil {
		t.Error("line without = accepted")
	}
}
