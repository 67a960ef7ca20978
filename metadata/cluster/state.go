package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// NoLeader is the Leader of a partition that has none.
const NoLeader int32 = -1

// UncleanLeaderElectionConfig is the topic config that allows electing a
// replica outside the ISR (data loss) when no ISR member is live.
const UncleanLeaderElectionConfig = "unclean.leader.election.enable"

// State is the metadata of the cluster at one applied log position. It is a
// value: Apply returns a new State and never modifies its input, and
// readers must not modify one either.
type State struct {
	ClusterID      string             `json:"cluster_id,omitempty"`
	NextProducerID int64              `json:"next_producer_id"`
	Brokers        map[int32]Broker   `json:"brokers,omitempty"`
	Topics         map[string]Topic   `json:"topics,omitempty"`
	TopicIDs       map[TopicID]string `json:"-"` // index of Topics by ID, rebuilt on decode
	// Features are the finalized feature levels UpdateFeatures records set
	// (level 0 features absent); until the first one applies
	// (FeaturesEpoch 0) the levels are DefaultFeatureLevels. Read them
	// with FinalizedFeatures.
	Features map[string]int16 `json:"features,omitempty"`
	// FeaturesEpoch counts the UpdateFeatures records that changed a
	// level: monotonic, the same on every replica, and what ApiVersions
	// reports as FinalizedFeaturesEpoch.
	FeaturesEpoch int64 `json:"features_epoch,omitempty"`

	// Security (security.go): SCRAM credentials by user and mechanism,
	// ACLs in a canonical order with a version bumped by every change
	// (brokers rebuild their authorizer when it moves), client quotas by
	// entity key with a version likewise.
	Scram        map[string]map[string]ScramCredential `json:"scram,omitempty"`
	ACLs         []ACLBinding                          `json:"acls,omitempty"`
	ACLVersion   int64                                 `json:"acl_version,omitempty"`
	ClientQuotas map[string]ClientQuota                `json:"client_quotas,omitempty"`
	QuotaVersion int64                                 `json:"quota_version,omitempty"`

	// ClientMetrics are the KIP-714 subscriptions (client_metrics.go): configs
	// by name, with a version bumped by every change.
	ClientMetrics        map[string]map[string]string `json:"client_metrics,omitempty"`
	ClientMetricsVersion int64                        `json:"client_metrics_version,omitempty"`

	// Dynamic configs of brokers and groups (configs.go) by
	// ConfigResourceKey, with a version bumped by every change.
	ResourceConfigs map[string]map[string]string `json:"resource_configs,omitempty"`
	ConfigVersion   int64                        `json:"config_version,omitempty"`

	// Controllers is the metadata quorum's membership once it has changed
	// at run time (AddRaftVoter, RemoveRaftVoter; quorum.go), in id order;
	// empty while the quorum is the static controller.quorum.voters.
	Controllers []Controller `json:"controllers,omitempty"`
}

// Broker is one registered broker.
type Broker struct {
	NodeID        int32  `json:"node_id"`
	IncarnationID string `json:"incarnation_id"`
	Addr          string `json:"addr"` // the inter-broker listener
	Rack          string `json:"rack,omitempty"`
	// Endpoints are its advertised listeners; empty means one PLAINTEXT
	// listener at Addr.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	Fenced    bool       `json:"fenced,omitempty"`
	// ShuttingDown is set by ControlledShutdown: the broker is leaving and
	// takes no new leaderships or ISR places. A registration with a new
	// incarnation clears it.
	ShuttingDown    bool  `json:"shutting_down,omitempty"`
	LastHeartbeatMs int64 `json:"last_heartbeat_ms"`
	// UnreachableMs is the latest refused connection to this incarnation
	// (BrokerUnreachable) newer than its heartbeat when reported; 0: none.
	// It counts while nothing was heard from the broker since.
	UnreachableMs int64 `json:"unreachable_ms,omitempty"`
	// RefusalFenced is set once this incarnation was fenced while a
	// refusal counted: later refusals are ignored (no fence-unfence loop
	// for a process that refuses connections but lives), and only a
	// session expiry fences it again.
	RefusalFenced bool `json:"refusal_fenced,omitempty"`
}

// Refused reports whether a refused connection counts against b: it is
// newer than the last sign of life (heartbeat, or what the caller merged
// into LastHeartbeatMs) and b was not refusal-fenced before.
func (b Broker) Refused() bool {
	return b.UnreachableMs > b.LastHeartbeatMs && !b.RefusalFenced
}

// Endpoint returns the broker's advertised address on the named listener.
// A broker registered without endpoints serves every listener name at
// Addr (one PLAINTEXT listener).
func (b Broker) Endpoint(listener string) (string, bool) {
	if len(b.Endpoints) == 0 {
		return b.Addr, true
	}
	for _, e := range b.Endpoints {
		if e.Name == listener {
			return e.Addr, true
		}
	}
	return "", false
}

// Topic is one topic.
type Topic struct {
	Name       string            `json:"name"`
	ID         TopicID           `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// Partition is one partition's replication state.
type Partition struct {
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
	Leader   int32   `json:"leader"`
	// LeaderEpoch bumps whenever the leader changes.
	LeaderEpoch int32 `json:"leader_epoch"`
	// PartitionEpoch bumps on every change of the partition.
	PartitionEpoch int32 `json:"partition_epoch"`
	// AddingReplicas and RemovingReplicas describe a reassignment in
	// progress (KIP-455): Replicas is then the target followed by the
	// original replicas leaving it; AddingReplicas are the target replicas
	// that were not original replicas, RemovingReplicas the original
	// replicas not in the target. Both are empty when none is in progress.
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
	// OfflineReplicas are the replicas whose log directory failed on
	// their node (OfflineReplicas records, offline.go), in id order: they
	// lead nothing and take no new ISR place until their node registers
	// a new incarnation.
	OfflineReplicas []int32 `json:"offline_replicas,omitempty"`
}

// Reassigning reports whether a reassignment of p is in progress.
func (p Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// TargetReplicas is the replica list p has once its reassignment (if any)
// completes: Replicas without RemovingReplicas.
func (p Partition) TargetReplicas() []int32 {
	out := make([]int32, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.RemovingReplicas, r) {
			out = append(out, r)
		}
	}
	return out
}

// Live reports whether node is a registered, unfenced broker.
func (s State) Live(node int32) bool {
	b, ok := s.Brokers[node]
	return ok && !b.Fenced
}

// Eligible reports whether node may take a leadership or a new ISR place:
// it is registered, unfenced and not shutting down.
func (s State) Eligible(node int32) bool {
	b, ok := s.Brokers[node]
	return ok && !b.Fenced && !b.ShuttingDown
}

// LeadersOn returns the number of partitions node leads. A broker in
// controlled shutdown waits for it to reach 0 (or for its shutdown
// timeout: the last ISR member of a partition keeps its leadership).
func (s State) LeadersOn(node int32) int {
	n := 0
	for _, t := range s.Topics {
		for _, p := range t.Partitions {
			if p.Leader == node {
				n++
			}
		}
	}
	return n
}

// Topic returns the named topic.
func (s State) Topic(name string) (Topic, bool) {
	t, ok := s.Topics[name]
	return t, ok
}

// TopicByID returns the topic with the given ID.
func (s State) TopicByID(id TopicID) (Topic, bool) {
	name, ok := s.TopicIDs[id]
	if !ok {
		return Topic{}, false
	}
	return s.Topic(name)
}

// TopicNames returns the topic names in order.
func (s State) TopicNames() []string {
	names := make([]string, 0, len(s.Topics))
	for n := range s.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// BrokerIDs returns the registered node ids in order.
func (s State) BrokerIDs() []int32 {
	ids := make([]int32, 0, len(s.Brokers))
	for id := range s.Brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Encode serialises the state for a snapshot.
func (s State) Encode() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode state: %w", err)
	}
	return b, nil
}

// DecodeState reads a state written by Encode.
func DecodeState(b []byte) (State, error) {
	var s State
	if len(b) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("%w: state: %v", ErrMalformed, err)
	}
	if s.FeaturesEpoch < 0 || (s.FeaturesEpoch > 0 && s.Features[MetadataVersionFeature] == 0) {
		return State{}, fmt.Errorf("%w: state: features epoch %d with features %v", ErrMalformed, s.FeaturesEpoch, s.Features)
	}
	s.TopicIDs = make(map[TopicID]string, len(s.Topics))
	for name, t := range s.Topics {
		if t.Name != name {
			return State{}, fmt.Errorf("%w: state: topic %q stored under %q", ErrMalformed, t.Name, name)
		}
		s.TopicIDs[t.ID] = name
	}
	for id, b := range s.Brokers {
		if b.NodeID != id {
			return State{}, fmt.Errorf("%w: state: broker %d stored under %d", ErrMalformed, b.NodeID, id)
		}
	}
	if err := validateControllersState(s); err != nil {
		return State{}, err
	}
	return s, nil
}
