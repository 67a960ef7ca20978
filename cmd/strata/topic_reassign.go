package main

// strata topic reassign: move partitions between brokers (KIP-455) through
// AlterPartitionReassignments and ListPartitionReassignments, the requests
// kafka-reassign-partitions.sh sends. A change is given either on the
// command line (TOPIC --partition N --replicas 2,3) or as a plan file in
// kafka-reassign-partitions' JSON format; --cancel reverts the named
// partitions, --list shows what is in progress and --wait polls until the
// named partitions are no longer being reassigned.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reassignOptions are the flags of `topic reassign`.
type reassignOptions struct {
	partitions   []int32
	replicas     string
	planFile     string
	cancel       bool
	list         bool
	wait         bool
	waitInterval time.Duration
	waitTimeout  time.Duration
}

// reassignPlan is kafka-reassign-partitions' JSON format:
//
//	{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}
//
// log_dirs is accepted and ignored (every replica goes to the broker's
// data directory).
type reassignPlan struct {
	Version    int                     `json:"version"`
	Partitions []reassignPlanPartition `json:"partitions"`
}

type reassignPlanPartition struct {
	Topic     string   `json:"topic"`
	Partition *int32   `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

// reassignTarget is one partition of a request: replicas nil cancels.
type reassignTarget struct {
	topicPartition
	replicas []int32
}

func newTopicReassignCmd() *cobra.Command {
	var o reassignOptions
	cmd := &cobra.Command{
		Use:   "reassign [TOPIC]",
		Short: "Move partitions to other brokers, cancel or list moves in progress",
		Long: "Move partitions to other brokers (KIP-455). The new replicas copy the data\n" +
			"(for tiered topics only the local tail; older data stays in the object store),\n" +
			"join the in-sync replicas, and then the replicas that are no longer listed\n" +
			"are dropped. The first replica listed becomes the preferred leader.\n\n" +
			"The change is TOPIC --partition N --replicas IDS, or a plan file in\n" +
			"kafka-reassign-partitions' JSON format:\n" +
			`  {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}` + "\n\n" +
			"--cancel reverts the named partitions to their replicas before the move;\n" +
			"--list shows the moves in progress (all, or TOPIC's); --wait polls until\n" +
			"the named partitions are no longer being moved, printing progress.",
		Example: `  strata topic reassign orders --partition 0 --replicas 2,3 --wait
  strata topic reassign --plan reassignment.json --wait
  strata topic reassign orders --partition 0 --cancel
  strata topic reassign --list`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := ""
			if len(args) == 1 {
				topic = args[0]
			}
			return runTopicReassign(cmd, topic, o)
		},
	}
	f := cmd.Flags()
	f.Int32SliceVarP(&o.partitions, "partition", "p", nil, "partition(s) of TOPIC (repeatable or comma-separated)")
	f.StringVar(&o.replicas, "replicas", "", "comma-separated broker ids: the partitions' new replicas, preferred leader first")
	f.StringVar(&o.planFile, "plan", "", "reassignment plan file in kafka-reassign-partitions JSON format (- for stdin)")
	f.BoolVar(&o.cancel, "cancel", false, "cancel the reassignments of the named partitions")
	f.BoolVar(&o.list, "list", false, "list the reassignments in progress (all, or TOPIC's)")
	f.BoolVar(&o.wait, "wait", false, "poll until the named partitions are no longer being reassigned")
	f.DurationVar(&o.waitInterval, "wait-interval", time.Second, "how often --wait polls")
	f.DurationVar(&o.waitTimeout, "wait-timeout", 0, "give up --wait after this long (0: wait until interrupted)")
	return cmd
}

// reassignMode checks the flag combination and returns the partitions the
// command names (nil for --list without TOPIC).
func reassignMode(cmd *cobra.Command, topic string, o reassignOptions) ([]reassignTarget, error) {
	partitionsSet := cmd.Flags().Changed("partition")
	switch {
	case o.list && (o.cancel || o.wait || o.replicas != "" || o.planFile != ""):
		return nil, errors.New("--list cannot be combined with --replicas, --plan, --cancel or --wait")
	case o.planFile != "" && (topic != "" || partitionsSet || o.replicas != ""):
		return nil, errors.New("--plan names the partitions itself: give no TOPIC, --partition or --replicas")
	case o.cancel && o.replicas != "":
		return nil, errors.New("--cancel and --replicas are exclusive")
	case o.waitInterval <= 0:
		return nil, errors.New("--wait-interval must be positive")
	case o.waitTimeout < 0:
		return nil, errors.New("--wait-timeout must not be negative")
	}
	for _, p := range o.partitions {
		if p < 0 {
			return nil, fmt.Errorf("--partition %d: partitions are numbered from 0", p)
		}
	}
	if o.planFile != "" {
		return readReassignPlan(cmd.InOrStdin(), o.planFile, o.cancel)
	}
	if o.list {
		if partitionsSet && topic == "" {
			return nil, errors.New("--partition needs TOPIC")
		}
		var out []reassignTarget
		for _, p := range o.partitions {
			out = append(out, reassignTarget{topicPartition: topicPartition{topic, p}})
		}
		return out, nil
	}
	if topic == "" {
		return nil, errors.New("name a TOPIC with --partition, or give --plan FILE (or --list)")
	}
	if !partitionsSet || len(o.partitions) == 0 {
		return nil, fmt.Errorf("topic %q: --partition is required", topic)
	}
	if !o.cancel && !o.wait && o.replicas == "" {
		return nil, errors.New("give --replicas IDS, --cancel or --wait")
	}
	var replicas []int32
	if o.replicas != "" {
		var err error
		if replicas, err = parseBrokerIDs(o.replicas); err != nil {
			return nil, err
		}
	}
	var out []reassignTarget
	for _, p := range dedupe(o.partitions) {
		out = append(out, reassignTarget{topicPartition: topicPartition{topic, p}, replicas: replicas})
	}
	return out, nil
}

func dedupe(ids []int32) []int32 {
	var out []int32
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// parseBrokerIDs parses "2,3" into broker ids.
func parseBrokerIDs(s string) ([]int32, error) {
	var out []int32
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		id, err := strconv.ParseInt(field, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("--replicas %q: %q is not a broker id", s, field)
		}
		out = append(out, int32(id))
	}
	return out, nil
}

// readReassignPlan reads and checks a plan file ("-" is stdin). With
// cancel, the plan's replicas are ignored: its partitions are cancelled.
func readReassignPlan(stdin io.Reader, path string, cancel bool) ([]reassignTarget, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var plan reassignPlan
	if err := dec.Decode(&plan); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("plan %s: trailing data after the JSON object", path)
	}
	if plan.Version != 1 {
		return nil, fmt.Errorf("plan %s: version %d, want 1", path, plan.Version)
	}
	if len(plan.Partitions) == 0 {
		return nil, fmt.Errorf("plan %s: no partitions", path)
	}
	var out []reassignTarget
	seen := map[topicPartition]bool{}
	for i, p := range plan.Partitions {
		switch {
		case p.Topic == "":
			return nil, fmt.Errorf("plan %s: entry %d has no topic", path, i)
		case p.Partition == nil:
			return nil, fmt.Errorf("plan %s: entry %d (%s) has no partition", path, i, p.Topic)
		case *p.Partition < 0:
			return nil, fmt.Errorf("plan %s: entry %d (%s): partition %d", path, i, p.Topic, *p.Partition)
		case !cancel && len(p.Replicas) == 0:
			return nil, fmt.Errorf("plan %s: %s-%d has no replicas", path, p.Topic, *p.Partition)
		}
		tp := topicPartition{p.Topic, *p.Partition}
		if seen[tp] {
			return nil, fmt.Errorf("plan %s: %s is listed twice", path, tp)
		}
		seen[tp] = true
		t := reassignTarget{topicPartition: tp, replicas: p.Replicas}
		if cancel {
			t.replicas = nil
		}
		out = append(out, t)
	}
	return out, nil
}

func runTopicReassign(cmd *cobra.Command, topic string, o reassignOptions) error {
	targets, err := reassignMode(cmd, topic, o)
	if err != nil {
		return err
	}
	conn := connSettingsOf(cmd)
	cl, err := conn.newClient(cmd)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(min(conn.timeout, time.Hour) / time.Millisecond))
	out := cmd.OutOrStdout()

	if o.list {
		ctx, cancel := conn.requestContext(cmd)
		defer cancel()
		inProgress, err := listReassignments(ctx, cl)
		if err != nil {
			return err
		}
		return writeReassignments(out, filterReassignments(inProgress, topic, targets))
	}

	submitted := false
	if o.cancel || o.replicas != "" || o.planFile != "" {
		if err := alterReassignments(cmd, conn, adm, targets, o.cancel); err != nil {
			return err
		}
		submitted = true
	}
	if o.wait {
		return waitReassignments(cmd, conn, cl, targets, o, submitted)
	}
	return nil
}

// alterReassignments sends the changes and prints one line per partition;
// failures are gathered into one error line.
func alterReassignments(cmd *cobra.Command, conn connSettings, adm *kadm.Client, targets []reassignTarget, cancelling bool) error {
	var req kadm.AlterPartitionAssignmentsReq
	for _, t := range targets {
		if cancelling {
			req.CancelAssign(t.topic, t.partition)
		} else {
			req.Assign(t.topic, t.partition, t.replicas)
		}
	}
	ctx, cancel := conn.requestContext(cmd)
	defer cancel()
	res, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return fmt.Errorf("alter partition reassignments: %w", err)
	}
	out := cmd.OutOrStdout()
	var failed []string
	for _, t := range targets {
		r, ok := res[t.topic][t.partition]
		switch {
		case !ok:
			failed = append(failed, fmt.Sprintf("%s: no answer from the broker", t))
		case r.Err != nil:
			msg := fmt.Sprintf("%s: %s", t, errorName(r.Err))
			if r.ErrMessage != "" {
				msg += " (" + r.ErrMessage + ")"
			}
			failed = append(failed, msg)
		case cancelling:
			fmt.Fprintf(out, "cancelled the reassignment of %s\n", t)
		default:
			fmt.Fprintf(out, "reassigning %s to replicas %s\n", t, joinInt32s(t.replicas))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d partitions failed: %s", len(failed), len(targets), strings.Join(failed, "; "))
	}
	return nil
}

// listReassignments returns every reassignment in progress (a request
// with null topics, which kadm does not send).
func listReassignments(ctx context.Context, cl *kgo.Client) ([]kadm.ListPartitionReassignmentsResponse, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if resp.ErrorMessage != nil {
			return nil, fmt.Errorf("list partition reassignments: %w (%s)", err, *resp.ErrorMessage)
		}
		return nil, fmt.Errorf("list partition reassignments: %w", err)
	}
	var out []kadm.ListPartitionReassignmentsResponse
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, kadm.ListPartitionReassignmentsResponse{
				Topic: t.Topic, Partition: p.Partition,
				Replicas: p.Replicas, AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas,
			})
		}
	}
	slices.SortFunc(out, func(a, b kadm.ListPartitionReassignmentsResponse) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out, nil
}

// filterReassignments keeps topic's entries (all if topic is ""), and of
// those the named partitions if any are named.
func filterReassignments(all []kadm.ListPartitionReassignmentsResponse, topic string, named []reassignTarget) []kadm.ListPartitionReassignmentsResponse {
	var out []kadm.ListPartitionReassignmentsResponse
	for _, r := range all {
		if topic != "" && r.Topic != topic {
			continue
		}
		if len(named) > 0 && !slices.ContainsFunc(named, func(t reassignTarget) bool { return t.topicPartition == topicPartition{r.Topic, r.Partition} }) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// writeReassignments renders --list:
//
//	TOPIC   PARTITION  REPLICAS  ADDING  REMOVING
//	orders  0          2,3,1     2,3     1
func writeReassignments(w io.Writer, rs []kadm.ListPartitionReassignmentsResponse) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no reassignment in progress")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tREPLICAS\tADDING\tREMOVING")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Topic, r.Partition, joinInt32s(r.Replicas), joinInt32s(r.AddingReplicas), joinInt32s(r.RemovingReplicas))
	}
	return tw.Flush()
}

// waitReassignments polls until none of targets is being reassigned,
// printing each partition's state when it changes and when it is done.
// submitted says the command itself just started (or cancelled) them.
func waitReassignments(cmd *cobra.Command, conn connSettings, cl *kgo.Client, targets []reassignTarget, o reassignOptions, submitted bool) error {
	ctx := commandContext(cmd)
	if o.waitTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.waitTimeout)
		defer cancel()
	}
	out := cmd.OutOrStdout()
	pending := map[topicPartition]string{} // partition → last printed state
	for _, t := range targets {
		pending[t.topicPartition] = ""
	}
	start := time.Now()
	for {
		rctx, cancel := conn.requestContext(cmd)
		all, err := listReassignments(rctx, cl)
		cancel()
		if err != nil {
			return err
		}
		moving := map[topicPartition]kadm.ListPartitionReassignmentsResponse{}
		for _, r := range all {
			moving[topicPartition{r.Topic, r.Partition}] = r
		}
		for _, t := range targets {
			last, waiting := pending[t.topicPartition]
			if !waiting {
				continue
			}
			r, ok := moving[t.topicPartition]
			if !ok {
				delete(pending, t.topicPartition)
				outcome := "no reassignment in progress"
				if submitted || last != "" {
					outcome = "done"
				}
				fmt.Fprintf(out, "%s: %s%s\n", t, outcome, doneReplicas(cmd, conn, cl, t.topicPartition))
				continue
			}
			state := fmt.Sprintf("adding %s, removing %s (replicas %s)", joinInt32s(r.AddingReplicas), joinInt32s(r.RemovingReplicas), joinInt32s(r.Replicas))
			if state != last {
				pending[t.topicPartition] = state
				fmt.Fprintf(out, "%s: %s\n", t, state)
			}
		}
		if len(pending) == 0 {
			fmt.Fprintf(out, "done after %s\n", time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			var left []string
			for _, t := range targets {
				if _, ok := pending[t.topicPartition]; ok {
					left = append(left, t.String())
				}
			}
			return fmt.Errorf("still reassigning %s after %s: %w", strings.Join(left, ", "), time.Since(start).Round(time.Millisecond), ctx.Err())
		case <-time.After(o.waitInterval):
		}
	}
}

// doneReplicas is ", replicas 2,3 (leader 2, in sync 2,3)" for a partition
// whose move is over, from a fresh Metadata request; "" if that fails.
func doneReplicas(cmd *cobra.Command, conn connSettings, cl *kgo.Client, tp topicPartition) string {
	ctx, cancel := conn.requestContext(cmd)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(tp.topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return ""
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == tp.partition && p.ErrorCode == 0 {
				return fmt.Sprintf(", replicas %s (leader %d, in sync %s)", joinInt32s(p.Replicas), p.Leader, joinInt32s(p.ISR))
			}
		}
	}
	return ""
}
