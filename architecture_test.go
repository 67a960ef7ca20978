package strata_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbiddenImports is the dependency rule of ARCHITECTURE.md: each area may
// not import the listed packages (or anything below them).
var forbiddenImports = map[string][]string{
	"broker":   {"connect", "streams", "cmd", "e2e"},
	"tiering":  {"broker", "metadata", "connect", "streams", "cmd", "e2e"},
	"metadata": {"broker", "tiering", "connect", "streams", "cmd", "e2e"},
	"connect":  {"broker", "tiering", "metadata", "streams", "cmd", "e2e"},
	"streams":  {"broker", "tiering", "metadata", "connect", "cmd", "e2e"},
	"registry": {"broker", "tiering", "metadata", "connect", "streams", "cmd", "e2e"},
	"e2e":      {"broker", "tiering", "metadata", "connect", "streams"},
	"internal": {"broker", "tiering", "metadata", "connect", "streams", "cmd", "e2e"},
	"deploy":   {"broker", "tiering", "metadata", "connect", "streams", "cmd", "e2e"},
}

const module = "github.com/strata-streaming/strata/"

// TestDependencyDirection fails when a package imports across the layering
// that ARCHITECTURE.md describes (test files included).
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		area := strings.SplitN(strings.TrimPrefix(fields[0], module), "/", 2)[0]
		rules, ok := forbiddenImports[area]
		if !ok {
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			target := strings.SplitN(strings.TrimPrefix(imp, module), "/", 2)[0]
			for _, forbidden := range rules {
				if target == forbidden {
					t.Errorf("%s imports %s: %s must not depend on %s (see ARCHITECTURE.md)", fields[0], imp, area, forbidden)
				}
			}
		}
	}
	if checked < 4 {
		t.Fatalf("only %d packages checked; is go list seeing the module?", checked)
	}
}

// TestArchitectureNamesEveryArea keeps ARCHITECTURE.md in step with the tree.
func TestArchitectureNamesEveryArea(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, area := range []string{"broker/", "broker/storage/", "tiering/", "metadata/", "connect/", "streams/", "registry/", "deploy/", "e2e/", "cmd/strata/"} {
		if !strings.Contains(string(doc), "`"+area+"`") {
			t.Errorf("ARCHITECTURE.md does not describe `%s`", area)
		}
	}
}

// allowedImports lists, for packages whose place in the layering is
// narrower than their area's, everything they may import besides the
// standard library (ARCHITECTURE.md, "Layers of the broker"). Prefixes
// match a path and everything below it.
var allowedImports = map[string][]string{
	// The partition replica sits below the handlers and above storage.
	module + "broker/replica": {
		module + "broker/storage",
		module + "metadata/cluster",
		"github.com/twmb/franz-go/pkg/kmsg",
		"github.com/twmb/franz-go/pkg/kerr",
	},
}

// TestReplicaLayer fails when a package listed in allowedImports imports
// anything else (test files included), or when a handler-level package of
// the broker is imported by one.
func TestReplicaLayer(t *testing.T) {
	for pkg, allowed := range allowedImports {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}} {{join .TestImports " "}}`, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		imports := strings.Fields(string(out))
		if len(imports) == 0 {
			t.Fatalf("go list %s: no imports; is the package there?", pkg)
		}
		for _, imp := range imports {
			if first := strings.SplitN(imp, "/", 2)[0]; !strings.Contains(first, ".") {
				continue // the standard library
			}
			ok := false
			for _, a := range allowed {
				if imp == a || strings.HasPrefix(imp, a+"/") {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("%s imports %s; it may import only %v and the standard library (see ARCHITECTURE.md)", pkg, imp, allowed)
			}
		}
	}
}
