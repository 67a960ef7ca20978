package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/broker"
)

// TestTopicRecoverAndPurge: a deleted tiered topic comes back with
// `topic recover --from-bucket`, and after `topic purge --from-bucket` its
// objects are gone and it cannot be recovered.
func TestTopicRecoverAndPurge(t *testing.T) {
	objects := t.TempDir()
	srv := startBrokerServer(t, func(cfg *broker.Config) {
		cfg.HTTPListen = "127.0.0.1:0"
		cfg.ObjectStore = "file://" + objects
		if err := cfg.Set("remote.log.manager.task.interval.ms", "20"); err != nil {
			t.Fatal(err)
		}
	})
	addr, admin := srv.Addr(), srv.HTTPAddr()

	cli(t, addr, "", "topic", "create", "logs", "-c", "remote.storage.enable=true", "-c", "segment.bytes=1024")
	// One batch per run, each over segment.bytes: every run rolls a segment.
	for run := range 4 {
		var lines strings.Builder
		for i := range 50 {
			fmt.Fprintf(&lines, "line-%04d-%s\n", run*50+i, strings.Repeat("x", 40))
		}
		cli(t, addr, lines.String(), "produce", "logs")
	}
	manifests := filepath.Join(objects, "v1", "logs-*", "0", "manifest")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if found, _ := filepath.Glob(manifests); len(found) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no manifest uploaded after 20s")
		}
		time.Sleep(20 * time.Millisecond) // polling the filesystem; no event to wait on
	}
	cli(t, addr, "", "topic", "delete", "logs")
	out := cli(t, addr, "", "topic", "recover", "logs", "--from-bucket")
	if !strings.Contains(out, "recovered topic logs") {
		t.Fatalf("recover printed %q", out)
	}
	if got := cli(t, addr, "", "consume", "logs", "--from-beginning", "-n", "1", "--format", "%v\n"); !strings.HasPrefix(got, "line-0000-") {
		t.Fatalf("first record after recovery: %q", got)
	}
	// The live topic is never purged.
	if err := cliErr(t, addr, "", "topic", "purge", "logs", "--from-bucket", "--admin", admin); !strings.Contains(err.Error(), "holds nothing of a deleted topic") {
		t.Fatalf("purge of a live topic: %v", err)
	}
	cli(t, addr, "", "topic", "delete", "logs")
	out = cli(t, addr, "", "topic", "purge", "logs", "--from-bucket", "--admin", admin)
	if !strings.Contains(out, "purged ") {
		t.Fatalf("purge printed %q", out)
	}
	if left, _ := filepath.Glob(filepath.Join(objects, "v1", "logs-*", "*", "*")); len(left) != 0 {
		t.Fatalf("objects left after purge: %v", left)
	}
	if err := cliErr(t, addr, "", "topic", "recover", "logs", "--from-bucket"); !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Fatalf("recover after purge: %v", err)
	}
	if err := cliErr(t, addr, "", "topic", "purge", "logs"); !strings.Contains(err.Error(), "--from-bucket is required") {
		t.Fatalf("purge without --from-bucket: %v", err)
	}
}
