package main

// strata iceberg: commit an Iceberg topic now, and show the Iceberg status
// of a node (its admin HTTP listener: /v1/iceberg/topics).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newIcebergCmd()) }

func newIcebergCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "iceberg",
		Short: "Iceberg topics: commit now, show status",
		Long: "Topics with iceberg.enabled=true are also Iceberg tables in the object store;\n" +
			"their partition leaders commit every iceberg.commit.interval.ms. These commands\n" +
			"talk to a broker's admin HTTP listener (--admin).",
	}
	cmd.AddCommand(newIcebergCommitCmd(), newIcebergStatusCmd())
	return cmd
}

// icebergStatus is one topic of GET /v1/iceberg/topics.
type icebergStatus struct {
	Topic           string     `json:"topic"`
	Location        string     `json:"location"`
	MetadataVersion int        `json:"metadata_version"`
	SnapshotID      int64      `json:"snapshot_id"`
	RowsCommitted   int64      `json:"rows_committed"`
	FilesCommitted  int64      `json:"files_committed"`
	BytesCommitted  int64      `json:"bytes_committed"`
	DLQRows         int64      `json:"dlq_rows_committed"`
	Commits         int64      `json:"commits"`
	LastCommit      *time.Time `json:"last_commit"`
	LastError       string     `json:"last_error"`
	LagOffsets      int64      `json:"lag_offsets"`
	LagSeconds      float64    `json:"lag_seconds"`
	Error           string     `json:"error"`
}

// icebergAdminCall sends one request to the admin listener and decodes the
// JSON answer into out; a non-200 answer is its error message.
func icebergAdminCall(ctx context.Context, method, admin, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+admin+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin listener %s: %w", admin, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("admin listener %s: %w", admin, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			return fmt.Errorf("admin listener %s answered %s", admin, resp.Status)
		}
		return fmt.Errorf("%s", e.Error)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin listener %s answered %s without the expected JSON: %w", admin, resp.Status, err)
	}
	return nil
}

func newIcebergCommitCmd() *cobra.Command {
	var admin string
	cmd := &cobra.Command{
		Use:     "commit TOPIC",
		Short:   "Commit the topic's committed records to its Iceberg table now",
		Example: `  strata iceberg commit orders --admin 127.0.0.1:9644`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(commandContext(cmd), 3*time.Minute)
			defer cancel()
			var st icebergStatus
			if err := icebergAdminCall(ctx, http.MethodPost, admin, "/v1/iceberg/topics/"+url.PathEscape(args[0])+"/commit", &st); err != nil {
				return fmt.Errorf("iceberg commit %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "committed %s: table %s at metadata v%d (snapshot %d), lag %d offsets\n",
				st.Topic, st.Location, st.MetadataVersion, st.SnapshotID, st.LagOffsets)
			return nil
		},
	}
	cmd.Flags().StringVar(&admin, "admin", "127.0.0.1:9644", "the admin HTTP listener host:port of a node leading the topic's partitions")
	return cmd
}

func newIcebergStatusCmd() *cobra.Command {
	var (
		admin  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show the Iceberg tables this node commits: rows, files, bytes, lag, last error",
		Example: `  strata iceberg status --admin 127.0.0.1:9644`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(commandContext(cmd), 30*time.Second)
			defer cancel()
			var sts []json.RawMessage
			if err := icebergAdminCall(ctx, http.MethodGet, admin, "/v1/iceberg/topics", &sts); err != nil {
				return fmt.Errorf("iceberg status: %w", err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(sts)
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TOPIC\tVERSION\tROWS\tDLQ-ROWS\tFILES\tBYTES\tLAG-OFFSETS\tLAG-SECONDS\tLAST-COMMIT\tLAST-ERROR\tLOCATION")
			for _, raw := range sts {
				var st icebergStatus
				if err := json.Unmarshal(raw, &st); err != nil {
					return fmt.Errorf("iceberg status: %w", err)
				}
				last := "-"
				if st.LastCommit != nil {
					last = st.LastCommit.UTC().Format(time.RFC3339)
				}
				lastErr := st.LastError
				if lastErr == "" {
					lastErr = "-"
				}
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\n", st.Topic, st.MetadataVersion, st.RowsCommitted, st.DLQRows,
					st.FilesCommitted, st.BytesCommitted, st.LagOffsets, st.LagSeconds, last, lastErr, st.Location)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&admin, "admin", "127.0.0.1:9644", "the broker's admin HTTP listener host:port")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the admin listener's JSON")
	return cmd
}
