package streams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Guarantee is a processing guarantee.
type Guarantee int

// Processing guarantees.
const (
	// AtLeastOnce flushes every produced record before committing the
	// input offsets that led to it: after a crash records may be
	// reprocessed (duplicates), never lost.
	AtLeastOnce Guarantee = iota
	// ExactlyOnceV2 consumes, transforms and produces inside Kafka
	// transactions with the input offsets committed in the same
	// transaction (Kafka Streams' exactly_once_v2, KIP-447): a
	// read_committed consumer of the output sees each result once.
	ExactlyOnceV2
)

// ParseGuarantee parses "at_least_once" or "exactly_once"
// ("exactly_once_v2" too).
func ParseGuarantee(s string) (Guarantee, error) {
	switch s {
	case "at_least_once", "":
		return AtLeastOnce, nil
	case "exactly_once", "exactly_once_v2":
		return ExactlyOnceV2, nil
	}
	return 0, fmt.Errorf("%w: guarantee %q: want at_least_once or exactly_once", ErrConfig, s)
}

func (g Guarantee) String() string {
	if g == ExactlyOnceV2 {
		return "exactly_once_v2"
	}
	return "at_least_once"
}

// Opt configures an App (functional options, as kgo.Opt).
type Opt interface{ apply(*config) }

type optFunc func(*config)

func (f optFunc) apply(c *config) { f(c) }

type config struct {
	brokers        []string
	appID          string
	instanceID     string
	name           string
	guarantee      Guarantee
	commitInterval time.Duration
	errorMode      ErrorMode
	deadLetter     string
	txnTimeout     time.Duration
	repartitions   int32
	stateDir       string
	logger         *slog.Logger
	clientOpts     []kgo.Opt
	beforeRun      []func(context.Context) error
	queryListen    string
	queryAdvertise string
	standbys       int
}

func defaultConfig() config {
	return config{
		commitInterval: -1, // resolved by guarantee
		txnTimeout:     10 * time.Second,
		logger:         slog.New(slog.DiscardHandler),
	}
}

func (c *config) validate() error {
	if c.appID == "" {
		return fmt.Errorf("%w: ApplicationID is required", ErrConfig)
	}
	if c.errorMode == ErrorDeadLetter && c.deadLetter == "" {
		return fmt.Errorf("%w: dead-letter mode needs DeadLetterTopic", ErrConfig)
	}
	if c.commitInterval < 0 {
		if c.guarantee == ExactlyOnceV2 {
			c.commitInterval = 100 * time.Millisecond
		} else {
			c.commitInterval = 5 * time.Second
		}
	}
	if c.commitInterval == 0 {
		c.commitInterval = time.Millisecond
	}
	if c.guarantee == ExactlyOnceV2 && c.commitInterval >= c.txnTimeout {
		return fmt.Errorf("%w: CommitInterval %v must be shorter than TransactionTimeout %v under exactly-once", ErrConfig, c.commitInterval, c.txnTimeout)
	}
	if c.standbys < 0 {
		return fmt.Errorf("%w: NumStandbyReplicas %d is negative", ErrConfig, c.standbys)
	}
	if c.instanceID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		c.instanceID = hex.EncodeToString(b[:])
	}
	if c.name == "" {
		c.name = c.appID
	}
	if c.stateDir == "" {
		c.stateDir = filepath.Join(os.TempDir(), "strata-streams")
	}
	return nil
}

// CheckOptions validates App options as NewApp does, except that Brokers
// may be missing: a job loader can reject bad settings before any App is
// built.
func CheckOptions(opts ...Opt) error {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	return cfg.validate()
}

// Brokers sets the seed brokers (host:port).
func Brokers(addrs ...string) Opt { return optFunc(func(c *config) { c.brokers = addrs }) }

// ApplicationID names the application; it is the consumer group and the
// prefix of transactional ids and internal topics. Every instance with the
// same id shares the input partitions. Required.
func ApplicationID(id string) Opt { return optFunc(func(c *config) { c.appID = id }) }

// InstanceID names this instance (default: random per App). Under
// exactly-once the transactional id is <application id>-<instance id>, so
// an instance restarted with the same id fences its previous incarnation at
// once and aborts its open transaction; otherwise the broker aborts it after
// TransactionTimeout.
func InstanceID(id string) Opt { return optFunc(func(c *config) { c.instanceID = id }) }

// JobName labels the App's metrics and Running stats (default: the
// application id).
func JobName(name string) Opt { return optFunc(func(c *config) { c.name = name }) }

// WithGuarantee sets the processing guarantee (default AtLeastOnce).
func WithGuarantee(g Guarantee) Opt { return optFunc(func(c *config) { c.guarantee = g }) }

// CommitInterval is how often offsets are committed (at-least-once, default
// 5s) or transactions committed (exactly-once, default 100ms, Kafka Streams'
// commit.interval.ms under EOS). Shorter means less reprocessing after a
// crash and lower end-to-end latency for read_committed consumers, at some
// throughput.
func CommitInterval(d time.Duration) Opt { return optFunc(func(c *config) { c.commitInterval = d }) }

// OnError sets what happens to a record that fails to deserialise, whose
// operator returns an error (or panics), or that fails to serialise.
func OnError(m ErrorMode) Opt { return optFunc(func(c *config) { c.errorMode = m }) }

// DeadLetterTopic sets the topic for ErrorDeadLetter.
func DeadLetterTopic(topic string) Opt { return optFunc(func(c *config) { c.deadLetter = topic }) }

// TransactionTimeout is the exactly-once transaction timeout (default 10s):
// the broker aborts the open transaction of an instance that died after
// this, unblocking read_committed consumers of its output.
func TransactionTimeout(d time.Duration) Opt { return optFunc(func(c *config) { c.txnTimeout = d }) }

// RepartitionPartitions sets the partition count of repartition topics the
// App creates (default: the broker's num.partitions).
func RepartitionPartitions(n int32) Opt { return optFunc(func(c *config) { c.repartitions = n }) }

// StateDir sets the directory under which the App keeps its state stores
// (default os.TempDir()/strata-streams): <dir>/<application id>/<store>-<partition>,
// one pebble database per store and input partition. Instances of one
// application on one machine need different directories. The stores are a
// cache of their changelog topics: deleting them costs a restore, not data.
func StateDir(dir string) Opt { return optFunc(func(c *config) { c.stateDir = dir }) }

// Logger sets the App's logger (default: discard).
func Logger(l *slog.Logger) Opt { return optFunc(func(c *config) { c.logger = l }) }

// BeforeRun adds fn to what the App calls at the start of every run (Run,
// and each restart of RunWithRestarts), before it creates topics or joins
// its group: the place for set-up that needs the network and should be
// retried with the App, such as registering a schema. An error ends that
// run with it; nothing was consumed.
func BeforeRun(fn func(ctx context.Context) error) Opt {
	return optFunc(func(c *config) { c.beforeRun = append(c.beforeRun, fn) })
}

// ClientOpts adds franz-go options to the App's client (after the App's
// own, so they win), e.g. kgo.SessionTimeout or kgo.FetchMaxBytes. With
// state stores, do not pass kgo.RecordPartitioner: the App's partitioner
// sends each changelog record to its task's partition.
func ClientOpts(opts ...kgo.Opt) Opt {
	return optFunc(func(c *config) { c.clientOpts = append(c.clientOpts, opts...) })
}

// QueryListen serves interactive queries of the App's stores over HTTP on
// addr (host:port; port 0 picks one) while it runs (query.go, "Interactive
// queries" in the package doc). The App advertises the address to the
// other instances in its Kafka client id, so a query sent to any instance
// reaches the one holding the key.
func QueryListen(addr string) Opt { return optFunc(func(c *config) { c.queryListen = addr }) }

// AdvertisedQueryAddr is the host:port other instances use to reach this
// one's query listener (default: the listener's address, which is only
// right when QueryListen names a host others can reach).
func AdvertisedQueryAddr(addr string) Opt {
	return optFunc(func(c *config) { c.queryAdvertise = addr })
}

// NumStandbyReplicas keeps n standby copies of every stateful task on
// instances other than its owner (Kafka Streams' num.standby.replicas,
// default 0): each tails the task's changelog partitions into local stores
// laid out as the active ones, so when the owner dies the task moves to an
// instance holding a standby and restores only the changelog's tail
// (standby.go). The group leader places tasks and standbys (balancer.go).
func NumStandbyReplicas(n int) Opt { return optFunc(func(c *config) { c.standbys = n }) }
