package main

// strata consume: print a topic's records through a --format template,
// either reading partitions directly (no group, nothing committed) or as a
// member of a consumer group that commits what it printed.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newConsumeCmd()) }

// consumeOptions are the flags of `strata consume`.
type consumeOptions struct {
	fromBeginning bool
	offset        string
	partition     int32 // -1: all partitions
	maxMessages   int64 // 0: unlimited
	group         string
	format        string
	idleTimeout   time.Duration
	registryURL   string
}

func newConsumeCmd() *cobra.Command {
	var opts consumeOptions
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print a topic's records",
		Long: `Print a topic's records, one --format rendering per record.

Without --group the command reads partitions directly and commits nothing;
it starts at the end of each partition unless --from-beginning or --offset
says otherwise. With --group G it joins consumer group G, resumes from the
group's committed offsets (new partitions start at --offset earliest|latest,
default latest) and commits the offsets of the records it printed.

--format avro, protobuf, json_schema or schema (the four are the same)
decodes each value in Confluent's wire format with the schema its id names
in the schema registry (--schema-registry) and prints it as one JSON line;
a null value prints as null. A value that does not decode stops the
command with an error naming its partition and offset.

It stops after -n records, after --timeout-idle without records, or on
SIGINT/SIGTERM (exit status 0 in all three cases).`,
		Example: `  strata consume orders --from-beginning -n 10
  strata consume orders --partition 2 --offset 1000 --format '%p@%o %k=%v\n'
  strata consume orders --group billing --offset earliest --timeout-idle 5s
  strata consume users --from-beginning --format avro --schema-registry http://127.0.0.1:8081`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("partition") {
				opts.partition = -1
			}
			return runConsume(cmd, args[0], opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.fromBeginning, "from-beginning", false, "start at the earliest offset (same as --offset earliest)")
	f.StringVarP(&opts.offset, "offset", "o", "", "start offset: earliest, latest, N (exact) or -N (N before the end); default latest")
	f.Int32VarP(&opts.partition, "partition", "p", -1, "read only this partition, -1 for all (not with --group)")
	f.Int64VarP(&opts.maxMessages, "max-messages", "n", 0, "exit after this many records (0: no limit)")
	f.StringVarP(&opts.group, "group", "g", "", "consume as a member of this consumer group and commit offsets")
	f.StringVarP(&opts.format, "format", "f", "", formatHelp)
	f.StringVar(&opts.registryURL, "schema-registry", schemaRegistryURLDefault(),
		"schema registry URL for --format avro|protobuf|json_schema|schema ("+schemaRegistryURLEnv+" sets the default)")
	f.DurationVar(&opts.idleTimeout, "timeout-idle", 0, "exit when no record arrived for this long (0: wait forever)")
	return cmd
}

// startOffset resolves --offset and --from-beginning into a kgo offset.
// exact is true for numeric offsets, which only make sense without a group.
func startOffset(offset string, fromBeginning bool) (start kgo.Offset, exact bool, err error) {
	offset = strings.ToLower(strings.TrimSpace(offset))
	if fromBeginning {
		if offset != "" && offset != "earliest" && offset != "beginning" {
			return kgo.Offset{}, false, fmt.Errorf("--from-beginning conflicts with --offset %s", offset)
		}
		return kgo.NewOffset().AtStart(), false, nil
	}
	switch offset {
	case "", "latest", "end":
		return kgo.NewOffset().AtEnd(), false, nil
	case "earliest", "beginning":
		return kgo.NewOffset().AtStart(), false, nil
	}
	n, err := strconv.ParseInt(offset, 10, 64)
	if err != nil {
		return kgo.Offset{}, false, fmt.Errorf("invalid --offset %q: want earliest, latest, N or -N", offset)
	}
	if n < 0 {
		return kgo.NewOffset().AtEnd().Relative(n), true, nil
	}
	return kgo.NewOffset().At(n), true, nil
}

// consumeClientOpts builds the kgo consuming options for opts. In group
// mode, onAssigned is called when the group assigns partitions.
func consumeClientOpts(topic string, opts consumeOptions, onAssigned func(context.Context, *kgo.Client, map[string][]int32)) ([]kgo.Opt, error) {
	start, exact, err := startOffset(opts.offset, opts.fromBeginning)
	if err != nil {
		return nil, err
	}
	if opts.maxMessages < 0 {
		return nil, fmt.Errorf("invalid --max-messages %d", opts.maxMessages)
	}
	if opts.group != "" {
		if opts.partition >= 0 {
			return nil, errors.New("--partition cannot be used with --group: the group assigns partitions")
		}
		if exact {
			return nil, errors.New("--offset N cannot be used with --group: use earliest or latest for partitions without a committed offset")
		}
		return []kgo.Opt{
			kgo.ConsumerGroup(opts.group),
			kgo.OnPartitionsAssigned(onAssigned),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeStartOffset(start),
			// Commit exactly what was printed, at exit.
			kgo.DisableAutoCommit(),
		}, nil
	}
	if opts.partition >= 0 {
		return []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			topic: {opts.partition: start},
		})}, nil
	}
	return []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(start)}, nil
}

func runConsume(cmd *cobra.Command, topic string, opts consumeOptions) error {
	printer, err := recordPrinterFor(cmd, opts)
	if err != nil {
		return err
	}
	assigned := make(chan struct{})
	var assignedOnce sync.Once
	onAssigned := func(context.Context, *kgo.Client, map[string][]int32) {
		assignedOnce.Do(func() { close(assigned) })
	}
	kopts, err := consumeClientOpts(topic, opts, onAssigned)
	if err != nil {
		return err
	}
	conn := connSettingsOf(cmd)
	if err := checkConsumable(cmd, conn, topic, opts.partition, opts.group); err != nil {
		return err
	}
	cl, err := conn.newClient(cmd, kopts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if opts.group != "" {
		// Joining a group can take seconds (brokers delay the first
		// rebalance); --timeout-idle counts from the assignment.
		select {
		case <-assigned:
		case <-ctx.Done():
			return nil
		case <-time.After(conn.timeout):
			return fmt.Errorf("group %q: no partitions assigned within %s", opts.group, conn.timeout)
		}
	}

	consumeErr := consumeLoop(ctx, cl, printer, opts, bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10))
	if opts.group != "" {
		// Everything polled has been printed (polls never ask for more
		// than -n leaves), so the uncommitted offsets are the printed ones.
		commitCtx, cancel := conn.requestContext(cmd)
		defer cancel()
		if err := cl.CommitUncommittedOffsets(commitCtx); err != nil && consumeErr == nil {
			consumeErr = fmt.Errorf("group %q: commit offsets: %w", opts.group, err)
		}
	}
	return consumeErr
}

// checkConsumable fails early, with the Kafka error, if topic (or the
// requested partition) does not exist, instead of waiting forever for it,
// and, for a group consumer, if the brokers lack the group APIs.
func checkConsumable(cmd *cobra.Command, conn connSettings, topic string, partition int32, group string) error {
	adm, err := conn.newAdmin(cmd)
	if err != nil {
		return err
	}
	defer adm.Close()
	ctx, cancel := conn.requestContext(cmd)
	defer cancel()
	if group != "" {
		if err := checkGroupSupport(ctx, adm); err != nil {
			return fmt.Errorf("group %q: %w", group, err)
		}
	}
	topics, err := adm.ListTopicsWithInternal(ctx, topic)
	if err != nil {
		return fmt.Errorf("topic %q: metadata: %w", topic, err)
	}
	detail, ok := topics[topic]
	if !ok {
		return fmt.Errorf("topic %q: not in the metadata response", topic)
	}
	if detail.Err != nil {
		return topicError(topic, detail.Err, "")
	}
	if _, ok := detail.Partitions[partition]; partition >= 0 && !ok {
		return fmt.Errorf("topic %q has no partition %d (it has %d)", topic, partition, len(detail.Partitions))
	}
	return nil
}

// checkGroupSupport fails if a broker does not advertise the consumer
// group APIs, which would otherwise leave a group consumer waiting for an
// assignment that never comes.
func checkGroupSupport(ctx context.Context, adm *kadm.Client) error {
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	for _, v := range versions.Sorted() {
		if v.Err != nil {
			continue
		}
		for _, key := range []kmsg.Key{kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.OffsetCommit, kmsg.OffsetFetch} {
			if _, _, ok := v.KeyVersions(key.Int16()); !ok {
				return fmt.Errorf("broker %d does not support consumer groups (no %s API)", v.NodeID, kmsg.NameForKey(key.Int16()))
			}
		}
	}
	return nil
}

// consumeLoop polls and prints until -n records, the idle timeout, or ctx
// ends (SIGINT/SIGTERM); those all return nil. A fetch error returns it.
func consumeLoop(ctx context.Context, cl *kgo.Client, printer recordPrinter, opts consumeOptions, out *bufio.Writer) error {
	defer out.Flush()
	var (
		printed int64
		buf     []byte
	)
	for opts.maxMessages == 0 || printed < opts.maxMessages {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if opts.idleTimeout > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, opts.idleTimeout)
		}
		limit := -1
		if opts.maxMessages > 0 {
			limit = int(min(opts.maxMessages-printed, 1<<20))
		}
		fetches := cl.PollRecords(pollCtx, limit)
		idle := pollCtx.Err() != nil && ctx.Err() == nil
		cancel()

		var fetchErr, printErr error
		fetches.EachError(func(topic string, partition int32, err error) {
			if fetchErr == nil && !isContextError(err) && !errors.Is(err, kgo.ErrClientClosed) {
				fetchErr = fmt.Errorf("topic %q partition %d: %w", topic, partition, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if printErr != nil {
				return
			}
			var err error
			if buf, err = printer(ctx, buf[:0], r); err != nil {
				printErr = fmt.Errorf("topic %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
				return
			}
			out.Write(buf) //nolint:errcheck // checked at Flush below
			printed++
		})
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		if printErr != nil {
			return printErr
		}
		if fetchErr != nil {
			return fetchErr
		}
		if ctx.Err() != nil || (idle && fetches.NumRecords() == 0) {
			return nil
		}
	}
	return nil
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
