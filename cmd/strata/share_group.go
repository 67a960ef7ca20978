package main

// strata share-group: list, describe and delete share groups (KIP-932,
// queues), through kadm (ListGroupsByType "share", DescribeShareGroups,
// DescribeShareGroupOffsets, ListEndOffsets, DeleteGroups). Lag is what
// the broker reports: records up to the high watermark not yet
// acknowledged (nor archived).

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() { rootCmd.AddCommand(newShareGroupCmd()) }

func newShareGroupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "share-group",
		Short: "List, describe and delete share groups (queues, KIP-932)",
	}
	del := newGroupDeleteCmd()
	del.Short = "Delete share groups without members and their share-partition state"
	cmd.AddCommand(newShareGroupListCmd(), newShareGroupDescribeCmd(), del)
	return cmd
}

func newShareGroupListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List share groups with their state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			groups, err := adm.ListGroupsByType(ctx, []string{"share"})
			if err != nil {
				return fmt.Errorf("list share groups: %w", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tSTATE")
			for _, g := range groups.Sorted() {
				fmt.Fprintf(tw, "%s\t%s\n", g.Group, dashIfEmpty(g.State))
			}
			return tw.Flush()
		},
	}
}

func newShareGroupDescribeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP",
		Short: "Show a share group's members and, per partition, start offset, log end offset and lag",
		Long: "Show a share group's state and, per share-partition, its start offset (every\n" +
			"record before it is acknowledged or archived), the log end offset and the lag\n" +
			"(records not yet acknowledged), then its members with their assignments.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := adm.DescribeShareGroups(ctx, group)
			if err != nil {
				return groupError(group, err, "")
			}
			d := described[group]
			offsets, err := adm.DescribeShareGroupOffsets(ctx, group)
			if err != nil {
				return groupError(group, err, "")
			}
			o := offsets[group]
			if d.Err != nil && o.Err != nil {
				return groupError(group, kerr.GroupIDNotFound, "")
			}
			var ends kadm.ListedOffsets
			if topics := o.Offsets; len(topics) > 0 {
				names := make([]string, 0, len(topics))
				for t := range topics {
					names = append(names, t)
				}
				ends, _ = adm.ListEndOffsets(ctx, names...)
			}
			return writeShareGroupDescription(cmd.OutOrStdout(), group, d, o, ends)
		},
	}
}

func writeShareGroupDescription(w io.Writer, group string, d kadm.DescribedShareGroup, o kadm.DescribedShareGroupOffsets, ends kadm.ListedOffsets) error {
	state := d.GroupState
	if d.Err != nil {
		state = "Empty" // no members on the coordinator (e.g. after a restart)
	}
	fmt.Fprintf(w, "GROUP %s  STATE %s  MEMBERS %d\n\n", group, state, len(d.Members))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tSTART-OFFSET\tLOG-END-OFFSET\tLAG")
	var rows []kadm.ShareOffset
	for _, ps := range o.Offsets {
		for _, p := range ps {
			rows = append(rows, p)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	for _, r := range rows {
		end := "-"
		if l, ok := ends.Lookup(r.Topic, r.Partition); ok && l.Err == nil {
			end = fmt.Sprint(l.Offset)
		}
		start, lag := "-", "-"
		if r.StartOffset >= 0 {
			start = fmt.Sprint(r.StartOffset)
		}
		if r.Lag >= 0 {
			lag = fmt.Sprint(r.Lag)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Topic, r.Partition, start, end, lag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(d.Members) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER-ID\tCLIENT-ID\tHOST\tEPOCH\tASSIGNMENT")
	for _, m := range d.Members {
		var parts []string
		for _, t := range m.Assignment.Sorted() {
			ps := make([]string, len(t.Partitions))
			for i, p := range t.Partitions {
				ps[i] = fmt.Sprint(p)
			}
			parts = append(parts, t.Topic+":"+strings.Join(ps, ","))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.MemberID, dashIfEmpty(m.ClientID), dashIfEmpty(m.ClientHost), m.MemberEpoch, dashIfEmpty(strings.Join(parts, " ")))
	}
	return tw.Flush()
}
