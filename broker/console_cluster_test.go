package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// clusterPage is the console's GET /api/v1/cluster as the tests read it.
type clusterPage struct {
	ClusterID   string
	Controller  int32
	Controllers []int32
	Node        int32
	Nodes       []struct {
		NodeID           int32
		Host             string
		Port             int32
		Roles            []string
		Status           string
		Fenced           bool
		ActiveController bool
	}
	Quorum struct {
		LeaderID      int32
		LeaderEpoch   int32
		HighWatermark int64
		Voters        []struct {
			NodeID       int32
			LogEndOffset int64
			Lag          int64
		}
		Error string
	}
	Topics, Partitions           int
	UnderReplicatedPartitions    int
	OfflinePartitions            int
	NonPreferredLeaderPartitions int
}

// TestConsoleClusterAPI: on one node the cluster page shows the node as
// broker and controller, alive, leading a one-voter quorum with its log
// end at the commit index, and partition counts matching what kadm
// created; the problem-partition list pages and rejects unknown states.
func TestConsoleClusterAPI(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	adm := kadm.NewClient(tb.client())
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "c1"); err != nil {
		t.Fatal(err)
	}
	var c clusterPage
	got := callConsole(t, base, "GET", "/api/v1/cluster", nil, false)
	got.decode(t, &c)
	if got.status != 200 || c.ClusterID == "" || c.Node != tb.cfg.NodeID || len(c.Nodes) != 1 {
		t.Fatalf("cluster: %d %s", got.status, got.body)
	}
	n := c.Nodes[0]
	if n.NodeID != tb.cfg.NodeID || !slices.Equal(n.Roles, []string{"broker", "controller"}) || n.Status != "alive" || n.Fenced ||
		!n.ActiveController || n.Port <= 0 {
		t.Fatalf("node: %+v", n)
	}
	if q := c.Quorum; q.Error != "" || q.LeaderID != n.NodeID || q.LeaderEpoch < 1 || len(q.Voters) != 1 ||
		q.Voters[0].LogEndOffset != q.HighWatermark || q.Voters[0].Lag != 0 || !slices.Equal(c.Controllers, []int32{n.NodeID}) {
		t.Fatalf("quorum: %s", got.body)
	}
	if c.Topics < 1 || c.Partitions < 3 || c.UnderReplicatedPartitions != 0 || c.OfflinePartitions != 0 || c.NonPreferredLeaderPartitions != 0 {
		t.Fatalf("counts: %s", got.body)
	}

	var problems struct {
		State      string
		Partitions []any
		Total      int
	}
	got = callConsole(t, base, "GET", "/api/v1/cluster/partitions?state=under-replicated", nil, false)
	got.decode(t, &problems)
	if got.status != 200 || problems.State != "under-replicated" || problems.Total != 0 || problems.Partitions == nil {
		t.Fatalf("under-replicated: %d %s", got.status, got.body)
	}
	for _, bad := range []string{"", "?state=sad", "?state=offline&page=0", "?state=offline&pageSize=501"} {
		if got := callConsole(t, base, "GET", "/api/v1/cluster/partitions"+bad, nil, false); got.status != 400 {
			t.Fatalf("%q: %d %s", bad, got.status, got.body)
		}
	}

	// A topic created through the API is in the list at once, though the
	// list comes from a snapshot (creating one invalidates it).
	callConsole(t, base, "GET", "/api/v1/topics", nil, false)
	if got := callConsole(t, base, "POST", "/api/v1/topics", map[string]any{"name": "c2", "partitions": 1}, true); got.status != 201 {
		t.Fatalf("create: %d %s", got.status, got.body)
	}
	var list struct{ Topics []struct{ Name string } }
	callConsole(t, base, "GET", "/api/v1/topics?search=c2", nil, false).decode(t, &list)
	if len(list.Topics) != 1 {
		t.Fatalf("c2 not listed right after its creation: %+v", list)
	}
}
