package broker

// Fetch (key 1), v4–v18 (v17 and v18 add only tagged fields a follower of a KRaft quorum sends).
//
//   - Records go from segment files to the socket with sendfile (see
//     fetch_encode.go and sendChunk); nothing is decompressed.
//   - Long poll: the response waits up to max_wait_ms until min_bytes are
//     available, waking on any append to a fetched partition; errors and
//     shutdown answer at once.
//   - Byte limits: partition_max_bytes per partition and max_bytes for the
//     response, but the first batch of the first non-empty partition is sent
//     whole even if larger (KIP-74).
//   - Sessions per KIP-227 (fetch_session.go); v13+ addresses topics by ID.
//   - current_leader_epoch is checked: FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH.
//   - NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH carry the applied
//     leader (v12+) and its endpoint (v16+), KIP-951 (leader_hints.go).
//   - read_committed reads stop at the last stable offset (the high
//     watermark while no transaction is open) and carry the aborted
//     transactions of the range (KIP-98); read_uncommitted reads stop at the
//     high watermark.
//   - Offsets below the local log start are read from the remote log
//     (tiered storage, tiered.go) in the background; the long poll wakes
//     when such a read ends.
//   - A follower's fetch (replica id >= 0) reads up to the log end offset,
//     reports its progress for the high watermark and ISR
//     (replica.FollowerFetched), and
//     gets OFFSET_OUT_OF_RANGE below the local log start: followers copy
//     the local log only.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
)

func init() {
	registerAPI(kmsg.Fetch, 4, 18, handleFetch)
	checksACLs(kmsg.Fetch)
}

// fetchTarget is one partition to read in this request.
type fetchTarget struct {
	key     sessionKey
	topicID [16]byte
	state   sessionPartition
	// unknownTopicID is set when a v13+ request named an ID we do not know.
	unknownTopicID bool
	// revisit is set by the read when a session partition stays dirty:
	// records, an error, a preferred read replica, or more to read.
	revisit bool
}

func handleFetch(rc *requestContext, req *kmsg.FetchRequest) kmsg.Response {
	version := req.Version
	resp := &fetchReply{FetchResponse: req.ResponseKind().(*kmsg.FetchResponse)}
	resp.Version = version

	targets, session, code := rc.resolveFetchTargets(req)
	if code != 0 {
		resp.pieces = encodeFetchBody(version, rc.countError(code), 0, nil, nil)
		return resp
	}
	sessionID := int32(0)
	if session != nil {
		sessionID = session.id
	}
	incremental := session != nil && req.SessionEpoch > 0

	maxWait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	deadline := time.Now().Add(maxWait)
	// waiter is signalled by appends to watched partitions and by
	// background remote reads finishing.
	waiter := make(chan struct{}, 1)
	remote := &remoteFetch{notify: waiter, started: map[*remoteLog]bool{}}
	if session != nil {
		// The session's watches wake this fetch; partitions that turned
		// dirty before are taken before it parks.
		session.park(waiter)
		defer session.park(nil)
		rc.s.fetches.fetches.Add(1)
	}
	// A follower's sessionless long poll ends when this node gains a
	// partition the follower replicates but the fetch does not name
	// (leader_gain.go).
	follower := session == nil && fetchReplicaID(req) >= 0
	if follower {
		rc.s.gains.park(waiter, true)
		defer rc.s.gains.park(waiter, false)
	}
	registered := false
	for first := true; ; first = false {
		topics, total, anyError, watched, watchedHW := rc.readFetchTargets(req, targets, incremental, remote)
		gainMissed := false
		if follower && maxWait > 0 && rc.s.gains.missing(fetchReplicaID(req), targets, time.Now()) {
			if first {
				// The follower may not know of the gain yet: ask again soon.
				if soon := time.Now().Add(leaderGainPoll); soon.Before(deadline) {
					deadline = soon
				}
			} else {
				gainMissed = true // gained while this fetch waited
			}
		}
		done := total >= int64(req.MinBytes) || anyError || gainMissed || maxWait <= 0 || !time.Now().Before(deadline) || rc.s.ctx.Err() != nil
		if done {
			if registered {
				for _, p := range watched {
					p.RemoveWaiter(waiter)
				}
			}
			if session != nil {
				rc.commitSession(session, targets, topics)
			}
			consumer := fetchReplicaID(req) < 0
			for _, t := range topics {
				for _, p := range t.partitions {
					if n := p.recordsLen(); n > 0 {
						rc.s.metrics.bytesOut.WithLabelValues(t.name).Add(float64(n))
						if consumer && p.source != nil {
							p.source.traffic.bytesOut.Add(n)
						}
					}
					if len(p.remote) > 0 {
						rc.s.tiered.remoteReadByte.WithLabelValues(t.name).Add(float64(p.recordsLen()))
					}
				}
			}
			resp.pieces = encodeFetchBody(version, 0, sessionID, topics, rc.fetchLeaderHints(version, topics))
			return resp
		}
		closeRemote(topics)
		if session != nil {
			// Wait for a watch to fire; then read what turned dirty too.
			n := len(targets)
			if targets = session.takeDirty(targets); len(targets) > n {
				continue
			}
			rc.waitFetch(waiter, deadline)
			targets = session.takeDirty(targets)
			continue
		}
		// Wait for an append to any watched partition. Register first,
		// then re-read, so an append between the read and the
		// registration is never missed.
		registered = true
		for _, p := range watched {
			p.AddWaiter(waiter)
		}
		changed := false
		for i, p := range watched {
			if fetchWatermark(req, p) != watchedHW[i] {
				changed = true
			}
		}
		if !changed {
			rc.waitFetch(waiter, deadline)
		}
		for _, p := range watched {
			p.RemoveWaiter(waiter)
		}
		select {
		case <-waiter:
		default:
		}
	}
}

// waitFetch parks a long poll until waiter fires, the deadline or shutdown.
func (rc *requestContext) waitFetch(waiter chan struct{}, deadline time.Time) {
	waitStart := time.Now()
	timer := time.NewTimer(time.Until(deadline))
	select {
	case <-waiter:
	case <-timer.C:
	case <-rc.s.ctx.Done():
	}
	timer.Stop()
	rc.waited += time.Since(waitStart)
}

// resolveFetchTargets applies the session protocol and returns the
// partitions to read, in response order.
func (rc *requestContext) resolveFetchTargets(req *kmsg.FetchRequest) ([]fetchTarget, *fetchSession, int16) {
	cache := rc.s.fetches
	fromRequest := func() []fetchTarget {
		n := 0
		for _, rt := range req.Topics {
			n += len(rt.Partitions)
		}
		out := make([]fetchTarget, 0, n)
		for _, rt := range req.Topics {
			name, unknown := rc.fetchTopicName(req.Version, rt.Topic, rt.TopicID)
			for _, rp := range rt.Partitions {
				out = append(out, fetchTarget{
					key:            sessionKey{topic: name, partition: rp.Partition},
					topicID:        rt.TopicID,
					unknownTopicID: unknown,
					state:          sessionPartition{topicID: rt.TopicID, fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes, currentLeaderEpoch: rp.CurrentLeaderEpoch},
				})
			}
		}
		return out
	}
	switch {
	case req.SessionEpoch == -1: // full fetch, no session (closes an old one)
		if req.SessionID != 0 {
			cache.remove(req.SessionID)
		}
		return fromRequest(), nil, 0
	case req.SessionEpoch == 0: // full fetch opening a new session
		if req.SessionID != 0 {
			cache.remove(req.SessionID)
		}
		targets := fromRequest()
		s := cache.create()
		if s != nil {
			s.mu.Lock()
			for _, t := range targets {
				if !t.unknownTopicID {
					s.upsert(t.key, t.state)
				}
			}
			for i := range targets {
				if sp := s.partitions[targets[i].key]; sp != nil && !targets[i].unknownTopicID {
					targets[i].state = *sp
				}
			}
			s.shape = rc.fetchShape(req)
			s.metadataIndex = rc.fetchMetadataIndex(req)
			s.dropDirty() // every partition is a target
			s.mu.Unlock()
		}
		return targets, s, 0
	}
	s := cache.get(req.SessionID)
	if s == nil {
		return nil, nil, kerr.FetchSessionIDNotFound.Code
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.SessionEpoch != s.epoch {
		return nil, nil, kerr.InvalidFetchSessionEpoch.Code
	}
	s.epoch++
	if s.epoch < 0 {
		s.epoch = 1
	}
	// What the watches cannot see makes the whole session dirty.
	if shape := rc.fetchShape(req); shape != s.shape || fetchReplicaID(req) >= 0 {
		s.shape = shape
		s.markAllDirty()
	}
	if index := rc.fetchMetadataIndex(req); index != s.metadataIndex {
		s.metadataIndex = index
		s.markAllDirty()
	}
	var unknown []fetchTarget
	for _, ft := range req.ForgottenTopics {
		name, _ := rc.fetchTopicName(req.Version, ft.Topic, ft.TopicID)
		for _, p := range ft.Partitions {
			s.forget(sessionKey{topic: name, partition: p})
		}
	}
	for _, t := range fromRequest() {
		if t.unknownTopicID {
			unknown = append(unknown, t)
			continue
		}
		s.upsert(t.key, t.state)
	}
	return append(s.takeDirtyLocked(nil), unknown...), s, 0
}

// fetchShape is what a session partition's last answer depends on besides
// the partition: when it changes, every partition is read again.
func (rc *requestContext) fetchShape(req *kmsg.FetchRequest) fetchShape {
	shape := fetchShape{version: req.Version, isolationLevel: req.IsolationLevel, rack: req.Rack}
	if rc.conn != nil && rc.s.cfg.authorizationEnabled() {
		shape.principal, shape.aclVersion = rc.conn.principal, rc.s.authorizer().version
	}
	return shape
}

// fetchMetadataIndex is the applied metadata index for a fetch whose
// answer may name a preferred read replica (which follows the ISR and
// broker liveness, not the partition's log), else 0.
func (rc *requestContext) fetchMetadataIndex(req *kmsg.FetchRequest) uint64 {
	if fetchReplicaID(req) >= 0 || req.Version < 11 || req.Rack == "" ||
		rc.s.conf().ReplicaSelectorClass != rackAwareSelectorClass || rc.s.meta == nil {
		return 0
	}
	return rc.s.meta.appliedIndex()
}

// fetchTopicName maps a request's topic reference to a name; v13+ uses IDs.
func (rc *requestContext) fetchTopicName(version int16, name string, id [16]byte) (string, bool) {
	if version < 13 {
		return name, false
	}
	t := rc.s.topics.getByID(metadata.TopicID(id))
	if t == nil {
		return "", true
	}
	return t.name, false
}

// fetchAfterReadHook, when set (tests), runs after each partition's read in
// readFetchTargets: where an append races with a long poll.
var fetchAfterReadHook func(topic string)

// readFetchTargets reads every target once. In an incremental session only
// partitions with news are returned.
// watched lists the partitions read with the watermark seen before each
// read, for the long poll to detect appends that race with the read or
// with registering its waiter.
func (rc *requestContext) readFetchTargets(req *kmsg.FetchRequest, targets []fetchTarget, incremental bool, remote *remoteFetch) (topics []fetchTopicOut, total int64, anyError bool, watched []*partition, watchedHW []int64) {
	responseMax := int64(req.MaxBytes)
	if req.Version < 3 || responseMax <= 0 {
		responseMax = 1<<31 - 1
	}
	// Targets come grouped by topic, so the last topic answers most
	// lookups; the map is built only for requests that interleave topics.
	var index map[string]int
	watched, watchedHW = make([]*partition, 0, len(targets)), make([]int64, 0, len(targets))
	for i := range targets {
		t := &targets[i]
		out, p := rc.readFetchPartition(req, t, responseMax-total, total == 0, remote)
		if fetchAfterReadHook != nil {
			fetchAfterReadHook(t.key.topic)
		}
		if t.state.watch != nil {
			rc.s.fetches.reads.Add(1)
			t.revisit = out.errorCode != 0 || out.readReplicaPlus1 != 0 || !out.drained
		}
		if p != nil {
			watched = append(watched, p)
			watchedHW = append(watchedHW, out.waitMark)
		}
		total += out.recordsLen()
		if out.errorCode != 0 {
			anyError = true
		}
		// A partition in error is always answered (as Kafka does), so the
		// client sees it and the long poll's early return is never empty;
		// so is one naming a preferred read replica.
		if incremental && t.state.sent && out.recordsLen() == 0 && out.errorCode == 0 && t.state.lastErrorCode == 0 &&
			out.readReplicaPlus1 == 0 && out.highWatermark == t.state.lastHW && out.lastStable == t.state.lastStable &&
			out.logStartOffset == t.state.lastLogStart {
			continue
		}
		name := t.key.topic
		ti := len(topics) - 1
		if ti < 0 || topics[ti].name != name || t.unknownTopicID {
			var ok bool
			if ti, ok = index[name]; !ok || t.unknownTopicID {
				ti = len(topics)
				topics = append(topics, fetchTopicOut{name: name, id: t.topicID})
				if ti > 0 { // a second topic: from here on they are indexed
					if index == nil {
						index = make(map[string]int, ti+1)
						for i, to := range topics[:ti] {
							index[to.name] = i
						}
					}
					index[name] = ti
				}
			}
		}
		topics[ti].partitions = append(topics[ti].partitions, out)
	}
	return topics, total, anyError, watched, watchedHW
}

// remoteFetch is one Fetch request's remote-read state.
type remoteFetch struct {
	notify  chan struct{}       // signalled when a background remote read ends
	started map[*remoteLog]bool // background reads started by this request
}

func (rc *requestContext) readFetchPartition(req *kmsg.FetchRequest, t *fetchTarget, remaining int64, first bool, remote *remoteFetch) (fetchPartitionOut, *partition) {
	out := fetchPartitionOut{partition: t.key.partition, highWatermark: -1, lastStable: -1, logStartOffset: -1}
	if t.unknownTopicID {
		out.errorCode = rc.countError(kerr.UnknownTopicID.Code)
		return out, nil
	}
	// Followers need CLUSTER_ACTION, consumers READ on the topic.
	var allowed bool
	if fetchReplicaID(req) >= 0 {
		allowed = rc.authorizeCluster(acl.OpClusterAction)
	} else {
		allowed = rc.authorize(acl.OpRead, acl.ResourceTopic, t.key.topic)
	}
	if !allowed {
		out.errorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
		return out, nil
	}
	// KIP-392: from v11 a consumer may read from a follower (up to the
	// follower's high watermark), as Kafka's followers serve such fetches.
	fromFollower := fetchReplicaID(req) < 0 && req.Version >= 11
	p, code := rc.s.topics.servingPartition(t.key.topic, t.key.partition, fromFollower)
	if p == nil {
		out.errorCode = rc.countError(code)
		return out, nil
	}
	out.source = p
	if req.Version >= 13 && p.topic.id != metadata.TopicID(t.topicID) {
		// The session's topic was deleted and a new one took its name.
		out.errorCode = rc.countError(kerr.UnknownTopicID.Code)
		return out, nil
	}
	if w := t.state.watch; w != nil {
		w.arm(p) // before the read: a change from here on marks it dirty
	}
	out.waitMark = fetchWatermark(req, p) // before the read, as the watch is armed
	if epoch := t.state.currentLeaderEpoch; epoch >= 0 && epoch != p.LeaderEpoch() {
		// A stale or future leader epoch, a consumer's or a follower's.
		code := kerr.FencedLeaderEpoch.Code
		if epoch > p.LeaderEpoch() {
			code = kerr.UnknownLeaderEpoch.Code
		}
		out.errorCode = rc.countError(code)
		out.highWatermark, out.lastStable, out.logStartOffset = p.HighWatermark(), p.LastStableOffset(), p.logStartOffset()
		return out, p
	}
	replica := fetchReplicaID(req)
	if fromFollower && p.IsLeader() {
		if id, ok := rc.s.preferredReadReplica(p, req.Rack); ok {
			// The consumer's rack has an in-sync replica: it reads there
			// (no records from here, as Kafka answers).
			out.highWatermark, out.lastStable, out.logStartOffset = p.HighWatermark(), p.LastStableOffset(), p.logStartOffset()
			out.readReplicaPlus1 = id + 1
			return out, p
		}
	}
	leaderThrottled := replica >= 0 && !rc.s.leaderThrottle.unlimited() &&
		rc.s.replicaThrottled(rc.s.clusterState(), p, replica, leaderThrottledReplicas)
	if replica >= 0 {
		// A follower's fetch offset is its log end offset.
		if c := p.FollowerFetched(replica, t.state.fetchOffset, time.Now().UnixMilli()); c != nil {
			rc.s.proposeISR(p, c)
		}
		if local := p.Log().LogStartOffset(); t.state.fetchOffset < local {
			// Followers copy only the local log: what is below it lives in
			// the object store (tiering), where a new leader reads it. The
			// follower restarts its log at the local start.
			out.errorCode = rc.countError(kerr.OffsetOutOfRange.Code)
			out.highWatermark, out.lastStable, out.logStartOffset = p.HighWatermark(), p.LastStableOffset(), local
			return out, nil
		}
	}
	hw := p.HighWatermark()
	lso := p.LastStableOffset()
	out.highWatermark, out.lastStable, out.logStartOffset = hw, lso, p.logStartOffset()
	if leaderThrottled && rc.s.leaderThrottle.exceeded() {
		return out, p // leader.replication.throttled.rate: no records this time
	}
	// read_committed reads stop at the last stable offset and carry the
	// transactions aborted in the range, so the client can drop their
	// records (KIP-98).
	readCommitted := req.Version >= 4 && req.IsolationLevel == 1
	upTo := hw
	if replica >= 0 {
		upTo = p.Log().LogEndOffset() // followers copy everything
	}
	if readCommitted {
		upTo = lso
		out.abortedTxns = []storage.AbortedTxn{}
	}
	out.drained = t.state.fetchOffset >= upTo
	limit := int64(t.state.maxBytes)
	if remaining < limit {
		limit = remaining
	}
	if leaderThrottled {
		limit = min(limit, max(rc.s.conf().LeaderThrottledRate, 1)) // a second's worth at most
	}
	if limit <= 0 && !first {
		return out, p
	}
	chunk, err := p.Log().Read(t.state.fetchOffset, int(max(limit, 0)), upTo, first)
	if errors.Is(err, storage.ErrClosed) {
		// A move between log dirs may have swapped the log under this
		// read: read the one that serves now (a deleted topic's stays
		// closed).
		chunk, err = p.SettledLog().Read(t.state.fetchOffset, int(max(limit, 0)), upTo, first)
	}
	if errors.Is(err, storage.ErrOffsetOutOfRange) && t.state.fetchOffset < p.Log().LogStartOffset() {
		// Below the local log: the remote log may hold it.
		records, aborted, ready, rerr := p.remote.fetchRemote(t.state.fetchOffset, int(max(limit, 0)), first, readCommitted, remote.notify, remote.started)
		switch {
		case errors.Is(rerr, errNotRemote):
			if start, _, ok := p.remote.readable(); ok && t.state.fetchOffset >= start {
				// Past the remote log's end but below the local log: a
				// range compaction emptied (local segments go only once
				// uploaded), so the next records are the local log's first.
				chunk, err = p.Log().Read(p.Log().LogStartOffset(), int(max(limit, 0)), upTo, first)
			}
		case errors.Is(rerr, errManifestNotLoaded):
			out.errorCode = rc.countError(kerr.KafkaStorageError.Code)
			return out, p
		case rerr != nil:
			rc.logError("remote fetch failed", "topic", t.key.topic, "partition", t.key.partition, "offset", t.state.fetchOffset, "err", rerr)
			out.errorCode = rc.countError(kerr.KafkaStorageError.Code)
			return out, p
		default:
			if ready {
				out.remote = records
				if readCommitted && aborted != nil {
					out.abortedTxns = aborted
				}
			}
			return out, p
		}
	}
	if err == nil && readCommitted && chunk.Len > 0 {
		aborted, aerr := p.Log().AbortedTxns(t.state.fetchOffset, upTo)
		if aerr != nil {
			err = aerr
		} else if aborted != nil {
			out.abortedTxns = aborted
		}
	}
	switch {
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		out.errorCode = rc.countError(kerr.OffsetOutOfRange.Code)
	case errors.Is(err, storage.ErrClosed):
		// The topic was deleted while this fetch was in flight.
		out.errorCode = rc.countError(kerr.UnknownTopicOrPartition.Code)
	case err != nil:
		rc.logError("fetch read failed", "topic", t.key.topic, "partition", t.key.partition, "offset", t.state.fetchOffset, "err", err)
		rc.s.storageFailed(p, err)
		out.errorCode = rc.countError(kerr.KafkaStorageError.Code)
	default:
		out.chunk = chunk
		if leaderThrottled {
			rc.s.leaderThrottle.record(chunk.Len)
		}
	}
	return out, p
}

// commitSession records what the client is about to see, and keeps dirty
// the partitions read that may have more to say.
func (rc *requestContext) commitSession(s *fetchSession, targets []fetchTarget, topics []fetchTopicOut) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range targets {
		if t.revisit {
			s.markDirty(t.state.watch)
		}
	}
	for _, t := range topics {
		for _, p := range t.partitions {
			sp := s.partitions[sessionKey{topic: t.name, partition: p.partition}]
			if sp == nil {
				continue
			}
			sp.sent = true
			sp.lastHW, sp.lastStable, sp.lastLogStart = p.highWatermark, p.lastStable, p.logStartOffset
			sp.lastErrorCode, sp.lastReadReplica = p.errorCode, p.readReplicaPlus1
			if p.recordsLen() > 0 {
				// Partitions that just got data go to the back, so one
				// busy partition cannot starve the rest of max_bytes.
				sp.seq = s.nextSeq
				s.nextSeq++
			}
		}
	}
}

// fetchReplicaID is the follower's node id in a replica fetch, -1 for a
// consumer's fetch (ReplicaID before v15, ReplicaState from v15, KIP-903).
func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// fetchWatermark is what a long poll waits to see move: the high
// watermark for consumers, the log end offset for followers.
func fetchWatermark(req *kmsg.FetchRequest, p *partition) int64 {
	if fetchReplicaID(req) >= 0 {
		return p.Log().LogEndOffset()
	}
	return p.HighWatermark()
}
