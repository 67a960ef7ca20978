package auth

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPrincipalStringAndParse(t *testing.T) {
	if got := User("alice").String(); got != "User:alice" {
		t.Fatalf("User(alice).String() = %q", got)
	}
	if got := Anonymous.String(); got != "User:ANONYMOUS" {
		t.Fatalf("Anonymous.String() = %q", got)
	}
	for _, tc := range []struct {
		in   string
		want Principal
	}{
		{"User:alice", User("alice")},
		{"Group:ops", Principal{Type: "Group", Name: "ops"}},
		{"User:CN=a:b", User("CN=a:b")},
	} {
		got, err := ParsePrincipal(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePrincipal(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "alice", ":alice", "User:", ":"} {
		if _, err := ParsePrincipal(bad); !errors.Is(err, ErrInvalidPrincipal) {
			t.Errorf("ParsePrincipal(%q) error = %v, want ErrInvalidPrincipal", bad, err)
		}
	}
}

// TestImportsNoStrataPackage keeps the package pure: the broker depends on
// it, never the reverse. Tests may use the internal test fixtures.
func TestImportsNoStrataPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("glob: %v %v", files, err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			fixture := strings.HasSuffix(name, "_test.go") && strings.HasPrefix(path, "github.com/strata-streaming/strata/internal/test")
			if strings.HasPrefix(path, "github.com/strata-streaming/strata") && !fixture {
				t.Errorf("%s imports %s; internal/auth must not import strata packages", name, path)
			}
		}
	}
}
