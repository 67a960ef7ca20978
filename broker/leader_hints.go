package broker

// KIP-951 leader hints. A Produce (v10+) or Fetch (v12+) partition that
// answers NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH carries the leader
// and leader epoch this node has applied (CurrentLeader), and the response
// lists that leader's endpoint on the request's listener (NodeEndpoints:
// Produce v10+, Fetch v16+), so a client moves the partition at once
// instead of refreshing its metadata first. As in Kafka, a hint names only
// a live (registered, unfenced) leader with an endpoint on the listener;
// otherwise CurrentLeader stays -1/-1 and the client refreshes.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// leaderHint is one partition's CurrentLeader; id -1 means none.
type leaderHint struct {
	id, epoch int32
}

var noLeaderHint = leaderHint{id: -1, epoch: -1}

// wantsLeaderHint reports whether a partition error carries a hint.
func wantsLeaderHint(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}

// leaderHints collects the hints of one response and the endpoints of the
// leaders they name.
type leaderHints struct {
	s         *Server
	st        cluster.State
	listener  *kafkaListener
	loaded    bool
	endpoints []brokerAddr
}

func (s *Server) newLeaderHints(listener *kafkaListener) *leaderHints {
	return &leaderHints{s: s, listener: listener}
}

// hint returns the applied leader of topic/partition if it is live and
// reachable on the listener, recording its endpoint.
func (h *leaderHints) hint(topic string, partition int32) leaderHint {
	if !h.loaded {
		h.st, h.loaded = h.s.clusterState(), true
	}
	t, ok := h.st.Topic(topic)
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return noLeaderHint
	}
	p := t.Partitions[partition]
	if p.Leader == cluster.NoLeader || !h.st.Live(p.Leader) {
		return noLeaderHint
	}
	b := h.st.Brokers[p.Leader]
	addr, ok := b.Endpoint(h.listener.spec.name)
	if !ok {
		return noLeaderHint
	}
	known := false
	for _, e := range h.endpoints {
		if e.id == p.Leader {
			known = true
			break
		}
	}
	if !known {
		h.endpoints = append(h.endpoints, h.s.brokerAddrOf(p.Leader, addr, b.Rack))
	}
	return leaderHint{id: p.Leader, epoch: p.LeaderEpoch}
}

// addProduceLeaderHints fills CurrentLeader and Brokers (NodeEndpoints)
// of a v10+ Produce response; names[i] is the topic of resp.Topics[i].
func (rc *requestContext) addProduceLeaderHints(version int16, resp *kmsg.ProduceResponse, names []string) {
	if version < 10 {
		return
	}
	var hints *leaderHints
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			sp := &resp.Topics[ti].Partitions[pi]
			if !wantsLeaderHint(sp.ErrorCode) || names[ti] == "" {
				continue
			}
			if hints == nil {
				hints = rc.s.newLeaderHints(rc.conn.listener)
			}
			h := hints.hint(names[ti], sp.Partition)
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = h.id, h.epoch
		}
	}
	if hints == nil {
		return
	}
	for _, e := range hints.endpoints {
		b := kmsg.NewProduceResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = e.id, e.host, e.port, e.rack
		resp.Brokers = append(resp.Brokers, b)
	}
}

// fetchLeaderHints fills the CurrentLeader of the partitions that answer
// a leader error (v12+) and returns the endpoints to list (v16+).
func (rc *requestContext) fetchLeaderHints(version int16, topics []fetchTopicOut) []brokerAddr {
	if version < 12 {
		return nil
	}
	var hints *leaderHints
	for ti := range topics {
		for pi := range topics[ti].partitions {
			p := &topics[ti].partitions[pi]
			if !wantsLeaderHint(p.errorCode) {
				continue
			}
			if hints == nil {
				hints = rc.s.newLeaderHints(rc.conn.listener)
			}
			if h := hints.hint(topics[ti].name, p.partition); h.id >= 0 {
				p.currentLeader = &h // -1/-1 is the tag's default: not encoded
			}
		}
	}
	if hints == nil || version < 16 {
		return nil
	}
	return hints.endpoints
}
