package main

// strata connect: the Kafka-Connect-compatible worker and a CLI over its
// REST API.
//
//	strata connect worker --brokers B --rest-listen 127.0.0.1:8083 [--group-id G] [--config worker.properties] [--set k=v]
//	strata connect list | create -f FILE | status N | pause N | resume N | restart N | delete N | offsets N   [--url http://127.0.0.1:8083]
//
// `strata server --set connect.enable=true` runs a worker inside the server
// against its own listener; every other connect.<key> setting is the worker
// property <key> (connect.rest.listen, connect.group.id, …).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-streaming/strata/connect"
	// The JDBC connectors register themselves (jdbc-source, jdbc-sink).
	_ "github.com/strata-streaming/strata/connect/jdbc"
)

const (
	defaultConnectURL = "http://127.0.0.1:8083"
	connectURLEnv     = "STRATA_CONNECT_URL"
)

func init() {
	rootCmd.AddCommand(newConnectCmd())
	serverAddons = append(serverAddons, serverAddon{
		name:   "connect",
		prefix: "connect.",
		start:  startConnectAddon,
	})
}

// startConnectAddon runs a worker in `strata server` when
// connect.enable=true.
func startConnectAddon(ctx context.Context, env addonEnv) (func() error, error) {
	props := map[string]string{}
	enabled := false
	for k, v := range env.Sets {
		key := strings.TrimPrefix(k, "connect.")
		if key == "enable" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("connect.enable=%q: want true or false", v)
			}
			enabled = b
			continue
		}
		props[key] = v
	}
	if !enabled {
		return nil, nil
	}
	// By default the worker connects to this node's PLAINTEXT listener;
	// on a node without one, connect.bootstrap.servers names a secured
	// listener and connect.security.protocol, connect.sasl.* and
	// connect.ssl.* how to log in (a Kafka worker's own settings).
	if props["bootstrap.servers"] == "" {
		if env.Brokers == "" {
			return nil, errors.New("connect.enable: this node has no PLAINTEXT listener: set connect.bootstrap.servers to one of its listeners and the worker's client security (connect.security.protocol, connect.sasl.mechanism, connect.sasl.jaas.config, connect.ssl.*)")
		}
		props["bootstrap.servers"] = env.Brokers
	}
	cfg, err := connect.NewWorkerConfig(props)
	if err != nil {
		return nil, err
	}
	cfg.Logger = env.Logger
	w, err := connect.NewWorker(cfg)
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.Start(startCtx); err != nil {
		return nil, err
	}
	env.Logger.Info("connect worker serving", "rest", w.Addr(), "group.id", cfg.GroupID)
	if env.Server != nil {
		// The console's connectors page uses this worker unless
		// console.connect.url names another; a secured REST listener
		// needs console.connect.ssl.* / basic.auth.* for the console.
		env.Server.SetConsoleConnectURL(embeddedWorkerURL(w.Addr(), cfg.RESTSecurity))
	}
	return w.Close, nil
}

// embeddedWorkerURL is the REST URL of a worker listening on addr: https
// when its listener has TLS, and a loopback host for a wildcard one.
func embeddedWorkerURL(addr string, restSecurity map[string]string) string {
	scheme := "http"
	for k := range restSecurity {
		if strings.HasPrefix(k, "ssl.") {
			scheme = "https"
		}
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return scheme + "://" + addr
}

func newConnectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Run a Kafka-Connect-compatible worker, or manage connectors through its REST API",
	}
	cmd.PersistentFlags().String("url", connectURLDefault(), "Connect REST API URL; "+connectURLEnv+" sets the default")
	cmd.AddCommand(newConnectWorkerCmd(), newConnectListCmd(), newConnectCreateCmd(), newConnectStatusCmd(),
		newConnectTargetCmd("pause", "Pause a connector and its tasks", "PUT", "/pause", "Paused"),
		newConnectTargetCmd("resume", "Resume a paused or stopped connector", "PUT", "/resume", "Resumed"),
		newConnectTargetCmd("stop", "Stop a connector (needed before changing its offsets)", "PUT", "/stop", "Stopped"),
		newConnectRestartCmd(),
		newConnectTargetCmd("delete", "Delete a connector", "DELETE", "", "Deleted"),
		newConnectOffsetsCmd(), newConnectLoggersCmd())
	return cmd
}

// newConnectLoggersCmd reads and sets logger levels through /admin/loggers.
func newConnectLoggersCmd() *cobra.Command {
	var level, scope string
	cmd := &cobra.Command{
		Use:   "loggers [NAME]",
		Short: "Show logger levels, or set one with --level (--scope cluster: every worker)",
		Args:  cobra.MaximumNArgs(1),
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error {
			type loggerLevel struct {
				Level        string `json:"level"`
				LastModified *int64 `json:"last_modified"`
			}
			out := cmd.OutOrStdout()
			if scope != "" && scope != "worker" && scope != "cluster" {
				return fmt.Errorf("--scope %q: want worker or cluster", scope)
			}
			if level != "" {
				if len(args) == 0 {
					return errors.New("--level needs a logger NAME")
				}
				path := "/admin/loggers/" + url.PathEscape(args[0])
				if scope != "" {
					path += "?scope=" + url.QueryEscape(scope)
				}
				var changed []string
				code, err := c.do(ctx, "PUT", path, map[string]string{"level": level}, &changed)
				if err != nil {
					return err
				}
				if code == http.StatusNoContent {
					fmt.Fprintf(out, "Set %s to %s on every worker\n", args[0], strings.ToUpper(level))
					return nil
				}
				fmt.Fprintf(out, "Set %s to %s: %s\n", args[0], strings.ToUpper(level), strings.Join(changed, ", "))
				return nil
			}
			all := map[string]loggerLevel{}
			if len(args) == 1 {
				var one loggerLevel
				if _, err := c.do(ctx, "GET", "/admin/loggers/"+url.PathEscape(args[0]), nil, &one); err != nil {
					return err
				}
				all[args[0]] = one
			} else if _, err := c.do(ctx, "GET", "/admin/loggers", nil, &all); err != nil {
				return err
			}
			names := make([]string, 0, len(all))
			for n := range all {
				names = append(names, n)
			}
			sort.Strings(names)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LOGGER\tLEVEL\tLAST MODIFIED")
			for _, n := range names {
				modified := "-"
				if m := all[n].LastModified; m != nil {
					modified = time.UnixMilli(*m).UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", n, all[n].Level, modified)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&level, "level", "", "set the level: TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF")
	cmd.Flags().StringVar(&scope, "scope", "", "worker (default) or cluster")
	return cmd
}

func connectURLDefault() string {
	if v := strings.TrimSpace(os.Getenv(connectURLEnv)); v != "" {
		return v
	}
	return defaultConnectURL
}

func newConnectWorkerCmd() *cobra.Command {
	var (
		restListen string
		groupID    string
		configFile string
		sets       []string
		logLevel   string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a Connect worker (joins group.id, serves the REST API)",
		Long: `Run a Connect worker. Settings are Kafka Connect's distributed-worker
properties: the --config file (connect-distributed.properties style), then
--set key=value, then --brokers, --rest-listen and --group-id when given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return err
			}
			props := map[string]string{}
			if configFile != "" {
				if props, err = connect.LoadProperties(configFile); err != nil {
					return err
				}
			}
			extra, err := parseKeyValues(sets, "--set")
			if err != nil {
				return err
			}
			for k, v := range extra {
				props[k] = v
			}
			flags := cmd.Flags()
			if flags.Changed("brokers") || props["bootstrap.servers"] == "" {
				props["bootstrap.servers"] = strings.Join(connSettingsOf(cmd).brokers, ",")
			}
			if flags.Changed("rest-listen") || (props["rest.listen"] == "" && props["listeners"] == "") {
				props["rest.listen"] = restListen
			}
			if flags.Changed("group-id") || props["group.id"] == "" {
				props["group.id"] = groupID
			}
			cfg, err := connect.NewWorkerConfig(props)
			if err != nil {
				return err
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			w, err := connect.NewWorker(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(commandContext(cmd), time.Minute)
			err = w.Start(ctx)
			cancel()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "connect worker %s serving REST on http://%s (group.id %s)\n", w.ID(), w.Addr(), cfg.GroupID)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
			<-sigs
			signal.Stop(sigs)
			return w.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&restListen, "rest-listen", connect.DefaultRESTListen, "REST API address (rest.listen)")
	f.StringVar(&groupID, "group-id", connect.DefaultGroupID, "the Connect cluster's group (group.id)")
	f.StringVar(&configFile, "config", "", "worker properties file (connect-distributed.properties style)")
	f.StringArrayVar(&sets, "set", nil, "set a worker property, key=value (repeatable)")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

// connectClient calls the REST API of --url.
type connectClient struct {
	base string
	http *http.Client
}

func connectClientOf(cmd *cobra.Command) (*connectClient, error) {
	raw := connectURLDefault()
	if f := cmd.Flags().Lookup("url"); f != nil {
		raw = f.Value.String()
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http://host:port", raw)
	}
	return &connectClient{base: u.String(), http: &http.Client{Timeout: connSettingsOf(cmd).timeout}}, nil
}

// do sends a request and decodes a JSON answer into out (when non-nil).
// A Connect error body becomes a one-line error.
func (c *connectClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach Connect REST API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			return resp.StatusCode, fmt.Errorf("%s (HTTP %d)", firstLine(e.Message), resp.StatusCode)
		}
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("unreadable answer from %s: %w", c.base, err)
		}
	}
	return resp.StatusCode, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// connectRun is the shape of every CLI command: a client and a bounded
// context.
func connectRun(f func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := connectClientOf(cmd)
		if err != nil {
			return err
		}
		ctx, cancel := connSettingsOf(cmd).requestContext(cmd)
		defer cancel()
		return f(ctx, c, cmd, args)
	}
}

func connectorPath(name string) string { return "/connectors/" + url.PathEscape(name) }

func newConnectListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List connectors with their state",
		Args:  cobra.NoArgs,
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, _ []string) error {
			var out map[string]struct {
				Status struct {
					Connector struct {
						State    string `json:"state"`
						WorkerID string `json:"worker_id"`
					} `json:"connector"`
					Tasks []struct {
						State string `json:"state"`
					} `json:"tasks"`
					Type string `json:"type"`
				} `json:"status"`
			}
			if _, err := c.do(ctx, "GET", "/connectors?expand=status", nil, &out); err != nil {
				return err
			}
			names := make([]string, 0, len(out))
			for n := range out {
				names = append(names, n)
			}
			sort.Strings(names)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tSTATE\tTASKS\tWORKER")
			for _, n := range names {
				s := out[n].Status
				running := 0
				for _, t := range s.Tasks {
					if t.State == connect.StateRunning {
						running++
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d running\t%s\n", n, s.Type, s.Connector.State, running, len(s.Tasks), s.Connector.WorkerID)
			}
			return tw.Flush()
		}),
	}
}

// readConnectorFile reads a connector definition: Kafka Connect's JSON
// ({"name":…,"config":{…}}, or a bare config map with "name"), or a
// .properties file with name=….
func readConnectorFile(path string) (string, map[string]string, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return "", nil, err
	}
	if strings.HasSuffix(path, ".properties") {
		props, err := connect.LoadProperties(path)
		if err != nil {
			return "", nil, err
		}
		return props["name"], props, nil
	}
	var wrapped struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(data, &wrapped); err == nil && wrapped.Config != nil {
		if wrapped.Name == "" {
			wrapped.Name = wrapped.Config["name"]
		}
		return wrapped.Name, wrapped.Config, nil
	}
	var flat map[string]string
	if err := json.Unmarshal(data, &flat); err != nil {
		return "", nil, fmt.Errorf("%s: want {\"name\":…,\"config\":{…}} JSON or a .properties file: %w", path, err)
	}
	return flat["name"], flat, nil
}

func newConnectCreateCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create a connector from a JSON ({\"name\",\"config\"}) or .properties file",
		Args:  cobra.NoArgs,
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("create needs -f FILE")
			}
			name, cfg, err := readConnectorFile(file)
			if err != nil {
				return err
			}
			if name == "" {
				return fmt.Errorf("%s: no connector name (set \"name\")", file)
			}
			var info struct {
				Name string `json:"name"`
				Type string `json:"type"`
			}
			if _, err := c.do(ctx, "POST", "/connectors", map[string]any{"name": name, "config": cfg}, &info); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created %s connector %s\n", info.Type, info.Name)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "connector definition (JSON or .properties; - for stdin)")
	return cmd
}

func newConnectStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show a connector's and its tasks' state",
		Args:  cobra.ExactArgs(1),
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error {
			var s struct {
				Name      string `json:"name"`
				Type      string `json:"type"`
				Connector struct {
					State    string `json:"state"`
					WorkerID string `json:"worker_id"`
					Trace    string `json:"trace"`
				} `json:"connector"`
				Tasks []struct {
					ID       int    `json:"id"`
					State    string `json:"state"`
					WorkerID string `json:"worker_id"`
					Trace    string `json:"trace"`
				} `json:"tasks"`
			}
			if _, err := c.do(ctx, "GET", connectorPath(args[0])+"/status", nil, &s); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "UNIT\tSTATE\tWORKER\tTRACE")
			fmt.Fprintf(tw, "%s (%s connector)\t%s\t%s\t%s\n", s.Name, s.Type, s.Connector.State, s.Connector.WorkerID, firstLine(s.Connector.Trace))
			for _, t := range s.Tasks {
				fmt.Fprintf(tw, "task %d\t%s\t%s\t%s\n", t.ID, t.State, t.WorkerID, firstLine(t.Trace))
			}
			return tw.Flush()
		}),
	}
}

func newConnectTargetCmd(use, short, method, suffix, verb string) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error {
			if _, err := c.do(ctx, method, connectorPath(args[0])+suffix, nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s connector %s\n", verb, args[0])
			return nil
		}),
	}
}

func newConnectRestartCmd() *cobra.Command {
	var includeTasks, onlyFailed bool
	var task int
	cmd := &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a connector (with --include-tasks, its tasks; --task N, one task)",
		Args:  cobra.ExactArgs(1),
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error {
			path := connectorPath(args[0]) + "/restart"
			what := "connector " + args[0]
			if task >= 0 {
				path = fmt.Sprintf("%s/tasks/%d/restart", connectorPath(args[0]), task)
				what = fmt.Sprintf("task %d of %s", task, args[0])
			} else {
				q := url.Values{}
				if includeTasks {
					q.Set("includeTasks", "true")
				}
				if onlyFailed {
					q.Set("onlyFailed", "true")
				}
				if len(q) > 0 {
					path += "?" + q.Encode()
				}
			}
			if _, err := c.do(ctx, "POST", path, nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restarting %s\n", what)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&includeTasks, "include-tasks", false, "restart the connector's tasks too")
	cmd.Flags().BoolVar(&onlyFailed, "only-failed", false, "restart only instances that failed")
	cmd.Flags().IntVar(&task, "task", -1, "restart only this task")
	return cmd
}

func newConnectOffsetsCmd() *cobra.Command {
	var reset bool
	cmd := &cobra.Command{
		Use:   "offsets NAME",
		Short: "Show a connector's offsets (--reset deletes them; the connector must be stopped)",
		Args:  cobra.ExactArgs(1),
		RunE: connectRun(func(ctx context.Context, c *connectClient, cmd *cobra.Command, args []string) error {
			if reset {
				var msg struct {
					Message string `json:"message"`
				}
				if _, err := c.do(ctx, "DELETE", connectorPath(args[0])+"/offsets", nil, &msg); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg.Message)
				return nil
			}
			var out json.RawMessage
			if _, err := c.do(ctx, "GET", connectorPath(args[0])+"/offsets", nil, &out); err != nil {
				return err
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, out, "", "  "); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), pretty.String())
			return nil
		}),
	}
	cmd.Flags().BoolVar(&reset, "reset", false, "delete the offsets (DELETE /connectors/NAME/offsets)")
	return cmd
}
