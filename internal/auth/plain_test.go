package auth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func plainMessage(authzid, user, password string) []byte {
	return []byte(authzid + "\x00" + user + "\x00" + password)
}

func TestPlain(t *testing.T) {
	mech := NewPlain(PlainChecker(map[string]string{"alice": "alice-secret", "bob": "b"}))
	if mech.Name() != "PLAIN" {
		t.Fatalf("Name() = %q", mech.Name())
	}
	for _, tc := range []struct {
		name      string
		msg       []byte
		wantUser  string // "" = must fail
		malformed bool
	}{
		{"success", plainMessage("", "alice", "alice-secret"), "alice", false},
		{"success with equal authzid", plainMessage("alice", "alice", "alice-secret"), "alice", false},
		{"wrong password", plainMessage("", "alice", "bob"), "", false},
		{"password prefix", plainMessage("", "alice", "alice-secre"), "", false},
		{"unknown user", plainMessage("", "carol", "alice-secret"), "", false},
		{"authzid mismatch", plainMessage("bob", "alice", "alice-secret"), "", false},
		{"two fields", []byte("alice\x00alice-secret"), "", true},
		{"four fields", []byte("\x00alice\x00alice-secret\x00"), "", true},
		{"empty", nil, "", true},
		{"empty user", plainMessage("", "", "x"), "", true},
		{"empty password", plainMessage("", "alice", ""), "", true},
		{"not utf-8", plainMessage("", "alice\xff", "x"), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := mech.Start()
			reply, done, err := ex.Step(tc.msg)
			if tc.wantUser != "" {
				if err != nil || !done || len(reply) != 0 {
					t.Fatalf("Step = %q, %v, %v; want empty reply, done", reply, done, err)
				}
				if got := ex.Principal(); got != User(tc.wantUser) {
					t.Fatalf("Principal() = %v", got)
				}
				if !ex.Expiry().IsZero() {
					t.Fatalf("Expiry() = %v, want zero", ex.Expiry())
				}
				return
			}
			if done || !errors.Is(err, ErrAuthenticationFailed) {
				t.Fatalf("Step = done %v, err %v; want ErrAuthenticationFailed", done, err)
			}
			if errors.Is(err, ErrMalformedMessage) != tc.malformed {
				t.Fatalf("Step error %v: malformed = %v, want %v", err, !tc.malformed, tc.malformed)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error %q echoes the password", err)
			}
			if ex.Principal() != (Principal{}) {
				t.Fatalf("Principal() after failure = %v", ex.Principal())
			}
		})
	}
}

func TestPlainStepAfterFinish(t *testing.T) {
	ex := NewPlain(func(string, string) bool { return true }).Start()
	if _, done, err := ex.Step(plainMessage("", "a", "b")); !done || err != nil {
		t.Fatalf("first Step: %v %v", done, err)
	}
	if _, _, err := ex.Step(plainMessage("", "a", "b")); !errors.Is(err, ErrExchangeFinished) {
		t.Fatalf("second Step error = %v, want ErrExchangeFinished", err)
	}
}

func TestPlainCheckerCopiesUsers(t *testing.T) {
	users := map[string]string{"alice": "one"}
	check := PlainChecker(users)
	users["alice"] = "two"
	users["bob"] = "two"
	if !check("alice", "one") || check("alice", "two") || check("bob", "two") {
		t.Fatal("PlainChecker saw changes made to the map after it was built")
	}
	if check("", "") {
		t.Fatal("empty user and password accepted")
	}
}

func TestPlainUsers(t *testing.T) {
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`
	users, err := PlainUsers(jaas)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"admin": "admin-secret", "alice": "alice-secret"}
	if !reflect.DeepEqual(users, want) {
		t.Fatalf("PlainUsers = %v, want %v", users, want)
	}

	const multiline = "org.apache.kafka.common.security.plain.PlainLoginModule   Required\n" +
		"\tuser_q=\"a \\\"quoted\\\" \\\\ pass;word=\"\n" +
		"  user_s='single' user_bare=bare-word\n ;\n"
	users, err = PlainUsers(multiline)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"q": `a "quoted" \ pass;word=`, "s": "single", "bare": "bare-word"}
	if !reflect.DeepEqual(users, want) {
		t.Fatalf("PlainUsers = %q, want %q", users, want)
	}
}

func TestPlainUsersErrors(t *testing.T) {
	const module = "org.apache.kafka.common.security.plain.PlainLoginModule"
	for _, tc := range []struct{ name, jaas string }{
		{"empty", ""},
		{"scram module", `org.apache.kafka.common.security.scram.ScramLoginModule required user_a="x";`},
		{"no flag", module + ` user_a="x";`},
		{"bad flag", module + ` mandatory user_a="x";`},
		{"unterminated quote", module + ` required user_a="secret-x;`},
		{"backslash at end", module + ` required user_a="x\`},
		{"missing semicolon", module + ` required user_a="x"`},
		{"missing equals", module + ` required user_a "x";`},
		{"missing value", module + ` required user_a=;`},
		{"quote as key", module + ` required "user_a"="x";`},
		{"two modules", module + ` required user_a="x"; ` + module + ` required;`},
		{"duplicate", module + ` required user_a="x" user_a="y";`},
		{"empty user name", module + ` required user_="x";`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			users, err := PlainUsers(tc.jaas)
			if !errors.Is(err, ErrInvalidJAAS) {
				t.Fatalf("PlainUsers = %v, %v; want ErrInvalidJAAS", users, err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error %q echoes a value", err)
			}
		})
	}
}

func TestPlainUsersFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		path := filepath.Join(dir, "users")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	users, err := PlainUsersFromFile(write("# admins\n\nadmin=admin-secret\r\n  alice = a=b #c \n\t# indented comment\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"admin": "admin-secret", "alice": " a=b #c "}
	if !reflect.DeepEqual(users, want) {
		t.Fatalf("PlainUsersFromFile = %q, want %q", users, want)
	}
	for _, bad := range []string{"alice\n", "=secret\n", "alice=\n", "a=secret1\na=secret2\n"} {
		if users, err := PlainUsersFromFile(write(bad)); !errors.Is(err, ErrInvalidUsersFile) || strings.Contains(err.Error(), "secret") {
			t.Errorf("PlainUsersFromFile(%q) = %v, %v; want ErrInvalidUsersFile without the password", bad, users, err)
		}
	}
	if _, err := PlainUsersFromFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file error = %v", err)
	}
}
