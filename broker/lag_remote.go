package broker

// The lag API for groups this node does not coordinate. The coordinator's
// shards hold a group's members and committed offsets and its commit
// window; another node asks the cluster over the Kafka protocol, as kadm
// does: ListGroups on every broker, DescribeGroups and OffsetFetch at the
// group's coordinator (FindCoordinator), ListOffsets at the partitions'
// leaders. The requests carry this node's inter-broker identity (the first
// listener's TLS and SASL settings, as replica fetchers use).
//
// What the protocol does not carry is the coordinator's window of commits
// and their timestamps, so such an answer has lag in records (and in
// seconds where this node holds a replica of the partition) but no Burrow
// window: status OK, window empty, complete 0, no last_commit, and
// "coordinator" names the node whose answer has the full evaluation.
// /v1/groups leaves out a group whose coordinator cannot answer at the
// moment (a restarting node) rather than failing the whole list.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/lag"
)

// errGroupNotFound: the cluster does not know the group.
var errGroupNotFound = errors.New("broker: group not found")

// clusterGroups is this node's Kafka client for the lag API's questions to
// the rest of the cluster. The client is made on first use and closed once
// by close.
type clusterGroups struct {
	seed func() string // this node's inter-broker address, known once it listens
	opts []kgo.Opt

	mu struct {
		sync.Mutex
		client *kgo.Client
		closed bool
	}
}

func newClusterGroups(seed func() string, opts []kgo.Opt) *clusterGroups {
	return &clusterGroups{seed: seed, opts: append([]kgo.Opt{
		kgo.ClientID("strata-broker-lag"),
		kgo.DialTimeout(2 * time.Second),
		kgo.RequestRetries(2),
	}, opts...)}
}

func (c *clusterGroups) admin() (*kadm.Client, error) {
	cl, err := c.client()
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// client is the Kafka client itself, for requests kadm does not make.
func (c *clusterGroups) client() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, errors.New("broker: shutting down")
	}
	if c.mu.client == nil {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.seed())}, c.opts...)...)
		if err != nil {
			return nil, err
		}
		c.mu.client = cl
	}
	return c.mu.client, nil
}

func (c *clusterGroups) close() {
	c.mu.Lock()
	cl := c.mu.client
	c.mu.client, c.mu.closed = nil, true
	c.mu.Unlock()
	if cl != nil {
		cl.Close() // waits for requests in flight: not under mu
	}
}

// remoteGroup is what the protocol tells about one group.
type remoteGroup struct {
	name        string
	state       string
	members     int
	coordinator int32
	offsets     []kadm.OffsetResponse // committed, sorted by topic and partition
}

// describeRemote asks the groups' coordinators for their state, members
// and committed offsets. A group the coordinator reports as Dead with no
// offsets is left out; one whose coordinator could not answer is in
// failed.
func describeRemote(ctx context.Context, adm *kadm.Client, names ...string) (found []remoteGroup, failed map[string]error) {
	failed = map[string]error{}
	described, err := adm.DescribeGroups(ctx, names...)
	if err != nil && len(described) == 0 {
		for _, name := range names {
			failed[name] = fmt.Errorf("describing group %q: %w", name, err)
		}
		return nil, failed
	}
	fetched := adm.FetchManyOffsets(ctx, names...)
	var out []remoteGroup
	for _, name := range names {
		d, ok := described[name]
		if !ok || d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			failed[name] = fmt.Errorf("describing group %q: no answer", name)
			if ok {
				failed[name] = fmt.Errorf("describing group %q: %w", name, d.Err)
			}
			continue
		}
		g := remoteGroup{name: name, state: d.State, members: len(d.Members), coordinator: d.Coordinator.NodeID}
		if f, ok := fetched[name]; ok {
			if f.Err != nil && !errors.Is(f.Err, kerr.GroupIDNotFound) {
				failed[name] = fmt.Errorf("fetching offsets of group %q: %w", name, f.Err)
				continue
			}
			f.Fetched.Each(func(o kadm.OffsetResponse) {
				if o.Err == nil && o.At >= 0 {
					g.offsets = append(g.offsets, o)
				}
			})
		}
		if (d.State == "Dead" || d.State == "" || errors.Is(d.Err, kerr.GroupIDNotFound)) && len(g.offsets) == 0 {
			continue
		}
		sort.Slice(g.offsets, func(i, j int) bool {
			a, b := g.offsets[i], g.offsets[j]
			return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
		})
		out = append(out, g)
	}
	return out, failed
}

// endOffsets lists the high watermarks of the groups' partitions at their
// leaders.
func endOffsets(ctx context.Context, adm *kadm.Client, groups []remoteGroup) (kadm.ListedOffsets, error) {
	topics := map[string]bool{}
	for _, g := range groups {
		for _, o := range g.offsets {
			topics[o.Topic] = true
		}
	}
	if len(topics) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil && len(ends) == 0 {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	return ends, nil
}

// remoteGroupLag is GET /v1/groups/{group}/lag answered from the cluster.
func (m *lagMonitor) remoteGroupLag(ctx context.Context, name string) (groupLagJSON, error) {
	adm, err := m.cluster.admin()
	if err != nil {
		return groupLagJSON{}, err
	}
	groups, failed := describeRemote(ctx, adm, name)
	if err := failed[name]; err != nil {
		return groupLagJSON{}, err
	}
	if len(groups) == 0 {
		return groupLagJSON{}, errGroupNotFound
	}
	ends, err := endOffsets(ctx, adm, groups)
	if err != nil {
		return groupLagJSON{}, err
	}
	g := groups[0]
	cfg := m.eval.Config()
	coordinator := g.coordinator
	out := groupLagJSON{
		Group:       g.name,
		State:       g.state,
		Members:     g.members,
		Coordinator: &coordinator,
		Window: windowJSON{
			Commits:       cfg.Window,
			MinDistanceMs: max(cfg.MinDistance, 0).Milliseconds(),
			MinSpanMs:     max(cfg.MinSpan, 0).Milliseconds(),
		},
		Partitions: make([]partitionLagJSON, 0, len(g.offsets)),
	}
	now := m.now()
	for _, o := range g.offsets {
		pj := partitionLagJSON{Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.At, Status: lag.StatusOK, Window: []commitJSON{}}
		if e, ok := ends.Lookup(o.Topic, o.Partition); ok && e.Err == nil {
			logEnd := e.Offset
			records := max(logEnd-o.At, 0)
			pj.LogEndOffset, pj.LagRecords = &logEnd, &records
			out.TotalLag += records
			if seconds, ok := m.localLagSeconds(o.Topic, o.Partition, o.At, logEnd, now); ok {
				pj.LagSeconds = &seconds
			}
		}
		out.Partitions = append(out.Partitions, pj)
	}
	return out, nil
}

// localLagSeconds is the age of the record at offset, read from this
// node's replica of the partition if it has one that far.
func (m *lagMonitor) localLagSeconds(topic string, partition int32, offset, logEnd int64, now time.Time) (float64, bool) {
	if offset >= logEnd {
		return 0, true
	}
	p := m.topics.partition(topic, partition)
	if p == nil {
		return 0, false
	}
	ts, ok := m.recordTimestamp(p, offset, min(logEnd, p.HighWatermark()), now)
	if !ok {
		return 0, false
	}
	s := max(now.Sub(time.UnixMilli(ts)).Seconds(), 0)
	return s, !math.IsNaN(s)
}

// remoteGroups lists, for GET /v1/groups, the groups of the cluster that
// are not in local (the groups this node coordinates).
func (m *lagMonitor) remoteGroups(ctx context.Context, local map[string]bool) ([]groupSummaryJSON, error) {
	adm, err := m.cluster.admin()
	if err != nil {
		return nil, err
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return nil, fmt.Errorf("listing groups: %w", err)
	}
	var names []string
	for _, g := range listed.Sorted() {
		if !local[g.Group] {
			names = append(names, g.Group)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	// A group whose coordinator cannot answer now (a node restarting) is
	// left out of the list rather than failing it.
	groups, failed := describeRemote(ctx, adm, names...)
	for name, err := range failed {
		m.logger.Debug("lag: group left out of /v1/groups", "group", name, "err", err)
	}
	ends, err := endOffsets(ctx, adm, groups)
	if err != nil {
		return nil, err
	}
	out := make([]groupSummaryJSON, 0, len(groups))
	for _, g := range groups {
		coordinator := g.coordinator
		s := groupSummaryJSON{Group: g.name, State: g.state, Members: g.members, Partitions: len(g.offsets), Coordinator: &coordinator}
		for _, o := range g.offsets {
			if e, ok := ends.Lookup(o.Topic, o.Partition); ok && e.Err == nil {
				s.TotalLag += max(e.Offset-o.At, 0)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// interBrokerSeed is the address this node's own inter-broker connections
// start from: the advertised one, or the bound one when the advertised
// port is 0 (a listener on a port chosen at start).
func (s *Server) interBrokerSeed() string {
	l := s.listeners[0]
	if _, port, err := net.SplitHostPort(l.spec.advertised); err == nil && port != "0" {
		return l.spec.advertised
	}
	return l.ln.Addr().String()
}
