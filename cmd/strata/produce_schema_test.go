package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestProduceConsumeWithSchema(t *testing.T) {
	brokers, url := startServerWithRegistry(t)
	v1 := writeTestFile(t, "user.avsc", cliUserV2)
	cli(t, brokers, "", "topic", "create", "users", "-p", "1")

	// Auto-registration under users-value from a file.
	lines := `{"id":1,"name":"Ann"}` + "\n" + `{"id":2,"name":"Bo","email":"bo@example.com"}` + "\n" + `{"id":3,"name":"Cy","email":null}` + "\n"
	cli(t, brokers, lines, "produce", "users", "--schema-registry", url, "--value-schema-file", v1)
	if out := cli(t, brokers, "", "schema", "--url", url, "versions", "users-value"); out != "1\n" {
		t.Fatalf("auto-registered versions: %q", out)
	}
	// Then by subject, latest and an explicit version.
	cli(t, brokers, `{"id":4,"name":"Di"}`+"\n", "produce", "users", "--schema-registry", url, "--value-schema", "users-value")
	cli(t, brokers, `{"id":5,"name":"Ed"}`+"\n", "produce", "users", "--schema-registry", url, "--value-schema", "users-value:1")

	out := cli(t, brokers, "", "consume", "users", "--from-beginning", "-n", "5", "--format", "avro", "--schema-registry", url)
	want := []string{
		`{"email":null,"id":1,"name":"Ann"}`,
		`{"email":"bo@example.com","id":2,"name":"Bo"}`,
		`{"email":null,"id":3,"name":"Cy"}`,
		`{"email":null,"id":4,"name":"Di"}`,
		`{"email":null,"id":5,"name":"Ed"}`,
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, want) {
		t.Fatalf("consumed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}

	// Bad lines are refused with their numbers; the good one is sent.
	res := runCLI(t, time.Minute, `{"id":6,"name":"Fy"}`+"\nnot json\n"+`{"id":"seven","name":"G"}`+"\n",
		"-b", brokers, "--timeout", "10s", "produce", "users", "--schema-registry", url, "--value-schema", "users-value")
	if res.err == nil || !strings.Contains(res.err.Error(), "2 of 3 records failed") {
		t.Fatalf("bad lines: err %v", res.err)
	}
	if !strings.Contains(res.stderr, "line 2: value is not JSON") || !strings.Contains(res.stderr, "line 3: value: serde: value does not fit the schema: .id") {
		t.Fatalf("bad lines stderr: %q", res.stderr)
	}
	out = cli(t, brokers, "", "consume", "users", "--offset", "5", "--partition", "0", "-n", "1", "--format", "schema", "--schema-registry", url)
	if out != `{"email":null,"id":6,"name":"Fy"}`+"\n" {
		t.Fatalf("after the bad lines: %q", out)
	}

	// A record without the wire format stops consume with its offset.
	cli(t, brokers, "plain text\n", "produce", "users")
	err := cliErr(t, brokers, "", "consume", "users", "--offset", "6", "--partition", "0", "-n", "1", "--format", "avro", "--schema-registry", url)
	if !strings.Contains(err.Error(), "offset 6") || !strings.Contains(err.Error(), "magic byte") {
		t.Fatalf("consume of a plain record: %v", err)
	}
	// Keys with a schema too; a key schema needs keys.
	cli(t, brokers, `7|{"id":7,"name":"Hu"}`+"\n", "produce", "users", "--schema-registry", url, "--value-schema", "users-value",
		"--key-separator", "|", "--key-schema-file", writeTestFile(t, "key.avsc", `"long"`))
	out = cli(t, brokers, "", "consume", "users", "--offset", "7", "--partition", "0", "-n", "1", "--format", "%K", "--schema-registry", url)
	if out != "6" { // magic byte, id, the zigzag varint of 7
		t.Fatalf("key length %q, want 6", out)
	}
	err = cliErr(t, brokers, "{}\n", "produce", "users", "--schema-registry", url, "--key-schema", "users-key")
	if !strings.Contains(err.Error(), "--key-separator") {
		t.Fatalf("key schema without keys: %v", err)
	}
	// An unknown subject fails before anything is produced.
	err = cliErr(t, brokers, "{}\n", "produce", "users", "--schema-registry", url, "--value-schema", "nope-value")
	if !strings.Contains(err.Error(), "(error_code 40401)") {
		t.Fatalf("unknown subject: %v", err)
	}
}
