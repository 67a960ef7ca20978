package clientconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/internal/properties"
)

func TestOptionsFromAPropertiesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.properties")
	doc := "# comment\n! also a comment\n\nsecurity.protocol = SASL_PLAINTEXT\nsasl.mechanism: SCRAM-SHA-256\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="al\"ice" password="p=w;";` + "\nlinger.ms=5\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	props, err := properties.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if props["security.protocol"] != "SASL_PLAINTEXT" || props["sasl.mechanism"] != "SCRAM-SHA-256" || props["linger.ms"] != "5" {
		t.Fatalf("props %v", props)
	}
	user, pass, err := jaas(props["sasl.jaas.config"], "SCRAM-SHA-256")
	if err != nil || user != `al"ice` || pass != "p=w;" {
		t.Fatalf("jaas: %q %q %v", user, pass, err)
	}
	if opts, err := Options(props); err != nil || len(opts) != 1 {
		t.Fatalf("options: %d %v", len(opts), err)
	}
	if opts, err := Options(map[string]string{"bootstrap.servers": "x"}); err != nil || len(opts) != 0 {
		t.Fatalf("plaintext: %d %v", len(opts), err)
	}
	if err := os.WriteFile(path, []byte("no separator here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := properties.Read(path); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("bad line: %v", err)
	}
	if _, err := Options(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.login.callback.handler.class": "x",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`}); err == nil {
		t.Fatal("an unsupported sasl.* setting was accepted")
	}
}
