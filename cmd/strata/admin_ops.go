package main

// Operators' commands over Kafka's admin APIs, worded like Kafka's tools:
//
//	strata log-dirs describe [--topic T]...      kafka-log-dirs --describe
//	strata log-dirs move --broker B --dir DIR --topic T [--partition P]... [--wait]
//	                                             kafka-reassign-partitions' log_dirs
//	strata producers describe TOPIC [--partition P]...
//	                                             kafka-transactions describe-producers
//	strata leader elect --preferred|--unclean [--topic T [--partition P]...]
//	                                             kafka-leader-election

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	rootCmd.AddCommand(newLogDirsCmd(), newProducersCmd(), newLeaderCmd())
}

func newLogDirsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log-dirs", Short: "Describe the brokers' log directories (kafka-log-dirs)"}
	var topics []string
	describe := &cobra.Command{
		Use:   "describe",
		Short: "Each broker's log directory: partitions with their size and lag, and the volume's space",
		Long: "Each broker's log directories (DescribeLogDirs): every partition with its SIZE on that disk and its offset lag, " +
			"and the volume's total and usable bytes. SIZE is local bytes: for a tiered topic, the hot tail only; " +
			"the object store's share is the gauge strata_remote_log_size_bytes{topic,partition} on a broker's admin HTTP /metrics.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			var set kadm.TopicsSet
			if len(topics) > 0 {
				if set, err = topicPartitions(ctx, adm, nil, topics...); err != nil {
					return err
				}
			}
			all, err := adm.DescribeAllLogDirs(ctx, set)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BROKER\tDIR\tTOPIC\tPARTITION\tSIZE\tOFFSET-LAG")
			for _, d := range all.Sorted() {
				if d.Err != nil {
					return fmt.Errorf("broker %d dir %s: %w", d.Broker, d.Dir, d.Err)
				}
				fmt.Fprintf(tw, "%d\t%s\t(volume)\t-\ttotal %s, usable %s\t-\n", d.Broker, d.Dir, bytesOrUnknown(d.TotalBytes), bytesOrUnknown(d.UsableBytes))
				for _, p := range d.Topics.Sorted() {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\n", d.Broker, d.Dir, p.Topic, p.Partition, p.Size, p.OffsetLag)
				}
			}
			return tw.Flush()
		},
	}
	describe.Flags().StringArrayVar(&topics, "topic", nil, "only this topic (repeatable)")
	cmd.AddCommand(describe, newLogDirsMoveCmd())
	return cmd
}

// newLogDirsMoveCmd moves replicas between the log directories of one
// broker (AlterReplicaLogDirs): what kafka-reassign-partitions does for
// the log_dirs of its reassignment JSON.
func newLogDirsMoveCmd() *cobra.Command {
	var (
		broker     int32
		dir, topic string
		partitions []int32
		wait       bool
	)
	move := &cobra.Command{
		Use:   "move",
		Short: "Move a topic's replicas on one broker to another of its log directories",
		Long: "Starts moving each replica (every partition of --topic the broker hosts, or the --partition ones) to --dir " +
			"on --broker; the replica serves throughout. With --wait, returns once every move has finished.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if broker < 0 || dir == "" || topic == "" {
				return errors.New("--broker, --dir and --topic are required")
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			set, err := replicasOn(ctx, adm, broker, topic, partitions)
			if err != nil {
				return err
			}
			dirs, err := adm.DescribeBrokerLogDirs(ctx, broker, nil)
			if err != nil {
				return err
			}
			if dir, err = resolveLogDir(dirs, dir); err != nil {
				return err
			}
			var req kadm.AlterReplicaLogDirsReq
			req.Add(dir, set)
			res, err := adm.AlterBrokerReplicaLogDirs(ctx, broker, req)
			if err != nil {
				return err
			}
			var failed error
			for _, ps := range res {
				for _, p := range slices.Sorted(maps.Keys(ps)) {
					r := ps[p]
					if r.Err != nil {
						fmt.Fprintf(cmd.OutOrStdout(), "%s-%d: %v\n", r.Topic, r.Partition, r.Err)
						failed = errors.Join(failed, fmt.Errorf("%s-%d: %w", r.Topic, r.Partition, r.Err))
						continue
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s-%d: moving to %s on broker %d\n", r.Topic, r.Partition, dir, broker)
				}
			}
			if failed != nil {
				return fmt.Errorf("some moves were refused: %w", failed)
			}
			if !wait {
				return nil
			}
			return waitLogDirMoves(ctx, cmd, adm, broker, dir, set)
		},
	}
	f := move.Flags()
	f.Int32Var(&broker, "broker", -1, "the broker whose replicas move")
	f.StringVar(&dir, "dir", "", "the destination log directory, as the broker's log.dirs names it")
	f.StringVar(&topic, "topic", "", "the topic")
	f.Int32SliceVar(&partitions, "partition", nil, "only these partitions (repeatable; default: every replica of the topic on the broker)")
	f.BoolVar(&wait, "wait", false, "wait until every move has finished (bounded by --timeout)")
	return move
}

// waitLogDirMoves polls DescribeLogDirs until every partition of set is in
// dir on broker with no future copy left.
func waitLogDirMoves(ctx context.Context, cmd *cobra.Command, adm *kadm.Client, broker int32, dir string, set kadm.TopicsSet) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		dirs, err := adm.DescribeBrokerLogDirs(ctx, broker, set)
		if err == nil && logDirMovesDone(dirs, dir, set) {
			fmt.Fprintln(cmd.OutOrStdout(), "every move finished")
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("moves not finished before --timeout: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func logDirMovesDone(dirs kadm.DescribedLogDirs, dir string, set kadm.TopicsSet) bool {
	for _, d := range dirs {
		for _, p := range d.Topics.Sorted() {
			if _, wanted := set[p.Topic][p.Partition]; wanted && (p.IsFuture || d.Dir != dir) {
				return false // still in the old dir, or the copy not swapped in
			}
		}
	}
	for t, ps := range set {
		for p := range ps {
			if _, ok := dirs[dir].Topics[t][p]; !ok {
				return false
			}
		}
	}
	return true
}

// resolveLogDir is the broker's log dir that dir names: the same absolute
// path, or the one absolute path ending in a relative dir.
func resolveLogDir(dirs kadm.DescribedLogDirs, dir string) (string, error) {
	var names, matches []string
	for d := range dirs {
		names = append(names, d)
		if d == dir || (!filepath.IsAbs(dir) && strings.HasSuffix(d, string(filepath.Separator)+filepath.Clean(dir))) {
			matches = append(matches, d)
		}
	}
	slices.Sort(names)
	if len(matches) != 1 {
		return "", fmt.Errorf("%w: %s is not one log dir of the broker (its log dirs: %s)", kerr.LogDirNotFound, dir, strings.Join(names, ", "))
	}
	return matches[0], nil
}

// replicasOn is the set of partitions of topic to move on broker: the
// given ones, or every partition with a replica on the broker.
func replicasOn(ctx context.Context, adm *kadm.Client, broker int32, topic string, partitions []int32) (kadm.TopicsSet, error) {
	if len(partitions) > 0 {
		set := kadm.TopicsSet{}
		set.Add(topic, partitions...)
		return set, nil
	}
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return nil, err
	}
	mt, ok := md.Topics[topic]
	if !ok || mt.Err != nil {
		return nil, topicError(topic, kerr.UnknownTopicOrPartition, "")
	}
	set := kadm.TopicsSet{}
	for _, p := range mt.Partitions.Sorted() {
		if slices.Contains(p.Replicas, broker) {
			set.Add(topic, p.Partition)
		}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("broker %d hosts no replica of %s", broker, topic)
	}
	return set, nil
}

// topicPartitions is the set of partitions of topics a command works on:
// the given ones, or every partition of each topic (an unknown topic is
// UNKNOWN_TOPIC_OR_PARTITION).
func topicPartitions(ctx context.Context, adm *kadm.Client, partitions []int32, topics ...string) (kadm.TopicsSet, error) {
	set := kadm.TopicsSet{}
	if len(partitions) > 0 {
		for _, t := range topics {
			set.Add(t, partitions...)
		}
		return set, nil
	}
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		mt, ok := md.Topics[t]
		if !ok || mt.Err != nil {
			return nil, topicError(t, kerr.UnknownTopicOrPartition, "")
		}
		set.Add(t, mt.Partitions.Numbers()...)
	}
	return set, nil
}

func bytesOrUnknown(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d", n)
}

func newProducersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "producers", Short: "Describe the active producers of partitions (kafka-transactions describe-producers)"}
	var partitions []int32
	describe := &cobra.Command{
		Use:   "describe TOPIC",
		Short: "The producers a topic's partition leaders keep state for, with open transactions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			set, err := topicPartitions(ctx, adm, partitions, topic)
			if err != nil {
				return err
			}
			described, err := adm.DescribeProducers(ctx, set)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PARTITION\tPRODUCER-ID\tEPOCH\tLAST-SEQUENCE\tLAST-TIMESTAMP\tCOORDINATOR-EPOCH\tTXN-START-OFFSET")
			var errs []error
			for _, p := range described[topic].Partitions.Sorted() {
				if p.Err != nil {
					errs = append(errs, fmt.Errorf("partition %d: %w", p.Partition, p.Err))
					continue
				}
				for _, ap := range p.ActiveProducers.Sorted() {
					ts := "-"
					if ap.LastTimestamp > 0 {
						ts = time.UnixMilli(ap.LastTimestamp).UTC().Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%d\t%d\n", p.Partition, ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ts, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return errors.Join(errs...)
		},
	}
	describe.Flags().Int32SliceVar(&partitions, "partition", nil, "only these partitions (default: all)")
	cmd.AddCommand(describe)
	return cmd
}

func newLeaderCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "leader", Short: "Leader elections (kafka-leader-election)"}
	var (
		preferred, unclean bool
		topic              string
		partitions         []int32
	)
	elect := &cobra.Command{
		Use:   "elect",
		Short: "Elect the preferred replica (or, --unclean, any live replica of a leaderless partition) as leader",
		Example: `  strata leader elect --preferred                       # every partition
  strata leader elect --preferred --topic orders --partition 0 --partition 3
  strata leader elect --unclean --topic orders --partition 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if preferred == unclean {
				return errors.New("give one of --preferred or --unclean")
			}
			if len(partitions) > 0 && topic == "" {
				return errors.New("--partition needs --topic")
			}
			how := kadm.ElectPreferredReplica
			if unclean {
				how = kadm.ElectLiveReplica
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			var set kadm.TopicsSet // nil: every partition
			if topic != "" {
				if set, err = topicPartitions(ctx, adm, partitions, topic); err != nil {
					return err
				}
			}
			res, err := adm.ElectLeaders(ctx, how, set)
			if err != nil {
				return err
			}
			var lines []string
			var errs []error
			for t, ps := range res {
				for p, r := range ps {
					switch {
					case r.Err == nil:
						lines = append(lines, fmt.Sprintf("%s-%d: leader elected", t, p))
					case errors.Is(r.Err, kerr.ElectionNotNeeded):
						lines = append(lines, fmt.Sprintf("%s-%d: no election needed", t, p))
					default:
						errs = append(errs, fmt.Errorf("%s-%d: %w %s", t, p, r.Err, r.ErrMessage))
					}
				}
			}
			sort.Strings(lines)
			out := cmd.OutOrStdout()
			for _, l := range lines {
				fmt.Fprintln(out, l)
			}
			if len(lines) == 0 && len(errs) == 0 {
				fmt.Fprintln(out, "no partition needed an election")
			}
			return errors.Join(errs...)
		},
	}
	fl := elect.Flags()
	fl.BoolVar(&preferred, "preferred", false, "elect each partition's preferred (first) replica")
	fl.BoolVar(&unclean, "unclean", false, "elect a live replica, in the ISR or not, for partitions without a leader")
	fl.StringVar(&topic, "topic", "", "only this topic (default: every partition)")
	fl.Int32SliceVar(&partitions, "partition", nil, "only these partitions of --topic")
	cmd.AddCommand(elect)
	return cmd
}
