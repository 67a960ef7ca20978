package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newHealthcheckCmd()) }

// newHealthcheckCmd is the container image's HEALTHCHECK: distroless has no
// curl, so the binary probes its own admin listener. Exit 0 when the URL
// answers 200, 1 otherwise (connection refused, timeout, any other status).
func newHealthcheckCmd() *cobra.Command {
	var (
		url     string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 if a node's /healthz answers 200, else 1 (for container health checks)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return probeHealth(ctx, url)
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:9644/healthz", "health endpoint to probe")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// probeHealth GETs url and returns nil only for a 200 answer.
func probeHealth(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
