package txn

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPureCore keeps the state machine free of I/O: it imports only the
// packages below and never reads the clock (time comes in as arguments).
func TestPureCore(t *testing.T) {
	allowed := map[string]bool{
		"errors": true, "fmt": true, "math": true, "slices": true, "sort": true, "time": true,
		"github.com/twmb/franz-go/pkg/kerr": true, "github.com/twmb/franz-go/pkg/kmsg": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %s: the transaction coordinator does no I/O", name, path)
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
}
