package registry

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
	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/jsonschema"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
)

// ErrInvalidConfig marks a configuration that cannot be used.
var ErrInvalidConfig = errors.New("registry: invalid config")

// Defaults, Confluent's where it has one.
const (
	DefaultTopic             = "_schemas"
	DefaultListen            = "127.0.0.1:8081"
	DefaultReplicationFactor = 3 // at most; see Config.ReplicationFactor
	DefaultWriteTimeout      = 10 * time.Second
	DefaultMaxRequestBytes   = 16 << 20
)

// Config is a registry's configuration. Start from DefaultConfig, or
// NewConfig for Confluent's property names.
type Config struct {
	// Brokers are the Kafka bootstrap servers holding the topic
	// (kafkastore.bootstrap.servers).
	Brokers []string
	// ClientOptions are franz-go options for the registry's Kafka client:
	// its security (kafkastore.security.protocol, kafkastore.sasl.*,
	// kafkastore.ssl.*, through internal/clientconf).
	ClientOptions []kgo.Opt
	// Topic is the compacted single-partition topic of the records
	// (kafkastore.topic).
	Topic string
	// ReplicationFactor is the topic's when the registry creates it
	// (kafkastore.topic.replication.factor). 0, the default, is
	// Confluent's: 3, or the number of live brokers when there are fewer.
	// Set, it is exact: Start waits (within its context) until that many
	// brokers are alive, so that a cluster that is still starting does
	// not get a topic with too few replicas.
	ReplicationFactor int16
	// Listen is the REST API's address (listeners, without the scheme).
	Listen string
	// HTTPSecurity are the REST listener's TLS and authentication
	// settings for internal/httpsec: ssl.* (Confluent's names for its
	// HTTPS listener) and auth.basic.users.file, auth.bearer.*.
	HTTPSecurity map[string]string
	// DefaultCompatibility applies where neither the subject nor the
	// global config sets a level (schema.compatibility.level; BACKWARD).
	DefaultCompatibility string
	// Formats are the schema types the registry accepts; default Avro,
	// Protobuf and JSON Schema.
	Formats []schema.Format
	// WriteTimeout bounds one write: sequencing, producing, and waiting
	// until it is applied (kafkastore.timeout.ms; 10 s).
	WriteTimeout time.Duration
	// MaxRequestBytes caps a request body (16 MiB).
	MaxRequestBytes int64
	// Log, if set, is used instead of the Kafka topic (tests: MemoryLog).
	// The registry does not close it.
	Log Log
	// Logger receives the registry's log lines; default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a configuration with every default set and no
// brokers.
func DefaultConfig() Config {
	return Config{
		Topic:                DefaultTopic,
		Listen:               DefaultListen,
		HTTPSecurity:         map[string]string{},
		DefaultCompatibility: LevelBackward,
		Formats:              []schema.Format{avro.New(), protobuf.New(), jsonschema.New()},
		WriteTimeout:         DefaultWriteTimeout,
		MaxRequestBytes:      DefaultMaxRequestBytes,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Log == nil && len(c.Brokers) == 0:
		return fmt.Errorf("%w: no brokers (kafkastore.bootstrap.servers)", ErrInvalidConfig)
	case c.Topic == "":
		return fmt.Errorf("%w: the topic (kafkastore.topic) is empty", ErrInvalidConfig)
	case c.ReplicationFactor < 0:
		return fmt.Errorf("%w: kafkastore.topic.replication.factor must be at least 1", ErrInvalidConfig)
	case !validLevel(c.DefaultCompatibility):
		return fmt.Errorf("%w: schema.compatibility.level %q: want one of NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE", ErrInvalidConfig, c.DefaultCompatibility)
	case len(c.Formats) == 0:
		return fmt.Errorf("%w: no schema formats", ErrInvalidConfig)
	case c.WriteTimeout <= 0:
		return fmt.Errorf("%w: the write timeout (kafkastore.timeout.ms) must be positive", ErrInvalidConfig)
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("%w: the request size limit must be positive", ErrInvalidConfig)
	}
	seen := map[schema.Type]bool{}
	for _, f := range c.Formats {
		if seen[f.Type()] {
			return fmt.Errorf("%w: two formats for schema type %s", ErrInvalidConfig, f.Type())
		}
		seen[f.Type()] = true
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("%w: listener %q: %v", ErrInvalidConfig, c.Listen, err)
	}
	if err := httpsec.CheckKeys(c.HTTPSecurity); err != nil {
		return fmt.Errorf("%w: HTTP security: %w", ErrInvalidConfig, err)
	}
	return nil
}

// NewConfig builds a configuration from properties named as Confluent's
// registry names them (schema-registry.properties), plus Strata's:
//
//	listeners                         http://host:port or https://host:port (the first is used)
//	listen                            host:port (Strata's; instead of listeners)
//	kafkastore.bootstrap.servers      brokers (bootstrap.servers is taken too)
//	kafkastore.topic                  default _schemas
//	kafkastore.topic.replication.factor  exact; unset: 3, or fewer on a smaller cluster
//	kafkastore.timeout.ms             a write's time limit, default 10000
//	kafkastore.security.protocol, kafkastore.sasl.mechanism,
//	kafkastore.sasl.jaas.config, kafkastore.ssl.*   the Kafka client's security
//	schema.compatibility.level        the default level, default BACKWARD
//	ssl.*                             the HTTPS listener (with listeners=https://…)
//	auth.basic.users.file, auth.bearer.*   REST authentication (internal/httpsec)
//
// Any other key is an error. Formats default to Avro, Protobuf and JSON
// Schema.
func NewConfig(props map[string]string) (Config, error) {
	c := DefaultConfig()
	var errs []error
	clientSecurity := map[string]string{}
	https := false
	for key, value := range props {
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case key == "listen":
			c.Listen = value
		case key == "listeners":
			first := strings.TrimSpace(strings.Split(value, ",")[0])
			lower := strings.ToLower(first)
			switch {
			case strings.HasPrefix(lower, "https://"):
				c.Listen, https = first[len("https://"):], true
			case strings.HasPrefix(lower, "http://"):
				c.Listen = first[len("http://"):]
			default:
				errs = append(errs, fmt.Errorf("listeners=%q: want http://host:port or https://host:port", value))
			}
		case key == "kafkastore.bootstrap.servers" || key == "bootstrap.servers":
			c.Brokers = brokerList(value)
		case key == "kafkastore.topic":
			c.Topic = value
		case key == "kafkastore.topic.replication.factor":
			n, err := strconv.ParseInt(value, 10, 16)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("%s=%q: want a number of replicas, at least 1", key, value))
			}
			c.ReplicationFactor = int16(n)
		case key == "kafkastore.timeout.ms":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: not an integer", key, value))
			}
			c.WriteTimeout = time.Duration(n) * time.Millisecond
		case key == "schema.compatibility.level":
			c.DefaultCompatibility = strings.ToUpper(value)
		case strings.HasPrefix(key, "kafkastore.") && clientconf.Security(strings.TrimPrefix(key, "kafkastore.")):
			clientSecurity[strings.TrimPrefix(key, "kafkastore.")] = value
		case httpsec.Known(key):
			c.HTTPSecurity[key] = value
		default:
			errs = append(errs, fmt.Errorf("%s is not a setting of the registry", key))
		}
	}
	hasSSL := false
	for k := range c.HTTPSecurity {
		hasSSL = hasSSL || strings.HasPrefix(k, "ssl.")
	}
	switch {
	case https && !hasSSL:
		errs = append(errs, errors.New("listeners=https://…: set ssl.keystore.location"))
	case !https && hasSSL:
		errs = append(errs, errors.New("ssl.* given, but listeners is not https://…"))
	}
	opts, err := clientconf.Options(clientSecurity)
	if err != nil {
		errs = append(errs, fmt.Errorf("kafkastore client security: %w", err))
	}
	c.ClientOptions = opts
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, c.Validate()
}

// brokerList reads a bootstrap list, dropping Confluent's optional
// PLAINTEXT:// (or other protocol) prefixes.
func brokerList(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		if _, rest, ok := strings.Cut(b, "://"); ok {
			b = rest
		}
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}
