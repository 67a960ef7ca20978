package cluster

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

var sampleRecords = []Record{
	InitCluster{ClusterID: "c1"},
	RegisterBroker{NodeID: 1, IncarnationID: "inc-1", Addr: "127.0.0.1:9092", Rack: "a", TimeMs: 10},
	RegisterBroker{NodeID: 2, IncarnationID: "inc-2", Addr: "[::1]:9093"},
	RegisterBroker{NodeID: 3, IncarnationID: "inc-3", Addr: "127.0.0.1:9094", Endpoints: []Endpoint{
		{Name: "INTERNAL", Addr: "127.0.0.1:9094", SecurityProtocol: "SSL"}, {Name: "EXTERNAL", Addr: "kafka.example:9095", SecurityProtocol: "SSL"}}},
	BrokerHeartbeat{NodeID: 1, IncarnationID: "inc-1", TimeMs: 20},
	FenceBroker{NodeID: 1},
	UnfenceBroker{NodeID: 1},
	CreateTopic{Name: "orders", ID: TopicID{1, 2, 3}, Partitions: []PartitionAssignment{{Replicas: []int32{1, 2}}}, Configs: map[string]string{"retention.ms": "1"}},
	DeleteTopic{Name: "orders", ID: TopicID{1, 2, 3}},
	CreatePartitions{Topic: "orders", Partitions: []PartitionAssignment{{Replicas: []int32{2, 1}}}},
	AlterConfigs{Topic: "orders", Configs: map[string]string{"cleanup.policy": "compact"}},
	AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 3, LeaderEpoch: -1, NewISR: []int32{1}, Leader: ptr(int32(1))},
	ElectLeader{Topic: "orders", Partition: 1, Preferred: true},
	AllocateProducerIDs{N: 1000},
	ControlledShutdown{NodeID: 1, IncarnationID: "inc-1"},
	ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{3, 1, 2}},
	ReassignPartition{Topic: "orders", Partition: 1}, // cancel
	UpdateFeatures{Updates: []FeatureUpdate{{Feature: GroupVersionFeature, Level: 0, Downgrade: true}, {Feature: MetadataVersionFeature, Level: 21, Downgrade: true}}},
	UpdateFeatures{Updates: []FeatureUpdate{{Feature: "future.feature", Level: 3}}}, // decodes; Apply rejects it
	AlterScramCredentials{Upserts: []ScramUpsert{{User: "alice", Mechanism: ScramSHA512, Credential: ScramCredential{Salt: []byte{1}, StoredKey: []byte{2}, ServerKey: []byte{3}, Iterations: 4096}}}},
	AlterScramCredentials{Deletions: []ScramDeletion{{User: "alice", Mechanism: ScramSHA512}}},
	CreateACLs{Bindings: []ACLBinding{{ResourceType: 2, ResourceName: "orders", PatternType: 4, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}}},
	DeleteACLs{Bindings: []ACLBinding{{ResourceType: 2, ResourceName: "orders", PatternType: 4, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}}},
	AlterClientQuotas{Alterations: []QuotaAlteration{{Entity: QuotaEntity{User: ptr("alice"), ClientID: ptr("")}, Set: map[string]float64{"producer_byte_rate": 1024}}}},
	AlterClientMetrics{Name: "producers", Configs: map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "60000"}},
	AlterResourceConfigs{Kind: ConfigBroker, Name: "", Configs: map[string]string{"log.retention.ms": "60000"}},
	SetControllers{Controllers: []Controller{{ID: 1}, {ID: 4, Addr: "127.0.0.1:9094", DirectoryID: TopicID{7}, Learner: true}}},
	BrokerUnreachable{NodeID: 2, IncarnationID: "inc-2", ReporterID: 1, TimeMs: 1000},
	OfflineReplicas{NodeID: 2, IncarnationID: "inc-2", Partitions: []ReplicaRef{{TopicID: TopicID{1}, Partition: 0}, {TopicID: TopicID{1}, Partition: 3}}},
	SetControllers{Controllers: []Controller{{ID: 2, Addr: "127.0.0.1:9095", Listeners: []ControllerListener{{Name: "CONTROLLER", Addr: "127.0.0.1:9095"}}, KRaftMax: 1}}},
	UpdateController{ID: 2, DirectoryID: TopicID{2}, Addr: "127.0.0.1:9096", Listeners: []ControllerListener{{Name: "CONTROLLER", Addr: "127.0.0.1:9096"}}, KRaftMax: 1, Voters: []int32{1, 2, 3}},
	TopicBatch{Records: []Record{
		CreateTopic{Name: "a", ID: TopicID{9}, Partitions: []PartitionAssignment{{Replicas: []int32{1}}}},
		CreatePartitions{Topic: "a", Partitions: []PartitionAssignment{{Replicas: []int32{1}}}},
		DeleteTopic{Name: "orders"},
	}},
}

func TestRecordRoundTrip(t *testing.T) {
	seen := map[RecordType]bool{}
	for _, r := range sampleRecords {
		b, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if RecordType(b[0]) != r.Type() {
			t.Errorf("%T: type byte %d", r, b[0])
		}
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%T: decode: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip: got %#v, want %#v", got, r)
		}
		seen[r.Type()] = true
	}
	// Every type the decoder knows has a sample.
	for typ := 1; typ < 256; typ++ {
		_, err := DecodeRecord([]byte{byte(typ), '{', '}'})
		if known := err == nil || !strings.Contains(err.Error(), "unknown record type"); known && !seen[RecordType(typ)] {
			t.Errorf("record type %d has no sample", typ)
		}
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"unknown type", []byte{200, '{', '}'}, ErrMalformed},
		{"bad json", []byte{byte(TypeFenceBroker), '{'}, ErrMalformed},
		{"unknown field", append([]byte{byte(TypeFenceBroker)}, `{"node_id":1,"x":2}`...), ErrMalformed},
		{"trailing data", append([]byte{byte(TypeFenceBroker)}, `{"node_id":1}{}`...), ErrMalformed},
		{"wrong field type", append([]byte{byte(TypeFenceBroker)}, `{"node_id":"one"}`...), ErrMalformed},
		{"bad topic id", append([]byte{byte(TypeDeleteTopic)}, `{"name":"a","id":"zz"}`...), ErrMalformed},
		{"negative node", append([]byte{byte(TypeFenceBroker)}, `{"node_id":-1}`...), ErrInvalid},
		{"bad addr", append([]byte{byte(TypeRegisterBroker)}, `{"node_id":1,"incarnation_id":"x","addr":"nohost"}`...), ErrInvalid},
		{"bad port", append([]byte{byte(TypeRegisterBroker)}, `{"node_id":1,"incarnation_id":"x","addr":"h:99999"}`...), ErrInvalid},
		{"bad topic name", append([]byte{byte(TypeDeleteTopic)}, `{"name":"a/b"}`...), ErrInvalid},
		{"duplicate replica", append([]byte{byte(TypeCreatePartitions)}, `{"topic":"a","partitions":[{"replicas":[1,1]}]}`...), ErrInvalid},
		{"zero topic id", append([]byte{byte(TypeCreateTopic)}, `{"name":"a","partitions":[{"replicas":[1]}]}`...), ErrInvalid},
		{"huge producer block", append([]byte{byte(TypeAllocateProducerIDs)}, `{"n":99999999999}`...), ErrInvalid},
		{"empty isr", append([]byte{byte(TypeAlterPartition)}, `{"topic":"a","partition":0,"partition_epoch":0,"leader_epoch":0,"new_isr":[]}`...), ErrInvalid},
		{"shutdown without incarnation", append([]byte{byte(TypeControlledShutdown)}, `{"node_id":1,"incarnation_id":""}`...), ErrInvalid},
		{"shutdown negative node", append([]byte{byte(TypeControlledShutdown)}, `{"node_id":-2,"incarnation_id":"x"}`...), ErrInvalid},
		{"reassign duplicate target", append([]byte{byte(TypeReassignPartition)}, `{"topic":"a","partition":0,"target":[1,2,1]}`...), ErrInvalidReplicaAssignment},
		{"reassign negative target", append([]byte{byte(TypeReassignPartition)}, `{"topic":"a","partition":0,"target":[-1]}`...), ErrInvalid},
		{"reassign negative partition", append([]byte{byte(TypeReassignPartition)}, `{"topic":"a","partition":-1,"target":[1]}`...), ErrInvalid},
		{"reassign unknown field", append([]byte{byte(TypeReassignPartition)}, `{"topic":"a","partition":0,"adding":[1]}`...), ErrMalformed},
		{"features without updates", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[]}`...), ErrInvalid},
		{"features null updates", append([]byte{byte(TypeUpdateFeatures)}, `{}`...), ErrInvalid},
		{"features empty name", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"","level":1}]}`...), ErrInvalid},
		{"features negative level", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"group.version","level":-1}]}`...), ErrInvalid},
		{"features named twice", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"group.version","level":1},{"feature":"group.version","level":0}]}`...), ErrInvalid},
		{"features level out of int16", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"group.version","level":40000}]}`...), ErrMalformed},
		{"features unknown field", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"group.version","level":1,"upgrade_type":2}]}`...), ErrMalformed},
		{"features as a map", append([]byte{byte(TypeUpdateFeatures)}, `{"updates":{"group.version":1}}`...), ErrMalformed},
		{"empty topic batch", append([]byte{byte(TypeTopicBatch)}, `{"records":[]}`...), ErrInvalid},
		{"topic batch of an unbatchable type", append([]byte{byte(TypeTopicBatch)}, `{"records":[{"type":4,"record":{"node_id":1}}]}`...), ErrMalformed},
		{"nested topic batch", append([]byte{byte(TypeTopicBatch)}, `{"records":[{"type":25,"record":{"records":[]}}]}`...), ErrMalformed},
		{"topic batch bad body", append([]byte{byte(TypeTopicBatch)}, `{"records":[{"type":7,"record":{"name":"a","x":1}}]}`...), ErrMalformed},
		{"topic batch unknown field", append([]byte{byte(TypeTopicBatch)}, `{"records":[],"more":1}`...), ErrMalformed},
		{"topic batch invalid record", append([]byte{byte(TypeTopicBatch)}, `{"records":[{"type":7,"record":{"name":"a/b"}}]}`...), ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRecord(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, %v; want %v", r, err, tc.want)
			}
		})
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range sampleRecords {
		b, err := EncodeRecord(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{byte(TypeCreateTopic), '{', '}'})
	f.Add(append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"metadata.version","level":7,"downgrade":true},{"feature":"transaction.version","level":2}]}`...))
	f.Add(append([]byte{byte(TypeUpdateFeatures)}, `{"updates":[{"feature":"group.version","level":0,"downgrade":false}]}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes and applies without panicking.
		again, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("re-encode %#v: %v", r, err)
		}
		if _, err := DecodeRecord(again); err != nil {
			t.Fatalf("re-decode %#v: %v", r, err)
		}
		s := scenarioState(t)
		if next, err := Apply(s, r); err == nil {
			checkFeatureInvariants(t, next)
		}
	})
}

// TestBrokerEndpoints: a broker's listeners are recorded and looked up by
// name; one registered without endpoints answers on Addr for every name.
func TestBrokerEndpoints(t *testing.T) {
	st, err := ApplyAll(State{},
		InitCluster{ClusterID: "c"},
		RegisterBroker{NodeID: 1, IncarnationID: "a", Addr: "10.0.0.1:9092", Endpoints: []Endpoint{
			{Name: "INTERNAL", Addr: "10.0.0.1:9092", SecurityProtocol: "SSL"},
			{Name: "EXTERNAL", Addr: "kafka-1.example:9093", SecurityProtocol: "SASL_SSL"}}},
		RegisterBroker{NodeID: 2, IncarnationID: "b", Addr: "10.0.0.2:9092"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := st.Brokers[1].Endpoint("EXTERNAL"); !ok || a != "kafka-1.example:9093" {
		t.Errorf("EXTERNAL of broker 1: %q %v", a, ok)
	}
	if _, ok := st.Brokers[1].Endpoint("PLAINTEXT"); ok {
		t.Error("broker 1 has no PLAINTEXT listener")
	}
	if a, ok := st.Brokers[2].Endpoint("EXTERNAL"); !ok || a != "10.0.0.2:9092" {
		t.Errorf("broker 2 without endpoints: %q %v", a, ok)
	}
	for _, bad := range [][]Endpoint{
		{{Name: "", Addr: "h:1"}},
		{{Name: "A", Addr: "h:1"}, {Name: "A", Addr: "h:2"}},
		{{Name: "A", Addr: "no-port"}},
	} {
		r := RegisterBroker{NodeID: 3, IncarnationID: "c", Addr: "h:1", Endpoints: bad}
		if err := r.Validate(); err == nil {
			t.Errorf("endpoints %v accepted", bad)
		}
	}
}

// TestSecurityRecords: credentials, ACLs and quotas apply as the broker
// proposed them, leave the input state untouched, and survive the JSON
// round trip of snapshots.
func TestSecurityRecords(t *testing.T) {
	cred := ScramCredential{Salt: []byte("salt"), StoredKey: []byte("sk"), ServerKey: []byte("svk"), Iterations: 8192}
	read := ACLBinding{ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}
	deny := read
	deny.Permission = 2
	s0, err := ApplyAll(State{}, InitCluster{ClusterID: "c"},
		AlterScramCredentials{Upserts: []ScramUpsert{{User: "alice", Mechanism: ScramSHA256, Credential: cred}, {User: "alice", Mechanism: ScramSHA512, Credential: cred}}},
		CreateACLs{Bindings: []ACLBinding{read, deny, read}},
		AlterClientQuotas{Alterations: []QuotaAlteration{{Entity: QuotaEntity{User: ptr("")}, Set: map[string]float64{"consumer_byte_rate": 5e6}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(s0.Scram["alice"]) != 2 || len(s0.ACLs) != 2 || s0.ACLVersion != 1 || len(s0.ClientQuotas) != 1 {
		t.Fatalf("state: scram %v acls %v v%d quotas %v", s0.Scram, s0.ACLs, s0.ACLVersion, s0.ClientQuotas)
	}
	s1, err := ApplyAll(s0,
		AlterScramCredentials{Deletions: []ScramDeletion{{User: "alice", Mechanism: ScramSHA256}, {User: "bob", Mechanism: ScramSHA256}}},
		DeleteACLs{Bindings: []ACLBinding{deny}},
		AlterClientQuotas{Alterations: []QuotaAlteration{{Entity: QuotaEntity{User: ptr("")}, Remove: []string{"consumer_byte_rate"}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s1.Scram["alice"][ScramSHA256]; ok || len(s1.Scram["alice"]) != 1 {
		t.Errorf("after deletion: %v", s1.Scram)
	}
	if len(s1.ACLs) != 1 || s1.ACLs[0] != read || s1.ACLVersion != 2 {
		t.Errorf("after DeleteACLs: %v v%d", s1.ACLs, s1.ACLVersion)
	}
	if len(s1.ClientQuotas) != 0 {
		t.Errorf("a quota with no values left stays: %v", s1.ClientQuotas)
	}
	if len(s0.Scram["alice"]) != 2 || len(s0.ACLs) != 2 || len(s0.ClientQuotas) != 1 {
		t.Error("Apply modified its input state")
	}
	b, err := json.Marshal(s0)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Scram, s0.Scram) || !reflect.DeepEqual(back.ACLs, s0.ACLs) || !reflect.DeepEqual(back.ClientQuotas, s0.ClientQuotas) {
		t.Error("security state changed in the JSON round trip")
	}
	for _, bad := range []Record{
		AlterScramCredentials{},
		AlterScramCredentials{Upserts: []ScramUpsert{{User: "a", Mechanism: "SCRAM-SHA-1", Credential: cred}}},
		AlterScramCredentials{Upserts: []ScramUpsert{{User: "a", Mechanism: ScramSHA256}}},
		CreateACLs{Bindings: []ACLBinding{{ResourceType: 1, ResourceName: "x", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, Permission: 3}}},
		CreateACLs{Bindings: []ACLBinding{{ResourceType: 2, ResourceName: "x", PatternType: 2, Principal: "User:a", Host: "*", Operation: 3, Permission: 3}}},
		AlterClientQuotas{Alterations: []QuotaAlteration{{Set: map[string]float64{"producer_byte_rate": 1}}}},
		AlterClientQuotas{Alterations: []QuotaAlteration{{Entity: QuotaEntity{User: ptr("a")}, Set: map[string]float64{"producer_byte_rate": -1}}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%T %+v accepted", bad, bad)
		}
	}
}
