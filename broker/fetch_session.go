package broker

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Fetch sessions (KIP-227). A client that opens a session (epoch 0) sends
// later fetches (epoch 1, 2, …) listing only partitions whose fetch offset
// or limits changed, plus partitions to forget; the broker answers only
// partitions with records or with a changed high watermark, log start
// offset or error. Sessions live in a bounded cache (Kafka's
// max.incremental.fetch.session.cache.slots, 1000): when it is full the
// least recently used session is evicted, and a client whose session is gone
// gets FETCH_SESSION_ID_NOT_FOUND and starts over with a full fetch.

type sessionKey struct {
	topic     string
	partition int32
}

type sessionPartition struct {
	topicID            [16]byte
	fetchOffset        int64
	maxBytes           int32
	currentLeaderEpoch int32
	// What the client last saw, to decide whether to include the partition.
	sent          bool
	lastHW        int64
	lastLogStart  int64
	lastErrorCode int16
}

type fetchSession struct {
	mu    sync.Mutex // guards everything below; never held while waiting
	id    int32
	epoch int32 // the epoch the next request must carry
	// order keeps insertion order so responses are deterministic.
	order      []sessionKey
	partitions map[sessionKey]*sessionPartition
	lastUsed   time.Time
}

func (fs *fetchSession) upsert(k sessionKey, sp sessionPartition) {
	if cur, ok := fs.partitions[k]; ok {
		cur.fetchOffset, cur.maxBytes, cur.currentLeaderEpoch, cur.topicID = sp.fetchOffset, sp.maxBytes, sp.currentLeaderEpoch, sp.topicID
		return
	}
	fs.order = append(fs.order, k)
	fs.partitions[k] = &sp
}

func (fs *fetchSession) forget(k sessionKey) {
	if _, ok := fs.partitions[k]; !ok {
		return
	}
	delete(fs.partitions, k)
	for i, x := range fs.order {
		if x == k {
			fs.order = append(fs.order[:i], fs.order[i+1:]...)
			break
		}
	}
}

// sessionEvictionIdle is how long a session must be unused before a new
// one may take its slot.
const sessionEvictionIdle = 2 * time.Minute

type fetchSessionCache struct {
	capacity int
	mu       sync.Mutex
	sessions map[int32]*fetchSession
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
	defer c.mu.Unlock()
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
			return nil
		}
		delete(c.sessions, oldest.id)
	}
	var id int32
	for id == 0 || c.sessions[id] != nil {
		id = rand.Int32()
	}
	s := &fetchSession{id: id, epoch: 1, partitions: map[sessionKey]*sessionPartition{}, lastUsed: time.Now()}
	c.sessions[id] = s
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
	delete(c.sessions, id)
	c.mu.Unlock()
}
