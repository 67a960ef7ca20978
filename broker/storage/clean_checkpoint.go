package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

const (
	cleanerCheckpointFile    = "cleaner-offset-checkpoint"
	cleanerCheckpointVersion = 1
)

// cleanerCheckpoint is what the cleaner carries from one pass to the next.
// It is only ever an optimisation: a lost or stale file costs a pass that
// rereads already-clean segments, or a later removal of expired tombstones,
// never records.
type cleanerCheckpoint struct {
	// firstDirtyOffset: everything below was cleaned by the last pass (a
	// segment boundary). Dirty bytes start here.
	firstDirtyOffset int64
	// tombstoneDeadline is the earliest delete horizon among the tombstones
	// the last pass kept, noTimestamp if it kept none: once it passes, a
	// pass is due to remove them even if nothing else is dirty.
	tombstoneDeadline int64
}

func newCleanerCheckpoint() cleanerCheckpoint {
	return cleanerCheckpoint{tombstoneDeadline: noTimestamp}
}

var cleanerCheckpointFields = []string{"first-dirty-offset", "tombstone-deadline"}

// encode renders the checkpoint like the recovery checkpoint: "key value"
// lines closed by a CRC-32C of the bytes before it.
func (c cleanerCheckpoint) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "version %d\n", cleanerCheckpointVersion)
	for i, v := range []int64{c.firstDirtyOffset, c.tombstoneDeadline} {
		fmt.Fprintf(&b, "%s %d\n", cleanerCheckpointFields[i], v)
	}
	fmt.Fprintf(&b, "crc32c %08x\n", crc32.Checksum(b.Bytes(), castagnoli))
	return b.Bytes()
}

func decodeCleanerCheckpoint(data []byte) (cleanerCheckpoint, error) {
	bad := func(why string) (cleanerCheckpoint, error) {
		return cleanerCheckpoint{}, fmt.Errorf("%w: %s: %s", ErrCorruptLog, cleanerCheckpointFile, why)
	}
	body, crcLine, ok := cutLastLine(data)
	if !ok {
		return bad("no crc line")
	}
	crcText, ok := strings.CutPrefix(crcLine, "crc32c ")
	if !ok {
		return bad("no crc line")
	}
	want, err := strconv.ParseUint(crcText, 16, 32)
	if err != nil || uint32(want) != crc32.Checksum(body, castagnoli) {
		return bad("crc mismatch")
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	if !sc.Scan() || sc.Text() != fmt.Sprintf("version %d", cleanerCheckpointVersion) {
		return bad("unknown version")
	}
	values := make([]int64, len(cleanerCheckpointFields))
	for i, key := range cleanerCheckpointFields {
		if !sc.Scan() {
			return bad("missing " + key)
		}
		text, ok := strings.CutPrefix(sc.Text(), key+" ")
		if !ok {
			return bad("missing " + key)
		}
		if values[i], err = strconv.ParseInt(text, 10, 64); err != nil {
			return bad("bad " + key)
		}
	}
	if sc.Scan() {
		return bad("trailing lines")
	}
	c := cleanerCheckpoint{firstDirtyOffset: values[0], tombstoneDeadline: values[1]}
	if c.firstDirtyOffset < 0 || c.tombstoneDeadline < noTimestamp {
		return bad("inconsistent values")
	}
	return c, nil
}
