package broker

// Client quotas (KIP-13/55/124/219/599), enforced on each node for its own
// connections, as in Kafka:
//   - producer_byte_rate counts Produce request bytes, consumer_byte_rate
//     the bytes of consumers' Fetch responses (replica fetches are exempt),
//     request_percentage the time handlers run (100 = one core's worth;
//     long-poll and replication waits excluded; SASL, ApiVersions and the
//     cluster's own requests exempt), controller_mutation_rate the
//     partitions CreateTopics, CreatePartitions and DeleteTopics create or
//     delete per second.
//   - The quota that applies is the most specific entity of (user,
//     client id) with that key (quota.Table.Lookup); connections that match
//     the same entity share its usage.
//   - A request that takes usage over a quota is answered at once with
//     throttle_time_ms and the connection reads nothing more until the
//     throttle time has passed (KIP-219), so a client that ignores it is
//     slowed all the same.
//   - The quotas live in the metadata quorum (cluster.State.ClientQuotas);
//     the node indexes them once per QuotaVersion.

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/quota"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// quotaIndex is the quota table of one QuotaVersion.
type quotaIndex struct {
	version int64
	table   *quota.Table
}

// quotaState is the node's quota table and usage sensors.
type quotaState struct {
	mu      sync.Mutex // serializes rebuilds only
	cur     atomic.Pointer[quotaIndex]
	sensors *quota.Sensors
}

// quotaTable returns the table of the quotas the node holds now.
func (s *Server) quotaTable() *quota.Table {
	st := s.clusterState()
	if cur := s.quotas.cur.Load(); cur != nil && cur.version == st.QuotaVersion {
		return cur.table
	}
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	if cur := s.quotas.cur.Load(); cur != nil && cur.version == st.QuotaVersion {
		return cur.table
	}
	qs := make([]quota.Quota, 0, len(st.ClientQuotas))
	for _, q := range st.ClientQuotas {
		qs = append(qs, quota.Quota{Entity: quotaEntity(q.Entity), Values: q.Values})
	}
	idx := &quotaIndex{version: st.QuotaVersion, table: quota.NewTable(qs)}
	s.quotas.cur.Store(idx)
	return idx.table
}

func quotaPart(p *string) quota.Part {
	switch {
	case p == nil:
		return quota.Part{}
	case *p == "":
		return quota.DefaultPart
	default:
		return quota.Named(*p)
	}
}

func quotaEntity(e cluster.QuotaEntity) quota.Entity {
	return quota.Entity{User: quotaPart(e.User), Client: quotaPart(e.ClientID)}
}

// quotaUser is the user part of a connection's quota identity: its
// principal's name (ANONYMOUS without authentication).
func (c *clientConn) quotaUser() string {
	if _, name, ok := strings.Cut(c.principal, ":"); ok {
		return name
	}
	return c.principal
}

// requestQuotaExempt are the APIs request_percentage does not count:
// those a client needs to connect and authenticate, and the cluster's
// own.
func requestQuotaExempt(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate, kmsg.WriteTxnMarkers:
		return true
	}
	return false
}

// quotaThrottle records the request's usage against the quotas that apply
// and returns how long the connection must be throttled (the longest of
// them and any the handler set).
func (c *clientConn) quotaThrottle(rc *requestContext, req kmsg.Request, frameLen int, resp kmsg.Response, took time.Duration) time.Duration {
	throttle := rc.throttle
	tbl := c.s.quotaTable()
	if tbl.Empty() {
		return throttle
	}
	now := time.Now()
	user, client := c.quotaUser(), rc.header.clientID
	record := func(key string, v float64) {
		m, ok := tbl.Lookup(key, user, client)
		if !ok || v <= 0 {
			return
		}
		if t := c.s.quotas.sensors.Record(m, v, now); t > 0 {
			c.s.metrics.quotaThrottle.WithLabelValues(key, m.Key.User, m.Key.ClientID).Add(t.Seconds())
			throttle = max(throttle, t)
		}
	}
	key := rc.header.apiKey
	replicaFetch := false
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		record(quota.ProducerByteRate, float64(frameLen))
	case *kmsg.FetchRequest:
		if fetchReplicaID(r) >= 0 {
			replicaFetch = true
		} else if fr, ok := resp.(*fetchReply); ok {
			record(quota.ConsumerByteRate, float64(fr.size()))
		}
	}
	if !replicaFetch && !requestQuotaExempt(key) {
		busy := took - rc.waited
		record(quota.RequestPercentage, busy.Seconds()*100)
	}
	return throttle
}

// mutationQuotaExceeded reports whether the connection's
// controller_mutation_rate is used up (KIP-599): a strict request (one
// whose version knows THROTTLING_QUOTA_EXCEEDED) is then refused and told
// how long to wait. A request under the quota is accepted whole, even if
// it takes the rate over, as in Kafka.
func (rc *requestContext) mutationQuotaExceeded() bool {
	tbl := rc.s.quotaTable()
	if tbl.Empty() || rc.conn == nil {
		return false
	}
	m, ok := tbl.Lookup(quota.ControllerMutationRate, rc.conn.quotaUser(), rc.header.clientID)
	if !ok {
		return false
	}
	if t := rc.s.quotas.sensors.Record(m, 0, time.Now()); t > 0 {
		rc.throttle = max(rc.throttle, t)
		return true
	}
	return false
}

// recordMutations counts n partition mutations against the connection's
// controller_mutation_rate.
func (rc *requestContext) recordMutations(n int) {
	tbl := rc.s.quotaTable()
	if tbl.Empty() || rc.conn == nil || n <= 0 {
		return
	}
	m, ok := tbl.Lookup(quota.ControllerMutationRate, rc.conn.quotaUser(), rc.header.clientID)
	if !ok {
		return
	}
	if t := rc.s.quotas.sensors.Record(m, float64(n), time.Now()); t > 0 {
		rc.s.metrics.quotaThrottle.WithLabelValues(quota.ControllerMutationRate, m.Key.User, m.Key.ClientID).Add(t.Seconds())
		rc.throttle = max(rc.throttle, t)
	}
}

// setThrottle puts a throttle time in a response that has the field.
func setThrottle(resp kmsg.Response, d time.Duration) {
	if d <= 0 {
		return
	}
	ms := int32(min(d.Milliseconds()+1, 1<<31-1))
	if fr, ok := resp.(*fetchReply); ok {
		fr.setThrottle(ms)
		return
	}
	if r, ok := resp.(kmsg.SetThrottleResponse); ok {
		if cur, _ := r.(kmsg.ThrottleResponse).Throttle(); cur < ms {
			r.SetThrottle(ms)
		}
	}
}

// mute keeps the connection from reading its next request for d (the
// server's shutdown ends it early).
func (c *clientConn) mute(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.s.ctx.Done():
	}
}
