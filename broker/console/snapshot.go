package console

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// snapshotTTL is how long one Metadata answer for every topic serves the
// cluster page, the topic list and the problem-partition lists. The UI
// polls every 5 s; a snapshot younger than this is shared by every request
// and every open browser, so a cluster of 10,000 partitions costs one
// full Metadata request per interval, not one per page view.
const snapshotTTL = 2 * time.Second

// snapshotMaxStale is how old a snapshot may be and still answer at once
// while a newer one is fetched in the background (stale-while-revalidate):
// with 10,000 partitions the Metadata request takes a good part of a page's
// time budget, and no page view should wait for it every snapshotTTL.
// Older than this (a console nobody looked at for a while), or after an
// invalidation, a request waits for the fresh one. Pages show the age
// (metadata_age_ms).
const snapshotMaxStale = 4 * snapshotTTL

// partitionState names the partitions the cluster page counts and lists.
type partitionState string

const (
	stateUnderReplicated    partitionState = "under-replicated"     // a leader, fewer in sync than replicas
	stateOffline            partitionState = "offline"              // no leader clients can use
	stateNonPreferredLeader partitionState = "non-preferred-leader" // led by another than its first replica
)

var partitionStates = []partitionState{stateUnderReplicated, stateOffline, stateNonPreferredLeader}

// topicEntry is one topic of a snapshot, in name order, its partitions
// sorted by number.
type topicEntry struct {
	name      string
	lowerName string // for case-insensitive search
	internal  bool
	parts     []kmsg.MetadataResponseTopicPartition
}

// replicationFactor is the replica count of the first partition.
func (te topicEntry) replicationFactor() int {
	if len(te.parts) == 0 {
		return 0
	}
	return len(te.parts[0].Replicas)
}

// partitionRef is one partition of a problem list.
type partitionRef struct {
	topic     string
	partition int32
}

// metadataSnapshot is one Metadata answer for every topic, indexed for
// the console's pages: topics sorted by name, partition counts and the
// partitions in each problem state sorted by topic and partition.
type metadataSnapshot struct {
	taken      time.Time
	topics     []topicEntry // without the topics the answer had an error for
	byName     map[string]int
	partitions int
	byState    map[partitionState][]partitionRef
}

// newSnapshot indexes a Metadata answer. A topic with an error is left
// out, except LEADER_NOT_AVAILABLE (it exists, its partitions are not
// led yet).
func newSnapshot(md *kmsg.MetadataResponse, taken time.Time) *metadataSnapshot {
	s := &metadataSnapshot{taken: taken, byState: map[partitionState][]partitionRef{}}
	s.topics = make([]topicEntry, 0, len(md.Topics))
	for _, t := range md.Topics {
		if t.Topic == nil || (t.ErrorCode != 0 && t.ErrorCode != kerr.LeaderNotAvailable.Code) {
			continue
		}
		parts := t.Partitions
		sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
		s.topics = append(s.topics, topicEntry{name: *t.Topic, lowerName: strings.ToLower(*t.Topic), internal: t.IsInternal, parts: parts})
	}
	sort.Slice(s.topics, func(i, j int) bool { return s.topics[i].name < s.topics[j].name })
	s.byName = make(map[string]int, len(s.topics))
	for i, te := range s.topics {
		s.byName[te.name] = i
		for _, p := range te.parts {
			s.partitions++
			for _, st := range stateOf(p) {
				s.byState[st] = append(s.byState[st], partitionRef{te.name, p.Partition})
			}
		}
	}
	return s
}

// stateOf lists the problem states p is in: offline, or else
// under-replicated and/or led by another than its preferred leader.
func stateOf(p kmsg.MetadataResponseTopicPartition) []partitionState {
	if p.Leader < 0 {
		return []partitionState{stateOffline}
	}
	var out []partitionState
	if len(p.ISR) < len(p.Replicas) {
		out = append(out, stateUnderReplicated)
	}
	if len(p.Replicas) > 0 && p.Replicas[0] != p.Leader {
		out = append(out, stateNonPreferredLeader)
	}
	return out
}

// matching returns the topics whose name contains lowerSearch (all of
// them for ""), in name order.
func (s *metadataSnapshot) matching(lowerSearch string) []topicEntry {
	if lowerSearch == "" {
		return s.topics
	}
	out := make([]topicEntry, 0, 64)
	for _, te := range s.topics {
		if strings.Contains(te.lowerName, lowerSearch) {
			out = append(out, te)
		}
	}
	return out
}

// partition returns one partition of the snapshot.
func (s *metadataSnapshot) partition(ref partitionRef) (kmsg.MetadataResponseTopicPartition, bool) {
	i, ok := s.byName[ref.topic]
	if !ok {
		return kmsg.MetadataResponseTopicPartition{}, false
	}
	parts := s.topics[i].parts
	j := sort.Search(len(parts), func(j int) bool { return parts[j].Partition >= ref.partition })
	if j == len(parts) || parts[j].Partition != ref.partition {
		return kmsg.MetadataResponseTopicPartition{}, false
	}
	return parts[j], true
}

// snapshotCache hands out the current snapshot, fetching a new one when
// it is older than ttl: in the background while it is younger than
// maxStale (the request is answered from it), else while the request
// waits. Concurrent requests that find it stale share one Metadata request,
// and a state-changing API request (createTopic, deleteTopic…) invalidates
// it so the next page shows the change.
type snapshotCache struct {
	ttl, maxStale time.Duration
	now           func() time.Time
	fetch         func(ctx context.Context, cl *kgo.Client) (*kmsg.MetadataResponse, error) // tests replace it
	// refreshing counts background fetches; wait waits for them.
	refreshing sync.WaitGroup

	mu struct {
		sync.Mutex
		current    *metadataSnapshot
		inflight   *snapshotFetch
		generation uint64 // bumped by invalidate; a fetch of an older one is not kept
		closed     bool   // by wait: no more background fetches
	}
}

// snapshotFetch is one Metadata request others wait for.
type snapshotFetch struct {
	done chan struct{}
	snap *metadataSnapshot
	err  error
}

func newSnapshotCache(ttl, maxStale time.Duration) *snapshotCache {
	return &snapshotCache{ttl: ttl, maxStale: maxStale, now: time.Now, fetch: fetchMetadata}
}

// fetchMetadata asks the cluster for the metadata of every topic. It is
// a plain Metadata request, not kadm.Metadata: that answers from the
// client's own cache of up to 5 s (and copies it whole each time).
func fetchMetadata(ctx context.Context, cl *kgo.Client) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // every topic
	return req.RequestWith(ctx, cl)
}

// get returns a snapshot no older than the cache's ttl, or one no older
// than maxStale while a newer one is being fetched.
func (sc *snapshotCache) get(ctx context.Context, cl *kgo.Client) (*metadataSnapshot, error) {
	sc.mu.Lock()
	s := sc.mu.current
	var age time.Duration
	if s != nil {
		age = sc.now().Sub(s.taken)
		if age < sc.ttl {
			sc.mu.Unlock()
			return s, nil
		}
	}
	stale := s != nil && age < sc.maxStale && !sc.mu.closed
	if f := sc.mu.inflight; f != nil {
		sc.mu.Unlock()
		if stale {
			return s, nil
		}
		select {
		case <-f.done:
			return f.snap, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &snapshotFetch{done: make(chan struct{})}
	sc.mu.inflight = f
	gen := sc.mu.generation
	if stale {
		sc.refreshing.Add(1)
	}
	sc.mu.Unlock()

	if stale {
		go func() {
			defer sc.refreshing.Done()
			sc.run(ctx, cl, f, gen)
		}()
		return s, nil
	}
	sc.run(ctx, cl, f, gen)
	return f.snap, f.err
}

// run fetches f and keeps its snapshot unless the cache was invalidated
// since gen. The fetch is shared: one requester going away must not fail
// the others, so only the request timeout bounds it.
func (sc *snapshotCache) run(ctx context.Context, cl *kgo.Client, f *snapshotFetch, gen uint64) {
	fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	taken := sc.now()
	md, err := sc.fetch(fetchCtx, cl)
	cancel()
	if err == nil {
		f.snap = newSnapshot(md, taken)
	}
	f.err = err

	sc.mu.Lock()
	if sc.mu.inflight == f {
		sc.mu.inflight = nil
	}
	if err == nil && gen == sc.mu.generation {
		sc.mu.current = f.snap
	}
	sc.mu.Unlock()
	close(f.done)
}

// wait waits for the background fetches under way and starts no more
// (Console.Close, once the client they use is closed).
func (sc *snapshotCache) wait() {
	sc.mu.Lock()
	sc.mu.closed = true
	sc.mu.Unlock()
	sc.refreshing.Wait()
}

// invalidate drops the current snapshot and any fetch under way, so the
// next get asks the cluster again.
func (sc *snapshotCache) invalidate() {
	sc.mu.Lock()
	sc.mu.current, sc.mu.inflight = nil, nil
	sc.mu.generation++
	sc.mu.Unlock()
}
