package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runExample builds and runs ./docs/examples/NAME against the server and
// returns its standard output; it fails the test on a non-zero exit.
func runExample(t *testing.T, name string, s *server) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "./docs/examples/"+name)
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./docs/examples/%s: %v\n%s", name, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-brokers", s.addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docs/examples/%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, out, stderr.String())
	}
	return string(out)
}

// TestReadmeStatefulGoExample runs the README's stateful Go example (a
// windowed count at exactly-once, suppressed until windows close, with an
// interactive query) against a server: it checks its counts itself and
// exits 1 on a difference; here its output must list every user's three
// minutes with the counts the clicks give (14, 13 and 13 clicks at 4.5 s
// intervals over 09:00–09:02) and the queried total (40 + the 09:05 click).
func TestReadmeStatefulGoExample(t *testing.T) {
	s := startServer(t)
	out := runExample(t, "clicks", s)
	t.Logf("output:\n%s", out)
	for u := range 3 {
		for _, w := range []string{"09:00 14", "09:01 13", "09:02 13"} {
			line := regexp.MustCompile(`(?m)^user` + string(rune('0'+u)) + ` ` + w + ` clicks$`)
			if !line.MatchString(out) {
				t.Errorf("no line %q in the output", "user"+string(rune('0'+u))+" "+w+" clicks")
			}
		}
	}
	if !strings.Contains(out, "query: user0 41 clicks in all\n") {
		t.Errorf("output lacks the interactive query's answer %q", "query: user0 41 clicks in all")
	}
}

// TestReadmeQueueExample runs the README's share-group example: five
// share consumers on two partitions process each of 1000 records once.
func TestReadmeQueueExample(t *testing.T) {
	s := startServer(t)
	out := runExample(t, "queue", s)
	t.Logf("output:\n%s", out)
	if !strings.Contains(out, "total 1000 of 1000") {
		t.Fatalf("output lacks %q", "total 1000 of 1000")
	}
}
