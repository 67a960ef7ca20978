package broker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-streaming/strata/broker/storage"
)

// topicConfigDef is one topic-level config: its Kafka name, the broker
// properties that supply its default (Kafka's synonyms, most specific
// first: log.retention.ms before log.retention.hours), and a validator.
type topicConfigDef struct {
	name           string
	brokerSynonyms []string
	// defaultValue returns the effective default given the broker config.
	defaultValue func(c *Config) string
	validate     func(v string) error
	sensitive    bool
}

func validateLong(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a long", v)
		}
		if n < min {
			return fmt.Errorf("%d is below the minimum %d", n, min)
		}
		return nil
	}
}

func validateOneOf(allowed ...string) func(string) error {
	return func(v string) error {
		if !contains(allowed, v) {
			return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, ", "))
		}
		return nil
	}
}

// intRange is the values an int config accepts: [min, max], and also
// extra if set (gzip's -1, "the codec's default").
type intRange struct {
	min, max int64
	extra    *int64
}

var (
	gzipDefault = int64(storage.GzipLevelDefault)
	gzipLevels  = intRange{min: storage.GzipLevelMin, max: storage.GzipLevelMax, extra: &gzipDefault}
	lz4Levels   = intRange{min: storage.LZ4LevelMin, max: storage.LZ4LevelMax}
	zstdLevels  = intRange{min: storage.ZstdLevelMin, max: storage.ZstdLevelMax}
)

func (r intRange) check(n int64) error {
	switch {
	case n >= r.min && n <= r.max, r.extra != nil && n == *r.extra:
		return nil
	case r.extra != nil:
		return fmt.Errorf("%d is not in [%d, %d] or %d", n, r.min, r.max, *r.extra)
	}
	return fmt.Errorf("%d is not in [%d, %d]", n, r.min, r.max)
}

func validateInt(r intRange) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%q is not an int", v)
		}
		return r.check(n)
	}
}

// compressionTypes are the values of compression.type (topic config and
// broker property), in Kafka's order. "producer" stores each batch as
// produced; the others store every batch with that codec, recompressing
// those produced with another (recompress.go).
var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

func validateDouble(min, max float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= min && f <= max) { // NaN is neither

			return fmt.Errorf("%q is not a number in [%g, %g]", v, min, max)
		}
		return nil
	}
}

func validateBool(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return fmt.Errorf("%q is not a boolean", v)
	}
	return nil
}

func constant(v string) func(*Config) string { return func(*Config) string { return v } }

func fromInt64(f func(c *Config) int64) func(*Config) string {
	return func(c *Config) string { return strconv.FormatInt(f(c), 10) }
}

// topicConfigDefs lists the topic configs Strata accepts, by Kafka name.
var topicConfigDefs = map[string]topicConfigDef{}

func init() {
	defs := []topicConfigDef{
		{name: "cleanup.policy", brokerSynonyms: []string{"log.cleanup.policy"}, defaultValue: func(c *Config) string { return c.LogCleanupPolicy },
			validate: validateOneOf("delete", "compact", "compact,delete", "delete,compact")},
		{name: "compression.type", brokerSynonyms: []string{"compression.type"}, defaultValue: func(c *Config) string { return c.CompressionType },
			validate: validateOneOf(compressionTypes...)},
		{name: "compression.gzip.level", brokerSynonyms: []string{"compression.gzip.level"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.CompressionGzipLevel) }),
			validate: validateInt(gzipLevels)},
		{name: "compression.lz4.level", brokerSynonyms: []string{"compression.lz4.level"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.CompressionLz4Level) }),
			validate: validateInt(lz4Levels)},
		{name: "compression.zstd.level", brokerSynonyms: []string{"compression.zstd.level"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.CompressionZstdLevel) }),
			validate: validateInt(zstdLevels)},
		{name: "delete.retention.ms", brokerSynonyms: []string{"log.cleaner.delete.retention.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogCleanerDeleteRetentionMs }), validate: validateLong(0)},
		{name: "file.delete.delay.ms", brokerSynonyms: []string{"file.delete.delay.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.FileDeleteDelayMs }), validate: validateLong(0)},
		{name: "flush.messages", brokerSynonyms: []string{"log.flush.interval.messages"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogFlushIntervalMessages }), validate: validateLong(1)},
		{name: "flush.ms", brokerSynonyms: []string{"log.flush.interval.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogFlushIntervalMs }), validate: validateLong(0)},
		{name: "index.interval.bytes", brokerSynonyms: []string{"log.index.interval.bytes"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.LogIndexIntervalBytes) }), validate: validateLong(0)},
		{name: "local.retention.bytes", defaultValue: constant("-2"), validate: validateLong(-2)},
		{name: "local.retention.ms", defaultValue: constant("-2"), validate: validateLong(-2)},
		{name: "max.compaction.lag.ms", brokerSynonyms: []string{"log.cleaner.max.compaction.lag.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogCleanerMaxCompactionLagMs }), validate: validateLong(1)},
		{name: "max.message.bytes", brokerSynonyms: []string{"message.max.bytes"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.MessageMaxBytes) }), validate: validateLong(0)},
		{name: "message.timestamp.type", brokerSynonyms: []string{"log.message.timestamp.type"}, defaultValue: func(c *Config) string { return c.LogMessageTimestampType },
			validate: validateOneOf("CreateTime", "LogAppendTime")},
		{name: "message.timestamp.after.max.ms", brokerSynonyms: []string{"log.message.timestamp.after.max.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogMessageTimestampAfterMaxMs }), validate: validateLong(0)},
		{name: "message.timestamp.before.max.ms", brokerSynonyms: []string{"log.message.timestamp.before.max.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogMessageTimestampBeforeMaxMs }), validate: validateLong(0)},
		{name: "min.cleanable.dirty.ratio", brokerSynonyms: []string{"log.cleaner.min.cleanable.ratio"}, defaultValue: func(c *Config) string { return strconv.FormatFloat(c.LogCleanerMinCleanableRatio, 'g', -1, 64) },
			validate: validateDouble(0, 1)},
		{name: "min.compaction.lag.ms", brokerSynonyms: []string{"log.cleaner.min.compaction.lag.ms"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogCleanerMinCompactionLagMs }), validate: validateLong(0)},
		{name: "min.insync.replicas", brokerSynonyms: []string{"min.insync.replicas"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.MinInsyncReplicas) }), validate: validateLong(1)},
		{name: "preallocate", defaultValue: constant("false"), validate: validateBool},
		{name: "remote.storage.enable", defaultValue: constant("false"), validate: validateBool},
		{name: "retention.bytes", brokerSynonyms: []string{"log.retention.bytes"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogRetentionBytes }), validate: validateLong(-1)},
		{name: "retention.ms", brokerSynonyms: []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogRetentionMs }), validate: validateLong(-1)},
		{name: "segment.bytes", brokerSynonyms: []string{"log.segment.bytes"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogSegmentBytes }), validate: validateLong(14)},
		{name: "segment.index.bytes", brokerSynonyms: []string{"log.index.size.max.bytes"}, defaultValue: fromInt64(func(c *Config) int64 { return int64(c.LogIndexSizeMaxBytes) }), validate: validateLong(4)},
		{name: "segment.jitter.ms", defaultValue: constant("0"), validate: validateLong(0)},
		{name: "segment.ms", brokerSynonyms: []string{"log.roll.ms", "log.roll.hours"}, defaultValue: fromInt64(func(c *Config) int64 { return c.LogRollMs }), validate: validateLong(1)},
		{name: "unclean.leader.election.enable", defaultValue: constant("false"), validate: validateBool},
		{name: leaderThrottledReplicas, defaultValue: constant(""), validate: validateThrottledReplicas},
		{name: followerThrottledReplicas, defaultValue: constant(""), validate: validateThrottledReplicas},
		// Schema validation (schema_validation.go), Confluent's names.
		{name: valueSchemaValidationConfig, defaultValue: constant("false"), validate: validateBool},
		{name: keySchemaValidationConfig, defaultValue: constant("false"), validate: validateBool},
		{name: valueSubjectStrategyConfig, defaultValue: constant(confluentStrategyPackage + "TopicNameStrategy"), validate: validateSubjectStrategy},
		{name: keySubjectStrategyConfig, defaultValue: constant(confluentStrategyPackage + "TopicNameStrategy"), validate: validateSubjectStrategy},
		{name: schemaValidationModeConfig, defaultValue: constant("id"), validate: validateOneOf("id", "decode")},
		// Iceberg topics (iceberg.go), Redpanda's names.
		{name: icebergEnabledConfig, defaultValue: constant("false"), validate: validateBool},
		{name: icebergModeConfig, defaultValue: constant(icebergModeKeyValue), validate: validateIcebergMode},
		{name: icebergIntervalConfig, defaultValue: constant(icebergDefaultCommitMs), validate: validateLong(100)},
		{name: icebergTableLocationConfig, defaultValue: constant(""), validate: validateIcebergPrefix},
		{name: icebergNamespaceConfig, defaultValue: constant(icebergDefaultNamespace), validate: validateIcebergNamespace},
		{name: icebergPartitionSpecConfig, defaultValue: constant("hour(timestamp)"), validate: validateOneOf("hour(timestamp)", "day(timestamp)", "none")},
		{name: icebergValueSubjectConfig, defaultValue: constant(""), validate: validateIcebergSubject},
		{name: icebergRetentionConfig, defaultValue: constant(icebergDefaultRetentionMs), validate: validateLong(-1)},
		{name: icebergTargetFileSizeConfig, defaultValue: constant(icebergDefaultTargetSize), validate: validateLong(1 << 20)}, // 1 MiB: smaller would write a file per few records
		{name: icebergCompactionMinConfig, defaultValue: constant(icebergDefaultCompactionMin), validate: validateIcebergCompactionMin},
		{name: icebergMetadataVersionsMaxConfig, defaultValue: constant(icebergDefaultMetadataVersionsMax), validate: validateLong(1)},
		{name: icebergMetadataDeleteAfterConfig, defaultValue: constant(icebergDefaultMetadataDelete), validate: validateBool},
	}
	for _, d := range defs {
		topicConfigDefs[d.name] = d
	}
}

// validateTopicConfigs checks a full set of topic overrides.
func validateTopicConfigs(configs map[string]string) error {
	for k, v := range configs {
		def, ok := topicConfigDefs[k]
		if !ok {
			return fmt.Errorf("unknown topic config %q", k)
		}
		if err := def.validate(v); err != nil {
			return fmt.Errorf("invalid value for %s: %w", k, err)
		}
	}
	return nil
}

// effectiveTopicConfig resolves a topic's configs against broker defaults.
type effectiveTopicConfig struct {
	values map[string]string
	// schemas is the schema validation the values ask for, parsed once
	// (every produce reads it).
	schemas schemaRules
}

func resolveTopicConfig(c *Config, overrides map[string]string) effectiveTopicConfig {
	values := make(map[string]string, len(topicConfigDefs))
	for name, def := range topicConfigDefs {
		values[name] = def.defaultValue(c)
	}
	for k, v := range overrides {
		values[k] = v
	}
	return effectiveTopicConfig{values: values, schemas: parseSchemaRules(values)}
}

func (e effectiveTopicConfig) int64(name string) int64 {
	n, _ := strconv.ParseInt(e.values[name], 10, 64)
	return n
}

// storageConfig maps the topic's configs onto the partition log's.
func (e effectiveTopicConfig) storageConfig() storage.Config {
	sc := storage.DefaultConfig()
	sc.SegmentBytes = e.int64("segment.bytes")
	sc.SegmentMs = e.int64("segment.ms")
	sc.RetentionMs = e.int64("retention.ms")
	sc.RetentionBytes = e.int64("retention.bytes")
	sc.FlushMessages = e.int64("flush.messages")
	sc.FlushMs = e.int64("flush.ms")
	sc.IndexIntervalBytes = int(e.int64("index.interval.bytes"))
	sc.SegmentIndexBytes = int(e.int64("segment.index.bytes"))
	sc.FileDeleteDelayMs = e.int64("file.delete.delay.ms")
	policy := e.values["cleanup.policy"]
	sc.Compact = strings.Contains(policy, "compact")
	sc.Delete = strings.Contains(policy, "delete")
	sc.DeleteRetentionMs = e.int64("delete.retention.ms")
	sc.MinCleanableDirtyRatio, _ = strconv.ParseFloat(e.values["min.cleanable.dirty.ratio"], 64)
	sc.MinCompactionLagMs = e.int64("min.compaction.lag.ms")
	sc.MaxCompactionLagMs = e.int64("max.compaction.lag.ms")
	sc.Remote = e.values["remote.storage.enable"] == "true"
	sc.LocalRetentionMs = e.int64("local.retention.ms")
	sc.LocalRetentionBytes = e.int64("local.retention.bytes")
	return sc
}

func (e effectiveTopicConfig) maxMessageBytes() int64 { return e.int64("max.message.bytes") }
func (e effectiveTopicConfig) minInsyncReplicas() int64 {
	return e.int64("min.insync.replicas")
}
func (e effectiveTopicConfig) logAppendTime() bool {
	return e.values["message.timestamp.type"] == "LogAppendTime"
}

// compression is the codec and level compression.type asks batches to be
// stored with, and false for "producer" (store each batch as produced).
func (e effectiveTopicConfig) compression() (storage.Compression, bool) {
	switch e.values["compression.type"] {
	case "uncompressed":
		return storage.Compression{Codec: storage.CodecNone}, true
	case "gzip":
		return storage.Compression{Codec: storage.CodecGzip, Level: int(e.int64("compression.gzip.level"))}, true
	case "snappy":
		return storage.Compression{Codec: storage.CodecSnappy}, true
	case "lz4":
		return storage.Compression{Codec: storage.CodecLZ4, Level: int(e.int64("compression.lz4.level"))}, true
	case "zstd":
		return storage.Compression{Codec: storage.CodecZstd, Level: int(e.int64("compression.zstd.level"))}, true
	}
	return storage.Compression{}, false
}

func sortedTopicConfigNames() []string {
	names := make([]string, 0, len(topicConfigDefs))
	for n := range topicConfigDefs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
