package console

import (
	"context"
	"net/http"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type brokerJSON struct {
	NodeID int32   `json:"nodeId"`
	Host   string  `json:"host"`
	Port   int32   `json:"port"`
	Rack   *string `json:"rack"`
}

type clusterJSON struct {
	ClusterID                 string       `json:"clusterId"`
	Controller                int32        `json:"controller"`
	Node                      int32        `json:"node"` // the node serving the console
	Brokers                   []brokerJSON `json:"brokers"`
	Topics                    int          `json:"topics"`
	Partitions                int          `json:"partitions"`
	UnderReplicatedPartitions int          `json:"underReplicatedPartitions"`
	OfflinePartitions         int          `json:"offlinePartitions"`
}

// getCluster: GET /api/v1/cluster, from one Metadata request for all
// topics (internal ones included).
func (c *Console) getCluster(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(ctx)
	if err != nil {
		c.writeKafkaError(w, "reading cluster metadata", err)
		return
	}
	out := clusterJSON{ClusterID: md.Cluster, Controller: md.Controller, Node: c.cfg.NodeID, Brokers: []brokerJSON{}}
	for _, b := range md.Brokers {
		out.Brokers = append(out.Brokers, brokerJSON{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	for _, t := range md.Topics {
		if t.Err != nil {
			continue
		}
		out.Topics++
		for _, p := range t.Partitions {
			out.Partitions++
			if offline(p) {
				out.OfflinePartitions++
			} else if len(p.ISR) < len(p.Replicas) {
				out.UnderReplicatedPartitions++
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// offline: the partition has no leader clients can use.
func offline(p kadm.PartitionDetail) bool { return p.Leader < 0 }
