package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// committedOffsets builds an OffsetFetch answer: topic → partition → offset.
func committedOffsets(m map[string]map[int32]int64) kadm.OffsetResponses {
	out := kadm.OffsetResponses{}
	for t, ps := range m {
		for p, at := range ps {
			out.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: t, Partition: p, At: at, LeaderEpoch: -1}})
		}
	}
	return out
}

// listed builds a ListOffsets answer: topic → partition → offset.
func listed(m map[string]map[int32]int64) kadm.ListedOffsets {
	out := kadm.ListedOffsets{}
	for t, ps := range m {
		out[t] = map[int32]kadm.ListedOffset{}
		for p, at := range ps {
			out[t][p] = kadm.ListedOffset{Topic: t, Partition: p, Offset: at}
		}
	}
	return out
}

func TestGroupDescribeTable(t *testing.T) {
	g := groupView{
		name: "workers", state: "Stable", protocolType: "consumer", protocol: "range",
		members: []memberView{
			{id: "kgo-a", clientID: "app", host: "/10.0.0.1", assigned: map[string][]int32{"jobs": {1, 0}}},
			{id: "kgo-b", clientID: "app", host: "/10.0.0.2", assigned: map[string][]int32{"logs": {0}}},
			{id: "kgo-c", clientID: "idle", host: "/10.0.0.3", assigned: map[string][]int32{}},
		},
	}
	for _, m := range g.members {
		for _, ps := range m.assigned {
			slices.Sort(ps) // as viewOfGroup leaves them
		}
	}
	committed := committedOffsets(map[string]map[int32]int64{"jobs": {0: 40, 1: 7}, "old": {0: 3}})
	committed.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: "logs", Partition: 1}, Err: kerr.UnstableOffsetCommit})
	ends := listed(map[string]map[int32]int64{"jobs": {0: 42, 1: 7}, "logs": {0: 5, 1: 9}})
	ends["old"] = map[int32]kadm.ListedOffset{-1: {Topic: "old", Partition: -1, Err: kerr.UnknownTopicOrPartition}}

	var out strings.Builder
	if err := writeGroupDescription(&out, g, groupLagRows(g, committed, ends)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := []string{
		`^Group: workers  State: Stable  Protocol: consumer/range  Members: 3$`,
		`^GROUP\s+TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+CONSUMER-ID\s+HOST\s+CLIENT-ID$`,
		`^workers\s+jobs\s+0\s+40\s+42\s+2\s+kgo-a\s+/10\.0\.0\.1\s+app$`,
		`^workers\s+jobs\s+1\s+7\s+7\s+0\s+kgo-a\s+/10\.0\.0\.1\s+app$`,
		`^workers\s+logs\s+0\s+-\s+5\s+-\s+kgo-b\s+/10\.0\.0\.2\s+app$`,
		`^workers\s+logs\s+1\s+UNSTABLE_OFFSET_COMMIT\s+9\s+-\s+-\s+-\s+-$`,
		`^workers\s+old\s+0\s+3\s+UNKNOWN_TOPIC_OR_PARTITION\s+-\s+-\s+-\s+-$`,
		`^workers\s+-\s+-\s+-\s+-\s+-\s+kgo-c\s+/10\.0\.0\.3\s+idle$`,
		`^MEMBERS$`,
		`^CONSUMER-ID\s+HOST\s+CLIENT-ID\s+#PARTITIONS\s+ASSIGNMENT$`,
		`^kgo-a\s+/10\.0\.0\.1\s+app\s+2\s+jobs\(0,1\)$`,
		`^kgo-c\s+/10\.0\.0\.3\s+idle\s+0\s+-$`,
	}
	for _, w := range want {
		if !regexp.MustCompile(`(?m)` + w).MatchString(text) {
			t.Errorf("output lacks %s:\n%s", w, text)
		}
	}
	// Rows are ordered by topic and partition, idle members last.
	order := []string{"jobs  ", "logs  ", "old  ", "kgo-c"}
	last := -1
	for _, s := range order {
		i := strings.Index(text, "workers  "+s)
		if s == "kgo-c" {
			i = strings.Index(text, "kgo-c")
		}
		if i < last {
			t.Errorf("%q out of order:\n%s", s, text)
		}
		last = i
	}
}

func TestGroupDescribeEmptyGroup(t *testing.T) {
	g := groupView{name: "idle", state: "Empty", protocolType: "consumer"}
	committed := committedOffsets(map[string]map[int32]int64{"jobs": {0: 10}})
	ends := listed(map[string]map[int32]int64{"jobs": {0: 15}})
	var out strings.Builder
	if err := writeGroupDescription(&out, g, groupLagRows(g, committed, ends)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "Consumer group 'idle' has no active members.") || strings.Contains(text, "MEMBERS") {
		t.Errorf("empty group output:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^idle\s+jobs\s+0\s+10\s+15\s+5\s+-\s+-\s+-$`).MatchString(text) {
		t.Errorf("row missing:\n%s", text)
	}
	if !groupIsInactive(g) || groupIsInactive(groupView{state: "Stable", members: []memberView{{id: "x"}}}) {
		t.Error("groupIsInactive")
	}
	if groupMissing(g, committed) || !groupMissing(groupView{state: "Dead"}, nil) {
		t.Error("groupMissing")
	}
	if got := groupTopics(groupView{members: []memberView{{assigned: map[string][]int32{"b": {0}}}}}, committed); strings.Join(got, ",") != "b,jobs" {
		t.Errorf("groupTopics = %v", got)
	}
}

func TestResetTarget(t *testing.T) {
	cases := []struct {
		name  string
		flags resetFlags
		want  resetTarget
		err   string
	}{
		{"earliest", resetFlags{toEarliest: true}, resetTarget{kind: resetToEarliest}, ""},
		{"latest", resetFlags{toLatest: true}, resetTarget{kind: resetToLatest}, ""},
		{"offset", resetFlags{toOffsetSet: true, toOffset: 12}, resetTarget{kind: resetToOffset, offset: 12}, ""},
		{"offset zero", resetFlags{toOffsetSet: true}, resetTarget{kind: resetToOffset}, ""},
		{"datetime", resetFlags{datetimeSet: true, toDatetime: "2026-01-02T15:04:05Z"},
			resetTarget{kind: resetToDatetime, at: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)}, ""},
		{"none", resetFlags{}, resetTarget{}, "one of --to-earliest"},
		{"two", resetFlags{toEarliest: true, toLatest: true}, resetTarget{}, "only one of --to-earliest, --to-latest"},
		{"negative offset", resetFlags{toOffsetSet: true, toOffset: -2}, resetTarget{}, "not negative"},
		{"bad datetime", resetFlags{datetimeSet: true, toDatetime: "yesterday"}, resetTarget{}, "--to-datetime \"yesterday\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.flags.target()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.kind != tc.want.kind || got.offset != tc.want.offset || !got.at.Equal(tc.want.at) {
				t.Errorf("target = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseResetDatetime(t *testing.T) {
	utc := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-01-02T15:04:05Z":       utc,
		"2026-01-02T15:04:05.250Z":   utc.Add(250 * time.Millisecond),
		"2026-01-02T17:04:05+02:00":  utc,
		"2026-01-02T17:04:05+0200":   utc,
		"2026-01-02T15:04:05.000":    time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local),
		" 2026-01-02T15:04:05.5Z  ":  utc.Add(500 * time.Millisecond),
		"2026-01-02T15:04:05":        time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local),
		"2026-01-02T15:04:05.000Z":   utc,
		"2026-01-02T15:04:05-00:00":  utc,
		"2026-01-02T10:04:05.0-0500": utc,
	} {
		got, err := parseResetDatetime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseResetDatetime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "2026-01-02", "15:04:05", "2026-13-02T15:04:05Z"} {
		if _, err := parseResetDatetime(bad); err == nil {
			t.Errorf("parseResetDatetime(%q) accepted", bad)
		}
	}
}

func TestParseTopicSpec(t *testing.T) {
	spec, err := parseTopicSpec("jobs:2,0, 1")
	if err != nil || spec.topic != "jobs" || len(spec.partitions) != 3 || spec.partitions[0] != 2 {
		t.Errorf("spec = %+v, %v", spec, err)
	}
	spec, err = parseTopicSpec("jobs")
	if err != nil || spec.topic != "jobs" || spec.partitions != nil {
		t.Errorf("spec = %+v, %v", spec, err)
	}
	for _, bad := range []string{"", ":1", "jobs:", "jobs:x", "jobs:-1"} {
		if _, err := parseTopicSpec(bad); err == nil {
			t.Errorf("parseTopicSpec(%q) accepted", bad)
		}
	}
}

func TestPlanReset(t *testing.T) {
	partitions := map[string][]int32{"b": {1, 0}, "a": {0}}
	starts := listed(map[string]map[int32]int64{"a": {0: 5}, "b": {0: 0, 1: 10}})
	ends := listed(map[string]map[int32]int64{"a": {0: 50}, "b": {0: 20, 1: 30}})
	byTime := listed(map[string]map[int32]int64{"a": {0: 7}, "b": {0: 20, 1: 12}})

	plan := func(target resetTarget) string {
		t.Helper()
		rows, err := planReset(target, partitions, starts, ends, byTime)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, r := range rows {
			s := fmt.Sprintf("%s/%d=%d", r.topic, r.partition, r.offset)
			if r.note != "" {
				s += "!"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct {
		target resetTarget
		want   string
	}{
		{resetTarget{kind: resetToEarliest}, "a/0=5 b/0=0 b/1=10"},
		{resetTarget{kind: resetToLatest}, "a/0=50 b/0=20 b/1=30"},
		{resetTarget{kind: resetToOffset, offset: 15}, "a/0=15 b/0=15 b/1=15"},
		{resetTarget{kind: resetToOffset, offset: 3}, "a/0=5! b/0=3 b/1=10!"},
		{resetTarget{kind: resetToOffset, offset: 40}, "a/0=40 b/0=20! b/1=30!"},
		{resetTarget{kind: resetToDatetime}, "a/0=7 b/0=20 b/1=12"},
	} {
		if got := plan(tc.target); got != tc.want {
			t.Errorf("plan(%+v) = %q, want %q", tc.target, got, tc.want)
		}
	}

	ends["gone"] = map[int32]kadm.ListedOffset{-1: {Topic: "gone", Partition: -1, Err: kerr.UnknownTopicOrPartition}}
	starts["gone"] = ends["gone"]
	_, err := planReset(resetTarget{kind: resetToLatest}, map[string][]int32{"gone": {0}}, starts, ends, nil)
	if err == nil || !strings.Contains(err.Error(), `topic "gone": UNKNOWN_TOPIC_OR_PARTITION`) || !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("gone topic: %v", err)
	}
	_, err = planReset(resetTarget{kind: resetToLatest}, map[string][]int32{"a": {9}}, starts, ends, nil)
	if err == nil || !strings.Contains(err.Error(), `topic "a" partition 9: UNKNOWN_TOPIC_OR_PARTITION`) {
		t.Errorf("missing partition: %v", err)
	}

	var out strings.Builder
	if err := writeResetPlan(&out, "g", []resetRow{{topic: "a", partition: 0, offset: 5}}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^GROUP\s+TOPIC\s+PARTITION\s+NEW-OFFSET\ng\s+a\s+0\s+5\n$`).MatchString(out.String()) {
		t.Errorf("plan output %q", out.String())
	}
}

func TestGroupErrorNamesKafkaError(t *testing.T) {
	err := groupError("workers", kerr.NonEmptyGroup, "")
	if err.Error() != `group "workers": NON_EMPTY_GROUP: The group is not empty.` || !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("groupError = %q", err)
	}
	err = groupError("workers", kerr.NonEmptyGroup, "3 members")
	if !strings.HasSuffix(err.Error(), "(3 members)") {
		t.Errorf("broker message missing: %q", err)
	}
	joined := joinErrorsOneLine([]error{groupError("a", kerr.GroupIDNotFound, ""), groupError("b", kerr.NonEmptyGroup, "")})
	if strings.Contains(joined.Error(), "\n") || !strings.Contains(joined.Error(), `group "a": GROUP_ID_NOT_FOUND`) ||
		!strings.Contains(joined.Error(), `; group "b": NON_EMPTY_GROUP`) || !errors.Is(joined, kerr.GroupIDNotFound) {
		t.Errorf("joined = %q", joined)
	}
	if joinErrorsOneLine(nil) != nil {
		t.Error("no errors gave an error")
	}
}

// TestGroupFlagErrors checks the reset-offsets checks that need no broker:
// they fail before connecting (the broker address is unreachable).
func TestGroupFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"group", "reset-offsets", "g", "--topic", "t"}, "one of --to-earliest"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--to-latest"}, "only one of"},
		{[]string{"group", "reset-offsets", "g", "--to-earliest"}, "--topic T"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--all-topics", "--to-earliest"}, "not both"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--dry-run", "--execute"}, "contradict"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t:x", "--to-earliest"}, "topic:0,1,2"},
		{[]string{"group", "describe"}, "accepts 1 arg"},
		{[]string{"group", "delete"}, "requires at least 1 arg"},
	} {
		res := runCLI(t, 10*time.Second, "", append([]string{"-b", "127.0.0.1:1", "--timeout", "1s"}, tc.args...)...)
		if res.err == nil || !strings.Contains(res.err.Error(), tc.want) {
			t.Errorf("strata %s: err = %v, want %q", strings.Join(tc.args, " "), res.err, tc.want)
		}
	}
}

func TestGroupCommandsFailFastOnDeadBroker(t *testing.T) {
	for _, args := range [][]string{
		{"group", "list"},
		{"group", "describe", "g"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest"},
		{"group", "delete", "g"},
	} {
		start := time.Now()
		res := runCLI(t, 30*time.Second, "", append([]string{"-b", "127.0.0.1:1", "--timeout", "3s"}, args...)...)
		if res.err == nil || !strings.Contains(res.err.Error(), "cannot reach brokers 127.0.0.1:1") {
			t.Errorf("strata %s: err = %v", strings.Join(args, " "), res.err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("strata %s took %v to fail", strings.Join(args, " "), took)
		}
	}
}
