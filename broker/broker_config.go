package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/internal/properties"
	"github.com/strata-streaming/strata/internal/tlsconf"
	"github.com/strata-streaming/strata/tiering"
)

// Config is the broker's configuration. Fields that Kafka also has are set
// by their Kafka property names through Set, LoadProperties and STRATA_*
// environment variables; the rest are the server's own flags.
type Config struct {
	NodeID int32
	// ControllerQuorumVoters (--controllers, controller.quorum.voters) lists
	// the metadata quorum as id@host:port,…; empty: a one-voter quorum of
	// this node. ControllerListen (--controller-listen) is this node's raft
	// address; ProcessRoles (--roles, process.roles) controller,broker.
	ControllerQuorumVoters string
	ControllerListen       string
	// ControllerJoin (--controller-join) starts a controller that is not a
	// voter yet: --controllers names the current voters, and the node
	// waits (up to ControllerJoinTimeout, 10 minutes) until AddRaftVoter
	// (`strata quorum add-voter`) adds it, catches it up and promotes it.
	// Once its log holds the membership it restarts like any voter.
	ControllerJoin        bool
	ControllerJoinTimeout time.Duration
	// ControllerListenerNames (controller.listener.names) names the raft
	// port's listener for its security protocol (listener.security.protocol.map)
	// and ssl settings (listener.name.<name>.ssl.*): PLAINTEXT or SSL,
	// which here is always mutual TLS.
	ControllerListenerNames string
	ProcessRoles            string
	DataDir                 string // log.dirs
	Listen                  string // host:port of the one PLAINTEXT listener when Listeners is empty (--listen)
	Advertise               string // host:port clients are told to use for Listen; default Listen
	// Kafka's listener model (security_config.go): several named
	// listeners, each with a security protocol.
	Listeners                   string // listeners: NAME://host:port,…
	AdvertisedListeners         string // advertised.listeners
	ListenerSecurityProtocolMap string // listener.security.protocol.map: NAME:PROTOCOL,…
	InterBrokerListenerName     string // inter.broker.listener.name
	ConnectionsMaxReauthMs      int64  // connections.max.reauth.ms (KIP-368): 0 = sessions never expire
	ConnectionFailedAuthDelayMs int64  // connection.failed.authentication.delay.ms
	// Client quotas (quotas.go): usage is measured over QuotaWindowNum
	// samples of QuotaWindowSizeSeconds.
	QuotaWindowNum         int32 // quota.window.num
	QuotaWindowSizeSeconds int32 // quota.window.size.seconds
	// Authorization (authorize.go): AuthorizerClassName
	// (authorizer.class.name) turns ACLs on; SuperUsers (super.users) are
	// principals, ';'-separated, that bypass them.
	AuthorizerClassName       string
	SuperUsers                string
	AllowEveryoneIfNoACLFound bool // allow.everyone.if.no.acl.found
	// AddScram (--add-scram) are SCRAM credentials to create when the
	// quorum holds none: "SCRAM-SHA-512=[name=admin,password=…]".
	AddScram   []string
	HTTPListen string // admin HTTP (/metrics, /healthz); "" disables
	// IcebergCatalogListen (iceberg.catalog.listen) is where the read-only
	// Iceberg REST catalog listens; "" serves it only on the admin
	// listener under /iceberg (iceberg_catalog.go).
	IcebergCatalogListen string
	// IcebergCatalogURI (iceberg.catalog.uri), if set, is an external
	// Iceberg REST catalog the tables of Iceberg topics are registered in
	// and kept up to date with (iceberg_external.go), in the warehouse
	// IcebergCatalogWarehouse (iceberg.catalog.warehouse), authenticated by
	// the bearer token IcebergCatalogToken (iceberg.catalog.token) or the
	// OAuth2 client credentials IcebergCatalogCredential
	// (iceberg.catalog.credential, <client_id>:<secret>). The last two are
	// secrets: described as sensitive, never logged.
	IcebergCatalogURI        string
	IcebergCatalogWarehouse  string
	IcebergCatalogToken      string
	IcebergCatalogCredential string
	// IcebergWriterCPUMinFraction (iceberg.writer.cpu.min.fraction, dynamic)
	// is the share of one core the Iceberg writer keeps when the rest of
	// the node leaves less than about a core idle (iceberg_pacer.go); 1:
	// never paused.
	IcebergWriterCPUMinFraction float64
	ObjectStore                 string // object store URL, used by tiering; default file://<DataDir>/objects

	// Cluster membership and replication (cluster.go, broker/replica).
	BrokerRack                string // broker.rack
	ReplicaSelectorClass      string // replica.selector.class (KIP-392)
	LeaderThrottledRate       int64  // leader.replication.throttled.rate (bytes/s; dynamic)
	FollowerThrottledRate     int64  // follower.replication.throttled.rate (bytes/s; dynamic)
	BrokerHeartbeatIntervalMs int64  // broker.heartbeat.interval.ms
	BrokerSessionTimeoutMs    int64  // broker.session.timeout.ms: missed heartbeats this long fence a broker
	ReplicaLagTimeMaxMs       int64  // replica.lag.time.max.ms
	ReplicaFetchWaitMaxMs     int64  // replica.fetch.wait.max.ms
	ReplicaFetchMaxBytes      int32  // replica.fetch.response.max.bytes
	ControlledShutdownEnable  bool   // controlled.shutdown.enable
	AutoLeaderRebalanceEnable bool   // auto.leader.rebalance.enable
	// Self-balancing (balancer.go), dynamic.
	BalancerEnable                       bool   // strata.balancer.enable
	BalancerIntervalMs                   int64  // strata.balancer.interval.ms
	BalancerMaxMoves                     int64  // strata.balancer.max.concurrent.moves
	BalancerDeadNodeTimeoutMs            int64  // strata.balancer.dead.node.timeout.ms
	BalancerThresholdPercent             int64  // strata.balancer.disk.threshold.percent
	BalancerDecommissionNodes            string // strata.balancer.decommission.nodes
	LeaderImbalanceCheckIntervalSeconds  int64  // leader.imbalance.check.interval.seconds
	OffsetsTopicReplicationFactor        int16  // offsets.topic.replication.factor
	TransactionStateLogReplicationFactor int16  // transaction.state.log.replication.factor

	AutoCreateTopics         bool  // auto.create.topics.enable
	NumPartitions            int32 // num.partitions
	DefaultReplicationFactor int16 // default.replication.factor
	MessageMaxBytes          int32 // message.max.bytes
	SocketRequestMaxBytes    int32 // socket.request.max.bytes
	DeleteTopicEnable        bool  // delete.topic.enable

	LogSegmentBytes             int64 // log.segment.bytes
	LogRollMs                   int64 // log.roll.ms (log.roll.hours)
	LogRetentionMs              int64 // log.retention.ms (…minutes, …hours)
	LogRetentionBytes           int64 // log.retention.bytes
	LogRetentionCheckIntervalMs int64 // log.retention.check.interval.ms
	LogFlushIntervalMessages    int64 // log.flush.interval.messages
	LogFlushIntervalMs          int64 // log.flush.interval.ms
	LogFlushSchedulerIntervalMs int64 // log.flush.scheduler.interval.ms
	LogIndexIntervalBytes       int32 // log.index.interval.bytes
	LogIndexSizeMaxBytes        int32 // log.index.size.max.bytes
	LogCleanupPolicy            string
	LogMessageTimestampType     string // log.message.timestamp.type
	// LogMessageTimestampBeforeMaxMs and AfterMaxMs bound how far a
	// CreateTime record's timestamp may lie before or after the broker's
	// clock (KIP-937; Kafka 4's defaults: unbounded before, one hour after).
	LogMessageTimestampBeforeMaxMs int64 // log.message.timestamp.before.max.ms
	LogMessageTimestampAfterMaxMs  int64 // log.message.timestamp.after.max.ms
	MinInsyncReplicas              int32 // min.insync.replicas
	FileDeleteDelayMs              int64 // file.delete.delay.ms
	LogCheckpointIntervalMs        int64 // log.flush.offset.checkpoint.interval.ms
	LogCleanerBackoffMs            int64 // log.cleaner.backoff.ms: how often compacted logs are checked for cleaning
	// Defaults of the compaction topic configs (their broker synonyms,
	// dynamic as in Kafka): delete.retention.ms, min.cleanable.dirty.ratio,
	// min.compaction.lag.ms and max.compaction.lag.ms.
	LogCleanerDeleteRetentionMs  int64   // log.cleaner.delete.retention.ms
	LogCleanerMinCleanableRatio  float64 // log.cleaner.min.cleanable.ratio
	LogCleanerMinCompactionLagMs int64   // log.cleaner.min.compaction.lag.ms
	LogCleanerMaxCompactionLagMs int64   // log.cleaner.max.compaction.lag.ms

	// CompressionType (compression.type) is the default of the topic
	// config: "producer" stores batches as produced; uncompressed, gzip,
	// snappy, lz4 or zstd stores every batch with that codec, at the
	// KIP-390 level of compression.{gzip,lz4,zstd}.level.
	CompressionType      string
	CompressionGzipLevel int32 // compression.gzip.level: 1..9, or -1 for the codec's default
	CompressionLz4Level  int32 // compression.lz4.level: 1..17 (9, the default, is lz4's fast mode)
	CompressionZstdLevel int32 // compression.zstd.level: -131072..22

	// Transactions (txn_coordinator.go).
	TransactionStateLogNumPartitions int32 // transaction.state.log.num.partitions
	TransactionMaxTimeoutMs          int64 // transaction.max.timeout.ms
	TransactionalIDExpirationMs      int64 // transactional.id.expiration.ms

	// Tiered storage (tiered.go). Kafka's names where Kafka has one.
	RemoteLogTaskIntervalMs       int64 // remote.log.manager.task.interval.ms: how often partitions are checked for segments to upload and remote retention
	RemoteLogThreadPoolSize       int32 // remote.log.manager.thread.pool.size: partitions uploading at once
	RemoteLogRetryBackoffMs       int64 // remote.log.manager.task.retry.backoff.ms: first wait after a failed upload
	RemoteLogRetryBackoffMaxMs    int64 // remote.log.manager.task.retry.backoff.max.ms: longest wait between retries
	RemoteLogReaderThreads        int32 // remote.log.reader.threads: remote reads in flight at once
	RemoteLogUploadOnRoll         bool  // strata.remote.log.upload.on.roll: upload a segment as soon as it is sealed
	RemoteLogCacheBytes           int64 // remote.log.cache.size.bytes (Strata): on-disk chunk cache limit
	RemoteLogCacheChunkBytes      int64 // remote.log.cache.chunk.size.bytes (Strata): bytes per ranged read
	RemoteLogCacheReadAheadChunks int32 // remote.log.cache.read.ahead.chunks (Strata): chunks prefetched after a read

	// Group coordinator (consumer groups and committed offsets).
	OffsetsTopicNumPartitions       int32 // offsets.topic.num.partitions
	OffsetsTopicSegmentBytes        int64 // offsets.topic.segment.bytes
	OffsetsRetentionMs              int64 // offsets.retention.minutes (kept in ms so tests can go below a minute)
	OffsetsRetentionCheckIntervalMs int64 // offsets.retention.check.interval.ms
	OffsetMetadataMaxBytes          int32 // offset.metadata.max.bytes
	GroupInitialRebalanceDelayMs    int64 // group.initial.rebalance.delay.ms
	GroupMinSessionTimeoutMs        int64 // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs        int64 // group.max.session.timeout.ms
	GroupMaxSize                    int32 // group.max.size
	// KIP-848 consumer groups.
	GroupConsumerProtocolEnable      bool   // group.consumer.protocol.enable (default true): serve and advertise ConsumerGroupHeartbeat/Describe
	GroupConsumerSessionTimeoutMs    int64  // group.consumer.session.timeout.ms
	GroupConsumerHeartbeatIntervalMs int64  // group.consumer.heartbeat.interval.ms
	GroupConsumerAssignor            string // group.consumer.assignors (first entry: the default)
	// Bounds of the GROUP configs consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms (dynamic_config.go).
	GroupConsumerMinSessionTimeoutMs    int64 // group.consumer.min.session.timeout.ms
	GroupConsumerMaxSessionTimeoutMs    int64 // group.consumer.max.session.timeout.ms
	GroupConsumerMinHeartbeatIntervalMs int64 // group.consumer.min.heartbeat.interval.ms
	GroupConsumerMaxHeartbeatIntervalMs int64 // group.consumer.max.heartbeat.interval.ms
	// KIP-932 share groups (share_coordinator.go).
	GroupShareEnable                  bool  // group.share.enable (default true): serve and advertise the share group APIs
	GroupShareRecordLockDurationMs    int64 // group.share.record.lock.duration.ms
	GroupShareDeliveryCountLimit      int32 // group.share.delivery.count.limit
	GroupSharePartitionMaxRecordLocks int32 // group.share.partition.max.record.locks
	GroupShareSessionTimeoutMs        int64 // group.share.session.timeout.ms
	GroupShareHeartbeatIntervalMs     int64 // group.share.heartbeat.interval.ms
	// __share_group_state (share_state.go).
	ShareCoordinatorStateTopicNumPartitions     int32 // share.coordinator.state.topic.num.partitions
	ShareCoordinatorStateTopicReplicationFactor int16 // share.coordinator.state.topic.replication.factor

	// objectStore, if set (tests), is used instead of opening ObjectStore.
	objectStore tiering.ObjectStore

	// explicit records which Kafka properties were set, for DescribeConfigs.
	explicit map[string]string
	// security holds the ssl.* and listener.name.<l>.* properties,
	// checked as a whole by Validate (security_config.go). Never
	// described or logged: some are secrets.
	security map[string]string
}

// defaultIcebergCatalogListen is iceberg.catalog.listen's default. This
// package's tests clear it (catalog_default_test.go): their brokers,
// several at a time and beside other test processes, would contend for the
// one port and log the loser's warning.
var defaultIcebergCatalogListen = "127.0.0.1:8181"

// DefaultConfig returns Kafka's defaults for a single node.
func DefaultConfig() Config {
	return Config{
		NodeID:                               1,
		ProcessRoles:                         "controller,broker",
		DataDir:                              "./data",
		Listen:                               "127.0.0.1:9092",
		HTTPListen:                           "127.0.0.1:9644",
		IcebergCatalogListen:                 defaultIcebergCatalogListen,
		IcebergWriterCPUMinFraction:          icebergDefaultWriterCPUMinFraction,
		BrokerHeartbeatIntervalMs:            250,
		BrokerSessionTimeoutMs:               1500,
		ReplicaLagTimeMaxMs:                  30000,
		ReplicaFetchWaitMaxMs:                500,
		ReplicaFetchMaxBytes:                 10 << 20,
		ControlledShutdownEnable:             true,
		AutoLeaderRebalanceEnable:            true,
		BalancerEnable:                       true,
		LeaderThrottledRate:                  math.MaxInt64,
		FollowerThrottledRate:                math.MaxInt64,
		BalancerIntervalMs:                   30000,
		BalancerMaxMoves:                     5,
		BalancerDeadNodeTimeoutMs:            10 * 60 * 1000,
		BalancerThresholdPercent:             10,
		LeaderImbalanceCheckIntervalSeconds:  5,
		OffsetsTopicReplicationFactor:        3,
		TransactionStateLogReplicationFactor: 3,

		AutoCreateTopics:               true,
		NumPartitions:                  1,
		DefaultReplicationFactor:       1,
		MessageMaxBytes:                1048588,
		SocketRequestMaxBytes:          100 * 1024 * 1024,
		DeleteTopicEnable:              true,
		LogSegmentBytes:                1 << 30,
		LogRollMs:                      7 * 24 * 3600 * 1000,
		LogRetentionMs:                 7 * 24 * 3600 * 1000,
		LogRetentionBytes:              -1,
		LogRetentionCheckIntervalMs:    5 * 60 * 1000,
		LogFlushIntervalMessages:       math.MaxInt64,
		LogFlushIntervalMs:             math.MaxInt64,
		LogFlushSchedulerIntervalMs:    1000,
		LogIndexIntervalBytes:          4096,
		LogIndexSizeMaxBytes:           10 * 1024 * 1024,
		LogCleanupPolicy:               "delete",
		LogMessageTimestampType:        "CreateTime",
		LogMessageTimestampBeforeMaxMs: math.MaxInt64,
		LogMessageTimestampAfterMaxMs:  3600000,
		MinInsyncReplicas:              1,
		FileDeleteDelayMs:              60000,
		CompressionType:                "producer",
		CompressionGzipLevel:           storage.GzipLevelDefault,
		CompressionLz4Level:            storage.LZ4LevelDefault,
		CompressionZstdLevel:           storage.ZstdLevelDefault,
		LogCheckpointIntervalMs:        60000,
		LogCleanerBackoffMs:            15000,
		LogCleanerDeleteRetentionMs:    24 * 3600 * 1000,
		LogCleanerMinCleanableRatio:    0.5,
		LogCleanerMinCompactionLagMs:   0,
		LogCleanerMaxCompactionLagMs:   math.MaxInt64,

		TransactionStateLogNumPartitions: 50,
		TransactionMaxTimeoutMs:          900000,
		TransactionalIDExpirationMs:      604800000,

		RemoteLogTaskIntervalMs:       30000,
		RemoteLogThreadPoolSize:       10,
		RemoteLogRetryBackoffMs:       500,
		RemoteLogRetryBackoffMaxMs:    30000,
		RemoteLogReaderThreads:        10,
		RemoteLogUploadOnRoll:         true,
		RemoteLogCacheBytes:           1 << 30,
		RemoteLogCacheChunkBytes:      4 << 20,
		RemoteLogCacheReadAheadChunks: 2,

		OffsetsTopicNumPartitions:       50,
		OffsetsTopicSegmentBytes:        100 * 1024 * 1024,
		OffsetsRetentionMs:              7 * 24 * 3600 * 1000,
		OffsetsRetentionCheckIntervalMs: 600000,
		OffsetMetadataMaxBytes:          4096,
		GroupInitialRebalanceDelayMs:    3000,
		GroupMinSessionTimeoutMs:        6000,
		GroupMaxSessionTimeoutMs:        1800000,
		GroupMaxSize:                    math.MaxInt32,

		GroupConsumerProtocolEnable:      true,
		GroupConsumerSessionTimeoutMs:    45000,
		GroupConsumerHeartbeatIntervalMs: 5000,
		GroupConsumerAssignor:            "uniform",

		GroupShareEnable:                  true,
		GroupShareRecordLockDurationMs:    30000,
		GroupShareDeliveryCountLimit:      5,
		GroupSharePartitionMaxRecordLocks: 2000,
		GroupShareSessionTimeoutMs:        45000,
		GroupShareHeartbeatIntervalMs:     5000,

		ShareCoordinatorStateTopicNumPartitions:     50,
		ShareCoordinatorStateTopicReplicationFactor: 3,

		GroupConsumerMinSessionTimeoutMs:    45000,
		GroupConsumerMaxSessionTimeoutMs:    60000,
		GroupConsumerMinHeartbeatIntervalMs: 5000,
		GroupConsumerMaxHeartbeatIntervalMs: 15000,

		ConnectionFailedAuthDelayMs: 100,
		QuotaWindowNum:              11,
		QuotaWindowSizeSeconds:      1,

		explicit: map[string]string{},
	}
}

// brokerProperty describes one Kafka broker property Strata understands.
type brokerProperty struct {
	set func(c *Config, v string) error
	get func(c *Config) string
	// typ is the type DescribeConfigs reports (kmsg.ConfigTypeString
	// when zero).
	typ kmsg.ConfigType
	// sensitive values (credentials) are described as null with
	// is_sensitive set, as Kafka describes its PASSWORD configs.
	sensitive bool
}

// sensitiveProp marks p as holding a secret.
func sensitiveProp(p brokerProperty) brokerProperty {
	p.sensitive = true
	return p
}

func intProp(field func(c *Config) *int64, scale int64) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			if n > 0 && scale > 1 && n > math.MaxInt64/scale {
				n = math.MaxInt64
			} else {
				n *= scale
			}
			*field(c) = n
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(*field(c)/scale, 10) },
		typ: kmsg.ConfigTypeLong,
	}
}

func int32Prop(field func(c *Config) *int32, min int32) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return fmt.Errorf("not a 32-bit integer: %q", v)
			}
			if int32(n) < min {
				return fmt.Errorf("must be at least %d", min)
			}
			*field(c) = int32(n)
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(int64(*field(c)), 10) },
		typ: kmsg.ConfigTypeInt,
	}
}

// int32RangeProp is an int property whose values r accepts.
func int32RangeProp(field func(c *Config) *int32, r intRange) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return fmt.Errorf("not a 32-bit integer: %q", v)
			}
			if err := r.check(n); err != nil {
				return err
			}
			*field(c) = int32(n)
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(int64(*field(c)), 10) },
		typ: kmsg.ConfigTypeInt,
	}
}

func int16Prop(field func(c *Config) *int16) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16)
			if err != nil || n < 1 {
				return fmt.Errorf("must be a positive 16-bit integer: %q", v)
			}
			*field(c) = int16(n)
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(int(*field(c))) },
		typ: kmsg.ConfigTypeShort,
	}
}

// checkedProp is p refusing the values check rejects (a topic config's
// validator, for its broker synonym).
func checkedProp(p brokerProperty, check func(string) error) brokerProperty {
	set := p.set
	p.set = func(c *Config, v string) error {
		if err := check(strings.TrimSpace(v)); err != nil {
			return err
		}
		return set(c, v)
	}
	return p
}

// doubleProp is a DOUBLE property within [min, max].
func doubleProp(field func(c *Config) *float64, min, max float64) brokerProperty {
	return checkedProp(brokerProperty{
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("not a number: %q", v)
			}
			*field(c) = f
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(*field(c), 'g', -1, 64) },
		typ: kmsg.ConfigTypeDouble,
	}, validateDouble(min, max))
}

func boolProp(field func(c *Config) *bool) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not a boolean: %q", v)
			}
			*field(c) = b
			return nil
		},
		get: func(c *Config) string { return strconv.FormatBool(*field(c)) },
		typ: kmsg.ConfigTypeBoolean,
	}
}

func stringProp(field func(c *Config) *string, allowed ...string) brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			v = strings.TrimSpace(v)
			if len(allowed) > 0 && !contains(allowed, v) {
				return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return *field(c) },
		typ: kmsg.ConfigTypeString,
	}
}

// nodeListProp is a LIST of node ids.
func nodeListProp(field func(c *Config) *string) brokerProperty {
	p := listProp(stringProp(field))
	set := p.set
	p.set = func(c *Config, v string) error {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if n, err := strconv.ParseInt(f, 10, 32); err != nil || n < 0 {
				return fmt.Errorf("not a node id: %q", f)
			}
		}
		return set(c, v)
	}
	return p
}

// listProp is a property Kafka types as a comma-separated LIST.
func listProp(p brokerProperty) brokerProperty {
	p.typ = kmsg.ConfigTypeList
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// brokerProperties maps Kafka broker property names to Config fields.
var brokerProperties = map[string]brokerProperty{
	"node.id":   int32Prop(func(c *Config) *int32 { return &c.NodeID }, 0),
	"broker.id": int32Prop(func(c *Config) *int32 { return &c.NodeID }, 0),
	"log.dirs":  stringProp(func(c *Config) *string { return &c.DataDir }),

	"controller.quorum.voters":  listProp(stringProp(func(c *Config) *string { return &c.ControllerQuorumVoters })),
	"process.roles":             listProp(stringProp(func(c *Config) *string { return &c.ProcessRoles })),
	"controller.listener.names": stringProp(func(c *Config) *string { return &c.ControllerListenerNames }),
	"log.dir":                   stringProp(func(c *Config) *string { return &c.DataDir }),

	"broker.rack":                              stringProp(func(c *Config) *string { return &c.BrokerRack }),
	"iceberg.catalog.listen":                   stringProp(func(c *Config) *string { return &c.IcebergCatalogListen }),
	"iceberg.catalog.uri":                      stringProp(func(c *Config) *string { return &c.IcebergCatalogURI }),
	"iceberg.catalog.warehouse":                stringProp(func(c *Config) *string { return &c.IcebergCatalogWarehouse }),
	"iceberg.catalog.token":                    sensitiveProp(stringProp(func(c *Config) *string { return &c.IcebergCatalogToken })),
	"iceberg.catalog.credential":               sensitiveProp(stringProp(func(c *Config) *string { return &c.IcebergCatalogCredential })),
	icebergWriterCPUMinFractionConfig:          doubleProp(func(c *Config) *float64 { return &c.IcebergWriterCPUMinFraction }, icebergMinWriterCPUFraction, 1),
	"leader.replication.throttled.rate":        intProp(func(c *Config) *int64 { return &c.LeaderThrottledRate }, 1),
	"follower.replication.throttled.rate":      intProp(func(c *Config) *int64 { return &c.FollowerThrottledRate }, 1),
	"replica.selector.class":                   stringProp(func(c *Config) *string { return &c.ReplicaSelectorClass }, "", leaderSelectorClass, rackAwareSelectorClass),
	"broker.heartbeat.interval.ms":             intProp(func(c *Config) *int64 { return &c.BrokerHeartbeatIntervalMs }, 1),
	"broker.session.timeout.ms":                intProp(func(c *Config) *int64 { return &c.BrokerSessionTimeoutMs }, 1),
	"replica.lag.time.max.ms":                  intProp(func(c *Config) *int64 { return &c.ReplicaLagTimeMaxMs }, 1),
	"replica.fetch.wait.max.ms":                intProp(func(c *Config) *int64 { return &c.ReplicaFetchWaitMaxMs }, 1),
	"replica.fetch.response.max.bytes":         int32Prop(func(c *Config) *int32 { return &c.ReplicaFetchMaxBytes }, 1),
	"controlled.shutdown.enable":               boolProp(func(c *Config) *bool { return &c.ControlledShutdownEnable }),
	"auto.leader.rebalance.enable":             boolProp(func(c *Config) *bool { return &c.AutoLeaderRebalanceEnable }),
	"strata.balancer.enable":                   boolProp(func(c *Config) *bool { return &c.BalancerEnable }),
	"strata.balancer.interval.ms":              intProp(func(c *Config) *int64 { return &c.BalancerIntervalMs }, 1),
	"strata.balancer.max.concurrent.moves":     intProp(func(c *Config) *int64 { return &c.BalancerMaxMoves }, 1),
	"strata.balancer.dead.node.timeout.ms":     intProp(func(c *Config) *int64 { return &c.BalancerDeadNodeTimeoutMs }, 1),
	"strata.balancer.disk.threshold.percent":   intProp(func(c *Config) *int64 { return &c.BalancerThresholdPercent }, 1),
	decommissionConfig:                         nodeListProp(func(c *Config) *string { return &c.BalancerDecommissionNodes }),
	"leader.imbalance.check.interval.seconds":  intProp(func(c *Config) *int64 { return &c.LeaderImbalanceCheckIntervalSeconds }, 1),
	"offsets.topic.replication.factor":         int16Prop(func(c *Config) *int16 { return &c.OffsetsTopicReplicationFactor }),
	"transaction.state.log.replication.factor": int16Prop(func(c *Config) *int16 { return &c.TransactionStateLogReplicationFactor }),

	"auto.create.topics.enable": boolProp(func(c *Config) *bool { return &c.AutoCreateTopics }),
	"delete.topic.enable":       boolProp(func(c *Config) *bool { return &c.DeleteTopicEnable }),
	"num.partitions":            int32Prop(func(c *Config) *int32 { return &c.NumPartitions }, 1),
	"message.max.bytes":         int32Prop(func(c *Config) *int32 { return &c.MessageMaxBytes }, 0),
	"socket.request.max.bytes":  int32Prop(func(c *Config) *int32 { return &c.SocketRequestMaxBytes }, 1),
	"min.insync.replicas":       int32Prop(func(c *Config) *int32 { return &c.MinInsyncReplicas }, 1),
	"log.index.interval.bytes":  int32Prop(func(c *Config) *int32 { return &c.LogIndexIntervalBytes }, 0),
	"log.index.size.max.bytes":  int32Prop(func(c *Config) *int32 { return &c.LogIndexSizeMaxBytes }, 4),
	"default.replication.factor": {
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16)
			if err != nil || n < 1 {
				return fmt.Errorf("must be a positive 16-bit integer: %q", v)
			}
			c.DefaultReplicationFactor = int16(n)
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(int(c.DefaultReplicationFactor)) },
		typ: kmsg.ConfigTypeShort,
	},

	"log.segment.bytes":                            intProp(func(c *Config) *int64 { return &c.LogSegmentBytes }, 1),
	"log.roll.ms":                                  intProp(func(c *Config) *int64 { return &c.LogRollMs }, 1),
	"log.roll.hours":                               intProp(func(c *Config) *int64 { return &c.LogRollMs }, 3600*1000),
	"log.retention.ms":                             intProp(func(c *Config) *int64 { return &c.LogRetentionMs }, 1),
	"log.retention.minutes":                        intProp(func(c *Config) *int64 { return &c.LogRetentionMs }, 60*1000),
	"log.retention.hours":                          intProp(func(c *Config) *int64 { return &c.LogRetentionMs }, 3600*1000),
	"log.retention.bytes":                          intProp(func(c *Config) *int64 { return &c.LogRetentionBytes }, 1),
	"log.retention.check.interval.ms":              intProp(func(c *Config) *int64 { return &c.LogRetentionCheckIntervalMs }, 1),
	"log.flush.interval.messages":                  intProp(func(c *Config) *int64 { return &c.LogFlushIntervalMessages }, 1),
	"log.flush.interval.ms":                        intProp(func(c *Config) *int64 { return &c.LogFlushIntervalMs }, 1),
	"log.flush.scheduler.interval.ms":              intProp(func(c *Config) *int64 { return &c.LogFlushSchedulerIntervalMs }, 1),
	"log.flush.offset.checkpoint.interval.ms":      intProp(func(c *Config) *int64 { return &c.LogCheckpointIntervalMs }, 1),
	"file.delete.delay.ms":                         intProp(func(c *Config) *int64 { return &c.FileDeleteDelayMs }, 1),
	"log.cleaner.backoff.ms":                       intProp(func(c *Config) *int64 { return &c.LogCleanerBackoffMs }, 1),
	"log.cleaner.delete.retention.ms":              checkedProp(intProp(func(c *Config) *int64 { return &c.LogCleanerDeleteRetentionMs }, 1), validateLong(0)),
	"log.cleaner.min.cleanable.ratio":              doubleProp(func(c *Config) *float64 { return &c.LogCleanerMinCleanableRatio }, 0, 1),
	"log.cleaner.min.compaction.lag.ms":            checkedProp(intProp(func(c *Config) *int64 { return &c.LogCleanerMinCompactionLagMs }, 1), validateLong(0)),
	"log.cleaner.max.compaction.lag.ms":            checkedProp(intProp(func(c *Config) *int64 { return &c.LogCleanerMaxCompactionLagMs }, 1), validateLong(1)),
	"transaction.state.log.num.partitions":         int32Prop(func(c *Config) *int32 { return &c.TransactionStateLogNumPartitions }, 1),
	"transaction.max.timeout.ms":                   intProp(func(c *Config) *int64 { return &c.TransactionMaxTimeoutMs }, 1),
	"transactional.id.expiration.ms":               intProp(func(c *Config) *int64 { return &c.TransactionalIDExpirationMs }, 1),
	"remote.log.manager.task.interval.ms":          intProp(func(c *Config) *int64 { return &c.RemoteLogTaskIntervalMs }, 1),
	"remote.log.manager.thread.pool.size":          int32Prop(func(c *Config) *int32 { return &c.RemoteLogThreadPoolSize }, 1),
	"remote.log.manager.task.retry.backoff.ms":     intProp(func(c *Config) *int64 { return &c.RemoteLogRetryBackoffMs }, 1),
	"remote.log.manager.task.retry.backoff.max.ms": intProp(func(c *Config) *int64 { return &c.RemoteLogRetryBackoffMaxMs }, 1),
	"remote.log.reader.threads":                    int32Prop(func(c *Config) *int32 { return &c.RemoteLogReaderThreads }, 1),
	"strata.remote.log.upload.on.roll":             boolProp(func(c *Config) *bool { return &c.RemoteLogUploadOnRoll }),
	"remote.log.cache.size.bytes":                  intProp(func(c *Config) *int64 { return &c.RemoteLogCacheBytes }, 1),
	"remote.log.cache.chunk.size.bytes":            intProp(func(c *Config) *int64 { return &c.RemoteLogCacheChunkBytes }, 1),
	"remote.log.cache.read.ahead.chunks":           int32Prop(func(c *Config) *int32 { return &c.RemoteLogCacheReadAheadChunks }, 1),
	"log.cleanup.policy":                           listProp(stringProp(func(c *Config) *string { return &c.LogCleanupPolicy }, "delete", "compact", "compact,delete", "delete,compact")),
	"log.message.timestamp.type":                   stringProp(func(c *Config) *string { return &c.LogMessageTimestampType }, "CreateTime", "LogAppendTime"),
	"log.message.timestamp.before.max.ms":          intProp(func(c *Config) *int64 { return &c.LogMessageTimestampBeforeMaxMs }, 1),
	"log.message.timestamp.after.max.ms":           intProp(func(c *Config) *int64 { return &c.LogMessageTimestampAfterMaxMs }, 1),
	"compression.type":                             stringProp(func(c *Config) *string { return &c.CompressionType }, compressionTypes...),
	"compression.gzip.level":                       int32RangeProp(func(c *Config) *int32 { return &c.CompressionGzipLevel }, gzipLevels),
	"compression.lz4.level":                        int32RangeProp(func(c *Config) *int32 { return &c.CompressionLz4Level }, lz4Levels),
	"compression.zstd.level":                       int32RangeProp(func(c *Config) *int32 { return &c.CompressionZstdLevel }, zstdLevels),

	"offsets.topic.num.partitions":                     int32Prop(func(c *Config) *int32 { return &c.OffsetsTopicNumPartitions }, 1),
	"offsets.topic.segment.bytes":                      intProp(func(c *Config) *int64 { return &c.OffsetsTopicSegmentBytes }, 1),
	"offsets.retention.minutes":                        intProp(func(c *Config) *int64 { return &c.OffsetsRetentionMs }, 60*1000),
	"offsets.retention.check.interval.ms":              intProp(func(c *Config) *int64 { return &c.OffsetsRetentionCheckIntervalMs }, 1),
	"offset.metadata.max.bytes":                        int32Prop(func(c *Config) *int32 { return &c.OffsetMetadataMaxBytes }, 0),
	"group.initial.rebalance.delay.ms":                 intProp(func(c *Config) *int64 { return &c.GroupInitialRebalanceDelayMs }, 1),
	"group.min.session.timeout.ms":                     intProp(func(c *Config) *int64 { return &c.GroupMinSessionTimeoutMs }, 1),
	"group.max.session.timeout.ms":                     intProp(func(c *Config) *int64 { return &c.GroupMaxSessionTimeoutMs }, 1),
	"group.max.size":                                   int32Prop(func(c *Config) *int32 { return &c.GroupMaxSize }, 1),
	"group.consumer.protocol.enable":                   boolProp(func(c *Config) *bool { return &c.GroupConsumerProtocolEnable }),
	"group.consumer.session.timeout.ms":                intProp(func(c *Config) *int64 { return &c.GroupConsumerSessionTimeoutMs }, 1),
	"group.consumer.heartbeat.interval.ms":             intProp(func(c *Config) *int64 { return &c.GroupConsumerHeartbeatIntervalMs }, 1),
	"group.consumer.assignors":                         consumerAssignorsProp(),
	"group.consumer.min.session.timeout.ms":            intProp(func(c *Config) *int64 { return &c.GroupConsumerMinSessionTimeoutMs }, 1),
	"group.consumer.max.session.timeout.ms":            intProp(func(c *Config) *int64 { return &c.GroupConsumerMaxSessionTimeoutMs }, 1),
	"group.consumer.min.heartbeat.interval.ms":         intProp(func(c *Config) *int64 { return &c.GroupConsumerMinHeartbeatIntervalMs }, 1),
	"group.consumer.max.heartbeat.interval.ms":         intProp(func(c *Config) *int64 { return &c.GroupConsumerMaxHeartbeatIntervalMs }, 1),
	"group.share.enable":                               boolProp(func(c *Config) *bool { return &c.GroupShareEnable }),
	"group.share.record.lock.duration.ms":              intProp(func(c *Config) *int64 { return &c.GroupShareRecordLockDurationMs }, 1),
	"group.share.delivery.count.limit":                 int32Prop(func(c *Config) *int32 { return &c.GroupShareDeliveryCountLimit }, 1),
	"group.share.partition.max.record.locks":           int32Prop(func(c *Config) *int32 { return &c.GroupSharePartitionMaxRecordLocks }, 1),
	"group.share.session.timeout.ms":                   intProp(func(c *Config) *int64 { return &c.GroupShareSessionTimeoutMs }, 1),
	"group.share.heartbeat.interval.ms":                intProp(func(c *Config) *int64 { return &c.GroupShareHeartbeatIntervalMs }, 1),
	"share.coordinator.state.topic.num.partitions":     int32Prop(func(c *Config) *int32 { return &c.ShareCoordinatorStateTopicNumPartitions }, 1),
	"share.coordinator.state.topic.replication.factor": int16Prop(func(c *Config) *int16 { return &c.ShareCoordinatorStateTopicReplicationFactor }),

	"listeners":                                 stringProp(func(c *Config) *string { return &c.Listeners }),
	"advertised.listeners":                      stringProp(func(c *Config) *string { return &c.AdvertisedListeners }),
	"listener.security.protocol.map":            stringProp(func(c *Config) *string { return &c.ListenerSecurityProtocolMap }),
	"inter.broker.listener.name":                stringProp(func(c *Config) *string { return &c.InterBrokerListenerName }),
	"connections.max.reauth.ms":                 intProp(func(c *Config) *int64 { return &c.ConnectionsMaxReauthMs }, 1),
	"connection.failed.authentication.delay.ms": intProp(func(c *Config) *int64 { return &c.ConnectionFailedAuthDelayMs }, 1),
	"quota.window.num":                          int32Prop(func(c *Config) *int32 { return &c.QuotaWindowNum }, 2),
	"quota.window.size.seconds":                 int32Prop(func(c *Config) *int32 { return &c.QuotaWindowSizeSeconds }, 1),
	"authorizer.class.name":                     stringProp(func(c *Config) *string { return &c.AuthorizerClassName }, authorizerClassNames...),
	"super.users":                               stringProp(func(c *Config) *string { return &c.SuperUsers }),
	"allow.everyone.if.no.acl.found":            boolProp(func(c *Config) *bool { return &c.AllowEveryoneIfNoACLFound }),
}

// ErrUnknownProperty is returned by Set for a property Strata does not know.
var ErrUnknownProperty = errors.New("broker: unknown property")

// Set sets one Kafka broker property by name.
func (c *Config) Set(key, value string) error {
	key = strings.TrimSpace(key)
	if securityProperty(key) {
		if c.security == nil {
			c.security = map[string]string{}
		}
		c.security[key] = strings.TrimSpace(value)
		return nil
	}
	p, ok := brokerProperties[key]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownProperty, key)
	}
	if c.explicit == nil {
		c.explicit = map[string]string{}
	}
	// As in Kafka, a finer unit wins whatever the order: once
	// log.retention.ms is set, log.retention.hours no longer applies.
	for _, finer := range finerUnits[key] {
		if _, set := c.explicit[finer]; set {
			var scratch Config
			if err := p.set(&scratch, value); err != nil {
				return fmt.Errorf("broker: property %s: %w", key, err)
			}
			c.explicit[key] = strings.TrimSpace(value)
			return nil
		}
	}
	if err := p.set(c, value); err != nil {
		return fmt.Errorf("broker: property %s: %w", key, err)
	}
	c.explicit[key] = strings.TrimSpace(value)
	return nil
}

// finerUnits lists, for a property in a coarse unit, the properties in finer
// units that take precedence over it.
var finerUnits = map[string][]string{
	"log.retention.hours":   {"log.retention.minutes", "log.retention.ms"},
	"log.retention.minutes": {"log.retention.ms"},
	"log.roll.hours":        {"log.roll.ms"},
}

// LoadProperties reads a server.properties-style file (key=value or
// key: value lines, # and ! comments). Properties Strata does not know are
// returned in unknown rather than failing, because Kafka's own files carry
// many (listeners, controller.quorum.voters, …) that do not apply here.
func (c *Config) LoadProperties(path string) (unknown []string, err error) {
	err = properties.Each(path, func(line int, key, value string) error {
		if err := c.Set(key, value); err != nil {
			if errors.Is(err, ErrUnknownProperty) {
				unknown = append(unknown, key)
				return nil
			}
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		return nil
	})
	var open *fs.PathError
	switch {
	case errors.As(err, &open):
		return nil, fmt.Errorf("broker: config: %w", err)
	case err != nil:
		return nil, fmt.Errorf("broker: config %w", err)
	}
	return unknown, nil
}

// LoadEnv applies STRATA_* variables: STRATA_LOG_RETENTION_HOURS=48 sets
// log.retention.hours. Variables that name no known property are ignored
// (STRATA_BROKERS, for instance, belongs to the CLI).
func (c *Config) LoadEnv(environ []string) error {
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "STRATA_") {
			continue
		}
		i := strings.IndexByte(kv, '=')
		if i < 0 {
			continue
		}
		key := strings.ToLower(strings.ReplaceAll(kv[len("STRATA_"):i], "_", "."))
		if _, ok := brokerProperties[key]; !ok && !securityProperty(key) {
			continue
		}
		if err := c.Set(key, kv[i+1:]); err != nil {
			return fmt.Errorf("%w (from %s)", err, kv[:i])
		}
	}
	return nil
}

// Validate checks the configuration as a whole.
func (c *Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("broker: log.dirs (--data-dir) must not be empty")
	case c.Listen == "" && c.Listeners == "":
		return errors.New("broker: --listen (or listeners) must not be empty")
	case c.LogSegmentBytes < 14:
		return errors.New("broker: log.segment.bytes must be at least 14")
	case c.MessageMaxBytes < 0:
		return errors.New("broker: message.max.bytes must not be negative")
	case c.OffsetsTopicNumPartitions < 1:
		return errors.New("broker: offsets.topic.num.partitions must be at least 1")
	case c.OffsetsTopicSegmentBytes < 14:
		return errors.New("broker: offsets.topic.segment.bytes must be at least 14")
	case c.OffsetsRetentionMs < 1 || c.OffsetsRetentionCheckIntervalMs < 1:
		return errors.New("broker: offsets.retention.minutes and offsets.retention.check.interval.ms must be positive")
	case c.GroupInitialRebalanceDelayMs < 0:
		return errors.New("broker: group.initial.rebalance.delay.ms must not be negative")
	case c.GroupMinSessionTimeoutMs > c.GroupMaxSessionTimeoutMs:
		return errors.New("broker: group.min.session.timeout.ms must not exceed group.max.session.timeout.ms")
	case c.RemoteLogTaskIntervalMs < 1 || c.RemoteLogRetryBackoffMs < 1 || c.RemoteLogRetryBackoffMaxMs < c.RemoteLogRetryBackoffMs:
		return errors.New("broker: remote.log.manager.task.interval.ms and the retry backoffs must be positive, the maximum backoff at least the first")
	case c.RemoteLogCacheChunkBytes < 1<<10 || c.RemoteLogCacheBytes < c.RemoteLogCacheChunkBytes:
		return errors.New("broker: remote.log.cache.chunk.size.bytes must be at least 1024 and remote.log.cache.size.bytes at least one chunk")
	}
	if dirs := c.LogDirs(); len(dirs) == 0 {
		return errors.New("broker: log.dirs (--data-dir) lists no directory")
	} else if err := checkLogDirs(dirs); err != nil {
		return err
	}
	if _, err := c.resolveListeners(); err != nil {
		return err
	}
	if _, err := c.superUsers(); err != nil {
		return err
	}
	for _, v := range c.AddScram {
		if _, err := parseAddScram(v); err != nil {
			return err
		}
	}
	return c.validateExternalCatalog()
}

// describe returns every known broker property and its current value, and
// whether it was set explicitly (for DescribeConfigs on the broker resource).
func (c *Config) describe() []describedProperty {
	names := make([]string, 0, len(brokerProperties))
	for name := range brokerProperties {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]describedProperty, 0, len(names))
	for _, name := range names {
		_, explicit := c.explicit[name]
		p := brokerProperties[name]
		out = append(out, describedProperty{name: name, value: p.get(c), explicit: explicit, sensitive: p.sensitive})
	}
	// The security settings as given (ssl.*, sasl.*, listener.name.*,
	// admin.http.*), secrets hidden.
	for _, name := range slices.Sorted(maps.Keys(c.security)) {
		out = append(out, describedProperty{name: name, value: c.security[name], explicit: true, sensitive: securitySensitive(name)})
	}
	return out
}

type describedProperty struct {
	name, value string
	explicit    bool
	// sensitive values (passwords, keys, JAAS lines) are described as
	// null with is_sensitive set, as in Kafka.
	sensitive bool
}

// securitySensitive reports whether a security setting holds a secret.
func securitySensitive(key string) bool {
	last := key
	if i := strings.LastIndex(key, "ssl."); i >= 0 {
		last = key[i:]
	}
	return tlsconf.Sensitive(last) || saslSensitive(key) || strings.Contains(key, "password")
}

// consumerAssignorsProp is group.consumer.assignors: a list of built-in
// assignor names ("uniform", "range"); the first is the default of groups
// whose members name none. Kafka's class names are not accepted.
func consumerAssignorsProp() brokerProperty {
	return brokerProperty{
		set: func(c *Config, v string) error {
			var first string
			for _, name := range strings.Split(v, ",") {
				name = strings.TrimSpace(name)
				if name != "uniform" && name != "range" {
					return fmt.Errorf("unknown assignor %q: must be uniform or range", name)
				}
				if first == "" {
					first = name
				}
			}
			c.GroupConsumerAssignor = first
			return nil
		},
		get: func(c *Config) string { return c.GroupConsumerAssignor },
		typ: kmsg.ConfigTypeList,
	}
}
