package main

// strata schema: a CLI over a schema registry's REST API (Strata's own,
// `strata server --set schema.registry.enable=true`, or Confluent's),
// through registry/serde.
//
//	strata schema register SUBJECT -f FILE [--type avro|protobuf|json] [--reference NAME=SUBJECT:VERSION]… [--normalize]
//	strata schema get SUBJECT [--version N|latest] | get --id N   [--json]
//	strata schema list [--deleted] [--prefix P] | versions SUBJECT | delete SUBJECT [--version N] [--permanent]
//	strata schema check-compat SUBJECT -f FILE [--type …] [--version latest|N]
//	strata schema config [SUBJECT] [--set LEVEL] | mode [SUBJECT] [--set MODE]
//
// Registry errors print as one line, `strata: <message> (error_code N)`,
// and exit 1 (serde.Error's text).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
)

const (
	defaultSchemaRegistryURL = "http://127.0.0.1:8081"
	schemaRegistryURLEnv     = "STRATA_SCHEMA_REGISTRY_URL"
	schemaRegistryPassEnv    = "STRATA_SCHEMA_REGISTRY_PASSWORD"
)

func init() { rootCmd.AddCommand(newSchemaCmd()) }

// schemaRegistryURLDefault is STRATA_SCHEMA_REGISTRY_URL if set, else
// http://127.0.0.1:8081.
func schemaRegistryURLDefault() string {
	if v := strings.TrimSpace(os.Getenv(schemaRegistryURLEnv)); v != "" {
		return v
	}
	return defaultSchemaRegistryURL
}

func newSchemaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Register, read, check and delete schemas in a schema registry",
		Long: `Register, read, check and delete schemas through a Confluent-compatible
schema registry's REST API: Strata's own (strata server --set
schema.registry.enable=true) or Confluent's.

--url names the registry (` + schemaRegistryURLEnv + ` sets the default).
With --user, the password comes from --password or ` + schemaRegistryPassEnv + `;
credentials may also be given in the URL (http://user:password@host:port).
--ca-file trusts that PEM CA for an https registry.

Errors the registry answers print as one line, "strata: <message>
(error_code N)", and exit with status 1.`,
		Example: `  strata schema register orders-value -f order.avsc
  strata schema register orders-value -f order.proto --reference common.proto=common:1
  strata schema get orders-value --version latest
  strata schema check-compat orders-value -f order-v2.avsc
  strata schema config orders-value --set FULL`,
	}
	pf := cmd.PersistentFlags()
	pf.String("url", schemaRegistryURLDefault(), "schema registry URL; "+schemaRegistryURLEnv+" sets the default")
	pf.String("user", "", "basic-auth user (the password from --password or "+schemaRegistryPassEnv+")")
	pf.String("password", "", "basic-auth password (prefer "+schemaRegistryPassEnv+": arguments are visible to other users)")
	pf.String("ca-file", "", "PEM file of the CA that signed an https registry's certificate")
	cmd.AddCommand(newSchemaRegisterCmd(), newSchemaGetCmd(), newSchemaListCmd(), newSchemaVersionsCmd(),
		newSchemaDeleteCmd(), newSchemaCheckCompatCmd(), newSchemaConfigCmd(), newSchemaModeCmd())
	return cmd
}

// registryAccess is how to reach a registry: its URL and credentials.
type registryAccess struct {
	url, user, password, caFile string
}

// client builds a registry client bounded by the command's --timeout.
func (a registryAccess) client(cmd *cobra.Command) (*serde.Client, error) {
	opts := []serde.Opt{serde.Timeout(connSettingsOf(cmd).timeout)}
	password := a.password
	if password == "" {
		password = os.Getenv(schemaRegistryPassEnv)
	}
	if a.user != "" {
		opts = append(opts, serde.BasicAuth(a.user, password))
	}
	if a.caFile != "" {
		pem, err := os.ReadFile(a.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", a.caFile)
		}
		opts = append(opts, serde.TLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	return serde.NewClient(a.url, opts...)
}

// schemaRun is the shape of every schema subcommand: a client of --url
// and a context bounded by --timeout.
func schemaRun(f func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		flags := cmd.Flags()
		access := registryAccess{}
		access.url, _ = flags.GetString("url")
		access.user, _ = flags.GetString("user")
		access.password, _ = flags.GetString("password")
		access.caFile, _ = flags.GetString("ca-file")
		c, err := access.client(cmd)
		if err != nil {
			return err
		}
		ctx, cancel := connSettingsOf(cmd).requestContext(cmd)
		defer cancel()
		return f(ctx, c, cmd, args)
	}
}

// parseSchemaType maps --type to the registry's type; "" guesses from the
// file name: .proto is Protobuf, anything else Avro (Confluent's default;
// JSON Schema files need --type json).
func parseSchemaType(name, file string) (schema.Type, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		if strings.EqualFold(filepath.Ext(file), ".proto") {
			return schema.Protobuf, nil
		}
		return schema.Avro, nil
	case "avro":
		return schema.Avro, nil
	case "protobuf", "proto":
		return schema.Protobuf, nil
	case "json", "jsonschema", "json_schema":
		return schema.JSON, nil
	}
	return "", fmt.Errorf("--type %q: want avro, protobuf or json", name)
}

// parseReferences reads --reference NAME=SUBJECT:VERSION flags (VERSION a
// number, or latest).
func parseReferences(flags []string) ([]schema.Reference, error) {
	var refs []schema.Reference
	for _, f := range flags {
		name, target, ok := strings.Cut(f, "=")
		subject, version, ok2 := cutVersion(target)
		if !ok || !ok2 || name == "" || subject == "" {
			return nil, fmt.Errorf("--reference %q: want NAME=SUBJECT:VERSION", f)
		}
		refs = append(refs, schema.Reference{Name: name, Subject: subject, Version: version})
	}
	return refs, nil
}

// cutVersion splits SUBJECT:VERSION at the last colon; VERSION is a
// positive number or latest (-1). ok is false without a valid version.
func cutVersion(s string) (subject string, version int, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	v, err := parseVersion(s[i+1:])
	if err != nil {
		return s, 0, false
	}
	return s[:i], v, true
}

// parseVersion is a version flag: latest (-1) or a positive number.
func parseVersion(s string) (int, error) {
	if strings.EqualFold(s, "latest") || s == "-1" {
		return -1, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("version %q: want a number from 1, or latest", s)
	}
	return v, nil
}

// schemaFileFlags are the flags of commands that read a schema file.
type schemaFileFlags struct {
	file       string
	typeName   string
	references []string
}

func (s *schemaFileFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&s.file, "file", "f", "", "the schema file (required)")
	f.StringVar(&s.typeName, "type", "", "avro, protobuf or json (default: protobuf for a .proto file, else avro)")
	f.StringArrayVar(&s.references, "reference", nil, "a schema it references, NAME=SUBJECT:VERSION (repeatable; NAME: the Avro type's full name, the proto import path or the $ref)")
	_ = cmd.MarkFlagRequired("file")
}

func (s *schemaFileFlags) text() (serde.Text, error) {
	typ, err := parseSchemaType(s.typeName, s.file)
	if err != nil {
		return serde.Text{}, err
	}
	refs, err := parseReferences(s.references)
	if err != nil {
		return serde.Text{}, err
	}
	data, err := os.ReadFile(s.file)
	if err != nil {
		return serde.Text{}, err
	}
	return serde.Text{Type: typ, Schema: string(data), References: refs}, nil
}

func newSchemaRegisterCmd() *cobra.Command {
	var (
		file      schemaFileFlags
		normalize bool
	)
	cmd := &cobra.Command{
		Use:   "register SUBJECT -f FILE",
		Short: "Register a schema under a subject; prints its id and version",
		Long: `Register the schema in FILE under SUBJECT and print "id N version V".
Registering a schema the subject already holds prints its existing id and
version. A schema incompatible with the subject's compatibility level is
refused (error_code 409).`,
		Args: cobra.ExactArgs(1),
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			text, err := file.text()
			if err != nil {
				return err
			}
			s, err := c.Register(ctx, args[0], text, normalize)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "id %d version %d\n", s.ID, s.Version)
			return nil
		}),
	}
	file.add(cmd)
	cmd.Flags().BoolVar(&normalize, "normalize", false, "store and compare the schema's normalized form")
	return cmd
}

func newSchemaGetCmd() *cobra.Command {
	var (
		version string
		id      int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "get SUBJECT [--version N|latest] | get --id N",
		Short: "Print a schema's text (or, with --json, the registry's full record of it)",
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("id") {
				if len(args) != 0 || cmd.Flags().Changed("version") {
					return errors.New("--id takes no SUBJECT or --version")
				}
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			var (
				s   serde.Schema
				err error
			)
			if len(args) == 0 {
				s, err = c.SchemaByID(ctx, id)
			} else {
				v, verr := parseVersion(version)
				if verr != nil {
					return fmt.Errorf("--version: %w", verr)
				}
				s, err = c.Version(ctx, args[0], v)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintln(out, strings.TrimRight(s.Text, "\n"))
				return nil
			}
			b, err := json.Marshal(s)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, string(b))
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&version, "version", "latest", "the version: a number, or latest")
	f.IntVar(&id, "id", 0, "get the schema with this id instead of a subject's version")
	f.BoolVar(&asJSON, "json", false, "print subject, version, id, schemaType, references and schema as one JSON object")
	return cmd
}

func newSchemaListCmd() *cobra.Command {
	var (
		deleted bool
		prefix  string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List subjects, one per line",
		Args:  cobra.NoArgs,
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, _ []string) error {
			subjects, err := c.Subjects(ctx, prefix, deleted)
			if err != nil {
				return err
			}
			for _, s := range subjects {
				fmt.Fprintln(cmd.OutOrStdout(), s)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&deleted, "deleted", false, "include soft-deleted subjects")
	cmd.Flags().StringVar(&prefix, "prefix", "", "only subjects whose names start with this")
	return cmd
}

func newSchemaVersionsCmd() *cobra.Command {
	var deleted bool
	cmd := &cobra.Command{
		Use:   "versions SUBJECT",
		Short: "List a subject's versions, one per line",
		Args:  cobra.ExactArgs(1),
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			versions, err := c.Versions(ctx, args[0], deleted)
			if err != nil {
				return err
			}
			for _, v := range versions {
				fmt.Fprintln(cmd.OutOrStdout(), v)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&deleted, "deleted", false, "include soft-deleted versions")
	return cmd
}

func newSchemaDeleteCmd() *cobra.Command {
	var (
		version   string
		permanent bool
	)
	cmd := &cobra.Command{
		Use:   "delete SUBJECT [--version N|latest] [--permanent]",
		Short: "Delete a subject, or one version of it (softly; --permanent after a soft delete)",
		Long: `Delete every version of SUBJECT, or only --version, and print the versions
deleted. A delete is soft (the schemas stay readable by id and with
--deleted); --permanent removes what was soft-deleted before.`,
		Args: cobra.ExactArgs(1),
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if version == "" {
				versions, err := c.DeleteSubject(ctx, args[0], permanent)
				if err != nil {
					return err
				}
				for _, v := range versions {
					fmt.Fprintln(out, v)
				}
				return nil
			}
			v, err := parseVersion(version)
			if err != nil {
				return fmt.Errorf("--version: %w", err)
			}
			deleted, err := c.DeleteVersion(ctx, args[0], v, permanent)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, deleted)
			return nil
		}),
	}
	cmd.Flags().StringVar(&version, "version", "", "delete only this version (a number, or latest)")
	cmd.Flags().BoolVar(&permanent, "permanent", false, "delete for good what was soft-deleted")
	return cmd
}

func newSchemaCheckCompatCmd() *cobra.Command {
	var (
		file    schemaFileFlags
		version string
	)
	cmd := &cobra.Command{
		Use:   "check-compat SUBJECT -f FILE",
		Short: "Check whether a schema may be registered under a subject (exit 1 if not)",
		Long: `Ask the registry whether the schema in FILE is compatible with SUBJECT's
--version (default latest; "all" for every version the subject's
compatibility level compares with). Prints "compatible" and exits 0, or
prints the registry's reasons and exits 1.`,
		Args: cobra.ExactArgs(1),
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			text, err := file.text()
			if err != nil {
				return err
			}
			v := 0
			if !strings.EqualFold(version, "all") {
				if v, err = parseVersion(version); err != nil {
					return fmt.Errorf("--version: %w", err)
				}
			}
			ok, messages, err := c.CheckCompatibility(ctx, args[0], v, text)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if ok {
				fmt.Fprintln(out, "compatible")
				return nil
			}
			for _, m := range messages {
				fmt.Fprintln(out, m)
			}
			return fmt.Errorf("schema is not compatible with subject %q (the reasons are above)", args[0])
		}),
	}
	file.add(cmd)
	cmd.Flags().StringVar(&version, "version", "latest", "the version to check against: a number, latest, or all")
	return cmd
}

// newSchemaSettingCmd is `config` and `mode`: print a subject's (or the
// global) setting, or --set it.
func newSchemaSettingCmd(use, short, what string, get func(*serde.Client, context.Context, string) (string, error),
	set func(*serde.Client, context.Context, string, string) (string, error)) *cobra.Command {
	var value string
	cmd := &cobra.Command{
		Use:   use + " [SUBJECT] [--set VALUE]",
		Short: short,
		Args:  cobra.MaximumNArgs(1),
		RunE: schemaRun(func(ctx context.Context, c *serde.Client, cmd *cobra.Command, args []string) error {
			subject := ""
			if len(args) == 1 {
				subject = args[0]
			}
			var (
				got string
				err error
			)
			if cmd.Flags().Changed("set") {
				got, err = set(c, ctx, subject, strings.ToUpper(value))
			} else {
				got, err = get(c, ctx, subject)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), got)
			return nil
		}),
	}
	cmd.Flags().StringVar(&value, "set", "", "set the "+what)
	return cmd
}

func newSchemaConfigCmd() *cobra.Command {
	return newSchemaSettingCmd("config", "Print or --set the compatibility level, global or of a subject", "compatibility level (NONE, BACKWARD, FORWARD, FULL, or one of those _TRANSITIVE)",
		(*serde.Client).Config, (*serde.Client).SetConfig)
}

func newSchemaModeCmd() *cobra.Command {
	return newSchemaSettingCmd("mode", "Print or --set the mode, global or of a subject", "mode (READWRITE, READONLY, READONLY_OVERRIDE or IMPORT)",
		(*serde.Client).Mode,
		func(c *serde.Client, ctx context.Context, subject, mode string) (string, error) {
			return c.SetMode(ctx, subject, mode, false)
		})
}
