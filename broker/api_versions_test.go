package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestApiVersionsV5: KIP-1242's expected cluster and node, sent with kmsg
// on one connection: neither (a seed connection) or both ours is answered
// as v4 is; another node or cluster is REBOOTSTRAP_REQUIRED, only one of
// the two INVALID_REQUEST, both without API keys, and the connection keeps
// serving. A kgo client, which asks v5 first (and, to brokers it learned
// from Metadata, names the cluster and node), gets its software name to
// the broker: a CLIENT_METRICS subscription matching
// client_software_name=kgo applies to it, also after an ApiVersions of the
// kgo user's own (no software name) on the same connection.
func TestApiVersionsV5(t *testing.T) {
	tb := startTestBroker(t)
	var clusterID string
	waitUntil(t, 10*time.Second, "a cluster id", func() bool {
		clusterID = tb.srv.clusterState().ClusterID
		return clusterID != ""
	})
	node := tb.cfg.NodeID
	other := "another-cluster"
	c := tb.dialRaw()
	for _, tc := range []struct {
		name      string
		clusterID *string
		nodeID    int32
		want      int16
	}{
		{"neither", nil, -1, 0},
		{"this cluster and node", &clusterID, node, 0},
		{"another node", &clusterID, node + 1, kerr.RebootstrapRequired.Code},
		{"another cluster", &other, node, kerr.RebootstrapRequired.Code},
		{"cluster without node", &clusterID, -1, kerr.InvalidRequest.Code},
		{"node without cluster", nil, node, kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 5
		req.ClientSoftwareName, req.ClientSoftwareVersion = "strata-test", "1.0"
		req.ClusterID, req.NodeID = tc.clusterID, tc.nodeID
		resp := roundTrip[*kmsg.ApiVersionsResponse](c, req)
		if resp.ErrorCode != tc.want {
			t.Fatalf("%s: %v, want %v", tc.name, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(tc.want))
		}
		i := slices.IndexFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == kmsg.ApiVersions.Int16() })
		switch {
		case tc.want == 0 && (len(resp.ApiKeys) != len(apis) || i < 0 || resp.ApiKeys[i].MaxVersion != 5 || len(resp.SupportedFeatures) == 0):
			t.Fatalf("%s: %d keys, ApiVersions at %d, %d features", tc.name, len(resp.ApiKeys), i, len(resp.SupportedFeatures))
		case tc.want != 0 && len(resp.ApiKeys) != 0:
			t.Fatalf("%s: %d keys with the error", tc.name, len(resp.ApiKeys))
		}
	}

	set := kmsg.IncrementalAlterConfigOpSet
	if code := alterClientMetrics(t, tb.client(), "kgo-apps",
		cmOp(set, "metrics", "org.apache.kafka.producer."),
		cmOp(set, "interval.ms", "60000"),
		cmOp(set, "match", "client_id=v5-app,client_software_name=kgo")); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	cl := tb.client(kgo.ClientID("v5-app"))
	ctx := testContext(t)
	if _, err := kadm.NewClient(cl).Metadata(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl.Broker(int(node)))
	if err != nil || resp.Version != 5 || resp.ErrorCode != 0 {
		t.Fatalf("kgo ApiVersions to node %d: %v %+v", node, err, resp)
	}
	g := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	sub, err := g.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil || sub.ErrorCode != 0 || !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka.producer."}) {
		t.Fatalf("kgo's connection not matched by client_software_name=kgo: %v %+v", err, sub)
	}
}
