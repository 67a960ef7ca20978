package auth

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"hash"
	"reflect"
	"strings"
	"testing"

	"github.com/xdg-go/scram"
)

// scramTestUsers builds a lookup over users (name -> password) for mechanism.
func scramTestUsers(t *testing.T, mechanism string, users map[string]string) func(string) (ScramCredential, bool) {
	t.Helper()
	creds := make(map[string]ScramCredential)
	for name, password := range users {
		cred, err := NewScramCredential(mechanism, password, []byte("salt-of-"+name), MinScramIterations)
		if err != nil {
			t.Fatal(err)
		}
		creds[name] = cred
	}
	return func(user string) (ScramCredential, bool) {
		cred, ok := creds[user]
		return cred, ok
	}
}

func xdgHash(mechanism string) scram.HashGeneratorFcn {
	if mechanism == ScramSHA512 {
		return scram.SHA512
	}
	return scram.SHA256
}

// runScram drives ex with xdg-go/scram's client conversation. It returns
// the error of the server step that failed, and the client conversation.
func runScram(t *testing.T, ex Exchange, mechanism, user, password, authzID string) (*scram.ClientConversation, error) {
	t.Helper()
	client, err := xdgHash(mechanism).NewClient(user, password, authzID)
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	clientFirst, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	serverFirst, done, err := ex.Step([]byte(clientFirst))
	if err != nil {
		return conv, err
	}
	if done {
		t.Fatal("done after the client-first message")
	}
	clientFinal, err := conv.Step(string(serverFirst))
	if err != nil {
		t.Fatalf("client rejected server-first %q: %v", serverFirst, err)
	}
	serverFinal, done, err := ex.Step([]byte(clientFinal))
	if err != nil {
		return conv, err
	}
	if !done {
		t.Fatal("not done after the client-final message")
	}
	if _, err := conv.Step(string(serverFinal)); err != nil {
		t.Fatalf("client rejected server-final %q: %v", serverFinal, err)
	}
	return conv, nil
}

func TestScramExchange(t *testing.T) {
	for _, mechanism := range []string{ScramSHA256, ScramSHA512} {
		t.Run(mechanism, func(t *testing.T) {
			users := map[string]string{"alice": "alice-secret", "a,b=c": "odd-secret"}
			mech, err := NewScram(mechanism, scramTestUsers(t, mechanism, users))
			if err != nil {
				t.Fatal(err)
			}
			if mech.Name() != mechanism {
				t.Fatalf("Name() = %q", mech.Name())
			}
			for user, password := range users {
				ex := mech.Start()
				conv, err := runScram(t, ex, mechanism, user, password, "")
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				if !conv.Valid() {
					t.Fatalf("%s: client did not accept the server's signature", user)
				}
				if ex.Principal() != User(user) {
					t.Fatalf("Principal() = %v, want User:%s", ex.Principal(), user)
				}
				if !ex.Expiry().IsZero() {
					t.Fatalf("Expiry() = %v", ex.Expiry())
				}
				if _, _, err := ex.Step([]byte("x")); !errors.Is(err, ErrExchangeFinished) {
					t.Fatalf("Step after done: %v", err)
				}
			}

			ex := mech.Start()
			if _, err := runScram(t, ex, mechanism, "alice", "wrong", ""); !errors.Is(err, ErrAuthenticationFailed) {
				t.Fatalf("wrong password: %v, want ErrAuthenticationFailed", err)
			}
			if ex.Principal() != (Principal{}) {
				t.Fatalf("Principal() after failure = %v", ex.Principal())
			}

			ex = mech.Start()
			if _, err := runScram(t, ex, mechanism, "alice", "alice-secret", "bob"); !errors.Is(err, ErrAuthenticationFailed) {
				t.Fatalf("authzid mismatch: %v, want ErrAuthenticationFailed", err)
			}
			if _, err := runScram(t, mech.Start(), mechanism, "alice", "alice-secret", "alice"); err != nil {
				t.Fatalf("authzid equal to the username: %v", err)
			}
		})
	}
}

// TestScramUnknownUser checks that an unknown user passes the first step
// with a plausible, stable server-first message and fails at the last.
func TestScramUnknownUser(t *testing.T) {
	mech, err := NewScram(ScramSHA256, scramTestUsers(t, ScramSHA256, map[string]string{"alice": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	serverFirst := func(user string) (Exchange, string) {
		ex := mech.Start()
		reply, done, err := ex.Step([]byte("n,,n=" + user + ",r=clientnonce"))
		if err != nil || done {
			t.Fatalf("client-first for %s: %v %v", user, done, err)
		}
		return ex, string(reply)
	}
	_, first := serverFirst("mallory")
	_, again := serverFirst("mallory")
	_, other := serverFirst("trudy")
	_, known := serverFirst("alice")
	salt := func(s string) string {
		fields := strings.Split(s, ",")
		if len(fields) != 3 || !strings.HasPrefix(fields[1], "s=") || !strings.HasPrefix(fields[2], "i=") {
			t.Fatalf("server-first %q is not r=,s=,i=", s)
		}
		return fields[1] + "," + fields[2]
	}
	if salt(first) != salt(again) {
		t.Fatalf("an unknown user's salt changed between attempts: %q vs %q", first, again)
	}
	if salt(first) == salt(other) {
		t.Fatalf("two unknown users share a salt %q", salt(first))
	}
	// The known user's credential has 4096 iterations, like the fakes.
	for _, reply := range []string{first, known} {
		if !strings.HasPrefix(reply, "r=clientnonce") || !strings.HasSuffix(reply, ",i=4096") {
			t.Fatalf("server-first %q: want r=clientnonce...,s=...,i=4096", reply)
		}
	}

	ex := mech.Start()
	if _, err := runScram(t, ex, ScramSHA256, "mallory", "pw", ""); !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("unknown user: %v, want ErrAuthenticationFailed at the final step", err)
	}
}

func TestScramRefusedRequests(t *testing.T) {
	mech, err := NewScram(ScramSHA512, scramTestUsers(t, ScramSHA512, map[string]string{"alice": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, msg string
		malformed bool
	}{
		{"channel binding", "p=tls-unique,,n=alice,r=abc", false},
		{"channel binding, unknown type", "p=foo,,n=alice,r=abc", false},
		{"delegation token", "n,,n=alice,r=abc,tokenauth=true", false},
		{"delegation token upper case", "n,,n=alice,r=abc,tokenauth=TRUE", false},
		{"empty", "", true},
		{"bad gs2 flag", "x,,n=alice,r=abc", true},
		{"no nonce", "n,,n=alice,x=abc", true},
		{"bad name escape", "n,,n=al=ice,r=abc", true},
		{"empty user", "n,,n=,r=abc", true},
		{"reserved m extension", "n,,m=x,n=alice,r=abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, done, err := mech.Start().Step([]byte(tc.msg))
			if done || !errors.Is(err, ErrAuthenticationFailed) || errors.Is(err, ErrMalformedMessage) != tc.malformed {
				t.Fatalf("Step(%q) = %v, %v; want ErrAuthenticationFailed, malformed %v", tc.msg, done, err, tc.malformed)
			}
		})
	}

	// Other extensions are ignored, as Kafka does.
	ex := mech.Start()
	if _, _, err := ex.Step([]byte("n,,n=alice,r=abc,tokenauth=false,foo=bar")); err != nil {
		t.Fatalf("extension other than tokenauth=true refused: %v", err)
	}
	if _, _, err := ex.Step([]byte("c=biws,r=abc,p=AAAA")); !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("final message with a foreign nonce: %v", err)
	}
}

func TestScramCredential(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		newHash   func() hash.Hash
		size      int
	}{{ScramSHA256, sha256.New, 32}, {ScramSHA512, sha512.New, 64}} {
		salt := []byte("NaCl-salt")
		fromPassword, err := NewScramCredential(tc.mechanism, "pencil", salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		salted, err := pbkdf2.Key(tc.newHash, "pencil", salt, 4096, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		fromSalted, err := ScramCredentialFromSaltedPassword(tc.mechanism, salted, salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromPassword, fromSalted) {
			t.Fatalf("%s: credential from password %+v != from salted password %+v", tc.mechanism, fromPassword, fromSalted)
		}
		// The client library derives the same keys independently.
		client, _ := xdgHash(tc.mechanism).NewClient("u", "pencil", "")
		xdg := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: 4096})
		if !bytes.Equal(xdg.StoredKey, fromPassword.StoredKey) || !bytes.Equal(xdg.ServerKey, fromPassword.ServerKey) {
			t.Fatalf("%s: keys differ from xdg-go/scram's", tc.mechanism)
		}

		data, err := json.Marshal(fromPassword)
		if err != nil {
			t.Fatal(err)
		}
		var decoded ScramCredential
		if err := json.Unmarshal(data, &decoded); err != nil || !reflect.DeepEqual(decoded, fromPassword) {
			t.Fatalf("JSON round trip: %s -> %+v, %v", data, decoded, err)
		}

		if _, err := ScramCredentialFromSaltedPassword(tc.mechanism, salted[1:], salt, 4096); !errors.Is(err, ErrInvalidScramCredential) {
			t.Fatalf("short salted password: %v", err)
		}
	}
	for _, iterations := range []int{MinScramIterations - 1, MaxScramIterations + 1, 0} {
		if _, err := NewScramCredential(ScramSHA256, "pw", []byte("s"), iterations); !errors.Is(err, ErrInvalidScramCredential) {
			t.Errorf("NewScramCredential with %d iterations: %v", iterations, err)
		}
		if _, err := ScramCredentialFromSaltedPassword(ScramSHA256, make([]byte, 32), []byte("s"), iterations); !errors.Is(err, ErrInvalidScramCredential) {
			t.Errorf("ScramCredentialFromSaltedPassword with %d iterations: %v", iterations, err)
		}
	}
	if _, err := NewScramCredential(ScramSHA256, "pw", []byte("s"), MaxScramIterations); err != nil {
		t.Errorf("MaxScramIterations refused: %v", err)
	}
	if _, err := NewScramCredential(ScramSHA256, "pw", nil, 4096); !errors.Is(err, ErrInvalidScramCredential) {
		t.Errorf("empty salt accepted: %v", err)
	}
	if _, err := NewScramCredential("SCRAM-SHA-1", "pw", []byte("s"), 4096); !errors.Is(err, ErrInvalidScramCredential) {
		t.Errorf("SCRAM-SHA-1 accepted: %v", err)
	}
	if _, err := NewScram("SCRAM-SHA-1", func(string) (ScramCredential, bool) { return ScramCredential{}, false }); err == nil {
		t.Error("NewScram accepted SCRAM-SHA-1")
	}
	if _, err := NewScram(ScramSHA256, nil); err == nil {
		t.Error("NewScram accepted a nil lookup")
	}
}

// TestScramMismatchedCredential: a SHA-256 credential served by the
// SHA-512 mechanism is unusable and fails like an unknown user.
func TestScramMismatchedCredential(t *testing.T) {
	mech, err := NewScram(ScramSHA512, scramTestUsers(t, ScramSHA256, map[string]string{"alice": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runScram(t, mech.Start(), ScramSHA512, "alice", "pw", ""); !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("mismatched credential: %v", err)
	}
}
