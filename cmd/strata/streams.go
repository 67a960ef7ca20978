package main

// strata streams: declarative stream jobs (streams/job) from the command
// line and inside `strata server`.
//
//	strata streams run JOB.yaml [--instance-id ID] [--metrics-listen ADDR]
//	strata streams validate JOB.yaml...
//	strata streams status [--jobs-dir DIR] [JOB...] [--metrics URL]...
//	strata server --jobs-dir DIR [--jobs-metrics-listen ADDR]
//
// status reads group state and lag from the brokers (a job's application id
// is its consumer group) and, when --metrics names the /metrics endpoints of
// the processes running the job, its records in/out, errors and restarts.
//
// Inside the server each job's instance id is node-<node id>-<advertised
// (else listen) address>, and a job stopped by an error is restarted with
// a delay growing from 1s to 30s until the server stops.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/console"
	"github.com/strata-streaming/strata/internal/clientconf"
	"github.com/strata-streaming/strata/internal/properties"
	"github.com/strata-streaming/strata/streams"
	"github.com/strata-streaming/strata/streams/job"
)

func init() {
	cmd := &cobra.Command{
		Use:   "streams",
		Short: "Run, validate and inspect declarative stream jobs",
	}
	cmd.AddCommand(newStreamsRunCmd(), newStreamsValidateCmd(), newStreamsStatusCmd())
	rootCmd.AddCommand(cmd)

	serverAddons = append(serverAddons, serverAddon{
		name:  "streams",
		flags: streamsAddonFlags,
		start: startStreamsAddon,
	})
}

func newStreamsRunCmd() *cobra.Command {
	var (
		instanceID    string
		metricsListen string
		logLevel      string
		stateDir      string
	)
	cmd := &cobra.Command{
		Use:   "run JOB.yaml",
		Short: "Run one job until SIGTERM or SIGINT (instances with the same job share its partitions)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			j, err := job.ParseFile(args[0])
			if err != nil {
				return err
			}
			conn := connSettingsOf(cmd)
			if len(conn.brokers) == 0 {
				return errors.New("no brokers given (use --brokers host:port)")
			}
			ctx, stop := signal.NotifyContext(commandContext(cmd), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if metricsListen != "" {
				srv, err := serveStreamMetrics(metricsListen, logger)
				if err != nil {
					return err
				}
				defer srv.Close()
			}
			var opts []streams.Opt
			if instanceID != "" {
				opts = append(opts, streams.InstanceID(instanceID))
			}
			if stateDir != "" {
				opts = append(opts, streams.StateDir(stateDir))
			}
			sec, err := conn.securityOptions()
			if err != nil {
				return err
			}
			opts = append(opts, streams.ClientOpts(sec...))
			logger.Info("stream job starting", "job", j.Spec.Name, "guarantee", j.Guarantee().String(), "brokers", strings.Join(conn.brokers, ","))
			if err := j.Run(ctx, conn.brokers, logger, opts...); err != nil {
				return fmt.Errorf("job %s: %w", j.Spec.Name, err)
			}
			logger.Info("stream job stopped", "job", j.Spec.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&instanceID, "instance-id", "", "stable instance id (exactly-once: a restart with the same id fences the old process at once)")
	f.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus /metrics on this address (empty: off)")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&stateDir, "state-dir", "", "directory of the job's state stores (group_by/window/aggregate), a cache of their changelogs; instances on one machine need different ones (default <temp dir>/strata-streams)")
	return cmd
}

func newStreamsValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate JOB.yaml...",
		Short: "Compile job files; exit non-zero with a one-line error on the first bad one",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, path := range args {
				j, err := job.ParseFile(path)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (job %s, %d steps, %s)\n", path, j.Spec.Name, len(j.Spec.Pipeline), j.Guarantee())
			}
			return nil
		},
	}
}

func newStreamsStatusCmd() *cobra.Command {
	var (
		jobsDir string
		metrics []string
	)
	cmd := &cobra.Command{
		Use:   "status [JOB...]",
		Short: "List jobs (from --jobs-dir, or application ids given) with group state, lag, and records in/out, errors and restarts from --metrics",
		RunE: func(cmd *cobra.Command, args []string) error {
			type row struct{ name, group string }
			var rows []row
			if jobsDir != "" {
				jobs, err := loadJobsDir(jobsDir)
				if err != nil {
					return err
				}
				for _, j := range jobs {
					rows = append(rows, row{j.Spec.Name, j.Spec.ApplicationID})
				}
			}
			for _, a := range args {
				rows = append(rows, row{a, a})
			}
			if len(rows) == 0 {
				return errors.New("no jobs: give --jobs-dir DIR or job application ids")
			}
			counts := map[string]map[string]float64{}
			for _, url := range metrics {
				if err := scrapeStreamMetrics(cmd.Context(), url, counts); err != nil {
					return err
				}
			}
			adm, ctx, done, err := openAdmin(cmd)
			if err != nil {
				return err
			}
			defer done()
			groups := make([]string, len(rows))
			for i, r := range rows {
				groups[i] = r.group
			}
			lags, err := adm.Lag(ctx, groups...)
			if err != nil {
				return fmt.Errorf("describing groups: %w", err)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "JOB\tGROUP\tSTATE\tMEMBERS\tLAG\tIN\tOUT\tERRORS\tRESTARTS")
			for _, r := range rows {
				state, members, lag := "unknown", "-", "-"
				if l, ok := lags[r.group]; ok {
					if l.Error() != nil {
						state = l.Error().Error()
					} else {
						state = l.State
						if state == "Dead" || state == "" {
							state = "not running"
						}
						members = strconv.Itoa(len(l.Members))
						lag = strconv.FormatInt(l.Lag.Total(), 10)
					}
				}
				in, out, errs, restarts := "-", "-", "-", "-"
				if c, ok := counts[r.name]; ok {
					in = fmt.Sprint(int64(c["strata_stream_records_in_total"]))
					out = fmt.Sprint(int64(c["strata_stream_records_out_total"]))
					errs = fmt.Sprint(int64(c["strata_stream_errors_total"]))
					restarts = fmt.Sprint(int64(c["strata_stream_restarts_total"]))
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.name, r.group, state, members, lag, in, out, errs, restarts)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&jobsDir, "jobs-dir", "", "directory of job files (*.yaml, *.yml)")
	cmd.Flags().StringArrayVar(&metrics, "metrics", nil, "a /metrics URL of a process running jobs (repeatable; counts are summed)")
	return cmd
}

// scrapeStreamMetrics adds the strata_stream_* counters of one Prometheus
// text endpoint to counts[job][metric].
func scrapeStreamMetrics(ctx context.Context, url string, counts map[string]map[string]float64) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("--metrics %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--metrics %q: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("--metrics %q: %s", url, resp.Status)
	}
	return parseStreamMetrics(resp.Body, counts)
}

// parseStreamMetrics reads Prometheus text lines such as
// strata_stream_records_in_total{job="x"} 12.
func parseStreamMetrics(r io.Reader, counts map[string]map[string]float64) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "strata_stream_") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		jobName := ""
		for _, l := range strings.Split(labels, ",") {
			if k, v, ok := strings.Cut(l, "="); ok && k == "job" {
				jobName, _ = strconv.Unquote(v)
			}
		}
		fields := strings.Fields(value)
		if len(fields) == 0 || jobName == "" {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		if counts[jobName] == nil {
			counts[jobName] = map[string]float64{}
		}
		counts[jobName][name] += v
	}
	return sc.Err()
}

// loadJobsDir compiles every *.yaml and *.yml job in dir, failing on the
// first bad one or on two jobs with one name.
func loadJobsDir(dir string) ([]*job.Job, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("jobs dir: %w", err)
	}
	var jobs []*job.Job
	names := map[string]string{}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		j, err := job.ParseFile(path)
		if err != nil {
			return nil, err
		}
		if other, dup := names[j.Spec.Name]; dup {
			return nil, fmt.Errorf("jobs dir: %s and %s both define job %q", other, path, j.Spec.Name)
		}
		names[j.Spec.Name] = path
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].Spec.Name < jobs[b].Spec.Name })
	return jobs, nil
}

func serveStreamMetrics(addr string, logger *slog.Logger) (*http.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("stream metrics listener", "err", err)
		}
	}()
	logger.Info("stream metrics listening", "addr", l.Addr().String())
	return srv, nil
}

func streamsAddonFlags(f *pflag.FlagSet) {
	f.String("jobs-dir", "", "run the stream jobs (*.yaml, *.yml) of this directory inside the server; every node with the same jobs shares their partitions")
	f.String("jobs-metrics-listen", "", "serve the stream jobs' Prometheus /metrics on this address (empty: off)")
	f.String("jobs-state-dir", "", "directory of the stream jobs' state stores, a cache of their changelogs (default <temp dir>/strata-streams/<instance id>, so nodes on one machine never share one)")
	f.String("jobs-command-config", "", "a Kafka client.properties for the stream jobs' clients (bootstrap.servers, security.protocol, sasl.*, ssl.*); default: this node's PLAINTEXT listener")
}

// Restart delays of a server job that stopped on an error.
const (
	jobRestartMin = time.Second
	jobRestartMax = 30 * time.Second
)

// streamsStateDir is where a node's jobs keep their state stores:
// --jobs-state-dir, else a directory of the node's own under the temp
// directory (the library's default is one per machine, which two nodes
// on one machine would both try to lock).
func streamsStateDir(flags *pflag.FlagSet, instance string) string {
	if f := flags.Lookup("jobs-state-dir"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return filepath.Join(os.TempDir(), "strata-streams", instance)
}

// streamsInstanceID derives a job instance id unique to this node and
// stable across its restarts (so a restarted node fences its previous
// transactions at once): node-<node id>-<advertised address, else the
// listen address>. An unspecified host (0.0.0.0, ::, empty) is replaced by
// the host name, as nodes commonly share such a listen address.
func streamsInstanceID(flags *pflag.FlagSet) string {
	flagValue := func(name string) string {
		if f := flags.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	node := flagValue("node-id")
	if node == "" {
		node = "0"
	}
	addr := flagValue("advertise")
	if addr == "" {
		addr = flagValue("listen")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		}
	}
	id := "node-" + node + "-" + host
	if port != "" {
		id += "_" + port
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, id)
}

// startStreamsAddon runs every job of --jobs-dir as an App whose instance id
// is streamsInstanceID. A job that stops on an error is run again after a
// delay growing from 1s to 30s (strata_stream_restarts_total counts the
// restarts) until the server stops.
func startStreamsAddon(ctx context.Context, env addonEnv) (func() error, error) {
	dir, _ := env.Flags.GetString("jobs-dir")
	if dir == "" {
		return nil, nil
	}
	jobs, err := loadJobsDir(dir)
	if err != nil {
		return nil, err
	}
	brokers := env.Brokers
	var clientOpts []kgo.Opt
	if path, _ := env.Flags.GetString("jobs-command-config"); path != "" {
		props, err := properties.Read(path)
		if err != nil {
			return nil, fmt.Errorf("--jobs-command-config: %w", err)
		}
		if clientOpts, err = clientconf.Options(props); err != nil {
			return nil, fmt.Errorf("--jobs-command-config %s: %w", path, err)
		}
		if b := props["bootstrap.servers"]; b != "" {
			brokers = b
		}
	}
	if brokers == "" {
		return nil, errors.New("--jobs-dir: this node has no PLAINTEXT listener: give --jobs-command-config with bootstrap.servers and the jobs' client security settings")
	}
	var metricsSrv *http.Server
	if addr, _ := env.Flags.GetString("jobs-metrics-listen"); addr != "" {
		if metricsSrv, err = serveStreamMetrics(addr, env.Logger); err != nil {
			return nil, err
		}
	}
	if env.Server != nil {
		known := make([]console.StreamJob, len(jobs))
		for i, j := range jobs {
			known[i] = console.StreamJob{Name: j.Spec.Name, ApplicationID: j.Spec.ApplicationID}
		}
		env.Server.SetConsoleStreamJobs(known)
	}
	instance := streamsInstanceID(env.Flags)
	stateDir := streamsStateDir(env.Flags, instance)
	apps := make([]*streams.App, len(jobs))
	for i, j := range jobs {
		app, err := j.NewApp(streams.Brokers(seedBrokers(brokers)...), streams.ClientOpts(clientOpts...), streams.InstanceID(instance),
			streams.StateDir(stateDir), streams.Logger(env.Logger.With("job", j.Spec.Name)))
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Spec.Name, err)
		}
		apps[i] = app
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, app := range apps {
		name := jobs[i].Spec.Name
		wg.Add(1)
		go func() {
			defer wg.Done()
			env.Logger.Info("stream job starting", "job", name, "guarantee", jobs[i].Guarantee().String(), "instance", instance)
			_ = app.RunWithRestarts(runCtx, jobRestartMin, jobRestartMax, func(err error, retryIn time.Duration) {
				env.Logger.Error("stream job stopped on error; restarting", "job", name, "err", err, "retry_in", retryIn)
			})
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		if metricsSrv != nil {
			return metricsSrv.Close()
		}
		return nil
	}, nil
}
