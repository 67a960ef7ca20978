package share

import (
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
}

// Sessions are a node's share sessions, by group and member. Callers
// serialize access.
type Sessions struct {
	byKey map[[2]string]*Session
	limit int
}

// NewSessions returns an empty cache holding at most limit sessions
// (share.session.cache size; 0: 1000).
func NewSessions(limit int) *Sessions {
	if limit <= 0 {
		limit = 1000
	}
	return &Sessions{byKey: map[[2]string]*Session{}, limit: limit}
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
func (s *Sessions) Begin(group, member string, epoch int32) (sess *Session, replaced *Session, err *kerr.Error) {
	if member == "" {
		return nil, nil, kerr.InvalidRequest
	}
	key := [2]string{group, member}
	cur := s.byKey[key]
	switch {
	case epoch == SessionOpenEpoch:
		if cur == nil && len(s.byKey) >= s.limit {
			return nil, nil, kerr.ShareSessionLimitReached
		}
		sess = &Session{Group: group, Member: member, Epoch: 0, Partitions: map[TopicPartition]struct{}{}}
		s.byKey[key] = sess
		return sess, cur, nil
	case cur == nil:
		return nil, nil, kerr.ShareSessionNotFound
	case epoch == SessionFinalEpoch:
		return cur, nil, nil
	case epoch != cur.Epoch:
		return nil, nil, kerr.InvalidShareSessionEpoch
	}
	return cur, nil, nil
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
	key := [2]string{group, member}
	cur := s.byKey[key]
	delete(s.byKey, key)
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
