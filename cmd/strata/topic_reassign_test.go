package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// replicasOf asks the cluster (bypassing any client cache) for a
// one-partition topic's replicas and ISR.
func (c *cliCluster) replicasOf(t *testing.T, topic string) (replicas, isr []int32) {
	t.Helper()
	ps := c.partitionsOf(t, topic)
	if len(ps) != 1 {
		t.Fatalf("metadata of %s: %d partitions, want 1", topic, len(ps))
	}
	return ps[0].Replicas, ps[0].ISR
}

// waitReplicas polls the topic's replicas (every 50 ms, up to 10 s) until
// they are want, and returns the last seen.
func (c *cliCluster) waitReplicas(t *testing.T, topic string, want []int32) []int32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := c.replicasOf(t, topic)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTopicReassignCLI drives `strata topic reassign` against a three-node
// cluster: a move with --replicas and --wait, a move back with a plan
// file, a stuck move (to a stopped node) listed, waited on with a timeout
// and cancelled, and the broker's refusals.
func TestTopicReassignCLI(t *testing.T) {
	c := startCLICluster(t, 3)
	addr := strings.Join(c.addrs, ",")
	cli(t, addr, "", "topic", "create", "mv", "-p", "1", "-r", "1")
	cli(t, addr, "a\nb\nc\n", "produce", "mv")
	replicas, _ := c.replicasOf(t, "mv")
	if len(replicas) != 1 {
		t.Fatalf("replicas %v, want one", replicas)
	}
	home := replicas[0]
	var others []int32
	for id := int32(1); id <= 3; id++ {
		if id != home {
			others = append(others, id)
		}
	}
	target := fmt.Sprintf("%d,%d", others[0], others[1])

	out := cli(t, addr, "", "topic", "reassign", "mv", "--partition", "0", "--replicas", target, "--wait", "--wait-interval", "50ms")
	for _, want := range []string{"reassigning mv-0 to replicas " + target, "mv-0: done, replicas " + target, "done after "} {
		if !strings.Contains(out, want) {
			t.Errorf("reassign --wait output lacks %q:\n%s", want, out)
		}
	}
	if got, isr := c.replicasOf(t, "mv"); !slices.Equal(got, others) || len(isr) != 2 {
		t.Fatalf("after the move: replicas %v isr %v, want %v", got, isr, others)
	}
	if out := cli(t, addr, "", "topic", "reassign", "--list"); strings.TrimSpace(out) != "no reassignment in progress" {
		t.Fatalf("--list after the move: %q", out)
	}

	// Back home with a plan file in kafka-reassign-partitions' format.
	plan := filepath.Join(t.TempDir(), "plan.json")
	body := fmt.Sprintf(`{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[%d],"log_dirs":["any"]}]}`, home)
	if err := os.WriteFile(plan, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out = cli(t, addr, "", "topic", "reassign", "--plan", plan, "--wait", "--wait-interval", "50ms")
	if !strings.Contains(out, fmt.Sprintf("mv-0: done, replicas %d ", home)) {
		t.Fatalf("plan --wait output:\n%s", out)
	}
	if got := cli(t, addr, "", "consume", "mv", "--from-beginning", "-n", "3", "--format", "%v\n"); got != "a\nb\nc\n" {
		t.Fatalf("records after two moves: %q", got)
	}

	// A move to a stopped node cannot finish: it is listed, --wait gives
	// up at --wait-timeout, and --cancel reverts it.
	down := others[0]
	c.stop(down)
	var live []string
	for i, a := range c.addrs {
		if int32(i+1) != down {
			live = append(live, a)
		}
	}
	addr = strings.Join(live, ",")
	cli(t, addr, "", "topic", "reassign", "mv", "-p", "0", "--replicas", fmt.Sprint(down))
	out = cli(t, addr, "", "topic", "reassign", "--list", "mv")
	wantRow := fmt.Sprintf("mv     0          %d,%d       %d       %d", down, home, down, home)
	if !strings.Contains(out, "TOPIC  PARTITION  REPLICAS  ADDING  REMOVING") || !strings.Contains(out, wantRow) {
		t.Fatalf("--list during a stuck move:\n%s\nwant row %q", out, wantRow)
	}
	err := cliErr(t, addr, "", "topic", "reassign", "mv", "-p", "0", "--wait", "--wait-timeout", "300ms", "--wait-interval", "50ms")
	if !strings.Contains(err.Error(), "still reassigning mv-0") {
		t.Fatalf("--wait on a stuck move: %v", err)
	}
	out = cli(t, addr, "", "topic", "reassign", "mv", "-p", "0", "--cancel")
	if !strings.Contains(out, "cancelled the reassignment of mv-0") {
		t.Fatalf("--cancel printed %q", out)
	}
	// The cancel is committed; a broker's metadata may apply it a moment
	// later than the controller that answered.
	if got := c.waitReplicas(t, "mv", []int32{home}); !slices.Equal(got, []int32{home}) {
		t.Fatalf("replicas after cancel %v, want [%d]", got, home)
	}
	if out := cli(t, addr, "", "topic", "reassign", "mv", "-p", "0", "--wait"); !strings.HasPrefix(out, fmt.Sprintf("mv-0: no reassignment in progress, replicas %d ", home)) {
		t.Fatalf("--wait with nothing in progress printed %q", out)
	}

	// Refusals from the broker: one line each, with the Kafka error name.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mv", "-p", "0", "--cancel"}, "NO_REASSIGNMENT_IN_PROGRESS"},
		{[]string{"mv", "-p", "0", "--replicas", fmt.Sprintf("%d,%d", home, home)}, "INVALID_REPLICA_ASSIGNMENT"},
		{[]string{"mv", "-p", "0", "--replicas", "42"}, "broker 42 is not registered"},
		{[]string{"nope", "-p", "0", "--replicas", "1"}, "UNKNOWN_TOPIC_OR_PARTITION"},
	} {
		err := cliErr(t, addr, "", append([]string{"topic", "reassign"}, tc.args...)...)
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("reassign %v: error %q, want one line with %q", tc.args, err, tc.want)
		}
	}
}

// Bad input is refused before anything is sent (the broker address is
// dead, so reaching it would fail differently).
func TestTopicReassignBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"mv", "--replicas", "2,3"}, "--partition is required"},
		{[]string{"mv", "-p", "0"}, "give --replicas IDS, --cancel or --wait"},
		{[]string{"-p", "0", "--replicas", "2"}, "name a TOPIC"},
		{[]string{"mv", "-p", "0", "--replicas", "2,x"}, `"x" is not a broker id`},
		{[]string{"mv", "-p", "0", "--replicas", "-1"}, `"-1" is not a broker id`},
		{[]string{"mv", "-p", "-1", "--replicas", "2"}, "partitions are numbered from 0"},
		{[]string{"--list", "--cancel"}, "--list cannot be combined"},
		{[]string{"mv", "-p", "0", "--cancel", "--replicas", "2"}, "exclusive"},
		{[]string{"mv", "--plan", write("p0.json", `{"version":1,"partitions":[]}`)}, "give no TOPIC"},
		{[]string{"--plan", filepath.Join(dir, "missing.json")}, "reading plan"},
		{[]string{"--plan", write("p1.json", `{"version":1,`)}, "unexpected EOF"},
		{[]string{"--plan", write("p2.json", `{"version":2,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}`)}, "version 2, want 1"},
		{[]string{"--plan", write("p3.json", `{"version":1,"partitions":[]}`)}, "no partitions"},
		{[]string{"--plan", write("p4.json", `{"version":1,"partitions":[{"topic":"t","replicas":[1]}]}`)}, "has no partition"},
		{[]string{"--plan", write("p5.json", `{"version":1,"partitions":[{"topic":"t","partition":0,"replica":[1]}]}`)}, `unknown field "replica"`},
		{[]string{"--plan", write("p6.json", `{"version":1,"partitions":[{"topic":"t","partition":0}]}`)}, "t-0 has no replicas"},
		{[]string{"--plan", write("p7.json", `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`)}, "t-0 is listed twice"},
	}
	for _, tc := range cases {
		res := runCLI(t, 10*time.Second, "", append([]string{"-b", "127.0.0.1:1", "--timeout", "2s", "topic", "reassign"}, tc.args...)...)
		if res.err == nil || !strings.Contains(res.err.Error(), tc.want) || strings.Contains(res.err.Error(), "\n") {
			t.Errorf("reassign %v: error %v, want one line with %q", tc.args, res.err, tc.want)
		}
	}

	// Valid input against a dead address fails fast with the usual words.
	res := runCLI(t, 10*time.Second, "", "-b", "127.0.0.1:1", "--timeout", "2s", "topic", "reassign", "--list")
	if res.err == nil || !strings.Contains(res.err.Error(), "cannot reach brokers 127.0.0.1:1") {
		t.Errorf("--list against a dead broker: %v", res.err)
	}

	// The binary prints the error as one line on stderr and exits 1.
	cmd := exec.Command(brokertest.Binary(t), "topic", "reassign", "--list", "--cancel")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "strata: --list cannot be combined") {
		t.Fatalf("stderr %q, want one line", got)
	}
}
