package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCLI runs the strata client commands against a live broker: topic
// create/describe/list, produce from stdin, consume from the beginning, and
// a clean one-line failure against a dead address.
func TestCLI(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	strata := func(t *testing.T, stdin string, args ...string) cmdResult {
		t.Helper()
		return mustRun(t, time.Minute, stdin, strataBin, append(args, "-b", srv.addr)...)
	}

	t.Run("topic-create-describe-list", func(t *testing.T) {
		res := strata(t, "", "topic", "create", "cli-orders", "--partitions", "2", "-c", "retention.ms=86400000")
		if !strings.Contains(res.stdout, "cli-orders") {
			t.Fatalf("topic create printed %q, want it to name the topic", res.stdout)
		}
		res = strata(t, "", "topic", "describe", "cli-orders")
		for _, want := range []string{"cli-orders", "Partitions: 2", "retention.ms=86400000"} {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("topic describe output lacks %q:\n%s", want, res.stdout)
			}
		}
		res = strata(t, "", "topic", "list")
		if !strings.Contains(res.stdout, "cli-orders") {
			t.Errorf("topic list output lacks cli-orders:\n%s", res.stdout)
		}
		res = runCmd(t, time.Minute, "", strataBin, "topic", "create", "cli-orders", "--partitions", "2", "-b", srv.addr)
		if res.exitCode == 0 || !strings.Contains(res.stderr, "TOPIC_ALREADY_EXISTS") {
			t.Errorf("creating cli-orders twice: want a non-zero exit naming TOPIC_ALREADY_EXISTS, got %s", res)
		}
	})

	t.Run("produce-consume", func(t *testing.T) {
		const n = 300
		strata(t, "", "topic", "create", "cli-lines", "--partitions", "1")
		var input, values strings.Builder
		for i := range n {
			fmt.Fprintf(&input, "k%03d:line %03d with some text\n", i, i)
			fmt.Fprintf(&values, "line %03d with some text\n", i)
		}
		strata(t, input.String(), "produce", "cli-lines", "--key-separator", ":")
		res := strata(t, "", "consume", "cli-lines", "--from-beginning", "-n", fmt.Sprint(n))
		if res.stdout != values.String() {
			t.Fatalf("strata consume: %s", firstLineDiff(res.stdout, values.String()))
		}
		// The keys, checked with franz-go rather than the CLI's own output format.
		records := consumeN(t, srv.addr, "cli-lines", n)
		for i, r := range records {
			if want := fmt.Sprintf("k%03d", i); string(r.Key) != want || r.Offset != int64(i) {
				t.Fatalf("record %d: key %q offset %d, want key %q offset %d", i, r.Key, r.Offset, want, i)
			}
		}
	})

	t.Run("dead-broker", func(t *testing.T) {
		dead := freeAddr(t)
		for _, args := range [][]string{
			{"topic", "list", "-b", dead},
			{"produce", "nowhere", "-b", dead},
		} {
			start := time.Now()
			res := runCmd(t, time.Minute, "x\n", strataBin, args...)
			took := time.Since(start)
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			switch {
			case res.err != nil:
				t.Errorf("strata %s: %s", strings.Join(args, " "), res)
			case res.exitCode == 0:
				t.Errorf("strata %s against a dead address exited 0: %s", strings.Join(args, " "), res)
			case len(lines) != 1 || lines[0] == "":
				t.Errorf("strata %s against a dead address: want one line on stderr, got %d:\n%s", strings.Join(args, " "), len(lines), res.stderr)
			case took > 35*time.Second:
				t.Errorf("strata %s against a dead address took %s to fail", strings.Join(args, " "), took)
			default:
				t.Logf("strata %s: exit %d after %s: %s", strings.Join(args, " "), res.exitCode, took.Round(time.Millisecond), lines[0])
			}
		}
	})
}
