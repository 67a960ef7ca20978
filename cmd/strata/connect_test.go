package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// runConnectCLI runs `strata connect …` in-process on a fresh command tree.
func runConnectCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "strata", SilenceUsage: true, SilenceErrors: true}
	addClientFlags(root)
	root.AddCommand(newConnectCmd())
	var out bytes.Buffer
	root.SetArgs(append([]string{"connect"}, args...))
	root.SetOut(&out)
	root.SetErr(&out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// TestConnectInServerAndCLI starts `strata server --set connect.enable=true`
// (the worker runs in the server process) and manages a connector with the
// CLI.
func TestConnectInServerAndCLI(t *testing.T) {
	restAddr := brokertest.FreeAddr(t)
	brokertest.Start(t, "--set", "connect.enable=true", "--set", "connect.rest.listen="+restAddr,
		"--set", "connect.group.id=cli-test", "--set", "connect.offset.storage.partitions=3",
		"--set", "connect.offset.flush.interval.ms=200", "--set", "connect.heartbeat.interval.ms=300",
		"--set", "group.initial.rebalance.delay.ms=0")
	url := "http://" + restAddr
	waitHTTPOK(t, url+"/", "connect REST API in the server")

	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(input, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def, _ := json.Marshal(map[string]any{"name": "files", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": input, "topic": "cli-lines"}})
	defPath := filepath.Join(dir, "files.json")
	if err := os.WriteFile(defPath, def, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runConnectCLI(t, "--url", url, "create", "-f", defPath)
	if err != nil || !strings.Contains(out, "Created source connector files") {
		t.Fatalf("create: %q %v", out, err)
	}
	if _, err := runConnectCLI(t, "--url", url, "create", "-f", defPath); err == nil || !strings.Contains(err.Error(), "already exists (HTTP 409)") {
		t.Fatalf("second create: %v", err)
	}
	waitCLI := func(what string, args []string, want ...string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := runConnectCLI(t, append([]string{"--url", url}, args...)...)
			ok := err == nil
			for _, w := range want {
				ok = ok && strings.Contains(out, w)
			}
			if ok {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: last output %q, err %v", what, out, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The connector may report RUNNING while its task is still
	// UNASSIGNED: wait for both.
	deadline := time.Now().Add(30 * time.Second)
	for status := ""; strings.Count(status, "RUNNING") != 2; {
		if time.Now().After(deadline) {
			t.Fatalf("status: %s", status)
		}
		status = waitCLI("running", []string{"status", "files"}, "files (source connector)", "RUNNING", "task 0", restAddr)
		if strings.Count(status, "RUNNING") != 2 {
			time.Sleep(200 * time.Millisecond) // the CLI polls the REST API, as a user would
		}
	}
	waitCLI("list", []string{"list"}, "files", "source", "1/1 running")
	waitCLI("offsets", []string{"offsets", "files"}, `"position": 4`, `"filename": "`+input+`"`)
	if out, err := runConnectCLI(t, "--url", url, "pause", "files"); err != nil || out != "Paused connector files\n" {
		t.Fatalf("pause: %q %v", out, err)
	}
	waitCLI("paused", []string{"status", "files"}, "PAUSED")
	if _, err := runConnectCLI(t, "--url", url, "resume", "files"); err != nil {
		t.Fatal(err)
	}
	waitCLI("resumed", []string{"status", "files"}, "RUNNING")
	if out, err := runConnectCLI(t, "--url", url, "restart", "files", "--include-tasks"); err != nil || !strings.Contains(out, "Restarting connector files") {
		t.Fatalf("restart: %q %v", out, err)
	}
	if _, err := runConnectCLI(t, "--url", url, "offsets", "files", "--reset"); err == nil || !strings.Contains(err.Error(), "STOPPED") || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("reset of a running connector: %v", err)
	}
	if out, err := runConnectCLI(t, "--url", url, "delete", "files"); err != nil || out != "Deleted connector files\n" {
		t.Fatalf("delete: %q %v", out, err)
	}
	if _, err := runConnectCLI(t, "--url", url, "status", "files"); err == nil || err.Error() != "Connector files not found (HTTP 404)" {
		t.Fatalf("status after delete: %v", err)
	}
	// Logger levels: set on this worker, shown by name and in the list;
	// a bad level is the server's one-line 400.
	if out, err := runConnectCLI(t, "--url", url, "loggers", "strata.connect.rest", "--level", "debug"); err != nil || out != "Set strata.connect.rest to DEBUG: strata.connect.rest\n" {
		t.Fatalf("loggers --level: %q %v", out, err)
	}
	if out, err := runConnectCLI(t, "--url", url, "loggers", "strata.connect.rest"); err != nil || !strings.Contains(out, "strata.connect.rest  DEBUG") || strings.Contains(out, "  -") {
		t.Fatalf("loggers NAME: %q %v", out, err)
	}
	if out, err := runConnectCLI(t, "--url", url, "loggers"); err != nil || !strings.Contains(out, "root ") || !strings.Contains(out, "strata.connect.worker") {
		t.Fatalf("loggers: %q %v", out, err)
	}
	if out, err := runConnectCLI(t, "--url", url, "loggers", "strata.connect.store", "--level", "warn", "--scope", "cluster"); err != nil || out != "Set strata.connect.store to WARN on every worker\n" {
		t.Fatalf("loggers --scope cluster: %q %v", out, err)
	}
	if _, err := runConnectCLI(t, "--url", url, "loggers", "strata.connect", "--level", "loud"); err == nil || err.Error() != "Invalid log level 'loud'. (HTTP 400)" {
		t.Fatalf("loggers with a bad level: %v", err)
	}
	if _, err := runConnectCLI(t, "--url", url, "loggers", "x", "--level", "info", "--scope", "galaxy"); err == nil || !strings.Contains(err.Error(), "want worker or cluster") {
		t.Fatalf("loggers with a bad scope: %v", err)
	}
	// Bad invocations fail with one line.
	if _, err := runConnectCLI(t, "--url", url, "create"); err == nil || !strings.Contains(err.Error(), "-f FILE") {
		t.Fatalf("create without -f: %v", err)
	}
	if _, err := runConnectCLI(t, "--url", "http://"+brokertest.FreeAddr(t), "list"); err == nil || !strings.Contains(err.Error(), "cannot reach Connect REST API") {
		t.Fatalf("dead URL: %v", err)
	}
	if _, err := runConnectCLI(t, "--url", "ftp://x", "list"); err == nil || !strings.Contains(err.Error(), "want http://host:port") {
		t.Fatalf("bad URL: %v", err)
	}
}
