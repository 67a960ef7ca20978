package main

// strata group: list, describe, reset-offsets and delete consumer groups,
// through kadm (ListGroups, DescribeGroups, FetchOffsets, ListStartOffsets,
// ListEndOffsets, ListOffsetsAfterMilli, CommitOffsets, DeleteGroups). The
// describe table has kafka-consumer-groups' columns; reset-offsets follows
// its rules: the group must be inactive, and nothing changes without
// --execute.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() { rootCmd.AddCommand(newGroupCmd()) }

func newGroupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe, reset and delete consumer groups",
	}
	cmd.AddCommand(
		newGroupListCmd(),
		newGroupDescribeCmd(),
		newGroupResetOffsetsCmd(),
		newGroupDeleteCmd(),
	)
	return cmd
}

// groupError words a per-group Kafka error the way every command prints
// it: `group "x": NON_EMPTY_GROUP: The group is not empty.`, followed by
// the broker's own message when it adds something.
func groupError(group string, err error, brokerMessage string) error {
	if brokerMessage != "" && !strings.Contains(err.Error(), brokerMessage) {
		return fmt.Errorf("group %q: %w (%s)", group, err, brokerMessage)
	}
	return fmt.Errorf("group %q: %w", group, err)
}

func newGroupListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List consumer groups with their state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			groups, err := adm.ListGroups(ctx)
			if err != nil {
				return fmt.Errorf("list groups: %w", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tSTATE\tPROTOCOL-TYPE")
			for _, g := range groups.Sorted() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Group, dashIfEmpty(g.State), dashIfEmpty(g.ProtocolType))
			}
			return tw.Flush()
		},
	}
}

func newGroupDescribeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP",
		Short: "Show a group's members and, per partition, committed offset, log end offset and lag",
		Long: "Show a group's state and, per partition, its committed offset, the log end\n" +
			"offset, the lag and the member consuming it (kafka-consumer-groups --describe\n" +
			"columns), then its members with their assignments.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := describeGroup(ctx, adm, group)
			if err != nil {
				return err
			}
			view := viewOfGroup(described)
			committed, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				return groupError(group, err, "")
			}
			if groupMissing(view, committed) {
				return groupError(group, kerr.GroupIDNotFound, "")
			}
			topics := groupTopics(view, committed)
			var ends kadm.ListedOffsets
			if len(topics) > 0 {
				// Deleted topics come back as errors in ends; the rows say so.
				ends, err = adm.ListEndOffsets(ctx, topics...)
				if err != nil && ends == nil {
					return groupError(group, fmt.Errorf("list end offsets: %w", err), "")
				}
			}
			return writeGroupDescription(cmd.OutOrStdout(), view, groupLagRows(view, committed, ends))
		},
	}
}

// describeGroup describes one group, turning a per-group error into the
// command's error.
func describeGroup(ctx context.Context, adm *kadm.Client, group string) (kadm.DescribedGroup, error) {
	groups, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return kadm.DescribedGroup{}, groupError(group, err, "")
	}
	d, err := groups.On(group, nil)
	if err != nil {
		return kadm.DescribedGroup{}, groupError(group, err, "")
	}
	if d.Err != nil {
		return kadm.DescribedGroup{}, groupError(group, d.Err, d.ErrMessage)
	}
	return d, nil
}

// groupMissing: Kafka describes an unknown group as Dead with no members
// rather than failing; with no committed offset either, there is no group.
func groupMissing(g groupView, committed kadm.OffsetResponses) bool {
	return (g.state == "Dead" || g.state == "") && len(g.members) == 0 && len(committed) == 0
}

// groupTopics is every topic the group has committed on or is assigned.
func groupTopics(g groupView, committed kadm.OffsetResponses) []string {
	set := map[string]struct{}{}
	for t := range committed {
		set[t] = struct{}{}
	}
	for _, m := range g.members {
		for t := range m.assigned {
			set[t] = struct{}{}
		}
	}
	return sortedKeys(set)
}

// groupView is what describe needs of a described group, with each
// member's assignment decoded (kadm keeps it opaque outside its package).
type groupView struct {
	name, state, protocolType, protocol string
	members                             []memberView
}

type memberView struct {
	id, clientID, host string
	assigned           map[string][]int32 // topic → partitions, sorted
}

func viewOfGroup(d kadm.DescribedGroup) groupView {
	v := groupView{name: d.Group, state: d.State, protocolType: d.ProtocolType, protocol: d.Protocol}
	for _, m := range d.Members {
		mv := memberView{id: m.MemberID, clientID: m.ClientID, host: m.ClientHost, assigned: map[string][]int32{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				mv.assigned[t.Topic] = append(mv.assigned[t.Topic], t.Partitions...)
			}
		}
		for _, ps := range mv.assigned {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		}
		v.members = append(v.members, mv)
	}
	return v
}

// partitionCount is how many partitions the member is assigned.
func (m memberView) partitionCount() int {
	n := 0
	for _, ps := range m.assigned {
		n += len(ps)
	}
	return n
}

// assignment writes the member's partitions as kafka-consumer-groups
// --members --verbose does: "jobs(0,1), logs(3)", or "-".
func (m memberView) assignment() string {
	if m.partitionCount() == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m.assigned))
	for _, t := range sortedKeys(m.assigned) {
		if len(m.assigned[t]) > 0 {
			parts = append(parts, t+"("+joinInt32s(m.assigned[t])+")")
		}
	}
	return strings.Join(parts, ", ")
}

// lagRow is one line of the describe table. Unknown values print as "-".
type lagRow struct {
	topic     string // "" for a member without partitions
	partition int32
	current   string // committed offset, "-" or an error name
	logEnd    string
	lag       string
	member    *memberView // nil: no member consumes the partition
}

// groupLagRows joins committed offsets, log end offsets and assignments,
// one row per partition the group committed on or is assigned (by topic and
// partition), then one row per member without partitions, as
// kafka-consumer-groups does.
func groupLagRows(g groupView, committed kadm.OffsetResponses, ends kadm.ListedOffsets) []lagRow {
	type tp struct {
		topic     string
		partition int32
	}
	owners := map[tp]*memberView{}
	var idle []*memberView
	for i := range g.members {
		m := &g.members[i]
		for t, ps := range m.assigned {
			for _, p := range ps {
				owners[tp{t, p}] = m
			}
		}
		if m.partitionCount() == 0 {
			idle = append(idle, m)
		}
	}
	seen := map[tp]struct{}{}
	for t, ps := range committed {
		for p := range ps {
			seen[tp{t, p}] = struct{}{}
		}
	}
	for k := range owners {
		seen[k] = struct{}{}
	}
	keys := make([]tp, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].topic < keys[j].topic || keys[i].topic == keys[j].topic && keys[i].partition < keys[j].partition
	})

	rows := make([]lagRow, 0, len(keys)+len(idle))
	for _, k := range keys {
		row := lagRow{topic: k.topic, partition: k.partition, current: "-", logEnd: "-", lag: "-", member: owners[k]}
		current, end := int64(-1), int64(-1)
		if o, ok := committed.Lookup(k.topic, k.partition); ok {
			switch {
			case o.Err != nil:
				row.current = errorName(o.Err)
			case o.At >= 0:
				current = o.At
				row.current = strconv.FormatInt(current, 10)
			}
		}
		if o, ok := ends.Lookup(k.topic, k.partition); ok {
			if o.Err != nil {
				row.logEnd = errorName(o.Err)
			} else {
				end = o.Offset
				row.logEnd = strconv.FormatInt(end, 10)
			}
		} else if o, ok := ends.Lookup(k.topic, -1); ok && o.Err != nil {
			row.logEnd = errorName(o.Err) // the topic is gone
		}
		if current >= 0 && end >= 0 {
			row.lag = strconv.FormatInt(max(end-current, 0), 10)
		}
		rows = append(rows, row)
	}
	for _, m := range idle {
		rows = append(rows, lagRow{current: "-", logEnd: "-", lag: "-", member: m})
	}
	return rows
}

// writeGroupDescription renders `group describe`:
//
//	Group: workers  State: Stable  Protocol: consumer/range  Members: 1
//
//	GROUP    TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST        CLIENT-ID
//	workers  jobs   0          40              42              2    kgo-1a2b…    /127.0.0.1  kgo
//
//	MEMBERS
//	CONSUMER-ID  HOST        CLIENT-ID  #PARTITIONS  ASSIGNMENT
//	kgo-1a2b…    /127.0.0.1  kgo        1            jobs(0)
func writeGroupDescription(w io.Writer, g groupView, rows []lagRow) error {
	protocol := dashIfEmpty(g.protocolType)
	if g.protocol != "" {
		protocol += "/" + g.protocol
	}
	fmt.Fprintf(w, "Group: %s  State: %s  Protocol: %s  Members: %d\n", g.name, dashIfEmpty(g.state), protocol, len(g.members))
	if len(g.members) == 0 {
		fmt.Fprintf(w, "Consumer group '%s' has no active members.\n", g.name)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
	for _, r := range rows {
		topic, partition := "-", "-"
		if r.topic != "" {
			topic, partition = r.topic, strconv.Itoa(int(r.partition))
		}
		member, host, client := "-", "-", "-"
		if r.member != nil {
			member, host, client = r.member.id, dashIfEmpty(r.member.host), dashIfEmpty(r.member.clientID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			g.name, topic, partition, r.current, r.logEnd, r.lag, member, host, client)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.members) == 0 {
		return nil
	}

	fmt.Fprintln(w, "\nMEMBERS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONSUMER-ID\tHOST\tCLIENT-ID\t#PARTITIONS\tASSIGNMENT")
	for _, m := range g.members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.id, dashIfEmpty(m.host), dashIfEmpty(m.clientID), m.partitionCount(), m.assignment())
	}
	return tw.Flush()
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// resetTarget is where reset-offsets moves a group's offsets.
type resetTarget struct {
	kind   resetKind
	offset int64     // --to-offset
	at     time.Time // --to-datetime
}

type resetKind int

const (
	resetToEarliest resetKind = iota + 1
	resetToLatest
	resetToOffset
	resetToDatetime
)

// resetFlags are reset-offsets' flags as parsed by cobra.
type resetFlags struct {
	topics                   []string
	allTopics                bool
	toEarliest, toLatest     bool
	toOffset                 int64
	toDatetime               string
	dryRun, execute          bool
	toOffsetSet, datetimeSet bool
}

// target checks that exactly one --to-* flag was given and parses it.
func (f resetFlags) target() (resetTarget, error) {
	var chosen []string
	var t resetTarget
	if f.toEarliest {
		chosen, t = append(chosen, "--to-earliest"), resetTarget{kind: resetToEarliest}
	}
	if f.toLatest {
		chosen, t = append(chosen, "--to-latest"), resetTarget{kind: resetToLatest}
	}
	if f.toOffsetSet {
		if f.toOffset < 0 {
			return resetTarget{}, fmt.Errorf("--to-offset %d: offsets are not negative", f.toOffset)
		}
		chosen, t = append(chosen, "--to-offset"), resetTarget{kind: resetToOffset, offset: f.toOffset}
	}
	if f.datetimeSet {
		at, err := parseResetDatetime(f.toDatetime)
		if err != nil {
			return resetTarget{}, err
		}
		chosen, t = append(chosen, "--to-datetime"), resetTarget{kind: resetToDatetime, at: at}
	}
	switch len(chosen) {
	case 0:
		return resetTarget{}, errors.New("say where to: one of --to-earliest, --to-latest, --to-offset N, --to-datetime T")
	case 1:
		return t, nil
	default:
		return resetTarget{}, fmt.Errorf("give only one of %s", strings.Join(chosen, ", "))
	}
}

// resetDatetimeLayouts are what --to-datetime accepts: RFC 3339 (with a
// zone) and Kafka's YYYY-MM-DDTHH:mm:SS[.sss] without one, read as local time.
var resetDatetimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999"}

func parseResetDatetime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range resetDatetimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--to-datetime %q: want a time like 2026-01-02T15:04:05Z (RFC 3339), or without a zone for local time", s)
}

// topicSpec is one --topic argument: a topic and optionally partitions
// (Kafka's "topic:0,1,2"); no partitions means all of them.
type topicSpec struct {
	topic      string
	partitions []int32
}

func parseTopicSpec(s string) (topicSpec, error) {
	topic, list, hasList := strings.Cut(strings.TrimSpace(s), ":")
	if topic == "" {
		return topicSpec{}, fmt.Errorf("--topic %q: no topic name", s)
	}
	spec := topicSpec{topic: topic}
	if !hasList {
		return spec, nil
	}
	for _, p := range strings.Split(list, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return topicSpec{}, fmt.Errorf("--topic %q: want topic or topic:0,1,2", s)
		}
		spec.partitions = append(spec.partitions, int32(n))
	}
	return spec, nil
}

// resetRow is one partition of a reset plan.
type resetRow struct {
	topic     string
	partition int32
	offset    int64
	note      string // why the offset differs from what was asked, if it does
}

// planReset computes the new offset of every partition from the listed
// offsets: starts and ends always, byTime for --to-datetime. An offset
// asked with --to-offset outside [start, end] is clamped, as Kafka does.
func planReset(target resetTarget, partitions map[string][]int32, starts, ends, byTime kadm.ListedOffsets) ([]resetRow, error) {
	var rows []resetRow
	for _, topic := range sortedKeys(partitions) {
		ps := append([]int32(nil), partitions[topic]...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			start, err := listedAt(starts, topic, p)
			if err != nil {
				return nil, err
			}
			end, err := listedAt(ends, topic, p)
			if err != nil {
				return nil, err
			}
			row := resetRow{topic: topic, partition: p}
			switch target.kind {
			case resetToEarliest:
				row.offset = start
			case resetToLatest:
				row.offset = end
			case resetToOffset:
				row.offset = min(max(target.offset, start), end)
				if row.offset != target.offset {
					row.note = fmt.Sprintf("offset %d is outside [%d, %d]", target.offset, start, end)
				}
			case resetToDatetime:
				at, err := listedAt(byTime, topic, p)
				if err != nil {
					return nil, err
				}
				row.offset = min(max(at, start), end)
			default:
				return nil, errors.New("no reset target")
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// listedAt is a listed offset or the error naming the partition.
func listedAt(l kadm.ListedOffsets, topic string, partition int32) (int64, error) {
	if o, ok := l.Lookup(topic, partition); ok {
		if o.Err != nil {
			return 0, fmt.Errorf("topic %q partition %d: %w", topic, partition, o.Err)
		}
		return o.Offset, nil
	}
	if o, ok := l.Lookup(topic, -1); ok && o.Err != nil {
		return 0, topicError(topic, o.Err, "")
	}
	return 0, fmt.Errorf("topic %q partition %d: %w", topic, partition, kerr.UnknownTopicOrPartition)
}

// writeResetPlan prints the plan with kafka-consumer-groups' columns.
func writeResetPlan(w io.Writer, group string, rows []resetRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", group, r.topic, r.partition, r.offset)
	}
	return tw.Flush()
}

// groupIsInactive is Kafka's rule for resetting offsets: only a group with
// no members (Empty, or Dead: not existing yet) may be reset.
func groupIsInactive(g groupView) bool {
	return len(g.members) == 0 && (g.state == "Empty" || g.state == "Dead" || g.state == "")
}

func newGroupResetOffsetsCmd() *cobra.Command {
	var f resetFlags
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP (--topic T[:P,…]… | --all-topics) (--to-earliest | --to-latest | --to-offset N | --to-datetime T) [--execute]",
		Short: "Move an inactive group's committed offsets (a dry run unless --execute)",
		Long: "Move a consumer group's committed offsets, as kafka-consumer-groups --reset-offsets\n" +
			"does. The group must have no active members. Without --execute the plan is only\n" +
			"printed. --to-offset outside a partition's [log start, log end] is clamped;\n" +
			"--to-datetime picks the first record at or after the time (the log end if none).",
		Example: `  strata group reset-offsets billing --topic invoices --to-earliest --execute
  strata group reset-offsets billing --topic invoices:0,1 --to-offset 1000
  strata group reset-offsets billing --all-topics --to-datetime 2026-01-02T15:04:05Z --execute`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			f.toOffsetSet = cmd.Flags().Changed("to-offset")
			f.datetimeSet = cmd.Flags().Changed("to-datetime")
			target, err := f.target()
			if err != nil {
				return err
			}
			if f.dryRun && f.execute {
				return errors.New("--dry-run and --execute contradict each other")
			}
			if len(f.topics) == 0 && !f.allTopics {
				return errors.New("say which offsets: --topic T (repeatable, T:0,1 for some partitions) or --all-topics")
			}
			if len(f.topics) > 0 && f.allTopics {
				return errors.New("give --topic or --all-topics, not both")
			}
			specs := make([]topicSpec, 0, len(f.topics))
			for _, s := range f.topics {
				spec, err := parseTopicSpec(s)
				if err != nil {
					return err
				}
				specs = append(specs, spec)
			}

			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := describeGroup(ctx, adm, group)
			if err != nil {
				return err
			}
			if view := viewOfGroup(described); !groupIsInactive(view) {
				return fmt.Errorf("group %q: offsets can only be reset while the group is inactive, but it is %s with %d member(s); stop its consumers first",
					group, view.state, len(view.members))
			}
			partitions, err := resetPartitions(ctx, adm, group, specs, f.allTopics)
			if err != nil {
				return err
			}
			topics := sortedKeys(partitions)
			starts, err := adm.ListStartOffsets(ctx, topics...)
			if err != nil && starts == nil {
				return groupError(group, fmt.Errorf("list start offsets: %w", err), "")
			}
			ends, err := adm.ListEndOffsets(ctx, topics...)
			if err != nil && ends == nil {
				return groupError(group, fmt.Errorf("list end offsets: %w", err), "")
			}
			var byTime kadm.ListedOffsets
			if target.kind == resetToDatetime {
				byTime, err = adm.ListOffsetsAfterMilli(ctx, target.at.UnixMilli(), topics...)
				if err != nil && byTime == nil {
					return groupError(group, fmt.Errorf("list offsets by time: %w", err), "")
				}
			}
			plan, err := planReset(target, partitions, starts, ends, byTime)
			if err != nil {
				return err
			}
			for _, r := range plan {
				if r.note != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s/%d: %s; using %d\n", r.topic, r.partition, r.note, r.offset)
				}
			}
			if !f.execute {
				if !f.dryRun {
					fmt.Fprintln(cmd.ErrOrStderr(), "dry run: no offsets changed; add --execute to apply this plan")
				}
				return writeResetPlan(cmd.OutOrStdout(), group, plan)
			}

			offsets := make(kadm.Offsets)
			for _, r := range plan {
				offsets.Add(kadm.Offset{Topic: r.topic, Partition: r.partition, At: r.offset, LeaderEpoch: -1})
			}
			resps, err := adm.CommitOffsets(ctx, group, offsets)
			if err != nil {
				return groupError(group, fmt.Errorf("commit offsets: %w", err), "")
			}
			for _, r := range resps.Sorted() {
				if r.Err != nil {
					return groupError(group, fmt.Errorf("commit %s/%d: %w", r.Topic, r.Partition, r.Err), "")
				}
			}
			return writeResetPlan(cmd.OutOrStdout(), group, plan)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.topics, "topic", nil, "topic to reset, all partitions or topic:0,1,2 (repeatable)")
	fl.BoolVar(&f.allTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	fl.BoolVar(&f.toEarliest, "to-earliest", false, "reset to the log start offset")
	fl.BoolVar(&f.toLatest, "to-latest", false, "reset to the log end offset")
	fl.Int64Var(&f.toOffset, "to-offset", 0, "reset to this offset (clamped to the partition's range)")
	fl.StringVar(&f.toDatetime, "to-datetime", "", "reset to the first record at or after this time (2026-01-02T15:04:05Z)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "only print the plan (the default without --execute)")
	fl.BoolVar(&f.execute, "execute", false, "apply the plan")
	return cmd
}

// resetPartitions resolves the partitions to reset: each --topic's listed
// partitions or all of them, or with --all-topics every partition the group
// has a committed offset on.
func resetPartitions(ctx context.Context, adm *kadm.Client, group string, specs []topicSpec, allTopics bool) (map[string][]int32, error) {
	out := map[string][]int32{}
	if allTopics {
		committed, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return nil, groupError(group, err, "")
		}
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil {
				out[o.Topic] = append(out[o.Topic], o.Partition)
			}
		})
		if len(out) == 0 {
			return nil, fmt.Errorf("group %q has no committed offsets; name topics with --topic", group)
		}
		return out, nil
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.topic)
	}
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	for _, s := range specs {
		d, ok := details[s.topic]
		if !ok {
			return nil, topicError(s.topic, kerr.UnknownTopicOrPartition, "")
		}
		if d.Err != nil {
			return nil, topicError(s.topic, d.Err, "")
		}
		if len(s.partitions) == 0 {
			for p := range d.Partitions {
				out[s.topic] = append(out[s.topic], p)
			}
			continue
		}
		for _, p := range s.partitions {
			if _, ok := d.Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %q has no partition %d (it has %d)", s.topic, p, len(d.Partitions))
			}
			out[s.topic] = append(out[s.topic], p)
		}
	}
	return out, nil
}

func newGroupDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete inactive consumer groups and their committed offsets",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			resps, err := adm.DeleteGroups(ctx, args...)
			if err != nil && resps == nil {
				return fmt.Errorf("delete groups: %w", err)
			}
			var failed []error
			for _, group := range args {
				r, ok := resps[group]
				switch {
				case !ok && err != nil:
					failed = append(failed, groupError(group, err, ""))
				case !ok:
					failed = append(failed, groupError(group, errors.New("not in the coordinator's answer"), ""))
				case r.Err != nil:
					failed = append(failed, groupError(group, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "deleted group %s\n", group)
				}
			}
			return joinErrorsOneLine(failed)
		},
	}
}

// joinErrorsOneLine returns nil, the one error, or all of them on one line
// separated by "; " (main prints errors as a single line).
func joinErrorsOneLine(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return fmt.Errorf("%s: %w", strings.Join(msgs, "; "), errs[0])
}
