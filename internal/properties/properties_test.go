package properties

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEachAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.properties")
	if err := os.WriteFile(path, []byte("# c\n! c\n\n a = 1 \nb: two=2\na=3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var lines []int
	if err := Each(path, func(line int, k, v string) error { lines = append(lines, line); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0] != 4 || lines[2] != 6 {
		t.Fatalf("lines %v", lines)
	}
	props, err := Read(path)
	if err != nil || props["a"] != "3" || props["b"] != "two=2" || len(props) != 2 {
		t.Fatalf("%v %v", props, err)
	}
	if err := os.WriteFile(path, []byte("ok=1\nnope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), ":2: expected key=value") {
		t.Fatalf("bad line: %v", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file read")
	}
}
