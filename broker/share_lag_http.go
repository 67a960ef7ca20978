package broker

// The share-group half of the lag API on the admin listener:
//
//	GET /v1/share-groups              every share group: state, members, total lag
//	GET /v1/share-groups/{group}/lag  per share-partition: start offset, log end
//	                                  offset, lag in records
//
// A share group commits no offsets, so Burrow's window rules of /v1/groups
// do not apply: its lag is what the share-partition leaders report, the
// records up to the high watermark neither acknowledged nor archived
// (DescribeShareGroupOffsets, KIP-932). Every node answers for the whole
// cluster by asking it over the Kafka protocol, as `strata share-group
// describe` does: the share-partitions' state lives with their leaders and
// share coordinators, wherever they are.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

type sharePartitionLagJSON struct {
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	StartOffset  *int64 `json:"start_offset"`   // null: not initialized yet
	LogEndOffset *int64 `json:"log_end_offset"` // null: the leader could not be asked
	LagRecords   *int64 `json:"lag_records"`    // null: unknown
}

type shareGroupLagJSON struct {
	Group      string                  `json:"group"`
	State      string                  `json:"state"`
	Members    int                     `json:"members"`
	TotalLag   int64                   `json:"total_lag"`
	Partitions []sharePartitionLagJSON `json:"partitions"`
}

type shareGroupSummaryJSON struct {
	Group      string `json:"group"`
	State      string `json:"state"`
	Members    int    `json:"members"`
	Partitions int    `json:"partitions"`
	TotalLag   int64  `json:"total_lag"`
}

type shareGroupListJSON struct {
	Groups []shareGroupSummaryJSON `json:"groups"`
}

// mountShareLagRoutes adds /v1/share-groups to mux.
func (m *lagMonitor) mountShareLagRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/share-groups", adminGetOnly(m.serveShareGroups))
	mux.HandleFunc("/v1/share-groups/{group}/lag", adminGetOnly(m.serveShareGroupLag))
}

// shareAdmin is the cluster client, or a 503 when this node has none (no
// Kafka listener).
func (m *lagMonitor) shareAdmin(w http.ResponseWriter) *kadm.Client {
	if m.cluster == nil {
		writeAdminJSON(w, http.StatusServiceUnavailable, adminErrorJSON{Error: "share-group lag needs a Kafka listener on this node"})
		return nil
	}
	adm, err := m.cluster.admin()
	if err != nil {
		writeAdminJSON(w, http.StatusServiceUnavailable, adminErrorJSON{Error: err.Error()})
		return nil
	}
	return adm
}

func (m *lagMonitor) serveShareGroups(w http.ResponseWriter, r *http.Request) {
	adm := m.shareAdmin(w)
	if adm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), remoteLagTimeout)
	defer cancel()
	listed, err := adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil {
		writeAdminJSON(w, http.StatusBadGateway, adminErrorJSON{Error: "listing share groups: " + err.Error()})
		return
	}
	out := shareGroupListJSON{Groups: []shareGroupSummaryJSON{}}
	for _, g := range listed.Sorted() {
		lagged, err := shareGroupLag(ctx, adm, g.Group)
		if err != nil {
			continue // deleted meanwhile, or its coordinator is restarting
		}
		out.Groups = append(out.Groups, shareGroupSummaryJSON{
			Group: lagged.Group, State: lagged.State, Members: lagged.Members,
			Partitions: len(lagged.Partitions), TotalLag: lagged.TotalLag,
		})
	}
	writeAdminJSON(w, http.StatusOK, out)
}

func (m *lagMonitor) serveShareGroupLag(w http.ResponseWriter, r *http.Request) {
	adm := m.shareAdmin(w)
	if adm == nil {
		return
	}
	name := r.PathValue("group")
	ctx, cancel := context.WithTimeout(r.Context(), remoteLagTimeout)
	defer cancel()
	out, err := shareGroupLag(ctx, adm, name)
	switch {
	case errors.Is(err, errGroupNotFound):
		writeAdminJSON(w, http.StatusNotFound, adminErrorJSON{Error: fmt.Sprintf("share group %q not found", name)})
	case err != nil:
		writeAdminJSON(w, http.StatusBadGateway, adminErrorJSON{Error: fmt.Sprintf("asking the cluster about share group %q: %v", name, err)})
	default:
		writeAdminJSON(w, http.StatusOK, out)
	}
}

// shareGroupLag describes one share group and its share-partitions' lag
// (errGroupNotFound if the cluster knows neither its members nor state).
func shareGroupLag(ctx context.Context, adm *kadm.Client, name string) (shareGroupLagJSON, error) {
	described, err := adm.DescribeShareGroups(ctx, name)
	if err != nil && len(described) == 0 {
		return shareGroupLagJSON{}, err
	}
	offsets, err := adm.DescribeShareGroupOffsets(ctx, name)
	if err != nil && len(offsets) == 0 {
		return shareGroupLagJSON{}, err
	}
	d, o := described[name], offsets[name]
	if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
		return shareGroupLagJSON{}, d.Err
	}
	if o.Err != nil && !errors.Is(o.Err, kerr.GroupIDNotFound) {
		return shareGroupLagJSON{}, o.Err
	}
	if d.Err != nil && (o.Err != nil || len(o.Offsets) == 0) || d.GroupState == "Dead" {
		return shareGroupLagJSON{}, errGroupNotFound
	}
	out := shareGroupLagJSON{Group: name, State: d.GroupState, Members: len(d.Members), Partitions: []sharePartitionLagJSON{}}
	if d.Err != nil {
		out.State = "Empty" // state stored, no members on the coordinator
	}
	var names []string
	for t := range o.Offsets {
		names = append(names, t)
	}
	var ends kadm.ListedOffsets
	if len(names) > 0 {
		ends, _ = adm.ListEndOffsets(ctx, names...) // a missing end is null below
	}
	for _, ps := range o.Offsets {
		for _, p := range ps {
			row := sharePartitionLagJSON{Topic: p.Topic, Partition: p.Partition}
			if p.Err == nil && p.StartOffset >= 0 {
				row.StartOffset = new(p.StartOffset)
			}
			if l, ok := ends.Lookup(p.Topic, p.Partition); ok && l.Err == nil {
				row.LogEndOffset = new(l.Offset)
			}
			if p.Err == nil && p.Lag >= 0 {
				row.LagRecords = new(p.Lag)
				out.TotalLag += p.Lag
			}
			out.Partitions = append(out.Partitions, row)
		}
	}
	sort.Slice(out.Partitions, func(i, j int) bool {
		a, b := out.Partitions[i], out.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out, nil
}
