package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// registrySummary is registry.js's JSON line.
type registrySummary struct {
	OK       bool     `json:"ok"`
	Failures []string `json:"failures"`
	Types    map[string]struct {
		IDs          []int `json:"ids"`
		Decoded      int   `json:"decoded"`
		Incompatible *struct {
			Status int `json:"status"`
		} `json:"incompatible"`
	} `json:"types"`
}

// TestSchemaRegistryKafkajs: a node with its schema registry on
// (schema.registry.enable) serves Confluent's REST API to an independent
// client, npm's @kafkajs/confluent-schema-registry: for Avro, JSON Schema
// and Protobuf it registers, evolves compatibly (a new id), is refused an
// incompatible change with 409, and records encoded with the registry's
// ids travel through the broker (kafkajs producer and consumer group) and
// decode with a client that fetched each schema by id.
func TestSchemaRegistryKafkajs(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node", "apt-get install -y nodejs npm")
	if _, err := os.Stat(filepath.Join(moduleRoot, "e2e", "kafkajs", "node_modules", "@kafkajs", "confluent-schema-registry", "package.json")); err != nil {
		missingTool(t, "@kafkajs/confluent-schema-registry", "cd e2e/kafkajs && npm ci")
	}
	regAddr := freeAddr(t)
	srv := startServer(t, "--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+regAddr)
	url := "http://" + regAddr
	client := &http.Client{Timeout: 5 * time.Second}
	waitFor(t, 30*time.Second, "the schema registry answering GET /subjects", func() (bool, string) {
		resp, err := client.Get(url + "/subjects")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	script := filepath.Join(moduleRoot, "e2e", "kafkajs", "registry.js")
	res := runCmd(t, 3*time.Minute, "", node, script, srv.addr, url, "sr-kafkajs")
	if res.err != nil {
		t.Fatalf("node registry.js: %s", res)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	var sum registrySummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("node registry.js: no JSON summary (%v): %s", err, res)
	}
	if !sum.OK || res.exitCode != 0 {
		t.Fatalf("node registry.js failed: %v\n%s", sum.Failures, res)
	}
	for _, typ := range []string{"AVRO", "JSON", "PROTOBUF"} {
		got, ok := sum.Types[typ]
		if !ok || len(got.IDs) != 2 || got.Decoded != 20 || got.Incompatible == nil || got.Incompatible.Status != 409 {
			t.Fatalf("%s: summary %+v", typ, got)
		}
	}

	// The registry's subjects, as any HTTP client sees them.
	resp, err := client.Get(url + "/subjects")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var subjects []string
	if err := json.NewDecoder(resp.Body).Decode(&subjects); err != nil {
		t.Fatalf("GET /subjects: %v", err)
	}
	for _, typ := range []string{"avro", "json", "protobuf"} {
		want := fmt.Sprintf("sr-kafkajs-%s-value", typ)
		found := false
		for _, s := range subjects {
			found = found || s == want
		}
		if !found {
			t.Fatalf("GET /subjects: %v, want %s among them", subjects, want)
		}
	}
}
