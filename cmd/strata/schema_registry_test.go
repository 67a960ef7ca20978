package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/brokertest"
)

func TestSchemaRegistryAddonSettings(t *testing.T) {
	env := addonEnv{Brokers: "127.0.0.1:9092", Logger: slog.Default()}
	for _, tc := range []struct {
		sets    map[string]string
		enabled bool
		err     string
	}{
		{map[string]string{}, false, ""},
		{map[string]string{"schema.registry.enable": "false", "schema.registry.listen": "127.0.0.1:1"}, false, ""},
		{map[string]string{"schema.registry.enable": "true"}, true, ""},
		{map[string]string{"schema.registry.enable": "yes"}, false, "want true or false"},
		{map[string]string{"schema.registry.enable": "true", "schema.registry.nope": "1"}, true, "nope is not a setting of the registry"},
		{map[string]string{"schema.registry.enable": "true", "schema.registry.kafkastore.security.protocol": "SSL", "schema.registry.kafkastore.ssl.truststore.location": "/nonexistent"}, true, "/nonexistent"},
	} {
		env.Sets = tc.sets
		cfg, enabled, err := schemaRegistryConfig(env)
		if enabled != tc.enabled || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: enabled %v err %v, want %v and an error with %q", tc.sets, enabled, err, tc.enabled, tc.err)
		}
		if tc.enabled && err == nil && (cfg.Listen != "127.0.0.1:8081" || cfg.Brokers[0] != "127.0.0.1:9092" || cfg.Topic != "_schemas") {
			t.Errorf("%v: defaults %+v", tc.sets, cfg)
		}
	}
	// A node with only secured listeners must say which to use.
	env.Brokers, env.Sets = "", map[string]string{"schema.registry.enable": "true"}
	if _, _, err := schemaRegistryConfig(env); err == nil || !strings.Contains(err.Error(), "schema.registry.bootstrap.servers") {
		t.Fatalf("no PLAINTEXT listener: %v", err)
	}
	env.Sets["schema.registry.bootstrap.servers"] = "127.0.0.1:9093"
	if cfg, _, err := schemaRegistryConfig(env); err != nil || cfg.Brokers[0] != "127.0.0.1:9093" {
		t.Fatalf("bootstrap given: %+v %v", cfg, err)
	}
	// Another add-on's keys are not the registry's.
	if got := addonSetsOf(map[string]string{"connect.enable": "true", "schema.registry.enable": "true"}, schemaRegistryPrefix); len(got) != 1 || got["schema.registry.enable"] != "true" {
		t.Fatalf("addonSetsOf: %v", got)
	}
}

// waitHTTPOK polls url until it answers 200, for at most 30 s (an add-on
// of `strata server` starts listening after the broker serves).
func waitHTTPOK(t *testing.T, url, what string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSchemaRegistryInServer runs the registry inside `strata server` and
// registers and reads a schema over HTTP.
func TestSchemaRegistryInServer(t *testing.T) {
	addr := brokertest.FreeAddr(t)
	brokertest.Start(t, "--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+addr)
	url := "http://" + addr
	client := &http.Client{Timeout: 5 * time.Second}
	// The add-on starts once the broker serves; brokertest waited for the
	// broker only.
	waitHTTPOK(t, url+"/subjects", "the schema registry in the server")
	schema := `{"type":"record","name":"Ping","fields":[{"name":"at","type":"long"}]}`
	body, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := client.Post(url+"/subjects/pings-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(out)) != `{"id":1}` {
		t.Fatalf("register: %d %s", resp.StatusCode, out)
	}
	resp, err = client.Get(url + "/subjects/pings-value/versions/latest")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Subject string
		Version int
		ID      int
		Schema  string
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || got.Subject != "pings-value" || got.Version != 1 || got.ID != 1 || got.Schema != schema {
		t.Fatalf("latest: %+v %v", got, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.schemaregistry.v1+json" {
		t.Fatalf("Content-Type %q", ct)
	}
}
