package cluster

import (
	"errors"
	"reflect"
	"testing"
)

// TestClientMetricsRecords: a subscription is created, replaced and deleted
// (empty configs), each change bumps the version, the input state is left
// alone, and the subscriptions survive a snapshot's round trip.
func TestClientMetricsRecords(t *testing.T) {
	s0, err := ApplyAll(State{}, InitCluster{ClusterID: "c"},
		AlterClientMetrics{Name: "producers", Configs: map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "60000"}},
		AlterClientMetrics{Name: "all", Configs: map[string]string{"metrics": "*"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := s0.ClientMetricsNames(); !reflect.DeepEqual(got, []string{"all", "producers"}) || s0.ClientMetricsVersion != 2 {
		t.Fatalf("names %v version %d", got, s0.ClientMetricsVersion)
	}
	s1, err := ApplyAll(s0,
		AlterClientMetrics{Name: "producers", Configs: map[string]string{"metrics": "org.apache.kafka.producer.node."}},
		AlterClientMetrics{Name: "all"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]map[string]string{"producers": {"metrics": "org.apache.kafka.producer.node."}}; !reflect.DeepEqual(s1.ClientMetrics, want) || s1.ClientMetricsVersion != 4 {
		t.Fatalf("after replace and delete: %v v%d", s1.ClientMetrics, s1.ClientMetricsVersion)
	}
	if len(s0.ClientMetrics) != 2 || s0.ClientMetrics["producers"]["interval.ms"] != "60000" {
		t.Error("Apply modified its input state")
	}
	b, err := s1.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ClientMetrics, s1.ClientMetrics) || back.ClientMetricsVersion != 4 {
		t.Errorf("after the snapshot round trip: %v v%d", back.ClientMetrics, back.ClientMetricsVersion)
	}
	for _, bad := range []Record{
		AlterClientMetrics{},
		AlterClientMetrics{Name: string(make([]byte, 256))},
		AlterClientMetrics{Name: "x", Configs: map[string]string{"": "1"}},
	} {
		if _, err := Apply(s1, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
}
