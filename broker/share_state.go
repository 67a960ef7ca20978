package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/share"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
)

// The share coordinator's store: the internal, compacted topic
// __share_group_state (share.coordinator.state.topic.num.partitions
// partitions, replicated like __consumer_offsets), run by the coordinator
// runtime (coordinator_runtime.go). A share-partition's record goes to
// partition abs(javaHash("group:topicId:partition")) % partitions; each
// record is the share-partition's whole snapshot, so compaction keeps the
// latest and a replay restores it. A leader of the partition (the share
// coordinator of its keys) replays it into a map before serving, and
// answers the share-partition leaders' ReadShareGroupState and
// WriteShareGroupState from it (83_share_group_state.go), locally through
// readLocal and writeLocal, from other nodes over the Kafka protocol
// (share_persister.go).
//
// Each snapshot carries the leader epoch of the data partition whose
// leader wrote it: a write or read with an older leader epoch is fenced
// (FENCED_LEADER_EPOCH), so a deposed leader cannot overwrite what its
// successor loaded; a read with a newer one raises it (and persists it).
//
// Record layout (Strata's own; Kafka's ShareSnapshot/ShareUpdate are a
// snapshot-plus-deltas scheme, not used):
//
//	key:   int16 version (0x7F10) | int16 len | group | [16]byte topic id | int32 partition
//	value: int16 version (1) | int32 leader epoch | int64 start offset | int32 n |
//	       n × (int64 first | int64 last | int8 state | int16 delivery count)
//	       (version 0: no leader epoch; a null value deletes the
//	       share-partition: its group or offsets were deleted)
//
// Records acquired when the snapshot was taken are written as available,
// with their delivery count: after a restart or a leader change they are
// delivered again, acknowledged ones never.
const shareStateTopic = "__share_group_state"

const shareStateKeyVersion = 0x7F10

type shareStateStore struct {
	s        *Server
	creating creation
	mu       struct {
		sync.Mutex
		shards []*shareStateShard // nil until the topic exists
	}
	tasks taskGroup
}

// shareStateShard is one __share_group_state partition on the runtime.
type shareStateShard struct {
	*coordinatorShard[*shareStateData]
	st *shareStateStore
}

// shareStateData is a loaded partition: the latest snapshot of each
// share-partition in it, and the leader epoch of the data partition
// leader that last wrote or read it.
type shareStateData struct {
	snaps  map[sharePartitionKey]share.Snapshot
	epochs map[sharePartitionKey]int32
}

func newShareStateStore(s *Server) *shareStateStore {
	st := &shareStateStore{s: s}
	st.tasks.ctx = s.ctx
	return st
}

func (st *shareStateStore) close() { st.tasks.close() }

func (st *shareStateStore) shards() []*shareStateShard {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.mu.shards
}

// ready creates __share_group_state on first use and loads the shards
// this node leads. Call it with no lock held (it may propose a topic).
func (st *shareStateStore) ready() []*shareStateShard {
	if shards := st.shards(); shards != nil {
		return shards
	}
	st.creating.do(st.s.ctx.Done(), func() {
		if st.shards() != nil {
			return
		}
		t := st.s.internalTopic(shareStateTopic, st.s.cfg.ShareCoordinatorStateTopicNumPartitions, st.s.cfg.ShareCoordinatorStateTopicReplicationFactor,
			map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"})
		if t == nil {
			return
		}
		parts, _, _ := st.s.topics.snapshot(t)
		shards := make([]*shareStateShard, len(parts))
		for i, p := range parts {
			sh := &shareStateShard{st: st}
			sh.coordinatorShard = newCoordinatorShard[*shareStateData](st.s.ctx, st.s.logger, &st.tasks, "share coordinator", shareStateTopic, int32(i), logOf(st.s, p), sh)
			if log := logOf(st.s, p); log == nil || !log.isLeader() {
				sh.unload(shardUnloaded)
			}
			shards[i] = sh
		}
		st.mu.Lock()
		st.mu.shards = shards
		st.mu.Unlock()
		for _, sh := range shards {
			sh.mu.Lock()
			loading := sh.mu.state == shardLoading
			sh.mu.Unlock()
			if loading {
				if err := sh.load(); err != nil {
					st.s.logger.Error("share coordinator partition failed to load", "partition", sh.index, "err", err)
				}
			}
		}
	})
	return st.shards()
}

// onLeadership follows a leadership change of a __share_group_state
// partition.
func (st *shareStateStore) onLeadership(p *partition, leader bool) {
	shards := st.shards()
	if int(p.index) >= len(shards) {
		return // not in use yet: ready finds the leadership
	}
	shards[p.index].moveTo(logOf(st.s, p), leader)
}

// shardOf returns the shard holding key (nil before ready).
func (st *shareStateStore) shardOf(key sharePartitionKey) *shareStateShard {
	shards := st.shards()
	if len(shards) == 0 {
		return nil
	}
	name := key.group + ":" + metadata.TopicID(key.topic).String() + ":" + strconv.Itoa(int(key.partition))
	return shards[groupPartition(name, len(shards))]
}

// activeShard returns key's shard if this node serves it, else the
// error to answer (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// COORDINATOR_NOT_AVAILABLE before the topic exists) and the shard. The
// shard's mu is held on success: the caller unlocks it.
func (st *shareStateStore) activeShard(key sharePartitionKey) (*shareStateShard, *kerr.Error) {
	sh := st.shardOf(key)
	if sh == nil {
		return nil, kerr.CoordinatorNotAvailable
	}
	sh.mu.Lock()
	if code := sh.stateErrLocked(); code != nil {
		sh.mu.Unlock()
		return sh, code
	}
	return sh, nil
}

// fencedLocked checks leaderEpoch (-1: not checked, an admin's call)
// against the one key's state last saw; newer is true when it raises it.
// Needs the shard's mu.
func fencedLocked(d *shareStateData, key sharePartitionKey, leaderEpoch int32) (newer bool, code *kerr.Error) {
	if leaderEpoch < 0 {
		return false, nil
	}
	cur, ok := d.epochs[key]
	if ok && leaderEpoch < cur {
		return false, kerr.FencedLeaderEpoch
	}
	return !ok || leaderEpoch > cur, nil
}

// readLocal returns key's snapshot (ok false: none) from the shard this
// node serves, fencing leaderEpoch; a newer leader epoch is recorded, and
// persisted with the snapshot (wait, nil if nothing was written, waits for
// it with no lock held).
func (st *shareStateStore) readLocal(key sharePartitionKey, leaderEpoch int32) (snap share.Snapshot, ok bool, wait func() error, code *kerr.Error) {
	sh, code := st.activeShard(key)
	if code != nil {
		return snap, false, nil, code
	}
	defer sh.mu.Unlock()
	newer, code := fencedLocked(sh.coord, key, leaderEpoch)
	if code != nil {
		return snap, false, nil, code
	}
	snap, ok = sh.coord.snaps[key]
	if newer && ok {
		wait = st.queueShardLocked(sh, key, &snap, leaderEpoch)
	} else if newer {
		sh.coord.epochs[key] = leaderEpoch // persisted with the first write
	}
	return snap, ok, wait, nil
}

// writeLocal replaces key's snapshot in the shard this node serves (snap
// nil: deletes it), fencing leaderEpoch; wait waits for the write with no
// lock held.
func (st *shareStateStore) writeLocal(key sharePartitionKey, leaderEpoch int32, snap *share.Snapshot) (wait func() error, code *kerr.Error) {
	sh, code := st.activeShard(key)
	if code != nil {
		return nil, code
	}
	defer sh.mu.Unlock()
	if _, code := fencedLocked(sh.coord, key, leaderEpoch); code != nil {
		return nil, code
	}
	return st.queueShardLocked(sh, key, snap, leaderEpoch), nil
}

// queueShardLocked applies and queues key's record; leaderEpoch -1 keeps
// the one recorded. Needs the shard's mu.
func (st *shareStateStore) queueShardLocked(sh *shareStateShard, key sharePartitionKey, snap *share.Snapshot, leaderEpoch int32) func() error {
	if leaderEpoch < 0 {
		leaderEpoch = sh.coord.epochs[key]
	}
	if snap == nil {
		delete(sh.coord.snaps, key)
		delete(sh.coord.epochs, key)
	} else {
		sh.coord.snaps[key] = *snap
		sh.coord.epochs[key] = leaderEpoch
	}
	k, v := encodeShareStateRecord(key, snap, leaderEpoch)
	w := sh.queueLocked(storage.EncodeKVBatch([][]byte{k}, [][]byte{v}, -1, -1, false, time.Now().UnixMilli()), false)
	return func() error { return sh.await(w) }
}

// summaryLocal is key's start offset, leader epoch and the records from
// it on that are done (ReadShareGroupStateSummary); ok false: no state.
func (st *shareStateStore) summaryLocal(key sharePartitionKey) (start int64, leaderEpoch int32, done int64, ok bool, code *kerr.Error) {
	sh, code := st.activeShard(key)
	if code != nil {
		return 0, 0, 0, false, code
	}
	defer sh.mu.Unlock()
	snap, ok := sh.coord.snaps[key]
	if !ok {
		return -1, 0, 0, false, nil
	}
	sp := share.NewPartition(share.PartitionConfig{})
	sp.Restore(snap)
	return snap.Start, sh.coord.epochs[key], sp.Done(), true, nil
}

// ---- the runtime's state machine hooks ----

func (sh *shareStateShard) newState(int32) *shareStateData {
	return &shareStateData{snaps: map[sharePartitionKey]share.Snapshot{}, epochs: map[sharePartitionKey]int32{}}
}

func (sh *shareStateShard) replay(d *shareStateData, batch []byte, h storage.BatchHeader) error {
	if h.IsControl() {
		return nil
	}
	recs, err := storage.DecodeRecords(batch)
	if err != nil {
		return err
	}
	for _, r := range recs {
		key, snap, leaderEpoch, err := decodeShareStateRecord(r.Key, r.Value)
		if err != nil {
			sh.st.s.logger.Warn("skipping undecodable "+shareStateTopic+" record", "partition", sh.index, "err", err)
			continue
		}
		if snap == nil {
			delete(d.snaps, key)
			delete(d.epochs, key)
			continue
		}
		d.snaps[key], d.epochs[key] = *snap, leaderEpoch
	}
	return nil
}

func (sh *shareStateShard) startedLocked(*shareStateData) func() { return nil }
func (sh *shareStateShard) stoppedLocked(*shareStateData) func() { return nil }

// ---- record codec ----

var errShareStateRecord = errors.New("broker: malformed " + shareStateTopic + " record")

func encodeShareStateRecord(key sharePartitionKey, snap *share.Snapshot, leaderEpoch int32) (k, v []byte) {
	k = binary.BigEndian.AppendUint16(nil, shareStateKeyVersion)
	k = binary.BigEndian.AppendUint16(k, uint16(len(key.group)))
	k = append(k, key.group...)
	k = append(k, key.topic[:]...)
	k = binary.BigEndian.AppendUint32(k, uint32(key.partition))
	if snap == nil {
		return k, nil
	}
	v = binary.BigEndian.AppendUint16(nil, 1)
	v = binary.BigEndian.AppendUint32(v, uint32(leaderEpoch))
	v = binary.BigEndian.AppendUint64(v, uint64(snap.Start))
	v = binary.BigEndian.AppendUint32(v, uint32(len(snap.Batches)))
	for _, b := range snap.Batches {
		v = binary.BigEndian.AppendUint64(v, uint64(b.First))
		v = binary.BigEndian.AppendUint64(v, uint64(b.Last))
		v = append(v, byte(b.State))
		v = binary.BigEndian.AppendUint16(v, uint16(b.DeliveryCount))
	}
	return k, v
}

// decodeShareStateRecord decodes a record; a nil snapshot is a tombstone.
// A version 0 value has leader epoch 0.
func decodeShareStateRecord(k, v []byte) (key sharePartitionKey, snap *share.Snapshot, leaderEpoch int32, err error) {
	if len(k) < 4 || binary.BigEndian.Uint16(k) != shareStateKeyVersion {
		return key, nil, 0, errShareStateRecord
	}
	n := int(binary.BigEndian.Uint16(k[2:]))
	if len(k) != 4+n+16+4 {
		return key, nil, 0, errShareStateRecord
	}
	key.group = string(k[4 : 4+n])
	copy(key.topic[:], k[4+n:])
	key.partition = int32(binary.BigEndian.Uint32(k[4+n+16:]))
	if v == nil {
		return key, nil, 0, nil
	}
	if len(v) < 2 || binary.BigEndian.Uint16(v) > 1 {
		return key, nil, 0, errShareStateRecord
	}
	head := 2
	if binary.BigEndian.Uint16(v) == 1 {
		if len(v) < 6 {
			return key, nil, 0, errShareStateRecord
		}
		leaderEpoch = int32(binary.BigEndian.Uint32(v[2:]))
		head = 6
	}
	if len(v) < head+12 {
		return key, nil, 0, errShareStateRecord
	}
	s := &share.Snapshot{Start: int64(binary.BigEndian.Uint64(v[head:]))}
	count := int(binary.BigEndian.Uint32(v[head+8:]))
	const entry = 8 + 8 + 1 + 2
	head += 12
	if count < 0 || len(v) != head+count*entry {
		return key, nil, 0, fmt.Errorf("%w: %d state batches in %d bytes", errShareStateRecord, count, len(v))
	}
	for i, pos := 0, head; i < count; i, pos = i+1, pos+entry {
		s.Batches = append(s.Batches, share.StateBatch{
			First:         int64(binary.BigEndian.Uint64(v[pos:])),
			Last:          int64(binary.BigEndian.Uint64(v[pos+8:])),
			State:         share.RecordState(v[pos+16]),
			DeliveryCount: int16(binary.BigEndian.Uint16(v[pos+17:])),
		})
	}
	return key, s, leaderEpoch, nil
}

// snapshotsOf returns the persisted snapshots of group's
// share-partitions in the partitions loaded here.
func (st *shareStateStore) snapshotsOf(group string) map[sharePartitionKey]share.Snapshot {
	out := map[sharePartitionKey]share.Snapshot{}
	for _, sh := range st.shards() {
		sh.mu.Lock()
		if sh.mu.state == shardActive {
			for k, s := range sh.coord.snaps {
				if k.group == group {
					out[k] = s
				}
			}
		}
		sh.mu.Unlock()
	}
	return out
}
