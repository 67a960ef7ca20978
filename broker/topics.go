package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// topicState is a topic with its open partitions, as reconcile last left
// it.
type topicState struct {
	// name and id never change; meta (configs, partition count), config
	// and partitions are replaced by reconcile under topicManager.mu.
	name       string
	id         metadata.TopicID
	meta       metadata.Topic
	config     effectiveTopicConfig
	partitions []*partition
}

// topicManager owns the topics this node knows and the partition logs it
// hosts. Admin operations (create, delete, grow, configs) validate against
// the applied metadata state, propose a record through s.meta and wait for
// followMetadata to apply it here; only reconcile (cluster.go) opens,
// closes or removes partitions. Concurrent admin operations need no lock
// between them: the state machine rejects what the applied state no longer
// allows (a second topic of one name: TOPIC_ALREADY_EXISTS).
type topicManager struct {
	s *Server
	// mu guards byName, byID, openFailed, recovering, and each topicState's
	// meta, config and partitions. It is held only to read or swap them:
	// never across a proposal, a wait for the applied index, or disk I/O.
	mu     sync.RWMutex
	byName map[string]*topicState
	byID   map[metadata.TopicID]*topicState
	// openFailed holds, per topic, why reconcile could not open one of the
	// partitions hosted here (the creating handler undoes the creation).
	openFailed map[metadata.TopicID]error
	// recovering holds the log start offsets of the partitions of topics
	// being recovered from the bucket (recoverFromBucket), for reconcile
	// to create their logs at.
	recovering map[metadata.TopicID]map[int32]int64
	// reconciled is the state the last reconcile pass brought the open
	// partitions in line with (changedTopics). Only reconcile, which runs
	// on one goroutine at a time, reads and writes it.
	reconciled cluster.State

	// deleted remembers, for recreateGuardWindow, when this node applied
	// the deletion of each recently deleted topic: Metadata does not
	// auto-create those names (recreateRefused).
	deleted struct {
		sync.Mutex
		at  map[string]time.Time
		now func() time.Time // time.Now; tests move it
	}
}

// recreateGuardWindow is how long after this node applied a topic's
// deletion a Metadata request does not auto-create a topic of that name.
// It covers the refreshes that follow a deletion at once — the deleting
// client's own (sarama's RefreshMetadata, an admin tool's describe),
// producers and consumers of the topic reacting to
// UNKNOWN_TOPIC_OR_PARTITION within their retry backoff — which would
// otherwise bring the topic straight back. It is short so that an
// application still using the topic a few seconds later gets it
// auto-created again, as in Kafka. CreateTopics is never refused.
const recreateGuardWindow = 5 * time.Second

// openTopicManager opens the partitions this node hosts in the applied
// state: the first reconcile pass, before followMetadata starts (the
// coordinators, created next, adopt what it opened).
func openTopicManager(s *Server) (*topicManager, error) {
	m := &topicManager{
		s: s, byName: map[string]*topicState{}, byID: map[metadata.TopicID]*topicState{},
		openFailed: map[metadata.TopicID]error{}, recovering: map[metadata.TopicID]map[int32]int64{},
	}
	m.deleted.at = map[string]time.Time{}
	m.deleted.now = time.Now
	if err := m.removeOrphanDirs(); err != nil {
		return nil, err
	}
	failed := m.reconcileApplied()
	for name, err := range failed {
		m.close()
		return nil, fmt.Errorf("open topic %s: %w", name, err)
	}
	s.tiered.loadManifests(m.allPartitions())
	return m, nil
}

// allPartitions lists every open partition.
func (m *topicManager) allPartitions() []*partition {
	var out []*partition
	m.forEachPartition(func(p *partition) { out = append(out, p) })
	return out
}

var partitionDirPattern = regexp.MustCompile(`^(.+)-([0-9]+)$`)

// removeOrphanDirs deletes partition directories of topics that no longer
// exist (a delete interrupted by a crash) and directories marked -delete.
// A <topic>-<partition>-future directory is a move between log dirs
// that a restart interrupted (AlterReplicaLogDirs): the copy is
// discarded and the partition stays where it was; the client that asked
// for the move sees the replica in its old directory and may ask again.
func (m *topicManager) removeOrphanDirs() error {
	hosted := m.s.hostedDirs(m.s.clusterState())
	for _, d := range m.s.logDirs.dirs {
		entries, err := os.ReadDir(d.path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), "__metadata") || e.Name() == "objects" {
				continue
			}
			name := e.Name()
			orphan := strings.HasSuffix(name, "-delete") || strings.HasSuffix(name, futureDirSuffix)
			if !orphan {
				if partitionDirPattern.FindStringSubmatch(name) == nil {
					continue
				}
				orphan = !hosted[name]
			}
			if orphan {
				if err := m.s.removeStrayDir(d.path, name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (m *topicManager) count() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.byName)
}

func (m *topicManager) get(name string) *topicState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byName[name]
}

func (m *topicManager) getByID(id metadata.TopicID) *topicState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byID[id]
}

// partition returns the partition or nil.
func (m *topicManager) partition(topic string, index int32) *partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.byName[topic]
	if t == nil || index < 0 || int(index) >= len(t.partitions) {
		return nil
	}
	return t.partitions[index]
}

// exists reports whether the partition exists in the cluster (wherever it
// is hosted).
func (m *topicManager) exists(topic string, index int32) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.byName[topic]
	return t != nil && index >= 0 && int(index) < len(t.partitions)
}

// leaderPartition returns the partition when this node leads it, else the
// error code to answer: UNKNOWN_TOPIC_OR_PARTITION when it does not exist,
// NOT_LEADER_OR_FOLLOWER when another node (or none) leads it.
func (m *topicManager) leaderPartition(topic string, index int32) (*partition, int16) {
	return m.servingPartition(topic, index, false)
}

// servingPartition is leaderPartition that, with followers, also returns
// a partition this node follows (a consumer's fetch from a follower,
// KIP-392).
func (m *topicManager) servingPartition(topic string, index int32, followers bool) (*partition, int16) {
	m.mu.RLock()
	t := m.byName[topic]
	var p *partition
	exists := t != nil && index >= 0 && int(index) < len(t.partitions)
	if exists {
		p = t.partitions[index]
	}
	m.mu.RUnlock()
	switch {
	case !exists:
		return nil, kerr.UnknownTopicOrPartition.Code
	case p != nil && m.s.partitionOffline(p):
		return nil, kerr.KafkaStorageError.Code
	case p == nil || (!p.IsLeader() && !followers):
		return nil, kerr.NotLeaderForPartition.Code
	}
	return p, 0
}

// all returns every topic sorted by name.
func (m *topicManager) all() []*topicState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*topicState, 0, len(m.byName))
	for _, t := range m.byName {
		out = append(out, t)
	}
	sortTopics(out)
	return out
}

// snapshot returns a topic's partitions and config under the read lock.
func (m *topicManager) snapshot(t *topicState) ([]*partition, effectiveTopicConfig, metadata.Topic) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]*partition(nil), t.partitions...), t.config, t.meta
}

// topicConfig returns a topic's effective config under the read lock.
func (m *topicManager) topicConfig(t *topicState) effectiveTopicConfig {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return t.config
}

var legalTopicName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// validateTopicName applies Kafka's rules.
func validateTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	case len(name) > 249:
		return fmt.Errorf("topic name is %d characters long; the maximum is 249", len(name))
	case !legalTopicName.MatchString(name):
		return fmt.Errorf("topic name %q contains characters other than ASCII alphanumerics, '.', '_' and '-'", name)
	}
	return nil
}

// topicError is a Kafka error code with a message for the response.
type topicError struct {
	code    int16
	message string
}

func (e *topicError) Error() string { return e.message }

func newTopicError(err *kerr.Error, format string, args ...any) *topicError {
	return &topicError{code: err.Code, message: fmt.Sprintf(format, args...)}
}

// create commits a new topic through the metadata quorum and returns it
// once this node has opened the partitions it hosts.
func (m *topicManager) create(name string, partitions int32, replicationFactor int16, configs map[string]string, validateOnly bool) (*topicState, *topicError) {
	return m.createAssigned(name, partitions, replicationFactor, configs, nil, validateOnly)
}

// createAssigned is create with an optional manual replica assignment (one
// replica list per partition, in partition order, already checked by
// replicaAssignment).
func (m *topicManager) createAssigned(name string, partitions int32, replicationFactor int16, configs map[string]string, assignments [][]int32, validateOnly bool) (*topicState, *topicError) {
	return m.createChecked(name, partitions, replicationFactor, configs, assignments, validateOnly, nil)
}

// createChecked is createAssigned with a last check: refuse, when set, is
// asked once everything else has passed, and a non-nil answer stops the
// creation.
//
// The checks read the applied metadata state; no lock is held from them to
// the commit: should another creation of the name commit first, the state
// machine rejects this one (TOPIC_ALREADY_EXISTS). The call returns once
// this node has opened what it hosts of the new topic. A CreateTopics
// request creates all its topics with one createBatch.
func (m *topicManager) createChecked(name string, partitions int32, replicationFactor int16, configs map[string]string, assignments [][]int32, validateOnly bool, refuse func() *topicError) (*topicState, *topicError) {
	b := m.newCreateBatch(proposeTimeout)
	if terr := b.add(name, partitions, replicationFactor, configs, assignments, validateOnly, refuse); terr != nil || validateOnly {
		return nil, terr
	}
	res := b.commit()[0]
	return res.topic, res.err
}

// proposeTimeout bounds one metadata change proposed from here, with the
// wait for this node to apply it.
const proposeTimeout = 10 * time.Second

// commitCreate proposes a validated topic and waits until this node has
// opened the partitions it hosts; a partition listed in startOffsets
// starts its (empty) local log there (recovery from the bucket). A topic
// this node cannot open is deleted again (KAFKA_STORAGE_ERROR).
func (m *topicManager) commitCreate(name string, id metadata.TopicID, placement [][]int32, configs map[string]string, startOffsets map[int32]int64) (*topicState, *topicError) {
	b := m.newCreateBatch(proposeTimeout)
	b.queue(topicCreation{name: name, id: id, placement: placement, configs: configs, startOffsets: startOffsets})
	res := b.commit()[0]
	return res.topic, res.err
}

// alreadyExists answers TOPIC_ALREADY_EXISTS for a name the applied state
// has, once this node has opened that topic (or it is gone again), so the
// caller finds it with get — the coordinators' ensureTopic relies on it.
// The wait is bounded and lock-free.
func (m *topicManager) alreadyExists(name string) *topicError {
	ctx, cancel := context.WithTimeout(m.s.ctx, proposeTimeout)
	defer cancel()
	_ = m.s.meta.waitReconciled(ctx, func() bool {
		ct, ok := m.s.clusterState().Topic(name)
		t := m.get(name)
		return !ok || (t != nil && t.id == metadata.TopicID(ct.ID))
	})
	return newTopicError(kerr.TopicAlreadyExists, "topic %q already exists", name)
}

// openFailure is why reconcile could not open a hosted partition of the
// topic, nil if it opened them all.
func (m *topicManager) openFailure(id metadata.TopicID) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.openFailed[id]
}

// recoveryStarts is the start offsets of a topic being recovered from the
// bucket, nil for any other topic (reconcile).
func (m *topicManager) recoveryStarts(id metadata.TopicID) map[int32]int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.recovering[id]
}

// placeReplicas places n new partitions with rf replicas each (first: the
// preferred leader) evenly over the eligible brokers and racks
// (cluster.PlanAssignment). With one replica and no eligible broker (a node
// migrating its old data directory before it registers) they go to self.
func placeReplicas(st cluster.State, self int32, n, rf int) ([][]int32, error) {
	return placeWith(cluster.NewAssigner(st), self, n, rf)
}

// placeWith is placeReplicas planned with a (which counts the placement).
func placeWith(a *cluster.Assigner, self int32, n, rf int) ([][]int32, error) {
	rf = max(rf, 1)
	plan, err := a.Plan(n, rf)
	if err != nil && rf > 1 {
		return nil, fmt.Errorf("not enough live brokers for replication factor %d: %w", rf, err)
	}
	out := make([][]int32, n)
	for i := range out {
		if err != nil {
			out[i] = []int32{self}
		} else {
			out[i] = plan[i].Replicas
		}
	}
	return out, nil
}

// quorumError maps a failed proposal to the answer: REQUEST_TIMED_OUT when
// the quorum did not answer in time (the change may still commit), else
// UNKNOWN_SERVER_ERROR saying what failed.
func quorumError(err error, what string) *topicError {
	var notLeader *metadata.NotLeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &notLeader),
		errors.Is(err, metadata.ErrNoController), errors.Is(err, metadata.ErrControllerLost):
		return newTopicError(kerr.RequestTimedOut, "the metadata quorum did not apply the change in time; it may still take effect")
	default:
		return newTopicError(kerr.UnknownServerError, "%s: %v", what, err)
	}
}

// collidingTopic returns a topic of st whose name differs from name only
// by '.' versus '_', which Kafka refuses because their metric names would
// be the same; "" if there is none.
func collidingTopic(st cluster.State, name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	unify := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	want := unify(name)
	for other := range st.Topics {
		if other != name && unify(other) == want {
			return other
		}
	}
	return ""
}

// autoCreate creates a topic for a Metadata request that named it: with
// broker defaults, or for an internal topic with its coordinator's
// settings. It reports nil once the topic exists (created by this call or
// a moment ago by another), else why there is none: auto-creation is off,
// the name's deletion was applied here less than recreateGuardWindow ago
// (UNKNOWN_TOPIC_OR_PARTITION, retriable), or the creation failed.
func (m *topicManager) autoCreate(name string) *topicError {
	if m.get(name) != nil {
		return nil
	}
	if !m.s.cfg.AutoCreateTopics {
		return newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", name)
	}
	if isInternalTopic(name) {
		// Created by its owner with its own settings (group_coordinator.go,
		// txn_coordinator.go); never deleted, so never guarded.
		switch {
		case name == consumerOffsetsTopic && m.s.groups != nil:
			m.s.groups.ensureTopic()
		case name == transactionStateTopic && m.s.txns != nil:
			m.s.txns.ensureTopic()
		}
		if m.get(name) == nil {
			return newTopicError(kerr.LeaderNotAvailable, "internal topic %q is not available yet", name)
		}
		return nil
	}
	_, terr := m.createChecked(name, -1, -1, nil, nil, false, func() *topicError {
		if m.get(name) != nil {
			// Not in the applied state, still open here: its deletion is
			// applied and this node is removing it.
			return newTopicError(kerr.UnknownTopicOrPartition, "topic %q is being deleted", name)
		}
		return m.recreateRefused(name)
	})
	if terr != nil && terr.code == kerr.TopicAlreadyExists.Code {
		if m.get(name) != nil {
			return nil
		}
		return newTopicError(kerr.LeaderNotAvailable, "topic %q is being created", name)
	}
	return terr
}

// noteDeleted records that this node applied the deletion of a topic
// named name now, and forgets deletions older than recreateGuardWindow.
// reconcile calls it before the name leaves byName, so a Metadata
// request that no longer finds the topic finds the deletion.
func (m *topicManager) noteDeleted(name string) {
	m.deleted.Lock()
	defer m.deleted.Unlock()
	now := m.deleted.now()
	for n, at := range m.deleted.at {
		if now.Sub(at) >= recreateGuardWindow {
			delete(m.deleted.at, n)
		}
	}
	m.deleted.at[name] = now
}

// recreateRefused reports UNKNOWN_TOPIC_OR_PARTITION when this node
// applied the deletion of a topic named name less than
// recreateGuardWindow ago, else nil.
func (m *topicManager) recreateRefused(name string) *topicError {
	m.deleted.Lock()
	defer m.deleted.Unlock()
	at, ok := m.deleted.at[name]
	if !ok {
		return nil
	}
	ago := m.deleted.now().Sub(at)
	if ago >= recreateGuardWindow {
		delete(m.deleted.at, name)
		return nil
	}
	return newTopicError(kerr.UnknownTopicOrPartition, "topic %q was deleted %v ago; Metadata does not auto-create it again within %v of its deletion (CreateTopics does)", name, ago.Round(time.Millisecond), recreateGuardWindow)
}

// delete removes a topic: from the metadata first (the point of no
// return), then, as each node applies it, its directories, renamed aside
// before removal. It returns once this node has removed its own. A
// DeleteTopics request deletes all its topics with one deleteMany.
func (m *topicManager) delete(name string) *topicError {
	return m.deleteMany([]string{name}, proposeTimeout)[0]
}

// grow adds partitions (CreatePartitions). assignments, when not nil,
// places the new partitions (one replica list each, in partition order,
// first replica the preferred leader); it must list exactly the partitions
// added, each with the topic's replication factor and distinct registered
// brokers. Without it the controller's plan places them. It returns once
// this node has opened the new partitions it hosts. A CreatePartitions
// request grows all its topics with one growBatch.
func (m *topicManager) grow(name string, count int32, assignments [][]int32, validateOnly bool) *topicError {
	b := m.newGrowBatch(proposeTimeout)
	if terr := b.add(name, count, assignments, validateOnly); terr != nil || validateOnly {
		return terr
	}
	return b.commit()[0]
}

// replicaSetProblem checks one partition's replica list: non-empty,
// distinct brokers, each registered. It returns "" or what is wrong.
func replicaSetProblem(st cluster.State, replicas []int32) string {
	if len(replicas) == 0 {
		return "no replicas"
	}
	for i, id := range replicas {
		if slices.Contains(replicas[:i], id) {
			return fmt.Sprintf("broker %d is listed twice", id)
		}
		if _, ok := st.Brokers[id]; !ok {
			return fmt.Sprintf("broker %d is not registered", id)
		}
	}
	return ""
}

// setConfigs replaces a topic's overrides after validation; it returns
// once this node's open logs use them.
func (m *topicManager) setConfigs(name string, configs map[string]string, validateOnly bool) *topicError {
	if err := validateTopicConfigs(configs); err != nil {
		return newTopicError(kerr.InvalidConfig, "%v", err)
	}
	ct, ok := m.s.clusterState().Topic(name)
	if !ok {
		return newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", name)
	}
	if validateOnly || maps.Equal(configs, ct.Configs) {
		return nil
	}
	ctx, cancel := context.WithTimeout(m.s.ctx, proposeTimeout)
	defer cancel()
	index, err := m.s.meta.alterConfigs(ctx, name, configs)
	switch {
	case errors.Is(err, cluster.ErrTopicNotFound):
		return newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", name)
	case err != nil:
		return quorumError(err, "storing topic configs")
	}
	if err := m.s.meta.waitApplied(ctx, index); err != nil {
		return newTopicError(kerr.RequestTimedOut, "the configs are stored but this node does not use them yet: %v", err)
	}
	return nil
}

func (m *topicManager) forEachPartition(fn func(p *partition)) {
	for _, t := range m.all() {
		parts, _, _ := m.snapshot(t)
		for _, p := range parts {
			if p != nil {
				fn(p)
			}
		}
	}
}

// logTaskError logs a housekeeping task's failure on a partition, except
// that the partition was closed under it (deleted or moved away between
// the task's snapshot of the partitions and its turn): nothing is wrong
// then. It reports whether it logged.
func (m *topicManager) logTaskError(what string, p *partition, err error) bool {
	if errors.Is(err, storage.ErrClosed) || m.s.partitionOffline(p) {
		return false
	}
	m.s.storageFailed(p, err)
	m.s.logger.Error(what, "dir", p.Log().Dir(), "err", err)
	return true
}

func (m *topicManager) applyRetention() {
	m.forEachPartition(func(p *partition) {
		if m.s.partitionOffline(p) {
			return
		}
		if n, err := p.ApplyRetention(); err != nil {
			m.logTaskError("retention failed", p, err)
		} else if n > 0 {
			m.s.logger.Info("retention deleted segments", "dir", p.Log().Dir(), "segments", n, "log_start_offset", p.Log().LogStartOffset())
		}
	})
}

// cleanLogs runs one pass of the log cleaner on every compacted partition
// that needs one. It runs in the housekeeping goroutine, so a partition's
// producer-state snapshot is never written by two goroutines at once.
func (m *topicManager) cleanLogs() {
	m.forEachPartition(func(p *partition) {
		if m.s.partitionOffline(p) {
			return
		}
		if m.s.ctx.Err() != nil {
			return
		}
		res, err := p.Clean(time.Now())
		switch {
		case err != nil:
			m.logTaskError("log cleaning failed", p, err)
		case res.Cleaned:
			m.s.logger.Info("log cleaned", "dir", p.Log().Dir(), "reason", res.Reason,
				"offsets", fmt.Sprintf("[%d, %d)", res.FirstOffset, res.EndOffset),
				"bytes_before", res.BytesBefore, "bytes_after", res.BytesAfter,
				"records_removed", res.RecordsRemoved, "tombstones_removed", res.TombstonesRemoved,
				"took", res.Duration.Round(time.Millisecond))
		}
	})
}

func (m *topicManager) flushAndRoll() {
	m.forEachPartition(func(p *partition) {
		if m.s.partitionOffline(p) {
			return
		}
		if err := p.RollAndFlush(); err != nil {
			m.logTaskError("segment roll or flush failed", p, err)
		}
	})
}

func (m *topicManager) checkpoint() {
	m.forEachPartition(func(p *partition) {
		if m.s.partitionOffline(p) {
			return
		}
		if err := p.Checkpoint(); err != nil {
			m.logTaskError("checkpoint failed", p, err)
		}
	})
}

func (m *topicManager) close() error {
	var firstErr error
	m.forEachPartition(func(p *partition) {
		if err := p.Close(); err != nil && firstErr == nil && !m.s.partitionOffline(p) {
			firstErr = err
		}
	})
	return firstErr
}

func sortTopics(ts []*topicState) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
}
