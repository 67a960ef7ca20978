package connect

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/clientconf"
	"github.com/strata-streaming/strata/internal/httpsec"
	"github.com/strata-streaming/strata/internal/properties"
)

// ErrInvalidConfig marks a worker configuration that cannot be used.
var ErrInvalidConfig = errors.New("connect: invalid worker config")

// WorkerConfig is a worker's configuration, under Kafka Connect's
// distributed-worker property names (connect-distributed.properties).
type WorkerConfig struct {
	Brokers []string // bootstrap.servers
	GroupID string   // group.id, default connect-cluster
	// RESTListen is where the REST API listens (rest.listen, or Kafka's
	// listeners=http://host:port); default 127.0.0.1:8083.
	RESTListen string
	// RESTAdvertise is the host:port other workers and status records name
	// this worker by (rest.advertised.host.name/port); default: the
	// listener's address.
	RESTAdvertise string

	ConfigTopic         string // config.storage.topic, default connect-configs
	OffsetTopic         string // offset.storage.topic, default connect-offsets
	StatusTopic         string // status.storage.topic, default connect-status
	OffsetPartitions    int32  // offset.storage.partitions, default 25
	StatusPartitions    int32  // status.storage.partitions, default 5
	ReplicationFactor   int16  // *.storage.replication.factor; -1 = broker default
	SessionTimeout      time.Duration
	HeartbeatInterval   time.Duration
	RebalanceTimeout    time.Duration
	OffsetFlushInterval time.Duration // offset.flush.interval.ms, default 5 s
	ExactlyOnceSource   bool          // exactly.once.source.support=enabled
	// TaskShutdownTimeout (task.shutdown.graceful.timeout.ms, default 5 s
	// as Kafka) is how long stopping units (a rebalance, a config change,
	// Close) waits for them; a unit still running then is abandoned with a
	// log line.
	TaskShutdownTimeout time.Duration

	// RESTSecurity are the REST listener's TLS and authentication
	// settings for internal/httpsec: Kafka's listeners.https.ssl.* (with
	// listeners=https://…) as ssl.*, and Strata's rest.auth.basic.users.file
	// and rest.auth.bearer.* as auth.*.
	RESTSecurity map[string]string

	// ClientOptions are the franz-go options of the worker's security
	// settings (security.protocol, sasl.mechanism, sasl.jaas.config,
	// ssl.*, as in Kafka Connect's worker properties), used by every
	// client the worker makes.
	ClientOptions []kgo.Opt

	// Props holds every property as given, for converter settings
	// (key.converter, value.converter and their prefixed options) and
	// consumer./producer. overrides.
	Props map[string]string

	Logger *slog.Logger
}

// Defaults Kafka Connect uses (offset flushing is shorter here: 5 s).
const (
	DefaultGroupID      = "connect-cluster"
	DefaultConfigTopic  = "connect-configs"
	DefaultOffsetTopic  = "connect-offsets"
	DefaultStatusTopic  = "connect-status"
	DefaultRESTListen   = "127.0.0.1:8083"
	defaultSessionMs    = 10000
	defaultHeartbeatMs  = 3000
	defaultRebalanceMs  = 60000
	defaultOffsetFlush  = 5000
	defaultTaskShutdown = 5000
	defaultOffsetParts  = 25
	defaultStatusParts  = 5
	defaultReplFactor   = -1
	workerPropertyIntro = "worker property"
)

// NewWorkerConfig builds a configuration from properties (as in a
// connect-distributed.properties file), applying defaults.
func NewWorkerConfig(props map[string]string) (WorkerConfig, error) {
	c := WorkerConfig{Props: map[string]string{}}
	for k, v := range props {
		c.Props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	get := func(key, def string) string {
		if v, ok := c.Props[key]; ok && v != "" {
			return v
		}
		return def
	}
	var errs []error
	intProp := func(key string, def int64) int64 {
		raw := get(key, "")
		if raw == "" {
			return def
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s=%q: not an integer", workerPropertyIntro, key, raw))
			return def
		}
		return n
	}
	c.Brokers = seedList(get("bootstrap.servers", ""))
	c.GroupID = get("group.id", DefaultGroupID)
	c.RESTListen = get("rest.listen", "")
	https := false
	if c.RESTListen == "" {
		if l := get("listeners", ""); l != "" {
			first := strings.TrimSpace(strings.Split(l, ",")[0])
			if rest, ok := cutPrefixFold(first, "https://"); ok {
				c.RESTListen, https = rest, true
			} else {
				c.RESTListen, _ = cutPrefixFold(first, "http://")
			}
		}
	}
	c.RESTSecurity = map[string]string{}
	for k, v := range c.Props {
		if rest, ok := strings.CutPrefix(k, "listeners.https."); ok {
			c.RESTSecurity[rest] = v
		} else if rest, ok := strings.CutPrefix(k, "rest.auth."); ok {
			c.RESTSecurity["auth."+rest] = v
		}
	}
	hasSSL := false
	for k := range c.RESTSecurity {
		hasSSL = hasSSL || strings.HasPrefix(k, "ssl.")
	}
	switch {
	case https && !hasSSL:
		errs = append(errs, fmt.Errorf("%s listeners=https://…: set listeners.https.ssl.keystore.location", workerPropertyIntro))
	case !https && hasSSL:
		errs = append(errs, fmt.Errorf("%s listeners.https.ssl.* given, but listeners is not https://…", workerPropertyIntro))
	}
	// The files and URLs they name are opened by Start.
	if err := httpsec.CheckKeys(c.RESTSecurity); err != nil {
		errs = append(errs, fmt.Errorf("%s REST security: %w", workerPropertyIntro, err))
	}
	if c.RESTListen == "" {
		c.RESTListen = DefaultRESTListen
	}
	if h := get("rest.advertised.host.name", ""); h != "" {
		port := get("rest.advertised.port", "")
		if port == "" {
			_, port, _ = net.SplitHostPort(c.RESTListen)
		}
		c.RESTAdvertise = net.JoinHostPort(h, port)
	}
	c.ConfigTopic = get("config.storage.topic", DefaultConfigTopic)
	c.OffsetTopic = get("offset.storage.topic", DefaultOffsetTopic)
	c.StatusTopic = get("status.storage.topic", DefaultStatusTopic)
	c.OffsetPartitions = int32(intProp("offset.storage.partitions", defaultOffsetParts))
	c.StatusPartitions = int32(intProp("status.storage.partitions", defaultStatusParts))
	c.ReplicationFactor = int16(intProp("replication.factor", defaultReplFactor))
	c.SessionTimeout = time.Duration(intProp("session.timeout.ms", defaultSessionMs)) * time.Millisecond
	c.HeartbeatInterval = time.Duration(intProp("heartbeat.interval.ms", defaultHeartbeatMs)) * time.Millisecond
	c.RebalanceTimeout = time.Duration(intProp("rebalance.timeout.ms", defaultRebalanceMs)) * time.Millisecond
	c.OffsetFlushInterval = time.Duration(intProp("offset.flush.interval.ms", defaultOffsetFlush)) * time.Millisecond
	c.TaskShutdownTimeout = time.Duration(intProp("task.shutdown.graceful.timeout.ms", defaultTaskShutdown)) * time.Millisecond
	switch eos := strings.ToLower(get("exactly.once.source.support", "disabled")); eos {
	case "enabled":
		c.ExactlyOnceSource = true
	case "disabled", "preparing":
	default:
		errs = append(errs, fmt.Errorf("%s exactly.once.source.support=%q: want enabled or disabled", workerPropertyIntro, eos))
	}
	security := map[string]string{}
	for k, v := range c.Props {
		if clientconf.Security(k) {
			security[k] = v
		}
	}
	opts, err := clientconf.Options(security)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", workerPropertyIntro, err))
	}
	c.ClientOptions = opts
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, c.Validate()
}

// Validate checks the configuration.
func (c WorkerConfig) Validate() error {
	switch {
	case len(c.Brokers) == 0:
		return fmt.Errorf("%w: bootstrap.servers is empty", ErrInvalidConfig)
	case c.GroupID == "":
		return fmt.Errorf("%w: group.id is empty", ErrInvalidConfig)
	case c.ConfigTopic == "" || c.OffsetTopic == "" || c.StatusTopic == "":
		return fmt.Errorf("%w: the storage topic names must not be empty", ErrInvalidConfig)
	case c.ConfigTopic == c.OffsetTopic || c.ConfigTopic == c.StatusTopic || c.OffsetTopic == c.StatusTopic:
		return fmt.Errorf("%w: config, offset and status topics must differ", ErrInvalidConfig)
	case c.OffsetPartitions < 1 || c.StatusPartitions < 1:
		return fmt.Errorf("%w: storage partitions must be at least 1", ErrInvalidConfig)
	case c.SessionTimeout < 100*time.Millisecond:
		return fmt.Errorf("%w: session.timeout.ms must be at least 100", ErrInvalidConfig)
	case c.HeartbeatInterval <= 0 || c.HeartbeatInterval >= c.SessionTimeout:
		return fmt.Errorf("%w: heartbeat.interval.ms must be positive and below session.timeout.ms", ErrInvalidConfig)
	case c.RebalanceTimeout < c.SessionTimeout:
		return fmt.Errorf("%w: rebalance.timeout.ms must be at least session.timeout.ms", ErrInvalidConfig)
	case c.OffsetFlushInterval <= 0:
		return fmt.Errorf("%w: offset.flush.interval.ms must be positive", ErrInvalidConfig)
	case c.TaskShutdownTimeout < 0:
		return fmt.Errorf("%w: task.shutdown.graceful.timeout.ms must not be negative", ErrInvalidConfig)
	}
	if _, _, err := net.SplitHostPort(c.RESTListen); err != nil {
		return fmt.Errorf("%w: rest listener %q: %v", ErrInvalidConfig, c.RESTListen, err)
	}
	return nil
}

// LoadProperties reads a Java-style .properties file (key=value or
// key: value, # and ! comments).
func LoadProperties(path string) (map[string]string, error) {
	props, err := properties.Read(path)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return props, nil
}

// cutPrefixFold is strings.CutPrefix ignoring case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func seedList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// converterFor builds the key or value converter for a connector: the
// connector's key.converter / value.converter (with its prefixed options)
// wins over the worker's; the default is JSON with schemas.
func converterFor(which string, worker, connector map[string]string) (Converter, error) {
	prefix := which + ".converter"
	src := worker
	if _, ok := connector[prefix]; ok {
		src = connector
	}
	class := src[prefix]
	if class == "" {
		class = JSONConverterClass
	}
	opts := map[string]string{}
	for k, v := range src {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
			opts[rest] = v
		}
	}
	return NewConverterFor(class, opts, which == "key")
}
