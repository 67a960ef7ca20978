package share

import (
	"container/list"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Share session epochs (KIP-932): 0 opens a session, -1 closes it, the
// others must follow the session's count (wrapping from MaxInt32 to 1).
const (
	SessionOpenEpoch  int32 = 0
	SessionFinalEpoch int32 = -1
)

// TopicPartition names a partition by topic id.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

// Session is one member's share session on a node: the partitions it
// fetches and the epoch its next request must carry.
type Session struct {
	Group, Member string
	Epoch         int32 // the epoch the next request carries
	Partitions    map[TopicPartition]struct{}
	lastUsed      time.Time     // the last request in the session
	elem          *list.Element // in Sessions.lru
}

// Sessions are a node's share sessions, by group and member, in least
// recently used order. Callers serialize access.
//
// The cache is bounded like Kafka's share session cache: a new session
// that finds it full evicts the least recently used one if that one has
// been idle for at least minIdle (its member sent nothing for a whole
// group session timeout, so the group has expelled it), else it is
// refused with SHARE_SESSION_LIMIT_REACHED.
type Sessions struct {
	byKey   map[[2]string]*Session
	lru     list.List // of *Session, least recently used first
	limit   int
	minIdle time.Duration
}

// NewSessions returns an empty cache holding at most limit sessions (0:
// 1000) that evicts sessions idle for minIdle (0: 45 s, the default
// share group session timeout) to make room.
func NewSessions(limit int, minIdle time.Duration) *Sessions {
	if limit <= 0 {
		limit = 1000
	}
	if minIdle <= 0 {
		minIdle = 45 * time.Second
	}
	return &Sessions{byKey: map[[2]string]*Session{}, limit: limit, minIdle: minIdle}
}

// Len is the number of open sessions.
func (s *Sessions) Len() int { return len(s.byKey) }

// Get returns the member's session, nil if none.
func (s *Sessions) Get(group, member string) *Session { return s.byKey[[2]string{group, member}] }

// Begin validates a request's session epoch against the member's
// session and returns the session the request runs in. Epoch 0 opens a
// new session (replacing an old one, whose partitions are returned in
// replaced so their records can be released); -1 is the final request of
// the session (acknowledgements only; the caller then calls Close);
// other epochs must match. The session's epoch moves on only through
// Advance, once the request is served.
func (s *Sessions) Begin(group, member string, epoch int32, now time.Time) (sess *Session, replaced *Session, err *kerr.Error) {
	if member == "" {
		return nil, nil, kerr.InvalidRequest
	}
	key := [2]string{group, member}
	cur := s.byKey[key]
	switch {
	case epoch == SessionOpenEpoch:
		replaced = cur
		if cur != nil {
			s.remove(cur)
		} else if len(s.byKey) >= s.limit {
			oldest := s.lru.Front().Value.(*Session)
			if now.Sub(oldest.lastUsed) < s.minIdle {
				return nil, nil, kerr.ShareSessionLimitReached
			}
			s.remove(oldest)
			replaced = oldest
		}
		sess = &Session{Group: group, Member: member, Epoch: 0, Partitions: map[TopicPartition]struct{}{}, lastUsed: now}
		sess.elem = s.lru.PushBack(sess)
		s.byKey[key] = sess
		return sess, replaced, nil
	case cur == nil:
		return nil, nil, kerr.ShareSessionNotFound
	case epoch != SessionFinalEpoch && epoch != cur.Epoch:
		return nil, nil, kerr.InvalidShareSessionEpoch
	}
	cur.lastUsed = now
	s.lru.MoveToBack(cur.elem)
	return cur, nil, nil
}

// remove drops sess from the cache.
func (s *Sessions) remove(sess *Session) {
	delete(s.byKey, [2]string{sess.Group, sess.Member})
	s.lru.Remove(sess.elem)
}

// Advance moves the session's epoch past a served request.
func (sess *Session) Advance() {
	if sess.Epoch == 1<<31-1 {
		sess.Epoch = 1
		return
	}
	sess.Epoch++
}

// Close drops the member's session and returns it (nil if none).
func (s *Sessions) Close(group, member string) *Session {
	cur := s.byKey[[2]string{group, member}]
	if cur != nil {
		s.remove(cur)
	}
	return cur
}

// All returns every open session.
func (s *Sessions) All() []*Session {
	out := make([]*Session, 0, len(s.byKey))
	for _, v := range s.byKey {
		out = append(out, v)
	}
	return out
}
