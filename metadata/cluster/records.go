package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RecordType is the first byte of an encoded record.
type RecordType byte

// The record types. Values are part of the log format: never renumber.
const (
	TypeInitCluster         RecordType = 1
	TypeRegisterBroker      RecordType = 2
	TypeBrokerHeartbeat     RecordType = 3
	TypeFenceBroker         RecordType = 4
	TypeUnfenceBroker       RecordType = 5
	TypeCreateTopic         RecordType = 6
	TypeDeleteTopic         RecordType = 7
	TypeCreatePartitions    RecordType = 8
	TypeAlterConfigs        RecordType = 9
	TypeAlterPartition      RecordType = 10
	TypeElectLeader         RecordType = 11
	TypeAllocateProducerIDs RecordType = 12
	TypeControlledShutdown  RecordType = 13
	TypeReassignPartition   RecordType = 14
	TypeUpdateFeatures      RecordType = 15
	// Security (security.go).
	TypeAlterScramCredentials RecordType = 16
	TypeCreateACLs            RecordType = 17
	TypeDeleteACLs            RecordType = 18
	TypeAlterClientQuotas     RecordType = 19
	// Client telemetry (client_metrics.go).
	TypeAlterClientMetrics RecordType = 20
	// Broker and group configs (configs.go).
	TypeAlterResourceConfigs RecordType = 21
	// A refused connection to a broker (fencing a crashed node at once).
	TypeBrokerUnreachable RecordType = 26
)

// Errors of the codec and of Validate.
var (
	ErrMalformed = errors.New("cluster: malformed record")
	ErrInvalid   = errors.New("cluster: invalid record")
)

// maxProducerIDBlock bounds one AllocateProducerIDs record.
const maxProducerIDBlock = 1 << 20

// Record is one change to the metadata state. Every record type of this
// package implements it.
type Record interface {
	// Type is the record's type byte.
	Type() RecordType
	// Validate checks the record on its own, without a state.
	Validate() error
}

// TopicID is a topic's 16-byte UUID. It encodes as URL-safe base64 without
// padding, the way Kafka prints Uuids.
type TopicID [16]byte

// String renders the ID as Kafka does.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// MarshalText implements encoding.TextMarshaler.
func (id TopicID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *TopicID) UnmarshalText(b []byte) error {
	raw, err := base64.RawURLEncoding.DecodeString(string(b))
	if err != nil || len(raw) != 16 {
		return fmt.Errorf("%w: topic id %q", ErrMalformed, b)
	}
	copy(id[:], raw)
	return nil
}

// InitCluster sets the cluster ID once; the first leader proposes it.
type InitCluster struct {
	ClusterID string `json:"cluster_id"`
}

// RegisterBroker records a broker process (one incarnation of a node).
// A registration with a new incarnation ID replaces the previous one and
// fences the old incarnation first (it loses its ISR places and
// leaderships: its log may be behind).
type RegisterBroker struct {
	NodeID        int32  `json:"node_id"`
	IncarnationID string `json:"incarnation_id"`
	Addr          string `json:"addr"` // host:port of its inter-broker listener
	Rack          string `json:"rack,omitempty"`
	TimeMs        int64  `json:"time_ms"` // controller's clock when received; counts as a heartbeat
	// Endpoints are its advertised listeners (listeners /
	// advertised.listeners); empty for a broker with one PLAINTEXT
	// listener at Addr (and for records written before listeners existed).
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Name             string `json:"name"` // listener name: PLAINTEXT, SSL, INTERNAL, …
	Addr             string `json:"addr"`
	SecurityProtocol string `json:"security_protocol"`
}

// BrokerHeartbeat records that the controller heard from the broker at TimeMs.
type BrokerHeartbeat struct {
	NodeID        int32  `json:"node_id"`
	IncarnationID string `json:"incarnation_id"`
	TimeMs        int64  `json:"time_ms"`
}

// FenceBroker fences a broker: it leaves every ISR it is in (unless it is
// the last member) and loses its leaderships.
type FenceBroker struct {
	NodeID int32 `json:"node_id"`
}

// BrokerUnreachable reports that a connection to the broker's incarnation
// was refused (ECONNREFUSED) at TimeMs, as ReporterID saw it: nothing
// listens at its address, so its process is not running. The controller
// fences the broker at once (PlanFencing) unless it has heard from it
// since; a session expiry is not waited for. An incarnation is fenced this
// way at most once.
type BrokerUnreachable struct {
	NodeID        int32  `json:"node_id"`
	IncarnationID string `json:"incarnation_id"`
	ReporterID    int32  `json:"reporter_id"`
	TimeMs        int64  `json:"time_ms"`
}

// UnfenceBroker makes a fenced broker eligible again for ISRs and leaderships.
type UnfenceBroker struct {
	NodeID int32 `json:"node_id"`
}

// PartitionAssignment is the replica list of one new partition; the first
// replica is the preferred leader.
type PartitionAssignment struct {
	Replicas []int32 `json:"replicas"`
}

// CreateTopic creates a topic with its partitions and config overrides.
type CreateTopic struct {
	Name       string                `json:"name"`
	ID         TopicID               `json:"id"`
	Partitions []PartitionAssignment `json:"partitions"`
	Configs    map[string]string     `json:"configs,omitempty"`
}

// DeleteTopic removes a topic. When ID is not zero it must match.
type DeleteTopic struct {
	Name string  `json:"name"`
	ID   TopicID `json:"id,omitempty"`
}

// CreatePartitions appends partitions to a topic.
type CreatePartitions struct {
	Topic      string                `json:"topic"`
	Partitions []PartitionAssignment `json:"partitions"`
}

// AlterConfigs replaces a topic's config overrides with Configs.
type AlterConfigs struct {
	Topic   string            `json:"topic"`
	Configs map[string]string `json:"configs"`
}

// AlterPartition changes a partition's ISR (and optionally its leader), as
// Kafka's AlterPartition: it applies only if PartitionEpoch is the current
// partition epoch, otherwise it is rejected with ErrStalePartitionEpoch
// (Kafka's INVALID_UPDATE_VERSION). LeaderEpoch, when not -1, must match
// too (FENCED_LEADER_EPOCH).
type AlterPartition struct {
	Topic          string  `json:"topic"`
	Partition      int32   `json:"partition"`
	PartitionEpoch int32   `json:"partition_epoch"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	NewISR         []int32 `json:"new_isr"`
	// Leader, when set, is the new leader (a member of NewISR, or -1).
	// When nil the leader stays if it is in NewISR, else one is elected.
	Leader *int32 `json:"leader,omitempty"`
}

// ElectLeader asks for a leader election on one partition. Apply picks the
// leader from the state it applies to: the current leader stays while it is
// live and in the ISR (unless Preferred asks for the first replica); else
// the first live ISR member in replica order; else, only with Unclean or
// the topic's unclean.leader.election.enable=true, the first live replica,
// which becomes the whole ISR; else no leader (-1).
type ElectLeader struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Preferred bool   `json:"preferred,omitempty"`
	Unclean   bool   `json:"unclean,omitempty"`
}

// AllocateProducerIDs reserves N producer IDs; the block starts at the
// state's NextProducerID before the record.
type AllocateProducerIDs struct {
	N int64 `json:"n"`
}

// ControlledShutdown is a broker's request to leave cleanly (Kafka's
// controlled shutdown): the broker is marked ShuttingDown, leaves every ISR
// it is in (unless it is the last member) and hands its leaderships to
// eligible ISR members; a partition where it is the only ISR member that
// could lead keeps it as leader. Rejected unless IncarnationID is the
// registered incarnation.
type ControlledShutdown struct {
	NodeID        int32  `json:"node_id"`
	IncarnationID string `json:"incarnation_id"`
}

// ReassignPartition starts (or replaces) a reassignment of one partition to
// the Target replicas (KIP-455), or cancels the one in progress when Target
// is empty. Target must list distinct registered brokers; its first replica
// becomes the preferred leader. The reassignment completes inside Apply as
// soon as every added replica is in the ISR.
type ReassignPartition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Target    []int32 `json:"target,omitempty"`
}

// Type implements Record.
func (InitCluster) Type() RecordType         { return TypeInitCluster }
func (RegisterBroker) Type() RecordType      { return TypeRegisterBroker }
func (BrokerHeartbeat) Type() RecordType     { return TypeBrokerHeartbeat }
func (FenceBroker) Type() RecordType         { return TypeFenceBroker }
func (BrokerUnreachable) Type() RecordType   { return TypeBrokerUnreachable }
func (UnfenceBroker) Type() RecordType       { return TypeUnfenceBroker }
func (CreateTopic) Type() RecordType         { return TypeCreateTopic }
func (DeleteTopic) Type() RecordType         { return TypeDeleteTopic }
func (CreatePartitions) Type() RecordType    { return TypeCreatePartitions }
func (AlterConfigs) Type() RecordType        { return TypeAlterConfigs }
func (AlterPartition) Type() RecordType      { return TypeAlterPartition }
func (ElectLeader) Type() RecordType         { return TypeElectLeader }
func (AllocateProducerIDs) Type() RecordType { return TypeAllocateProducerIDs }
func (ControlledShutdown) Type() RecordType  { return TypeControlledShutdown }
func (ReassignPartition) Type() RecordType   { return TypeReassignPartition }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Validate implements Record.
func (r InitCluster) Validate() error {
	if r.ClusterID == "" || len(r.ClusterID) > 64 {
		return invalid("cluster id %q", r.ClusterID)
	}
	return nil
}

// Validate implements Record.
func (r RegisterBroker) Validate() error {
	if r.NodeID < 0 {
		return invalid("node id %d", r.NodeID)
	}
	if r.IncarnationID == "" {
		return invalid("broker %d: empty incarnation id", r.NodeID)
	}
	if err := ValidateHostPort(r.Addr); err != nil {
		return invalid("broker %d: %v", r.NodeID, err)
	}
	seen := map[string]bool{}
	for _, e := range r.Endpoints {
		if e.Name == "" || seen[e.Name] {
			return invalid("broker %d: listener name %q empty or repeated", r.NodeID, e.Name)
		}
		seen[e.Name] = true
		if err := ValidateHostPort(e.Addr); err != nil {
			return invalid("broker %d: listener %s: %v", r.NodeID, e.Name, err)
		}
	}
	return nil
}

// ValidateHostPort checks a host:port address without resolving it.
func ValidateHostPort(addr string) error {
	i := strings.LastIndexByte(addr, ':')
	if i <= 0 {
		return fmt.Errorf("address %q is not host:port", addr)
	}
	host, port := addr[:i], addr[i+1:]
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return fmt.Errorf("address %q: unbalanced brackets", addr)
	}
	if strings.Contains(strings.Trim(host, "[]"), ":") && !strings.HasPrefix(host, "[") {
		return fmt.Errorf("address %q: IPv6 host needs brackets", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("address %q: bad port", addr)
	}
	return nil
}

// Validate implements Record.
func (r BrokerHeartbeat) Validate() error {
	if r.NodeID < 0 || r.IncarnationID == "" {
		return invalid("heartbeat from node %d incarnation %q", r.NodeID, r.IncarnationID)
	}
	return nil
}

// Validate implements Record.
func (r BrokerUnreachable) Validate() error {
	if r.NodeID < 0 || r.IncarnationID == "" || r.ReporterID < 0 {
		return invalid("node %d incarnation %q unreachable from %d", r.NodeID, r.IncarnationID, r.ReporterID)
	}
	return nil
}

// Validate implements Record.
func (r FenceBroker) Validate() error {
	if r.NodeID < 0 {
		return invalid("node id %d", r.NodeID)
	}
	return nil
}

// Validate implements Record.
func (r UnfenceBroker) Validate() error {
	if r.NodeID < 0 {
		return invalid("node id %d", r.NodeID)
	}
	return nil
}

// ValidateTopicName applies Kafka's topic name rules.
func ValidateTopicName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return invalid("topic name %q", name)
	}
	for _, c := range name {
		ok := c == '.' || c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return invalid("topic name %q: character %q", name, c)
		}
	}
	return nil
}

func validateAssignments(topic string, parts []PartitionAssignment) error {
	if len(parts) == 0 {
		return invalid("topic %s: no partitions", topic)
	}
	for i, p := range parts {
		if err := validateReplicaSet(p.Replicas); err != nil {
			return invalid("topic %s partition %d: replicas: %v", topic, i, err)
		}
	}
	return nil
}

// validateReplicaSet checks a non-empty list of distinct non-negative ids.
func validateReplicaSet(ids []int32) error {
	if len(ids) == 0 {
		return errors.New("empty")
	}
	seen := make(map[int32]bool, len(ids))
	for _, id := range ids {
		if id < 0 {
			return fmt.Errorf("node id %d", id)
		}
		if seen[id] {
			return fmt.Errorf("node %d twice", id)
		}
		seen[id] = true
	}
	return nil
}

func validateConfigs(topic string, configs map[string]string) error {
	for k := range configs {
		if k == "" {
			return invalid("topic %s: empty config name", topic)
		}
	}
	return nil
}

// Validate implements Record.
func (r CreateTopic) Validate() error {
	if err := ValidateTopicName(r.Name); err != nil {
		return err
	}
	if r.ID == (TopicID{}) {
		return invalid("topic %s: zero topic id", r.Name)
	}
	if err := validateAssignments(r.Name, r.Partitions); err != nil {
		return err
	}
	return validateConfigs(r.Name, r.Configs)
}

// Validate implements Record.
func (r DeleteTopic) Validate() error { return ValidateTopicName(r.Name) }

// Validate implements Record.
func (r CreatePartitions) Validate() error {
	if err := ValidateTopicName(r.Topic); err != nil {
		return err
	}
	return validateAssignments(r.Topic, r.Partitions)
}

// Validate implements Record.
func (r AlterConfigs) Validate() error {
	if err := ValidateTopicName(r.Topic); err != nil {
		return err
	}
	return validateConfigs(r.Topic, r.Configs)
}

// Validate implements Record.
func (r AlterPartition) Validate() error {
	if err := ValidateTopicName(r.Topic); err != nil {
		return err
	}
	if r.Partition < 0 || r.PartitionEpoch < 0 || r.LeaderEpoch < -1 {
		return invalid("alter partition %s-%d: negative partition, partition epoch or leader epoch", r.Topic, r.Partition)
	}
	if err := validateReplicaSet(r.NewISR); err != nil {
		return invalid("alter partition %s-%d: isr: %v", r.Topic, r.Partition, err)
	}
	if r.Leader != nil && *r.Leader < -1 {
		return invalid("alter partition %s-%d: leader %d", r.Topic, r.Partition, *r.Leader)
	}
	return nil
}

// Validate implements Record.
func (r ElectLeader) Validate() error {
	if err := ValidateTopicName(r.Topic); err != nil {
		return err
	}
	if r.Partition < 0 {
		return invalid("elect leader %s-%d", r.Topic, r.Partition)
	}
	return nil
}

// Validate implements Record.
func (r AllocateProducerIDs) Validate() error {
	if r.N <= 0 || r.N > maxProducerIDBlock {
		return invalid("producer id block of %d", r.N)
	}
	return nil
}

// Validate implements Record.
func (r ControlledShutdown) Validate() error {
	if r.NodeID < 0 || r.IncarnationID == "" {
		return invalid("controlled shutdown of node %d incarnation %q", r.NodeID, r.IncarnationID)
	}
	return nil
}

// Validate implements Record. A bad target wraps both ErrInvalid and
// ErrInvalidReplicaAssignment.
func (r ReassignPartition) Validate() error {
	if err := ValidateTopicName(r.Topic); err != nil {
		return err
	}
	if r.Partition < 0 {
		return invalid("reassign partition %s-%d", r.Topic, r.Partition)
	}
	if len(r.Target) == 0 {
		return nil
	}
	if err := validateReplicaSet(r.Target); err != nil {
		return fmt.Errorf("%w: %w: %s-%d: target: %v", ErrInvalid, ErrInvalidReplicaAssignment, r.Topic, r.Partition, err)
	}
	return nil
}

// EncodeRecord encodes a record as its type byte and JSON body.
func EncodeRecord(r Record) ([]byte, error) {
	if r == nil {
		return nil, invalid("nil record")
	}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode %T: %w", r, err)
	}
	out := make([]byte, 0, 1+len(body))
	out = append(out, byte(r.Type()))
	return append(out, body...), nil
}

// DecodeRecord decodes and validates one encoded record.
func DecodeRecord(b []byte) (Record, error) {
	if len(b) < 1 {
		return nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	var r Record
	switch RecordType(b[0]) {
	case TypeInitCluster:
		r = decodeInto[InitCluster](b[1:])
	case TypeRegisterBroker:
		r = decodeInto[RegisterBroker](b[1:])
	case TypeBrokerHeartbeat:
		r = decodeInto[BrokerHeartbeat](b[1:])
	case TypeFenceBroker:
		r = decodeInto[FenceBroker](b[1:])
	case TypeBrokerUnreachable:
		r = decodeInto[BrokerUnreachable](b[1:])
	case TypeUnfenceBroker:
		r = decodeInto[UnfenceBroker](b[1:])
	case TypeCreateTopic:
		r = decodeInto[CreateTopic](b[1:])
	case TypeDeleteTopic:
		r = decodeInto[DeleteTopic](b[1:])
	case TypeCreatePartitions:
		r = decodeInto[CreatePartitions](b[1:])
	case TypeAlterConfigs:
		r = decodeInto[AlterConfigs](b[1:])
	case TypeAlterPartition:
		r = decodeInto[AlterPartition](b[1:])
	case TypeElectLeader:
		r = decodeInto[ElectLeader](b[1:])
	case TypeAllocateProducerIDs:
		r = decodeInto[AllocateProducerIDs](b[1:])
	case TypeControlledShutdown:
		r = decodeInto[ControlledShutdown](b[1:])
	case TypeReassignPartition:
		r = decodeInto[ReassignPartition](b[1:])
	case TypeUpdateFeatures:
		r = decodeInto[UpdateFeatures](b[1:])
	case TypeAlterScramCredentials:
		r = decodeInto[AlterScramCredentials](b[1:])
	case TypeCreateACLs:
		r = decodeInto[CreateACLs](b[1:])
	case TypeDeleteACLs:
		r = decodeInto[DeleteACLs](b[1:])
	case TypeAlterClientQuotas:
		r = decodeInto[AlterClientQuotas](b[1:])
	case TypeAlterClientMetrics:
		r = decodeInto[AlterClientMetrics](b[1:])
	case TypeAlterResourceConfigs:
		r = decodeInto[AlterResourceConfigs](b[1:])
	case TypeSetControllers:
		r = decodeInto[SetControllers](b[1:])
	case TypeOfflineReplicas:
		r = decodeInto[OfflineReplicas](b[1:])
	case TypeUpdateController:
		r = decodeInto[UpdateController](b[1:])
	case TypeTopicBatch:
		r = decodeInto[TopicBatch](b[1:])
	default:
		return nil, fmt.Errorf("%w: unknown record type %d", ErrMalformed, b[0])
	}
	if r == nil {
		return nil, fmt.Errorf("%w: type %d: bad JSON body", ErrMalformed, b[0])
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeInto decodes body strictly as a T; it returns nil on any error.
func decodeInto[T Record](body []byte) Record {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) != 0 {
		return nil
	}
	return v
}
