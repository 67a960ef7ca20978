package main

// Shared plumbing for the client commands (topic, produce, consume, perf):
// the persistent --brokers and --timeout flags, client construction with a
// reachability check, and error wording.
//
// Every client command follows the same shape: build a kgo client with
// newClient (which pings the brokers so a dead address fails within seconds
// with a clear "cannot reach brokers" line), bound each request with
// requestContext, and return errors from RunE; main prints them as
// "strata: <err>" and exits 1.
//
// STRATA_CLIENT_DEBUG=1 in the environment turns on kgo's debug log on
// stderr, for seeing every request a command makes.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/clientconf"
	"github.com/strata-streaming/strata/internal/properties"
)

const (
	// defaultBrokers is where the client commands connect unless
	// --brokers or STRATA_BROKERS says otherwise.
	defaultBrokers = "127.0.0.1:9092"
	// brokersEnv overrides defaultBrokers.
	brokersEnv = "STRATA_BROKERS"
	// clientDebugEnv, when set, logs the Kafka client's requests.
	clientDebugEnv = "STRATA_CLIENT_DEBUG"
	// defaultRequestTimeout bounds every network operation of a command.
	defaultRequestTimeout = 30 * time.Second
	// maxDialTimeout caps how long one TCP dial may take, so an address
	// that swallows packets fails long before --timeout.
	maxDialTimeout = 5 * time.Second
)

// addClientFlags defines the persistent flags every client command shares
// on root: --brokers/-b and --timeout.
func addClientFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringP("brokers", "b", brokersDefault(),
		"comma-separated bootstrap brokers host:port; "+brokersEnv+" sets the default")
	pf.Duration("timeout", defaultRequestTimeout,
		"upper bound for each network operation (connect, request, delivery)")
	pf.String("command-config", "",
		"a Kafka client.properties with the security settings (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*)")
}

func init() { addClientFlags(rootCmd) }

// brokersDefault is the --brokers default: STRATA_BROKERS if set, else
// 127.0.0.1:9092.
func brokersDefault() string {
	if v := strings.TrimSpace(os.Getenv(brokersEnv)); v != "" {
		return v
	}
	return defaultBrokers
}

// seedBrokers splits a comma-separated broker list, dropping blanks.
func seedBrokers(list string) []string {
	var seeds []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// connSettings is what a client command resolved from the shared flags.
type connSettings struct {
	brokers []string
	timeout time.Duration
	// commandConfig is --command-config's file, "" for none.
	commandConfig string
}

// connSettingsOf reads --brokers and --timeout as seen by cmd. A command
// may shadow --timeout with a flag of another type (perf consume keeps
// Kafka's millisecond --timeout); it then gets the default bound.
func connSettingsOf(cmd *cobra.Command) connSettings {
	s := connSettings{brokers: seedBrokers(brokersDefault()), timeout: defaultRequestTimeout}
	if f := cmd.Flags().Lookup("brokers"); f != nil {
		s.brokers = seedBrokers(f.Value.String())
	}
	if f := cmd.Flags().Lookup("timeout"); f != nil && f.Value.Type() == "duration" {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			s.timeout = d
		}
	}
	if f := cmd.Flags().Lookup("command-config"); f != nil {
		s.commandConfig = f.Value.String()
	}
	return s
}

// securityOptions are the client options of --command-config's file.
func (s connSettings) securityOptions() ([]kgo.Opt, error) {
	if s.commandConfig == "" {
		return nil, nil
	}
	props, err := properties.Read(s.commandConfig)
	if err != nil {
		return nil, fmt.Errorf("--command-config: %w", err)
	}
	opts, err := clientconf.Options(props)
	if err != nil {
		return nil, fmt.Errorf("--command-config %s: %w", s.commandConfig, err)
	}
	return opts, nil
}

// commandContext is cmd's context, or Background when run without one.
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// requestContext bounds one network operation of cmd by the timeout.
func (s connSettings) requestContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(commandContext(cmd), s.timeout)
}

// newClient builds a kgo client for s.brokers and checks that at least one
// broker answers, so that a wrong address fails fast with a clear message
// instead of hanging.
func (s connSettings) newClient(cmd *cobra.Command, opts ...kgo.Opt) (*kgo.Client, error) {
	if len(s.brokers) == 0 {
		return nil, errors.New("no brokers given (use --brokers host:port)")
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(s.brokers...),
		kgo.DialTimeout(min(s.timeout, maxDialTimeout)),
		kgo.RetryTimeout(s.timeout),
		kgo.ClientID("strata-cli"),
	}
	if os.Getenv(clientDebugEnv) != "" {
		base = append(base, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	sec, err := s.securityOptions()
	if err != nil {
		return nil, err
	}
	base = append(base, sec...)
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client options: %w", err)
	}
	ctx, cancel := s.requestContext(cmd)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("cannot reach brokers %s: %w", strings.Join(s.brokers, ","), err)
	}
	return cl, nil
}

// newAdmin is newClient wrapped in a kadm client; closing the admin client
// closes the underlying client.
func (s connSettings) newAdmin(cmd *cobra.Command) (*kadm.Client, error) {
	cl, err := s.newClient(cmd)
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(min(s.timeout, time.Hour) / time.Millisecond))
	return adm, nil
}

// topicError words a per-topic Kafka error the way every command prints
// it: `topic "x": TOPIC_ALREADY_EXISTS: <description>`, followed by the
// broker's own message when it sent one that adds something.
func topicError(topic string, err error, brokerMessage string) error {
	if brokerMessage != "" && !strings.Contains(err.Error(), brokerMessage) {
		return fmt.Errorf("topic %q: %w (%s)", topic, err, brokerMessage)
	}
	return fmt.Errorf("topic %q: %w", topic, err)
}

// parseKeyValues parses repeated "key=value" arguments (for -c / headers).
// A key must be non-empty; the value may be empty and may contain '='.
// Later duplicates override earlier ones.
func parseKeyValues(pairs []string, what string) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid %s %q: want key=value", what, p)
		}
		out[k] = v
	}
	return out, nil
}

// configPointers is kv as CreateTopics takes configs: nil when empty.
func configPointers(kv map[string]string) map[string]*string {
	if len(kv) == 0 {
		return nil
	}
	out := make(map[string]*string, len(kv))
	for k, v := range kv {
		out[k] = &v
	}
	return out
}

// sortedKeys returns m's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// openAdmin connects an admin client for a one-shot command and bounds its
// requests by --timeout; done closes both.
func openAdmin(cmd *cobra.Command) (*kadm.Client, context.Context, func(), error) {
	conn := connSettingsOf(cmd)
	adm, err := conn.newAdmin(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := conn.requestContext(cmd)
	return adm, ctx, func() { cancel(); adm.Close() }, nil
}

// openClient is openAdmin for commands that send raw requests.
func openClient(cmd *cobra.Command) (*kgo.Client, context.Context, func(), error) {
	conn := connSettingsOf(cmd)
	cl, err := conn.newClient(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := conn.requestContext(cmd)
	return cl, ctx, func() { cancel(); cl.Close() }, nil
}
