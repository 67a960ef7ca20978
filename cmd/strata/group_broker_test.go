package main

// `strata group` against a real in-process broker with a real franz-go
// consumer group: describe shows the lag, reset-offsets refuses an active
// group and moves an empty one's offsets, delete removes it.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker"
)

// offsetRow matches a describe row of group workers on topic jobs.
func offsetRow(partition, current, logEnd, lag, rest string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^workers\s+jobs\s+` + partition + `\s+` + current + `\s+` + logEnd + `\s+` + lag + `\s+` + rest + `$`)
}

func TestGroupCommands(t *testing.T) {
	addr := startBroker(t, func(c *broker.Config) { c.GroupInitialRebalanceDelayMs = 0 })
	cli(t, addr, "", "topic", "create", "jobs", "-p", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Five records per partition, a minute apart, an hour ago.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	var records []*kgo.Record
	for p := range int32(2) {
		for i := range 5 {
			records = append(records, &kgo.Record{Topic: "jobs", Partition: p, Value: []byte("job"), Timestamp: base.Add(time.Duration(i) * time.Minute)})
		}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// A consumer reads everything but commits partition 0 only up to 3.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("lag-test"),
		kgo.ConsumerGroup("workers"), kgo.ConsumeTopics("jobs"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			consumer.Close()
		}
	}()
	for seen := 0; seen < 10; {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		seen += fetches.NumRecords()
	}
	err = commitSync(ctx, consumer, map[string]map[int32]kgo.EpochOffset{
		"jobs": {0: {Epoch: -1, Offset: 3}, 1: {Epoch: -1, Offset: 5}},
	})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}

	out := cli(t, addr, "", "group", "list")
	if !regexp.MustCompile(`(?m)^GROUP\s+STATE\s+PROTOCOL-TYPE\n(?:.*\n)*workers\s+Stable\s+consumer$`).MatchString(out) {
		t.Errorf("group list:\n%s", out)
	}

	out = cli(t, addr, "", "group", "describe", "workers")
	member := `(\S+)\s+\S+\s+lag-test`
	for _, row := range []*regexp.Regexp{
		offsetRow("0", "3", "5", "2", member),
		offsetRow("1", "5", "5", "0", member),
	} {
		if !row.MatchString(out) {
			t.Errorf("describe lacks %s:\n%s", row, out)
		}
	}
	if !strings.Contains(out, "State: Stable") || !regexp.MustCompile(`(?m)^\S+\s+\S+\s+lag-test\s+2\s+jobs\(0,1\)$`).MatchString(out) {
		t.Errorf("describe header or members:\n%s", out)
	}

	// An active group is neither reset nor deleted.
	err = cliErr(t, addr, "", "group", "reset-offsets", "workers", "--topic", "jobs", "--to-earliest", "--execute")
	if !strings.Contains(err.Error(), `group "workers": offsets can only be reset while the group is inactive, but it is Stable with 1 member(s)`) {
		t.Errorf("reset of an active group: %v", err)
	}
	err = cliErr(t, addr, "", "group", "delete", "workers")
	if !strings.Contains(err.Error(), `group "workers": NON_EMPTY_GROUP`) {
		t.Errorf("delete of an active group: %v", err)
	}

	consumer.Close() // leaves the group
	closed = true
	adm := kadm.NewClient(producer)
	waitForGroupState(t, adm, "workers", "Empty")

	out = cli(t, addr, "", "group", "describe", "workers")
	if !strings.Contains(out, "Consumer group 'workers' has no active members.") || !offsetRow("0", "3", "5", "2", `-\s+-\s+-`).MatchString(out) {
		t.Errorf("describe of the empty group:\n%s", out)
	}

	// Without --execute: the plan, and nothing changes.
	res := runCLI(t, time.Minute, "", "-b", addr, "--timeout", "10s", "group", "reset-offsets", "workers", "--topic", "jobs", "--to-earliest")
	if res.err != nil || !regexp.MustCompile(`^GROUP\s+TOPIC\s+PARTITION\s+NEW-OFFSET\nworkers\s+jobs\s+0\s+0\nworkers\s+jobs\s+1\s+0\n$`).MatchString(res.stdout) ||
		!strings.Contains(res.stderr, "add --execute") {
		t.Errorf("dry run: %v\nstdout:\n%s\nstderr:\n%s", res.err, res.stdout, res.stderr)
	}
	if committed := fetchCommitted(t, adm, "workers"); committed != "0:3 1:5" {
		t.Errorf("after the dry run: %s", committed)
	}

	steps := []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "jobs", "--to-earliest"}, "0:0 1:0"},
		{[]string{"--topic", "jobs:1", "--to-offset", "4"}, "0:0 1:4"},
		{[]string{"--topic", "jobs", "--to-offset", "99"}, "0:5 1:5"}, // clamped to the log end
		// The third record of each partition is two minutes after base.
		{[]string{"--topic", "jobs", "--to-datetime", base.Add(90 * time.Second).UTC().Format(time.RFC3339Nano)}, "0:2 1:2"},
		{[]string{"--all-topics", "--to-latest"}, "0:5 1:5"},
	}
	for _, s := range steps {
		args := append([]string{"group", "reset-offsets", "workers", "--execute"}, s.args...)
		out := cli(t, addr, "", args...)
		if !strings.HasPrefix(out, "GROUP") {
			t.Errorf("strata %s printed %q", strings.Join(args, " "), out)
		}
		if committed := fetchCommitted(t, adm, "workers"); committed != s.want {
			t.Errorf("strata %s: committed %s, want %s", strings.Join(args, " "), committed, s.want)
		}
	}
	cli(t, addr, "", "group", "reset-offsets", "workers", "--topic", "jobs:0", "--to-earliest", "--execute")
	out = cli(t, addr, "", "group", "describe", "workers")
	if !offsetRow("0", "0", "5", "5", `-\s+-\s+-`).MatchString(out) || !offsetRow("1", "5", "5", "0", `-\s+-\s+-`).MatchString(out) {
		t.Errorf("describe after the resets:\n%s", out)
	}

	err = cliErr(t, addr, "", "group", "reset-offsets", "workers", "--topic", "nope", "--to-earliest")
	if !strings.Contains(err.Error(), `topic "nope": UNKNOWN_TOPIC_OR_PARTITION`) {
		t.Errorf("reset on a missing topic: %v", err)
	}

	out = cli(t, addr, "", "group", "delete", "workers")
	if out != "deleted group workers\n" {
		t.Errorf("delete printed %q", out)
	}
	if out := cli(t, addr, "", "group", "list"); strings.Contains(out, "workers") {
		t.Errorf("deleted group still listed:\n%s", out)
	}
	err = cliErr(t, addr, "", "group", "describe", "workers")
	if !strings.Contains(err.Error(), `group "workers": GROUP_ID_NOT_FOUND`) {
		t.Errorf("describe of a deleted group: %v", err)
	}
	err = cliErr(t, addr, "", "group", "delete", "workers")
	if !strings.Contains(err.Error(), `group "workers": GROUP_ID_NOT_FOUND`) {
		t.Errorf("second delete: %v", err)
	}
}

// waitForGroupState polls DescribeGroups until group is in state.
func waitForGroupState(t *testing.T, adm *kadm.Client, group, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		described, err := adm.DescribeGroups(ctx, group)
		cancel()
		if err == nil && described[group].State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s never reached %s (last: %+v, %v)", group, state, described[group], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fetchCommitted renders a group's committed offsets on jobs as "0:3 1:5".
func fetchCommitted(t *testing.T, adm *kadm.Client, group string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	var parts []string
	for _, o := range committed.Sorted() {
		if o.Topic == "jobs" {
			parts = append(parts, fmt.Sprintf("%d:%d", o.Partition, o.At))
		}
	}
	return strings.Join(parts, " ")
}

// commitSync commits offsets as the group member and returns the request's
// error or the first partition's.
func commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) error {
	var result error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			result = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && result == nil {
					result = e
				}
			}
		}
	})
	return result
}
