package broker

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fetch sessions (KIP-227). A client that opens a session (epoch 0) sends
// later fetches (epoch 1, 2, …) listing only partitions whose fetch offset
// or limits changed, plus partitions to forget; the broker answers only
// partitions with records or with a changed high watermark, last stable
// offset, log start offset or error, and every partition in error or
// naming a preferred read replica. Sessions live in a bounded cache
// (Kafka's max.incremental.fetch.session.cache.slots, 1000): when it is
// full the least recently used session is evicted, and a client whose
// session is gone gets FETCH_SESSION_ID_NOT_FOUND and starts over with a
// full fetch.
//
// An incremental fetch costs what changed, not the session's size. Each
// session partition watches its replica (replica.Watcher, one-shot: the
// append, high watermark, log start or role change that fires it marks
// the partition dirty and wakes the session's parked fetch). A fetch reads
// only the dirty partitions — those the request names are dirty too — and
// a partition leaves the dirty set only when its read found nothing past
// the fetch offset, no error and no preferred read replica, with its watch
// re-armed before that read. Whatever a watch cannot see marks the whole
// session dirty once: another principal or ACL version, another request
// shape (version, isolation level, rack), a rack-aware session's metadata
// moving (the preferred read replica follows the ISR and broker liveness),
// and every follower fetch (the leader must see each partition's fetch
// offset for the ISR).

type sessionKey struct {
	topic     string
	partition int32
}

type sessionPartition struct {
	topicID            [16]byte
	fetchOffset        int64
	maxBytes           int32
	currentLeaderEpoch int32
	// seq orders the session's partitions in responses (ascending); a
	// partition that returned records moves to the back.
	seq uint64
	// What the client last saw, to decide whether to include the partition.
	sent            bool
	lastHW          int64
	lastStable      int64
	lastLogStart    int64
	lastErrorCode   int16
	lastReadReplica int32 // +1; 0: none
	watch           *partitionWatch
}

// partitionWatch is a session partition's one-shot subscription to its
// replica's next change. Its fields are guarded by the session's notify.
type partitionWatch struct {
	session *fetchSession
	key     sessionKey
	on      *partition // the partition it is registered with; nil when not (fired, or never armed)
	dirty   bool       // in session.notify.dirty
	gone    bool       // forgotten, or the session closed
}

// PartitionChanged implements replica.Watcher.
func (w *partitionWatch) PartitionChanged() {
	s := w.session
	s.notify.Lock()
	w.on = nil
	s.markDirtyLocked(w)
	wake := s.notify.wake
	s.notify.Unlock()
	if wake != nil {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// arm registers the watch with p unless it already is, so any change
// after this call marks the partition dirty. The fetch arms before it
// reads p.
func (w *partitionWatch) arm(p *partition) {
	s := w.session
	s.notify.Lock()
	defer s.notify.Unlock()
	if w.gone || w.on == p {
		return
	}
	if w.on != nil {
		w.on.Unwatch(w) // the partition was replaced (topic recreated, replica reopened)
	}
	w.on = p
	p.Watch(w)
}

// fetchShape is what a session's requests must keep for a clean partition
// to stay clean.
type fetchShape struct {
	version        int16
	isolationLevel int8
	rack           string
	principal      string
	aclVersion     int64
}

type fetchSession struct {
	mu    sync.Mutex // guards the protocol state below; never held while waiting
	id    int32
	epoch int32 // the epoch the next request must carry
	// partitions are the session's; nextSeq orders them (sessionPartition.seq).
	partitions map[sessionKey]*sessionPartition
	nextSeq    uint64
	shape      fetchShape
	// metadataIndex is the applied metadata index at the last rack-aware fetch.
	metadataIndex uint64
	lastUsed      time.Time

	// notify is taken by replica watchers, after mu when both are held.
	notify struct {
		sync.Mutex
		dirty []*partitionWatch
		wake  chan struct{} // the parked fetch's waiter, nil when none
	}
}

func newFetchSession(id int32) *fetchSession {
	return &fetchSession{id: id, epoch: 1, partitions: map[sessionKey]*sessionPartition{}, lastUsed: time.Now()}
}

// upsert adds or updates a partition from a request; either way it is
// dirty: its fetch offset or limits changed.
func (fs *fetchSession) upsert(k sessionKey, sp sessionPartition) {
	cur, ok := fs.partitions[k]
	if ok {
		cur.fetchOffset, cur.maxBytes, cur.currentLeaderEpoch, cur.topicID = sp.fetchOffset, sp.maxBytes, sp.currentLeaderEpoch, sp.topicID
	} else {
		cur = &sp
		cur.seq = fs.nextSeq
		fs.nextSeq++
		cur.watch = &partitionWatch{session: fs, key: k}
		fs.partitions[k] = cur
	}
	fs.markDirty(cur.watch)
}

// forget drops a partition and its watch.
func (fs *fetchSession) forget(k sessionKey) {
	sp, ok := fs.partitions[k]
	if !ok {
		return
	}
	delete(fs.partitions, k)
	fs.unwatch(sp.watch)
}

func (fs *fetchSession) unwatch(w *partitionWatch) {
	fs.notify.Lock()
	defer fs.notify.Unlock()
	w.gone = true
	if w.on != nil {
		w.on.Unwatch(w)
		w.on = nil
	}
}

// close unregisters every watch of a session leaving the cache.
func (fs *fetchSession) close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, sp := range fs.partitions {
		fs.unwatch(sp.watch)
	}
}

func (fs *fetchSession) markDirty(w *partitionWatch) {
	fs.notify.Lock()
	fs.markDirtyLocked(w)
	fs.notify.Unlock()
}

func (fs *fetchSession) markDirtyLocked(w *partitionWatch) {
	if !w.gone && !w.dirty {
		w.dirty = true
		fs.notify.dirty = append(fs.notify.dirty, w)
	}
}

// markAllDirty makes the next read cover the whole session (what the
// watches cannot see changed).
func (fs *fetchSession) markAllDirty() {
	fs.notify.Lock()
	defer fs.notify.Unlock()
	for _, sp := range fs.partitions {
		fs.markDirtyLocked(sp.watch)
	}
}

// park sets the channel watches signal (nil: none), the parked fetch's.
func (fs *fetchSession) park(wake chan struct{}) {
	fs.notify.Lock()
	fs.notify.wake = wake
	fs.notify.Unlock()
}

// takeDirty is takeDirtyLocked for a fetch between its reads.
func (fs *fetchSession) takeDirty(have []fetchTarget) []fetchTarget {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.takeDirtyLocked(have)
}

// dropDirty empties the dirty set: the fetch reads every partition.
func (fs *fetchSession) dropDirty() {
	fs.notify.Lock()
	defer fs.notify.Unlock()
	for _, w := range fs.notify.dirty {
		w.dirty = false
	}
	fs.notify.dirty = nil
}

// takeDirtyLocked empties the dirty set into fetch targets, appended to
// have (without repeating a key) and sorted in response order. fs.mu is
// held.
func (fs *fetchSession) takeDirtyLocked(have []fetchTarget) []fetchTarget {
	fs.notify.Lock()
	dirty := fs.notify.dirty
	fs.notify.dirty = nil
	for _, w := range dirty {
		w.dirty = false
	}
	fs.notify.Unlock()
	if len(dirty) == 0 {
		return have
	}
	var taken map[*partitionWatch]bool
	if len(have) > 0 {
		taken = make(map[*partitionWatch]bool, len(have))
		for _, t := range have {
			taken[t.state.watch] = true
		}
	}
	for _, w := range dirty {
		sp := fs.partitions[w.key]
		if sp == nil || sp.watch != w || taken[w] {
			continue
		}
		have = append(have, fetchTarget{key: w.key, topicID: sp.topicID, state: *sp})
	}
	// Response order; targets outside the session (unknown topic IDs) last.
	slices.SortStableFunc(have, func(a, b fetchTarget) int {
		if (a.state.watch == nil) != (b.state.watch == nil) {
			if a.state.watch == nil {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.state.seq, b.state.seq)
	})
	return have
}

// sessionEvictionIdle is how long a session must be unused before a new
// one may take its slot.
const sessionEvictionIdle = 2 * time.Minute

type fetchSessionCache struct {
	capacity int
	mu       sync.Mutex
	sessions map[int32]*fetchSession
	// fetches counts session fetches and reads the partitions they read
	// (each read of each long-poll round): tests and
	// BenchmarkFetchSessionIncremental compare them.
	fetches, reads atomic.Int64
}

func newFetchSessionCache(capacity int) *fetchSessionCache {
	return &fetchSessionCache{capacity: capacity, sessions: map[int32]*fetchSession{}}
}

// create registers a new empty session, evicting the least recently used
// one if the cache is full. It returns nil if capacity is 0.
func (c *fetchSessionCache) create() *fetchSession {
	if c.capacity <= 0 {
		return nil
	}
	c.mu.Lock()
	var evicted *fetchSession
	if len(c.sessions) >= c.capacity {
		var oldest *fetchSession
		for _, s := range c.sessions {
			if oldest == nil || s.lastUsed.Before(oldest.lastUsed) {
				oldest = s
			}
		}
		// Only an idle session is evicted (Kafka's
		// min.incremental.fetch.session.eviction.ms); when every slot is
		// busy the new client fetches without a session instead.
		if time.Since(oldest.lastUsed) < sessionEvictionIdle {
			c.mu.Unlock()
			return nil
		}
		delete(c.sessions, oldest.id)
		evicted = oldest
	}
	var id int32
	for id == 0 || c.sessions[id] != nil {
		id = rand.Int32()
	}
	s := newFetchSession(id)
	c.sessions[id] = s
	c.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}
	return s
}

func (c *fetchSessionCache) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[id]
	if s != nil {
		s.lastUsed = time.Now()
	}
	return s
}

func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	s := c.sessions[id]
	delete(c.sessions, id)
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
}
