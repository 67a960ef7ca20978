package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strata-streaming/strata/broker"
	"github.com/strata-streaming/strata/metadata"
)

// serverCmd is kept for addAddonFlags: add-ons register in their files'
// init functions, which may run after this file's.
var serverCmd = newServerCmd()

func init() {
	rootCmd.AddCommand(serverCmd)
}

// addAddonFlags adds every registered add-on's flags to `strata server`;
// main calls it once all init functions have run.
func addAddonFlags() {
	for _, addon := range serverAddons {
		if addon.flags != nil {
			addon.flags(serverCmd.Flags())
		}
	}
}

func newServerCmd() *cobra.Command {
	var (
		nodeID      int32
		idFromHost  bool
		dataDir     string
		listen      string
		advertise   string
		httpListen  string
		objectStore string
		sets        []string
		addScram    []string
		configFile  string
		logLevel    string
		controllers string
		ctrlJoin    bool
		ctrlListen  string
		roles       string
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
			if soft, err := applyContainerMemoryLimit(os.Getenv, "/sys/fs/cgroup"); err != nil {
				logger.Warn("container memory limit not read; the Go heap has no soft limit (set GOMEMLIMIT)", "err", err)
			} else if soft > 0 {
				logger.Info("Go heap soft limit from the container's memory limit (GOMEMLIMIT overrides)", "bytes", soft)
			}
			gcPercent := gcPolicy(os.Getenv, serverGCPercent)
			logger.Debug("Go GC percent (GOGC overrides)", "percent", gcPercent)

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
			addonSets := map[string]string{}
			for _, kv := range sets {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--set %q: expected key=value", kv)
				}
				if addonProperty(k) {
					addonSets[strings.TrimSpace(k)] = strings.TrimSpace(v)
					continue
				}
				if err := cfg.Set(k, v); err != nil {
					return err
				}
			}
			flags := cmd.Flags()
			if idFromHost {
				if flags.Changed("node-id") {
					return errors.New("--node-id-from-hostname and --node-id: set one or the other")
				}
				host, err := os.Hostname()
				if err != nil {
					return fmt.Errorf("--node-id-from-hostname: %w", err)
				}
				if nodeID, err = nodeIDFromHostname(host); err != nil {
					return err
				}
				flags.Lookup("node-id").Changed = true // sets node.id below
			}
			// The dedicated flags set their Kafka properties, so that
			// DescribeConfigs reports them as STATIC_BROKER_CONFIG.
			for _, f := range []struct{ flag, property, value string }{
				{"node-id", "node.id", strconv.Itoa(int(nodeID))},
				{"data-dir", "log.dirs", dataDir},
				{"controllers", "controller.quorum.voters", controllers},
				{"roles", "process.roles", roles},
			} {
				if flags.Changed(f.flag) {
					if err := cfg.Set(f.property, f.value); err != nil {
						return fmt.Errorf("--%s: %w", f.flag, err)
					}
				}
			}
			if cfg.DataDir == "" {
				cfg.DataDir = dataDir
			}
			cfg.ControllerListen = ctrlListen
			cfg.ControllerJoin = ctrlJoin
			cfg.AddScram = addScram
			if cfg.Listeners != "" {
				// --listen is the one-listener shorthand: with listeners
				// set it may only repeat one of them.
				if flags.Changed("listen") && !strings.Contains(","+cfg.Listeners+",", "://"+listen+",") {
					return fmt.Errorf("--listen %s is not one of listeners (%s); set one or the other", listen, cfg.Listeners)
				}
				if flags.Changed("advertise") {
					return errors.New("--advertise applies to --listen only; with listeners, set advertised.listeners")
				}
			}
			if cfg.Listeners == "" && advertise == "" {
				// A wildcard listen address (the container image's
				// 0.0.0.0:9092) is no address for clients: advertise the
				// host name instead, as Kafka does for a listener without a host.
				if host, ok := wildcardAdvertise(listen, os.Hostname); ok {
					advertise = host
					logger.Info("advertising the host name for a wildcard --listen (set --advertise to choose)", "listen", listen, "advertise", advertise)
				}
			}
			cfg.Listen = listen
			cfg.Advertise = advertise
			cfg.HTTPListen = httpListen
			cfg.ObjectStore = objectStore

			if r, err := metadata.ParseRoles(cfg.ProcessRoles); err != nil {
				return fmt.Errorf("--roles: %w", err)
			} else if r.Controller && !r.Broker {
				return runControllerOnly(cfg, logger)
			}
			srv, err := broker.NewServer(cfg, logger)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				srv.Close()
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			env := addonEnv{Brokers: srv.PlaintextAddr(), Logger: logger, Sets: addonSets, Flags: flags, Server: srv}
			var stops []func() error
			stopAddons := func() {
				for i := len(stops) - 1; i >= 0; i-- {
					if err := stops[i](); err != nil {
						logger.Warn("stopping add-on", "err", err)
					}
				}
			}
			for _, addon := range serverAddons {
				env.Sets = addonSetsOf(addonSets, addon.prefix)
				stop, err := addon.start(ctx, env)
				if err != nil {
					cancel()
					stopAddons()
					srv.Close()
					return fmt.Errorf("%s: %w", addon.name, err)
				}
				if stop != nil {
					stops = append(stops, stop)
				}
			}
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
			sig := <-sigs
			logger.Info("shutting down", "signal", sig.String())
			signal.Stop(sigs)
			cancel()
			stopAddons()
			return srv.Close()
		},
	}
	f := cmd.Flags()
	f.Int32Var(&nodeID, "node-id", 1, "this node's id (node.id)")
	f.BoolVar(&idFromHost, "node-id-from-hostname", false, "take node.id from the host name's ordinal suffix plus one (a StatefulSet's pod strata-0 is node 1)")
	f.StringVar(&dataDir, "data-dir", "./data", "data directory (log.dirs)")
	f.StringVar(&listen, "listen", "127.0.0.1:9092", "Kafka listener address")
	f.StringVar(&advertise, "advertise", "", "address clients are told to connect to (default: the listen address, or host name:port when it listens on 0.0.0.0 or ::)")
	f.StringVar(&httpListen, "http-listen", "127.0.0.1:9644", "admin HTTP address for /metrics and /healthz (empty disables)")
	f.StringVar(&objectStore, "object-store", "", "object store URL for tiered storage (default file://<data-dir>/objects)")
	f.StringArrayVar(&sets, "set", nil, "set a Kafka broker property, key=value (repeatable)")
	f.StringArrayVar(&addScram, "add-scram", nil, "create a SCRAM credential if the cluster has none yet: 'SCRAM-SHA-512=[name=admin,password=…]' (repeatable)")
	f.StringVar(&configFile, "config", "", "server.properties-style file")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&controllers, "controllers", "", "metadata quorum voters id@host:port,… (controller.quorum.voters; default: a one-voter quorum of this node)")
	f.StringVar(&ctrlListen, "controller-listen", "", "this node's raft address (needed with other voters)")
	f.BoolVar(&ctrlJoin, "controller-join", false, "start as a controller that is not a voter yet (--controllers: the current voters); it waits until `strata quorum add-voter` adds it")
	f.StringVar(&roles, "roles", "controller,broker", "process.roles: controller,broker (one process does both)")
	return cmd
}

// serverAddon is something `strata server` runs beside the broker as a Kafka
// client of it (stream jobs, the connect worker). Add-ons register in their
// file's init, before newServerCmd runs; they start after the broker serves
// and stop before it closes, in reverse order.
type serverAddon struct {
	name string
	// prefix claims --set keys (e.g. "connect.") for the add-on instead of
	// the broker.
	prefix string
	flags  func(*pflag.FlagSet)
	start  func(ctx context.Context, env addonEnv) (stop func() error, err error)
}

// addonEnv is what an add-on gets from the server.
type addonEnv struct {
	Brokers string            // the broker's PLAINTEXT Kafka address, host:port ("" if it has none)
	Logger  *slog.Logger      //
	Sets    map[string]string // the --set keys this add-on's prefix claims
	Flags   *pflag.FlagSet    // the server's flags, add-on flags included
	Server  *broker.Server    // the node (its console learns of the add-ons); nil in tests
}

var serverAddons []serverAddon

// addonSetsOf is the part of sets an add-on claims by its prefix.
func addonSetsOf(sets map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range sets {
		if prefix != "" && strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

func addonProperty(key string) bool {
	key = strings.TrimSpace(key)
	for _, a := range serverAddons {
		if a.prefix != "" && strings.HasPrefix(key, a.prefix) {
			return true
		}
	}
	return false
}

// nodeIDFromHostname is --node-id-from-hostname: a Kubernetes StatefulSet
// names its pods <name>-<ordinal> from 0 and Kafka node ids start at 1, so
// "strata-2" (or "strata-2.strata-headless.ns.svc") is node 3.
func nodeIDFromHostname(host string) (int32, error) {
	short, _, _ := strings.Cut(host, ".")
	digits := short[strings.LastIndexByte(short, '-')+1:]
	ordinal, err := strconv.ParseInt(digits, 10, 32)
	if !strings.Contains(short, "-") || strings.TrimLeft(digits, "0123456789") != "" || err != nil || ordinal >= math.MaxInt32 {
		return 0, fmt.Errorf("--node-id-from-hostname: host name %q does not end in -<ordinal>", host)
	}
	return int32(ordinal) + 1, nil
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// runControllerOnly runs a --roles controller node: a metadata quorum voter
// with no Kafka listener, until SIGTERM or SIGINT.
func runControllerOnly(cfg broker.Config, logger *slog.Logger) error {
	ctrl, err := broker.NewControllerNode(cfg, logger)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	sig := <-sigs
	signal.Stop(sigs)
	logger.Info("shutting down", "signal", sig.String())
	return ctrl.Close()
}
