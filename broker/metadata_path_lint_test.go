package broker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMetadataPathIsOne keeps the metadata path single (metadata_client.go):
// a record is proposed only by metadataClient, reconcile is called only by
// reconcileApplied, and that only by followMetadata and openTopicManager
// (the loop's first pass, before the loop starts).
func TestMetadataPathIsOne(t *testing.T) {
	allowed := map[string]map[string]bool{
		// callee → the functions (file:func) that may call it
		"Propose":          {"metadata_client.go:propose": true},
		"reconcile":        {"cluster.go:reconcileApplied": true},
		"reconcileApplied": {"cluster.go:followMetadata": true, "topics.go:openTopicManager": true},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			caller := name + ":" + fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				callers, watched := allowed[sel.Sel.Name]
				if !watched {
					return true
				}
				seen[sel.Sel.Name]++
				if !callers[caller] {
					t.Errorf("%s: %s calls %s: only %v may (see metadata_client.go)", fset.Position(call.Pos()), caller, sel.Sel.Name, allowedCallers(callers))
				}
				return true
			})
		}
	}
	for callee := range allowed {
		if seen[callee] == 0 {
			t.Errorf("no call of %s found: is the test still looking at the right names?", callee)
		}
	}
}

func allowedCallers(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
