package main

// strata config get|set: kafka-configs --describe/--alter for brokers, the
// cluster default, broker loggers, groups and topics, over DescribeConfigs
// and IncrementalAlterConfigs. A broker's (and its loggers') request goes
// to that broker, as Kafka's admin client sends it.
//
//	strata config get --entity-type brokers --entity-name 1 [--all]
//	strata config set --entity-type brokers --entity-default --add-config log.retention.ms=3600000
//	strata config set --entity-type broker-loggers --entity-name 1 --add-config kafka.request.logger=DEBUG
//	strata config set --entity-type groups --entity-name orders --add-config consumer.session.timeout.ms=50000
//	strata config set --entity-type topics --entity-name orders --delete-config retention.ms

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { rootCmd.AddCommand(newConfigCmd()) }

// configEntity is the resource a config command names.
type configEntity struct {
	typ  kmsg.ConfigResourceType
	name string
	// broker, when >= 0, is the broker the request must go to.
	broker int
	label  string // "broker 1", "default broker", "group orders", …
}

type configEntityFlags struct {
	entityType, entityName string
	entityDefault          bool
}

func (f *configEntityFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.entityType, "entity-type", "", "brokers, broker-loggers, groups or topics")
	fl.StringVar(&f.entityName, "entity-name", "", "the broker id, group id or topic name")
	fl.BoolVar(&f.entityDefault, "entity-default", false, "the cluster-wide default (brokers only)")
}

func (f *configEntityFlags) resolve() (configEntity, error) {
	e := configEntity{name: f.entityName, broker: -1}
	if f.entityDefault && f.entityName != "" {
		return e, errors.New("give --entity-name or --entity-default, not both")
	}
	switch f.entityType {
	case "brokers", "broker":
		e.typ = kmsg.ConfigResourceTypeBroker
		if f.entityDefault {
			e.name, e.label = "", "default broker"
			return e, nil
		}
		id, err := strconv.Atoi(f.entityName)
		if err != nil || id < 0 {
			return e, fmt.Errorf("--entity-name %q: a broker id (or --entity-default)", f.entityName)
		}
		e.broker, e.label = id, "broker "+f.entityName
	case "broker-loggers", "broker-logger":
		e.typ = kmsg.ConfigResourceTypeBrokerLogger
		id, err := strconv.Atoi(f.entityName)
		if err != nil || id < 0 || f.entityDefault {
			return e, fmt.Errorf("--entity-name %q: broker loggers need a broker id", f.entityName)
		}
		e.broker, e.label = id, "broker-logger "+f.entityName
	case "groups", "group":
		e.typ, e.label = kmsg.ConfigResourceTypeGroupConfig, "group "+f.entityName
	case "topics", "topic":
		e.typ, e.label = kmsg.ConfigResourceTypeTopic, "topic "+f.entityName
	case "":
		return e, errors.New("--entity-type is required (brokers, broker-loggers, groups or topics)")
	default:
		return e, fmt.Errorf("--entity-type %q: brokers, broker-loggers, groups or topics", f.entityType)
	}
	if e.typ != kmsg.ConfigResourceTypeBroker && (f.entityDefault || f.entityName == "") {
		return e, fmt.Errorf("--entity-type %s needs --entity-name", f.entityType)
	}
	return e, nil
}

func (e configEntity) target(cl *kgo.Client) kmsg.Requestor {
	if e.broker >= 0 {
		return cl.Broker(e.broker)
	}
	return cl
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Describe and alter broker, logger, group and topic configs (kafka-configs)"}
	cmd.AddCommand(newConfigGetCmd(), newConfigSetCmd())
	return cmd
}

func newConfigGetCmd() *cobra.Command {
	var (
		ef  configEntityFlags
		all bool
	)
	cmd := &cobra.Command{
		Use:     "get",
		Aliases: []string{"describe"},
		Short:   "The dynamic configs of an entity, or every config with --all",
		Example: "  strata config get --entity-type brokers --entity-name 1 --all",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := ef.resolve()
			if err != nil {
				return err
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.IncludeSynonyms = true
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = e.typ, e.name
			req.Resources = append(req.Resources, r)
			resp, err := req.RequestWith(ctx, e.target(cl))
			if err != nil {
				return fmt.Errorf("%s: describe configs: %w", e.label, err)
			}
			if len(resp.Resources) != 1 {
				return fmt.Errorf("%s: describe configs: %d resources in the answer", e.label, len(resp.Resources))
			}
			res := resp.Resources[0]
			if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
				return configError(e, err, res.ErrorMessage)
			}
			configs := res.Configs
			sort.Slice(configs, func(i, j int) bool { return configs[i].Name < configs[j].Name })
			out := cmd.OutOrStdout()
			// Without --all, only what was set for the entity (loggers:
			// all of them, each is a setting).
			dynamic := func(c kmsg.DescribeConfigsResponseResourceConfig) bool {
				switch c.Source {
				case kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigSourceDynamicBrokerLoggerConfig, kmsg.ConfigSourceGroupConfig, kmsg.ConfigSourceClientMetricsConfig:
					return true
				case kmsg.ConfigSourceDynamicBrokerConfig:
					return e.typ == kmsg.ConfigResourceTypeBroker && e.name != ""
				case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
					return e.typ == kmsg.ConfigResourceTypeBroker && e.name == ""
				}
				return false
			}
			if all {
				fmt.Fprintf(out, "All configs for %s are:\n", e.label)
			} else {
				fmt.Fprintf(out, "Dynamic configs for %s are:\n", e.label)
			}
			for _, c := range configs {
				if !all && !dynamic(c) {
					continue
				}
				value := "null"
				if c.Value != nil {
					value = *c.Value
				}
				var syn []string
				for _, s := range c.ConfigSynonyms {
					v := "null"
					if s.Value != nil {
						v = *s.Value
					}
					syn = append(syn, s.Source.String()+":"+s.Name+"="+v)
				}
				fmt.Fprintf(out, "  %s=%s sensitive=%t synonyms={%s}\n", c.Name, value, c.IsSensitive, strings.Join(syn, ", "))
			}
			return nil
		},
	}
	ef.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "every config with its effective value, not only the dynamic ones")
	return cmd
}

func newConfigSetCmd() *cobra.Command {
	var (
		ef           configEntityFlags
		adds, delets []string
		validateOnly bool
	)
	cmd := &cobra.Command{
		Use:     "set",
		Aliases: []string{"alter"},
		Short:   "Set (--add-config) and remove (--delete-config) configs of an entity (IncrementalAlterConfigs)",
		Example: "  strata config set --entity-type brokers --entity-default --add-config 'log.retention.ms=3600000,log.cleanup.policy=[delete,compact]'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := ef.resolve()
			if err != nil {
				return err
			}
			sets, err := parseConfigList(adds)
			if err != nil {
				return err
			}
			var deletes []string
			for _, d := range delets {
				for _, k := range strings.Split(d, ",") {
					if k = strings.TrimSpace(k); k != "" {
						deletes = append(deletes, k)
					}
				}
			}
			if len(sets) == 0 && len(deletes) == 0 {
				return errors.New("nothing to alter: give --add-config k=v[,k=v] and/or --delete-config k[,k]")
			}
			cl, ctx, done, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer done()
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			req.ValidateOnly = validateOnly
			r := kmsg.NewIncrementalAlterConfigsRequestResource()
			r.ResourceType, r.ResourceName = e.typ, e.name
			for _, kv := range sets {
				c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				c.Op, c.Name, c.Value = kmsg.IncrementalAlterConfigOpSet, kv[0], kmsg.StringPtr(kv[1])
				r.Configs = append(r.Configs, c)
			}
			for _, k := range deletes {
				c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				c.Op, c.Name = kmsg.IncrementalAlterConfigOpDelete, k
				r.Configs = append(r.Configs, c)
			}
			req.Resources = append(req.Resources, r)
			resp, err := req.RequestWith(ctx, e.target(cl))
			if err != nil {
				return fmt.Errorf("%s: alter configs: %w", e.label, err)
			}
			if len(resp.Resources) != 1 {
				return fmt.Errorf("%s: alter configs: %d resources in the answer", e.label, len(resp.Resources))
			}
			if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
				return configError(e, err, resp.Resources[0].ErrorMessage)
			}
			if validateOnly {
				fmt.Fprintf(cmd.OutOrStdout(), "Validated the config change for %s.\n", e.label)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Completed updating config for %s.\n", e.label)
			return nil
		},
	}
	ef.add(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&adds, "add-config", nil, "k=v pairs, comma-separated, list values in brackets: k=[a,b] (repeatable)")
	f.StringArrayVar(&delets, "delete-config", nil, "config names to remove, comma-separated (repeatable)")
	f.BoolVar(&validateOnly, "validate-only", false, "check the change without making it")
	return cmd
}

// parseConfigList reads kafka-configs' --add-config syntax: k=v pairs
// separated by commas, a value in square brackets may hold commas.
func parseConfigList(args []string) ([][2]string, error) {
	var out [][2]string
	seen := map[string]bool{}
	for _, arg := range args {
		rest := arg
		for rest != "" {
			eq := strings.IndexByte(rest, '=')
			if eq <= 0 {
				return nil, fmt.Errorf("--add-config %q: expected key=value", arg)
			}
			key := strings.TrimSpace(rest[:eq])
			rest = rest[eq+1:]
			var value string
			if strings.HasPrefix(rest, "[") {
				end := strings.IndexByte(rest, ']')
				if end < 0 {
					return nil, fmt.Errorf("--add-config %q: unclosed [ in the value of %s", arg, key)
				}
				value, rest = rest[1:end], rest[end+1:]
				if rest != "" && rest[0] != ',' {
					return nil, fmt.Errorf("--add-config %q: expected , after ]", arg)
				}
			} else {
				end := strings.IndexByte(rest, ',')
				if end < 0 {
					end = len(rest)
				}
				value, rest = rest[:end], rest[end:]
			}
			rest = strings.TrimPrefix(rest, ",")
			if key == "" || seen[key] {
				return nil, fmt.Errorf("--add-config %q: empty or repeated key %q", arg, key)
			}
			seen[key] = true
			out = append(out, [2]string{key, strings.TrimSpace(value)})
		}
	}
	return out, nil
}

func configError(e configEntity, err error, msg *string) error {
	if msg != nil && *msg != "" {
		return fmt.Errorf("%s: %w: %s", e.label, err, *msg)
	}
	return fmt.Errorf("%s: %w", e.label, err)
}
