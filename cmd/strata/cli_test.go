package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
)

// newTestRoot builds a fresh command tree with the client commands, so no
// flag value leaks from one in-process run to the next (cobra keeps parsed
// values in the commands).
func newTestRoot() *cobra.Command {
	root := &cobra.Command{Use: "strata", SilenceUsage: true, SilenceErrors: true}
	addClientFlags(root)
	root.AddCommand(newTopicCmd(), newProduceCmd(), newConsumeCmd(), newPerfCmd(), newGroupCmd(), newShareGroupCmd(), newACLCmd(), newUserCmd(), newQuotaCmd(), newLogDirsCmd(), newProducersCmd(), newLeaderCmd(), newQuorumCmd(), newConfigCmd(), newClusterCmd(), newSchemaCmd())
	return root
}

// cliResult is what one in-process run of the CLI produced.
type cliResult struct {
	stdout, stderr string
	err            error
}

// runCLI runs the CLI in-process with args and stdin, bounded by timeout.
func runCLI(t *testing.T, timeout time.Duration, stdin string, args ...string) cliResult {
	t.Helper()
	root := newTestRoot()
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func TestDeadBrokerFailsFast(t *testing.T) {
	commands := [][]string{
		{"topic", "list"},
		{"topic", "create", "x"},
		{"topic", "describe", "x"},
		{"topic", "delete", "x"},
		{"topic", "alter-config", "x", "-c", "retention.ms=1"},
		{"produce", "x"},
		{"consume", "x", "-n", "1"},
		{"perf", "produce", "--topic", "x", "--num-records", "1", "--record-size", "1", "--throughput", "-1"},
		{"perf", "consume", "--topic", "x", "--messages", "1"},
	}
	for _, args := range commands {
		t.Run(strings.Join(args[:2], "-"), func(t *testing.T) {
			start := time.Now()
			res := runCLI(t, 20*time.Second, "line\n", append([]string{"-b", "127.0.0.1:1", "--timeout", "5s"}, args...)...)
			if res.err == nil {
				t.Fatalf("no error against a dead broker; stdout %q", res.stdout)
			}
			if !strings.Contains(res.err.Error(), "cannot reach brokers 127.0.0.1:1") {
				t.Errorf("error %q does not say the brokers are unreachable", res.err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s to fail", took)
			}
		})
	}
}

func TestBrokersFromEnvironment(t *testing.T) {
	t.Setenv(brokersEnv, "10.1.2.3:9092, 10.1.2.4:9092")
	root := newTestRoot()
	got := root.PersistentFlags().Lookup("brokers").DefValue
	if got != "10.1.2.3:9092, 10.1.2.4:9092" {
		t.Fatalf("brokers default = %q, want the environment's", got)
	}
	if seeds := seedBrokers(got); len(seeds) != 2 || seeds[1] != "10.1.2.4:9092" {
		t.Fatalf("seedBrokers = %q", seeds)
	}
	t.Setenv(brokersEnv, "")
	if d := brokersDefault(); d != defaultBrokers {
		t.Fatalf("brokersDefault without env = %q", d)
	}
}

func TestPerfConsumeKeepsKafkaTimeoutFlag(t *testing.T) {
	// perf consume's --timeout is Kafka's milliseconds; the shared
	// --timeout bound falls back to the default there.
	root := newTestRoot()
	cmd, _, err := root.Find([]string{"perf", "consume"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg  string
		want int64
	}{{"2500", 2500}, {"3s", 3000}, {"1m", 60_000}} {
		if err := cmd.ParseFlags([]string{"--timeout", tc.arg}); err != nil {
			t.Fatalf("parse --timeout %s: %v", tc.arg, err)
		}
		if got := cmd.Flags().Lookup("timeout").Value.String(); got != strconv.FormatInt(tc.want, 10) {
			t.Errorf("--timeout %s = %s ms, want %d", tc.arg, got, tc.want)
		}
		if got := connSettingsOf(cmd).timeout; got != defaultRequestTimeout {
			t.Fatalf("request timeout = %s, want the default", got)
		}
	}
	if err := cmd.ParseFlags([]string{"--timeout", "soon"}); err == nil {
		t.Error("--timeout soon accepted")
	}
	other, _, _ := root.Find([]string{"topic", "list"})
	if err := other.ParseFlags([]string{"--timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	if got := connSettingsOf(other).timeout; got != 3*time.Second {
		t.Fatalf("topic list timeout = %s, want 3s", got)
	}
}

func TestParseKeyValues(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{in: nil, want: map[string]string{}},
		{in: []string{"a=1", "b="}, want: map[string]string{"a": "1", "b": ""}},
		{in: []string{"url=http://x/?q=1"}, want: map[string]string{"url": "http://x/?q=1"}},
		{in: []string{"a=1", "a=2"}, want: map[string]string{"a": "2"}},
		{in: []string{"novalue"}, wantErr: true},
		{in: []string{"=v"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseKeyValues(tt.in, "config")
		if (err != nil) != tt.wantErr {
			t.Errorf("parseKeyValues(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("parseKeyValues(%q) = %v, want %v", tt.in, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("parseKeyValues(%q)[%q] = %q, want %q", tt.in, k, got[k], v)
			}
		}
	}
}

func TestTopicErrorNamesKafkaError(t *testing.T) {
	err := topicError("orders", kerr.TopicAlreadyExists, "")
	want := `topic "orders": TOPIC_ALREADY_EXISTS: Topic with this name already exists.`
	if err.Error() != want {
		t.Errorf("topicError = %q, want %q", err, want)
	}
	if !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Error("topicError does not wrap the Kafka error")
	}
	err = topicError("orders", kerr.InvalidConfig, "retention.ms must be a number")
	if !strings.HasSuffix(err.Error(), "(retention.ms must be a number)") {
		t.Errorf("broker message missing: %q", err)
	}
	if got := errorName(kerr.NotLeaderForPartition); got != "NOT_LEADER_FOR_PARTITION" {
		t.Errorf("errorName = %q", got)
	}
}

func TestBuildAlterConfigs(t *testing.T) {
	alters, err := buildAlterConfigs([]string{"segment.ms=10", "retention.ms=5"}, []string{"cleanup.policy"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range alters {
		v := "<nil>"
		if a.Value != nil {
			v = *a.Value
		}
		got = append(got, a.Name+"="+v)
	}
	want := "retention.ms=5 segment.ms=10 cleanup.policy=<nil>"
	if strings.Join(got, " ") != want {
		t.Errorf("alters = %q, want %q", got, want)
	}
	for _, tc := range []struct{ sets, deletes []string }{
		{nil, nil},
		{[]string{"a=1"}, []string{"a"}},
		{[]string{"bad"}, nil},
		{nil, []string{" "}},
	} {
		if _, err := buildAlterConfigs(tc.sets, tc.deletes); err == nil {
			t.Errorf("buildAlterConfigs(%q, %q): no error", tc.sets, tc.deletes)
		}
	}
}
