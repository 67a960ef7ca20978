package console

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The cluster page: who is in the cluster and in what state, from three
// Kafka requests asked at once —
//   - DescribeCluster v2 with include_fenced_brokers (KIP-1073): every
//     registered broker, fenced ones marked, with its rack;
//   - DescribeQuorum on __cluster_metadata: the raft leader and epoch, the
//     commit index, each voter's and observer's log end and when the
//     leader last heard from it; voters are the controllers;
//   - Metadata for all topics, shared with the topic list through the
//     snapshot cache (snapshot.go): partition counts by problem state.
//
// A node's status is "fenced" when the controllers fenced it, else
// "unreachable" when the quorum leader has not heard from it for
// quorumSilenceLimit, else "alive".

// quorumSilenceLimit is how long the quorum leader may not hear from a
// voter or observer before the page calls it unreachable (heartbeats and
// raft fetches come every few hundred ms).
const quorumSilenceLimit = 5 * time.Second

type nodeJSON struct {
	NodeID           int32    `json:"nodeId"`
	Host             string   `json:"host"`
	Port             int32    `json:"port"`
	Rack             *string  `json:"rack"`
	Roles            []string `json:"roles"`  // "broker", "controller"
	Status           string   `json:"status"` // alive, fenced, unreachable
	Fenced           bool     `json:"fenced"`
	ActiveController bool     `json:"activeController"` // the raft leader
	LastContactMs    int64    `json:"lastContactMs"`    // since the quorum leader last heard from it; -1 unknown
}

type quorumMemberJSON struct {
	NodeID        int32 `json:"nodeId"`
	LogEndOffset  int64 `json:"logEndOffset"`  // -1 unknown
	Lag           int64 `json:"lag"`           // entries behind the leader's high watermark; -1 unknown
	LastContactMs int64 `json:"lastContactMs"` // -1 unknown
	CaughtUp      bool  `json:"caughtUp"`
}

type quorumJSON struct {
	LeaderID      int32              `json:"leaderId"` // -1: none
	LeaderEpoch   int32              `json:"leaderEpoch"`
	HighWatermark int64              `json:"highWatermark"`
	Voters        []quorumMemberJSON `json:"voters"`
	Observers     []quorumMemberJSON `json:"observers"`
	Error         string             `json:"error,omitempty"` // the quorum could not be described
}

type clusterJSON struct {
	ClusterID                    string     `json:"clusterId"`
	Controller                   int32      `json:"controller"`
	Controllers                  []int32    `json:"controllers"` // the voters
	Node                         int32      `json:"node"`        // the node serving the console
	Nodes                        []nodeJSON `json:"nodes"`
	Quorum                       quorumJSON `json:"quorum"`
	Topics                       int        `json:"topics"`
	Partitions                   int        `json:"partitions"`
	UnderReplicatedPartitions    int        `json:"underReplicatedPartitions"`
	OfflinePartitions            int        `json:"offlinePartitions"`
	NonPreferredLeaderPartitions int        `json:"nonPreferredLeaderPartitions"`
	MetadataAgeMs                int64      `json:"metadataAgeMs"` // age of the partition counts
}

// getCluster: GET /api/v1/cluster.
func (c *Console) getCluster(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var (
		wg       sync.WaitGroup
		snap     *metadataSnapshot
		snapErr  error
		dc       *kmsg.DescribeClusterResponse
		dcErr    error
		dq       *kmsg.DescribeQuorumResponse
		dqErr    error
		received = time.Now()
	)
	wg.Go(func() { snap, snapErr = c.snapshots.get(ctx, cl) })
	wg.Go(func() { dc, dcErr = describeCluster(ctx, cl) })
	wg.Go(func() { dq, dqErr = describeQuorum(ctx, cl) })
	wg.Wait()
	if snapErr != nil {
		c.writeKafkaError(w, "reading cluster metadata", snapErr)
		return
	}
	if dcErr != nil {
		c.writeKafkaError(w, "describing the cluster", dcErr)
		return
	}
	now := time.Now()
	out := clusterJSON{
		ClusterID: dc.ClusterID, Controller: dc.ControllerID, Node: c.cfg.NodeID, Controllers: []int32{},
		Topics: len(snap.topics), Partitions: snap.partitions,
		UnderReplicatedPartitions:    len(snap.byState[stateUnderReplicated]),
		OfflinePartitions:            len(snap.byState[stateOffline]),
		NonPreferredLeaderPartitions: len(snap.byState[stateNonPreferredLeader]),
		MetadataAgeMs:                max(0, received.Sub(snap.taken).Milliseconds()),
	}
	out.Quorum = quorumOf(dq, dqErr, now)
	out.Nodes = nodesOf(dc, dq, out.Quorum, now)
	for _, v := range out.Quorum.Voters {
		out.Controllers = append(out.Controllers, v.NodeID)
	}
	writeJSON(w, http.StatusOK, out)
}

func describeCluster(ctx context.Context, cl *kgo.Client) (*kmsg.DescribeClusterResponse, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.EndpointType = 1 // brokers
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, withMessage(err, derefString(resp.ErrorMessage))
	}
	return resp, nil
}

func describeQuorum(ctx context.Context, cl *kgo.Client) (*kmsg.DescribeQuorumResponse, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, withMessage(err, derefString(resp.ErrorMessage))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("describing the quorum: an answer without the metadata partition")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, withMessage(err, derefString(p.ErrorMessage))
	}
	return resp, nil
}

// quorumOf is the quorum part of the page; when DescribeQuorum failed it
// says why, and the leader is unknown.
func quorumOf(dq *kmsg.DescribeQuorumResponse, err error, now time.Time) quorumJSON {
	out := quorumJSON{LeaderID: -1, LeaderEpoch: -1, HighWatermark: -1, Voters: []quorumMemberJSON{}, Observers: []quorumMemberJSON{}}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	p := dq.Topics[0].Partitions[0]
	out.LeaderID, out.LeaderEpoch, out.HighWatermark = p.LeaderID, p.LeaderEpoch, p.HighWatermark
	member := func(rs kmsg.DescribeQuorumResponseTopicPartitionReplicaState) quorumMemberJSON {
		m := quorumMemberJSON{NodeID: rs.ReplicaID, LogEndOffset: rs.LogEndOffset, Lag: -1, LastContactMs: -1}
		if rs.LogEndOffset >= 0 && p.HighWatermark >= 0 {
			m.Lag = max(0, p.HighWatermark-rs.LogEndOffset)
		}
		if rs.LastFetchTimestamp >= 0 {
			m.LastContactMs = max(0, now.UnixMilli()-rs.LastFetchTimestamp)
		}
		m.CaughtUp = rs.LastCaughtUpTimestamp >= 0 && rs.LastCaughtUpTimestamp >= rs.LastFetchTimestamp
		if rs.ReplicaID == p.LeaderID {
			m.LastContactMs, m.Lag, m.CaughtUp = 0, 0, true // the leader is its own freshest member
		}
		return m
	}
	for _, v := range p.CurrentVoters {
		out.Voters = append(out.Voters, member(v))
	}
	for _, o := range p.Observers {
		out.Observers = append(out.Observers, member(o))
	}
	byID := func(ms []quorumMemberJSON) func(i, j int) bool {
		return func(i, j int) bool { return ms[i].NodeID < ms[j].NodeID }
	}
	sort.Slice(out.Voters, byID(out.Voters))
	sort.Slice(out.Observers, byID(out.Observers))
	return out
}

// nodesOf merges the registered brokers with the quorum's voters (the
// controllers, some of which may be controller-only nodes known by their
// quorum endpoints alone), sorted by node id.
func nodesOf(dc *kmsg.DescribeClusterResponse, dq *kmsg.DescribeQuorumResponse, q quorumJSON, now time.Time) []nodeJSON {
	nodes := map[int32]*nodeJSON{}
	get := func(id int32) *nodeJSON {
		n, ok := nodes[id]
		if !ok {
			n = &nodeJSON{NodeID: id, Roles: []string{}, LastContactMs: -1, Port: -1}
			nodes[id] = n
		}
		return n
	}
	for _, b := range dc.Brokers {
		n := get(b.NodeID)
		n.Host, n.Port, n.Rack, n.Fenced = b.Host, b.Port, b.Rack, b.IsFenced
		n.Roles = append(n.Roles, "broker")
	}
	contact := map[int32]int64{}
	for _, m := range append(append([]quorumMemberJSON{}, q.Voters...), q.Observers...) {
		contact[m.NodeID] = m.LastContactMs
	}
	for _, v := range q.Voters {
		n := get(v.NodeID)
		n.Roles = append(n.Roles, "controller")
		n.ActiveController = v.NodeID == q.LeaderID
	}
	if dq != nil {
		for _, qn := range dq.Nodes { // v2: the voters' endpoints, for controller-only nodes
			if n, ok := nodes[qn.NodeID]; ok && n.Port < 0 && len(qn.Listeners) > 0 {
				n.Host, n.Port = qn.Listeners[0].Host, int32(qn.Listeners[0].Port)
			}
		}
	}
	out := make([]nodeJSON, 0, len(nodes))
	for _, n := range nodes {
		if ms, ok := contact[n.NodeID]; ok {
			n.LastContactMs = ms
		}
		switch {
		case n.Fenced:
			n.Status = "fenced"
		case q.Error == "" && !n.ActiveController && (n.LastContactMs < 0 || n.LastContactMs > quorumSilenceLimit.Milliseconds()) && contactKnown(contact, n.NodeID):
			n.Status = "unreachable"
		default:
			n.Status = "alive"
		}
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// contactKnown: the quorum lists the node, so its silence means something.
func contactKnown(contact map[int32]int64, id int32) bool {
	_, ok := contact[id]
	return ok
}

type problemPartitionJSON struct {
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offlineReplicas"`
}

type problemPageJSON struct {
	State         string                 `json:"state"`
	Partitions    []problemPartitionJSON `json:"partitions"`
	Total         int                    `json:"total"`
	Page          int                    `json:"page"`
	PageSize      int                    `json:"pageSize"`
	MetadataAgeMs int64                  `json:"metadataAgeMs"`
}

// listProblemPartitions: GET /api/v1/cluster/partitions?state=&page=&pageSize=,
// the partitions in one problem state (under-replicated, offline,
// non-preferred-leader), sorted by topic and partition, a page at a time.
func (c *Console) listProblemPartitions(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	state := partitionState(r.URL.Query().Get("state"))
	known := false
	names := make([]string, 0, len(partitionStates))
	for _, s := range partitionStates {
		known = known || s == state
		names = append(names, string(s))
	}
	if !known {
		writeError(w, http.StatusBadRequest, "", "state must be one of %s, not %q", strings.Join(names, ", "), state)
		return
	}
	page, size, ok := pageParams(w, r)
	if !ok {
		return
	}
	received := time.Now()
	snap, err := c.snapshots.get(ctx, cl)
	if err != nil {
		c.writeKafkaError(w, "reading cluster metadata", err)
		return
	}
	refs := snap.byState[state]
	out := problemPageJSON{State: string(state), Partitions: []problemPartitionJSON{}, Total: len(refs), Page: page, PageSize: size,
		MetadataAgeMs: max(0, received.Sub(snap.taken).Milliseconds())}
	from, to := pageBounds(len(refs), page, size)
	for _, ref := range refs[from:to] {
		p, _ := snap.partition(ref)
		out.Partitions = append(out.Partitions, problemPartitionJSON{
			Topic: ref.topic, Partition: ref.partition, Leader: p.Leader,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: nonNil(p.OfflineReplicas),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// pageParams reads page (from 1) and pageSize (1 to maxPageSize); ok is
// false, and the 400 written, when either is out of range.
func pageParams(w http.ResponseWriter, r *http.Request) (page, size int, ok bool) {
	p, ok := intParam(w, r, "page", 1, 1, 1<<31)
	if !ok {
		return 0, 0, false
	}
	s, ok := intParam(w, r, "pageSize", defaultPageSize, 1, maxPageSize)
	if !ok {
		return 0, 0, false
	}
	return int(p), int(s), true
}

// pageBounds is the slice [from, to) of n items that page (from 1) of
// size shows; empty past the end.
func pageBounds(n, page, size int) (from, to int) {
	from = min((page-1)*size, n)
	return from, min(from+size, n)
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
