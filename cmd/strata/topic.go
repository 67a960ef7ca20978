package main

// strata topic: create, list, describe, delete and alter-config, through
// kadm (CreateTopics, Metadata, ListOffsets, DescribeConfigs, DeleteTopics,
// IncrementalAlterConfigs); recover (CreateTopics with
// strata.recover.from.bucket) and purge (the admin HTTP listener) for
// tiered topics. Kafka errors are printed with their protocol names, e.g.
// `topic "x": TOPIC_ALREADY_EXISTS: ...`.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newTopicCmd()) }

func newTopicCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, delete and configure topics",
	}
	cmd.AddCommand(
		newTopicCreateCmd(),
		newTopicListCmd(),
		newTopicDescribeCmd(),
		newTopicDeleteCmd(),
		newTopicAlterConfigCmd(),
		newTopicRecoverCmd(),
		newTopicPurgeCmd(),
		newTopicReassignCmd(),
	)
	return cmd
}

func newTopicCreateCmd() *cobra.Command {
	var (
		partitions        int32
		replicationFactor int16
		configs           []string
		ifNotExists       bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic",
		Example: `  strata topic create orders --partitions 6 --replication-factor 3 \
    -c retention.ms=86400000 -c cleanup.policy=compact`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			kv, err := parseKeyValues(configs, "config")
			if err != nil {
				return err
			}
			cfg := configPointers(kv)
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.CreateTopic(ctx, partitions, replicationFactor, cfg, topic)
			if ifNotExists && errors.Is(err, kerr.TopicAlreadyExists) {
				// kafka-topics --if-not-exists: a one-shot job (the
				// compose file's) may run again against the same cluster.
				fmt.Fprintf(cmd.OutOrStdout(), "topic %s already exists\n", topic)
				return nil
			}
			if err != nil {
				return topicError(topic, err, resp.ErrMessage)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created topic %s (partitions: %d, replication factor: %d)\n",
				topic, resp.NumPartitions, resp.ReplicationFactor)
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&partitions, "partitions", "p", -1, "number of partitions (-1: broker default num.partitions)")
	f.Int16VarP(&replicationFactor, "replication-factor", "r", -1, "replicas per partition (-1: broker default)")
	f.StringArrayVarP(&configs, "config", "c", nil, "topic config key=value (repeatable)")
	f.BoolVar(&ifNotExists, "if-not-exists", false, "succeed without changes when the topic exists (kafka-topics --if-not-exists)")
	return cmd
}

func newTopicListCmd() *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics with their partition count and replication factor",
		Long: "List topics with their partition count and replication factor.\n" +
			"Internal topics (named __*) are hidden unless --internal is given.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			topics, err := adm.ListTopicsWithInternal(ctx)
			if err != nil {
				return fmt.Errorf("list topics: %w", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tREPLICATION-FACTOR")
			for _, t := range topics.Sorted() {
				if !internal && isInternalTopic(t) {
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\n", t.Topic, len(t.Partitions), t.Partitions.NumReplicas())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "also list internal topics (__consumer_offsets, …)")
	return cmd
}

// isInternalTopic is true for topics the broker marks internal and for the
// double-underscore names Kafka reserves for itself.
func isInternalTopic(t kadm.TopicDetail) bool {
	return t.IsInternal || strings.HasPrefix(t.Topic, "__")
}

func newTopicDescribeCmd() *cobra.Command {
	var allConfigs bool
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a topic's id, partitions (leader, replicas, ISR, offsets) and configs",
		Long: "Show a topic's id, its partitions with leader, replicas, in-sync replicas and\n" +
			"log start/end offsets, then the configs that differ from the defaults\n" +
			"(every config with --all-configs).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()

			topics, err := adm.ListTopicsWithInternal(ctx, topic)
			if err != nil {
				return fmt.Errorf("describe topic %q: %w", topic, err)
			}
			detail, ok := topics[topic]
			if !ok {
				return fmt.Errorf("topic %q: not in the metadata response", topic)
			}
			if detail.Err != nil {
				return topicError(topic, detail.Err, "")
			}
			starts, err := adm.ListStartOffsets(ctx, topic)
			if err != nil {
				return fmt.Errorf("topic %q: list start offsets: %w", topic, err)
			}
			ends, err := adm.ListEndOffsets(ctx, topic)
			if err != nil {
				return fmt.Errorf("topic %q: list end offsets: %w", topic, err)
			}
			configs, err := adm.DescribeTopicConfigs(ctx, topic)
			if err != nil {
				return fmt.Errorf("topic %q: describe configs: %w", topic, err)
			}
			rc, err := configs.On(topic, nil)
			if err != nil {
				return topicError(topic, err, "")
			}
			if rc.Err != nil {
				return topicError(topic, rc.Err, rc.ErrMessage)
			}
			return writeTopicDescription(cmd.OutOrStdout(), detail, starts, ends, rc.Configs, allConfigs)
		},
	}
	cmd.Flags().BoolVar(&allConfigs, "all-configs", false, "show every config, defaults included")
	return cmd
}

// writeTopicDescription renders `topic describe`:
//
//	Topic: orders
//	ID: 8aQ0mW1sR9ym7hT1iY2bVg
//	Partitions: 2  Replication-factor: 1
//
//	PARTITION  LEADER  REPLICAS  ISR  LOG-START  LOG-END
//	0          1       1         1    0          42
//
//	Configs (non-default):
//	  retention.ms=86400000  (DYNAMIC_TOPIC_CONFIG)
func writeTopicDescription(
	w io.Writer,
	detail kadm.TopicDetail,
	starts, ends kadm.ListedOffsets,
	configs []kadm.Config,
	allConfigs bool,
) error {
	fmt.Fprintf(w, "Topic: %s\n", detail.Topic)
	fmt.Fprintf(w, "ID: %s\n", formatTopicID(detail.ID))
	if detail.IsInternal {
		fmt.Fprintln(w, "Internal: true")
	}
	fmt.Fprintf(w, "Partitions: %d  Replication-factor: %d\n\n",
		len(detail.Partitions), detail.Partitions.NumReplicas())

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tLEADER\tREPLICAS\tISR\tLOG-START\tLOG-END")
	for _, p := range detail.Partitions.Sorted() {
		if p.Err != nil {
			fmt.Fprintf(tw, "%d\t%s\t\t\t\t\n", p.Partition, errorName(p.Err))
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\n",
			p.Partition, p.Leader, joinInt32s(p.Replicas), joinInt32s(p.ISR),
			listedOffset(starts, detail.Topic, p.Partition),
			listedOffset(ends, detail.Topic, p.Partition))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	shown := make([]kadm.Config, 0, len(configs))
	for _, c := range configs {
		if allConfigs || isNonDefaultConfig(c) {
			shown = append(shown, c)
		}
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].Key < shown[j].Key })
	if allConfigs {
		fmt.Fprintln(w, "\nConfigs:")
	} else {
		fmt.Fprintln(w, "\nConfigs (non-default):")
	}
	if len(shown) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range shown {
		value := c.MaybeValue()
		if c.Sensitive {
			value = "(sensitive)"
		}
		fmt.Fprintf(tw, "  %s=%s\t(%s)\n", c.Key, value, c.Source)
	}
	return tw.Flush()
}

// isNonDefaultConfig is true for configs set anywhere but the built-in
// defaults: topic overrides and broker-level settings.
func isNonDefaultConfig(c kadm.Config) bool {
	switch c.Source {
	case kmsg.ConfigSourceDefaultConfig, kmsg.ConfigSourceUnknown:
		return false
	}
	return true
}

// formatTopicID prints a topic ID the way Kafka tools do (URL-safe base64
// without padding), or "-" for the all-zero ID of brokers without IDs.
func formatTopicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return "-"
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func listedOffset(offsets kadm.ListedOffsets, topic string, partition int32) string {
	o, ok := offsets.Lookup(topic, partition)
	switch {
	case !ok:
		return "-"
	case o.Err != nil:
		return errorName(o.Err)
	default:
		return strconv.FormatInt(o.Offset, 10)
	}
}

// errorName is the Kafka error's protocol name (NOT_LEADER_OR_FOLLOWER),
// or the error text for other errors.
func errorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func joinInt32s(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

func newTopicDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a topic and all its data",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.DeleteTopic(ctx, topic)
			if err != nil {
				return topicError(topic, err, resp.ErrMessage)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted topic %s\n", topic)
			return nil
		},
	}
}

func newTopicRecoverCmd() *cobra.Command {
	var (
		fromBucket bool
		topicID    string
	)
	cmd := &cobra.Command{
		Use:   "recover NAME --from-bucket",
		Short: "Recreate a deleted or lost tiered topic from the object store",
		Long: "Recreate a deleted or lost topic from the manifests its partitions left in the\n" +
			"broker's object store: same topic id, partition count and config overrides,\n" +
			"every remote record served again at its offset. Records that were never\n" +
			"uploaded (the hot tail) are not in the bucket and are not recovered.",
		Example: `  strata topic recover orders --from-bucket
  strata topic recover orders --from-bucket --topic-id 3f0c…(32 hex digits)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			if !fromBucket {
				return errors.New("topic recover: --from-bucket is required (the only source there is)")
			}
			which := "true"
			if topicID != "" {
				which = topicID
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.CreateTopic(ctx, -1, -1, map[string]*string{"strata.recover.from.bucket": &which}, topic)
			if err == nil {
				err = resp.Err
			}
			if err != nil {
				return topicError(topic, err, resp.ErrMessage)
			}
			// The id as the bucket's keys and --topic-id spell it.
			fmt.Fprintf(cmd.OutOrStdout(), "recovered topic %s (id %x) with %d partitions from the object store\n", topic, resp.ID[:], resp.NumPartitions)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromBucket, "from-bucket", false, "read the topic from the broker's object store (--object-store)")
	cmd.Flags().StringVar(&topicID, "topic-id", "", "the incarnation to recover, as 32 hex digits (default: the newest in the bucket)")
	return cmd
}

func newTopicPurgeCmd() *cobra.Command {
	var (
		fromBucket bool
		admin      string
	)
	cmd := &cobra.Command{
		Use:   "purge NAME --from-bucket",
		Short: "Delete a deleted topic's segments from the object store (no recovery after this)",
		Long: "Deleting a tiered topic keeps its objects in the object store so that\n" +
			"'strata topic recover' can bring it back. purge deletes them: every object of\n" +
			"every deleted incarnation of NAME. A live topic of that name is not touched.\n" +
			"It goes through the broker's admin HTTP listener (--http-listen).",
		Example: `  strata topic purge orders --from-bucket --admin 127.0.0.1:9644`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			if !fromBucket {
				return errors.New("topic purge: --from-bucket is required (the object store is what is purged)")
			}
			settings := connSettingsOf(cmd)
			ctx, cancel := context.WithTimeout(commandContext(cmd), settings.timeout)
			defer cancel()
			u := "http://" + admin + "/v1/remote/topics/" + url.PathEscape(topic)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("topic purge: admin listener %s: %w", admin, err)
			}
			defer resp.Body.Close()
			var body struct {
				TopicIDs       []string `json:"topic_ids"`
				ObjectsDeleted int      `json:"objects_deleted"`
				Error          string   `json:"error"`
			}
			if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
				return fmt.Errorf("topic purge: admin listener %s answered %s without a JSON body", admin, resp.Status)
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("topic purge %s: %s", topic, body.Error)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "purged %d objects of deleted topic %s (ids %s) from the object store\n",
				body.ObjectsDeleted, topic, strings.Join(body.TopicIDs, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromBucket, "from-bucket", false, "purge the topic's objects from the broker's object store")
	cmd.Flags().StringVar(&admin, "admin", "127.0.0.1:9644", "the broker's admin HTTP listener host:port")
	return cmd
}

func newTopicAlterConfigCmd() *cobra.Command {
	var (
		sets    []string
		deletes []string
	)
	cmd := &cobra.Command{
		Use:     "alter-config NAME",
		Short:   "Set or delete topic config overrides (IncrementalAlterConfigs)",
		Example: `  strata topic alter-config orders -c retention.ms=3600000 --delete-config cleanup.policy`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			alters, err := buildAlterConfigs(sets, deletes)
			if err != nil {
				return err
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			resps, err := adm.AlterTopicConfigs(ctx, alters, topic)
			if err != nil {
				return fmt.Errorf("topic %q: alter configs: %w", topic, err)
			}
			resp, err := resps.On(topic, nil)
			if err != nil {
				return topicError(topic, err, "")
			}
			if resp.Err != nil {
				return topicError(topic, resp.Err, resp.ErrMessage)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "altered config of topic %s (%d set, %d deleted)\n",
				topic, len(sets), len(deletes))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&sets, "config", "c", nil, "config key=value to set (repeatable)")
	f.StringArrayVar(&deletes, "delete-config", nil, "config key to remove, reverting to the default (repeatable)")
	return cmd
}

// buildAlterConfigs turns -c k=v and --delete-config k into incremental
// operations, in a stable order (sets by key, then deletes as given).
func buildAlterConfigs(sets, deletes []string) ([]kadm.AlterConfig, error) {
	if len(sets) == 0 && len(deletes) == 0 {
		return nil, errors.New("nothing to alter: give -c key=value and/or --delete-config key")
	}
	kv, err := parseKeyValues(sets, "config")
	if err != nil {
		return nil, err
	}
	alters := make([]kadm.AlterConfig, 0, len(kv)+len(deletes))
	for _, k := range sortedKeys(kv) {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(kv[k])})
	}
	for _, k := range deletes {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, errors.New("--delete-config needs a config name")
		}
		if _, ok := kv[k]; ok {
			return nil, fmt.Errorf("config %q is both set and deleted", k)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return alters, nil
}
