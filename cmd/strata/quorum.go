package main

// strata quorum describe: the metadata quorum through DescribeQuorum
// (kafka-metadata-quorum describe --status/--replication), asked of the
// raft leader (found by asking any broker first). strata quorum add-voter
// and remove-voter (kafka-metadata-quorum add-controller/remove-controller)
// send AddRaftVoter and RemoveRaftVoter to that leader; update-voter
// sends UpdateRaftVoter (a controller's new endpoints) with the leader's
// epoch, following CurrentLeader when the leader moved meanwhile.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
			fmt.Fprintf(out, "LeaderId: %d\nLeaderEpoch: %d\nHighWatermark: %d\nCurrentVoters: %d\nCurrentObservers: %d\n",
				p.LeaderID, p.LeaderEpoch, p.HighWatermark, len(p.CurrentVoters), len(p.Observers))
			for _, n := range resp.Nodes { // v2: the voters' endpoints
				var eps []string
				for _, l := range n.Listeners {
					eps = append(eps, l.Name+"://"+net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
				}
				fmt.Fprintf(out, "Endpoints of %d: %s\n", n.NodeID, strings.Join(eps, ", "))
			}
			fmt.Fprintln(out)
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
	cmd.AddCommand(newAddVoterCmd(), newRemoveVoterCmd(), newUpdateVoterCmd())
	return cmd
}

// quorumLeader is the raft leader's node id, from DescribeQuorum.
func quorumLeader(ctx context.Context, cl *kgo.Client) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, err
	}
	if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
		return -1, e
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, errors.New("describing the quorum: malformed answer")
	}
	p := resp.Topics[0].Partitions[0]
	if p.LeaderID < 0 {
		return -1, errors.New("the metadata quorum has no leader")
	}
	return p.LeaderID, nil
}

// quorumLeaderEpoch is the raft leader's node id and epoch, from
// DescribeQuorum asked of any broker and then of the leader.
func quorumLeaderEpoch(ctx context.Context, cl *kgo.Client) (int32, int32, error) {
	leader, err := quorumLeader(ctx, cl)
	if err != nil {
		return -1, -1, err
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return -1, -1, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, -1, errors.New("describing the quorum: malformed answer")
	}
	p := resp.Topics[0].Partitions[0]
	if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
		return -1, -1, fmt.Errorf("describing the quorum at node %d: %w", leader, e)
	}
	return p.LeaderID, p.LeaderEpoch, nil
}

// parseDirectoryID reads a Kafka Uuid (22 characters of URL-safe base64);
// empty is the zero id.
func parseDirectoryID(s string) ([16]byte, error) {
	var id [16]byte
	if s == "" {
		return id, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("--directory-id %q: want a Kafka Uuid (22 characters of base64)", s)
	}
	copy(id[:], b)
	return id, nil
}

func formatDirectoryID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// voterError words a failed AddRaftVoter/RemoveRaftVoter answer.
func voterError(what string, code int16, msg *string) error {
	e := kerr.ErrorForCode(code)
	if e == nil {
		return nil
	}
	if msg != nil && *msg != "" && *msg != e.Error() {
		return fmt.Errorf("%s: %w (%s)", what, e, *msg)
	}
	return fmt.Errorf("%s: %w", what, e)
}

func newAddVoterCmd() *cobra.Command {
	var (
		id      int32
		address string
		dirID   string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "add-voter --id N --address host:port",
		Short: "Add a controller to the quorum (AddRaftVoter; kafka-metadata-quorum add-controller)",
		Long: "Add a controller to the metadata quorum. Start the node first with\n" +
			"`strata server --controller-join --controllers <current voters> --controller-listen host:port`;\n" +
			"the leader catches it up as a learner and then makes it a voter.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id < 0 {
				return errors.New("--id is required")
			}
			host, portStr, err := net.SplitHostPort(address)
			port, perr := strconv.ParseUint(portStr, 10, 16)
			if err != nil || perr != nil || host == "" || port == 0 {
				return fmt.Errorf("--address %q: want host:port of the node's raft listener (--controller-listen)", address)
			}
			dir, err := parseDirectoryID(dirID)
			if err != nil {
				return err
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			leader, err := quorumLeader(ctx, cl)
			if err != nil {
				return err
			}
			req := kmsg.NewPtrAddRaftVoterRequest()
			req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = id, dir, int32(timeout.Milliseconds())
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(port)
			req.Listeners = append(req.Listeners, l)
			resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
			if err != nil {
				return err
			}
			if err := voterError(fmt.Sprintf("adding controller %d", id), resp.ErrorCode, resp.ErrorMessage); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Added controller %d with directory id %s and endpoints: CONTROLLER://%s\n", id, formatDirectoryID(dir), net.JoinHostPort(host, portStr))
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&id, "id", -1, "the new controller's node id")
	f.StringVar(&address, "address", "", "its raft listener, host:port (its --controller-listen)")
	f.StringVar(&dirID, "directory-id", "", "its directory id, a Kafka Uuid (default: none)")
	f.DurationVar(&timeout, "catch-up-timeout", 30*time.Second, "how long the leader waits for it to catch up")
	return cmd
}

func newRemoveVoterCmd() *cobra.Command {
	var (
		id    int32
		dirID string
	)
	cmd := &cobra.Command{
		Use:   "remove-voter --id N",
		Short: "Remove a controller from the quorum (RemoveRaftVoter; kafka-metadata-quorum remove-controller)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id < 0 {
				return errors.New("--id is required")
			}
			dir, err := parseDirectoryID(dirID)
			if err != nil {
				return err
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			leader, err := quorumLeader(ctx, cl)
			if err != nil {
				return err
			}
			req := kmsg.NewPtrRemoveRaftVoterRequest()
			req.VoterID, req.VoterDirectoryID = id, dir
			resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
			if err != nil {
				return err
			}
			if err := voterError(fmt.Sprintf("removing controller %d", id), resp.ErrorCode, resp.ErrorMessage); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed KRaft controller %d with directory id %s\n", id, formatDirectoryID(dir))
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&id, "id", -1, "the controller's node id")
	f.StringVar(&dirID, "directory-id", "", "its directory id, a Kafka Uuid (default: any)")
	return cmd
}

func newUpdateVoterCmd() *cobra.Command {
	var (
		id        int32
		address   string
		dirID     string
		listeners []string
	)
	cmd := &cobra.Command{
		Use:   "update-voter --id N --directory-id UUID --address host:port",
		Short: "Record a controller's new raft address and listeners (UpdateRaftVoter)",
		Long: "Record a controller's new endpoints in the metadata log (KIP-853's UpdateRaftVoter):\n" +
			"restart the node with its new --controller-listen, then run this; every member and\n" +
			"observer then connects to it there. A voter the quorum started with has no directory\n" +
			"id yet and takes the one given; later updates must repeat it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id < 0 {
				return errors.New("--id is required")
			}
			dir, err := parseDirectoryID(dirID)
			if err != nil {
				return err
			}
			if dir == ([16]byte{}) {
				return errors.New("--directory-id is required (a Kafka Uuid)")
			}
			var ls []kmsg.UpdateRaftVoterRequestListener
			for i, spec := range append([]string{"CONTROLLER=" + address}, listeners...) {
				name, hp, ok := strings.Cut(spec, "=")
				host, portStr, err := net.SplitHostPort(hp)
				port, perr := strconv.ParseUint(portStr, 10, 16)
				if !ok || name == "" || err != nil || perr != nil || host == "" || port == 0 {
					if i == 0 {
						return fmt.Errorf("--address %q: want host:port of the node's raft listener (--controller-listen)", address)
					}
					return fmt.Errorf("--listener %q: want NAME=host:port", spec)
				}
				l := kmsg.NewUpdateRaftVoterRequestListener()
				l.Name, l.Host, l.Port = name, host, uint16(port)
				ls = append(ls, l)
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			leader, epoch, err := quorumLeaderEpoch(ctx, cl)
			if err != nil {
				return err
			}
			req := kmsg.NewPtrUpdateRaftVoterRequest()
			req.VoterID, req.VoterDirectoryID, req.Listeners = id, dir, ls
			req.KRaftVersionFeature.MinSupportedVersion, req.KRaftVersionFeature.MaxSupportedVersion = 0, 0
			for attempt := 0; ; attempt++ {
				req.CurrentLeaderEpoch = epoch
				resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
				if err != nil {
					return err
				}
				switch resp.ErrorCode {
				case kerr.NotLeaderForPartition.Code, kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
					if attempt < 3 { // the leader changed meanwhile
						if cur := resp.CurrentLeader; cur.LeaderID >= 0 && cur.LeaderEpoch >= 0 && cur.LeaderID != leader {
							leader, epoch = cur.LeaderID, cur.LeaderEpoch
						} else if leader, epoch, err = quorumLeaderEpoch(ctx, cl); err != nil {
							return err
						}
						continue
					}
				}
				if err := voterError(fmt.Sprintf("updating controller %d", id), resp.ErrorCode, nil); err != nil {
					return err
				}
				break
			}
			var eps []string
			for _, l := range ls {
				eps = append(eps, l.Name+"://"+net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Updated controller %d with directory id %s and endpoints: %s\n", id, formatDirectoryID(dir), strings.Join(eps, ", "))
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&id, "id", -1, "the controller's node id")
	f.StringVar(&address, "address", "", "its raft listener, host:port (its new --controller-listen)")
	f.StringVar(&dirID, "directory-id", "", "its directory id, a Kafka Uuid (required)")
	f.StringArrayVar(&listeners, "listener", nil, "another endpoint to announce, NAME=host:port (repeatable)")
	return cmd
}

// ago words a millisecond timestamp as time since ("-" when unknown).
func ago(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.Since(time.UnixMilli(ms)).Round(time.Millisecond).String() + " ago"
}
