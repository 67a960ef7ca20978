package main

// strata user create|list|delete: SCRAM credentials through KIP-554's
// AlterUserScramCredentials and DescribeUserScramCredentials (kadm salts
// the password on this side; the broker never sees it). The password comes
// from --password-file (or stdin with -), never from a flag other
// processes can read in ps.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func init() { rootCmd.AddCommand(newUserCmd()) }

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Create, list and delete SCRAM users (kafka-configs --entity-type users)",
	}
	cmd.AddCommand(newUserCreateCmd(), newUserListCmd(), newUserDeleteCmd())
	return cmd
}

func parseScramMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("unknown mechanism %q (SCRAM-SHA-256 or SCRAM-SHA-512)", s)
}

// readPassword reads the first line of path ("-" for stdin).
func readPassword(cmd *cobra.Command, path string) (string, error) {
	var r io.Reader
	if path == "-" {
		r = cmd.InOrStdin()
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("--password-file: %w", err)
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("--password-file: the password is empty")
	}
	return line, nil
}

func newUserCreateCmd() *cobra.Command {
	var (
		mechanism, passwordFile string
		iterations              int32
	)
	cmd := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a SCRAM user or change its password",
		Example: "  printf '%s\\n' \"$PASSWORD\" | strata user create alice --mechanism SCRAM-SHA-512 --password-file -",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mech, err := parseScramMechanism(mechanism)
			if err != nil {
				return err
			}
			if passwordFile == "" {
				return errors.New("give the password with --password-file FILE (or - for stdin)")
			}
			password, err := readPassword(cmd, passwordFile)
			if err != nil {
				return err
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: args[0], Mechanism: mech, Iterations: iterations, Password: password}})
			if err != nil {
				return err
			}
			if r := res[args[0]]; r.Err != nil {
				return fmt.Errorf("user %q: %w %s", args[0], r.Err, r.ErrMessage)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %s: %s credential set\n", args[0], mech)
			return nil
		},
	}
	cmd.Flags().StringVar(&mechanism, "mechanism", "SCRAM-SHA-512", "SCRAM-SHA-256 or SCRAM-SHA-512")
	cmd.Flags().Int32Var(&iterations, "iterations", 8192, "SCRAM iterations (4096-16384)")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "file whose first line is the password (- for stdin)")
	return cmd
}

func newUserListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list [NAME...]",
		Short: "List SCRAM users with their mechanisms and iterations",
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := adm.DescribeUserSCRAMs(ctx, args...)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "USER\tMECHANISM\tITERATIONS")
			var errs []error
			for _, d := range described.Sorted() {
				if d.Err != nil {
					errs = append(errs, fmt.Errorf("user %q: %w %s", d.User, d.Err, d.ErrMessage))
					continue
				}
				for _, c := range d.CredInfos {
					fmt.Fprintf(tw, "%s\t%s\t%d\n", d.User, c.Mechanism, c.Iterations)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return errors.Join(errs...)
		},
	}
}

func newUserDeleteCmd() *cobra.Command {
	var mechanisms []string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a SCRAM user's credentials",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var del []kadm.DeleteSCRAM
			for _, m := range mechanisms {
				mech, err := parseScramMechanism(m)
				if err != nil {
					return err
				}
				del = append(del, kadm.DeleteSCRAM{User: args[0], Mechanism: mech})
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			if len(del) == 0 {
				described, err := adm.DescribeUserSCRAMs(ctx, args[0])
				if err != nil {
					return err
				}
				d := described[args[0]]
				if d.Err != nil {
					return fmt.Errorf("user %q: %w %s", args[0], d.Err, d.ErrMessage)
				}
				for _, c := range d.CredInfos {
					del = append(del, kadm.DeleteSCRAM{User: args[0], Mechanism: c.Mechanism})
				}
			}
			// One request per mechanism: Kafka refuses a user named twice
			// in one request (DUPLICATE_RESOURCE).
			for _, d := range del {
				res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{d}, nil)
				if err != nil {
					return err
				}
				if r := res[args[0]]; r.Err != nil {
					return fmt.Errorf("user %q: %w %s", args[0], r.Err, r.ErrMessage)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %s: %d credentials deleted\n", args[0], len(del))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&mechanisms, "mechanism", nil, "only this mechanism's credential (default: all)")
	return cmd
}
