package broker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
)

// partition is one partition this node hosts, as leader or follower: the
// replica (broker/replica: the log, role, high watermark, ISR
// bookkeeping, producer state and waiters) with the topic it belongs to
// and its tiered-storage state. The handlers reach the log only through
// the replica's API.
type partition struct {
	*replica.Replica
	topic  *topicState
	index  int32
	remote *remoteLog // tiered storage state (tiered.go); never nil
	// traffic counts producer bytes in and consumer bytes out here, for
	// the balancer (partition_traffic.go).
	traffic partitionTraffic
}

func partitionDirName(topic string, index int32) string {
	return topic + "-" + strconv.Itoa(int(index))
}

func openPartition(s *Server, t *topicState, index int32, leaderEpoch int32) (*partition, error) {
	dir, err := s.logDirs.locate(partitionDirName(t.name, index))
	if err != nil {
		return nil, err
	}
	rep, err := replica.Open(dir, replica.Options{
		NodeID:      s.cfg.NodeID,
		TopicID:     t.id,
		LeaderEpoch: leaderEpoch,
		Storage:     t.config.storageConfig(),
		Logger:      s.logLevels.Logger(partitionLogger).With("partition", partitionDirName(t.name, index)),
	})
	if err != nil {
		return nil, err
	}
	p := &partition{Replica: rep, topic: t, index: index}
	p.remote = newRemoteLog(s.tiered, p)
	return p, nil
}

// recordRules are the per-record rules of a topic at time now: a key on
// compacted topics, and for CreateTime topics the timestamp bounds of
// message.timestamp.before.max.ms / after.max.ms (KIP-937).
func recordRules(cfg effectiveTopicConfig, compacted bool, now int64) storage.RecordRules {
	rules := storage.RecordRules{RequireKey: compacted, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64,
		MaxDecompressedBytes: storage.InflationLimit(cfg.maxMessageBytes())}
	if cfg.logAppendTime() {
		return rules // the broker's clock replaces the producer's timestamps
	}
	if before := cfg.int64("message.timestamp.before.max.ms"); before >= 0 && before < now {
		rules.MinTimestamp = now - before
	}
	if after := cfg.int64("message.timestamp.after.max.ms"); after >= 0 && after <= math.MaxInt64-now {
		rules.MaxTimestamp = now + after
	}
	return rules
}

// checkRecordRules refuses a produce whose records break the topic's
// per-record rules, as Kafka does: the whole batch fails, the answer names
// each offending record by index (KIP-467 record_errors) so the client
// fails only those and retries or reports the others, and the error is
// INVALID_TIMESTAMP if a timestamp was out of bounds, else INVALID_RECORD.
func checkRecordRules(records []byte, rules storage.RecordRules) (replica.AppendResult, bool) {
	violations, err := storage.CheckRecords(records, rules)
	if err != nil {
		return inflationFailure(err, rules.MaxDecompressedBytes), false
	}
	if len(violations) == 0 {
		return replica.AppendResult{}, true
	}
	return violationsFailure(violations), false
}

// violationsFailure is the answer to a produce with records that break a
// topic rule: INVALID_TIMESTAMP if a timestamp was out of bounds, else
// INVALID_RECORD, every record named, the first in the message.
func violationsFailure(violations []storage.RecordViolation) replica.AppendResult {
	res := replica.AppendResult{Code: kerr.InvalidRecord.Code, RecordErrors: violations}
	for _, v := range violations {
		if v.Timestamp {
			res.Code = kerr.InvalidTimestamp.Code
			break
		}
	}
	first := violations[0].Message
	if len(violations) > 1 {
		first = fmt.Sprintf("%s (and %d more records)", first, len(violations)-1)
	}
	res.Message = first
	return res
}

// appendRecords validates a batch the broker itself produces to one of
// its partitions (a coordinator's records) and appends it, unverified
// and without schema validation.
func (p *partition) appendRecords(records []byte, cfg effectiveTopicConfig) replica.AppendResult {
	b, res := p.prepareAppend(records, cfg, nil)
	if res.Code != 0 {
		return res
	}
	return p.Append(context.Background(), b, replica.AppendOptions{})
}

// prepareAppend does the work of an append that needs no lock: the bytes
// are kept as they came, with only baseOffset and partitionLeaderEpoch to
// be rewritten by the append, unless the topic's compression.type names
// another codec than a batch's (recompressForTopic). schemas is the node's
// schema validator (schema_validation.go), nil if it has none. A non-zero
// code in the result refuses the produce.
func (p *partition) prepareAppend(records []byte, cfg effectiveTopicConfig, schemas SchemaValidator) (replica.Batch, replica.AppendResult) {
	maxMessageBytes := cfg.maxMessageBytes()
	now := time.Now().UnixMilli()
	headers, err := storage.ValidateBatches(records)
	if err != nil {
		if errors.Is(err, storage.ErrUnsupportedMagic) {
			return replica.Batch{}, replica.AppendResult{Code: kerr.UnsupportedForMessageFormat.Code, Message: err.Error()}
		}
		return replica.Batch{}, replica.AppendResult{Code: kerr.CorruptMessage.Code, Message: err.Error()}
	}
	for i := range headers {
		h := &headers[i]
		if int64(h.Size()) > maxMessageBytes {
			return replica.Batch{}, replica.AppendResult{Code: kerr.MessageTooLarge.Code, Message: fmt.Sprintf("batch of %d bytes exceeds max.message.bytes %d", h.Size(), maxMessageBytes)}
		}
		if h.IsControl() {
			// Markers are written by the transaction coordinator alone.
			return replica.Batch{}, replica.AppendResult{Code: kerr.InvalidRecord.Code, Message: "control batches cannot be produced"}
		}
		if h.ProducerID >= 0 && i > 0 {
			// Kafka requires an idempotent producer's batch to travel alone.
			return replica.Batch{}, replica.AppendResult{Code: kerr.InvalidRecord.Code, Message: "idempotent produce must carry exactly one batch per partition"}
		}
	}
	// Per-record rules on the batches as produced, then compression.type:
	// both decompress only when they must, bounded by
	// storage.InflationLimit, and before the partition lock.
	rules := recordRules(cfg, p.Log().Compacted(), now)
	if res, ok := checkRecordRules(records, rules); !ok {
		return replica.Batch{}, res
	}
	// Schema validation (schema_validation.go), off by default.
	if res, ok := checkSchemas(p.topic.name, records, cfg.schemas, schemas, rules.MaxDecompressedBytes); !ok {
		return replica.Batch{}, res
	}
	records, headers, failed := recompressForTopic(records, headers, cfg)
	if failed.Code != 0 {
		return replica.Batch{}, failed
	}
	return replica.Batch{Records: records, Headers: headers, NowMs: now, LogAppendTime: cfg.logAppendTime()}, replica.AppendResult{}
}
