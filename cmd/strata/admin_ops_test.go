package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/broker"
)

// TestAdminOpsCommands: log-dirs describe, producers describe and leader
// elect against a broker, and their refusals.
func TestAdminOpsCommands(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "ops", "--partitions", "2")
	cli(t, addr, "a:1\nb:2\nc:3\n", "produce", "ops", "--key-separator", ":")

	out := cli(t, addr, "", "log-dirs", "describe", "--topic", "ops")
	if !regexp.MustCompile(`(?m)^1\s+\S+\s+\(volume\)\s+-\s+total \d+, usable \d+`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^1\s+\S+\s+ops\s+[01]\s+[1-9]\d*\s+0$`).MatchString(out) {
		t.Fatalf("log-dirs describe: %q", out)
	}
	out = cli(t, addr, "", "producers", "describe", "ops")
	if !regexp.MustCompile(`(?m)^[01]\s+\d+\s+0\s+\d+\s+\d{4}-\d\d-\d\dT\S+\s+-1\s+-1$`).MatchString(out) {
		t.Fatalf("producers describe: %q", out)
	}
	if out = cli(t, addr, "", "leader", "elect", "--preferred"); !strings.Contains(out, "no partition needed an election") {
		t.Fatalf("leader elect: %q", out)
	}
	if out = cli(t, addr, "", "leader", "elect", "--preferred", "--topic", "ops", "--partition", "1"); !strings.Contains(out, "ops-1: no election needed") {
		t.Fatalf("leader elect one partition: %q", out)
	}
	for _, args := range [][]string{
		{"leader", "elect"},
		{"leader", "elect", "--preferred", "--unclean"},
		{"leader", "elect", "--preferred", "--partition", "1"},
		{"producers", "describe", "no-such-topic"},
		{"log-dirs", "describe", "--topic", "no-such-topic"},
	} {
		cliErr(t, addr, "", args...)
	}
}

// TestQuorumDescribe: a single node is its quorum's leader and only voter.
func TestQuorumDescribe(t *testing.T) {
	addr := startBroker(t, nil)
	out := cli(t, addr, "", "quorum", "describe")
	if !strings.Contains(out, "LeaderId: 1\n") || !strings.Contains(out, "CurrentVoters: 1\n") ||
		!regexp.MustCompile(`(?m)^1\s+\d+\s+0\s+\S+ ago\s+\S+ ago\s+Leader$`).MatchString(out) {
		t.Fatalf("quorum describe: %q", out)
	}
}

// TestLogDirsMove: with two log dirs, log-dirs move takes a replica to
// the other dir and --wait returns once DescribeLogDirs shows it there;
// records written before are still read back. Refusals: an unknown dir,
// missing flags, an unknown topic.
func TestLogDirsMove(t *testing.T) {
	base := t.TempDir()
	dirA, dirB := filepath.Join(base, "a"), filepath.Join(base, "b")
	addr := startBroker(t, func(c *broker.Config) { c.DataDir = dirA + "," + dirB })
	cli(t, addr, "", "topic", "create", "mv", "--partitions", "1")
	cli(t, addr, "a:1\nb:2\nc:3\n", "produce", "mv", "--key-separator", ":")
	where := func() string {
		out := cli(t, addr, "", "log-dirs", "describe", "--topic", "mv")
		m := regexp.MustCompile(`(?m)^1\s+(\S+)\s+mv\s+0\s`).FindAllStringSubmatch(out, -1)
		if len(m) != 1 {
			t.Fatalf("log-dirs describe: %q", out)
		}
		return m[0][1]
	}
	from := where()
	to := dirA
	if from == dirA {
		to = dirB
	}
	out := cli(t, addr, "", "log-dirs", "move", "--broker", "1", "--dir", to, "--topic", "mv", "--wait")
	if !strings.Contains(out, "mv-0: moving to "+to+" on broker 1") || !strings.Contains(out, "every move finished") {
		t.Fatalf("log-dirs move: %q", out)
	}
	if got := where(); got != to {
		t.Fatalf("after the move the partition is in %s, want %s", got, to)
	}
	if out := cli(t, addr, "", "consume", "mv", "--from-beginning", "--max-messages", "3"); strings.Count(out, "\n") != 3 {
		t.Fatalf("consume after the move: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"log-dirs", "move", "--broker", "1", "--dir", filepath.Join(base, "c"), "--topic", "mv"}, "LOG_DIR_NOT_FOUND"},
		{[]string{"log-dirs", "move", "--broker", "1", "--topic", "mv"}, "--dir"},
		{[]string{"log-dirs", "move", "--broker", "1", "--dir", to, "--topic", "no-such-topic"}, "UNKNOWN_TOPIC_OR_PARTITION"},
	} {
		if err := cliErr(t, addr, "", tc.args...); !strings.Contains(err.Error(), tc.want) {
			t.Errorf("strata %s: %v, want %s", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestQuorumUpdateVoter: update-voter records a controller's endpoints
// (UpdateRaftVoter), which describe then lists; an unknown controller, a
// later update with another directory id and a missing directory id fail.
func TestQuorumUpdateVoter(t *testing.T) {
	addr := startBroker(t, nil)
	const dir = "AQEBAQEBAQEBAQEBAQEBAQ"
	out := cli(t, addr, "", "quorum", "update-voter", "--id", "1", "--directory-id", dir, "--address", "127.0.0.1:19093", "--listener", "EXTRA=127.0.0.1:19094")
	if !strings.Contains(out, "Updated controller 1 with directory id "+dir+" and endpoints: CONTROLLER://127.0.0.1:19093, EXTRA://127.0.0.1:19094") {
		t.Fatalf("update-voter: %q", out)
	}
	out = cli(t, addr, "", "quorum", "describe")
	if !strings.Contains(out, "Endpoints of 1: CONTROLLER://127.0.0.1:19093, EXTRA://127.0.0.1:19094\n") {
		t.Fatalf("describe after update-voter: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--id", "9", "--directory-id", dir, "--address", "127.0.0.1:19093"}, "VOTER_NOT_FOUND"},
		{[]string{"--id", "1", "--directory-id", "AgICAgICAgICAgICAgICAg", "--address", "127.0.0.1:19093"}, "VOTER_NOT_FOUND"},
		{[]string{"--id", "1", "--address", "127.0.0.1:19093"}, "--directory-id is required"},
		{[]string{"--id", "1", "--directory-id", dir, "--address", "nowhere"}, "--address"},
	} {
		err := cliErr(t, addr, "", append([]string{"quorum", "update-voter"}, tc.args...)...)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update-voter %v: %v, want %s", tc.args, err, tc.want)
		}
	}
}
