package streams

import (
	"fmt"
	"time"
)

// WithTimestamps sets each record's event time from the record (its key,
// value, headers): Kafka Streams' TimestampExtractor, as an operator
// (typically right after From). extract sees the record's current
// Timestamp too (the Kafka record's CreateTime or LogAppendTime) and
// returns the new one. Downstream
// every time-based operator uses it — windows, grace and late records,
// stream time, suppression, join windows — and the records produced from
// the record (outputs, repartition and changelog topics) carry it as their
// Kafka timestamp, as in Kafka Streams. Keys are unchanged, so grouping
// after it needs no repartition topic.
//
// An error, or a time before the Unix epoch (Kafka has no negative
// timestamps), is an error of this stage, handled by the App's error mode
// (ErrorSkip: Kafka's LogAndSkipOnInvalidTimestamp).
func WithTimestamps[K, V any](s Stream[K, V], extract func(Record[K, V]) (time.Time, error), opts ...OpOpt) Stream[K, V] {
	stage := s.top.name("timestamps", opts)
	return derive(s, func(out *node[K, V]) func(*procCtx, Record[K, V]) error {
		return func(c *procCtx, r Record[K, V]) error {
			ts, err := extract(r)
			if err != nil {
				return opErr(stage, err)
			}
			if ts.UnixMilli() < 0 {
				return opErr(stage, fmt.Errorf("invalid timestamp %v: before the Unix epoch", ts))
			}
			r.Timestamp = ts
			return out.emit(c, r)
		}
	})
}
