package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// startServerWithRegistry runs `strata server` with its schema registry
// and returns the Kafka address and the registry's URL.
func startServerWithRegistry(t *testing.T) (brokers, registryURL string) {
	t.Helper()
	addr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+addr)
	registryURL = "http://" + addr
	waitHTTPOK(t, registryURL+"/subjects", "the schema registry in the server")
	return b.Addr, registryURL
}

func writeTestFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	cliUserV1  = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	cliUserV2  = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}]}`
	cliUserBad = `{"type":"record","name":"User","namespace":"acme","fields":[{"name":"id","type":"string"}]}`
)

func TestSchemaCLI(t *testing.T) {
	brokers, url := startServerWithRegistry(t)
	v1 := writeTestFile(t, "user.avsc", cliUserV1)
	v2 := writeTestFile(t, "user2.avsc", cliUserV2)
	bad := writeTestFile(t, "bad.avsc", cliUserBad)
	common := writeTestFile(t, "common.proto", "syntax = \"proto3\";\npackage acme;\nmessage Money { int64 units = 1; }\n")
	order := writeTestFile(t, "order.proto", "syntax = \"proto3\";\npackage acme;\nimport \"common.proto\";\nmessage Order { Money total = 1; }\n")
	schema := func(args ...string) string {
		t.Helper()
		return cli(t, brokers, "", append([]string{"schema", "--url", url}, args...)...)
	}
	schemaErr := func(args ...string) error {
		t.Helper()
		return cliErr(t, brokers, "", append([]string{"schema", "--url", url}, args...)...)
	}

	if out := schema("register", "users-value", "-f", v1); out != "id 1 version 1\n" {
		t.Fatalf("register v1: %q", out)
	}
	if out := schema("register", "users-value", "-f", v1); out != "id 1 version 1\n" {
		t.Fatalf("register v1 again: %q", out)
	}
	if out := schema("check-compat", "users-value", "-f", v2); out != "compatible\n" {
		t.Fatalf("check-compat v2: %q", out)
	}
	if out := schema("register", "users-value", "-f", v2, "--normalize"); out != "id 2 version 2\n" {
		t.Fatalf("register v2: %q", out)
	}
	schema("register", "common", "-f", common)
	if out := schema("register", "orders-value", "-f", order, "--reference", "common.proto=common:1"); out != "id 4 version 1\n" {
		t.Fatalf("register proto with a reference: %q", out)
	}

	if out := schema("get", "users-value", "--version", "1"); out != cliUserV1+"\n" {
		t.Fatalf("get version 1: %q", out)
	}
	if out := schema("get", "--id", "1"); out != cliUserV1+"\n" {
		t.Fatalf("get --id 1: %q", out)
	}
	var full struct {
		Subject    string
		Version    int
		ID         int
		SchemaType string
		References []struct{ Name, Subject string }
	}
	if err := json.Unmarshal([]byte(schema("get", "orders-value", "--json")), &full); err != nil ||
		full.Subject != "orders-value" || full.Version != 1 || full.ID != 4 || full.SchemaType != "PROTOBUF" ||
		len(full.References) != 1 || full.References[0].Subject != "common" {
		t.Fatalf("get --json: %+v, %v", full, err)
	}
	if out := schema("list"); out != "common\norders-value\nusers-value\n" {
		t.Fatalf("list: %q", out)
	}
	if out := schema("list", "--prefix", "us"); out != "users-value\n" {
		t.Fatalf("list --prefix: %q", out)
	}
	if out := schema("versions", "users-value"); out != "1\n2\n" {
		t.Fatalf("versions: %q", out)
	}
	if out := schema("config"); out != "BACKWARD\n" {
		t.Fatalf("config: %q", out)
	}
	if out := schema("config", "users-value", "--set", "full"); out != "FULL\n" {
		t.Fatalf("config --set: %q", out)
	}
	if out := schema("mode"); out != "READWRITE\n" {
		t.Fatalf("mode: %q", out)
	}

	// Incompatible: the reasons on stdout, and an error (exit 1).
	res := runCLI(t, time.Minute, "", "schema", "--url", url, "check-compat", "users-value", "-f", bad)
	if res.err == nil || !strings.Contains(res.err.Error(), "not compatible") || !strings.Contains(res.stdout, "not compatible with writer schema long") {
		t.Fatalf("check-compat bad: err %v, stdout %q", res.err, res.stdout)
	}
	if err := schemaErr("register", "users-value", "-f", bad); !strings.HasSuffix(err.Error(), "(error_code 409)") {
		t.Fatalf("register incompatible: %v", err)
	}

	if out := schema("delete", "users-value", "--version", "1"); out != "1\n" {
		t.Fatalf("delete version: %q", out)
	}
	if out := schema("versions", "users-value"); out != "2\n" {
		t.Fatalf("versions after delete: %q", out)
	}
	if out := schema("delete", "users-value"); out != "2\n" {
		t.Fatalf("delete subject: %q", out)
	}
	if out := schema("list", "--deleted"); !strings.Contains(out, "users-value") {
		t.Fatalf("list --deleted: %q", out)
	}
	if out := schema("delete", "users-value", "--permanent"); out != "1\n2\n" {
		t.Fatalf("delete --permanent: %q", out)
	}
	err := schemaErr("get", "users-value")
	if err.Error() != "Subject 'users-value' not found. (error_code 40401)" {
		t.Fatalf("get of a deleted subject: %q", err)
	}
	if err := schemaErr("get", "x", "--version", "zero"); !strings.Contains(err.Error(), "--version") {
		t.Fatalf("bad --version: %v", err)
	}
	if err := schemaErr("register", "x", "-f", v1, "--type", "xml"); !strings.Contains(err.Error(), "--type") {
		t.Fatalf("bad --type: %v", err)
	}
	if err := schemaErr("register", "x", "-f", v1, "--reference", "nope"); !strings.Contains(err.Error(), "NAME=SUBJECT:VERSION") {
		t.Fatalf("bad --reference: %v", err)
	}
}

// TestSchemaCLIProcess runs the binary: exit statuses and the one-line
// error.
func TestSchemaCLIProcess(t *testing.T) {
	_, url := startServerWithRegistry(t)
	v1 := writeTestFile(t, "user.avsc", cliUserV1)
	bad := writeTestFile(t, "bad.avsc", cliUserBad)
	run := func(args ...string) (string, string, int) {
		return streamsBinary(t, append([]string{"schema", "--url", url}, args...)...)
	}
	if out, errOut, code := run("register", "users-value", "-f", v1); code != 0 || out != "id 1 version 1\n" {
		t.Fatalf("register: %d %q %q", code, out, errOut)
	}
	out, errOut, code := run("check-compat", "users-value", "-f", bad)
	if code != 1 || !strings.Contains(out, "writer schema long") || !strings.HasPrefix(errOut, "strata: schema is not compatible") {
		t.Fatalf("check-compat incompatible: %d %q %q", code, out, errOut)
	}
	_, errOut, code = run("get", "missing")
	if code != 1 || errOut != "strata: Subject 'missing' not found. (error_code 40401)\n" {
		t.Fatalf("registry error: %d %q", code, errOut)
	}
	_, errOut, code = run("get", "--bogus")
	if code == 0 || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("bad flag: %d %q", code, errOut)
	}
	// The URL from the environment; a dead registry fails with one line.
	os.Setenv(schemaRegistryURLEnv, "http://127.0.0.1:1")
	defer os.Unsetenv(schemaRegistryURLEnv)
	_, errOut, code = streamsBinary(t, "schema", "list")
	if code != 1 || !strings.Contains(errOut, "cannot reach http://127.0.0.1:1") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("dead registry: %d %q", code, errOut)
	}
}
