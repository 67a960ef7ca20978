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

// Persistence of share-partitions: the internal, compacted topic
// __share_group_state (share.coordinator.state.topic.num.partitions
// partitions, replicated like __consumer_offsets), run by the coordinator
// runtime (coordinator_runtime.go). A share-partition's record goes to
// partition abs(javaHash("group:topicId:partition")) % partitions; each
// record is the share-partition's whole snapshot, so compaction keeps the
// latest and a replay restores it. A leader of the partition replays it
// into a map (load) before serving; share-partitions created after a
// restart or a leader change read their snapshot from it.
//
// Record layout (Strata's own; Kafka's ShareSnapshot/ShareUpdate are a
// snapshot-plus-deltas scheme, not used):
//
//	key:   int16 version (0x7F10) | int16 len | group | [16]byte topic id | int32 partition
//	value: int16 version (0) | int64 start offset | int32 n |
//	       n × (int64 first | int64 last | int8 state | int16 delivery count)
//	       (a null value deletes the share-partition: its group was deleted)
//
// Records acquired when the snapshot was taken are written as available,
// with their delivery count: after a restart they are delivered again,
// acknowledged ones never.
//
// Limitation: a share-partition is persisted only where its
// __share_group_state partition is led by the same node as its data
// partition (always on a single node). Elsewhere it lives in memory only
// (logged once per partition).
const shareStateTopic = "__share_group_state"

const shareStateKeyVersion = 0x7F10

type shareStateStore struct {
	s        *Server
	creating creation
	mu       struct {
		sync.Mutex
		shards []*shareStateShard // nil until the topic exists
		warned map[int32]bool     // partitions led elsewhere, logged once
	}
	tasks taskGroup
}

// shareStateShard is one __share_group_state partition on the runtime.
type shareStateShard struct {
	*coordinatorShard[*shareStateData]
	st *shareStateStore
}

// shareStateData is a loaded partition: the latest snapshot of each
// share-partition in it.
type shareStateData struct {
	snaps map[sharePartitionKey]share.Snapshot
}

func newShareStateStore(s *Server) *shareStateStore {
	st := &shareStateStore{s: s}
	st.tasks.ctx = s.ctx
	st.mu.warned = map[int32]bool{}
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

// load returns key's persisted snapshot; ok is false when there is none.
// COORDINATOR_LOAD_IN_PROGRESS while its partition is loading here.
func (st *shareStateStore) load(key sharePartitionKey) (snap share.Snapshot, ok bool, code *kerr.Error) {
	sh := st.shardOf(key)
	if sh == nil {
		return share.Snapshot{}, false, nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	switch sh.mu.state {
	case shardLoading:
		return share.Snapshot{}, false, kerr.CoordinatorLoadInProgress
	case shardUnloaded:
		st.warnRemote(sh.index)
		return share.Snapshot{}, false, nil
	}
	snap, ok = sh.coord.snaps[key]
	return snap, ok, nil
}

// warnRemote logs once that a share-partition's state partition is led
// elsewhere (its state is not persisted).
func (st *shareStateStore) warnRemote(index int32) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.mu.warned[index] {
		st.mu.warned[index] = true
		st.s.logger.Warn("share-partition state not persisted: its "+shareStateTopic+" partition is led by another node", "partition", index)
	}
}

// queueLocked queues key's snapshot for writing, under the share
// coordinator's mu (so writes keep the order of the changes); the
// returned function (nil: nothing to wait for) waits for it to be below
// the high watermark, with no lock held.
func (st *shareStateStore) queueLocked(key sharePartitionKey, snap share.Snapshot) func() error {
	sh := st.shardOf(key)
	if sh == nil {
		return nil
	}
	sh.mu.Lock()
	if sh.mu.state != shardActive {
		sh.mu.Unlock()
		return nil
	}
	sh.coord.snaps[key] = snap
	k, v := encodeShareStateRecord(key, &snap)
	w := sh.queueLocked(storage.EncodeKVBatch([][]byte{k}, [][]byte{v}, -1, -1, false, time.Now().UnixMilli()), false)
	sh.mu.Unlock()
	return func() error { return sh.await(w) }
}

// forget writes tombstones for the share-partitions of a deleted group.
func (st *shareStateStore) forget(keys []sharePartitionKey) {
	var waits []func() error
	for _, key := range keys {
		sh := st.shardOf(key)
		if sh == nil {
			continue
		}
		sh.mu.Lock()
		if sh.mu.state == shardActive {
			delete(sh.coord.snaps, key)
			k, _ := encodeShareStateRecord(key, nil)
			w := sh.queueLocked(storage.EncodeKVBatch([][]byte{k}, [][]byte{nil}, -1, -1, false, time.Now().UnixMilli()), false)
			waits = append(waits, func() error { return sh.await(w) })
		}
		sh.mu.Unlock()
	}
	for _, w := range waits {
		if err := w(); err != nil {
			st.s.logger.Warn("share-partition tombstone not written", "err", err)
		}
	}
}

// ---- the runtime's state machine hooks ----

func (sh *shareStateShard) newState(int32) *shareStateData {
	return &shareStateData{snaps: map[sharePartitionKey]share.Snapshot{}}
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
		key, snap, err := decodeShareStateRecord(r.Key, r.Value)
		if err != nil {
			sh.st.s.logger.Warn("skipping undecodable "+shareStateTopic+" record", "partition", sh.index, "err", err)
			continue
		}
		if snap == nil {
			delete(d.snaps, key)
			continue
		}
		d.snaps[key] = *snap
	}
	return nil
}

func (sh *shareStateShard) startedLocked(*shareStateData) func() { return nil }
func (sh *shareStateShard) stoppedLocked(*shareStateData) func() { return nil }

// ---- record codec ----

var errShareStateRecord = errors.New("broker: malformed " + shareStateTopic + " record")

func encodeShareStateRecord(key sharePartitionKey, snap *share.Snapshot) (k, v []byte) {
	k = binary.BigEndian.AppendUint16(nil, shareStateKeyVersion)
	k = binary.BigEndian.AppendUint16(k, uint16(len(key.group)))
	k = append(k, key.group...)
	k = append(k, key.topic[:]...)
	k = binary.BigEndian.AppendUint32(k, uint32(key.partition))
	if snap == nil {
		return k, nil
	}
	v = binary.BigEndian.AppendUint16(nil, 0)
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
func decodeShareStateRecord(k, v []byte) (key sharePartitionKey, snap *share.Snapshot, err error) {
	if len(k) < 4 || binary.BigEndian.Uint16(k) != shareStateKeyVersion {
		return key, nil, errShareStateRecord
	}
	n := int(binary.BigEndian.Uint16(k[2:]))
	if len(k) != 4+n+16+4 {
		return key, nil, errShareStateRecord
	}
	key.group = string(k[4 : 4+n])
	copy(key.topic[:], k[4+n:])
	key.partition = int32(binary.BigEndian.Uint32(k[4+n+16:]))
	if v == nil {
		return key, nil, nil
	}
	if len(v) < 14 || binary.BigEndian.Uint16(v) != 0 {
		return key, nil, errShareStateRecord
	}
	s := &share.Snapshot{Start: int64(binary.BigEndian.Uint64(v[2:]))}
	count := int(binary.BigEndian.Uint32(v[10:]))
	const entry = 8 + 8 + 1 + 2
	if count < 0 || len(v) != 14+count*entry {
		return key, nil, fmt.Errorf("%w: %d state batches in %d bytes", errShareStateRecord, count, len(v))
	}
	for i, pos := 0, 14; i < count; i, pos = i+1, pos+entry {
		s.Batches = append(s.Batches, share.StateBatch{
			First:         int64(binary.BigEndian.Uint64(v[pos:])),
			Last:          int64(binary.BigEndian.Uint64(v[pos+8:])),
			State:         share.RecordState(v[pos+16]),
			DeliveryCount: int16(binary.BigEndian.Uint16(v[pos+17:])),
		})
	}
	return key, s, nil
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
