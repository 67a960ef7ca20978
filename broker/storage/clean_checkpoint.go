package storage

import "fmt"

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
	return encodeCheckedFields(cleanerCheckpointVersion, cleanerCheckpointFields, []int64{c.firstDirtyOffset, c.tombstoneDeadline})
}

func decodeCleanerCheckpoint(data []byte) (cleanerCheckpoint, error) {
	values, err := decodeCheckedFields(data, cleanerCheckpointFile, cleanerCheckpointVersion, cleanerCheckpointFields)
	if err != nil {
		return cleanerCheckpoint{}, err
	}
	c := cleanerCheckpoint{firstDirtyOffset: values[0], tombstoneDeadline: values[1]}
	if c.firstDirtyOffset < 0 || c.tombstoneDeadline < noTimestamp {
		return cleanerCheckpoint{}, fmt.Errorf("%w: %s: inconsistent values", ErrCorruptLog, cleanerCheckpointFile)
	}
	return c, nil
}
