package main

// The self-balancer's commands:
//
//	strata cluster decommission NODE... [--cancel]
//	    drain (or stop draining) nodes: APPEND to (SUBTRACT from) the
//	    cluster-default dynamic config strata.balancer.decommission.nodes
//	strata cluster balance status
//	    replicas, leaders and local bytes per node, the reassignments in
//	    flight, and what the balancer would move next — planned here by the
//	    same metadata/balancer the controller runs, from what the cluster
//	    reports over the Kafka protocol (Metadata, DescribeLogDirs,
//	    DescribeConfigs, ListPartitionReassignments)

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/balancer"
	"github.com/strata-streaming/strata/metadata/cluster"
)

const decommissionConfig = "strata.balancer.decommission.nodes"

func init() { rootCmd.AddCommand(newClusterCmd()) }

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Self-balancing: decommission nodes, see the balance"}
	balance := &cobra.Command{Use: "balance", Short: "The self-balancer's view of the cluster"}
	balance.AddCommand(newBalanceStatusCmd())
	cmd.AddCommand(newDecommissionCmd(), balance)
	return cmd
}

func newDecommissionCmd() *cobra.Command {
	var cancel bool
	cmd := &cobra.Command{
		Use:   "decommission NODE...",
		Short: "Drain every replica and leadership off nodes (--cancel: stop draining them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if n, err := strconv.ParseInt(a, 10, 32); err != nil || n < 0 {
					return fmt.Errorf("not a node id: %q", a)
				}
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			op := kmsg.IncrementalAlterConfigOpAppend
			if cancel {
				op = kmsg.IncrementalAlterConfigOpSubtract
			}
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			r := kmsg.NewIncrementalAlterConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, ""
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Op, c.Name, c.Value = op, decommissionConfig, kmsg.StringPtr(strings.Join(args, ","))
			r.Configs = append(r.Configs, c)
			req.Resources = append(req.Resources, r)
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return fmt.Errorf("decommission: %w", err)
			}
			if len(resp.Resources) != 1 {
				return fmt.Errorf("decommission: %d resources in the answer", len(resp.Resources))
			}
			if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
				if m := resp.Resources[0].ErrorMessage; m != nil && *m != "" {
					return fmt.Errorf("decommission: %w: %s", err, *m)
				}
				return fmt.Errorf("decommission: %w", err)
			}
			for _, a := range args {
				if cancel {
					fmt.Fprintf(cmd.OutOrStdout(), "node %s: no longer decommissioning\n", a)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "node %s: decommissioning; the balancer drains its replicas (strata cluster balance status)\n", a)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&cancel, "cancel", false, "stop decommissioning the nodes")
	return cmd
}

func newBalanceStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Replicas, leaders and local bytes per node, moves in flight and what the balancer would move next",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			md, err := adm.Metadata(ctx)
			if err != nil {
				return err
			}
			st := cluster.State{Brokers: map[int32]cluster.Broker{}, Topics: map[string]cluster.Topic{}}
			for _, b := range md.Brokers {
				rack := ""
				if b.Rack != nil {
					rack = *b.Rack
				}
				st.Brokers[b.NodeID] = cluster.Broker{NodeID: b.NodeID, Rack: rack}
			}
			leaders := map[int32]int{}
			for _, t := range md.Topics.Sorted() {
				if t.Err != nil || t.IsInternal {
					continue
				}
				ct := cluster.Topic{Name: t.Topic, Partitions: make([]cluster.Partition, len(t.Partitions))}
				for _, p := range t.Partitions.Sorted() {
					if int(p.Partition) < len(ct.Partitions) {
						ct.Partitions[p.Partition] = cluster.Partition{Replicas: p.Replicas, ISR: p.ISR, Leader: p.Leader}
						leaders[p.Leader]++
					}
				}
				st.Topics[t.Topic] = ct
			}
			ras, err := adm.ListPartitionReassignments(ctx, nil)
			if err != nil {
				return err
			}
			for _, ra := range ras.Sorted() {
				if t, ok := st.Topics[ra.Topic]; ok && int(ra.Partition) < len(t.Partitions) {
					t.Partitions[ra.Partition].AddingReplicas = ra.AddingReplicas
					t.Partitions[ra.Partition].RemovingReplicas = ra.RemovingReplicas
				}
			}
			loads := map[balancer.PartitionID]balancer.Load{}
			if dirs, err := adm.DescribeAllLogDirs(ctx, nil); err == nil {
				for _, d := range dirs.Sorted() {
					for _, p := range d.Topics.Sorted() {
						id := balancer.PartitionID{Topic: p.Topic, Partition: p.Partition}
						if l := loads[id]; !p.IsFuture && p.Size > l.Bytes {
							loads[id] = balancer.Load{Bytes: p.Size}
						}
					}
				}
			}
			cfg, enabled, err := balancerConfig(ctx, adm)
			if err != nil {
				return err
			}
			moves, status := balancer.Plan(st, loads, cfg)
			out := cmd.OutOrStdout()
			state := "enabled"
			if !enabled {
				state = "disabled (strata.balancer.enable=false)"
			}
			fmt.Fprintf(out, "Balancer: %s\nImbalance score: %g\nReassignments in flight: %d\n", state, status.Score, status.InFlight)
			fmt.Fprintf(out, "Next moves: %d (%d bytes to copy)\n", len(moves), status.BytesToMove)
			for _, m := range moves {
				fmt.Fprintf(out, "  %s-%d: %v -> %v (%s)\n", m.Topic, m.Partition, m.From, m.Target, m.Goal)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tRACK\tREPLICAS\tLEADERS\tLOCAL-BYTES\tSTATE")
			draining := map[int32]bool{}
			for _, id := range cfg.Drain {
				draining[id] = true
			}
			for _, id := range slices.Sorted(maps.Keys(st.Brokers)) {
				state := ""
				if draining[id] {
					state = fmt.Sprintf("decommissioning (%d replicas left)", status.Draining[id])
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%s\n", id, orDash(st.Brokers[id].Rack), countReplicas(st, id), leaders[id], status.Bytes[id], state)
			}
			return tw.Flush()
		},
	}
}

// balancerConfig reads the balancer's cluster-default configs.
func balancerConfig(ctx context.Context, adm *kadm.Client) (balancer.Config, bool, error) {
	cfg := balancer.DefaultConfig()
	cfg.DeadNodeTimeoutMs = 0                  // the nodes' heartbeats are not in the protocol
	rcs, err := adm.DescribeBrokerConfigs(ctx) // no broker: the cluster defaults
	if err != nil {
		return cfg, true, err
	}
	enabled := true
	for _, rc := range rcs {
		if rc.Err != nil {
			return cfg, true, fmt.Errorf("describe the cluster's configs: %w", rc.Err)
		}
		for _, c := range rc.Configs {
			v := c.MaybeValue()
			switch c.Key {
			case "strata.balancer.enable":
				enabled = v != "false"
			case "strata.balancer.max.concurrent.moves":
				if n, err := strconv.Atoi(v); err == nil {
					cfg.MaxMoves = n
				}
			case "strata.balancer.disk.threshold.percent":
				if n, err := strconv.Atoi(v); err == nil {
					cfg.Threshold = float64(n) / 100
				}
			case decommissionConfig:
				for _, f := range strings.Split(v, ",") {
					if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
						cfg.Drain = append(cfg.Drain, int32(n))
					}
				}
			}
		}
	}
	return cfg, enabled, nil
}

func countReplicas(st cluster.State, id int32) int {
	n := 0
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			if slices.Contains(p.TargetReplicas(), id) {
				n++
			}
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
