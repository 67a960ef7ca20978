package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// ErrInvalidConfig reports a Config that fails Validate.
var ErrInvalidConfig = errors.New("storage: invalid config")

const (
	day = 24 * 60 * 60 * 1000 // milliseconds

	// minSegmentBytes is Kafka's lower bound for segment.bytes: room for a
	// batch header, so a segment can hold at least something.
	minSegmentBytes = 14
	// minSegmentIndexBytes is Kafka's lower bound for segment.index.bytes.
	// Below one time index entry (12) every append rolls, as in Kafka.
	minSegmentIndexBytes = 4
)

// Config holds the per-log settings; the Kafka topic config each field
// mirrors is named in its comment. Start from DefaultConfig: the zero value
// is not valid.
type Config struct {
	SegmentBytes       int64 // segment.bytes: roll when the active segment would exceed it
	SegmentMs          int64 // segment.ms: roll when the active segment's first append is older
	RetentionMs        int64 // retention.ms, -1 = unlimited
	RetentionBytes     int64 // retention.bytes, negative = unlimited
	FlushMessages      int64 // flush.messages: fsync after this many records since the last flush
	FlushMs            int64 // flush.ms: fsync when the last flush is older than this
	IndexIntervalBytes int   // index.interval.bytes: log bytes between offset index entries
	SegmentIndexBytes  int   // segment.index.bytes: roll when an index would exceed it
	FileDeleteDelayMs  int64 // file.delete.delay.ms: close a deleted segment's file after this

	// Cleanup policy (see "Log compaction" in the package documentation).
	Compact                bool    // cleanup.policy contains compact: Clean keeps the latest record per key
	Delete                 bool    // cleanup.policy contains delete: ApplyRetention honours retention.ms and retention.bytes
	DeleteRetentionMs      int64   // delete.retention.ms: how long a cleaned tombstone stays readable
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio: dirty share of the cleanable bytes that starts a clean
	MinCompactionLagMs     int64   // min.compaction.lag.ms: segments with newer records are not cleaned
	MaxCompactionLagMs     int64   // max.compaction.lag.ms: dirty data older than this is cleaned whatever the ratio

	// Tiered storage (see "Tiered storage" in the package documentation).
	Remote              bool  // remote.storage.enable: segments go to object storage; local deletion waits for the upload
	LocalRetentionMs    int64 // local.retention.ms: local copy kept this long once uploaded; -2 = retention.ms, -1 = unlimited
	LocalRetentionBytes int64 // local.retention.bytes: local bytes kept once uploaded; -2 = retention.bytes, -1 = unlimited
}

// sameAsRetention is the local.retention.* value meaning "as retention.*".
const sameAsRetention = -2

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * day,
		RetentionMs:        7 * day,
		RetentionBytes:     -1,
		FlushMessages:      math.MaxInt64,
		FlushMs:            math.MaxInt64,
		IndexIntervalBytes: 4096,
		SegmentIndexBytes:  10 << 20,
		FileDeleteDelayMs:  60000,

		Delete:                 true,
		DeleteRetentionMs:      day,
		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,

		LocalRetentionMs:    sameAsRetention,
		LocalRetentionBytes: sameAsRetention,
	}
}

// EffectiveLocalRetention resolves local.retention.ms and
// local.retention.bytes: -2 takes retention.ms or retention.bytes. A
// negative result means unlimited.
func (c Config) EffectiveLocalRetention() (ms, bytes int64) {
	ms, bytes = c.LocalRetentionMs, c.LocalRetentionBytes
	if ms == sameAsRetention {
		ms = c.RetentionMs
	}
	if bytes == sameAsRetention {
		bytes = c.RetentionBytes
	}
	return ms, bytes
}

// Validate checks the ranges Kafka accepts for each setting (retention.bytes
// takes any value; negative means unlimited). Unlike Kafka it does not
// check local.retention.* against retention.*; a larger local value only
// keeps local copies longer.
func (c Config) Validate() error {
	var problems []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	check(c.SegmentBytes >= minSegmentBytes, "segment.bytes %d < %d", c.SegmentBytes, minSegmentBytes)
	check(c.SegmentMs >= 1, "segment.ms %d < 1", c.SegmentMs)
	check(c.RetentionMs >= -1, "retention.ms %d < -1", c.RetentionMs)
	check(c.FlushMessages >= 1, "flush.messages %d < 1", c.FlushMessages)
	check(c.FlushMs >= 0, "flush.ms %d < 0", c.FlushMs)
	check(c.IndexIntervalBytes >= 0, "index.interval.bytes %d < 0", c.IndexIntervalBytes)
	check(c.SegmentIndexBytes >= minSegmentIndexBytes, "segment.index.bytes %d < %d", c.SegmentIndexBytes, minSegmentIndexBytes)
	check(c.FileDeleteDelayMs >= 0, "file.delete.delay.ms %d < 0", c.FileDeleteDelayMs)
	check(c.DeleteRetentionMs >= 0, "delete.retention.ms %d < 0", c.DeleteRetentionMs)
	check(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1, "min.cleanable.dirty.ratio %g not in [0, 1]", c.MinCleanableDirtyRatio)
	check(c.MinCompactionLagMs >= 0, "min.compaction.lag.ms %d < 0", c.MinCompactionLagMs)
	check(c.MaxCompactionLagMs >= 1, "max.compaction.lag.ms %d < 1", c.MaxCompactionLagMs)
	check(c.LocalRetentionMs >= sameAsRetention, "local.retention.ms %d < -2", c.LocalRetentionMs)
	check(c.LocalRetentionBytes >= sameAsRetention, "local.retention.bytes %d < -2", c.LocalRetentionBytes)
	if len(problems) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(problems...))
	}
	return nil
}

// maxSegmentSize is segment.bytes capped so positions fit an index entry.
func (c Config) maxSegmentSize() int64 { return min(c.SegmentBytes, maxSegmentPosition) }

// rollMs is the age at which the active segment rolls: segment.ms, or
// max.compaction.lag.ms when compacting and smaller (as in Kafka), since
// the cleaner never touches the active segment.
func (c Config) rollMs() int64 {
	if c.Compact {
		return min(c.SegmentMs, c.MaxCompactionLagMs)
	}
	return c.SegmentMs
}

// elapsed reports whether at least ms milliseconds passed from since to now,
// without overflowing for ms near math.MaxInt64.
func elapsed(since, now time.Time, ms int64) bool {
	return now.Sub(since).Milliseconds() >= ms
}

// Options are the process-level dependencies of a Log.
type Options struct {
	Now    func() time.Time // nil = time.Now
	Logger *slog.Logger     // nil = discard
	// Fresh: dir holds no log files (a new partition): the caller has
	// just made it, or it does not exist and Materialize will make it.
	// Open skips recovery, which would only find nothing, and creates no
	// file: the first segment's file comes with its first use.
	Fresh bool
	// Materialize, with Fresh, makes the directory (and whatever the
	// caller keeps in it, such as partition.metadata) before the log
	// writes its first file there, so that a partition that is never
	// written costs no inode at all. Nil: dir exists.
	Materialize func() error
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
