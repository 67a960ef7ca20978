package main

// strata quota set|describe: client quotas through KIP-546's
// AlterClientQuotas and DescribeClientQuotas, with kafka-configs' words:
// an entity is --user NAME or --user-default and/or --client-id NAME or
// --client-id-default; --add-config k=v,… sets and --delete-config k,…
// removes producer_byte_rate, consumer_byte_rate, request_percentage and
// controller_mutation_rate.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func init() { rootCmd.AddCommand(newQuotaCmd()) }

func newQuotaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Set and describe client quotas (kafka-configs --entity-type users/clients)",
	}
	cmd.AddCommand(newQuotaSetCmd(), newQuotaDescribeCmd())
	return cmd
}

// quotaEntityFlags name one entity's parts.
type quotaEntityFlags struct {
	user, client               string
	userDefault, clientDefault bool
}

func (f *quotaEntityFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.user, "user", "", "the user (principal name)")
	fl.BoolVar(&f.userDefault, "user-default", false, "the default user")
	fl.StringVar(&f.client, "client-id", "", "the client id")
	fl.BoolVar(&f.clientDefault, "client-id-default", false, "the default client id")
}

func (f *quotaEntityFlags) entity() (kadm.ClientQuotaEntity, error) {
	var e kadm.ClientQuotaEntity
	part := func(typ, name string, def bool) error {
		switch {
		case name != "" && def:
			return fmt.Errorf("give --%s or --%s-default, not both", typ, typ)
		case def:
			e = append(e, kadm.ClientQuotaEntityComponent{Type: typ})
		case name != "":
			e = append(e, kadm.ClientQuotaEntityComponent{Type: typ, Name: kadm.StringPtr(name)})
		}
		return nil
	}
	if err := part("user", f.user, f.userDefault); err != nil {
		return nil, err
	}
	if err := part("client-id", f.client, f.clientDefault); err != nil {
		return nil, err
	}
	return e, nil
}

func newQuotaSetCmd() *cobra.Command {
	var (
		f        quotaEntityFlags
		add, del []string
		validate bool
	)
	cmd := &cobra.Command{
		Use:   "set",
		Short: "Set or remove an entity's quotas",
		Example: `  strata quota set --client-id ingest --add-config producer_byte_rate=10485760
  strata quota set --user-default --add-config consumer_byte_rate=52428800,request_percentage=200
  strata quota set --user alice --delete-config producer_byte_rate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			entity, err := f.entity()
			if err != nil {
				return err
			}
			if len(entity) == 0 {
				return errors.New("name an entity: --user, --user-default, --client-id or --client-id-default")
			}
			var ops []kadm.AlterClientQuotaOp
			for _, kv := range splitList(add) {
				k, v, ok := strings.Cut(kv, "=")
				n, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if !ok || perr != nil {
					return fmt.Errorf("--add-config %q: want key=number", kv)
				}
				ops = append(ops, kadm.AlterClientQuotaOp{Key: strings.TrimSpace(k), Value: n})
			}
			for _, k := range splitList(del) {
				ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
			}
			if len(ops) == 0 {
				return errors.New("nothing to change: give --add-config or --delete-config")
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			alter := adm.AlterClientQuotas
			if validate {
				alter = adm.ValidateAlterClientQuotas
			}
			res, err := alter(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
			if err != nil {
				return err
			}
			for _, r := range res {
				if r.Err != nil {
					return fmt.Errorf("quota %s: %w (%s)", entityString(entity), r.Err, r.ErrMessage)
				}
			}
			verb := "updated"
			if validate {
				verb = "valid, not applied"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "quotas of %s %s\n", entityString(entity), verb)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringArrayVar(&add, "add-config", nil, "quotas to set, key=value[,key=value…]")
	cmd.Flags().StringArrayVar(&del, "delete-config", nil, "quotas to remove, key[,key…]")
	cmd.Flags().BoolVar(&validate, "validate-only", false, "check the change without applying it")
	return cmd
}

// entityString is user=alice,client-id=<default>.
func entityString(e kadm.ClientQuotaEntity) string {
	parts := make([]string, len(e))
	for i, c := range e {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// splitList splits repeated comma-separated flag values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func newQuotaDescribeCmd() *cobra.Command {
	var f quotaEntityFlags
	cmd := &cobra.Command{
		Use:     "describe",
		Short:   "Describe quotas: all, or those of the entities the flags match",
		Example: "  strata quota describe\n  strata quota describe --user alice",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			entity, err := f.entity()
			if err != nil {
				return err
			}
			var filter []kadm.DescribeClientQuotaComponent
			for _, p := range entity {
				c := kadm.DescribeClientQuotaComponent{Type: p.Type, MatchName: p.Name, MatchType: 0}
				if p.Name == nil {
					c.MatchType = 1
				}
				filter = append(filter, c)
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := adm.DescribeClientQuotas(ctx, false, filter)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ENTITY\tQUOTA\tVALUE")
			for _, q := range described {
				for _, v := range q.Values {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", entityString(q.Entity), v.Key, strconv.FormatFloat(v.Value, 'f', -1, 64))
				}
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	return cmd
}
