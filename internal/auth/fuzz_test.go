package auth

import (
	"errors"
	"testing"
)

// FuzzPlainStep: any client message ends the exchange with success only
// for the one valid credential, and otherwise with an error; never a panic.
func FuzzPlainStep(f *testing.F) {
	f.Add([]byte("\x00alice\x00secret"))
	f.Add([]byte("alice\x00alice\x00secret"))
	f.Add([]byte("\x00\x00"))
	f.Add([]byte{})
	mech := NewPlain(PlainChecker(map[string]string{"alice": "secret"}))
	f.Fuzz(func(t *testing.T, msg []byte) {
		ex := mech.Start()
		_, done, err := ex.Step(msg)
		if done == (err != nil) {
			t.Fatalf("done %v with error %v", done, err)
		}
		if err != nil && !errors.Is(err, ErrAuthenticationFailed) {
			t.Fatalf("error %v does not wrap ErrAuthenticationFailed", err)
		}
		if done && ex.Principal() != User("alice") {
			t.Fatalf("authenticated as %v", ex.Principal())
		}
	})
}

// FuzzScramStep feeds arbitrary client-first and client-final messages.
func FuzzScramStep(f *testing.F) {
	f.Add([]byte("n,,n=alice,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add([]byte("p=tls-unique,,n=alice,r=abc"), []byte(""))
	f.Add([]byte("n,a=x,n=alice,r=abc,tokenauth=true"), []byte("c=,r=,p="))
	creds := map[string]ScramCredential{}
	cred, err := NewScramCredential(ScramSHA256, "secret", []byte("salt"), MinScramIterations)
	if err != nil {
		f.Fatal(err)
	}
	creds["alice"] = cred
	mech, err := NewScram(ScramSHA256, func(u string) (ScramCredential, bool) { c, ok := creds[u]; return c, ok })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, first, final []byte) {
		ex := mech.Start()
		_, done, err := ex.Step(first)
		if done {
			t.Fatal("done after the first message")
		}
		if err != nil {
			return
		}
		if _, done, err = ex.Step(final); done || err == nil {
			t.Fatalf("random client-final accepted: done %v err %v", done, err)
		}
	})
}
