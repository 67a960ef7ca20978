package main

// strata client-metrics create|alter|describe|delete|list: KIP-714
// client-metrics subscriptions (CLIENT_METRICS config resources) through
// IncrementalAlterConfigs, DescribeConfigs and ListConfigResources, with
// kafka-client-metrics' flags: --name or --generate-name, --metrics
// (prefixes, comma-separated, * for all), --interval (ms) and --match
// (selector=regex, comma-separated or repeated).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newClientMetricsCmd()) }

func newClientMetricsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client-metrics",
		Short: "Manage client-metrics subscriptions (KIP-714, kafka-client-metrics)",
	}
	cmd.AddCommand(
		newClientMetricsSetCmd("create", "Create a subscription (fails if it exists)"),
		newClientMetricsSetCmd("alter", "Change a subscription's metrics, interval or match (fails if it does not exist)"),
		newClientMetricsDescribeCmd(),
		newClientMetricsDeleteCmd(),
		newClientMetricsListCmd(),
	)
	return cmd
}

// listClientMetrics returns the subscriptions' names.
func listClientMetrics(ctx context.Context, cl *kgo.Client) ([]string, error) {
	l, err := kadm.NewClient(cl).ListConfigResources(ctx, kadm.ConfigResourceClientMetrics)
	if err == nil {
		err = l.Err
	}
	if err != nil {
		return nil, fmt.Errorf("list client metrics: %w", err)
	}
	return l.Names(), nil
}

// alterClientMetrics sends one IncrementalAlterConfigs for a subscription.
func alterClientMetrics(ctx context.Context, cl *kgo.Client, name string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeClientMetrics, name, ops
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("client metrics %s: %d results for one resource", name, len(resp.Resources))
	}
	if res := resp.Resources[0]; res.ErrorCode != 0 {
		msg := ""
		if res.ErrorMessage != nil {
			msg = " (" + *res.ErrorMessage + ")"
		}
		return fmt.Errorf("client metrics %s: %w%s", name, kerr.ErrorForCode(res.ErrorCode), msg)
	}
	return nil
}

func setOp(name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = kmsg.IncrementalAlterConfigOpSet, name, kmsg.StringPtr(value)
	return c
}

func newClientMetricsSetCmd(verb, short string) *cobra.Command {
	var (
		name            string
		generate        bool
		metrics, match  []string
		interval        int64
		generateAllowed = verb == "create"
	)
	cmd := &cobra.Command{
		Use:   verb,
		Short: short,
		Example: `  strata client-metrics ` + verb + ` --name producers --metrics org.apache.kafka.producer. --interval 60000 --match client_id=app.*
  strata client-metrics ` + verb + ` --name everything --metrics '*' --match client_software_name=apache-kafka-java`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case generate && name != "":
				return errors.New("give --name or --generate-name, not both")
			case generate:
				var b [16]byte
				_, _ = rand.Read(b[:])
				name = base64.RawURLEncoding.EncodeToString(b[:])
			case name == "" && generateAllowed:
				return errors.New("name the subscription: --name or --generate-name")
			case name == "":
				return errors.New("name the subscription: --name")
			}
			var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
			if cmd.Flags().Changed("metrics") {
				ops = append(ops, setOp("metrics", strings.Join(splitList(metrics), ",")))
			}
			if cmd.Flags().Changed("interval") {
				ops = append(ops, setOp("interval.ms", strconv.FormatInt(interval, 10)))
			}
			if cmd.Flags().Changed("match") {
				ops = append(ops, setOp("match", strings.Join(splitList(match), ",")))
			}
			if len(ops) == 0 {
				return errors.New("nothing to set: give --metrics, --interval or --match")
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			names, err := listClientMetrics(ctx, cl)
			if err != nil {
				return err
			}
			exists := slices.Contains(names, name)
			if verb == "create" && exists {
				return fmt.Errorf("client metrics %s already exists (use alter)", name)
			}
			if verb == "alter" && !exists {
				return fmt.Errorf("client metrics %s does not exist (use create)", name)
			}
			if err := alterClientMetrics(ctx, cl, name, ops); err != nil {
				return err
			}
			past := map[string]string{"create": "created", "alter": "altered"}[verb]
			fmt.Fprintf(cmd.OutOrStdout(), "client metrics %s %s\n", name, past)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "the subscription's name")
	if generateAllowed {
		fl.BoolVar(&generate, "generate-name", false, "name the subscription with a random id")
	}
	fl.StringArrayVar(&metrics, "metrics", nil, "metric name prefixes, comma-separated (* for all; empty for none)")
	fl.Int64Var(&interval, "interval", 0, "push interval in ms (100 to 3600000; default 300000)")
	fl.StringArrayVar(&match, "match", nil, "client match patterns selector=regex, comma-separated or repeated; selectors: client_instance_id, client_id, client_software_name, client_software_version, client_source_address, client_source_port")
	return cmd
}

func newClientMetricsDescribeCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Describe one subscription (--name) or all",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			names := []string{name}
			if name == "" {
				if names, err = listClientMetrics(ctx, cl); err != nil {
					return err
				}
			} else if all, err := listClientMetrics(ctx, cl); err != nil {
				return err
			} else if !slices.Contains(all, name) {
				return fmt.Errorf("client metrics %s does not exist", name)
			}
			if len(names) == 0 {
				return nil
			}
			req := kmsg.NewPtrDescribeConfigsRequest()
			for _, n := range names {
				r := kmsg.NewDescribeConfigsRequestResource()
				r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, n
				req.Resources = append(req.Resources, r)
			}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, r := range resp.Resources {
				if r.ErrorCode != 0 {
					return fmt.Errorf("client metrics %s: %w", r.ResourceName, kerr.ErrorForCode(r.ErrorCode))
				}
				fmt.Fprintf(out, "Client metrics configs for %s are:\n", r.ResourceName)
				for _, c := range r.Configs {
					v := ""
					if c.Value != nil {
						v = *c.Value
					}
					fmt.Fprintf(out, "  %s=%s\n", c.Name, v)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the subscription (all when not given)")
	return cmd
}

func newClientMetricsDeleteCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete a subscription",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("name the subscription: --name")
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			names, err := listClientMetrics(ctx, cl)
			if err != nil {
				return err
			}
			if !slices.Contains(names, name) {
				return fmt.Errorf("client metrics %s does not exist", name)
			}
			var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
			for _, k := range []string{"metrics", "interval.ms", "match"} {
				c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				c.Op, c.Name = kmsg.IncrementalAlterConfigOpDelete, k
				ops = append(ops, c)
			}
			if err := alterClientMetrics(ctx, cl, name, ops); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "client metrics %s deleted\n", name)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the subscription")
	return cmd
}

func newClientMetricsListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the subscriptions' names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			names, err := listClientMetrics(ctx, cl)
			if err != nil {
				return err
			}
			for _, n := range names {
				fmt.Fprintln(cmd.OutOrStdout(), n)
			}
			return nil
		},
	}
}
