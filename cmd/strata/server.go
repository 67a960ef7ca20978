package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/strata-streaming/strata/broker"
)

func init() {
	rootCmd.AddCommand(newServerCmd())
}

func newServerCmd() *cobra.Command {
	var (
		nodeID      int32
		dataDir     string
		listen      string
		advertise   string
		httpListen  string
		objectStore string
		sets        []string
		configFile  string
		logLevel    string
	)
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Strata node (Kafka listener on 127.0.0.1:9092, data in ./data)",
		Long: `Run a Strata node.

Configuration is applied in this order, later winning: Kafka's defaults, the
--config file (server.properties style), STRATA_* environment variables
(STRATA_LOG_RETENTION_HOURS=48 sets log.retention.hours), --set key=value,
then the dedicated flags below when given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

			cfg := broker.DefaultConfig()
			if configFile != "" {
				unknown, err := cfg.LoadProperties(configFile)
				if err != nil {
					return err
				}
				for _, k := range unknown {
					logger.Warn("ignoring property Strata does not use", "property", k, "file", configFile)
				}
			}
			if err := cfg.LoadEnv(os.Environ()); err != nil {
				return err
			}
			for _, kv := range sets {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--set %q: expected key=value", kv)
				}
				if err := cfg.Set(k, v); err != nil {
					return err
				}
			}
			flags := cmd.Flags()
			if flags.Changed("node-id") {
				cfg.NodeID = nodeID
			}
			if flags.Changed("data-dir") || cfg.DataDir == "" {
				cfg.DataDir = dataDir
			}
			cfg.Listen = listen
			cfg.Advertise = advertise
			cfg.HTTPListen = httpListen
			cfg.ObjectStore = objectStore

			srv, err := broker.NewServer(cfg, logger)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				srv.Close()
				return err
			}
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
			sig := <-sigs
			logger.Info("shutting down", "signal", sig.String())
			signal.Stop(sigs)
			return srv.Close()
		},
	}
	f := cmd.Flags()
	f.Int32Var(&nodeID, "node-id", 1, "this node's id (node.id)")
	f.StringVar(&dataDir, "data-dir", "./data", "data directory (log.dirs)")
	f.StringVar(&listen, "listen", "127.0.0.1:9092", "Kafka listener address")
	f.StringVar(&advertise, "advertise", "", "address clients are told to connect to (default: the listen address)")
	f.StringVar(&httpListen, "http-listen", "127.0.0.1:9644", "admin HTTP address for /metrics and /healthz (empty disables)")
	f.StringVar(&objectStore, "object-store", "", "object store URL for tiered storage (default file://<data-dir>/objects)")
	f.StringArrayVar(&sets, "set", nil, "set a Kafka broker property, key=value (repeatable)")
	f.StringVar(&configFile, "config", "", "server.properties-style file")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}
