package main

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker"
	"github.com/strata-streaming/strata/internal/brokertest"
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

// TestLeaderElectUncleanCLI: `strata leader elect --unclean` on a
// partition whose only ISR member (node 4) is gone: refused while no
// replica is alive, then, node 5 back outside the ISR, it elects node 5.
func TestLeaderElectUncleanCLI(t *testing.T) {
	c := startCLICluster(t, 3)
	c.addBrokerOnly()
	c.addBrokerOnly()
	addr := strings.Join(c.addrs[:3], ",") // the voters, which stay up
	brokersListed := func() int {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs[:3]...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			return 0
		}
		return len(resp.Brokers) // the unfenced ones
	}
	brokertest.WaitFor(t, 20*time.Second, "nodes 4 and 5 unfenced", func() bool { return brokersListed() == 5 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs[:3]...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "orphan", -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Replicas = []int32{4, 5}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 30000
	if resp, err := req.RequestWith(context.Background(), cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	state := func() (int32, []int32) {
		ps := c.partitionsOf(t, "orphan")
		if len(ps) == 0 {
			return -2, nil // the node asked has not applied the topic yet
		}
		return ps[0].Leader, ps[0].ISR
	}
	brokertest.WaitFor(t, 20*time.Second, "node 4 leading with a full ISR", func() bool {
		l, isr := state()
		return l == 4 && len(isr) == 2
	})
	c.stop(5)
	brokertest.WaitFor(t, 30*time.Second, "the ISR shrunk to node 4", func() bool {
		l, isr := state()
		return l == 4 && slices.Equal(isr, []int32{4})
	})
	c.stop(4)
	brokertest.WaitFor(t, 30*time.Second, "no leader", func() bool {
		l, _ := state()
		return l == -1
	})
	elect := []string{"leader", "elect", "--unclean", "--topic", "orphan", "--partition", "0"}
	if err := cliErr(t, addr, "", elect...); !strings.Contains(err.Error(), "orphan-0: ELIGIBLE_LEADERS_NOT_AVAILABLE") {
		t.Fatalf("unclean election with no replica alive: %v", err)
	}
	c.start(5)
	brokertest.WaitFor(t, 20*time.Second, "node 5 unfenced", func() bool { return brokersListed() == 4 })
	if l, isr := state(); l != -1 || !slices.Equal(isr, []int32{4}) {
		t.Fatalf("node 5 back: leader %d ISR %v, want none and [4]", l, isr)
	}
	if out := cli(t, addr, "", elect...); strings.TrimSpace(out) != "orphan-0: leader elected" {
		t.Fatalf("unclean election: %q", out)
	}
	brokertest.WaitFor(t, 10*time.Second, "node 5 leading alone", func() bool {
		l, isr := state()
		return l == 5 && slices.Equal(isr, []int32{5})
	})
	if out := cli(t, addr, "", elect...); strings.TrimSpace(out) != "orphan-0: no election needed" {
		t.Fatalf("second unclean election: %q", out)
	}
}
