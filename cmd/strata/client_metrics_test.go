package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// cmCLI runs `strata client-metrics args…` against addr in-process (the
// shared newTestRoot lists the other commands) and returns its output and
// error.
func cmCLI(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	root := newTestRoot()
	root.AddCommand(newClientMetricsCmd())
	var stdout, stderr bytes.Buffer
	root.SetArgs(append([]string{"-b", addr, "--timeout", "10s", "client-metrics"}, args...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return stdout.String(), err
}

// TestClientMetricsCommands: create, alter, describe, list and delete a
// KIP-714 subscription against a real broker, with the broker's own
// validation surfacing as one-line errors.
func TestClientMetricsCommands(t *testing.T) {
	addr := startBroker(t, nil)
	out := mustCM(t, addr, "create", "--name", "producers", "--metrics", "org.apache.kafka.producer.", "--interval", "60000", "--match", "client_id=app.*")
	if out != "client metrics producers created\n" {
		t.Fatalf("create: %q", out)
	}
	if err := failCM(t, addr, "create", "--name", "producers", "--metrics", "*"); !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second create: %v", err)
	}
	out = mustCM(t, addr, "alter", "--name", "producers", "--match", "client_id=app.*", "--match", "client_software_name=kgo")
	if out != "client metrics producers altered\n" {
		t.Fatalf("alter: %q", out)
	}
	out = mustCM(t, addr, "describe", "--name", "producers")
	want := "Client metrics configs for producers are:\n  interval.ms=60000\n  match=client_id=app.*,client_software_name=kgo\n  metrics=org.apache.kafka.producer.\n"
	if out != want {
		t.Errorf("describe:\n%s\nwant:\n%s", out, want)
	}
	gen := mustCM(t, addr, "create", "--generate-name", "--metrics", "*")
	genName := strings.TrimSuffix(strings.TrimPrefix(gen, "client metrics "), " created\n")
	if genName == gen || genName == "" {
		t.Fatalf("create --generate-name: %q", gen)
	}
	if got := mustCM(t, addr, "list"); !strings.Contains(got, "producers\n") || !strings.Contains(got, genName+"\n") {
		t.Errorf("list: %q", got)
	}
	if err := failCM(t, addr, "alter", "--name", "producers", "--interval", "5"); !strings.Contains(err.Error(), "INVALID_REQUEST") {
		t.Errorf("bad interval: %v", err)
	}
	if err := failCM(t, addr, "alter", "--name", "producers", "--match", "rack=a"); !strings.Contains(err.Error(), "INVALID_CONFIG") {
		t.Errorf("bad match: %v", err)
	}
	if err := failCM(t, addr, "alter", "--name", "nope", "--metrics", "*"); !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("alter of a missing subscription: %v", err)
	}
	if out := mustCM(t, addr, "delete", "--name", "producers"); out != "client metrics producers deleted\n" {
		t.Errorf("delete: %q", out)
	}
	if got := mustCM(t, addr, "list"); got != genName+"\n" {
		t.Errorf("list after delete: %q", got)
	}
	if err := failCM(t, addr, "describe", "--name", "producers"); !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("describe after delete: %v", err)
	}
	if err := failCM(t, addr, "create", "--metrics", "*"); !strings.Contains(err.Error(), "--name") {
		t.Errorf("create without a name: %v", err)
	}
}

func mustCM(t *testing.T, addr string, args ...string) string {
	t.Helper()
	out, err := cmCLI(t, addr, args...)
	if err != nil {
		t.Fatalf("strata client-metrics %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func failCM(t *testing.T, addr string, args ...string) error {
	t.Helper()
	out, err := cmCLI(t, addr, args...)
	if err == nil {
		t.Fatalf("strata client-metrics %s: no error; stdout %q", strings.Join(args, " "), out)
	}
	return err
}
