package broker

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
)

// recompressForTopic applies the topic's compression.type to a produce's
// validated batches (headers from storage.ValidateBatches) and returns the
// batches to append and their headers. It runs before the partition lock
// is taken: recompression is CPU work that other appends to the partition
// need not wait behind.
//
//   - compression.type=producer, or every batch already in the topic's
//     codec: records and headers come back as they are, not decompressed,
//     so the log holds the bytes the producer sent.
//   - Otherwise each batch in another codec is re-encoded with the topic's
//     codec and level (storage.Recompress: same offsets, timestamps,
//     producer id/epoch/sequence and transactional bit, new CRC), as
//     Kafka's LogValidator does; a result over max.message.bytes is
//     MESSAGE_TOO_LARGE.
//   - Decompression is bounded by storage.InflationLimit(max.message.bytes):
//     a batch inflating past it is MESSAGE_TOO_LARGE (a decompression bomb
//     costs about the limit, not its expansion), one that does not
//     decompress or holds malformed records CORRUPT_MESSAGE.
func recompressForTopic(records []byte, headers []storage.BatchHeader, cfg effectiveTopicConfig) ([]byte, []storage.BatchHeader, replica.AppendResult) {
	maxMessageBytes := cfg.maxMessageBytes()
	limit := storage.InflationLimit(maxMessageBytes)
	target, recompress := cfg.compression()
	if recompress && storage.NeedsRecompression(headers, target) {
		out, outHeaders, err := storage.Recompress(records, headers, target, limit)
		if err != nil {
			return nil, nil, inflationFailure(err, limit)
		}
		for _, h := range outHeaders {
			if int64(h.Size()) > maxMessageBytes {
				return nil, nil, replica.AppendResult{Code: kerr.MessageTooLarge.Code, Message: fmt.Sprintf(
					"batch of %d bytes after recompression to compression.type %s exceeds max.message.bytes %d", h.Size(), cfg.values["compression.type"], maxMessageBytes)}
			}
		}
		return out, outHeaders, replica.AppendResult{}
	}
	return records, headers, replica.AppendResult{}
}

// inflationFailure is the answer to a batch that could not be decompressed.
func inflationFailure(err error, limit int) replica.AppendResult {
	if errors.Is(err, storage.ErrBatchTooLarge) {
		return replica.AppendResult{Code: kerr.MessageTooLarge.Code, Message: fmt.Sprintf(
			"batch decompresses to more than %d bytes (%d × max.message.bytes, at least 1 MiB): %v", limit, storage.MaxInflation, err)}
	}
	return replica.AppendResult{Code: kerr.CorruptMessage.Code, Message: err.Error()}
}
