package main

// strata quorum describe: the metadata quorum through DescribeQuorum
// (kafka-metadata-quorum describe --status/--replication), asked of the
// raft leader (found by asking any broker first).

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newQuorumCmd()) }

func newQuorumCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "quorum", Short: "Describe the metadata quorum (kafka-metadata-quorum)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "describe",
		Short: "The raft leader, epoch, high watermark and each voter's and observer's position",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			ask := func(broker int32) (*kmsg.DescribeQuorumResponse, error) {
				req := kmsg.NewPtrDescribeQuorumRequest()
				rt := kmsg.NewDescribeQuorumRequestTopic()
				rt.Topic = "__cluster_metadata"
				rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				if broker < 0 {
					return req.RequestWith(ctx, cl)
				}
				return req.RequestWith(ctx, cl.Broker(int(broker)))
			}
			resp, err := ask(-1)
			for attempt := 0; err == nil && attempt < 3; attempt++ {
				if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
					return e
				}
				p := resp.Topics[0].Partitions[0]
				if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID < 0 {
					break
				}
				resp, err = ask(p.LeaderID)
			}
			if err != nil {
				return err
			}
			p := resp.Topics[0].Partitions[0]
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				return fmt.Errorf("describing the quorum: %w", e)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "LeaderId: %d\nLeaderEpoch: %d\nHighWatermark: %d\nCurrentVoters: %d\nCurrentObservers: %d\n\n",
				p.LeaderID, p.LeaderEpoch, p.HighWatermark, len(p.CurrentVoters), len(p.Observers))
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tLOG-END-OFFSET\tLAG\tLAST-FETCH\tLAST-CAUGHT-UP\tSTATUS")
			row := func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState, status string) {
				lag := "-"
				if r.LogEndOffset >= 0 {
					lag = fmt.Sprint(max(0, p.HighWatermark-r.LogEndOffset))
				}
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\n", r.ReplicaID, r.LogEndOffset, lag, ago(r.LastFetchTimestamp), ago(r.LastCaughtUpTimestamp), status)
			}
			for _, v := range p.CurrentVoters {
				status := "Follower"
				if v.ReplicaID == p.LeaderID {
					status = "Leader"
				}
				row(v, status)
			}
			for _, o := range p.Observers {
				row(o, "Observer")
			}
			return tw.Flush()
		},
	})
	return cmd
}

// ago words a millisecond timestamp as time since ("-" when unknown).
func ago(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.Since(time.UnixMilli(ms)).Round(time.Millisecond).String() + " ago"
}
