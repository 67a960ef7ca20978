// Package lag judges whether a consumer group keeps up, in the manner of
// LinkedIn's Burrow: not by a lag threshold but by how the group's committed
// offsets and lag move over a sliding window of its recent commits.
//
// The package is pure: it does no I/O, starts no goroutine and never reads
// the wall clock. Callers hand it observations and the current time, and get
// a verdict back, so every rule is a table test with a hand-made clock.
//
// # Caller's duties
//
//  1. New(Config) once. Config.Window is the number of commits remembered per
//     group partition (Burrow's "intervals", default 10).
//  2. Observe(group, topic, partition, Commit) for every offset commit (or
//     every new commit a periodic sampler finds), with the partition's log
//     end offset at that moment and the commit's time. Observations must
//     come in time order per partition; older ones are ignored.
//  3. ObserveLogEnd(topic, partition, logEnd, now) periodically for every
//     partition: the recent log end offsets let STOP tell a consumer that
//     died from one whose topic only just received data.
//  4. Evaluate(group, now, logEnds) whenever a verdict is wanted; logEnds
//     gives the current log end offsets (the current lag is measured
//     against them).
//  5. Forget(group) when the group is deleted; Expire(now) now and then to
//     drop partitions with no commit for Config.Expire.
//
// # The window
//
// Each group partition keeps its last Window commits, oldest first. A commit
// arriving less than Config.MinDistance after the previous one replaces it
// instead of pushing the oldest out, so a client committing many times a
// second does not shrink the window to a blink. Each entry holds the
// committed offset, the lag at the time of the commit (log end offset minus
// committed offset) and the commit time.
//
// # Rules, per partition
//
// The current lag is the log end offset now minus the last committed offset.
// The rules run in this order; the first that holds decides:
//
//  1. Current lag is zero: OK. A consumer that has read everything is
//     healthy however long ago it last committed.
//  2. STOP: the time since the last commit exceeds the window's span (last
//     commit time minus first commit time, but at least Config.MinSpan), and
//     none of the recent log end offsets (ObserveLogEnd) was at or below the
//     committed offset. The consumer stopped committing while there is work.
//  3. REWIND: a committed offset in the window is lower than the one before
//     it and the consumer has not yet come back past the offset it rewound
//     from.
//  4. If the lag recorded with any commit of the window was zero: OK.
//     The consumer caught up within the window.
//  5. STALL: at least two commits and every committed offset is the same.
//     The consumer commits but does not advance while there is lag.
//  6. WARN: at least two commits, the offsets moved, and the lag never
//     decreased from one commit to the next. The consumer works but falls
//     behind.
//  7. Otherwise OK.
//
// # Group status
//
// A group's Status is its worst partition's, in the order OK < WARN < STOP <
// STALL < REWIND (Burrow's order). Severity condenses it as Burrow reports a
// group: OK, WARN, or ERR for STOP, STALL and REWIND.
package lag
