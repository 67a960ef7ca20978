// Package puritytest checks that a pure state-machine package (the group
// and transaction coordinators) does no I/O and never reads the clock: its
// non-test files import only allowed packages and call none of the time
// functions that read the clock or wait. Tests call Check from the
// package's own directory.
package puritytest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Check fails t for every import outside allowed and every clock read in
// the non-test .go files of the working directory; what names the package
// in the messages.
func Check(t *testing.T, what string, allowed ...string) {
	t.Helper()
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !ok[path] {
				t.Errorf("%s imports %s: %s does no I/O", name, path, what)
			}
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"time.Now(", "time.Since(", "time.After(", "time.NewTimer(", "time.Sleep("} {
			if strings.Contains(string(src), banned) {
				t.Errorf("%s calls %s: pass the time in instead", name, strings.TrimSuffix(banned, "("))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no non-test Go files found: run from the package directory")
	}
}
