package main

// The pure parts of `strata perf raw-produce` and `raw-fetch`: the record
// batches, the framed Produce and Fetch requests that are built once and
// replayed, and the check of one response. Nothing here does I/O.
//
// A framed request is exactly what goes on the wire, built by kmsg's
// RequestFormatter:
//
//	+---------+--------+---------+-------------+-----------+----------+------+
//	| length  | apiKey | version | correlation | client id | tags (*) | body |
//	| int32   | int16  | int16   | int32       | string    |          |      |
//	+---------+--------+---------+-------------+-----------+----------+------+
//	(*) only in flexible versions (Produce v9+, Fetch v12+)
//
// Replaying it means every request carries the same correlation id; Kafka
// answers the requests of one connection in order, so the reader pairs
// responses with sends by position, not by id.

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// rawMaxProduceVersion is the newest Produce version raw-produce
	// sends: v13 names topics by id instead of by name.
	rawMaxProduceVersion = 12
	// rawMinProduceVersion is the first version with record batches (magic 2).
	rawMinProduceVersion = 3
	// rawMaxFetchVersion is the newest Fetch version raw-fetch sends: v13
	// names topics by id.
	rawMaxFetchVersion = 12
	// rawMinFetchVersion is the first Fetch version with an isolation level
	// and record batches in responses.
	rawMinFetchVersion = 4
	// rawClientID is the client id in every raw request.
	rawClientID = "strata-perf-raw"
)

// crc32c is the Castagnoli table Kafka's record batch CRC uses.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// rawBatchSpec describes the record batch raw-produce sends to every
// partition.
type rawBatchSpec struct {
	recordSize int
	records    int
	// codec is the compression; nil for none.
	codec kgo.Compressor
}

// buildRecordBatch returns one encoded record batch (magic 2) of
// spec.records records whose values are spec.recordSize random bytes, no
// key and no headers; producer id -1 (not idempotent), so the broker
// accepts the same batch again and again and assigns new offsets.
func buildRecordBatch(spec rawBatchSpec, rng *rand.Rand, now time.Time) ([]byte, error) {
	if spec.records <= 0 || spec.recordSize < 0 {
		return nil, errors.New("a batch needs at least one record of a non-negative size")
	}
	value := make([]byte, spec.recordSize)
	var records []byte
	for i := range spec.records {
		fillRandomBytes(value, rng) // incompressible, different in every record
		var rec []byte
		rec = kbin.AppendInt8(rec, 0)            // attributes
		rec = kbin.AppendVarlong(rec, 0)         // timestamp delta
		rec = kbin.AppendVarint(rec, int32(i))   // offset delta
		rec = kbin.AppendVarint(rec, -1)         // null key
		rec = kbin.AppendVarintBytes(rec, value) // value
		rec = kbin.AppendVarint(rec, 0)          // no headers
		records = kbin.AppendVarint(records, int32(len(rec)))
		records = append(records, rec...)
	}
	var attributes int16
	if spec.codec != nil {
		compressed, codec := spec.codec.Compress(new(bytes.Buffer), records)
		if codec != kgo.CodecNone {
			records, attributes = compressed, int16(codec)
		}
	}
	ts := now.UnixMilli()
	batch := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attributes,
		LastOffsetDelta:      int32(spec.records - 1),
		FirstTimestamp:       ts,
		MaxTimestamp:         ts,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(spec.records),
		Records:              records,
	}
	b := batch.AppendTo(nil)
	// Length counts what follows the offset and the length itself; the
	// CRC covers everything from the attributes on.
	kbin.AppendInt32(b[8:8], int32(len(b)-12))
	kbin.AppendInt32(b[17:17], int32(crc32.Checksum(b[21:], crc32c)))
	return b, nil
}

// rawCompressor is --compression's codec; nil for none.
func rawCompressor(name string) (kgo.Compressor, error) {
	var codec kgo.CompressionCodec
	switch name {
	case "none", "":
		return nil, nil
	case "gzip":
		codec = kgo.GzipCompression()
	case "snappy":
		codec = kgo.SnappyCompression()
	case "lz4":
		codec = kgo.Lz4Compression()
	case "zstd":
		codec = kgo.ZstdCompression()
	default:
		return nil, fmt.Errorf("--compression %q: none, gzip, snappy, lz4 or zstd", name)
	}
	return kgo.DefaultCompressor(codec)
}

// buildProduceRequest frames one Produce request carrying batch for each
// of partitions of topic.
func buildProduceRequest(version int16, acks int16, timeout time.Duration, topic string, partitions []int32, batch []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = acks
	req.TimeoutMillis = int32(timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(rawClientID)).AppendRequest(nil, req, 1)
}

// rawFetchPartition is where raw-fetch reads one partition from.
type rawFetchPartition struct {
	partition   int32
	startOffset int64
}

// buildFetchRequest frames one full Fetch request (no session) for
// partitions of topic from their start offsets, returning at once
// (MaxWaitMillis 0) with whatever is there.
func buildFetchRequest(version int16, topic string, partitions []rawFetchPartition, maxBytes, partitionMaxBytes int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	req.IsolationLevel = 0
	req.SessionID = 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p.partition
		rp.CurrentLeaderEpoch = -1
		rp.FetchOffset = p.startOffset
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = partitionMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(rawClientID)).AppendRequest(nil, req, 1)
}

// responseBody strips the response header (correlation id, and tags in
// flexible versions) from a response read without its length prefix.
func responseBody(resp []byte, flexible bool) ([]byte, error) {
	r := kbin.Reader{Src: resp}
	r.Int32() // correlation id
	if flexible {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() {
		return nil, fmt.Errorf("response of %d bytes has no complete header", len(resp))
	}
	return r.Src, nil
}

// checkProduceResponse decodes one Produce response fully and returns an
// error for any error code in it, or for a partition it does not answer.
func checkProduceResponse(version int16, resp []byte, wantPartitions int) error {
	body, err := responseBody(resp, version >= 9)
	if err != nil {
		return err
	}
	pr := kmsg.NewPtrProduceResponse()
	pr.Version = version
	if err := pr.ReadFrom(body); err != nil {
		return fmt.Errorf("decode produce response: %w", err)
	}
	answered := 0
	for _, t := range pr.Topics {
		for _, p := range t.Partitions {
			answered++
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				msg := ""
				if p.ErrorMessage != nil {
					msg = *p.ErrorMessage
				}
				return fmt.Errorf("partition %d: %w", p.Partition, topicError(t.Topic, err, msg))
			}
		}
	}
	if answered != wantPartitions {
		return fmt.Errorf("produce response answers %d partitions, the request had %d", answered, wantPartitions)
	}
	return nil
}

// checkFetchResponse decodes one Fetch response fully and returns an error
// for any error code in it, and the bytes of record batches it carries.
func checkFetchResponse(version int16, resp []byte) (recordBytes int, err error) {
	body, err := responseBody(resp, version >= 12)
	if err != nil {
		return 0, err
	}
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = version
	if err := fr.ReadFrom(body); err != nil {
		return 0, fmt.Errorf("decode fetch response: %w", err)
	}
	if err := kerr.ErrorForCode(fr.ErrorCode); err != nil {
		return 0, fmt.Errorf("fetch: %w", err)
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, fmt.Errorf("partition %d: %w", p.Partition, topicError(t.Topic, err, ""))
			}
			recordBytes += len(p.RecordBatches)
		}
	}
	return recordBytes, nil
}
