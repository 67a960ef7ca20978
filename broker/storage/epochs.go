package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const (
	leaderEpochFile        = "leader-epoch-checkpoint"
	leaderEpochFileVersion = 0
	noEpoch                = -1
)

// epochEntry says that leader epoch Epoch wrote its first record at StartOffset.
type epochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is the in-memory leader-epoch cache: entries with strictly
// increasing epochs and start offsets. It is a pure value type; the Log
// guards it with mu and persists it at checkpoints.
type epochCache struct {
	entries []epochEntry
}

func (c *epochCache) latest() int32 {
	if len(c.entries) == 0 {
		return noEpoch
	}
	return c.entries[len(c.entries)-1].Epoch
}

// assign records that epoch starts at offset if epoch is newer than the latest.
func (c *epochCache) assign(epoch int32, offset int64) bool {
	if epoch < 0 || epoch <= c.latest() {
		return false
	}
	// A newer epoch starting at or before an older one's start supersedes it.
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= offset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(slices.Clip(c.entries), epochEntry{Epoch: epoch, StartOffset: offset})
	return true
}

// truncateFromEnd drops entries starting at or after endOffset (the new log end).
func (c *epochCache) truncateFromEnd(endOffset int64) {
	i := len(c.entries)
	for i > 0 && c.entries[i-1].StartOffset >= endOffset {
		i--
	}
	c.entries = slices.Clip(c.entries[:i])
}

// truncateFromStart drops entries wholly before startOffset; the latest of
// them is kept, moved to startOffset, as it still covers the first records.
func (c *epochCache) truncateFromStart(startOffset int64) {
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset <= startOffset {
		i++
	}
	if i == 0 {
		return
	}
	kept := epochEntry{Epoch: c.entries[i-1].Epoch, StartOffset: startOffset}
	c.entries = append([]epochEntry{kept}, c.entries[i:]...)
}

// endOffsetFor answers OffsetForLeaderEpoch for requested: the largest known
// epoch <= requested and the start offset of the next epoch (logEndOffset
// for the latest). (-1, -1) when requested precedes every known epoch.
func (c *epochCache) endOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	i := 0
	for i < len(c.entries) && c.entries[i].Epoch <= requested {
		i++
	}
	if i == 0 {
		return noEpoch, noOffset
	}
	if i == len(c.entries) {
		return c.entries[i-1].Epoch, logEndOffset
	}
	return c.entries[i-1].Epoch, c.entries[i].StartOffset
}

// encode renders Kafka's leader-epoch-checkpoint text format.
func (c *epochCache) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", leaderEpochFileVersion, len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

// decodeEpochCache parses a leader-epoch-checkpoint file, checking that
// epochs and start offsets increase.
func decodeEpochCache(data []byte) (epochCache, error) {
	entries, err := decodeEpochEntries(data, leaderEpochFile, ErrCorruptLog)
	return epochCache{entries: entries}, err
}

// decodeEpochEntries parses Kafka's leader-epoch-checkpoint text format,
// checking that epochs increase and start offsets do not decrease. Errors
// wrap corrupt and name what. It never panics.
func decodeEpochEntries(data []byte, what string, corrupt error) ([]epochEntry, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 2 {
		return nil, fmt.Errorf("%w: %s: too short", corrupt, what)
	}
	if lines[0] != strconv.Itoa(leaderEpochFileVersion) {
		return nil, fmt.Errorf("%w: %s: unknown version %q", corrupt, what, lines[0])
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("%w: %s: bad entry count %q", corrupt, what, lines[1])
	}
	var entries []epochEntry
	for _, line := range lines[2:] {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%w: %s: bad line %q", corrupt, what, line)
		}
		epoch, err1 := strconv.ParseInt(fields[0], 10, 32)
		start, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil || epoch < 0 || start < 0 {
			return nil, fmt.Errorf("%w: %s: bad line %q", corrupt, what, line)
		}
		if last := len(entries) - 1; last >= 0 && (int32(epoch) <= entries[last].Epoch || start < entries[last].StartOffset) {
			return nil, fmt.Errorf("%w: %s: entries out of order at %q", corrupt, what, line)
		}
		entries = append(entries, epochEntry{Epoch: int32(epoch), StartOffset: start})
	}
	return entries, nil
}
