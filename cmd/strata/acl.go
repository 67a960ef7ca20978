package main

// strata acl create|list|delete: Kafka's ACL APIs (CreateAcls, DescribeAcls,
// DeleteAcls) with kafka-acls' flags: --allow-principal/--deny-principal,
// --allow-host/--deny-host, --operation, --topic, --group, --cluster,
// --transactional-id, --resource-pattern-type; list and delete take
// --principal too. Operation and pattern names are case-insensitive
// (Read, READ, read).

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newACLCmd()) }

func newACLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Create, list and delete ACLs (kafka-acls --add/--list/--remove)",
	}
	cmd.AddCommand(newACLCreateCmd(), newACLListCmd(), newACLDeleteCmd())
	return cmd
}

// aclFlags are the flags the three subcommands share.
type aclFlags struct {
	allow, deny           []string // principals
	allowHosts, denyHosts []string
	principal             string // list/delete
	operations            []string
	topics, groups, txns  []string
	cluster               bool
	pattern               string
}

func (f *aclFlags) resources(cmd *cobra.Command, defaultPattern string) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.operations, "operation", nil, "operation: Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All (repeatable)")
	fl.StringArrayVar(&f.topics, "topic", nil, "topic (repeatable; * for all)")
	fl.StringArrayVar(&f.groups, "group", nil, "consumer group (repeatable; * for all)")
	fl.StringArrayVar(&f.txns, "transactional-id", nil, "transactional id (repeatable; * for all)")
	fl.BoolVar(&f.cluster, "cluster", false, "the cluster resource")
	fl.StringVar(&f.pattern, "resource-pattern-type", defaultPattern, "literal or prefixed (list and delete also take any and match)")
}

type aclResource struct {
	typ  kmsg.ACLResourceType
	name string
}

func (f *aclFlags) resourceList() []aclResource {
	var out []aclResource
	for _, t := range f.topics {
		out = append(out, aclResource{kmsg.ACLResourceTypeTopic, t})
	}
	for _, g := range f.groups {
		out = append(out, aclResource{kmsg.ACLResourceTypeGroup, g})
	}
	for _, x := range f.txns {
		out = append(out, aclResource{kmsg.ACLResourceTypeTransactionalId, x})
	}
	if f.cluster {
		out = append(out, aclResource{kmsg.ACLResourceTypeCluster, "kafka-cluster"})
	}
	return out
}

// parseACLEnum parses a name of a kmsg enum, which ignores case, '-' and
// '_' (ClusterAction, CLUSTER_ACTION), and words the error for the CLI.
func parseACLEnum[T ~int8](what, s string, parse func(string) (T, error)) (T, error) {
	v, err := parse(s)
	if err != nil {
		return 0, fmt.Errorf("unknown %s %q", what, s)
	}
	return v, nil
}

func parseOperation(s string) (kmsg.ACLOperation, error) {
	return parseACLEnum("operation", s, kmsg.ParseACLOperation)
}

func parsePattern(s string) (kmsg.ACLResourcePatternType, error) {
	return parseACLEnum("resource pattern type", s, kmsg.ParseACLResourcePatternType)
}

func kafkaErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w (%s)", err, *msg)
	}
	return err
}

func newACLCreateCmd() *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create ACLs (kafka-acls --add)",
		Example: `  strata acl create --allow-principal User:alice --operation Read --operation Write --topic orders
  strata acl create --allow-principal User:svc --operation Read --group app- --resource-pattern-type prefixed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pattern, err := parsePattern(f.pattern)
			if err != nil {
				return err
			}
			if pattern != kmsg.ACLResourcePatternTypeLiteral && pattern != kmsg.ACLResourcePatternTypePrefixed {
				return errors.New("--resource-pattern-type must be literal or prefixed to create ACLs")
			}
			if len(f.allow)+len(f.deny) == 0 {
				return errors.New("name a principal with --allow-principal or --deny-principal")
			}
			if len(f.operations) == 0 {
				return errors.New("name an operation with --operation")
			}
			resources := f.resourceList()
			if len(resources) == 0 {
				return errors.New("name a resource: --topic, --group, --transactional-id or --cluster")
			}
			req := kmsg.NewPtrCreateACLsRequest()
			add := func(principals, hosts []string, perm kmsg.ACLPermissionType) error {
				if len(hosts) == 0 {
					hosts = []string{"*"}
				}
				for _, p := range principals {
					for _, h := range hosts {
						for _, o := range f.operations {
							op, err := parseOperation(o)
							if err != nil {
								return err
							}
							for _, r := range resources {
								c := kmsg.NewCreateACLsRequestCreation()
								c.ResourceType, c.ResourceName, c.ResourcePatternType = r.typ, r.name, pattern
								c.Principal, c.Host, c.Operation, c.PermissionType = p, h, op, perm
								req.Creations = append(req.Creations, c)
							}
						}
					}
				}
				return nil
			}
			if err := add(f.allow, f.allowHosts, kmsg.ACLPermissionTypeAllow); err != nil {
				return err
			}
			if err := add(f.deny, f.denyHosts, kmsg.ACLPermissionTypeDeny); err != nil {
				return err
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			var errs []error
			for i, r := range resp.Results {
				if err := kafkaErr(r.ErrorCode, r.ErrorMessage); err != nil {
					c := req.Creations[i]
					errs = append(errs, fmt.Errorf("%s %s %s on %s %s: %w", c.PermissionType, c.Principal, c.Operation, c.ResourceType, c.ResourceName, err))
				}
			}
			if len(errs) > 0 {
				return errors.Join(errs...)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %d ACLs\n", len(req.Creations))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.allow, "allow-principal", nil, "principal to allow, e.g. User:alice (repeatable)")
	fl.StringArrayVar(&f.deny, "deny-principal", nil, "principal to deny (repeatable)")
	fl.StringArrayVar(&f.allowHosts, "allow-host", nil, "host the allow applies to (default *)")
	fl.StringArrayVar(&f.denyHosts, "deny-host", nil, "host the deny applies to (default *)")
	f.resources(cmd, "literal")
	return cmd
}

// filters turns list/delete flags into ACL filters: one per resource (or
// one for any resource), principal and operation.
func (f *aclFlags) filters() ([]kmsg.DescribeACLsRequest, error) {
	pattern, err := parsePattern(f.pattern)
	if err != nil {
		return nil, err
	}
	resources := f.resourceList()
	if len(resources) == 0 {
		resources = []aclResource{{typ: kmsg.ACLResourceTypeAny}}
	}
	ops := []kmsg.ACLOperation{kmsg.ACLOperationAny}
	if len(f.operations) > 0 {
		ops = ops[:0]
		for _, o := range f.operations {
			op, err := parseOperation(o)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	var out []kmsg.DescribeACLsRequest
	for _, r := range resources {
		for _, op := range ops {
			d := kmsg.NewDescribeACLsRequest()
			d.ResourceType, d.ResourcePatternType, d.Operation, d.PermissionType = r.typ, pattern, op, kmsg.ACLPermissionTypeAny
			if r.typ != kmsg.ACLResourceTypeAny {
				d.ResourceName = kmsg.StringPtr(r.name)
			}
			if f.principal != "" {
				d.Principal = kmsg.StringPtr(f.principal)
			}
			out = append(out, d)
		}
	}
	return out, nil
}

func newACLListCmd() *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List ACLs (kafka-acls --list)",
		Example: "  strata acl list --topic orders\n  strata acl list --principal User:alice",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filters, err := f.filters()
			if err != nil {
				return err
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PRINCIPAL\tHOST\tOPERATION\tPERMISSION\tRESOURCE\tNAME\tPATTERN")
			seen := map[string]bool{}
			for i := range filters {
				resp, err := filters[i].RequestWith(ctx, cl)
				if err != nil {
					return err
				}
				if err := kafkaErr(resp.ErrorCode, resp.ErrorMessage); err != nil {
					return err
				}
				for _, r := range resp.Resources {
					for _, a := range r.ACLs {
						line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", a.Principal, a.Host, a.Operation, a.PermissionType, r.ResourceType, r.ResourceName, r.ResourcePatternType)
						if !seen[line] {
							seen[line] = true
							fmt.Fprintln(tw, line)
						}
					}
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&f.principal, "principal", "", "only ACLs of this principal")
	f.resources(cmd, "any")
	return cmd
}

func newACLDeleteCmd() *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:     "delete",
		Short:   "Delete the ACLs matching the flags (kafka-acls --remove)",
		Example: "  strata acl delete --principal User:alice --topic orders",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.principal == "" && len(f.resourceList()) == 0 {
				return errors.New("name a --principal or a resource (--topic, --group, --transactional-id, --cluster): deleting every ACL takes both flags' wildcards explicitly")
			}
			filters, err := f.filters()
			if err != nil {
				return err
			}
			req := kmsg.NewPtrDeleteACLsRequest()
			for _, d := range filters {
				df := kmsg.NewDeleteACLsRequestFilter()
				df.ResourceType, df.ResourceName, df.ResourcePatternType = d.ResourceType, d.ResourceName, d.ResourcePatternType
				df.Principal, df.Host, df.Operation, df.PermissionType = d.Principal, d.Host, d.Operation, d.PermissionType
				req.Filters = append(req.Filters, df)
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			n := 0
			for _, r := range resp.Results {
				if err := kafkaErr(r.ErrorCode, r.ErrorMessage); err != nil {
					return err
				}
				n += len(r.MatchingACLs)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d ACLs\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.principal, "principal", "", "only ACLs of this principal")
	f.resources(cmd, "literal")
	return cmd
}
